use std::collections::HashMap;
use std::fmt::{self, Write};

use md5::{Digest, Md5};

use super::{check, check_group, share_by_first_position, AllocateStrategy};
use crate::{AllocateError, MessageQueue};

/// The hash that places client ids and queues on the ring: RocketMQ's
/// `ConsistentHashRouter.HashFunction`, whose result is a Java `long`.
pub trait HashFunction: fmt::Debug + Send + Sync {
    /// The ring position of `key`.
    fn hash(&self, key: &str) -> i64;
}

/// RocketMQ's default ring hash: the first four bytes of the MD5 digest of the
/// key's UTF-8 bytes, big-endian, as an unsigned 32-bit number.
///
/// ```
/// use rocketmq_rebalance::strategy::{HashFunction, Md5Hash};
///
/// // MD5("") = d41d8cd9...
/// assert_eq!(Md5Hash.hash(""), 0xd41d8cd9);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Md5Hash;

impl HashFunction for Md5Hash {
    fn hash(&self, key: &str) -> i64 {
        let digest = Md5::digest(key.as_bytes());
        i64::from(u32::from_be_bytes([
            digest[0], digest[1], digest[2], digest[3],
        ]))
    }
}

/// `AllocateMessageQueueConsistentHash` (`CONSISTENT_HASH`): each client id
/// gets `virtual_nodes` points on a hash ring (keys `id-0`, `id-1`, ...), and
/// each queue goes to the first point at or after the hash of its
/// `toString()`, wrapping around.
///
/// Java quirks kept: when two points hash alike the one inserted later wins;
/// a client id listed twice gets points `id-n..id-(2n-1)` the second time
/// (numbered after the points it already holds on the ring); with zero
/// virtual nodes the ring is empty and nobody gets anything.
///
/// ```
/// use rocketmq_rebalance::{strategy::ConsistentHash, AllocateStrategy, MessageQueue};
///
/// let queues: Vec<_> = ["broker-a", "broker-b"]
///     .iter()
///     .flat_map(|b| (0..4).map(move |i| MessageQueue::new("T", *b, i)))
///     .collect();
/// let consumers: Vec<String> = ["10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"].map(String::from).to_vec();
/// let ring = ConsistentHash::new(10);
/// let mine = ring.allocate("group", "10.0.0.1@1", &queues, &consumers)?;
/// assert_eq!(mine, [&queues[0], &queues[5]]); // a0 and b1
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug)]
pub struct ConsistentHash<H = Md5Hash> {
    virtual_nodes: usize,
    hash: H,
}

impl ConsistentHash {
    /// The Java client's default number of virtual nodes per consumer.
    pub const DEFAULT_VIRTUAL_NODES: usize = 10;

    /// A ring with `virtual_nodes` points per consumer, hashed with MD5.
    pub fn new(virtual_nodes: usize) -> Self {
        Self::with_hash(virtual_nodes, Md5Hash)
    }
}

impl<H: HashFunction> ConsistentHash<H> {
    /// A ring with `virtual_nodes` points per consumer and a custom hash.
    pub fn with_hash(virtual_nodes: usize, hash: H) -> Self {
        ConsistentHash {
            virtual_nodes,
            hash,
        }
    }

    /// The number of points per consumer.
    pub fn virtual_nodes(&self) -> usize {
        self.virtual_nodes
    }

    /// For every queue, the owner's position in `ids` (the interned client
    /// ids), or `None` when the ring is empty.
    fn route(&self, queues: &[MessageQueue], consumers: &[String]) -> Route {
        let mut ids: HashMap<&str, usize> = HashMap::with_capacity(consumers.len());
        let mut ring: HashMap<i64, usize> =
            HashMap::with_capacity(consumers.len().saturating_mul(self.virtual_nodes));
        // Points each id holds on the ring now: Java numbers a repeated id's
        // new points after the ones it still holds.
        let mut held: Vec<usize> = Vec::with_capacity(consumers.len());
        let mut key = String::new();
        let mut owner_of_position = Vec::with_capacity(consumers.len());
        for consumer in consumers {
            let id = *ids.entry(consumer.as_str()).or_insert_with(|| {
                held.push(0);
                held.len() - 1
            });
            owner_of_position.push(id);
            let existing = held[id];
            for replica in existing..existing.saturating_add(self.virtual_nodes) {
                key.clear();
                // Writing to a String cannot fail.
                let _ = write!(key, "{consumer}-{replica}");
                if let Some(previous) = ring.insert(self.hash.hash(&key), id) {
                    held[previous] -= 1;
                }
                held[id] += 1;
            }
        }
        let mut points: Vec<(i64, usize)> = ring.into_iter().collect();
        points.sort_unstable_by_key(|&(hash, _)| hash);
        let owners = queues
            .iter()
            .map(|queue| {
                key.clear();
                let _ = write!(key, "{queue}");
                let hash = self.hash.hash(&key);
                let at = points.partition_point(|&(point, _)| point < hash);
                points.get(at).or(points.first()).map(|&(_, id)| id)
            })
            .collect();
        Route {
            owners,
            owner_of_position,
        }
    }
}

/// Where a ring sends each queue.
struct Route {
    /// Per queue, the interned id of its owner.
    owners: Vec<Option<usize>>,
    /// Per consumer position, its interned id.
    owner_of_position: Vec<usize>,
}

impl<H: HashFunction> AllocateStrategy for ConsistentHash<H> {
    fn name(&self) -> &str {
        "CONSISTENT_HASH"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let Some(index) = check(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        let route = self.route(queues, consumers);
        let me = route.owner_of_position[index];
        Ok(queues
            .iter()
            .zip(&route.owners)
            .filter(|(_, owner)| **owner == Some(me))
            .map(|(queue, _)| queue)
            .collect())
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let first = check_group(queues, consumers)?;
        let route = self.route(queues, consumers);
        let mut by_id: Vec<Vec<&'a MessageQueue>> = vec![Vec::new(); consumers.len()];
        for (queue, owner) in queues.iter().zip(&route.owners) {
            if let Some(id) = owner {
                by_id[*id].push(queue);
            }
        }
        Ok(share_by_first_position(&first, |position| {
            std::mem::take(&mut by_id[route.owner_of_position[position]])
        }))
    }
}
