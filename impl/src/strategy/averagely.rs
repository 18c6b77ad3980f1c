use std::ops::Range;

use super::{check, check_group, share_by_first_position, AllocateStrategy};
use crate::{AllocateError, MessageQueue};

/// `AllocateMessageQueueAveragely` (`AVG`): consecutive blocks, the first
/// `queues % consumers` consumers taking one queue more.
///
/// ```
/// use rocketmq_rebalance::{strategy::Averagely, AllocateStrategy, MessageQueue};
///
/// let queues: Vec<_> = (0..8).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let consumers: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
/// let shares = Averagely.allocate_group("group", &queues, &consumers)?;
/// let ids: Vec<Vec<i32>> = shares.iter().map(|s| s.iter().map(|q| q.queue_id).collect()).collect();
/// assert_eq!(ids, [vec![0, 1, 2], vec![3, 4, 5], vec![6, 7]]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Averagely;

impl Averagely {
    /// The block of the consumer at `index`, exactly as the Java arithmetic.
    fn block(index: usize, queues: usize, consumers: usize) -> Range<usize> {
        let rem = queues % consumers;
        let takes_extra = rem > 0 && index < rem;
        let size = if queues <= consumers {
            1
        } else if takes_extra {
            queues / consumers + 1
        } else {
            queues / consumers
        };
        let start = if takes_extra {
            index * size
        } else {
            index * size + rem
        };
        start.min(queues)..(start + size).min(queues)
    }
}

impl AllocateStrategy for Averagely {
    fn name(&self) -> &str {
        "AVG"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        Ok(match check(current, queues, consumers)? {
            Some(index) => queues[Self::block(index, queues.len(), consumers.len())]
                .iter()
                .collect(),
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
            queues[Self::block(index, queues.len(), consumers.len())]
                .iter()
                .collect()
        }))
    }
}
