//! `STICKY`: a balanced strategy that moves few queues when the group or the
//! topic changes, computed by every consumer alone from the two lists.

use super::{
    check, check_group, group_by_owner, owned_by, share_by_first_position, AllocateStrategy,
};
use crate::{AllocateError, MessageQueue, SplitMix64};

/// A balanced, sticky allocation (`STICKY`), not part of RocketMQ.
///
/// Every consumer computes the whole group's assignment from the queue list
/// and the client-id list alone (no leader, no memory of the previous
/// assignment), so consumers that see the same lists agree.
///
/// **Balance.** With the default slack of 1, every consumer gets
/// `floor(Q / N)` or `ceil(Q / N)` queues (`Q` queues, `N` distinct client
/// ids). With [`with_slack(k)`](Sticky::with_slack) the loads stay within a
/// window `[lo, lo + k]` around `Q / N`, so the largest and the smallest
/// share differ by at most `k`.
///
/// **Stickiness.** Each client id owns [`VIRTUAL_NODES`](Sticky::VIRTUAL_NODES)
/// points on a 64-bit hash ring and each queue one point. A queue's
/// preference over consumers is the order in which their points follow its
/// own point clockwise, and a consumer prefers the queues whose points lie
/// just before its own: one shared score, the clockwise distance. The
/// assignment is the unique stable matching of that score under the loads
/// allowed (deferred acceptance with shared scores, run as one greedy pass
/// in order of distance). Without load limits every queue would go to its
/// nearest point and a join or leave would move only the joiner's or
/// leaver's queues; the limits make a few more queues move, about a third
/// of the lower bound on average (see `docs/sticky.md` for the measurements
/// and why exact balance costs that much).
///
/// Which consumers get the `Q mod N` extra queues is decided lazily: the
/// first ones to reach `floor(Q / N) + 1` in distance order keep it. No
/// positional rule is involved, so a consumer's position in the sorted list
/// does not matter and a join does not shift everybody's share.
///
/// A client id listed twice is one consumer: both entries get the same share
/// (nothing is orphaned, unlike the Java strategies). Queue order and client
/// order do not matter either, except for ties between 64-bit hashes.
///
/// The hashes are FNV-1a (64-bit) followed by the SplitMix64 finalizer: of
/// the client id's UTF-8 bytes for a consumer, and of `topic`, a `0xFF`
/// byte, `brokerName`, a `0xFF` byte and the queue id as four little-endian
/// bytes for a queue. Point `t` of a consumer with key `k` is
/// `splitmix64(k ^ (t + 1) * 0x9E3779B97F4A7C15)` with its low 24 bits
/// replaced by the consumer's rank among the distinct ids in byte order
/// (ties between points break by that rank).
///
/// ```
/// use rocketmq_rebalance::{strategy::Sticky, AllocateStrategy, MessageQueue};
///
/// let queues: Vec<_> = (0..8).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
/// let three: Vec<String> = ["c1", "c2", "c3"].map(String::from).to_vec();
/// let sticky = Sticky::new();
/// let before = sticky.allocate_group("group", &queues, &three)?;
/// let mut loads: Vec<usize> = before.iter().map(Vec::len).collect();
/// loads.sort();
/// assert_eq!(loads, [2, 3, 3]);
///
/// // A fourth consumer joins: it takes its two queues and few others move.
/// let four: Vec<String> = ["c1", "c2", "c3", "c4"].map(String::from).to_vec();
/// let after = sticky.allocate_group("group", &queues, &four)?;
/// assert!(after.iter().all(|share| share.len() == 2));
/// let kept: usize = (0..3)
///     .map(|i| after[i].iter().filter(|q| before[i].contains(q)).count())
///     .sum();
/// assert!(kept >= 4);
/// # Ok::<(), rocketmq_rebalance::AllocateError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sticky {
    slack: usize,
    name: String,
}

impl Sticky {
    /// Points on the hash ring per consumer. More points make the ring's
    /// preferences closer to independent per-queue rankings (fewer queues
    /// move) and the ring slower to build; 128 keeps a 100,000-queue,
    /// 10,000-consumer group well under 100 ms.
    pub const VIRTUAL_NODES: usize = 128;

    /// Exact balance: every share has `floor(Q / N)` or `ceil(Q / N)` queues.
    pub fn new() -> Self {
        Self::with_slack(1)
    }

