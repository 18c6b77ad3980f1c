//! A broker's failover (`--failovers`): its slave serves with no lock
//! table and the offsets of its last sync. Two findings, each against the
//! same run without the failover: committed messages are consumed again,
//! and with orderly consumption a queue is consumed by two at once.

mod common;

use common::{complete_report as report, verdicts};
use rocketmq_rebalance_model::report::{
    Report, Status, DUPLICATE_DELIVERY, NO_CONCURRENT_CONSUMPTION, ONE_LIVE_LOCK,
};

fn status(report: &Report, name: &str) -> Status {
    report.property(name).expect("reported").status
}

/// Offsets committed synchronously, the owner crashes and the other
/// consumer takes its queue: without a failover it starts where the
/// owner stopped; after one, from the slave's last copy, and consumes
/// both committed messages again.
#[test]
fn a_failover_rolls_committed_offsets_back() {
    let flags = [
        "--messages",
        "2",
        "--consumers",
        "2",
        "--brokers",
        "1",
        "--queues",
        "1",
        "--commit",
        "sync",
        "--crashes",
        "1",
        "--joins",
        "0",
    ];
    let without = report(&flags);
    let with = report(&[&flags[..], &["--failovers", "1"]].concat());
    assert_eq!((without.unique_states, with.unique_states), (89, 611));
    assert_eq!(status(&without, DUPLICATE_DELIVERY), Status::NotFound);
    assert_eq!(status(&with, DUPLICATE_DELIVERY), Status::Found);
    let duplicated = |r: &Report| {
        r.harms
            .as_ref()
            .expect("measured")
            .max_duplicated_messages
            .value
    };
    assert_eq!((duplicated(&without), duplicated(&with)), (0, 2));
}

/// Orderly, a consumer joins a group whose broker fails over: the new
/// master has no lock, so it grants the joiner one that the old owner
/// still trusts, and both consume the queue (at a coarse scale of the
/// clock, to keep the space small; the default scale finds the same).
#[test]
fn a_failover_lets_two_consume_one_queue_in_order() {
    let flags = [
        "--orderly",
        "--failovers",
        "1",
        "--lock-renew",
        "1",
        "--lock-validity",
        "2",
        "--lock-lease",
        "3",
        "--unlock-delay",
        "1",
    ];
    let with = verdicts(&flags);
    assert_eq!(with.unique_states, 4_130_763);
    for name in [NO_CONCURRENT_CONSUMPTION, ONE_LIVE_LOCK] {
        assert_eq!(status(&with, name), Status::Violated, "{name}");
    }
}
