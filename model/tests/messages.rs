//! Messages and offsets: what a rebalance costs (duplicates, pauses) and the
//! one thing that must never happen (a message no consumer ever consumes),
//! each finding of `docs/spec.md` asserted.

use rocketmq_rebalance_model::{
    configuration::{Commit, Config, ConsumeFrom, LockTiming, ProtocolOptions, Scenario, Sizes},
    report::{
        Status, DUPLICATE_DELIVERY, EVERY_MESSAGE_CONSUMED, NO_MESSAGE_SKIPPED, PAUSED_QUEUE,
        TRANSIENT_DOUBLE,
    },
};

mod common;

use common::{config_with as config, run, status, verdicts};

/// Two consumers, one queue a broker, two messages each: one consumer
/// leaves and the other takes its queue.
fn leave(commit: Commit) -> Config {
    let sizes = Sizes {
        consumers: 2,
        queues: 1,
        messages: 2,
        ..Scenario::GracefulShutdown.default_sizes()
    };
    let protocol = ProtocolOptions {
        commit,
        ..ProtocolOptions::default()
    };
    config(Scenario::GracefulShutdown, sizes, "AVG", protocol)
}

/// The scenarios whose check with one message a queue takes more than a
/// few seconds (from 1.2 to 23 million states): checked by an opt-in test.
const LARGE_WITH_MESSAGES: [Scenario; 6] = [
    Scenario::PartialPartition,
    Scenario::BrokerScaleOut,
    Scenario::BrokerScaleIn,
    Scenario::BrokerRestart,
    Scenario::RollingUpgrade,
    Scenario::ZombieConsumer,
];

/// A scenario checked with messages, at its sizes for them, still shows what
/// it is about: every ownership verdict is the one without messages.
fn keeps_its_ownership_verdicts_with_messages(scenario: Scenario) {
    use rocketmq_rebalance_model::configuration::Layer;
    use rocketmq_rebalance_model::internals::PROPERTIES;
    let without = scenario.default_sizes();
    let with = scenario.layered_sizes(1, false);
    if scenario.needs_orderly()
        || (Sizes {
            messages: 0,
            ..with
        }) == without
    {
        return;
    }
    let protocol = scenario.default_protocol();
    let ownership = |sizes| {
        let report = verdicts(config(scenario, sizes, "AVG", protocol), false);
        PROPERTIES
            .iter()
            .filter(|p| p.layer == Layer::Rebalance)
            .map(|p| status(&report, p.name))
            .collect::<Vec<Status>>()
    };
    assert_eq!(ownership(with), ownership(without), "{scenario:?}");
}

#[test]
fn each_scenario_keeps_its_ownership_verdicts_with_messages() {
    for &scenario in Scenario::ALL {
        if !LARGE_WITH_MESSAGES.contains(&scenario) {
            keeps_its_ownership_verdicts_with_messages(scenario);
        }
    }
}

/// Opt-in (`cargo test --release -p rocketmq-rebalance-model --test
/// messages -- --ignored`): about five minutes on two cores.
#[test]
#[ignore = "large: about 38 million states"]
fn large_scenarios_keep_their_ownership_verdicts_with_messages() {
    for scenario in LARGE_WITH_MESSAGES {
        keeps_its_ownership_verdicts_with_messages(scenario);
    }
}

#[test]
fn without_messages_nothing_of_them_is_checked() {
    let cfg = config(
        Scenario::Healthy,
        Sizes::default(),
        "AVG",
        ProtocolOptions::default(),
    );
    let report = run(cfg, false);
    assert!(report.property(NO_MESSAGE_SKIPPED).is_none());
    assert!(report.harms.is_none());
    assert_eq!(report.unique_states, 56_916, "the pinned state space");
}

/// A check for its verdicts only measures no harms, and comes to the same
/// states and verdicts as the full check.
#[test]
fn a_check_for_verdicts_only_measures_no_harms_and_decides_the_same() {
    let full = run(leave(Commit::Async), false);
    let only = verdicts(leave(Commit::Async), false);
    assert!(full.harms.is_some() && only.harms.is_none());
    let outcome = |r: &rocketmq_rebalance_model::report::Report| {
        let statuses: Vec<(String, Status)> = r
            .properties
            .iter()
            .map(|p| (p.name.to_string(), p.status))
            .collect();
        (r.unique_states, r.states, statuses)
    };
    assert_eq!(outcome(&full), outcome(&only));
}

