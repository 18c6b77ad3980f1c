//! What a search may spend, and why one stopped before its end: one budget
//! ([`Limits`]) and one stop reason ([`Cutoff`]) for every engine here (the
//! safety search, its distributed form and the graph).

use std::time::{Duration, Instant};

/// What a search may spend before it stops early.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many unique states.
    pub max_states: Option<usize>,
    /// Stop after this much time.
    pub timeout: Option<Duration>,
    /// Threads that expand states (0 and 1: the caller's alone). Every
    /// search finds the same with any number.
    pub threads: usize,
}

impl Limits {
    /// The threads to run: at least the caller's.
    pub fn workers(&self) -> usize {
        self.threads.max(1)
    }

    /// Whether `states` unique states reach the state limit.
    pub fn states_reached(&self, states: usize) -> bool {
        self.max_states.is_some_and(|max| states >= max)
    }

    /// Whether the time since `started` is past the timeout.
    pub fn timed_out(&self, started: Instant) -> bool {
        self.timeout.is_some_and(|t| started.elapsed() >= t)
    }

    /// The limit, if any, that `states` unique states at `started` have
    /// reached: the state limit first.
    pub fn reached(&self, states: usize, started: Instant) -> Option<Cutoff> {
        if self.states_reached(states) {
            Some(Cutoff::StateLimit)
        } else if self.timed_out(started) {
            Some(Cutoff::Timeout)
        } else {
            None
        }
    }
}

/// Why a search ended before it had visited every reachable state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `max_states` was reached.
    StateLimit,
    /// `timeout` passed.
    Timeout,
    /// Every property had its discovery: the rest would decide nothing.
    EveryPropertyDecided,
    /// Some states lie outside `Model::within_boundary` (a bounded model,
    /// or a run asked to stop) and were not expanded.
    Boundary,
    /// A state has more actions than an edge's action index can name.
    TooManyActions,
    /// More fairness classes than an edge's class index can name.
    TooManyClasses,
    /// More edges than 4 GiB of the graph's encoding hold.
    TooLarge,
    /// More distinct parts of states than a part's 32-bit id names (the
    /// graph keeps the states still to expand packed).
    TooManyParts,
    /// The scratch file that keeps the safety search's parents (in the
    /// temporary directory) could not be made, written or read.
    ScratchFailed,
}

/// Serialised as its description.
impl serde::Serialize for Cutoff {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for Cutoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cutoff::StateLimit => "state limit reached",
            Cutoff::Timeout => "timeout",
            Cutoff::EveryPropertyDecided => "every property decided",
            Cutoff::Boundary => "states outside the model's boundary",
            Cutoff::TooManyActions => "a state with more than 65,535 actions",
            Cutoff::TooManyClasses => "more than 65,535 fairness classes",
            Cutoff::TooLarge => "more than 4 GiB of edges",
            Cutoff::TooManyParts => "more than 2^32 distinct parts of states",
            Cutoff::ScratchFailed => "the scratch file in the temporary directory failed",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_limit_is_met_before_the_timeout() {
        let started = Instant::now();
        let none = Limits::default();
        assert_eq!(
            (none.reached(usize::MAX, started), none.workers()),
            (None, 1)
        );
        let both = Limits {
            max_states: Some(10),
            timeout: Some(Duration::ZERO),
            threads: 3,
        };
        assert_eq!(both.reached(10, started), Some(Cutoff::StateLimit));
        assert_eq!(both.reached(9, started), Some(Cutoff::Timeout));
        assert_eq!(both.workers(), 3);
    }
}
