//! `plan_update`, the decision a consumer takes after allocating, and
//! whether it changes anything.

use rocketmq_rebalance::{plan_update, UpdatePlan};

#[test]
fn a_plan_is_empty_only_when_it_neither_drops_nor_adds() {
    assert!(plan_update(&[1, 2], &[2, 1]).is_empty());
    assert!(UpdatePlan::<u8>::default().is_empty());
    let drops = plan_update(&[1, 2], &[2]);
    assert_eq!(
        drops,
        UpdatePlan {
            drop: vec![1],
            add: vec![]
        }
    );
    assert!(!drops.is_empty());
    let adds = plan_update(&[2], &[1, 2]);
    assert_eq!(
        adds,
        UpdatePlan {
            drop: vec![],
            add: vec![1]
        }
    );
    assert!(!adds.is_empty());
}

#[test]
fn duplicates_count_once_and_both_lists_come_out_sorted() {
    let plan = plan_update(&[5, 3, 5, 1], &[4, 4, 2, 3]);
    assert_eq!(plan.drop, [1, 5]);
    assert_eq!(plan.add, [2, 4]);
}