    /// Loads within a window of width `slack` (largest share minus smallest
    /// at most `slack`); 0 is taken as 1. A wider window lets more queues
    /// stay where they are when the group changes: `docs/sticky.md` shows
    /// the trade-off. Named `STICKY` for 1, `STICKY-k` otherwise.
    ///
    /// ```
    /// use rocketmq_rebalance::{strategy::Sticky, AllocateStrategy};
    ///
    /// assert_eq!(Sticky::with_slack(1), Sticky::new());
    /// assert_eq!(Sticky::with_slack(3).name(), "STICKY-3");
    /// assert_eq!(Sticky::with_slack(3).load_bounds(100, 8), (10, 13));
    /// ```
    pub fn with_slack(slack: usize) -> Self {
        let slack = slack.max(1);
        let name = if slack == 1 {
            "STICKY".to_string()
        } else {
            format!("STICKY-{slack}")
        };
        Sticky { slack, name }
    }

    /// The strategy a name stands for: `STICKY`, or `STICKY-k` for a window
    /// of `k >= 2` (written as [`name`](AllocateStrategy::name) writes it).
    ///
    /// ```
    /// use rocketmq_rebalance::strategy::Sticky;
    ///
    /// assert_eq!(Sticky::from_name("STICKY"), Some(Sticky::new()));
    /// assert_eq!(Sticky::from_name("STICKY-4"), Some(Sticky::with_slack(4)));
    /// assert_eq!(Sticky::from_name("STICKY-1"), None);
    /// assert_eq!(Sticky::from_name("STICKY-04"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Sticky> {
        if name == "STICKY" {
            return Some(Sticky::new());
        }
        let slack: usize = name.strip_prefix("STICKY-")?.parse().ok()?;
        let sticky = Sticky::with_slack(slack);
        (sticky.name == name).then_some(sticky)
    }

    /// The width of the load window (1 for exact balance).
    pub fn slack(&self) -> usize {
        self.slack
    }

    /// The smallest and the largest share this strategy gives when
    /// `queues` queues go to `consumers` distinct consumers: `(Q / N, Q / N + 1)`
    /// for slack 1; for slack `k > 1` the window `[lo, lo + k]` with
    /// `lo = Q / N - ceil(k / 2)` (not below 0), which keeps `Q / N` inside
    /// with room on both sides. `(0, 0)` when there are no consumers.
    pub fn load_bounds(&self, queues: usize, consumers: usize) -> (usize, usize) {
        if consumers == 0 {
            return (0, 0);
        }
        let floor = queues / consumers;
        let lo = if self.slack == 1 {
            floor
        } else {
            floor.saturating_sub(self.slack.div_ceil(2))
        };
        (lo, lo + self.slack)
    }

    /// The whole group's assignment: for each queue, the position in
    /// `consumers` of its owner (the first position of an id listed twice).
    /// Empty when either list is empty. This is what every call of
    /// [`allocate`](AllocateStrategy::allocate) computes; it does not check
    /// for empty ids.
    ///
    /// ```
    /// use rocketmq_rebalance::{strategy::Sticky, MessageQueue};
    ///
    /// let queues: Vec<_> = (0..5).map(|i| MessageQueue::new("T", "broker-a", i)).collect();
    /// let consumers: Vec<String> = ["a", "b", "a"].map(String::from).to_vec();
    /// let owners = Sticky::new().assign(&queues, &consumers);
    /// assert_eq!(owners.len(), 5);
    /// assert!(owners.iter().all(|&o| o == 0 || o == 1));
    /// ```
    pub fn assign(&self, queues: &[MessageQueue], consumers: &[String]) -> Vec<usize> {
        if queues.is_empty() || consumers.is_empty() {
            return Vec::new();
        }
        // Distinct ids in byte order: the assignment depends on the set of
        // ids only, and a tie between two ring points breaks the same way
        // whatever order the caller listed the consumers in.
        let mut ids: Vec<(&str, usize)> = consumers
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        ids.sort_unstable();
        ids.dedup_by(|later, first| later.0 == first.0);
        let keys: Vec<u64> = ids.iter().map(|(id, _)| consumer_key(id)).collect();
        let points: Vec<u64> = queues.iter().map(queue_point).collect();
        let (lo, hi) = self.load_bounds(queues.len(), keys.len());
        match_on_ring(&points, &keys, lo, hi)
            .into_iter()
            .map(|distinct| ids.get(distinct).map_or(0, |&(_, first)| first))
            .collect()
    }

    /// The shares of the group, one per position of `consumers` (duplicates
    /// share), from [`assign`](Self::assign).
    fn shares<'a>(
        &self,
        queues: &'a [MessageQueue],
        consumers: &[String],
        first: &[usize],
    ) -> Vec<Vec<&'a MessageQueue>> {
        let owners = self.assign(queues, consumers).into_iter().map(Some);
        let mut by_first = group_by_owner(queues, owners, consumers.len());
        share_by_first_position(first, |i| std::mem::take(&mut by_first[i]))
    }
}

