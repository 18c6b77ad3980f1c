//! Stalls as figures: the longest a queue with a message waits while a
//! live consumer owns it, and the longest wait for a lock given to another,
//! in ticks with orderly time and in the owner's steps without it; and
//! `--max-stall K`, the property that bounds the first.

use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{
    check,
    report::{Report, Status, NO_LONG_STALL},
    CheckOptions,
};

fn report(flags: &[&str], max_stall: Option<usize>) -> Report {
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let config = ModelArgs::config_from(&flags).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
    let options = CheckOptions {
        threads: 2,
        max_stall,
        ..CheckOptions::default()
    };
    let report = check(config, &options, |_| {});
    assert!(report.complete(), "{flags:?}");
    report
}

/// A graceful orderly shutdown hands its queue over without a stall: the
/// new owner's offset read and pull are steps it can take at once, which
/// the measure does not count as waiting however long the scheduler
/// leaves them.
#[test]
fn an_orderly_hand_over_waits_no_tick() {
    let harms = report(&["--scenario", "graceful-shutdown", "--orderly"], None)
        .harms
        .expect("measured");
    assert_eq!(harms.stall_unit, "ticks");
    for wait in [
        &harms.max_stall_ticks,
        &harms.max_pause_ticks,
        &harms.max_lock_wait_ticks,
    ] {
        assert_eq!((wait.value, wait.unbounded), (0, false));
        assert_eq!(wait.explorer_path, None);
    }
}

/// After a broker loses its disk, a consumer that still owns the queue
/// from before goes on with its own steps (its rebalance) while the queue
/// waits: 2 steps of the owner, the unit without orderly time; and
/// `--max-stall` is violated below that, with the stall as its
/// counterexample, and holds at it.
#[test]
fn a_stall_is_counted_in_the_owners_steps_and_bounded_by_max_stall() {
    let flags = ["--scenario", "broker-disk-loss"];
    let tight = report(&flags, Some(1));
    let harms = tight.harms.as_ref().expect("measured");
    assert_eq!(harms.stall_unit, "owner steps");
    assert_eq!(
        (harms.max_stall_ticks.value, harms.max_stall_ticks.unbounded),
        (2, false)
    );
    assert_eq!(
        harms.max_lock_wait_ticks.value, 0,
        "no locks without --orderly"
    );
    let stall = tight.property(NO_LONG_STALL).expect("checked");
    assert_eq!(stall.status, Status::Violated);
    assert_eq!(stall.explorer_path, harms.max_stall_ticks.explorer_path);
    let trace = stall.trace.as_ref().expect("a counterexample");
    assert_eq!(
        trace[0],
        "a queue stalls 2 owner steps, past the bound of 1"
    );
    let loose = report(&flags, Some(2));
    assert_eq!(
        loose.property(NO_LONG_STALL).map(|p| p.status),
        Some(Status::Holds)
    );
    assert!(report(&flags, None).property(NO_LONG_STALL).is_none());
}

/// An orderly queue whose holder dies waits out the broker's lease of
/// its lock (6 ticks at this scenario's scale), and is paused a tick
/// longer: the survivor learns of the death first. These are the clock's
/// own waits, counted however the scheduler orders the steps around them.
#[test]
fn a_dead_holders_queue_waits_out_the_lease() {
    let harms = report(&["--scenario", "crash", "--orderly"], None)
        .harms
        .expect("measured");
    let figure = |name: &str| {
        let harm = harms.get(name).expect("a harm of the report");
        (harm.value, harm.unbounded)
    };
    assert_eq!(figure("max_lock_wait_ticks"), (6, false));
    assert_eq!(figure("max_pause_ticks"), (7, false));
    assert_eq!(figure("max_stall_ticks"), (0, false));
}
