//! What a consumer does around the strategy in one rebalance of one topic
//! (`RebalanceImpl.rebalanceByTopic` and `updateProcessQueueTableInRebalance`),
//! as pure functions that production code and the model share.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::java::compare_utf16;
use crate::{AllocateError, AllocateStrategy, MessageQueue};

/// The order in which a client sorts the queue list and the client-id list
/// before it calls the strategy.
///
/// The Java client sorts strings by UTF-16 code units (`String.compareTo`);
/// the Rust client (`rocketmq-client-rust`) and the Go client sort them by
/// their UTF-8 bytes. The two orders differ only where a character in
/// `U+E000..U+FFFF` meets one outside the Basic Multilingual Plane, and
/// there a group whose members sort differently splits its queues on two
/// different lists.
///
/// ```
/// use rocketmq_rebalance::SortOrder;
/// use std::cmp::Ordering;
///
/// assert_eq!(SortOrder::Java.compare_ids("\u{E000}", "\u{10000}"), Ordering::Greater);
/// assert_eq!(SortOrder::Bytes.compare_ids("\u{E000}", "\u{10000}"), Ordering::Less);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    /// Java's order: strings by UTF-16 code units, as the Java client sorts.
    #[default]
    Java,
    /// Strings by their UTF-8 bytes (code points), as the Rust and Go
    /// clients sort.
    Bytes,
}

impl SortOrder {
    /// Whether this is Java's order (the conformance format leaves it out).
    pub fn is_java(&self) -> bool {
        *self == SortOrder::Java
    }

    /// How this order compares two client ids (or any two strings).
    pub fn compare_ids(self, a: &str, b: &str) -> Ordering {
        match self {
            SortOrder::Java => compare_utf16(a, b),
            SortOrder::Bytes => a.cmp(b),
        }
    }

    /// How this order compares two queues: topic, broker name, queue id.
    ///
    /// ```
    /// use rocketmq_rebalance::{MessageQueue, SortOrder};
    /// use std::cmp::Ordering;
    ///
    /// let bmp = MessageQueue::new("T", "\u{FF01}", 0);
    /// let astral = MessageQueue::new("T", "\u{1F600}", 0);
    /// assert_eq!(SortOrder::Java.compare_queues(&bmp, &astral), Ordering::Greater);
    /// assert_eq!(SortOrder::Bytes.compare_queues(&bmp, &astral), Ordering::Less);
    /// ```
    pub fn compare_queues(self, a: &MessageQueue, b: &MessageQueue) -> Ordering {
        self.compare_ids(&a.topic, &b.topic)
            .then_with(|| self.compare_ids(&a.broker_name, &b.broker_name))
            .then(a.queue_id.cmp(&b.queue_id))
    }

    /// Its name in the conformance format and on the command line:
    /// `java` or `bytes`.
    pub fn name(self) -> &'static str {
        match self {
            SortOrder::Java => "java",
            SortOrder::Bytes => "bytes",
        }
    }
}

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

/// The rebalance-level call of a client that sorts in `order`: copies of
/// both lists sorted so, then `strategy` for `current`'s share.
/// [`rebalance_allocate`] is this call in [`SortOrder::Java`].
///
/// ```
/// use rocketmq_rebalance::{rebalance_allocate_in, strategy::Averagely, MessageQueue, SortOrder};
///
/// let queues: Vec<_> = (0..2).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let ids = vec!["\u{E000}".to_string(), "\u{10000}".to_string()];
/// // A Java client with the first id and a Rust client with the second
/// // both find themselves second, and take the same queue.
/// let java = rebalance_allocate_in(SortOrder::Java, &Averagely, "g", &ids[0], &queues, &ids)?;
/// let rust = rebalance_allocate_in(SortOrder::Bytes, &Averagely, "g", &ids[1], &queues, &ids)?;
/// assert_eq!(java, rust);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
pub fn rebalance_allocate_in(
    order: SortOrder,
    strategy: &dyn AllocateStrategy,
    group: &str,
    current: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Vec<MessageQueue>, AllocateError> {
    let (queues, consumers) = sorted_in(order, queues, consumers);
    let mine = strategy.allocate(group, current, &queues, &consumers)?;
    Ok(mine.into_iter().cloned().collect())
}

/// Copies of both lists in Java's order.
fn sorted(queues: &[MessageQueue], consumers: &[String]) -> (Vec<MessageQueue>, Vec<String>) {
    sorted_in(SortOrder::Java, queues, consumers)
}

/// Copies of both lists in `order`.
fn sorted_in(
    order: SortOrder,
    queues: &[MessageQueue],
    consumers: &[String],
) -> (Vec<MessageQueue>, Vec<String>) {
    let mut queues = queues.to_vec();
    queues.sort_by(|a, b| order.compare_queues(a, b));
    let mut consumers = consumers.to_vec();
    consumers.sort_by(|a, b| order.compare_ids(a, b));
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
