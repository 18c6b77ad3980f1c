//! Predicates over one assignment, or two successive ones.

use std::collections::{BTreeMap, BTreeSet};

/// How many shares hold each queue.
fn holders<Q: Ord, S: AsRef<[Q]>>(shares: &[S]) -> BTreeMap<&Q, usize> {
    let mut holders = BTreeMap::new();
    for share in shares {
        // A queue listed twice in one share is still held once by it.
        let distinct: BTreeSet<&Q> = share.as_ref().iter().collect();
        for queue in distinct {
            *holders.entry(queue).or_insert(0) += 1;
        }
    }
    holders
}

/// The queues held by two or more shares, sorted: RocketMQ's duplicate
/// consumption.
pub fn double_owned<Q: Ord + Clone, S: AsRef<[Q]>>(shares: &[S]) -> Vec<Q> {
    holders(shares)
        .into_iter()
        .filter(|&(_, count)| count > 1)
        .map(|(queue, _)| queue.clone())
        .collect()
}

/// Whether no queue is held by two shares.
pub fn is_disjoint<Q: Ord, S: AsRef<[Q]>>(shares: &[S]) -> bool {
    holders(shares).values().all(|&count| count == 1)
}

/// The queues of `all` that no share holds, sorted and without repeats:
/// queues nobody consumes.
pub fn orphaned<Q: Ord + Clone, S: AsRef<[Q]>>(all: &[Q], shares: &[S]) -> Vec<Q> {
    let held = holders(shares);
    let missing: BTreeSet<&Q> = all.iter().filter(|q| !held.contains_key(q)).collect();
    missing.into_iter().cloned().collect()
}

/// Whether every queue of `all` is held by exactly one share, and no share
/// holds anything else.
///
/// ```
/// use rocketmq_rebalance_properties::is_partition;
///
/// assert!(is_partition(&[1, 2, 3], &[vec![3, 1], vec![2]]));
/// assert!(!is_partition(&[1, 2, 3], &[vec![1], vec![2]]));
/// assert!(!is_partition(&[1, 2], &[vec![1], vec![2, 9]]));
/// ```
pub fn is_partition<Q: Ord, S: AsRef<[Q]>>(all: &[Q], shares: &[S]) -> bool {
    let universe: BTreeSet<&Q> = all.iter().collect();
    let total: usize = shares.iter().map(|s| s.as_ref().len()).sum();
    let held = holders(shares);
    total == universe.len()
        && held.len() == universe.len()
        && held
            .iter()
            .all(|(q, &count)| count == 1 && universe.contains(q))
}

/// The largest share's size minus the smallest's; 0 for no shares.
pub fn balance<Q, S: AsRef<[Q]>>(shares: &[S]) -> usize {
    let loads = shares.iter().map(|s| s.as_ref().len());
    match (loads.clone().max(), loads.min()) {
        (Some(max), Some(min)) => max - min,
        _ => 0,
    }
}

/// The number of queues that some consumer holds in `after` without having
/// held it in `before`: queues that move (or that are new), each counted once.
/// Consumers are identified by `C`, so joins and leaves are handled.
///
/// ```
/// use rocketmq_rebalance_properties::moved;
///
/// let before = [("c1", vec![0, 1]), ("c2", vec![2, 3])];
/// let after = [("c1", vec![0]), ("c2", vec![2, 3]), ("c3", vec![1])];
/// assert_eq!(moved(&before, &after), 1);
/// ```
pub fn moved<C: Ord, Q: Ord, S: AsRef<[Q]>>(before: &[(C, S)], after: &[(C, S)]) -> usize {
    let held_before: BTreeSet<(&C, &Q)> = before
        .iter()
        .flat_map(|(c, share)| share.as_ref().iter().map(move |q| (c, q)))
        .collect();
    let gained: BTreeSet<&Q> = after
        .iter()
        .flat_map(|(c, share)| share.as_ref().iter().map(move |q| (c, q)))
        .filter(|pair| !held_before.contains(pair))
        .map(|(_, q)| q)
        .collect();
    gained.len()
}

/// The fewest queues any balanced strategy must move from `before` to
/// `after`: for each consumer, the queues it must gain to reach its new
/// size, counted as if it kept everything it had that still exists.
/// For a join this is the joiner's share, for a leave the leaver's share,
/// for added queues the number added.
///
/// ```
/// use rocketmq_rebalance_properties::movement_lower_bound;
///
/// let before = [("c1", vec![0, 1, 2]), ("c2", vec![3, 4, 5])];
/// let after = [("c1", vec![0, 1]), ("c2", vec![3, 4]), ("c3", vec![2, 5])];
/// assert_eq!(movement_lower_bound(&before, &after), 2);
/// ```
pub fn movement_lower_bound<C: Ord, Q: Ord, S: AsRef<[Q]>>(
    before: &[(C, S)],
    after: &[(C, S)],
) -> usize {
    let still_there: BTreeSet<&Q> = after.iter().flat_map(|(_, s)| s.as_ref()).collect();
    let kept_before: BTreeMap<&C, usize> = before
        .iter()
        .map(|(c, s)| {
            (
                c,
                s.as_ref()
                    .iter()
                    .filter(|q| still_there.contains(q))
                    .count(),
            )
        })
        .collect();
    after
        .iter()
        .map(|(c, s)| {
            s.as_ref()
                .len()
                .saturating_sub(kept_before.get(c).copied().unwrap_or(0))
        })
        .sum()
}
