//! The allocation strategies and the trait they share.
//!
//! Every strategy answers RocketMQ's question "which of these queues are
//! mine?" from the topic's queue list and the group's client-id list, with the
//! results, result order and failures of the Java client's class of the same
//! name.

use std::collections::HashMap;

use crate::{AllocateError, MessageQueue, UnknownStrategy};

mod averagely;
mod averagely_by_circle;
mod by_config;
mod by_machine_room;
mod consistent_hash;
mod go_consistent_hash;
mod machine_room_nearby;
mod spec;
mod sticky;

pub use averagely::Averagely;
pub use averagely_by_circle::AveragelyByCircle;
pub use by_config::ByConfig;
pub use by_machine_room::ByMachineRoom;
pub use consistent_hash::{ConsistentHash, HashFunction, Md5Hash};
pub use go_consistent_hash::GoConsistentHash;
pub use machine_room_nearby::{MachineRoomNearby, MachineRoomResolver, PrefixResolver};
pub use spec::{ParameterError, StrategySpec};
pub use sticky::Sticky;

/// A queue allocation strategy: RocketMQ's `AllocateMessageQueueStrategy`.
///
/// Implementations never sort: they work on the lists exactly as given, as
/// the Java interface does. [`rebalance_allocate`](crate::rebalance_allocate)
/// sorts first, as the client's rebalance does.
///
/// ```
/// use rocketmq_rebalance::{strategy_from_name, MessageQueue};
///
/// let queues: Vec<_> = (0..4).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let consumers = ["c1".to_string(), "c2".to_string()];
/// let strategy = strategy_from_name("AVG")?;
/// let mine = strategy.allocate("group", "c2", &queues, &consumers)?;
/// assert_eq!(mine, [&queues[2], &queues[3]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait AllocateStrategy: std::fmt::Debug + Send + Sync {
    /// The strategy's name, as the Java class's `getName()`.
    fn name(&self) -> &str;

    /// The queues that consumer `current` of `group` takes, in the order the
    /// Java strategy returns them.
    ///
    /// Fails as Java does: on an empty `current`, then on empty `queues`,
    /// then on empty `consumers` (strategies that ignore their input, such as
    /// [`ByConfig`], never fail). A `current` that is not among `consumers`
    /// gets nothing. A client id listed twice is found at its first position.
    fn allocate<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError>;

    /// Every consumer's share at once: `result[i]` equals
    /// `allocate(group, &consumers[i], queues, consumers)`.
    ///
    /// Fails when any of those calls would fail, with the error of the first
    /// consumer whose call fails; an empty `consumers` gives an empty result.
    /// The provided implementation calls [`allocate`](Self::allocate) once per
    /// consumer; the strategies of this crate override it with one pass.
    fn allocate_group<'a>(
        &'a self,
        group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        consumers
            .iter()
            .map(|current| self.allocate(group, current, queues, consumers))
            .collect()
    }
}

/// The stable names that [`strategy_from_name`] accepts.
pub const STRATEGY_NAMES: &[&str] = &[
    "AVG",
    "AVG_BY_CIRCLE",
    "CONSISTENT_HASH",
    "CONFIG",
    "MACHINE_ROOM",
    "MACHINE_ROOM_NEARBY",
    "STICKY",
];

/// The strategy with this stable name, with its default configuration:
///
/// | name | strategy |
/// |---|---|
/// | `AVG` | [`Averagely`] |
/// | `AVG_BY_CIRCLE` | [`AveragelyByCircle`] |
/// | `CONSISTENT_HASH` | [`ConsistentHash`] with 10 virtual nodes and MD5 |
/// | `CONFIG` | [`ByConfig`] with no queues |
/// | `MACHINE_ROOM` | [`ByMachineRoom`] with no consumer rooms |
/// | `MACHINE_ROOM_NEARBY` | [`MachineRoomNearby`] over `AVG`, rooms before the first `-` |
/// | `MACHINE_ROOM_NEARBY-X` | the same over strategy `X` |
/// | `STICKY` | [`Sticky`], exact balance (not in RocketMQ) |
/// | `STICKY-k` | [`Sticky::with_slack`]`(k)`, loads within a window of `k >= 2` |
///
/// ```
/// use rocketmq_rebalance::strategy_from_name;
///
/// assert_eq!(strategy_from_name("AVG_BY_CIRCLE")?.name(), "AVG_BY_CIRCLE");
/// assert_eq!(
///     strategy_from_name("MACHINE_ROOM_NEARBY")?.name(),
///     "MACHINE_ROOM_NEARBY-AVG"
/// );
/// assert!(strategy_from_name("avg").is_err());
/// # Ok::<(), rocketmq_rebalance::UnknownStrategy>(())
/// ```
pub fn strategy_from_name(name: &str) -> Result<Box<dyn AllocateStrategy>, UnknownStrategy> {
    Ok(name.parse::<StrategySpec>()?.build())
}

impl<S: AllocateStrategy + ?Sized> AllocateStrategy for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn allocate<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        (**self).allocate(group, current, queues, consumers)
    }

    fn allocate_group<'a>(
        &'a self,
        group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        (**self).allocate_group(group, queues, consumers)
    }
}

