use std::borrow::Cow;
use std::fmt;

use super::{check, check_group_then, AllocateStrategy};
use crate::java::{compare_utf16, split};
use crate::{AllocateError, MessageQueue};

/// Tells in which machine room a broker and a consumer are deployed: Java's
/// `AllocateMachineRoomNearby.MachineRoomResolver`. `None` or an empty room
/// fails the allocation, as Java's null or empty string does.
pub trait MachineRoomResolver: fmt::Debug + Send + Sync {
    /// The machine room of the broker that hosts `queue`.
    fn broker_room<'q>(&self, queue: &'q MessageQueue) -> Option<Cow<'q, str>>;
    /// The machine room of the consumer with client id `client_id`.
    fn consumer_room<'c>(&self, client_id: &'c str) -> Option<Cow<'c, str>>;
}

/// The resolver most deployments use: the room is the text before the first
/// separator, as Java's `name.split(separator)[0]`. A name made only of
/// separators has no room (Java throws there).
///
/// ```
/// use rocketmq_rebalance::strategy::{MachineRoomResolver, PrefixResolver};
///
/// let rooms = PrefixResolver::new('-');
/// assert_eq!(rooms.consumer_room("hz-10.0.0.1@1").as_deref(), Some("hz"));
/// assert_eq!(rooms.consumer_room("-x").as_deref(), Some(""));
/// assert_eq!(rooms.consumer_room("--"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixResolver {
    separator: char,
}

impl PrefixResolver {
    /// Rooms are the text before the first `separator`.
    pub fn new(separator: char) -> Self {
        PrefixResolver { separator }
    }

    fn room<'s>(&self, name: &'s str) -> Option<Cow<'s, str>> {
        split(name, self.separator)
            .first()
            .map(|room| Cow::Borrowed(*room))
    }
}

impl MachineRoomResolver for PrefixResolver {
    fn broker_room<'q>(&self, queue: &'q MessageQueue) -> Option<Cow<'q, str>> {
        self.room(&queue.broker_name)
    }

    fn consumer_room<'c>(&self, client_id: &'c str) -> Option<Cow<'c, str>> {
        self.room(client_id)
    }
}

/// `AllocateMachineRoomNearby` (`MACHINE_ROOM_NEARBY`): each consumer first
/// takes, through the wrapped strategy, its share of the queues in its own
/// machine room among the consumers of that room; the queues of rooms that
/// have no consumer are then shared by all consumers, room by room in Java
/// string order, through the same strategy.
///
/// ```
/// use rocketmq_rebalance::strategy::{Averagely, MachineRoomNearby, PrefixResolver};
/// use rocketmq_rebalance::{AllocateStrategy, MessageQueue};
///
/// let queues = vec![
///     MessageQueue::new("T", "hz-broker-a", 0),
///     MessageQueue::new("T", "hz-broker-a", 1),
///     MessageQueue::new("T", "sh-broker-b", 0),
///     MessageQueue::new("T", "bj-broker-c", 0),
/// ];
/// let consumers: Vec<String> = ["hz-c1", "sh-c2"].map(String::from).to_vec();
/// let nearby = MachineRoomNearby::new(Averagely, PrefixResolver::new('-'));
/// let shares = nearby.allocate_group("group", &queues, &consumers)?;
/// // hz-c1: both hz queues, then its half of room bj (nobody there).
/// assert_eq!(shares[0], [&queues[0], &queues[1], &queues[3]]);
/// assert_eq!(shares[1], [&queues[2]]);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug)]
pub struct MachineRoomNearby<S, R> {
    inner: S,
    resolver: R,
    name: String,
}

impl<S: AllocateStrategy, R: MachineRoomResolver> MachineRoomNearby<S, R> {
    /// Wraps `inner`, placing brokers and consumers in rooms with `resolver`.
    pub fn new(inner: S, resolver: R) -> Self {
        let name = format!("MACHINE_ROOM_NEARBY-{}", inner.name());
        MachineRoomNearby {
            inner,
            resolver,
            name,
        }
    }

    /// Runs the inner strategy for consumer `current` on the queues at
    /// `room` (positions into `queues`) and maps its answer back to `queues`.
    fn allocate_room<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        room: &[usize],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let copy: Vec<MessageQueue> = room.iter().map(|&i| queues[i].clone()).collect();
        let chosen = self.inner.allocate(group, current, &copy, consumers)?;
        Ok(back_to_caller(&chosen, &copy, room, queues))
    }
}

/// Maps queues that an inner strategy returned from `copy` (the queues at
/// `room` of `queues`) back to `queues`. A queue that is not from `copy` (an
/// inner strategy that answers from its own configuration) is matched by value
/// in `queues`, and dropped when absent: it is not the caller's to lend.
fn back_to_caller<'a>(
    chosen: &[&MessageQueue],
    copy: &[MessageQueue],
    room: &[usize],
    queues: &'a [MessageQueue],
) -> Vec<&'a MessageQueue> {
    chosen
        .iter()
        .filter_map(|&queue| match position_in(copy, queue) {
            Some(offset) => Some(&queues[room[offset]]),
            None => queues.iter().find(|q| *q == queue),
        })
        .collect()
}

