//! What a check found: typed, serialised as `rebalance check --json` prints
//! it, and never calling an incomplete run a success.

use std::fmt;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::config::{NetworkKind, ProtocolOptions, Scenario, Sizes};
use crate::guarantees::FULL_CONVERGENCE;
use crate::search::Cutoff;

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Every reachable state was visited: the only complete ending.
    Exhausted,
    /// Every property had a verdict before the space was exhausted.
    EveryPropertyDecided,
    /// The time limit passed.
    Timeout,
    /// The state limit was reached.
    StateLimit,
    /// A simulation, which samples paths and is never exhaustive.
    Simulation,
    /// A checker thread panicked.
    CheckerPanicked,
    /// The workers of a distributed search could not be started or
    /// connected.
    WorkersFailed,
    /// The safety search's scratch file (its log of parents, in the
    /// temporary directory) could not be made, written or read: the disk
    /// is full, or the directory is not there or not writable.
    ScratchFailed,
    /// The process's resident memory reached the budget
    /// (`CheckOptions::memory`).
    MemoryBudget,
    /// The liveness graph was cut short (and with it, when it also
    /// decided them, the safety properties).
    LivenessGraphCut(Cutoff),
    /// The second pass, which measures the harms over the whole space,
    /// was cut short: the harms are missing, never silently absent.
    HarmsCut(Cutoff),
}

impl Stopped {
    /// Whether every reachable state was visited.
    pub fn is_complete(self) -> bool {
        self == Self::Exhausted
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exhausted => f.write_str("exhausted"),
            Self::EveryPropertyDecided => f.write_str("every property decided"),
            Self::Timeout => f.write_str("timeout"),
            Self::StateLimit => f.write_str("state limit"),
            Self::Simulation => f.write_str("simulation"),
            Self::CheckerPanicked => f.write_str("checker thread panicked"),
            Self::WorkersFailed => f.write_str("the distributed workers failed"),
            Self::ScratchFailed => f.write_str(
                "the scratch file in the temporary directory (TMPDIR) could not be written",
            ),
            Self::MemoryBudget => f.write_str("memory budget (--memory)"),
            Self::LivenessGraphCut(cutoff) => write!(f, "liveness graph cut: {cutoff}"),
            Self::HarmsCut(cutoff) => {
                write!(f, "harms cut: {cutoff} (the harms are not measured)")
            }
        }
    }
}

/// Serialised as two fields of the report: `complete` and `stopped` (the
/// reason in words).
impl Serialize for Stopped {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("complete", &self.is_complete())?;
        map.serialize_entry("stopped", &self.to_string())?;
        map.end()
    }
}

/// What a property promises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expectation {
    /// In every reachable state (a counterexample is a failure).
    Always,
    /// In some reachable state (an example is required, proving the model
    /// reaches the hazard).
    Sometimes,
    /// On every fair execution, in the end and for ever.
    Eventually,
}

impl From<stateright::Expectation> for Expectation {
    fn from(e: stateright::Expectation) -> Self {
        match e {
            stateright::Expectation::Always => Self::Always,
            stateright::Expectation::Sometimes => Self::Sometimes,
            stateright::Expectation::Eventually => Self::Eventually,
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Always => "always",
            Self::Sometimes => "sometimes",
            Self::Eventually => "eventually",
        })
    }
}

/// The verdict on one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// An `always` or `eventually` property with no counterexample in a
    /// complete run.
    Holds,
    /// An `always` or `eventually` property with a counterexample.
    Violated,
    /// A `sometimes` property with an example.
    Found,
    /// A `sometimes` property without example in a complete run.
    NotFound,
    /// No verdict: the run stopped before deciding.
    Unknown,
}

impl Status {
    /// The verdict for `expectation` when a (counter)example was `found` or
    /// not, in a run that was `complete` or not.
    pub fn of(expectation: Expectation, found: bool, complete: bool) -> Self {
        match (expectation, found, complete) {
            (Expectation::Sometimes, true, _) => Self::Found,
            (Expectation::Sometimes, false, true) => Self::NotFound,
            (_, true, _) => Self::Violated,
            (_, false, true) => Self::Holds,
            (_, false, false) => Self::Unknown,
        }
    }

    /// Whether this verdict fails a run.
    pub fn failed(self) -> bool {
        matches!(self, Self::Violated | Self::NotFound)
    }
}