/// The checks that open every Java strategy (`AbstractAllocateMessageQueueStrategy.check`):
/// `Ok(Some(index))` of the first occurrence of `current`, `Ok(None)` when it is
/// not a member (the Java strategy then returns nothing).
pub fn check(
    current: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Option<usize>, AllocateError> {
    check_lists(current, queues, consumers)?;
    Ok(index_of(consumers, current))
}

/// The list checks of [`check`], without the membership search.
fn check_lists(
    current: &str,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<(), AllocateError> {
    if current.is_empty() {
        Err(AllocateError::EmptyCurrentId)
    } else if queues.is_empty() {
        Err(AllocateError::EmptyQueues)
    } else if consumers.is_empty() {
        Err(AllocateError::EmptyConsumers)
    } else {
        Ok(())
    }
}

/// Java's `List.indexOf`: the first position of `current`.
///
/// This scan is the whole cost of a per-consumer call of the averaging
/// strategies, so it rejects on the length and then on the last eight bytes
/// (client ids differ most at the end, in the pid) before comparing whole ids.
fn index_of(consumers: &[String], current: &str) -> Option<usize> {
    let target = current.as_bytes();
    let Some(tail) = last_eight_bytes(target) else {
        return consumers.iter().position(|c| c == current);
    };
    consumers.iter().position(|c| {
        let c = c.as_bytes();
        c.len() == target.len() && last_eight_bytes(c) == Some(tail) && c == target
    })
}

/// The last eight bytes of an id as one word, if it has eight.
fn last_eight_bytes(id: &[u8]) -> Option<u64> {
    let start = id.len().checked_sub(8)?;
    Some(u64::from_ne_bytes(id[start..].try_into().ok()?))
}

/// The checks of [`check`] for a whole group: the error of the first consumer
/// whose call would fail, or, for each position, the position of the first
/// occurrence of that id (Java's `indexOf`).
fn check_group(queues: &[MessageQueue], consumers: &[String]) -> Result<Vec<usize>, AllocateError> {
    check_group_then(queues, consumers, || Ok(()))
}

/// [`check_group`] for a strategy whose calls run `validate` (checks that do
/// not depend on the caller) after the list checks: the first consumer's call
/// fails there before any later consumer's call fails on its empty id.
fn check_group_then(
    queues: &[MessageQueue],
    consumers: &[String],
    validate: impl FnOnce() -> Result<(), AllocateError>,
) -> Result<Vec<usize>, AllocateError> {
    if let Some(first) = consumers.first() {
        check_lists(first, queues, consumers)?;
        validate()?;
        if consumers.iter().any(|c| c.is_empty()) {
            return Err(AllocateError::EmptyCurrentId);
        }
    }
    Ok(first_positions(consumers))
}

/// For every position, the position where that id first occurs.
fn first_positions(consumers: &[String]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(consumers.len());
    consumers
        .iter()
        .enumerate()
        .map(|(i, c)| *first.entry(c.as_str()).or_insert(i))
        .collect()
}

/// The queues whose owner (one entry per queue; `None`: nobody) is `me`, in
/// queue order: a per-consumer answer of a strategy that routes every queue.
fn owned_by(
    queues: &[MessageQueue],
    owners: impl IntoIterator<Item = Option<usize>>,
    me: usize,
) -> Vec<&MessageQueue> {
    queues
        .iter()
        .zip(owners)
        .filter(|(_, owner)| *owner == Some(me))
        .map(|(queue, _)| queue)
        .collect()
}

/// The queues grouped by owner (one entry per queue; `None` or an owner
/// beyond `slots`: nobody) into `slots` shares, each in queue order.
fn group_by_owner<'a>(
    queues: &'a [MessageQueue],
    owners: impl IntoIterator<Item = Option<usize>>,
    slots: usize,
) -> Vec<Vec<&'a MessageQueue>> {
    let mut shares: Vec<Vec<&'a MessageQueue>> = vec![Vec::new(); slots];
    for (queue, owner) in queues.iter().zip(owners) {
        if let Some(share) = owner.and_then(|o| shares.get_mut(o)) {
            share.push(queue);
        }
    }
    shares
}

/// Copies the share of each first occurrence to later duplicates of the same id.
fn share_by_first_position<'a>(
    first: &[usize],
    mut share_of: impl FnMut(usize) -> Vec<&'a MessageQueue>,
) -> Vec<Vec<&'a MessageQueue>> {
    let mut shares: Vec<Vec<&'a MessageQueue>> = Vec::with_capacity(first.len());
    for (i, &f) in first.iter().enumerate() {
        let share = if f == i {
            share_of(i)
        } else {
            shares[f].clone()
        };
        shares.push(share);
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::index_of;

    #[test]
    fn index_of_is_java_index_of() {
        let ids: Vec<String> = [
            "a",
            "10.0.0.1@10001",
            "10.0.9.1@10001",
            "b",
            "10.0.9.1@10001",
            "ä@1",
            "😀😀",
        ]
        .map(String::from)
        .to_vec();
        for (i, id) in ids.iter().enumerate() {
            let java = ids.iter().position(|c| c == id);
            assert_eq!(index_of(&ids, id), java, "{id} at {i}");
        }
        // Same length and the same last eight bytes, different id.
        assert_eq!(index_of(&ids, "10.0.7.1@10001"), None);
        assert_eq!(index_of(&ids, "1@10001"), None);
        assert_eq!(index_of(&ids, "c"), None);
        assert_eq!(index_of(&ids, "😀"), None);
    }
}
