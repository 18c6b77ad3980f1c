//! The model's verdict on every scenario, at sizes that take seconds, and
//! the shape of each counterexample it must find.

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::internals::{Group, Route};
use rocketmq_rebalance_model::{
    build_model, check,
    configuration::{
        Config, ConfigError, ConsumeFrom, NetworkKind, ProtocolOptions, Scenario, Size, Sizes,
    },
    report::{
        FingerprintBits, Report, Status, Stopped, AGREE_AT_REST, CONVERGED_WHEN_QUIESCENT,
        DUPLICATE_DELIVERY, EVERY_MESSAGE_CONSUMED, FULL_CONVERGENCE, NO_DOUBLE_OWNERSHIP,
        NO_MESSAGE_SKIPPED, TRANSIENT_DOUBLE, TRANSIENT_ORPHAN,
    },
    CheckOptions,
};
use rocketmq_rebalance_properties::{double_owned, orphaned};
use stateright::{Checker, Model};
use std::sync::Arc;

fn config(scenario: Scenario, sizes: Sizes) -> Config {
    let avg = strategy_from_name("AVG").expect("AVG exists");
    Config::new(scenario, sizes, NetworkKind::Ordered, Arc::from(avg)).expect("valid sizes")
}

fn run(scenario: Scenario, sizes: Sizes) -> Report {
    let options = CheckOptions {
        threads: 2,
        ..CheckOptions::default()
    };
    check(config(scenario, sizes), &options, |_| {})
}

fn status(report: &Report, name: &str) -> Status {
    report.property(name).expect("property reported").status
}

fn assert_passes(report: &Report) {
    assert!(report.complete(), "{report:#?}");
    assert!(report.passed(), "{report:#?}");
    assert_eq!(report.exit_code(), 0);
    for name in [NO_DOUBLE_OWNERSHIP, CONVERGED_WHEN_QUIESCENT, AGREE_AT_REST] {
        assert_eq!(status(report, name), Status::Holds, "{name}");
    }
    for name in [TRANSIENT_DOUBLE, TRANSIENT_ORPHAN, FULL_CONVERGENCE] {
        assert_eq!(status(report, name), Status::Found, "{name}");
    }
}

#[test]
fn healthy_scale_out_holds_every_property() {
    assert_passes(&run(Scenario::Healthy, Scenario::Healthy.default_sizes()));
}

#[test]
fn healthy_cold_start_of_two_holds_every_property() {
    let sizes = Sizes {
        consumers: 2,
        joins: None,
        ..Sizes::default()
    };
    assert_passes(&run(Scenario::Healthy, sizes));
}

#[test]
fn crash_converges() {
    assert_passes(&run(Scenario::Crash, Scenario::Crash.default_sizes()));
}

#[test]
fn route_change_converges() {
    assert_passes(&run(
        Scenario::RouteChange,
        Scenario::RouteChange.default_sizes(),
    ));
}

#[test]
fn graceful_shutdown_converges() {
    let scenario = Scenario::GracefulShutdown;
    assert_passes(&run(scenario, scenario.default_sizes()));
}

/// The last state of the discovery of `property`, as a [`Group`] check.
fn with_discovery(
    scenario: Scenario,
    sizes: Sizes,
    property: &'static str,
    inspect: impl FnOnce(&Group, Vec<String>),
) {
    let model = build_model(config(scenario, sizes));
    let checker = model.clone().checker().spawn_dfs().join();
    let path = checker
        .discovery(property)
        .unwrap_or_else(|| panic!("{scenario}: no discovery for {property}"));
    let trace = rocketmq_rebalance_model::internals::describe_path(&model, &path);
    let last = path.last_state();
    let group = Group::of(&model, last);
    assert!(group.quiescent(), "a counterexample ends at rest");
    inspect(&group, trace);
}

