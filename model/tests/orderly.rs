//! Orderly consumption: broker locks, leases and the clock, and the promise
//! that no two consumers ever run a batch of one queue at once. Each
//! scenario's verdicts and counterexample of `docs/spec.md` asserted.

use rocketmq_rebalance_model::{
    check,
    configuration::{Config, LockTiming, ProtocolOptions, Scenario, Sizes},
    report::{
        Report, Status, CONVERGES, DUPLICATE_DELIVERY, EVERY_QUEUE_CONSUMED_AGAIN,
        NO_CONCURRENT_CONSUMPTION, NO_DOUBLE_OWNERSHIP, ONE_LIVE_LOCK, TRANSIENT_DOUBLE,
    },
    CheckOptions,
};

mod common;

use common::{config_with, status, verdicts};

/// `scenario` with orderly consumption at its default sizes, with `timing`
/// changed by `adjust` and the sizes by `resize`.
fn config(
    scenario: Scenario,
    adjust: impl FnOnce(&mut LockTiming),
    resize: impl FnOnce(&mut Sizes),
) -> Config {
    let mut sizes = scenario.layered_sizes(1, true);
    resize(&mut sizes);
    let mut protocol = scenario.default_protocol();
    let mut timing = protocol.orderly.unwrap_or_default();
    adjust(&mut timing);
    protocol = ProtocolOptions {
        orderly: Some(timing),
        ..protocol
    };
    config_with(scenario, sizes, "AVG", protocol)
}

fn default_run(scenario: Scenario) -> Report {
    verdicts(config(scenario, |_| {}, |_| {}), false)
}

fn trace(report: &Report, name: &str) -> Vec<String> {
    report
        .property(name)
        .and_then(|p| p.trace.clone())
        .expect("a counterexample")
}

fn has(trace: &[String], text: &str) -> bool {
    trace.iter().any(|line| line.contains(text))
}

/// Orderly consumption is a layer: off, no property of it is reported.
#[test]
fn without_orderly_no_lock_property_is_checked() {
    let sizes = Scenario::Healthy.layered_sizes(1, false);
    let cfg = config_with(Scenario::Healthy, sizes, "AVG", ProtocolOptions::default());
    let report = verdicts(cfg, false);
    assert!(report.property(NO_CONCURRENT_CONSUMPTION).is_none());
    assert!(report.property(ONE_LIVE_LOCK).is_none());
}

/// A join: the lock keeps the newcomer out until the old owner unlocks, so
/// even transient double ownership disappears; under fairness every queue
/// is consumed under a trusted lock in the end.
#[test]
fn healthy_orderly_join_holds_every_promise() {
    let report = verdicts(config(Scenario::Healthy, |_| {}, |_| {}), true);
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Holds);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Holds);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Holds);
    assert_eq!(status(&report, TRANSIENT_DOUBLE), Status::NotFound);
    assert_eq!(status(&report, CONVERGES), Status::Holds);
    assert_eq!(status(&report, EVERY_QUEUE_CONSUMED_AGAIN), Status::Holds);
}

/// The holder dies silently: its lock outlives it until the lease ends,
/// then the survivor locks and consumes the queue.
#[test]
fn after_a_crash_the_queue_waits_for_the_lease() {
    let report = verdicts(config(Scenario::Crash, |_| {}, |_| {}), true);
    assert_eq!(report.unique_states, 53_493, "the pinned state space");
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Holds);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Holds);
    assert_eq!(status(&report, EVERY_QUEUE_CONSUMED_AGAIN), Status::Holds);
}

/// Locks are keyed by client id: two processes with one id both hold it.
#[test]
fn a_duplicate_client_id_shares_the_lock() {
    let report = default_run(Scenario::DuplicateClientId);
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Violated);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(has(&steps, "locked ["), "{steps:#?}");
    assert!(!has(&steps, "lock refused"), "{steps:#?}");
}