impl Default for Sticky {
    fn default() -> Self {
        Self::new()
    }
}

impl AllocateStrategy for Sticky {
    fn name(&self) -> &str {
        &self.name
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let Some(me) = check(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        Ok(owned_by(
            queues,
            self.assign(queues, consumers).into_iter().map(Some),
            me,
        ))
    }

    fn allocate_group<'a>(
        &'a self,
        _group: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
        let first = check_group(queues, consumers)?;
        if consumers.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.shares(queues, consumers, &first))
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    hash
}

/// SplitMix64's first output from state `z`: spreads FNV's weak low bits
/// over all 64.
fn splitmix64(z: u64) -> u64 {
    SplitMix64::new(z).next_u64()
}

fn consumer_key(id: &str) -> u64 {
    splitmix64(fnv1a(FNV_OFFSET, id.as_bytes()))
}

fn vnode_point(key: u64, t: usize) -> u64 {
    splitmix64(key ^ (t as u64).wrapping_add(1).wrapping_mul(SplitMix64::GAMMA))
}

/// `0xFF` never occurs in UTF-8, so the separators keep
/// (`"ab"`, `"c"`) and (`"a"`, `"bc"`) apart.
fn queue_point(queue: &MessageQueue) -> u64 {
    let mut h = fnv1a(FNV_OFFSET, queue.topic.as_bytes());
    h = fnv1a(h, &[0xFF]);
    h = fnv1a(h, queue.broker_name.as_bytes());
    h = fnv1a(h, &[0xFF]);
    h = fnv1a(h, &queue.queue_id.to_le_bytes());
    splitmix64(h)
}

/// The stable matching of queues (ring points `points`) to consumers (ring
/// keys `keys`, distinct) under the shared score "clockwise distance from
/// the queue's point to one of the consumer's points", every consumer ending
/// with between `lo` and `hi` queues, `m - n * lo` of the units above `lo`
/// going to whoever reaches them first. Returns each queue's consumer index.
///
/// Greedy in increasing distance: every queue waits at the next ring point
/// it has not tried; the nearest waiting queue is taken by that point's
/// consumer if it is still open, and otherwise moves on to the next open
/// point, farther away, so the pass stays in distance order. A consumer
/// closes when it is full, for good, so closed points are skipped with
/// path-compressed "next point" links.
///
/// Needs `n * lo <= m <= n * hi` (what [`Sticky::load_bounds`] gives), then
/// some consumer stays open while a queue waits: if all were closed, each
/// would hold at least `lo` and the units above `lo` would be used up, so
/// all `m` queues would be placed.
fn match_on_ring(points: &[u64], keys: &[u64], lo: usize, hi: usize) -> Vec<usize> {
    let (m, n) = (points.len(), keys.len());
    if m == 0 || n == 0 || n.saturating_mul(lo) > m || n.saturating_mul(hi) < m {
        return vec![0; m];
    }
    if n > u32::MAX as usize / Sticky::VIRTUAL_NODES {
        // Beyond 33 million consumers the ring's u32 indices would overflow
        // (and it would need 34 GB): fall back to a balanced round robin.
        return (0..m).map(|i| i % n).collect();
    }
    let ring = Ring::new(keys, Sticky::VIRTUAL_NODES);
    let len = ring.len();
    // skip[i]: a point after i (clockwise) with only closed points between.
    let mut skip: Vec<u32> = (1..=len as u32).collect();
    if let Some(last) = skip.last_mut() {
        *last = 0;
    }
    let mut cursor: Vec<u32> = points.iter().map(|&p| ring.first_at_or_after(p)).collect();
    let mut waiting = RadixHeap::with_capacity(m);
    for (i, (&p, &at)) in points.iter().zip(&cursor).enumerate() {
        waiting.push(ring.position(at as usize).wrapping_sub(p), i as u32);
    }

    let mut load = vec![0usize; n];
    let mut closed = vec![false; n];
    let mut open = n;
    let mut above_lo = m - n * lo;
    // With no unit above lo to begin with, consumers close on reaching lo.
    let mut swept = above_lo == 0;
    let mut owner = vec![usize::MAX; m];

    while let Some((_, i)) = waiting.pop() {
        if open == 0 {
            break; // cannot happen (see above); leaves the rest to consumer 0
        }
        let i = i as usize;
        let at = cursor[i] as usize;
        let found = first_open(&ring, &closed, &mut skip, at);
        if found != at {
            cursor[i] = found as u32;
            waiting.push(ring.position(found).wrapping_sub(points[i]), i as u32);
            continue;
        }
        let j = ring.owner(at);
        if load[j] >= lo {
            above_lo -= 1;
        }
        load[j] += 1;
        owner[i] = j;
        if above_lo == 0 && !swept {
            // The last unit above lo is gone: whoever holds lo is full now.
            swept = true;
            for k in 0..n {
                if load[k] >= lo && !closed[k] {
                    closed[k] = true;
                    open -= 1;
                }
            }
        } else if load[j] >= hi || (swept && load[j] >= lo) {
            closed[j] = true;
            open -= 1;
        }
    }
    owner
        .into_iter()
        .map(|o| if o == usize::MAX { 0 } else { o })
        .collect()
}

