//! Apache RocketMQ's consumer-group queue allocation, exactly as the Java
//! client computes it, and much faster.
//!
//! In clustering mode every RocketMQ consumer decides on its own which queues
//! of a topic it consumes: it sorts the topic's queues and the group's client
//! ids, then asks an allocation strategy for its share. Consumers agree only
//! because they run the same deterministic function on the same lists. This
//! crate is that function: every strategy of the Java client with identical
//! results, result order and failures (checked against vectors produced by
//! the Java client), a whole-group call that computes every share in one pass,
//! and the pure decision a consumer makes after allocating.
//!
//! ```
//! use rocketmq_rebalance::{rebalance_allocate, strategy_from_name, MessageQueue};
//!
//! let queues: Vec<_> = ["broker-a", "broker-b"]
//!     .iter()
//!     .flat_map(|b| (0..4).map(move |i| MessageQueue::new("T", *b, i)))
//!     .collect();
//! let consumers = vec!["10.0.0.1@1".to_string(), "10.0.0.2@1".to_string(), "10.0.0.3@1".to_string()];
//! let avg = strategy_from_name("AVG")?;
//! let mine = rebalance_allocate(avg.as_ref(), "group", "10.0.0.2@1", &queues, &consumers)?;
//! let names: Vec<String> = mine.iter().map(|q| format!("{}{}", &q.broker_name[7..], q.queue_id)).collect();
//! assert_eq!(names, ["a3", "b0", "b1"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Strategies: [`strategy::Averagely`] (`AVG`), [`strategy::AveragelyByCircle`]
//! (`AVG_BY_CIRCLE`), [`strategy::ConsistentHash`] (`CONSISTENT_HASH`),
//! [`strategy::ByConfig`] (`CONFIG`), [`strategy::ByMachineRoom`]
//! (`MACHINE_ROOM`) and [`strategy::MachineRoomNearby`] (`MACHINE_ROOM_NEARBY`);
//! and the Go client's own `CONSISTENT_HASH` ring, which is not Java's,
//! [`strategy::GoConsistentHash`].
#![forbid(unsafe_code)]

pub mod conformance;
mod error;
pub mod java;
mod queue;
mod rebalance;
pub mod strategy;
pub mod workload;

pub use error::{AllocateError, UnknownStrategy};
pub use queue::MessageQueue;
pub use rebalance::{
    plan_update, rebalance_allocate, rebalance_allocate_group, rebalance_allocate_in, SortOrder,
    UpdatePlan,
};
pub use strategy::{strategy_from_name, AllocateStrategy, StrategySpec, STRATEGY_NAMES};

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
