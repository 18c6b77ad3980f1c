//! Real RocketMQ against the model: runs a scenario script on a real
//! RocketMQ cluster on loopback, records one merged trace, and judges the
//! outcome in the words of `rebalance check`.
//!
//! The pieces, each a module: the [`script`] format (and the [`random`]
//! scripts of randomised runs); the Java [`harness`] (name servers and
//! brokers in one JVM, each consumer in its own) and the orchestrator that
//! drives it ([`run`]); the [`trace`], one typed vocabulary of its events;
//! the [`observe`]r, a fold of the trace that the orchestrator's waits and
//! the verdicts share; the [`outcome`], with its comparison against the
//! model's report; the [`harms`] users fear (pauses, duplicates, backlog),
//! measured on the run; the [`translate`]r of a trace into the model's
//! observations, for trace validation; and the [`pipeline`], all of it in
//! one call that returns the judged run. Only [`run`], [`harness`] and
//! [`pipeline::run`] do I/O.
//!
//! ```
//! use rocketmq_rebalance_cluster::script::Script;
//!
//! let script = Script::parse(r#"{
//!     "scenario": "healthy", "what": "c2 joins", "model": ["--scenario", "healthy"],
//!     "consumers": [{"name": "c1"}, {"name": "c2"}],
//!     "steps": [{"start": "c1"}, {"start": "c2"}, {"await": {"for": "settled", "timeout_s": 60}}]
//! }"#).unwrap();
//! assert_eq!(script.broker_names(), ["broker-a", "broker-b"]);
//! ```

#![forbid(unsafe_code)]

use std::fmt;
use std::path::PathBuf;

pub mod harms;
pub mod harness;
pub mod observe;
pub mod outcome;
pub mod pipeline;
pub mod random;
pub mod run;
pub mod script;
pub mod trace;
pub mod translate;

/// Why a run did not give an outcome.
#[derive(Debug)]
pub enum ClusterError {
    /// Bad input: a script, a flag, a missing Java or Maven (exit 2).
    BadInput(String),
    /// The cluster, or a process of it, did not start or died (exit 3).
    NotStarted {
        /// What happened.
        reason: String,
        /// The log that says why.
        log: PathBuf,
    },
}

impl ClusterError {
    /// The program's exit status for it.
    pub fn exit_code(&self) -> u8 {
        match self {
            ClusterError::BadInput(_) => 2,
            ClusterError::NotStarted { .. } => 3,
        }
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::BadInput(m) => f.write_str(m),
            ClusterError::NotStarted { reason, log } => {
                write!(f, "{reason} (log: {})", log.display())
            }
        }
    }
}

impl std::error::Error for ClusterError {}
