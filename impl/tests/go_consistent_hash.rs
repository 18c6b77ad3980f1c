//! `GoConsistentHash` where Go's function returns early or panics, with
//! exact outputs: the failures it shares with every strategy of the crate,
//! and a ring without points. What it computes on ordinary groups is
//! checked against Go's own answers in `tests/tests/go_conformance.rs`.

use rocketmq_rebalance::strategy::GoConsistentHash;
use rocketmq_rebalance::{AllocateError, AllocateStrategy, MessageQueue};

fn queues(n: i32) -> Vec<MessageQueue> {
    (0..n)
        .map(|i| MessageQueue::new("T", "broker-a", i))
        .collect()
}

fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn it_is_gos_consistent_hash_by_name_and_count() {
    let go = GoConsistentHash::new(7);
    assert_eq!(go.name(), "CONSISTENT_HASH");
    assert_eq!(go.virtual_nodes(), 7);
}

/// Go returns nil for these; the crate fails as every strategy does, in
/// Java's order of checks.
#[test]
fn empty_inputs_fail_as_every_strategy_fails() {
    let go = GoConsistentHash::new(10);
    let (q, c) = (queues(2), ids(&["c1"]));
    assert_eq!(
        go.allocate("g", "", &[], &[]),
        Err(AllocateError::EmptyCurrentId)
    );
    assert_eq!(
        go.allocate("g", "c1", &[], &c),
        Err(AllocateError::EmptyQueues)
    );
    assert_eq!(
        go.allocate("g", "c1", &q, &[]),
        Err(AllocateError::EmptyConsumers)
    );
    assert_eq!(go.allocate("g", "c9", &q, &c), Ok(vec![]));
    assert_eq!(go.allocate_group("g", &q, &[]), Ok(vec![]));
    assert_eq!(
        go.allocate_group("g", &q, &ids(&["c1", ""])),
        Err(AllocateError::EmptyCurrentId)
    );
}

/// Go's ring divides by its replica count when the first id is added: a
/// member's call panics, a stranger's returns before the ring is built.
#[test]
fn zero_virtual_nodes_fail_for_members_only() {
    let go = GoConsistentHash::new(0);
    let (q, c) = (queues(3), ids(&["c1", "c2"]));
    assert_eq!(
        go.allocate("g", "c2", &q, &c),
        Err(AllocateError::NoVirtualNodes)
    );
    assert_eq!(go.allocate("g", "c9", &q, &c), Ok(vec![]));
    assert_eq!(
        go.allocate_group("g", &q, &c),
        Err(AllocateError::NoVirtualNodes)
    );
    // The list checks come first, as in Go.
    assert_eq!(
        go.allocate("g", "c1", &[], &c),
        Err(AllocateError::EmptyQueues)
    );
    assert_eq!(
        go.allocate_group("g", &q, &ids(&["", "c1"])),
        Err(AllocateError::EmptyCurrentId)
    );
}

/// With one consumer every point is its own: it takes every queue, in the
/// order given, however many points it has.
#[test]
fn a_lone_consumer_takes_every_queue_in_order() {
    let mut q = queues(5);
    q.reverse();
    for nodes in [1, 10, 1000] {
        let go = GoConsistentHash::new(nodes);
        let mine = go.allocate("g", "c1", &q, &ids(&["c1"])).unwrap();
        assert_eq!(mine, q.iter().collect::<Vec<_>>(), "{nodes}");
    }
}
