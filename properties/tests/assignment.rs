//! The predicates over assignments, each with the exact answer for
//! assignments small enough to check by hand.

use rocketmq_rebalance_properties::{
    balance, double_owned, is_disjoint, is_partition, moved, movement_lower_bound, orphaned,
};

#[test]
fn a_queue_listed_twice_in_one_share_is_held_once_by_it() {
    let shares = [vec![1, 1, 2], vec![3]];
    assert!(is_disjoint(&shares));
    assert_eq!(double_owned(&shares), Vec::<i32>::new());
    assert_eq!(orphaned(&[1, 2, 3, 4], &shares), [4]);
    // Held once each, but listed four times for three queues.
    assert!(!is_partition(&[1, 2, 3], &shares));
}

#[test]
fn double_ownership_counts_shares_not_listings() {
    let shares = [vec![1, 2], vec![2, 3], vec![2, 3, 4]];
    assert_eq!(double_owned(&shares), [2, 3]);
    assert!(!is_disjoint(&shares));
    assert!(is_disjoint(&[vec![2], vec![3]]));
    assert!(is_disjoint::<i32, Vec<i32>>(&[]));
}

#[test]
fn orphaned_queues_are_sorted_without_repeats() {
    assert_eq!(orphaned(&[5, 3, 5, 1, 2], &[vec![2]]), [1, 3, 5]);
    assert_eq!(orphaned(&[1, 2], &[vec![2, 1]]), Vec::<i32>::new());
}

#[test]
fn a_partition_holds_every_queue_once_and_nothing_else() {
    let all = [1, 2, 3];
    assert!(is_partition(&all, &[vec![3, 1], vec![2]]));
    assert!(is_partition(&all, &[vec![3, 1], vec![], vec![2]]));
    // Repeats in the queue list are one queue.
    assert!(is_partition(&[1, 2, 2], &[vec![1], vec![2]]));
    assert!(!is_partition(&all, &[vec![1], vec![2]]), "3 is nobody's");
    assert!(!is_partition(&all, &[vec![1, 2], vec![2, 3]]), "2 twice");
    assert!(
        !is_partition(&[1, 2], &[vec![1], vec![9]]),
        "9 is not a queue of the topic"
    );
    assert!(is_partition::<i32, Vec<i32>>(&[], &[]));
}

#[test]
fn balance_is_the_largest_share_minus_the_smallest() {
    assert_eq!(balance(&[vec![1, 2, 3], vec![4], vec![5, 6]]), 2);
    assert_eq!(balance(&[vec![1], vec![2]]), 0);
    assert_eq!(balance(&[vec![1, 2, 3, 4]]), 0);
    assert_eq!(balance::<i32, Vec<i32>>(&[]), 0);
}

#[test]
fn moved_counts_each_queue_gained_once() {
    let before = [("c1", vec![0, 1]), ("c2", vec![2, 3])];
    assert_eq!(moved(&before, &before), 0);
    // c1 and c3 both gain 3 (during a disagreement): one queue moved.
    let after = [("c1", vec![0, 1, 3]), ("c2", vec![2]), ("c3", vec![3, 4])];
    assert_eq!(moved(&before, &after), 2);
    // Swapping shares moves everything.
    let swapped = [("c1", vec![2, 3]), ("c2", vec![0, 1])];
    assert_eq!(moved(&before, &swapped), 4);
}

#[test]
fn the_lower_bound_is_what_each_consumer_must_gain_to_reach_its_size() {
    let before = [("c1", vec![0, 1, 2]), ("c2", vec![3])];
    // c1 shrinks (needs nothing), c2 grows from 1 to 3.
    let after = [("c1", vec![0]), ("c2", vec![3, 1, 2])];
    assert_eq!(movement_lower_bound(&before, &after), 2);
    // Queue 1 is gone: c1 keeps 2 of its old queues, so it needs one more
    // to reach 3; c3 is new and needs its 1.
    let shrunk = [("c1", vec![0, 2, 3]), ("c3", vec![4])];
    assert_eq!(movement_lower_bound(&before, &shrunk), 2);
    assert_eq!(movement_lower_bound(&before, &before), 0);
}
