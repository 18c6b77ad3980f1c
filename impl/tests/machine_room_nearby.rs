//! `MACHINE_ROOM_NEARBY` hands back references into the caller's own list:
//! the very element the inner strategy chose, or for an inner strategy that
//! answers from its configuration, the caller's equal queue.

use rocketmq_rebalance::strategy::{Averagely, ByConfig, MachineRoomNearby, PrefixResolver};
use rocketmq_rebalance::{AllocateStrategy, MessageQueue};

fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// The positions in `queues` that `share` points at.
fn positions(queues: &[MessageQueue], share: &[&MessageQueue]) -> Vec<usize> {
    share
        .iter()
        .map(|&q| {
            queues
                .iter()
                .position(|candidate| std::ptr::eq(candidate, q))
                .expect("a reference into the caller's list")
        })
        .collect()
}

#[test]
fn a_queue_listed_twice_is_handed_out_once_per_position() {
    let queues = vec![
        MessageQueue::new("T", "hz-broker-a", 0),
        MessageQueue::new("T", "hz-broker-a", 0),
        MessageQueue::new("T", "sh-broker-b", 0),
    ];
    let consumers = ids(&["hz-1", "hz-2"]);
    let nearby = MachineRoomNearby::new(Averagely, PrefixResolver::new('-'));
    let shares = nearby.allocate_group("g", &queues, &consumers).unwrap();
    assert_eq!(positions(&queues, &shares[0]), [0, 2]);
    assert_eq!(positions(&queues, &shares[1]), [1]);
    for (i, current) in consumers.iter().enumerate() {
        let mine = nearby.allocate("g", current, &queues, &consumers).unwrap();
        assert_eq!(
            positions(&queues, &mine),
            positions(&queues, &shares[i]),
            "{current}"
        );
    }
}

#[test]
fn configured_answers_are_matched_by_value_and_dropped_when_absent() {
    let queues = vec![
        MessageQueue::new("T", "hz-broker-a", 0),
        MessageQueue::new("T", "sh-broker-b", 0),
    ];
    let fixed = ByConfig::new(vec![
        MessageQueue::new("T", "hz-broker-a", 0),
        MessageQueue::new("T", "bj-broker-c", 9),
    ]);
    let nearby = MachineRoomNearby::new(fixed, PrefixResolver::new('-'));
    let consumers = ids(&["hz-1"]);
    let mine = nearby.allocate("g", "hz-1", &queues, &consumers).unwrap();
    // Once for the own room hz, once for room sh, which has no consumer;
    // bj-broker-c 9 is not the caller's and is dropped both times.
    assert_eq!(positions(&queues, &mine), [0, 0]);
    let shares = nearby.allocate_group("g", &queues, &consumers).unwrap();
    assert_eq!(positions(&queues, &shares[0]), [0, 0]);
}