#[test]
fn inconsistent_subscription_leaves_queues_unconsumed_for_ever() {
    let scenario = Scenario::InconsistentSubscription;
    let report = run(scenario, scenario.default_sizes());
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(status(&report, CONVERGED_WHEN_QUIESCENT), Status::Violated);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Holds);
    assert_eq!(status(&report, FULL_CONVERGENCE), Status::NotFound);
    with_discovery(
        scenario,
        scenario.default_sizes(),
        CONVERGED_WHEN_QUIESCENT,
        |group, trace| {
            // Every live consumer agrees on the members, yet queues of a
            // topic are allocated to members that do not subscribe to it.
            let cfg = group.cfg;
            let unconsumed: usize = (0..cfg.topic_names.len())
                .map(|t| {
                    let all: Vec<usize> = (0..cfg.queues.len())
                        .filter(|&q| cfg.route_queues(Route::default(), t) & (1 << q) != 0)
                        .collect();
                    orphaned(&all, &group.shares(cfg.topic_queues(t))).len()
                })
                .sum();
            assert!(unconsumed > 0, "{trace:#?}");
            assert!(trace
                .iter()
                .any(|l| l.contains("NOTIFY_CONSUMER_IDS_CHANGED")));
        },
    );
}

#[test]
fn duplicate_client_id_double_owns_one_block_and_orphans_another() {
    let scenario = Scenario::DuplicateClientId;
    let report = run(scenario, scenario.default_sizes());
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Violated);
    assert_eq!(status(&report, CONVERGED_WHEN_QUIESCENT), Status::Violated);
    let trace = report.property(NO_DOUBLE_OWNERSHIP).unwrap().trace.clone();
    assert!(trace.is_some_and(|t| t.iter().any(|l| l.contains("client id c2"))));
    with_discovery(
        scenario,
        scenario.default_sizes(),
        NO_DOUBLE_OWNERSHIP,
        |group, trace| {
            let shares = group.shares(!0);
            let all: Vec<usize> = (0..group.cfg.queues.len()).collect();
            assert!(!double_owned(&shares).is_empty(), "{trace:#?}");
            assert!(!orphaned(&all, &shares).is_empty(), "{trace:#?}");
            // The two holders are the consumers that share an id.
            assert_eq!(shares[1], shares[2], "{trace:#?}");
        },
    );
}

#[test]
fn partial_partition_never_settles_on_one_member_list() {
    let scenario = Scenario::PartialPartition;
    let report = run(scenario, scenario.default_sizes());
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(status(&report, AGREE_AT_REST), Status::Violated);
    assert_eq!(status(&report, FULL_CONVERGENCE), Status::NotFound);
    // Consumers that allocate from broker-b's list give b1 to c2 while c3,
    // from broker-a's, owns it too; but c3 cannot reach broker-b, so it never
    // pulls b1. Counted on what consumers can pull, that is a queue consumed
    // by nobody at times, never one consumed twice.
    assert_eq!(status(&report, TRANSIENT_DOUBLE), Status::NotFound);
    assert_eq!(status(&report, TRANSIENT_ORPHAN), Status::Found);
    let trace = report
        .property(AGREE_AT_REST)
        .unwrap()
        .trace
        .clone()
        .unwrap();
    let brokers: Vec<&String> = trace
        .iter()
        .filter(|l| l.contains("broker-b: members"))
        .collect();
    assert_eq!(brokers.len(), 1, "{trace:#?}");
    assert!(
        !brokers[0].contains("c3"),
        "broker-b never hears of c3: {trace:#?}"
    );
}

