use super::AllocateStrategy;
use crate::{AllocateError, MessageQueue};

/// `AllocateMessageQueueByConfig` (`CONFIG`): every consumer takes the queues
/// it was configured with, whatever the topic's queues and the group's
/// members are. Like the Java class it checks nothing and never fails.
///
/// ```
/// use rocketmq_rebalance::{strategy::ByConfig, AllocateStrategy, MessageQueue};
///
/// let fixed = ByConfig::new(vec![MessageQueue::new("T", "broker-a", 3)]);
/// let mine = fixed.allocate("group", "c1", &[], &[])?;
/// assert_eq!(mine, [&MessageQueue::new("T", "broker-a", 3)]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByConfig {
    queues: Vec<MessageQueue>,
}

impl ByConfig {
    /// A strategy that always answers `queues`.
    pub fn new(queues: Vec<MessageQueue>) -> Self {
        ByConfig { queues }
    }

    /// The configured queues.
    pub fn queues(&self) -> &[MessageQueue] {
        &self.queues
    }
}

impl AllocateStrategy for ByConfig {
    fn name(&self) -> &str {
        "CONFIG"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        _current: &str,
        _queues: &'a [MessageQueue],
        _consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        Ok(self.queues.iter().collect())
    }
}
