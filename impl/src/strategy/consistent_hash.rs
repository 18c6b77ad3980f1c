use std::collections::HashMap;
use std::fmt;

use md5::{Digest, Md5};

use super::{
    check, check_group, group_by_owner, owned_by, share_by_first_position, AllocateStrategy,
};
use crate::{AllocateError, MessageQueue};

/// The hash that places client ids and queues on the ring: RocketMQ's
/// `ConsistentHashRouter.HashFunction`, whose result is a Java `long`.
pub trait HashFunction: fmt::Debug + Send + Sync {
    /// The ring position of `key`.
    fn hash(&self, key: &str) -> i64;

    /// The ring position of a key given as its UTF-8 bytes. The ring builds
    /// its keys as bytes; override this when the hash can take them directly
    /// (the provided method re-validates them as UTF-8).
    fn hash_bytes(&self, key: &[u8]) -> i64 {
        self.hash(&String::from_utf8_lossy(key))
    }
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

    /// For every queue, the owner's interned id, or `None` when the ring is
    /// empty.
    fn route(&self, queues: &[MessageQueue], consumers: &[String]) -> Route {
        let (owner_of_position, points) = self.ring(consumers);
        let hashes: Vec<i64> = points.iter().map(|&(hash, _)| hash).collect();
        let mut key = Vec::new();
        let owners = queues
            .iter()
            .map(|queue| {
                queue_key(queue, &mut key);
                let hash = self.hash.hash_bytes(&key);
                let at = hashes.partition_point(|&point| point < hash);
                points.get(at).or(points.first()).map(|&(_, id)| id)
            })
            .collect();
        Route {
            owners,
            owner_of_position,
        }
    }

    /// Interns the client ids (per position, its id) and builds the ring:
    /// points sorted by hash, each with the id that owns it.
    fn ring(&self, consumers: &[String]) -> (Vec<usize>, Vec<(i64, usize)>) {
        let (owner_of_position, distinct) = intern(consumers);
        let mut key = Vec::new();
        let mut point = |consumer: &str, replica: usize| {
            key.clear();
            key.extend_from_slice(consumer.as_bytes());
            key.push(b'-');
            push_decimal(&mut key, replica as u64);
            self.hash.hash_bytes(&key)
        };
        let mut points: Vec<(i64, usize)>;
        if distinct == consumers.len() {
            // Distinct ids: every id numbers its points from 0, and among
            // equal hashes the point inserted last wins.
            // A capacity hint only: a huge virtual node count must not make
            // the reservation itself fail.
            let mut all: Vec<(i64, usize, usize)> = Vec::with_capacity(
                consumers
                    .len()
                    .saturating_mul(self.virtual_nodes)
                    .min(1 << 24),
            );
            for (id, consumer) in consumers.iter().enumerate() {
                for replica in 0..self.virtual_nodes {
                    all.push((point(consumer, replica), all.len(), id));
                }
            }
            all.sort_unstable_by_key(|&(hash, order, _)| (hash, order));
            points = Vec::with_capacity(all.len());
            for (hash, _, id) in all {
                match points.last_mut() {
                    Some(last) if last.0 == hash => last.1 = id,
                    _ => points.push((hash, id)),
                }
            }
        } else {
            // A repeated id numbers its new points after those it still holds
            // on the ring, which collisions may have taken: replay Java's
            // insertions exactly.
            let mut ring: HashMap<i64, usize> = HashMap::new();
            let mut held: Vec<usize> = vec![0; distinct];
            for (consumer, &id) in consumers.iter().zip(&owner_of_position) {
                let existing = held[id];
                for replica in existing..existing.saturating_add(self.virtual_nodes) {
                    if let Some(previous) = ring.insert(point(consumer, replica), id) {
                        held[previous] -= 1;
                    }
                    held[id] += 1;
                }
            }
            points = ring.into_iter().collect();
            points.sort_unstable_by_key(|&(hash, _)| hash);
        }
        (owner_of_position, points)
    }
}

/// Per consumer position, the interned id of its client id (ids numbered
/// in order of first occurrence), and the number of distinct ids.
pub(super) fn intern(consumers: &[String]) -> (Vec<usize>, usize) {
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(consumers.len());
    let owner_of_position = consumers
        .iter()
        .map(|c| {
            let next = ids.len();
            *ids.entry(c.as_str()).or_insert(next)
        })
        .collect();
    (owner_of_position, ids.len())
}

/// Java's `MessageQueue.toString()` (and Go's `MessageQueue.String()`, the
/// same text), written into `key` without the formatting machinery (this
/// runs once per queue per allocation).
pub(super) fn queue_key(queue: &MessageQueue, key: &mut Vec<u8>) {
    key.clear();
    key.extend_from_slice(b"MessageQueue [topic=");
    key.extend_from_slice(queue.topic.as_bytes());
    key.extend_from_slice(b", brokerName=");
    key.extend_from_slice(queue.broker_name.as_bytes());
    key.extend_from_slice(b", queueId=");
    if queue.queue_id < 0 {
        key.push(b'-');
    }
    push_decimal(key, u64::from(queue.queue_id.unsigned_abs()));
    key.push(b']');
}

/// The decimal digits of `n`, appended to `out`.
pub(super) fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Where a ring sends each queue.
pub(super) struct Route {
    /// Per queue, the interned id of its owner.
    pub(super) owners: Vec<Option<usize>>,
    /// Per consumer position, its interned id.
    pub(super) owner_of_position: Vec<usize>,
}

impl Route {
    /// The queues of the consumer at position `index`, in queue order.
    pub(super) fn share(self, queues: &[MessageQueue], index: usize) -> Vec<&MessageQueue> {
        let me = self.owner_of_position[index];
        owned_by(queues, self.owners, me)
    }

    /// Every consumer's queues; `first` is, per position, the position of
    /// that id's first occurrence.
    pub(super) fn shares<'a>(
        self,
        queues: &'a [MessageQueue],
        first: &[usize],
    ) -> Vec<Vec<&'a MessageQueue>> {
        let mut by_id = group_by_owner(queues, self.owners, first.len());
        let owner_of_position = self.owner_of_position;
        share_by_first_position(first, |position| {
            std::mem::take(&mut by_id[owner_of_position[position]])
        })
    }
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
        Ok(self.route(queues, consumers).share(queues, index))
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let first = check_group(queues, consumers)?;
        Ok(self.route(queues, consumers).shares(queues, &first))
    }
}
