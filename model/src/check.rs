//! Runs a checker over the model and turns the outcome into a [`Report`]
//! that never calls an incomplete run a success.

use crate::actor::RebalanceModel;
use crate::config::{NetworkKind, Scenario, Sizes};
use crate::graph::{encode_path, path_of, shortest_path_to_bad, Limits, Predicate};
use crate::properties::{FULL_CONVERGENCE, PROPERTIES};
use crate::trace::describe_path;
use stateright::{Checker, Expectation, Model, UniformChooser};
use std::time::{Duration, Instant};

/// How the state space is explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Breadth first: whole states in the frontier, shallower traces.
    Bfs,
    /// Depth first: fingerprints only, the fastest and smallest.
    Dfs,
    /// Random walks from this seed: never exhaustive.
    Simulate(u64),
}

/// Limits and resources of one run.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Exploration order.
    pub search: Search,
    /// Checker threads.
    pub threads: usize,
    /// Stop after about this many states (then the run is incomplete).
    pub max_states: Option<usize>,
    /// Stop after this long (then the run is incomplete).
    pub timeout: Option<Duration>,
    /// How often the progress callback runs.
    pub progress_every: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            search: Search::Dfs,
            threads: 1,
            max_states: None,
            timeout: None,
            progress_every: Duration::from_secs(3),
        }
    }
}

/// Counters of a running or finished check.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Progress {
    /// States generated, repeats included.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// Deepest path explored.
    pub max_depth: usize,
    /// Seconds since the start.
    pub seconds: f64,
}

impl Progress {
    /// Distinct states per second.
    pub fn unique_per_second(&self) -> f64 {
        self.unique_states as f64 / self.seconds.max(1e-9)
    }
}

/// The verdict on one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// An `always` property with no counterexample in a complete run.
    Holds,
    /// An `always` property with a counterexample.
    Violated,
    /// A `sometimes` property with an example.
    Found,
    /// A `sometimes` property without example in a complete run.
    NotFound,
    /// No verdict: the run stopped before deciding.
    Unknown,
}

/// One property in a report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PropertyReport {
    /// The guarantee's name.
    pub name: String,
    /// `always`, `sometimes` or `eventually`.
    pub expectation: &'static str,
    /// The verdict.
    pub status: Status,
    /// The readable trace of the (counter)example, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<String>>,
    /// The path to open in Stateright's explorer (`#/steps/...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explorer_path: Option<String>,
}

impl PropertyReport {
    /// Whether this verdict fails the run.
    pub fn failed(&self) -> bool {
        matches!(self.status, Status::Violated | Status::NotFound)
    }
}

/// The outcome of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The scenario checked.
    pub scenario: Scenario,
    /// The strategy's name.
    pub strategy: String,
    /// The network semantics.
    pub network: NetworkKind,
    /// Sizes and budgets.
    pub sizes: Sizes,
    /// Every reachable state was visited.
    pub complete: bool,
    /// Why the run ended: `exhausted`, `every property decided`, `timeout`,
    /// `state limit`, `simulation` or `checker thread panicked`.
    pub stopped: String,
    /// States generated, repeats included.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// Deepest path explored.
    pub max_depth: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Distinct states per second.
    pub unique_states_per_second: f64,
    /// Verdicts, in model order (the liveness property last, when checked).
    pub properties: Vec<PropertyReport>,
    /// Figures of the liveness check, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liveness: Option<crate::fairness::LivenessStats>,
}

impl Report {
    /// The verdict on the property called `name`.
    pub fn property(&self, name: &str) -> Option<&PropertyReport> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// Every property holds and the run was complete.
    pub fn passed(&self) -> bool {
        self.complete && !self.properties.iter().any(PropertyReport::failed)
    }

    /// What a strategy author needs: a complete run in which every `always`
    /// property holds and full convergence is reached. The other
    /// `sometimes` properties only show that the model can reach a hazard;
    /// a strategy that never lets a queue change hands without a gap never
    /// produces them, and that is no failure of the strategy.
    pub fn guarantees_hold(&self) -> bool {
        self.complete
            && self.properties.iter().all(|p| match p.expectation {
                "always" => p.status == Status::Holds,
                _ => p.name != FULL_CONVERGENCE || p.status == Status::Found,
            })
    }

    /// 0: complete and every property holds; 1: a property fails;
    /// 3: incomplete (never success).
    pub fn exit_code(&self) -> u8 {
        if self.properties.iter().any(PropertyReport::failed) {
            1
        } else if !self.complete {
            3
        } else {
            0
        }
    }
}

