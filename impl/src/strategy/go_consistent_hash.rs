use super::consistent_hash::{intern, push_decimal, queue_key, Route};
use super::{check, check_group_then, AllocateStrategy};
use crate::{AllocateError, MessageQueue};

/// The Go client's `CONSISTENT_HASH`: `AllocateByConsistentHash` of
/// `rocketmq-client-go` v2, a ring of `stathat.com/c/consistent` v1.0.0.
/// It is not Java's ring ([`ConsistentHash`](super::ConsistentHash)), so
/// a group that mixes Java and Go consumers on `CONSISTENT_HASH` splits its
/// queues two ways.
///
/// Each client id puts `virtual_nodes` points on the ring, at the CRC-32
/// (IEEE) of the keys `0id`, `1id`, ... (the replica number in decimal,
/// then the id: `"3" + "10.0.0.1@1"` is `310.0.0.1@1`). A queue goes to
/// the first point *after* the CRC-32 of its `String()`
/// (`MessageQueue [topic=T, brokerName=broker-a, queueId=0]`, the text
/// Java hashes too), wrapping around to the first point; a queue that
/// hashes exactly onto a point skips it, where Java's ring takes it.
///
/// Go quirks kept bit for bit: when two points share a position, the one
/// inserted later wins (the ring is a map from position to id, filled in
/// list order), so on unsorted lists the answer can depend on the order;
/// a client id listed twice inserts the same points again, taking back
/// those another id took in between; and keys of different ids can be the
/// same text (`"11" + "1.0.0.1@1"` and `"1" + "11.0.0.1@1"` are both
/// `111.0.0.1@1`), so with 12 virtual nodes or more those two ids always
/// collide.
///
/// Where Go's function returns nothing for an empty `current`, queue list
/// or consumer list, this returns the errors every strategy of the crate
/// returns there (the Go consumer then releases the topic's queues, where
/// the Java consumer, whose strategy throws, keeps them). With zero
/// virtual nodes the Go ring divides by zero when the first id is added
/// and the call panics, for every member (an id that is not a member gets
/// nothing first): this returns [`AllocateError::NoVirtualNodes`] there.
/// Go's count is an `int`, and a negative one gives an empty ring on which
/// nobody gets anything; this count is a `usize`.
///
/// The name is `CONSISTENT_HASH`, the strategy the Go client runs it for;
/// [`strategy_from_name`](crate::strategy_from_name) builds Java's ring
/// under that name, and this type only by its constructor.
///
/// ```
/// use rocketmq_rebalance::strategy::{ConsistentHash, GoConsistentHash};
/// use rocketmq_rebalance::{rebalance_allocate_in, AllocateStrategy, MessageQueue, SortOrder};
///
/// let queues: Vec<_> = ["broker-a", "broker-b"]
///     .iter()
///     .flat_map(|b| (0..4).map(move |i| MessageQueue::new("T", *b, i)))
///     .collect();
/// let consumers: Vec<String> = ["10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"].map(String::from).to_vec();
/// let go = GoConsistentHash::new(10);
/// let mine = go.allocate("group", "10.0.0.2@1", &queues, &consumers)?;
/// assert_eq!(mine, [&queues[0], &queues[1], &queues[3], &queues[6]]); // a0 a1 a3 b2
/// // Java's ring gives the same consumer a1 b0 b2 b3.
/// let java_ring = ConsistentHash::new(10);
/// let java = java_ring.allocate("group", "10.0.0.2@1", &queues, &consumers)?;
/// assert_eq!(java, [&queues[1], &queues[4], &queues[6], &queues[7]]);
/// // The Go consumer sorts both lists by bytes first, then allocates.
/// let sorted = rebalance_allocate_in(SortOrder::Bytes, &go, "group", "10.0.0.1@1", &queues, &consumers)?;
/// assert_eq!(sorted, [queues[7].clone()]); // b3
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoConsistentHash {
    virtual_nodes: usize,
}