/// A broker that loses its disk loses the group's offsets: the member that
/// registers again first takes the queue, is told no offset is stored and
/// the first message is not in memory, and, consuming from last, starts at
/// the queue's end and commits it. The message before it is never
/// consumed. A restart that keeps the disk skips nothing, and consuming
/// from first delivers the queue again instead.
#[test]
fn a_broker_disk_loss_skips_what_consuming_from_last_jumps_over() {
    let scenario = Scenario::BrokerDiskLoss;
    let sizes = scenario.default_sizes();
    let report = run(scenario, sizes);
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    for name in [NO_DOUBLE_OWNERSHIP, CONVERGED_WHEN_QUIESCENT, AGREE_AT_REST] {
        assert_eq!(status(&report, name), Status::Holds, "{name}");
    }
    assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Violated);
    assert_eq!(status(&report, DUPLICATE_DELIVERY), Status::Found);
    let trace = report
        .property(NO_MESSAGE_SKIPPED)
        .unwrap()
        .trace
        .clone()
        .unwrap();
    for words in [
        "broker-a restarts on a replaced disk",
        "offset of a0: none stored, first message not in memory",
        "UPDATE_CONSUMER_OFFSET a0 = 1",
    ] {
        assert!(
            trace.iter().any(|l| l.contains(words)),
            "{words}: {trace:#?}"
        );
    }
    assert!(!trace.iter().any(|l| l.contains("finishes consuming")));
    // Under fairness the message is never consumed.
    let fair = CheckOptions {
        threads: 2,
        liveness: true,
        ..CheckOptions::default()
    };
    let live = check(config(scenario, sizes), &fair, |_| {});
    assert_eq!(status(&live, EVERY_MESSAGE_CONSUMED), Status::Violated);
    // The same restart on a disk that survives.
    let restart = Sizes {
        disk_losses: 0,
        broker_restarts: 1,
        ..sizes
    };
    let kept = run(Scenario::BrokerRestart, restart);
    assert_eq!(status(&kept, NO_MESSAGE_SKIPPED), Status::Holds);
    // Consuming from first: again from the start, nothing skipped.
    let first = config(scenario, sizes)
        .with_protocol(ProtocolOptions {
            consume_from: ConsumeFrom::First,
            ..ProtocolOptions::default()
        })
        .unwrap();
    let first = check(first, &CheckOptions::default(), |_| {});
    assert_eq!(status(&first, NO_MESSAGE_SKIPPED), Status::Holds);
    assert_eq!(status(&first, DUPLICATE_DELIVERY), Status::Found);
}

/// A running group has offsets for the queues it has been consuming, not
/// for a queue added later: when that queue's first messages have left
/// memory before the group reads its offset, the broker answers that none
/// is stored and, consuming from last, the new owner starts at the queue's
/// end. The old queue, whose offset is stored, loses nothing.
#[test]
fn a_queue_added_to_a_running_group_after_an_eviction_is_skipped() {
    let scenario = Scenario::EvictedNewQueue;
    let sizes = scenario.default_sizes();
    let report = run(scenario, sizes);
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    for name in [NO_DOUBLE_OWNERSHIP, CONVERGED_WHEN_QUIESCENT, AGREE_AT_REST] {
        assert_eq!(status(&report, name), Status::Holds, "{name}");
    }
    assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Violated);
    assert_eq!(status(&report, DUPLICATE_DELIVERY), Status::NotFound);
    let trace = report
        .property(NO_MESSAGE_SKIPPED)
        .unwrap()
        .trace
        .clone()
        .unwrap();
    for words in [
        "route change (queue added on broker-a)",
        "broker-a loses its queues' first messages from memory",
        "offset of a1: none stored, first message not in memory",
        "UPDATE_CONSUMER_OFFSET a1 = 2",
    ] {
        assert!(
            trace.iter().any(|l| l.contains(words)),
            "{words}: {trace:#?}"
        );
    }
    assert!(!trace.iter().any(|l| l.contains("offset of a0")));
    let fair = CheckOptions {
        threads: 2,
        liveness: true,
        ..CheckOptions::default()
    };
    let live = check(config(scenario, sizes), &fair, |_| {});
    assert_eq!(status(&live, EVERY_MESSAGE_CONSUMED), Status::Violated);
    // The first message in memory: the broker answers 0.
    let in_memory = run(
        scenario,
        Sizes {
            evictions: 0,
            ..sizes
        },
    );
    assert_eq!(status(&in_memory, NO_MESSAGE_SKIPPED), Status::Holds);
    // Consuming from first: from 0.
    let first = config(scenario, sizes)
        .with_protocol(ProtocolOptions {
            consume_from: ConsumeFrom::First,
            ..ProtocolOptions::default()
        })
        .unwrap();
    let first = check(first, &CheckOptions::default(), |_| {});
    assert_eq!(status(&first, NO_MESSAGE_SKIPPED), Status::Holds);
}

