//! The predicates that the allocation crate's tests and the model's properties
//! share: what it means for a consumer group's assignment to be right.
//!
//! An assignment is a list of shares, one per consumer, each a list of queues
//! (any `Ord` type: the crate's `MessageQueue`, references to it, or the
//! model's small queue indices). [`assignment`] holds the predicates over one
//! assignment or two successive ones; [`strategy`] holds the promises that an
//! allocation strategy makes about its answers; [`compare`] measures every
//! strategy against them on the same changes of a group (what `rebalance
//! compare` prints).
//!
//! ```
//! use rocketmq_rebalance_properties::{balance, double_owned, is_partition, orphaned};
//!
//! let all = [0, 1, 2, 3];
//! let shares = [vec![0, 1], vec![1, 2]];
//! assert!(!is_partition(&all, &shares));
//! assert_eq!(double_owned(&shares), [1]);
//! assert_eq!(orphaned(&all, &shares), [3]);
//! assert_eq!(balance(&shares), 0);
//! ```
#![forbid(unsafe_code)]

pub mod assignment;
pub mod compare;
pub mod strategy;

pub use assignment::{
    balance, double_owned, is_disjoint, is_partition, moved, movement_lower_bound, orphaned,
};