/// A group that starts cold has no offsets. Consuming from the last
/// offset, the broker answers 0 while the queue's first message is in
/// memory; once it has left memory the consumer starts at the queue's end,
/// and commits it: the messages before it are lost. Consuming from the
/// first offset avoids it.
#[test]
fn consuming_from_last_skips_what_has_left_memory() {
    let sizes = Sizes {
        consumers: 1,
        joins: Some(1),
        queues: 1,
        messages: 2,
        evictions: 1,
        ..Sizes::default()
    };
    let last = run(
        config(Scenario::Healthy, sizes, "AVG", ProtocolOptions::default()),
        true,
    );
    assert_eq!(status(&last, NO_MESSAGE_SKIPPED), Status::Violated);
    assert_eq!(status(&last, EVERY_MESSAGE_CONSUMED), Status::Violated);
    let trace = last
        .property(NO_MESSAGE_SKIPPED)
        .unwrap()
        .trace
        .clone()
        .unwrap();
    assert!(trace[0].contains("broker-a loses its queues' first messages from memory"));
    assert!(trace
        .iter()
        .any(|l| l.contains("offset of a0: none stored, first message not in memory")));
    assert!(trace
        .iter()
        .any(|l| l.contains("UPDATE_CONSUMER_OFFSET a0 = 2")));
    assert!(!trace.iter().any(|l| l.contains("finishes consuming")));

    let first = ProtocolOptions {
        consume_from: ConsumeFrom::First,
        ..ProtocolOptions::default()
    };
    let first = run(config(Scenario::Healthy, sizes, "AVG", first), true);
    assert_eq!(status(&first, NO_MESSAGE_SKIPPED), Status::Holds);
    assert_eq!(status(&first, EVERY_MESSAGE_CONSUMED), Status::Holds);

    let in_memory = Sizes {
        evictions: 0,
        ..sizes
    };
    let in_memory = run(
        config(
            Scenario::Healthy,
            in_memory,
            "AVG",
            ProtocolOptions::default(),
        ),
        false,
    );
    assert_eq!(status(&in_memory, NO_MESSAGE_SKIPPED), Status::Holds);
}

/// A graceful leave never lets two consumers own a queue, yet messages are
/// delivered twice: the leaver's last offset is persisted one-way, and the
/// new owner can read the broker's offset before it arrives. A stale
/// committed offset is enough.
#[test]
fn duplicates_need_no_double_ownership() {
    let report = run(leave(Commit::Async), false);
    assert_eq!(status(&report, TRANSIENT_DOUBLE), Status::NotFound);
    assert_eq!(status(&report, DUPLICATE_DELIVERY), Status::Found);
    assert_eq!(status(&report, PAUSED_QUEUE), Status::Found);
    assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
    let trace = report
        .property(DUPLICATE_DELIVERY)
        .unwrap()
        .trace
        .clone()
        .unwrap();
    assert!(trace.iter().any(|l| l.contains("shutdown, unregister")));
    assert!(trace.iter().any(|l| l.contains("offset of b0: 0")));
}

/// Synchronous commit narrows duplicates to the batch running when the
/// queue moves; it does not remove them.
#[test]
fn synchronous_commit_narrows_duplicates_without_removing_them() {
    let asynchronous = run(leave(Commit::Async), false).harms.unwrap();
    let synchronous = run(leave(Commit::Sync), false).harms.unwrap();
    assert_eq!(asynchronous.max_duplicates_per_handover.value, 2);
    assert_eq!(synchronous.max_duplicates_per_handover.value, 1);
    assert_eq!(synchronous.max_deliveries.value, 2);
    assert!(synchronous.max_deliveries.explorer_path.is_some());
}

/// A consumer that unsubscribes from a topic drops its queues without
/// persisting their offsets (`truncateMessageQueueNotMyTopic`), and the
/// next persist no longer sends them: when it then leaves, the next owner
/// reads the offset last persisted and delivers again every message
/// consumed since. Were the queues handed over with a persist, as a
/// rebalance's drop is, only the batch running at the drop would be.
#[test]
fn an_unsubscribed_topic_loses_its_offsets_since_the_last_persist() {
    let sizes = Sizes {
        consumers: 2,
        brokers: 1,
        topics: 2,
        queues: 1,
        joins: Some(0),
        leaves: 1,
        subscription_changes: 1,
        messages: 2,
        ..Sizes::default()
    };
    // The rolling upgrade's leaver is the first consumer, the one that
    // changes its subscription.
    let cfg = config(
        Scenario::RollingUpgrade,
        sizes,
        "AVG",
        ProtocolOptions::default(),
    );
    let report = run(cfg, false);
    assert_eq!(status(&report, TRANSIENT_DOUBLE), Status::NotFound);
    assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
    let harms = report.harms.unwrap();
    assert_eq!(harms.max_duplicates_per_handover.value, 2);
}