/// Checks `model`, calling `progress` every `options.progress_every`.
/// A simulation without `timeout` or `max_states` never ends.
pub fn check(
    model: RebalanceModel,
    options: &CheckOptions,
    progress: impl FnMut(&Progress),
) -> Report {
    let builder = model.checker().threads(options.threads.max(1));
    let start = Instant::now();
    match options.search {
        Search::Bfs => drive(builder.spawn_bfs(), options, start, progress),
        Search::Dfs => drive(builder.spawn_dfs(), options, start, progress),
        Search::Simulate(seed) => {
            // Random walks restart from the initial state for ever, so the
            // stop flag alone cannot end them: use Stateright's limits too.
            let mut builder = builder;
            if let Some(max) = options.max_states {
                builder = builder.target_state_count(max);
            }
            if let Some(timeout) = options.timeout {
                builder = builder.timeout(timeout);
            }
            drive(
                builder.spawn_simulation(seed, UniformChooser),
                options,
                start,
                progress,
            )
        }
    }
}

fn drive(
    mut checker: impl Checker<RebalanceModel>,
    options: &CheckOptions,
    start: Instant,
    mut progress: impl FnMut(&Progress),
) -> Report {
    let counters = |c: &dyn Fn() -> (usize, usize, usize)| {
        let (states, unique_states, max_depth) = c();
        Progress {
            states,
            unique_states,
            max_depth,
            seconds: start.elapsed().as_secs_f64(),
        }
    };
    let handles = checker.handles();
    let mut last_report = Instant::now();
    let mut limit = None;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        if limit.is_none() {
            if options.timeout.is_some_and(|t| start.elapsed() >= t) {
                limit = Some("timeout");
            } else if options
                .max_states
                .is_some_and(|m| checker.state_count() >= m)
            {
                limit = Some("state limit");
            }
            if limit.is_some() {
                checker.model().cfg.request_stop();
            }
        }
        if last_report.elapsed() >= options.progress_every {
            last_report = Instant::now();
            progress(&counters(&|| {
                (
                    checker.state_count(),
                    checker.unique_state_count(),
                    checker.max_depth(),
                )
            }));
        }
    }
    let panicked = handles.into_iter().any(|h| h.join().is_err());
    let done = counters(&|| {
        (
            checker.state_count(),
            checker.unique_state_count(),
            checker.max_depth(),
        )
    });
    let model = checker.model();
    let discoveries = checker.discoveries();
    let all_decided = discoveries.len() == PROPERTIES.len();
    let stopped = if panicked {
        "checker thread panicked"
    } else if all_decided {
        "every property decided"
    } else if let Some(limit) = limit {
        limit
    } else if matches!(options.search, Search::Simulate(_)) {
        "simulation"
    } else {
        "exhausted"
    };
    let complete = stopped == "exhausted";
    // Stateright's counterexamples are not the shortest (BFS keeps a later
    // violating state; DFS goes deep first): search breadth-first again,
    // within what is left of the time budget, and keep Stateright's when
    // that runs out.
    let shortest_limits = Limits {
        max_states: options.max_states,
        timeout: options.timeout.map(|t| t.saturating_sub(start.elapsed())),
        stop_at_bad: true,
    };
    let properties = model
        .properties()
        .into_iter()
        .map(|p| {
            // Counterexamples only: an example of a `sometimes` property may
            // lie deep, and searching for it breadth-first would cost more
            // than the check.
            let counterexample = p.expectation != Expectation::Sometimes;
            let shortest = discoveries
                .get(p.name)
                .filter(|_| counterexample)
                .and_then(|_| {
                    let target = Predicate {
                        condition: p.condition,
                        holds_when: p.expectation != Expectation::Sometimes,
                    };
                    shortest_path_to_bad(model, &target, shortest_limits)
                        .and_then(|indices| Some((path_of(model, &indices)?, indices)))
                });
            let found = discoveries.get(p.name);
            let status = match (&p.expectation, found.is_some(), complete) {
                (Expectation::Sometimes, true, _) => Status::Found,
                (Expectation::Sometimes, false, true) => Status::NotFound,
                (_, true, _) => Status::Violated,
                (_, false, true) => Status::Holds,
                (_, false, false) => Status::Unknown,
            };
            PropertyReport {
                name: p.name.to_string(),
                expectation: match p.expectation {
                    Expectation::Always => "always",
                    Expectation::Sometimes => "sometimes",
                    Expectation::Eventually => "eventually",
                },
                status,
                trace: match &shortest {
                    Some((path, _)) => Some(describe_path(model, path)),
                    None => found.map(|path| describe_path(model, path)),
                },
                explorer_path: match &shortest {
                    Some((_, indices)) => Some(format!("#/steps/{}", encode_path(indices))),
                    None => found.map(|path| format!("#/steps/{}", path.encode(model))),
                },
            }
        })
        .collect();
    let cfg = &model.cfg;
    Report {
        scenario: cfg.scenario,
        strategy: cfg.strategy.name().to_string(),
        network: cfg.network,
        sizes: cfg.sizes,
        complete,
        stopped: stopped.into(),
        states: done.states,
        unique_states: done.unique_states,
        max_depth: done.max_depth,
        seconds: done.seconds,
        unique_states_per_second: done.unique_per_second(),
        properties,
        liveness: None,
    }
}