/// The first point at or after `at` (clockwise) whose consumer is open,
/// pointing the links of the closed points passed straight at it. Only
/// called while some consumer is open.
fn first_open(ring: &Ring, closed: &[bool], skip: &mut [u32], at: usize) -> usize {
    let mut found = at;
    while closed[ring.owner(found)] {
        found = skip[found] as usize;
    }
    let mut x = at;
    while x != found {
        let next = skip[x] as usize;
        skip[x] = found as u32;
        x = next;
    }
    found
}

/// The consumers' points sorted by position, with a bucket index on the top
/// bits of the position: the points are uniform, so a counting sort by
/// bucket and a tiny sort inside each bucket beat a comparison sort, and a
/// queue finds its first point by looking in one bucket.
///
/// A point is one `u64`: the top bits of its hash with the owner's index in
/// the low [`Ring::owner_bits`] bits, so that sorting and scattering move
/// one array instead of two. That shifts a point by less than `2^24` out of
/// `2^64`, and breaks ties between equal hashes by owner.
struct Ring {
    points: Vec<u64>,
    /// `start[b]..start[b + 1]`: the points whose top `bits` bits are `b`.
    start: Vec<u32>,
    shift: u32,
    owner_mask: u64,
}

impl Ring {
    fn new(keys: &[u64], per_key: usize) -> Ring {
        let len = keys.len() * per_key;
        let owner_bits = Ring::owner_bits(keys.len());
        let owner_mask = (1u64 << owner_bits) - 1;
        // About eight points a bucket: a bucket index small enough to stay
        // in cache while the points are counted and scattered.
        let bits = (usize::BITS - (len / 8).leading_zeros()).clamp(1, 31);
        let shift = 64 - bits;
        let buckets = 1usize << bits;
        let each = || {
            keys.iter().enumerate().flat_map(move |(j, &key)| {
                (0..per_key).map(move |t| (vnode_point(key, t) & !owner_mask) | j as u64)
            })
        };
        // Hashing twice is cheaper than writing and reading back a list.
        let mut start = vec![0u32; buckets + 1];
        for p in each() {
            start[(p >> shift) as usize + 1] += 1;
        }
        for b in 0..buckets {
            start[b + 1] += start[b];
        }
        let mut fill: Vec<u32> = start[..buckets].to_vec();
        let mut points = vec![0u64; len];
        for p in each() {
            let b = (p >> shift) as usize;
            points[fill[b] as usize] = p;
            fill[b] += 1;
        }
        drop(fill);
        for b in 0..buckets {
            insertion_sort(&mut points[start[b] as usize..start[b + 1] as usize]);
        }
        Ring {
            points,
            start,
            shift,
            owner_mask,
        }
    }

    /// Low bits that hold the owner: 24 (16 million consumers) or more.
    fn owner_bits(consumers: usize) -> u32 {
        (usize::BITS - consumers.saturating_sub(1).leading_zeros()).max(24)
    }

    fn len(&self) -> usize {
        self.points.len()
    }

    fn position(&self, at: usize) -> u64 {
        self.points[at]
    }

    fn owner(&self, at: usize) -> usize {
        (self.points[at] & self.owner_mask) as usize
    }

