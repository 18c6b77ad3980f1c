//! What a search may spend, and why one stopped before its end: one budget
//! ([`Limits`]) and one stop reason ([`Cutoff`]) for every engine here (the
//! safety search, its distributed form and the graph).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// What a search may spend before it stops early.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many unique states.
    pub max_states: Option<usize>,
    /// Stop after this much time.
    pub timeout: Option<Duration>,
    /// Stop once this process's resident memory reaches this many bytes
    /// (Linux's `VmRSS`; where it cannot be read, never).
    pub memory: Option<u64>,
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

    /// Whether this process's resident memory has reached the memory
    /// budget. The memory is read at most every [`MEMORY_SAMPLE`] a thread,
    /// so a search may ask as often as it asks the time.
    pub fn memory_reached(&self) -> bool {
        thread_local! {
            static LAST: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
        }
        let Some(budget) = self.memory else {
            return false;
        };
        LAST.with(|last| {
            let resident = match last.get() {
                Some((at, bytes)) if at.elapsed() < MEMORY_SAMPLE => Some(bytes),
                _ => {
                    let bytes = resident_bytes();
                    last.set(bytes.map(|b| (Instant::now(), b)));
                    bytes
                }
            };
            resident.is_some_and(|bytes| bytes >= budget)
        })
    }

    /// The limit, if any, that `states` unique states at `started` have
    /// reached: the state limit first, then the time, then the memory.
    pub fn reached(&self, states: usize, started: Instant) -> Option<Cutoff> {
        if self.states_reached(states) {
            Some(Cutoff::StateLimit)
        } else {
            self.time_or_memory_reached(started)
        }
    }

    /// The limit, if any, other than the states' that a search begun at
    /// `started` has reached: the time, then the memory. Each reads a
    /// clock, so a search asks once per batch of states, and asks
    /// [`Limits::states_reached`] first.
    pub fn time_or_memory_reached(&self, started: Instant) -> Option<Cutoff> {
        if self.timed_out(started) {
            Some(Cutoff::Timeout)
        } else if self.memory_reached() {
            Some(Cutoff::MemoryBudget)
        } else {
            None
        }
    }
}

/// How long a thread trusts its last reading of the resident memory.
pub const MEMORY_SAMPLE: Duration = Duration::from_millis(50);

/// This process's resident memory in bytes (`VmRSS` of Linux's
/// `/proc/self/status`); `None` where there is no such file.
pub fn resident_bytes() -> Option<u64> {
    kilobytes(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmRSS:",
    )
}

/// The memory budget of a check that names none: nine tenths of this
/// machine's memory, so that a run stops and says so before the system
/// kills it; `None` where the machine's memory cannot be read.
///
/// ```
/// use rocketmq_rebalance_model::{default_memory, CheckOptions};
///
/// let options = CheckOptions {
///     memory: default_memory(),
///     ..CheckOptions::default()
/// };
/// assert!(options.memory.map_or(true, |bytes| bytes > 0));
/// ```
pub fn default_memory() -> Option<u64> {
    machine_bytes().map(|bytes| bytes / 10 * 9)
}

/// This machine's memory in bytes (`MemTotal` of Linux's
/// `/proc/meminfo`); `None` where there is no such file.
fn machine_bytes() -> Option<u64> {
    kilobytes(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemTotal:")
}

/// The field `name` of a Linux `/proc` table, in kB, as bytes.
fn kilobytes(table: &str, name: &str) -> Option<u64> {
    let value = table.lines().find_map(|line| line.strip_prefix(name))?;
    let kb: u64 = value.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kb.checked_mul(1024)
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
    /// The process's resident memory reached [`Limits::memory`].
    MemoryBudget,
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
            Cutoff::MemoryBudget => "the memory budget reached",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_are_the_states_the_time_and_the_memory() {
        let started = Instant::now();
        let none = Limits::default();
        assert_eq!(
            (
                none.states_reached(usize::MAX),
                none.time_or_memory_reached(started),
                none.workers()
            ),
            (false, None, 1)
        );
        let all = Limits {
            max_states: Some(10),
            timeout: Some(Duration::ZERO),
            memory: Some(1),
            threads: 3,
        };
        assert_eq!(all.reached(10, started), Some(Cutoff::StateLimit));
        assert_eq!(all.reached(9, started), Some(Cutoff::Timeout));
        assert_eq!(all.time_or_memory_reached(started), Some(Cutoff::Timeout));
        let memory = Limits {
            timeout: None,
            ..all
        };
        assert_eq!(
            memory.time_or_memory_reached(started),
            Some(Cutoff::MemoryBudget)
        );
        assert_eq!(all.workers(), 3);
    }

    #[test]
    fn the_memory_budget_is_this_process_s_resident_memory() {
        let resident = resident_bytes().expect("Linux's /proc/self/status");
        let machine = machine_bytes().expect("Linux's /proc/meminfo");
        assert!(
            0 < resident && resident < machine,
            "{resident} of {machine}"
        );
        let default = default_memory().expect("nine tenths of the machine's");
        assert!(machine / 10 * 8 < default && default < machine, "{default}");
        let limits = |memory| Limits {
            memory: Some(memory),
            ..Limits::default()
        };
        assert!(limits(resident / 2).memory_reached());
        // The same reading, within the sample's time, for another budget.
        assert!(!limits(machine).memory_reached());
        assert!(!Limits::default().memory_reached());
        assert_eq!(kilobytes("VmRSS:\t  2048 kB\n", "VmRSS:"), Some(2 << 20));
        assert_eq!(kilobytes("VmRSS: 2048 MB\n", "VmRSS:"), None);
    }

    #[test]
    fn a_thread_reads_the_memory_again_once_its_reading_is_old() {
        let before = resident_bytes().expect("Linux's /proc/self/status");
        let budget = Limits {
            memory: Some(before + (64 << 20)),
            ..Limits::default()
        };
        assert!(!budget.memory_reached());
        // Written to, so resident.
        let grown = std::hint::black_box(vec![1u8; 256 << 20]);
        std::thread::sleep(MEMORY_SAMPLE * 2);
        assert!(budget.memory_reached(), "{} bytes grown", grown.len());
    }
}
