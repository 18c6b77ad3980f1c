//! What a consumer does around the strategy in one rebalance of one topic
//! (`RebalanceImpl.rebalanceByTopic` and `updateProcessQueueTableInRebalance`),
//! as pure functions that production code and the model share.

use crate::java::compare_utf16;
use crate::{AllocateError, AllocateStrategy, MessageQueue};

/// RocketMQ's rebalance-level call: sorts copies of both lists in Java's
/// order, as `rebalanceByTopic` does, then asks `strategy` for `current`'s
/// share.
///
/// ```
/// use rocketmq_rebalance::{rebalance_allocate, strategy::Averagely, MessageQueue};
///
/// let queues = vec![MessageQueue::new("T", "broker-b", 0), MessageQueue::new("T", "broker-a", 0)];
/// let consumers = vec!["c2".to_string(), "c1".to_string()];
/// let mine = rebalance_allocate(&Averagely, "group", "c1", &queues, &consumers)?;
/// assert_eq!(mine, [MessageQueue::new("T", "broker-a", 0)]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
pub fn rebalance_allocate(
    strategy: &dyn AllocateStrategy,
    group: &str,
    current: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Vec<MessageQueue>, AllocateError> {
    let (queues, consumers) = sorted(queues, consumers);
    let mine = strategy.allocate(group, current, &queues, &consumers)?;
    Ok(mine.into_iter().cloned().collect())
}

/// The whole group's shares after the same sort: for each consumer in sorted
/// order, its id and its queues.
///
/// ```
/// use rocketmq_rebalance::{rebalance_allocate_group, strategy::AveragelyByCircle, MessageQueue};
///
/// let queues: Vec<_> = (0..3).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let consumers = vec!["c2".to_string(), "c1".to_string()];
/// let shares = rebalance_allocate_group(&AveragelyByCircle, "group", &queues, &consumers)?;
/// assert_eq!(shares[0].0, "c1");
/// assert_eq!(shares[0].1, [queues[0].clone(), queues[2].clone()]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
pub fn rebalance_allocate_group(
    strategy: &dyn AllocateStrategy,
    group: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Vec<(String, Vec<MessageQueue>)>, AllocateError> {
    let (queues, consumers) = sorted(queues, consumers);
    let shares = strategy.allocate_group(group, &queues, &consumers)?;
    Ok(consumers
        .into_iter()
        .zip(shares)
        .map(|(id, share)| (id, share.into_iter().cloned().collect()))
        .collect())
}

/// Copies of both lists in Java's order.
fn sorted(queues: &[MessageQueue], consumers: &[String]) -> (Vec<MessageQueue>, Vec<String>) {
    let mut queues = queues.to_vec();
    queues.sort();
    let mut consumers = consumers.to_vec();
    consumers.sort_by(|a, b| compare_utf16(a, b));
    (queues, consumers)
}

/// What a consumer changes after an allocation: the queues it owns and must
/// drop (persisting their offsets), and the allocated queues it must start
/// pulling. Both lists are sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdatePlan<Q> {
    /// Owned queues that are no longer allocated to this consumer.
    pub drop: Vec<Q>,
    /// Allocated queues that this consumer does not own yet.
    pub add: Vec<Q>,
}

impl<Q> UpdatePlan<Q> {
    /// Whether the allocation changes nothing (RocketMQ then sends no
    /// heartbeat).
    pub fn is_empty(&self) -> bool {
        self.drop.is_empty() && self.add.is_empty()
    }
}

/// `updateProcessQueueTableInRebalance`'s decision: compares the queues a
/// consumer owns with those just allocated to it. Duplicates count once.
///
/// ```
/// use rocketmq_rebalance::plan_update;
///
/// let plan = plan_update(&[1, 2, 3], &[3, 4]);
/// assert_eq!(plan.drop, [1, 2]);
/// assert_eq!(plan.add, [4]);
/// ```
pub fn plan_update<Q: Ord + Clone>(owned: &[Q], allocated: &[Q]) -> UpdatePlan<Q> {
    let owned = sorted_unique(owned);
    let allocated = sorted_unique(allocated);
    UpdatePlan {
        drop: owned
            .iter()
            .filter(|q| allocated.binary_search(q).is_err())
            .map(|q| (*q).clone())
            .collect(),
        add: allocated
            .iter()
            .filter(|q| owned.binary_search(q).is_err())
            .map(|q| (*q).clone())
            .collect(),
    }
}

fn sorted_unique<Q: Ord>(items: &[Q]) -> Vec<&Q> {
    let mut items: Vec<&Q> = items.iter().collect();
    items.sort();
    items.dedup();
    items
}