/// A broker restart loses the lock table: the member that registers again
/// first sees only itself and is granted the queue the other still trusts
/// its lock on, and both consume it. Bounded (the whole space is
/// 13,061,132 states, over 40 s): both counterexamples are found within a
/// million, and a violation found is final.
#[test]
fn a_broker_restart_grants_a_lock_still_trusted() {
    let cfg = config(Scenario::BrokerRestart, |_| {}, |_| {});
    let options = CheckOptions {
        threads: 2,
        max_states: Some(1_000_000),
        ..CheckOptions::default()
    };
    let report = check(cfg, &options, |_| {});
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Violated);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(steps[0].contains("restarts (member and lock tables lost)"));
    assert!(has(&steps, "consumer list [c2]"), "{steps:#?}");
    assert!(has(&steps, "broker-a -> c2: locked [a0]"), "{steps:#?}");
    assert!(has(&steps, "c1: pulls a0"), "{steps:#?}");
    assert!(has(&steps, "c2: pulls a0"), "{steps:#?}");
    assert!(!has(&steps, "c1: finishes consuming"), "{steps:#?}");
}

/// The orderly broker restart with its stopped phase, `downtime` ticks
/// (`--restart-downtime`), searched breadth-first up to about `states`
/// states: the full space does not finish in a test (`docs/spec.md`).
fn restart_with_downtime(downtime: u8, states: usize) -> Report {
    let scenario = Scenario::BrokerRestart;
    let protocol = ProtocolOptions {
        orderly: Some(LockTiming {
            restart_downtime: downtime,
            ..LockTiming::default()
        }),
        restart_stops: true,
        ..scenario.default_protocol()
    };
    let cfg = config_with(scenario, scenario.layered_sizes(1, true), "AVG", protocol);
    let options = CheckOptions {
        threads: 2,
        max_states: Some(states),
        ..CheckOptions::default()
    };
    check(cfg, &options, |_| {})
}

/// A broker stopped for less than the old holder's trust (validity 3
/// ticks after its last lock): it starts with an empty lock table while
/// c1 still trusts its lock, grants the queue to c2, and both consume it.
#[test]
fn a_restart_downtime_within_the_old_holders_trust_still_grants_a_trusted_lock() {
    let report = restart_with_downtime(1, 1_000_000);
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(steps[0].contains("stops for a restart"), "{steps:#?}");
    let at = |text: &str| steps.iter().position(|l| l.contains(text)).expect(text);
    let started = at("broker-a starts again on the same address");
    assert!(at("a tick passes") < started, "{steps:#?}");
    assert!(started < at("broker-a -> c2: locked [a0]"), "{steps:#?}");
    assert!(has(&steps, "c1: pulls a0") && has(&steps, "c2: pulls a0"));
}

/// A broker stopped longer than the old holder's trust (4 ticks against a
/// validity of 3): c1's renewals fail while it is away, so its trust has
/// ended when c2 is granted the queue. Bounded: no double consumption in
/// any run as long as the 22 steps that show it at a downtime of 3 ticks
/// (the full space passes 22 million states).
#[test]
fn a_restart_downtime_past_the_old_holders_trust_leaves_no_short_double_consumption() {
    let report = restart_with_downtime(4, 1_000_000);
    assert_ne!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert!(report.max_depth > 22, "searched to {}", report.max_depth);
}

/// A batch that outlasts the forced-unlock delay: the dropped queue is
/// unlocked without waiting for it, and the next owner starts while it
/// runs. A forced unlock that waits for the longest batch started under a
/// valid lock (its validity plus the batch, less the tick its age is
/// rounded down by) closes it; one tick less does not.
#[test]
fn a_batch_longer_than_the_unlock_delay_runs_beside_the_next_owner() {
    let report = default_run(Scenario::SlowBatch);
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Holds);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(has(&steps, "UNLOCK_BATCH_MQ"), "{steps:#?}");
    assert!(has(&steps, "a tick passes"), "{steps:#?}");

    let waits = default_run_with(Scenario::SlowBatch, |t| {
        t.unlock_delay = t.validity + t.batch - 1;
    });
    assert_eq!(status(&waits, NO_CONCURRENT_CONSUMPTION), Status::Holds);
    let short = default_run_with(Scenario::SlowBatch, |t| {
        t.unlock_delay = t.validity + t.batch - 2;
    });
    assert_eq!(status(&short, NO_CONCURRENT_CONSUMPTION), Status::Violated);
}