/// The position of `element` in `slice` when it is one of its elements (by
/// address, not by value).
fn position_in<T>(slice: &[T], element: &T) -> Option<usize> {
    let size = std::mem::size_of::<T>().max(1);
    let offset = (element as *const T as usize).checked_sub(slice.as_ptr() as usize)?;
    (offset % size == 0 && offset / size < slice.len()).then_some(offset / size)
}

/// Positions of `names`, grouped by room in Java's order of room names, each
/// group in input order. Fails at the first name (in input order) without a
/// room.
fn group_by_room<'n, I>(
    rooms: I,
    missing: impl FnOnce(usize) -> AllocateError,
) -> Result<Vec<RoomGroup<'n>>, AllocateError>
where
    I: Iterator<Item = Option<Cow<'n, str>>>,
{
    let mut placed: Vec<(Cow<'n, str>, usize)> = Vec::new();
    for (position, room) in rooms.enumerate() {
        match room {
            Some(room) if !room.is_empty() => placed.push((room, position)),
            _ => return Err(missing(position)),
        }
    }
    placed.sort_by(|(a, i), (b, j)| compare_utf16(a, b).then(i.cmp(j)));
    let mut grouped: Vec<RoomGroup<'n>> = Vec::new();
    for (room, position) in placed {
        match grouped.last_mut() {
            Some((last, positions)) if *last == room => positions.push(position),
            _ => grouped.push((room, vec![position])),
        }
    }
    Ok(grouped)
}

/// Finds `room` in a list from [`group_by_room`].
fn find_room<'g>(grouped: &'g [RoomGroup<'_>], room: &str) -> Option<&'g [usize]> {
    grouped
        .binary_search_by(|(r, _)| compare_utf16(r, room))
        .ok()
        .map(|i| grouped[i].1.as_slice())
}

/// The rooms of all queues and all consumers.
struct Rooms<'q, 'c> {
    queues: Vec<RoomGroup<'q>>,
    consumers: Vec<RoomGroup<'c>>,
}

/// A room's name and the positions (of queues or of consumers) in it.
type RoomGroup<'n> = (Cow<'n, str>, Vec<usize>);

impl<S: AllocateStrategy, R: MachineRoomResolver> MachineRoomNearby<S, R> {
    fn rooms<'q, 'c>(
        &self,
        queues: &'q [MessageQueue],
        consumers: &'c [String],
    ) -> Result<Rooms<'q, 'c>, AllocateError> {
        Ok(Rooms {
            queues: group_by_room(queues.iter().map(|q| self.resolver.broker_room(q)), |i| {
                AllocateError::NoBrokerMachineRoom(queues[i].clone())
            })?,
            consumers: group_by_room(
                consumers.iter().map(|c| self.resolver.consumer_room(c)),
                |i| AllocateError::NoConsumerMachineRoom(consumers[i].clone()),
            )?,
        })
    }
}

impl<S: AllocateStrategy, R: MachineRoomResolver> AllocateStrategy for MachineRoomNearby<S, R> {
    fn name(&self) -> &str {
        &self.name
    }

    fn allocate<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let Some(index) = check(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        let rooms = self.rooms(queues, consumers)?;
        // A member's room was resolved above.
        let Some((my_room, _)) = rooms
            .consumers
            .iter()
            .find(|(_, positions)| positions.contains(&index))
        else {
            return Ok(Vec::new());
        };
        let mut mine = Vec::new();
        if let (Some(room_queues), Some(room_members)) = (
            find_room(&rooms.queues, my_room),
            find_room(&rooms.consumers, my_room),
        ) {
            let members: Vec<String> = room_members.iter().map(|&i| consumers[i].clone()).collect();
            mine.extend(self.allocate_room(group, current, queues, room_queues, &members)?);
        }
        for (room, room_queues) in &rooms.queues {
            if find_room(&rooms.consumers, room).is_none() {
                mine.extend(self.allocate_room(group, current, queues, room_queues, consumers)?);
            }
        }
        Ok(mine)
    }

    fn allocate_group<'a>(
        &'a self,
        group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let mut rooms = None;
        check_group_then(queues, consumers, || {
            rooms = Some(self.rooms(queues, consumers)?);
            Ok(())
        })?;
        let Some(rooms) = rooms else {
            return Ok(Vec::new());
        };
        let mut shares: Vec<Vec<&'a MessageQueue>> = vec![Vec::new(); consumers.len()];
        for (room, room_members) in &rooms.consumers {
            let Some(room_queues) = find_room(&rooms.queues, room) else {
                continue;
            };
            let members: Vec<String> = room_members.iter().map(|&i| consumers[i].clone()).collect();
            let copy: Vec<MessageQueue> = room_queues.iter().map(|&i| queues[i].clone()).collect();
            let room_shares = self.inner.allocate_group(group, &copy, &members)?;
            for (&position, share) in room_members.iter().zip(&room_shares) {
                shares[position].extend(back_to_caller(share, &copy, room_queues, queues));
            }
        }
        for (room, room_queues) in &rooms.queues {
            if find_room(&rooms.consumers, room).is_some() {
                continue;
            }
            let copy: Vec<MessageQueue> = room_queues.iter().map(|&i| queues[i].clone()).collect();
            let room_shares = self.inner.allocate_group(group, &copy, consumers)?;
            for (share, room_share) in shares.iter_mut().zip(&room_shares) {
                share.extend(back_to_caller(room_share, &copy, room_queues, queues));
            }
        }
        Ok(shares)
    }
}
