//! Strategies that carry a configuration give it back as configured.

use std::collections::BTreeSet;

use rocketmq_rebalance::strategy::{ByConfig, ByMachineRoom, ConsistentHash, Sticky};
use rocketmq_rebalance::MessageQueue;

#[test]
fn by_config_gives_back_its_queues() {
    let queues = vec![
        MessageQueue::new("T", "broker-b", 1),
        MessageQueue::new("T", "broker-a", 0),
    ];
    assert_eq!(ByConfig::new(queues.clone()).queues(), &queues[..]);
}

#[test]
fn by_machine_room_gives_back_its_rooms_as_a_set() {
    let rooms = ByMachineRoom::new(["sh", "hz", "sh"]);
    let expected: BTreeSet<String> = ["hz", "sh"].map(String::from).into();
    assert_eq!(rooms.consumer_rooms(), &expected);
}

#[test]
fn consistent_hash_and_sticky_give_back_their_sizes() {
    assert_eq!(ConsistentHash::new(7).virtual_nodes(), 7);
    assert_eq!(ConsistentHash::new(0).virtual_nodes(), 0);
    assert_eq!(Sticky::with_slack(5).slack(), 5);
    assert_eq!(Sticky::with_slack(0).slack(), 1);
    assert_eq!(Sticky::new().slack(), 1);
}
