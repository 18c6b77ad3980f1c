use std::collections::BTreeSet;

use super::{check, check_group, share_by_first_position, AllocateStrategy};
use crate::java::split;
use crate::{AllocateError, MessageQueue};

/// `AllocateMessageQueueByMachineRoom` (`MACHINE_ROOM`): only queues whose
/// broker name reads `room@name` with `room` among the configured consumer
/// machine rooms are allocated, in blocks of `eligible / consumers`, the
/// remainder (the tail of the eligible list) dealt one each to the first
/// consumers.
///
/// The broker name is parsed with Java's `split("@")`: it must give exactly two
/// parts after trailing empty parts are dropped, so `"hz@"` is skipped while
/// `"hz@b@"` counts as room `hz`.
///
/// ```
/// use rocketmq_rebalance::{strategy::ByMachineRoom, AllocateStrategy, MessageQueue};
///
/// let queues = vec![
///     MessageQueue::new("T", "hz@broker-a", 0),
///     MessageQueue::new("T", "sh@broker-b", 0),
///     MessageQueue::new("T", "hz@broker-a", 1),
/// ];
/// let consumers: Vec<String> = ["c1", "c2"].map(String::from).to_vec();
/// let by_room = ByMachineRoom::new(["hz"]);
/// let shares = by_room.allocate_group("group", &queues, &consumers)?;
/// assert_eq!(shares, [vec![&queues[0]], vec![&queues[2]]]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByMachineRoom {
    consumer_rooms: BTreeSet<String>,
}

impl ByMachineRoom {
    /// A strategy for consumers deployed in `consumer_rooms` (Java's
    /// `consumeridcs`).
    pub fn new<I, S>(consumer_rooms: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ByMachineRoom {
            consumer_rooms: consumer_rooms.into_iter().map(Into::into).collect(),
        }
    }

    /// The configured consumer machine rooms.
    pub fn consumer_rooms(&self) -> &BTreeSet<String> {
        &self.consumer_rooms
    }

    fn eligible<'a>(&self, queues: &'a [MessageQueue]) -> Vec<&'a MessageQueue> {
        queues
            .iter()
            .filter(|q| match split(&q.broker_name, '@')[..] {
                [room, _] => self.consumer_rooms.contains(room),
                _ => false,
            })
            .collect()
    }

    fn share<'a>(
        index: usize,
        eligible: &[&'a MessageQueue],
        consumers: usize,
    ) -> Vec<&'a MessageQueue> {
        let per = eligible.len() / consumers;
        let rem = eligible.len() % consumers;
        let mut share = eligible[index * per..(index + 1) * per].to_vec();
        if rem > index {
            share.push(eligible[index + per * consumers]);
        }
        share
    }
}

impl AllocateStrategy for ByMachineRoom {
    fn name(&self) -> &str {
        "MACHINE_ROOM"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        Ok(match check(current, queues, consumers)? {
            Some(index) => Self::share(index, &self.eligible(queues), consumers.len()),
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
        let eligible = self.eligible(queues);
        Ok(share_by_first_position(&first, |index| {
            Self::share(index, &eligible, consumers.len())
        }))
    }
}
