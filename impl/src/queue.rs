//! [`MessageQueue`], the unit that strategies allocate.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::java::compare_utf16;

/// One queue of a topic on one broker, as RocketMQ's `MessageQueue`.
///
/// Ordering is Java's `MessageQueue.compareTo`: topic, then broker name (both
/// as Java compares strings, by UTF-16 code units), then queue id. `Display`
/// is Java's `toString`, the text that consistent hashing hashes.
///
/// In JSON the broker name is the field `broker`, as in the conformance
/// cases.
///
/// ```
/// use rocketmq_rebalance::MessageQueue;
///
/// let a0 = MessageQueue::new("TopicTest", "broker-a", 0);
/// let b0 = MessageQueue::new("TopicTest", "broker-b", 0);
/// assert!(a0 < b0);
/// assert_eq!(
///     a0.to_string(),
///     "MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=0]"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MessageQueue {
    /// The topic the queue belongs to.
    pub topic: String,
    /// The broker that hosts the queue (`brokerName`).
    #[serde(rename = "broker")]
    pub broker_name: String,
    /// The queue's index on that broker (`queueId`).
    pub queue_id: i32,
}

impl MessageQueue {
    /// A queue of `topic` on `broker_name` with id `queue_id`.
    pub fn new(topic: impl Into<String>, broker_name: impl Into<String>, queue_id: i32) -> Self {
        MessageQueue {
            topic: topic.into(),
            broker_name: broker_name.into(),
            queue_id,
        }
    }
}

impl Ord for MessageQueue {
    /// Java's order, with queue ids compared as numbers. Up to 5.3.x Java
    /// compares them by `this.queueId - o.queueId`, which overflows for ids
    /// more than 2^31 apart and is then no order at all; RocketMQ's
    /// development line compares them exactly since August 2026
    /// (apache/rocketmq#10884). The crate follows the exact comparison: on
    /// the queue ids RocketMQ hands out (small and non-negative) all of
    /// them agree.
    fn cmp(&self, other: &Self) -> Ordering {
        compare_utf16(&self.topic, &other.topic)
            .then_with(|| compare_utf16(&self.broker_name, &other.broker_name))
            .then(self.queue_id.cmp(&other.queue_id))
    }
}

impl PartialOrd for MessageQueue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for MessageQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MessageQueue [topic={}, brokerName={}, queueId={}]",
            self.topic, self.broker_name, self.queue_id
        )
    }
}
