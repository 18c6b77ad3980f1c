//! The strategy promises as predicates: each holds for a well-behaved
//! strategy and fails for one that breaks exactly that promise.

use std::sync::atomic::{AtomicUsize, Ordering};

use rocketmq_rebalance::strategy::Averagely;
use rocketmq_rebalance::{AllocateError, AllocateStrategy, MessageQueue};
use rocketmq_rebalance_properties::strategy::{
    group_matches_per_consumer, is_deterministic, is_order_independent,
};

fn queues() -> Vec<MessageQueue> {
    (0..4)
        .map(|i| MessageQueue::new("T", "broker-a", i))
        .collect()
}

fn consumers() -> Vec<String> {
    ["c1", "c2"].map(String::from).to_vec()
}

/// Each round of one call per consumer gives the whole list to the next
/// consumer in turn.
#[derive(Debug, Default)]
struct Flaky(AtomicUsize);

impl AllocateStrategy for Flaky {
    fn name(&self) -> &str {
        "FLAKY"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let n = consumers.len().max(1);
        let turn = self.0.fetch_add(1, Ordering::Relaxed) / n % n;
        let mine = consumers.get(turn).is_some_and(|c| c == current);
        Ok(if mine {
            queues.iter().collect()
        } else {
            Vec::new()
        })
    }
}

/// Averagely one consumer at a time, but its whole-group call gives
/// everything to the first consumer.
#[derive(Debug)]
struct GreedyGroup;

impl AllocateStrategy for GreedyGroup {
    fn name(&self) -> &str {
        "GREEDY_GROUP"
    }

    fn allocate<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        Averagely.allocate(group, current, queues, consumers)
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let mut shares = vec![Vec::new(); consumers.len()];
        if let Some(first) = shares.first_mut() {
            first.extend(queues);
        }
        Ok(shares)
    }
}

#[test]
fn a_well_behaved_strategy_keeps_every_promise() {
    let (q, c) = (queues(), consumers());
    let (mut q2, mut c2) = (q.clone(), c.clone());
    q2.reverse();
    c2.reverse();
    assert!(is_deterministic(&Averagely, &q, &c));
    assert!(group_matches_per_consumer(&Averagely, &q, &c));
    assert!(is_order_independent(&Averagely, &q, &c, &q2, &c2));
}

#[test]
fn a_strategy_that_answers_differently_each_time_is_caught() {
    let (q, c) = (queues(), consumers());
    assert!(!is_deterministic(&Flaky::default(), &q, &c));
    assert!(!is_order_independent(&Flaky::default(), &q, &c, &q, &c));
}

#[test]
fn a_group_call_that_disagrees_with_the_per_consumer_calls_is_caught() {
    assert!(!group_matches_per_consumer(
        &GreedyGroup,
        &queues(),
        &consumers()
    ));
}

#[test]
fn failures_must_agree_too() {
    // The per-consumer calls fail on the empty id; a group call that
    // answers anyway breaks the promise.
    let c = ["c1".to_string(), String::new()];
    assert!(group_matches_per_consumer(&Averagely, &queues(), &c));
    assert!(!group_matches_per_consumer(&GreedyGroup, &queues(), &c));
}