/// With pull requests every pull commits the offset it carries (the
/// commit-offset flag), so a crash redelivers only what was consumed since
/// the last pull, not everything since the last persist: on one queue of
/// two messages, one message delivered twice instead of two.
#[test]
fn commits_with_pulls_narrow_what_a_crash_delivers_again() {
    let sizes = Sizes {
        consumers: 2,
        queues: 1,
        messages: 2,
        ..Scenario::Crash.default_sizes()
    };
    let duplicates = |pull_requests| {
        let protocol = ProtocolOptions {
            pull_requests,
            ..ProtocolOptions::default()
        };
        let report = run(config(Scenario::Crash, sizes, "AVG", protocol), false);
        assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
        report.harms.unwrap().max_duplicates_per_handover.value
    };
    assert_eq!(duplicates(false), 2);
    assert_eq!(duplicates(true), 1);
}

/// Under fairness every message is consumed in the end, after a leave, a
/// crash (whose running batch is redone) and a join alike.
#[test]
fn every_message_is_consumed_in_the_end() {
    let crash = Sizes {
        consumers: 2,
        queues: 1,
        messages: 2,
        ..Scenario::Crash.default_sizes()
    };
    let crash = verdicts(
        config(Scenario::Crash, crash, "AVG", ProtocolOptions::default()),
        true,
    );
    assert_eq!(status(&crash, EVERY_MESSAGE_CONSUMED), Status::Holds);
    assert_eq!(status(&crash, DUPLICATE_DELIVERY), Status::Found);
}

/// The default message-layer check: one consumer joins another, two
/// queues, two messages each.
#[test]
fn the_default_message_check_finds_duplicates_and_pauses_and_loses_nothing() {
    let sizes = Sizes {
        consumers: 2,
        queues: 1,
        messages: 2,
        ..Sizes::default()
    };
    let report = run(
        config(Scenario::Healthy, sizes, "AVG", ProtocolOptions::default()),
        false,
    );
    assert!(report.passed(), "{report:#?}");
    let harms = report.harms.unwrap();
    assert_eq!(harms.max_duplicates_per_handover.value, 2);
    assert_eq!(harms.max_paused_queues.value, 1);
}

/// The same leave of three consumers over three queues, one message each,
/// per strategy: the duplicated messages follow the queues moved between
/// survivors (a leaver persists before anyone learns it left), plus the
/// leaver's own batch where it owns a queue: its shutdown does not wait for
/// the batch, which is delivered and then again by the queue's next owner.
#[test]
fn duplicates_per_strategy_follow_the_queues_moved() {
    let sizes = Sizes {
        brokers: 1,
        queues: 3,
        messages: 1,
        ..Scenario::GracefulShutdown.default_sizes()
    };
    let duplicated = |strategy: &str| {
        let cfg = config(
            Scenario::GracefulShutdown,
            sizes,
            strategy,
            ProtocolOptions::default(),
        );
        run(cfg, false).harms.unwrap().max_duplicated_messages.value
    };
    assert_eq!(duplicated("AVG"), 2);
    assert_eq!(duplicated("AVG_BY_CIRCLE"), 1);
    assert_eq!(duplicated("CONSISTENT_HASH"), 0);
    assert_eq!(duplicated("STICKY"), 2);
}

/// One failed batch within the budget costs one delivery more: consuming
/// concurrently, it is sent back and consumed again from the retry topic
/// (`graceful-shutdown`'s one broker and three consumers, nobody leaving);
/// without the retry topic modelled, the copy is stored where nobody in the
/// run reads, and the offset has moved on past it all the same.
#[test]
fn a_failed_batch_is_consumed_again_from_the_retry_topic() {
    let check = |consume_failures, retry_topic| {
        let sizes = Sizes {
            leaves: 0,
            consume_failures,
            ..Scenario::GracefulShutdown.layered_sizes(1, false)
        };
        let protocol = ProtocolOptions {
            retry_topic,
            ..ProtocolOptions::default()
        };
        let report = run(
            config(Scenario::GracefulShutdown, sizes, "AVG", protocol),
            false,
        );
        assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
        (
            report.unique_states,
            report.harms.unwrap().max_deliveries.value,
        )
    };
    assert_eq!(check(0, true), (650, 1));
    assert_eq!(check(1, true), (11_050, 2));
    assert_eq!(check(1, false), (375, 1));
}

