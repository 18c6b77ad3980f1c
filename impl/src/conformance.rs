//! The conformance case format: allocation cases with the results the Java
//! client produced, one JSON object per line.
//!
//! A case names a strategy and its parameters, a queue list and a consumer
//! list; each entry of `results` is one allocate call for one `current` id,
//! with either the indices (into the case's own, unsorted, `queues`) of the
//! queues returned, in the order returned, or the error raised. This module
//! holds the schema (serde types; the caller picks the JSON library) and
//! [`Case::run`], which fills the results in with this crate's answers.
//!
//! ```
//! use rocketmq_rebalance::conformance::{Case, CallResult};
//! use rocketmq_rebalance::MessageQueue;
//!
//! let case = Case {
//!     strategy: "AVG".into(),
//!     sort: true,
//!     order: Default::default(),
//!     virtual_nodes: None,
//!     consumer_idcs: None,
//!     queues: vec![MessageQueue::new("T", "broker-b", 0), MessageQueue::new("T", "broker-a", 0)],
//!     consumers: vec!["c1".into(), "c2".into()],
//!     results: vec![CallResult::expect_queues("c1", vec![])],
//! };
//! let ours = case.run()?;
//! assert_eq!(ours[0].queues, Some(vec![1])); // broker-a sorts first
//! # Ok::<(), rocketmq_rebalance::conformance::CaseError>(())
//! ```

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::strategy::{ParameterError, StrategySpec};
use crate::{rebalance_allocate_in, AllocateStrategy, MessageQueue, SortOrder, UnknownStrategy};

/// One conformance case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A stable strategy name, as [`StrategySpec`] reads it.
    pub strategy: String,
    /// Sort copies of both lists first, as the client's rebalance does.
    pub sort: bool,
    /// With `sort`, the client's order: `java` (by UTF-16 code units, the
    /// Java client; the default, left out of the JSON) or `bytes` (by UTF-8
    /// bytes, as the Rust and Go clients sort).
    #[serde(default, skip_serializing_if = "SortOrder::is_java")]
    pub order: SortOrder,
    /// `CONSISTENT_HASH` only: virtual nodes per consumer (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_nodes: Option<i64>,
    /// `MACHINE_ROOM` only: the consumers' machine rooms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_idcs: Option<Vec<String>>,
    /// The topic's queues, in the order given.
    pub queues: Vec<MessageQueue>,
    /// The group's client ids, in the order given.
    pub consumers: Vec<String>,
    /// One allocate call per entry.
    pub results: Vec<CallResult>,
}

/// One allocate call of a case and what it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallResult {
    /// The client id that calls allocate.
    pub current: String,
    /// Indices into the case's `queues` of the queues returned, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<Vec<usize>>,
    /// The error raised instead (Java's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CallResult {
    /// A call by `current` that returns the queues at `indices`.
    pub fn expect_queues(current: impl Into<String>, indices: Vec<usize>) -> Self {
        CallResult {
            current: current.into(),
            queues: Some(indices),
            error: None,
        }
    }

    /// Whether `self` (expected) and `actual` agree: the same queues in the
    /// same order, or both an error (the message text may differ).
    pub fn agrees_with(&self, actual: &CallResult) -> bool {
        match (&self.error, &actual.error) {
            (Some(_), Some(_)) => true,
            (None, None) => {
                self.queues.as_deref().unwrap_or(&[]) == actual.queues.as_deref().unwrap_or(&[])
            }
            _ => false,
        }
    }
}

/// What makes a case unreadable, as opposed to an outcome the Java client
/// could give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseError {
    /// The strategy name is not one this crate knows.
    UnknownStrategy(UnknownStrategy),
    /// A parameter is given to a strategy that does not take it.
    Parameter(ParameterError),
}