    /// The index of the first point at or after `p`, wrapping to 0.
    fn first_at_or_after(&self, p: u64) -> u32 {
        let b = (p >> self.shift) as usize;
        let (from, to) = (self.start[b] as usize, self.start[b + 1] as usize);
        let at = from + self.points[from..to].partition_point(|&x| x < p);
        if at == self.points.len() {
            0
        } else {
            at as u32
        }
    }
}

/// Sorts the few points of one bucket.
fn insertion_sort(points: &mut [u64]) {
    for i in 1..points.len() {
        let mut k = i;
        while k > 0 && points[k - 1] > points[k] {
            points.swap(k - 1, k);
            k -= 1;
        }
    }
}

/// A monotone priority queue (radix heap): pops never go below the last
/// key popped, which holds here because a queue only ever waits again
/// farther away. Entries sit in bucket `64 - leading_zeros(key ^ last)`;
/// popping refills from the lowest non-empty bucket. Ties pop in a fixed
/// order determined by the pushes, so the result is deterministic.
struct RadixHeap {
    last: u64,
    buckets: [Vec<(u64, u32)>; 65],
    len: usize,
}

impl RadixHeap {
    fn with_capacity(capacity: usize) -> RadixHeap {
        let mut buckets: [Vec<(u64, u32)>; 65] = std::array::from_fn(|_| Vec::new());
        buckets[64].reserve(capacity);
        RadixHeap {
            last: 0,
            buckets,
            len: 0,
        }
    }

    fn bucket(last: u64, key: u64) -> usize {
        (64 - (key ^ last).leading_zeros()) as usize
    }

    fn push(&mut self, key: u64, value: u32) {
        let key = key.max(self.last);
        self.buckets[Self::bucket(self.last, key)].push((key, value));
        self.len += 1;
    }

    fn pop(&mut self) -> Option<(u64, u32)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let b = (1..65).find(|&b| !self.buckets[b].is_empty())?;
            let moved = std::mem::take(&mut self.buckets[b]);
            self.last = moved.iter().map(|&(k, _)| k).min().unwrap_or(self.last);
            for &(k, v) in &moved {
                self.buckets[Self::bucket(self.last, k)].push((k, v));
            }
            // Give the emptied bucket its memory back for later refills.
            let mut moved = moved;
            moved.clear();
            self.buckets[b] = moved;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queues(m: usize) -> Vec<MessageQueue> {
        (0..m)
            .map(|i| MessageQueue::new("T", format!("broker-{}", i % 3), i as i32))
            .collect()
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("10.0.0.{i}@{}", 100 + i)).collect()
    }

    #[test]
    fn exact_balance_and_partition() {
        for (m, n) in [
            (1, 1),
            (1, 5),
            (7, 3),
            (64, 40),
            (100, 7),
            (1000, 13),
            (9, 9),
        ] {
            let qs = queues(m);
            let cs = ids(n);
            let owners = Sticky::new().assign(&qs, &cs);
            assert_eq!(owners.len(), m);
            let mut loads = vec![0usize; n];
            for o in owners {
                loads[o] += 1;
            }
            let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            assert!(max - min <= 1, "{m}x{n}: {loads:?}");
        }
    }

    #[test]
    fn slack_window_holds() {
        for k in 1..8 {
            let s = Sticky::with_slack(k);
            for (m, n) in [(5, 3), (64, 40), (100, 7), (1000, 13)] {
                let (lo, hi) = s.load_bounds(m, n);
                let mut loads = vec![0usize; n];
                for o in s.assign(&queues(m), &ids(n)) {
                    loads[o] += 1;
                }
                assert!(loads.iter().all(|&l| lo <= l && l <= hi), "{k} {m}x{n}");
            }
        }
    }

    #[test]
    fn duplicates_share_and_errors() {
        let qs = queues(6);
        let cs: Vec<String> = ["b", "a", "b"].map(String::from).to_vec();
        let s = Sticky::new();
        let group = s.allocate_group("g", &qs, &cs).unwrap();
        assert_eq!(group[0], group[2]);
        assert_eq!(group[0].len() + group[1].len(), 6);
        assert_eq!(
            s.allocate("g", "", &qs, &cs),
            Err(AllocateError::EmptyCurrentId)
        );
        assert_eq!(
            s.allocate("g", "a", &[], &cs),
            Err(AllocateError::EmptyQueues)
        );
        assert_eq!(
            s.allocate("g", "a", &qs, &[]),
            Err(AllocateError::EmptyConsumers)
        );
        assert_eq!(s.allocate("g", "z", &qs, &cs), Ok(Vec::new()));
    }
}