/// Orderly, a failed batch suspends its queue and is consumed again: its
/// message is delivered twice, never skipped, and under fairness every
/// message is consumed.
#[test]
fn orderly_a_suspended_queue_consumes_its_batch_again() {
    let check = |consume_failures| {
        let sizes = Sizes {
            joins: Some(0),
            consume_failures,
            ..Scenario::Healthy.layered_sizes(1, true)
        };
        let protocol = ProtocolOptions {
            orderly: Some(LockTiming::default()),
            ..ProtocolOptions::default()
        };
        let report = run(config(Scenario::Healthy, sizes, "AVG", protocol), true);
        assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
        assert_eq!(status(&report, EVERY_MESSAGE_CONSUMED), Status::Holds);
        report.harms.unwrap().max_deliveries.value
    };
    assert_eq!(check(0), 1);
    assert_eq!(check(1), 2);
}

/// A send-back that fails (the broker restarts while it is on its way, so
/// the connection closes unanswered) goes to the retry topic through the
/// client's producer (`sendMessageBackAsNormalMessage`), on the other
/// broker or on the restarted one's next connection; only when that send
/// fails too (the only broker is stopped) is the batch consumed again
/// locally, from memory. Without the retry topic modelled, a second
/// delivery can only be that one. Nothing is skipped, and under fairness
/// every message is consumed.
#[test]
fn a_failed_send_back_goes_through_the_producer_then_is_consumed_again() {
    let check = |brokers, consume_failures, restart_stops| {
        let sizes = Sizes {
            consumers: 1,
            brokers,
            joins: Some(0),
            consume_failures,
            ..Scenario::BrokerRestart.layered_sizes(1, false)
        };
        let protocol = ProtocolOptions {
            restart_stops,
            ..Scenario::BrokerRestart.default_protocol()
        };
        let cfg = config(Scenario::BrokerRestart, sizes, "AVG", protocol);
        let report = run(cfg, true);
        assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
        assert_eq!(status(&report, EVERY_MESSAGE_CONSUMED), Status::Holds);
        report.harms.unwrap().max_deliveries.value
    };
    assert_eq!(check(2, 0, false), 1);
    assert_eq!(check(2, 1, false), 1, "the producer stores it on broker-b");
    assert_eq!(check(1, 1, false), 1, "on the restarted broker");
    assert_eq!(check(1, 1, true), 2, "the only broker stopped");
}

/// Pulls that stall for over 120 s (a stop-the-world pause, a blocked pull
/// thread) have expired at the next round (`isPullExpired`): every queue
/// still allocated is dropped, its offset persisted at the batch still
/// running, and added afresh. Concurrently that batch, whose result the
/// dropped process queue discards, is pulled and delivered again: one
/// stall duplicates in a group where nothing else happens. Orderly, the
/// running batch keeps the queue in the table until it ends, and nothing
/// is delivered twice. Under fairness every message is consumed either way.
#[test]
fn pulls_that_stall_past_their_expiry_drop_and_add_the_queue_again() {
    let check = |orderly: bool, pull_stalls, liveness| {
        let sizes = Sizes {
            consumers: 2,
            brokers: 1,
            queues: 1,
            joins: Some(0),
            messages: if orderly { 1 } else { 2 },
            pull_stalls,
            ..Sizes::default()
        };
        let protocol = ProtocolOptions {
            orderly: orderly.then(LockTiming::default),
            ..ProtocolOptions::default()
        };
        let report = run(config(Scenario::Healthy, sizes, "AVG", protocol), liveness);
        if liveness {
            assert_eq!(status(&report, EVERY_MESSAGE_CONSUMED), Status::Holds);
        }
        assert_eq!(status(&report, NO_MESSAGE_SKIPPED), Status::Holds);
        (
            report.unique_states,
            report.harms.unwrap().max_deliveries.value,
        )
    };
    assert_eq!(check(false, 0, false), (15, 1));
    assert_eq!(check(false, 1, false), (152, 2));
    assert_eq!(check(false, 1, true).1, 2);
    assert_eq!(check(true, 1, false), (849, 1));
    assert_eq!(check(true, 1, true).1, 1);
}
