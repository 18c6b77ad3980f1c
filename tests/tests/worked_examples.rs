//! The worked examples of `docs/strategies.md` (from the conformance notes):
//! brokers a and b with four queues each, three consumers.

use rocketmq_rebalance::strategy::{
    Averagely, AveragelyByCircle, ByConfig, ByMachineRoom, ConsistentHash, GoConsistentHash,
    MachineRoomNearby, PrefixResolver,
};
use rocketmq_rebalance::{
    rebalance_allocate_group, strategy_from_name, AllocateError, AllocateStrategy, MessageQueue,
    STRATEGY_NAMES,
};

fn queues() -> Vec<MessageQueue> {
    rocketmq_rebalance::workload::queues("T", 2, 4)
}

fn consumers() -> Vec<String> {
    ["10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"]
        .map(String::from)
        .to_vec()
}

/// Each consumer's share as `a0 a1 b2` text.
fn table(strategy: &dyn AllocateStrategy) -> Vec<String> {
    rebalance_allocate_group(strategy, "group", &queues(), &consumers())
        .expect("a valid group")
        .into_iter()
        .map(|(_, share)| {
            share
                .iter()
                .map(|q| format!("{}{}", &q.broker_name[7..], q.queue_id))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn averagely() {
    assert_eq!(table(&Averagely), ["a0 a1 a2", "a3 b0 b1", "b2 b3"]);
}

#[test]
fn averagely_by_circle() {
    assert_eq!(table(&AveragelyByCircle), ["a0 a3 b2", "a1 b0 b3", "a2 b1"]);
}

#[test]
fn consistent_hash() {
    assert_eq!(
        table(&ConsistentHash::new(10)),
        ["a0 b1", "a1 b0 b2 b3", "a2 a3"]
    );
}

/// The Go client's ring, whose sort by bytes is Java's on these ids.
#[test]
fn go_consistent_hash() {
    assert_eq!(
        table(&GoConsistentHash::new(10)),
        ["b3", "a0 a1 a3 b2", "a2 b0 b1"]
    );
}

#[test]
fn consistent_hash_without_virtual_nodes_allocates_nothing() {
    assert_eq!(table(&ConsistentHash::new(0)), ["", "", ""]);
}

#[test]
fn by_config_ignores_the_group() {
    let fixed = ByConfig::new(vec![MessageQueue::new("T", "broker-z", 9)]);
    assert_eq!(table(&fixed), ["z9", "z9", "z9"]);
    assert_eq!(fixed.allocate("g", "", &[], &[]).unwrap().len(), 1);
}

#[test]
fn by_machine_room_takes_only_eligible_rooms() {
    let queues = vec![
        MessageQueue::new("T", "hz@broker-a", 0),
        MessageQueue::new("T", "hz@", 1),
        MessageQueue::new("T", "sh@broker-b", 0),
        MessageQueue::new("T", "hz@broker-a@", 2),
        MessageQueue::new("T", "hz@broker-a", 3),
    ];
    let consumers = consumers();
    let strategy = ByMachineRoom::new(["hz"]);
    let shares = strategy.allocate_group("g", &queues, &consumers).unwrap();
    // Eligible: 0, 3 (split drops the trailing empty part) and 4.
    assert_eq!(
        shares,
        [vec![&queues[0]], vec![&queues[3]], vec![&queues[4]]]
    );
}

#[test]
fn machine_room_nearby_prefers_the_own_room() {
    let queues = vec![
        MessageQueue::new("T", "hz-broker-a", 0),
        MessageQueue::new("T", "hz-broker-a", 1),
        MessageQueue::new("T", "sh-broker-b", 0),
        MessageQueue::new("T", "bj-broker-c", 0),
        MessageQueue::new("T", "bj-broker-c", 1),
    ];
    let consumers: Vec<String> = ["hz-1", "hz-2", "sh-1"].map(String::from).to_vec();
    let nearby = MachineRoomNearby::new(Averagely, PrefixResolver::new('-'));
    let shares = nearby.allocate_group("g", &queues, &consumers).unwrap();
    assert_eq!(shares[0], [&queues[0], &queues[3]]);
    assert_eq!(shares[1], [&queues[1], &queues[4]]);
    assert_eq!(shares[2], [&queues[2]]);
}

#[test]
fn machine_room_nearby_fails_on_a_broker_without_room() {
    let queues = vec![MessageQueue::new("T", "-broker-a", 0)];
    let nearby = MachineRoomNearby::new(Averagely, PrefixResolver::new('-'));
    assert_eq!(
        nearby.allocate("g", "hz-1", &queues, &["hz-1".to_string()]),
        Err(AllocateError::NoBrokerMachineRoom(queues[0].clone()))
    );
}

#[test]
fn errors_come_in_java_order() {
    let q = queues();
    let c = consumers();
    for name in STRATEGY_NAMES.iter().filter(|n| **n != "CONFIG") {
        let s = strategy_from_name(name).unwrap();
        assert_eq!(
            s.allocate("g", "", &[], &[]),
            Err(AllocateError::EmptyCurrentId),
            "{name}"
        );
        assert_eq!(
            s.allocate("g", "x", &[], &[]),
            Err(AllocateError::EmptyQueues),
            "{name}"
        );
        assert_eq!(
            s.allocate("g", "x", &q, &[]),
            Err(AllocateError::EmptyConsumers),
            "{name}"
        );
        assert_eq!(s.allocate("g", "absent", &q, &c), Ok(vec![]), "{name}");
        assert_eq!(s.allocate_group("g", &q, &[]), Ok(vec![]), "{name}");
    }
}

#[test]
fn a_repeated_id_takes_its_first_position_and_orphans_a_block() {
    let q = queues();
    let c: Vec<String> = ["a", "a", "b"].map(String::from).to_vec();
    let shares = Averagely.allocate_group("g", &q, &c).unwrap();
    assert_eq!(shares[0], shares[1]);
    let held: usize = [&shares[0], &shares[2]].iter().map(|s| s.len()).sum();
    assert!(held < q.len(), "the second block belongs to nobody");
}

#[test]
fn every_name_parses_to_its_strategy() {
    for name in STRATEGY_NAMES {
        let strategy = strategy_from_name(name).unwrap();
        assert!(
            strategy.name().starts_with(name),
            "{name} -> {}",
            strategy.name()
        );
    }
    assert_eq!(
        strategy_from_name("MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE")
            .unwrap()
            .name(),
        "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"
    );
    assert!(strategy_from_name("MACHINE_ROOM_NEARBY-NOPE").is_err());
    assert!(strategy_from_name("").is_err());
}