#[test]
fn an_incomplete_run_never_passes() {
    let options = CheckOptions {
        max_states: Some(1_000),
        ..CheckOptions::default()
    };
    let scenario = Scenario::Healthy;
    let report = check(config(scenario, scenario.default_sizes()), &options, |_| {});
    assert!(!report.complete());
    assert_eq!(report.stopped, Stopped::StateLimit);
    assert!(!report.passed());
    assert_eq!(report.exit_code(), 3);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Unknown);
}

#[test]
fn unordered_network_gives_the_same_verdicts() {
    let cfg = Config::new(
        Scenario::Healthy,
        Sizes {
            consumers: 2,
            ..Sizes::default()
        },
        NetworkKind::Unordered,
        Arc::from(strategy_from_name("AVG").unwrap()),
    )
    .unwrap();
    let options = CheckOptions::default();
    assert_passes(&check(cfg, &options, |_| {}));
}

#[test]
fn bad_sizes_are_rejected_with_a_message() {
    let bad = |sizes: Sizes| {
        Config::new(
            Scenario::Healthy,
            sizes,
            NetworkKind::Ordered,
            Arc::from(strategy_from_name("AVG").unwrap()),
        )
        .err()
    };
    assert_eq!(
        bad(Sizes {
            consumers: 0,
            ..Sizes::default()
        }),
        Some(ConfigError::OutOfRange {
            size: Size::Consumers,
            min: 1,
            max: 16
        })
    );
    assert_eq!(
        bad(Sizes {
            queues: 40,
            ..Sizes::default()
        }),
        Some(ConfigError::TooManyQueues {
            queues: 80,
            max: 64
        })
    );
    assert_eq!(
        bad(Sizes {
            joins: Some(9),
            ..Sizes::default()
        }),
        Some(ConfigError::ExceedsConsumers { size: Size::Joins })
    );
    let scenario = Scenario::BrokerDiskLoss;
    let without_messages = Sizes {
        messages: 0,
        ..scenario.default_sizes()
    };
    let avg = Arc::from(strategy_from_name("AVG").unwrap());
    assert_eq!(
        Config::new(scenario, without_messages, NetworkKind::Ordered, avg).err(),
        Some(ConfigError::ScenarioNeeds {
            scenario,
            size: Size::Messages,
            min: 1
        })
    );
}

#[test]
fn every_strategy_of_the_crate_can_be_checked() {
    let sizes = Sizes {
        consumers: 2,
        ..Sizes::default()
    };
    for &name in rocketmq_rebalance::STRATEGY_NAMES {
        let strategy = Arc::from(strategy_from_name(name).expect("a known name"));
        let cfg = Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, strategy).unwrap();
        let report = check(cfg, &CheckOptions::default(), |_| {});
        assert!(report.complete(), "{name}");
        assert_eq!(
            status(&report, NO_DOUBLE_OWNERSHIP),
            Status::Holds,
            "{name}"
        );
        // With their default, empty configuration CONFIG and MACHINE_ROOM
        // allocate nothing: every queue is left to nobody.
        let converges = !matches!(name, "CONFIG" | "MACHINE_ROOM");
        assert_eq!(report.guarantees_hold(), converges, "{name}: {report:#?}");
    }
}