impl fmt::Display for CaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownStrategy(e) => e.fmt(f),
            Self::Parameter(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CaseError {}

impl From<UnknownStrategy> for CaseError {
    fn from(e: UnknownStrategy) -> Self {
        Self::UnknownStrategy(e)
    }
}

impl From<ParameterError> for CaseError {
    fn from(e: ParameterError) -> Self {
        Self::Parameter(e)
    }
}

impl Case {
    /// The strategy the case describes with its parameters; the inner
    /// `Err` is the failure its construction raises in Java (a negative
    /// virtual node count), which every call of the case then reports.
    pub fn spec(&self) -> Result<Result<StrategySpec, String>, CaseError> {
        let mut spec: StrategySpec = self.strategy.parse()?;
        if let Some(rooms) = &self.consumer_idcs {
            spec = spec.with_consumer_rooms(rooms.iter().cloned())?;
        }
        if let Some(nodes) = self.virtual_nodes {
            // Validated even when negative, so that a misplaced parameter
            // is reported as such.
            spec = spec.with_virtual_nodes(usize::try_from(nodes).unwrap_or(0))?;
            if nodes < 0 {
                return Ok(Err(format!("illegal virtualNodeCnt :{nodes}")));
            }
        }
        Ok(Ok(spec))
    }

    /// This crate's answer to every call of the case, in the case's order.
    pub fn run(&self) -> Result<Vec<CallResult>, CaseError> {
        match self.spec()? {
            Ok(spec) => Ok(self.run_with(spec.build().as_ref())),
            Err(error) => Ok(self.failed_with(&error)),
        }
    }

    /// Every call of the case answered by `strategy` (built by the caller
    /// from [`Case::spec`], for instance another implementation of the same
    /// strategy), with the case's sorting.
    ///
    /// ```
    /// use rocketmq_rebalance::conformance::{Case, CallResult};
    /// use rocketmq_rebalance::strategy::AveragelyByCircle;
    /// use rocketmq_rebalance::MessageQueue;
    ///
    /// let case = Case {
    ///     strategy: "AVG".into(),
    ///     sort: false,
    ///     order: Default::default(),
    ///     virtual_nodes: None,
    ///     consumer_idcs: None,
    ///     queues: (0..3).map(|i| MessageQueue::new("T", "b", i)).collect(),
    ///     consumers: vec!["c1".into(), "c2".into()],
    ///     results: vec![CallResult::expect_queues("c1", vec![0, 1])],
    /// };
    /// let other = case.run_with(&AveragelyByCircle);
    /// assert_eq!(other[0].queues, Some(vec![0, 2]));
    /// assert!(!case.results[0].agrees_with(&other[0]));
    /// ```
    pub fn run_with(&self, strategy: &dyn AllocateStrategy) -> Vec<CallResult> {
        let mut index_of: HashMap<&MessageQueue, usize> = HashMap::with_capacity(self.queues.len());
        for (i, queue) in self.queues.iter().enumerate() {
            index_of.entry(queue).or_insert(i);
        }
        self.results
            .iter()
            .map(|call| {
                let current = call.current.as_str();
                let answer = if self.sort {
                    rebalance_allocate_in(
                        self.order,
                        strategy,
                        "group",
                        current,
                        &self.queues,
                        &self.consumers,
                    )
                } else {
                    strategy
                        .allocate("group", current, &self.queues, &self.consumers)
                        .map(|mine| mine.into_iter().cloned().collect())
                };
                match answer {
                    Ok(mine) => CallResult {
                        current: call.current.clone(),
                        // Configured strategies may answer queues outside the
                        // case's list; they have no index to report.
                        queues: Some(
                            mine.iter()
                                .filter_map(|q| index_of.get(q).copied())
                                .collect(),
                        ),
                        error: None,
                    },
                    Err(error) => CallResult {
                        current: call.current.clone(),
                        queues: None,
                        error: Some(error.to_string()),
                    },
                }
            })
            .collect()
    }

    /// Every call failing with `error`, as when the strategy cannot be
    /// constructed.
    fn failed_with(&self, error: &str) -> Vec<CallResult> {
        self.results
            .iter()
            .map(|call| CallResult {
                current: call.current.clone(),
                queues: None,
                error: Some(error.to_string()),
            })
            .collect()
    }
}