/// A dropped queue's lock is never renewed (`lockAll` skips dropped
/// process queues), so the broker lets it lapse after the lease whatever
/// the forced-unlock delay: a batch that outlasts the lease less the
/// renewal period (started just before a renewal was due) still runs when
/// the next owner is granted the queue. No unlock is sent in the
/// counterexample, and the delay is past what the unlock rule asks.
#[test]
fn a_batch_longer_than_the_lease_less_the_renewal_outlives_its_lock() {
    let report = default_run_with(Scenario::SlowBatch, |t| {
        t.batch = t.lease - t.renew + 1;
        t.unlock_delay = LockTiming::MAX;
        assert!(t.unlock_delay >= t.validity + t.batch - 1);
    });
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(!has(&steps, "UNLOCK_BATCH_MQ"), "{steps:#?}");
    let at = |text: &str| {
        steps
            .iter()
            .position(|line| line.contains(text))
            .unwrap_or_else(|| panic!("{text}: {steps:#?}"))
    };
    let pulled = at("c1: pulls a1");
    let dropped = at("c1: rebalanced, members [c1 c2], owns [a0]");
    let lapsed = at("broker-a's lock of [a1] lapses");
    let granted = at("broker-a -> c2: locked [a1]");
    assert!(pulled < dropped && dropped < lapsed && lapsed < granted);
    assert!(has(&steps[granted..], "c2: pulls a1"), "{steps:#?}");
    assert!(!has(&steps, "c1: finishes consuming"), "{steps:#?}");
}

fn default_run_with(scenario: Scenario, adjust: impl FnOnce(&mut LockTiming)) -> Report {
    verdicts(config(scenario, adjust, |_| {}), false)
}

/// A client's wall clock stepped back (a tick at a time, up to the
/// budget): within the margin between its lock's validity and the broker's
/// lease nothing happens; past it, two consumers trust a lock on one queue
/// (the old holder's is on a queue it dropped). Its renewal runs on the
/// monotonic clock, which no step moves, so the broker's lease on what it
/// still consumes never ends: nobody else consumes it.
#[test]
fn a_client_clock_stepped_back_trusts_a_dropped_lock_but_its_renewals_keep_the_lease() {
    let drift = |ticks| {
        verdicts(
            config(Scenario::ClockDrift, |_| {}, |s| s.clock_drift = ticks),
            false,
        )
    };
    let within = drift(1);
    assert_eq!(status(&within, ONE_LIVE_LOCK), Status::Holds);
    assert_eq!(status(&within, NO_CONCURRENT_CONSUMPTION), Status::Holds);
    let past_validity = drift(2);
    assert_eq!(status(&past_validity, ONE_LIVE_LOCK), Status::Violated);
    assert_eq!(
        status(&past_validity, NO_CONCURRENT_CONSUMPTION),
        Status::Holds
    );
    let steps = trace(&past_validity, ONE_LIVE_LOCK);
    assert!(has(&steps, "clock stands still"), "{steps:#?}");
    let past_renewal = default_run(Scenario::ClockDrift);
    assert_eq!(status(&past_renewal, ONE_LIVE_LOCK), Status::Violated);
    assert_eq!(
        status(&past_renewal, NO_CONCURRENT_CONSUMPTION),
        Status::Holds
    );
}

