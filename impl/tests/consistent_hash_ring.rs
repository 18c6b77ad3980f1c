//! `CONSISTENT_HASH` on a ring whose positions the test chooses, to pin
//! the Java quirks that MD5 almost never shows: a queue on a point, two
//! points on one position, and a repeated client id after a collision.

use std::collections::HashMap;

use rocketmq_rebalance::strategy::{ConsistentHash, HashFunction};
use rocketmq_rebalance::{AllocateStrategy, MessageQueue};

/// Positions by key; every other key lands on 1000. Only `hash` is given,
/// so the ring goes through the provided `hash_bytes`.
#[derive(Debug)]
struct Table(HashMap<String, i64>);

impl Table {
    fn new(entries: &[(&str, i64)]) -> Self {
        Table(entries.iter().map(|&(k, v)| (k.to_string(), v)).collect())
    }
}

impl HashFunction for Table {
    fn hash(&self, key: &str) -> i64 {
        self.0.get(key).copied().unwrap_or(1000)
    }
}

fn queue(id: i32) -> MessageQueue {
    MessageQueue::new("T", "broker-a", id)
}

/// What `queue(id)` hashes, as Java's `MessageQueue.toString()`.
fn key(id: i32) -> String {
    format!("MessageQueue [topic=T, brokerName=broker-a, queueId={id}]")
}

fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn queue_ids(share: &[&MessageQueue]) -> Vec<i32> {
    share.iter().map(|q| q.queue_id).collect()
}

#[test]
fn a_queue_on_a_point_belongs_to_that_point() {
    let (k0, k1, k2) = (key(0), key(1), key(2));
    let ring = ConsistentHash::with_hash(
        1,
        Table::new(&[("a-0", 10), ("b-0", 20), (&k0, 10), (&k1, 11), (&k2, 25)]),
    );
    let queues: Vec<_> = (0..3).map(queue).collect();
    let shares = ring
        .allocate_group("g", &queues, &ids(&["a", "b"]))
        .unwrap();
    // Java's `tailMap(hash)` includes the point itself; past the last point
    // the ring wraps to the first.
    assert_eq!(queue_ids(&shares[0]), [0, 2]);
    assert_eq!(queue_ids(&shares[1]), [1]);
}

#[test]
fn of_two_points_on_one_position_the_later_one_wins() {
    let k0 = key(0);
    let ring = ConsistentHash::with_hash(1, Table::new(&[("a-0", 10), ("b-0", 10), (&k0, 5)]));
    let queues = [queue(0)];
    let consumers = ids(&["a", "b"]);
    assert!(ring
        .allocate("g", "a", &queues, &consumers)
        .unwrap()
        .is_empty());
    assert_eq!(
        queue_ids(&ring.allocate("g", "b", &queues, &consumers).unwrap()),
        [0]
    );
}

#[test]
fn a_repeated_id_numbers_its_points_after_those_it_still_holds() {
    // b's point overwrites a's, so a holds none when it is added again and
    // numbers its point a-0 once more, taking the position back.
    let k0 = key(0);
    let ring = ConsistentHash::with_hash(1, Table::new(&[("a-0", 10), ("b-0", 10), (&k0, 5)]));
    let queues = [queue(0)];
    let shares = ring
        .allocate_group("g", &queues, &ids(&["a", "b", "a"]))
        .unwrap();
    assert_eq!(
        shares.iter().map(|s| queue_ids(s)).collect::<Vec<_>>(),
        [vec![0], vec![], vec![0]]
    );
    // Without the collision the second a numbers its point a-1.
    let ring = ConsistentHash::with_hash(
        1,
        Table::new(&[("a-0", 10), ("b-0", 20), ("a-1", 4), (&k0, 15)]),
    );
    let queues: Vec<_> = [0, 1].map(queue).to_vec();
    let shares = ring
        .allocate_group("g", &queues, &ids(&["a", "b", "a"]))
        .unwrap();
    // q0 (15) goes to b-0 (20); q1 (1000) wraps to a-1 (4).
    assert_eq!(
        shares.iter().map(|s| queue_ids(s)).collect::<Vec<_>>(),
        [vec![1], vec![0], vec![1]]
    );
}
