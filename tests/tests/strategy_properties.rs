//! Each strategy against the promises it makes, on arbitrary Unicode input.

use std::collections::BTreeSet;

use proptest::prelude::*;
use rocketmq_rebalance::java::split;
use rocketmq_rebalance::strategy::{ByMachineRoom, ConsistentHash, GoConsistentHash};
use rocketmq_rebalance::{
    rebalance_allocate, rebalance_allocate_group, strategy_from_name, AllocateStrategy,
    MessageQueue, STRATEGY_NAMES,
};
use rocketmq_rebalance_properties::strategy::{
    group_matches_per_consumer, is_deterministic, is_order_independent,
};
use rocketmq_rebalance_properties::{balance, is_disjoint, is_partition};

/// Short names mixing ASCII, the separators the machine-room strategies
/// parse, and characters whose Java order differs from Rust's.
fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(vec!['a', 'b', 'z', 'Z', '0', '9', '-', '@', '.', '_']),
            1 => prop::sample::select(vec!['é', '中', '\u{FF01}', '\u{1F600}', '\u{E000}', '\u{10FFFF}']),
            1 => any::<char>(),
        ],
        0..6,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn queue() -> impl Strategy<Value = MessageQueue> {
    (name(), name(), -2i32..40).prop_map(|(t, b, id)| MessageQueue::new(t, b, id))
}

/// Any lists: repeats, empty names and empty lists included.
fn any_group() -> impl Strategy<Value = (Vec<MessageQueue>, Vec<String>)> {
    (
        prop::collection::vec(queue(), 0..24),
        prop::collection::vec(name(), 0..8),
    )
}

/// A group RocketMQ would see: distinct queues, distinct non-empty ids.
fn valid_group() -> impl Strategy<Value = (Vec<MessageQueue>, Vec<String>)> {
    (
        prop::collection::btree_set(queue(), 1..40),
        prop::collection::btree_set(name().prop_filter("non-empty", |n| !n.is_empty()), 1..10),
    )
        .prop_map(|(q, c)| (q.into_iter().collect(), c.into_iter().collect()))
}

/// A valid group whose brokers and consumers all name a machine room
/// (`room-rest`), some rooms without consumers.
fn roomed_group() -> impl Strategy<Value = (Vec<MessageQueue>, Vec<String>)> {
    let room = || prop::sample::select(vec!["hz", "sh", "bj", "中"]);
    (
        prop::collection::btree_set((room(), queue()), 1..40),
        prop::collection::btree_set((room(), name()), 1..10),
    )
        .prop_map(|(q, c)| {
            let q = q
                .into_iter()
                .map(|(r, mq)| {
                    MessageQueue::new(mq.topic, format!("{r}-{}", mq.broker_name), mq.queue_id)
                })
                .collect::<BTreeSet<_>>();
            let c = c
                .into_iter()
                .map(|(r, id)| format!("{r}-{id}"))
                .collect::<BTreeSet<_>>();
            (q.into_iter().collect(), c.into_iter().collect())
        })
}

fn every_strategy(virtual_nodes: usize, rooms: Vec<String>) -> Vec<Box<dyn AllocateStrategy>> {
    let mut all: Vec<Box<dyn AllocateStrategy>> = STRATEGY_NAMES
        .iter()
        .map(|n| strategy_from_name(n).expect("a listed name"))
        .collect();
    all.push(Box::new(ConsistentHash::new(virtual_nodes)));
    all.push(Box::new(GoConsistentHash::new(virtual_nodes)));
    all.push(Box::new(ByMachineRoom::new(rooms)));
    all
}

fn shares_of(
    strategy: &dyn AllocateStrategy,
    q: &[MessageQueue],
    c: &[String],
) -> Vec<Vec<MessageQueue>> {
    rebalance_allocate_group(strategy, "g", q, c)
        .expect("a valid group")
        .into_iter()
        .map(|(_, share)| share)
        .collect()
}

proptest! {

    /// No input makes any strategy panic, and the whole-group call always
    /// equals the per-consumer calls, failures included.
    #[test]
    fn group_call_equals_per_consumer_calls(
        (q, c) in any_group(),
        vnodes in 0usize..12,
        rooms in prop::collection::vec(name(), 0..3),
        current in name(),
    ) {
        for strategy in every_strategy(vnodes, rooms.clone()) {
            prop_assert!(group_matches_per_consumer(strategy.as_ref(), &q, &c), "{}", strategy.name());
            let _ = strategy.allocate("g", &current, &q, &c);
            let _ = rebalance_allocate(strategy.as_ref(), "g", &current, &q, &c);
        }
    }

    #[test]
    fn answers_are_deterministic_and_independent_of_input_order(
        (q, c) in valid_group(),
        seed in any::<u64>(),
    ) {
        let mut q2 = q.clone();
        let mut c2 = c.clone();
        // A cheap deterministic shuffle: rotate and reverse by the seed.
        q2.rotate_left((seed as usize) % q.len());
        c2.rotate_left((seed as usize >> 8) % c.len());
        if seed & 1 == 1 { q2.reverse(); }
        if seed & 2 == 2 { c2.reverse(); }
        for strategy in every_strategy(10, vec!["a".into()]) {
            prop_assert!(is_deterministic(strategy.as_ref(), &q, &c), "{}", strategy.name());
            prop_assert!(is_order_independent(strategy.as_ref(), &q, &c, &q2, &c2), "{}", strategy.name());
        }
    }

    #[test]
    fn averaging_strategies_partition_with_balance_one((q, c) in valid_group()) {
        for name in ["AVG", "AVG_BY_CIRCLE"] {
            let strategy = strategy_from_name(name).unwrap();
            let shares = shares_of(strategy.as_ref(), &q, &c);
            prop_assert!(is_partition(&q, &shares), "{name}");
            prop_assert!(balance(&shares) <= 1, "{name}");
        }
    }

    #[test]
    fn consistent_hash_partitions((q, c) in valid_group(), vnodes in 1usize..30) {
        let shares = shares_of(&ConsistentHash::new(vnodes), &q, &c);
        prop_assert!(is_partition(&q, &shares));
        let shares = shares_of(&GoConsistentHash::new(vnodes), &q, &c);
        prop_assert!(is_partition(&q, &shares));
    }

    #[test]
    fn by_machine_room_covers_exactly_the_eligible_queues(
        (q, c) in valid_group(),
        rooms in prop::collection::btree_set(name(), 0..4),
    ) {
        let shares = shares_of(&ByMachineRoom::new(rooms.clone()), &q, &c);
        prop_assert!(is_disjoint(&shares));
        let held: BTreeSet<&MessageQueue> = shares.iter().flatten().collect();
        let eligible: BTreeSet<&MessageQueue> = q
            .iter()
            .filter(|mq| matches!(split(&mq.broker_name, '@')[..], [room, _] if rooms.contains(room)))
            .collect();
        prop_assert_eq!(held, eligible);
    }

    #[test]
    fn machine_room_nearby_partitions_when_every_room_resolves((q, c) in roomed_group()) {
        let shares = shares_of(strategy_from_name("MACHINE_ROOM_NEARBY").unwrap().as_ref(), &q, &c);
        prop_assert!(is_partition(&q, &shares));
    }
}