impl GoConsistentHash {
    /// A ring with `virtual_nodes` points per consumer (Go's
    /// `AllocateByConsistentHash(virtualNodeCnt)`, which has no default).
    pub fn new(virtual_nodes: usize) -> Self {
        GoConsistentHash { virtual_nodes }
    }

    /// The number of points per consumer.
    pub fn virtual_nodes(&self) -> usize {
        self.virtual_nodes
    }

    /// Where Go panics: a ring without points.
    fn has_points(&self) -> Result<(), AllocateError> {
        if self.virtual_nodes == 0 {
            Err(AllocateError::NoVirtualNodes)
        } else {
            Ok(())
        }
    }

    /// For every queue, the owner's interned id.
    fn route(&self, queues: &[MessageQueue], consumers: &[String]) -> Route {
        let (owner_of_position, points) = self.ring(consumers);
        let mut key = Vec::new();
        let owners = queues
            .iter()
            .map(|queue| {
                queue_key(queue, &mut key);
                let hash = crc32(&[&key]);
                let after = points.partition_point(|&(point, _)| point <= hash);
                points.get(after).or(points.first()).map(|&(_, id)| id)
            })
            .collect();
        Route {
            owners,
            owner_of_position,
        }
    }

    /// Interns the client ids (per position, its id) and builds the ring:
    /// points sorted by position, each with the id that holds it.
    fn ring(&self, consumers: &[String]) -> (Vec<usize>, Vec<(u32, usize)>) {
        let (owner_of_position, distinct) = intern(consumers);
        // An id listed twice inserts the same points again, so of all its
        // insertions only the last counts: among the ids with a point on
        // one position, the one whose last insertion is latest holds it.
        let mut last = vec![0; distinct];
        for (position, &id) in owner_of_position.iter().enumerate() {
            last[id] = position;
        }
        // A capacity hint only: a huge virtual node count must not make
        // the reservation itself fail.
        let mut all: Vec<(u32, usize, usize)> =
            Vec::with_capacity(distinct.saturating_mul(self.virtual_nodes).min(1 << 24));
        let mut digits = Vec::new();
        for (id, &position) in last.iter().enumerate() {
            let consumer = consumers[position].as_bytes();
            for replica in 0..self.virtual_nodes {
                digits.clear();
                push_decimal(&mut digits, replica as u64);
                all.push((crc32(&[&digits, consumer]), position, id));
            }
        }
        all.sort_unstable_by_key(|&(hash, position, _)| (hash, position));
        let mut points: Vec<(u32, usize)> = Vec::with_capacity(all.len());
        for (hash, _, id) in all {
            match points.last_mut() {
                Some(last) if last.0 == hash => last.1 = id,
                _ => points.push((hash, id)),
            }
        }
        (owner_of_position, points)
    }
}

impl AllocateStrategy for GoConsistentHash {
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
        self.has_points()?;
        Ok(self.route(queues, consumers).share(queues, index))
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let first = check_group_then(queues, consumers, || self.has_points())?;
        Ok(self.route(queues, consumers).shares(queues, &first))
    }
}

/// CRC-32 with the IEEE polynomial (Go's `crc32.ChecksumIEEE`) of the
/// concatenation of `parts`.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = !0u32;
    for &byte in parts.iter().flat_map(|part| part.iter()) {
        crc = CRC32_TABLE[usize::from((crc as u8) ^ byte)] ^ (crc >> 8);
    }
    !crc
}

/// The CRC of every byte value, for the reflected polynomial `0xEDB88320`.
const CRC32_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut crc = n as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                0xEDB8_8320 ^ (crc >> 1)
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[n] = crc;
        n += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::crc32;

    #[test]
    fn crc32_is_ieee() {
        // The standard check value, and a split that must not matter.
        assert_eq!(crc32(&[b"123456789"]), 0xCBF4_3926);
        assert_eq!(crc32(&[b"1234", b"", b"56789"]), 0xCBF4_3926);
        assert_eq!(crc32(&[b""]), 0);
    }
}
