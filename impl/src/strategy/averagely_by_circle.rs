use super::{check, check_group, share_by_first_position, AllocateStrategy};
use crate::{AllocateError, MessageQueue};

/// `AllocateMessageQueueAveragelyByCircle` (`AVG_BY_CIRCLE`): queues dealt out
/// round-robin, consumer `i` taking queues `i`, `i + n`, `i + 2n`, ...
///
/// ```
/// use rocketmq_rebalance::{strategy::AveragelyByCircle, AllocateStrategy, MessageQueue};
///
/// let queues: Vec<_> = (0..8).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let consumers: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
/// let mine = AveragelyByCircle.allocate("group", "c2", &queues, &consumers)?;
/// let ids: Vec<i32> = mine.iter().map(|q| q.queue_id).collect();
/// assert_eq!(ids, [1, 4, 7]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AveragelyByCircle;

impl AveragelyByCircle {
    fn deal(index: usize, queues: &[MessageQueue], consumers: usize) -> Vec<&MessageQueue> {
        queues.iter().skip(index).step_by(consumers).collect()
    }
}

impl AllocateStrategy for AveragelyByCircle {
    fn name(&self) -> &str {
        "AVG_BY_CIRCLE"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        Ok(match check(current, queues, consumers)? {
            Some(index) => Self::deal(index, queues, consumers.len()),
            None => Vec::new(),
        })
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let first = check_group(queues, consumers)?;
        Ok(share_by_first_position(&first, |index| {
            Self::deal(index, queues, consumers.len())
        }))
    }
}