/// Every scenario's default state space, pinned: a change of the model that
/// changes one is a decision to make visibly (here, and in
/// `docs/performance.md`), and a new layer switched off must leave them all
/// as they are.
#[test]
fn every_scenarios_state_space_is_pinned() {
    let expected = [
        (Scenario::Healthy, 56_916, 250_458),
        (Scenario::InconsistentSubscription, 56_916, 250_458),
        (Scenario::DuplicateClientId, 56_916, 250_458),
        (Scenario::Crash, 1_146, 3_156),
        (Scenario::RouteChange, 344, 1_031),
        (Scenario::PartialPartition, 771, 2_181),
        (Scenario::GracefulShutdown, 1_146, 3_156),
        (Scenario::BrokerScaleOut, 27_736, 92_782),
        (Scenario::BrokerScaleIn, 68_542, 270_386),
        (Scenario::QueueScaleIn, 344, 1_031),
        (Scenario::NameserverPartition, 35_572, 138_496),
        (Scenario::StaleRoute, 1_031, 3_434),
        (Scenario::BrokerRestart, 4_970, 14_716),
        (Scenario::BrokerDiskLoss, 240_278, 1_029_859),
        (Scenario::EvictedNewQueue, 7_082, 27_534),
        (Scenario::RollingUpgrade, 1_130_777, 5_629_193),
        (Scenario::ZombieConsumer, 123_918, 539_645),
        (Scenario::SubscriptionFlap, 41_530, 214_109),
        (Scenario::MixedClients, 1_988, 6_018),
        (Scenario::StrategyRollout, 2_241, 6_823),
    ];
    // The orderly scenarios are pinned in `orderly.rs`.
    let pinned: Vec<Scenario> = expected.iter().map(|&(s, _, _)| s).collect();
    let unpinned: Vec<&Scenario> = Scenario::ALL
        .iter()
        .filter(|s| !s.needs_orderly() && !pinned.contains(s))
        .collect();
    assert!(unpinned.is_empty(), "no pinned state space: {unpinned:?}");
    let stray: Vec<&Scenario> = pinned
        .iter()
        .filter(|s| !Scenario::ALL.contains(s))
        .collect();
    assert!(stray.is_empty(), "pinned, not in Scenario::ALL: {stray:?}");
    for (scenario, unique, generated) in expected {
        // The states generated are those of a search that takes every
        // action; sleep sets take fewer to reach exactly the same states.
        let full = CheckOptions {
            reduction: false,
            ..CheckOptions::default()
        };
        let report = check(config(scenario, scenario.default_sizes()), &full, |_| {});
        assert!(report.complete(), "{scenario}");
        assert_eq!(
            (report.unique_states, report.states),
            (unique, generated),
            "{scenario}"
        );
        let reduced = check(
            config(scenario, scenario.default_sizes()),
            &CheckOptions::default(),
            |_| {},
        );
        assert!(reduced.complete() && reduced.reduction, "{scenario}");
        assert_eq!(reduced.unique_states, unique, "{scenario}: sleep sets");
        assert_eq!(reduced.max_depth, report.max_depth, "{scenario}");
        assert!(reduced.states <= generated, "{scenario}: sleep sets");
        let verdicts = |r: &Report| r.properties.iter().map(|p| p.status).collect::<Vec<_>>();
        assert_eq!(verdicts(&reduced), verdicts(&report), "{scenario}");
    }
}

/// 128-bit fingerprints stand for the same states (no 64-bit collision
/// hides one at these sizes), and every report bounds the chance that one
/// did.
#[test]
fn wide_fingerprints_find_the_same_states_and_verdicts() {
    for scenario in [
        Scenario::Healthy,
        Scenario::DuplicateClientId,
        Scenario::Crash,
    ] {
        let cfg = || config(scenario, scenario.default_sizes());
        let narrow = check(cfg(), &CheckOptions::default(), |_| {});
        let wide_options = CheckOptions {
            fingerprint_bits: FingerprintBits::B128,
            ..CheckOptions::default()
        };
        let wide = check(cfg(), &wide_options, |_| {});
        assert_eq!(wide.unique_states, narrow.unique_states, "{scenario}");
        assert_eq!(wide.states, narrow.states, "{scenario}");
        assert_eq!((narrow.fingerprint_bits, wide.fingerprint_bits), (64, 128));
        let verdicts = |r: &Report| r.properties.iter().map(|p| p.status).collect::<Vec<_>>();
        assert_eq!(verdicts(&wide), verdicts(&narrow), "{scenario}");
        let n = narrow.unique_states as f64;
        let expected = n * (n - 1.0) / 2f64.powi(65);
        assert!((narrow.collision_probability / expected - 1.0).abs() < 1e-9);
        assert!(wide.collision_probability < narrow.collision_probability * 1e-18);
    }
}