/// A broker's wall clock stepped forward by a lease or more (NTP correcting
/// a clock that was behind): every lock it holds lapses at once, while each
/// holder still trusts its own by its clock. A joiner is granted a queue
/// its old owner has not dropped yet, and both consume it. The complete
/// space is 3,974,313 states; the breadth-first search meets this
/// counterexample (13 steps) long before the limit here.
#[test]
fn a_broker_clock_stepped_forward_lets_trusted_locks_lapse() {
    let cfg = config(Scenario::Healthy, |_| {}, |s| s.broker_clock_steps = 1);
    let options = CheckOptions {
        threads: 2,
        max_states: Some(400_000),
        ..CheckOptions::default()
    };
    let report = check(cfg, &options, |_| {});
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Violated);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    assert!(
        steps[0].contains("wall clock stepped forward"),
        "{steps:#?}"
    );
    assert!(has(&steps, "broker-a -> c2: locked [a1]"), "{steps:#?}");
    assert!(has(&steps, "c1: pulls a1"), "{steps:#?}");
    assert!(has(&steps, "c2: pulls a1"), "{steps:#?}");
    assert!(!has(&steps, "UNLOCK_BATCH_MQ"), "{steps:#?}");
}

/// A graceful shutdown unlocks its queues and does not wait for the batch
/// its application is consuming (`awaitTerminationMillisWhenShutdown` is
/// 0): the survivor is granted the queue and consumes it while the
/// departed process still runs its batch. Rolling upgrades meet it too.
#[test]
fn a_graceful_shutdown_leaves_its_batch_running_beside_the_next_owner() {
    let report = default_run(Scenario::GracefulShutdown);
    assert_eq!(report.unique_states, 5_167, "the pinned state space");
    assert_eq!(status(&report, NO_CONCURRENT_CONSUMPTION), Status::Violated);
    assert_eq!(status(&report, ONE_LIVE_LOCK), Status::Holds);
    let steps = trace(&report, NO_CONCURRENT_CONSUMPTION);
    let at = |text: &str| steps.iter().position(|l| l.contains(text)).unwrap();
    let pulled = at("c2: pulls a1");
    let left = at("c2: shutdown");
    let unlocked = at("c2 -> broker-a: UNLOCK_BATCH_MQ [a1]");
    let granted = at("broker-a -> c1: locked [a1]");
    assert!(pulled < left && left < unlocked && unlocked < granted);
    assert!(has(&steps[granted..], "c1: pulls a1"), "{steps:#?}");
    assert!(has(&steps, "c2: left, still consuming [a1]"), "{steps:#?}");
}

/// The shutdown interrupts the batches it does not wait for
/// (`shutdownNow`): a listener that stops there ends its batch before the
/// unlock, unconsumed and uncommitted, so the next owner never runs beside
/// it, and nothing is delivered twice; one that ignores the interrupt (the
/// default) runs on beside the next owner. The same holds for a rolling
/// upgrade, whose leaver is the first consumer.
#[test]
fn a_listener_that_stops_on_the_interrupt_never_runs_beside_the_next_owner() {
    let leaver = |scenario| match scenario {
        Scenario::RollingUpgrade => "c1",
        _ => "c2",
    };
    let outcome = |scenario: Scenario, interruptible: bool| {
        let cfg = config(scenario, |_| {}, |_| {});
        let cfg = if interruptible {
            cfg.with_interruptible_listeners(&[leaver(scenario).to_string()])
                .expect("a consumer")
        } else {
            cfg
        };
        let report = verdicts(cfg, false);
        (
            report.unique_states,
            status(&report, NO_CONCURRENT_CONSUMPTION),
            status(&report, DUPLICATE_DELIVERY),
        )
    };
    use Status::{Found, Holds, NotFound, Violated};
    assert_eq!(
        outcome(Scenario::GracefulShutdown, true),
        (2_962, Holds, NotFound)
    );
    assert_eq!(
        outcome(Scenario::RollingUpgrade, false),
        (1_778_249, Violated, Found)
    );
    assert_eq!(
        outcome(Scenario::RollingUpgrade, true),
        (1_282_423, Holds, Found)
    );
}
