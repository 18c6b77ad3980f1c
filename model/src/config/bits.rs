//! The bit sets that keep the model's state small: members and queues are
//! sets of small indices, one bit each.

/// Member sets are `u16` bit sets indexed by consumer.
pub const MAX_CONSUMERS: usize = 16;
/// Broker names are `broker-a` to `broker-h`.
pub const MAX_BROKERS: usize = 8;
/// Per-consumer state keeps one member view per topic in a fixed array.
pub const MAX_TOPICS: usize = 4;
/// Owned queues are a `u64` bit set over every queue any route version has.
pub const MAX_QUEUES: usize = 64;
/// With messages modelled, every queue's consumption is kept per queue: at
/// most this many queues in all.
pub const MAX_MESSAGE_QUEUES: usize = 8;
/// With messages modelled, at most this many messages a queue (offsets and
/// cursors are four-bit numbers, delivery counts two-bit).
pub const MAX_MESSAGES: usize = 6;

/// A bit set of consumers, by consumer index.
pub type ConsumerSet = u16;
/// A bit set of queues, by index into [`Config::queues`](super::Config).
pub type QueueSet = u64;

/// The consumers a broker lists, lowest first, one entry a channel: those
/// of `twice` (a second channel open) twice.
pub(crate) fn listed(members: ConsumerSet, twice: ConsumerSet) -> impl Iterator<Item = usize> {
    members_of(u64::from(members))
        .flat_map(move |c| std::iter::repeat(c).take(1 + usize::from(twice & 1 << c != 0)))
}

/// The indices of the bits set in `set`, lowest first.
pub fn members_of(set: u64) -> impl Iterator<Item = usize> {
    let mut rest = set;
    std::iter::from_fn(move || {
        let next = rest.trailing_zeros();
        (rest != 0).then(|| {
            rest &= rest - 1;
            next as usize
        })
    })
}

/// The set of the indices that `keep` selects among `0..count`.
pub fn set_of(count: usize, keep: impl Fn(usize) -> bool) -> u64 {
    (0..count)
        .filter(|&i| keep(i))
        .fold(0, |set, i| set | 1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_listed_lowest_first() {
        assert_eq!(members_of(0).count(), 0);
        assert_eq!(members_of(0b1010_0001).collect::<Vec<_>>(), [0, 5, 7]);
        assert_eq!(members_of(1 << 63).collect::<Vec<_>>(), [63]);
        assert_eq!(set_of(6, |i| i % 2 == 1), 0b10_1010);
    }
}