/// One property in a report.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    /// The guarantee's name.
    pub name: String,
    /// What it promises.
    pub expectation: Expectation,
    /// The verdict.
    pub status: Status,
    /// The readable trace of the (counter)example, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<String>>,
    /// The path to open in Stateright's explorer (`#/steps/...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explorer_path: Option<String>,
    /// The same path as Explorer action indices: the initial state's index,
    /// then one per step. Replayed on the checked model
    /// ([`crate::check::checked_model`]) they rebuild every state of the
    /// trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<u32>>,
    /// For a lasso (a counterexample of an `eventually` property): the
    /// steps taken before its cycle. The steps after it repeat for ever;
    /// when it is the last step, the last state stays for ever.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle_start: Option<usize>,
}

/// Figures of one liveness check.
#[derive(Clone, Debug, Serialize)]
pub struct LivenessStats {
    /// Distinct states in the graph.
    pub states: usize,
    /// Transitions between them.
    pub edges: usize,
    /// Bytes the graph holds per state.
    pub bytes_per_state: usize,
    /// Seconds to build and analyse the graph.
    pub seconds: f64,
    /// Why the graph is partial, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<Cutoff>,
}

/// The outcome of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The scenario checked.
    pub scenario: Scenario,
    /// The strategy's name.
    pub strategy: String,
    /// The network semantics.
    pub network: NetworkKind,
    /// Sizes and budgets.
    pub sizes: Sizes,
    /// The optional parts of the protocol modelled.
    pub protocol: ProtocolOptions,
    /// Why the run ended (serialised as `complete` and `stopped`).
    #[serde(flatten)]
    pub stopped: Stopped,
    /// States generated, repeats included.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// Deepest path explored (with liveness checked on one exploration,
    /// the breadth-first depth: the most steps any state needs).
    pub max_depth: usize,
    /// Wall-clock seconds of the exploration that decided the safety
    /// properties (with liveness on one exploration, the graph's build).
    pub seconds: f64,
    /// Distinct states per second.
    pub unique_states_per_second: f64,
    /// States generated per distinct state: the work of the search per
    /// state it found, which sleep sets cut.
    pub generated_per_unique: f64,
    /// Whether the safety search pruned transitions with sleep sets.
    pub reduction: bool,
    /// Bits of the fingerprints that stood for the states.
    pub fingerprint_bits: u32,
    /// The estimated probability that two distinct states got the same
    /// fingerprint, so that one was never explored: the birthday bound
    /// n(n-1)/2^(b+1) for n unique states and b bits (the estimate TLC
    /// prints as "calculated (optimistic)"), at most 1. It bounds the
    /// chance that a `holds` or `not found` verdict missed a state.
    pub collision_probability: f64,
    /// Verdicts, in model order (the liveness property last, when checked).
    pub properties: Vec<PropertyReport>,
    /// Figures of the liveness check, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness: Option<LivenessStats>,
    /// With messages, what the rebalance costs over the whole reachable
    /// space (a complete run's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub harms: Option<crate::check::harms::Harms>,
}

impl Report {
    /// Every reachable state was visited (and, with liveness, the whole
    /// graph analysed).
    pub fn complete(&self) -> bool {
        self.stopped.is_complete()
    }

    /// The verdict on the property called `name`.
    pub fn property(&self, name: &str) -> Option<&PropertyReport> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// Every property holds and the run was complete.
    pub fn passed(&self) -> bool {
        self.complete() && !self.properties.iter().any(|p| p.status.failed())
    }

    /// What a strategy author needs: a complete run in which every `always`
    /// and `eventually` property holds and full convergence is reached. The
    /// other `sometimes` properties only show that the model can reach a
    /// hazard; a strategy that never lets a queue change hands without a gap
    /// never produces them, and that is no failure of the strategy.
    pub fn guarantees_hold(&self) -> bool {
        self.complete()
            && self.properties.iter().all(|p| match p.expectation {
                Expectation::Always | Expectation::Eventually => p.status == Status::Holds,
                Expectation::Sometimes => p.name != FULL_CONVERGENCE || p.status == Status::Found,
            })
    }

    /// 0: complete and every property holds; 1: a property fails;
    /// 3: incomplete (never success).
    pub fn exit_code(&self) -> u8 {
        if self.properties.iter().any(|p| p.status.failed()) {
            1
        } else if !self.complete() {
            3
        } else {
            0
        }
    }
}
