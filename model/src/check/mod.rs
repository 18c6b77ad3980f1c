//! One call checks a configuration: safety with the project's breadth-first
//! search and its sleep sets ([`crate::search::bfs`]; Stateright's
//! simulation for random walks) and, when asked, liveness with the
//! fair-cycle search, and returns the finished
//! [`Report`] ([`report`]), which never calls an incomplete run a success.

pub mod harms;
pub mod liveness;
pub mod report;

pub use report::{Expectation, LivenessStats, PropertyReport, Report, Status, Stopped};

use std::time::{Duration, Instant};

use stateright::{Checker, Model, Path, Property, UniformChooser};

use crate::config::Config;
use crate::guarantees::NO_LONG_STALL;
use crate::model::build_model;
use crate::search::bfs;
use crate::search::dataflow::{self, Failed, Workers};
use crate::search::{
    collision_probability, encode_path, indices_of, path_of, shortest_path_to_bad, Cutoff, Limits,
    Predicate,
};
use crate::shell::independence::ActorIndependence;
use crate::shell::{Action, RebalanceModel, SystemState};
use crate::trace::describe_path;

/// How the state space is explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Breadth first, level by level, with sleep sets unless
    /// [`CheckOptions::reduction`] is off: one level of whole states kept,
    /// the others as fingerprints; shortest counterexamples and examples.
    Bfs,
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
    /// Stop once this process's resident memory reaches this many bytes
    /// (then the run is incomplete; [`Limits::memory`]). The distributed
    /// search ([`CheckOptions::workers`]) does not watch it.
    pub memory: Option<u64>,
    /// How often the progress callback runs.
    pub progress_every: Duration,
    /// Also check liveness under fairness ("converges and stays
    /// converged"): weak for deliveries and timers, strong for the random
    /// pick of a broker and the orderly clock's ticks. The model then has the periodic rebalance
    /// ([`Config::periodic_rebalance`]), which both parts explore.
    pub liveness: bool,
    /// Prune transitions with sleep sets (`search/bfs.rs`): the
    /// same states, verdicts and shortest paths, fewer states generated.
    /// Off, every enabled action is taken, as Stateright's checkers do.
    pub reduction: bool,
    /// Bits of the safety search's fingerprints: 64, or 128 for runs of
    /// billions of states, where two 64-bit fingerprints may well collide
    /// (see [`Report::collision_probability`]). The liveness graph's are
    /// 64 bits.
    pub fingerprint_bits: FingerprintBits,
    /// Run the safety search on timely dataflow ([`Workers`]), over
    /// worker threads or processes on several machines, instead of this
    /// process's threads: the same states, verdicts and paths. Not with
    /// `liveness`, whose graph is built in one process.
    pub workers: Option<Workers>,
    /// With messages: the longest a queue may stall
    /// ([`Harms::max_stall_ticks`](harms::Harms), in its unit), checked as
    /// the property [`NO_LONG_STALL`]. None: the stall is measured only.
    pub max_stall: Option<usize>,
    /// With messages, measure the harms ([`Report::harms`]: deliveries,
    /// duplicates, pauses, stalls) once the safety search is complete. The
    /// measure walks every edge of the state graph, most of such a check's
    /// time; off, a caller that wants only the verdicts skips it, and
    /// `max_stall` checks nothing.
    pub harms: bool,
}

/// The width of the safety search's fingerprints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum FingerprintBits {
    /// 64 bits: 8 bytes a state, and a collision likely past about four
    /// billion states.
    #[default]
    #[serde(rename = "64")]
    B64,
    /// 128 bits: 8 bytes more a state.
    #[serde(rename = "128")]
    B128,
}

impl FingerprintBits {
    /// The width in bits.
    pub fn bits(self) -> u32 {
        match self {
            FingerprintBits::B64 => 64,
            FingerprintBits::B128 => 128,
        }
    }
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            search: Search::Bfs,
            threads: 1,
            max_states: None,
            timeout: None,
            memory: None,
            progress_every: Duration::from_secs(3),
            liveness: false,
            reduction: true,
            fingerprint_bits: FingerprintBits::B64,
            workers: None,
            max_stall: None,
            harms: true,
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

/// Checks `cfg`, calling `progress` every `options.progress_every`: the
/// safety properties, then liveness when `options.liveness` asks for it.
/// A simulation without `timeout` or `max_states` never ends.
pub fn check(cfg: Config, options: &CheckOptions, progress: impl FnMut(&Progress)) -> Report {
    check_model(checked_model(cfg, options), options, progress)
}

/// The model that [`check`] explores for `cfg`: with the periodic rebalance
/// when `options.liveness` asks for it. The paths of its report
/// ([`PropertyReport::path`]) are paths of this model.
pub fn checked_model(cfg: Config, options: &CheckOptions) -> RebalanceModel {
    build_model(cfg.with_periodic_rebalance(options.liveness))
}

/// [`check`] on a model built by [`checked_model`] with the same options,
/// for a caller that keeps the model to replay the report's paths.
pub fn check_model(
    model: RebalanceModel,
    options: &CheckOptions,
    progress: impl FnMut(&Progress),
) -> Report {
    let start = Instant::now();
    // An exhaustive run with liveness needs the whole graph anyway: then
    // one exploration decides every property.
    let one_exploration = options.liveness && liveness::decides_safety(&model, options.search);
    let mut report = if one_exploration {
        let limits = graph_limits(options, start);
        liveness::check(&model, limits, options.progress_every, progress)
    } else {
        check_safety(model.clone(), options, start, progress)
    };
    if options.harms && model.cfg.messages() && report.complete() {
        match harms::measure(&model, graph_limits(options, start)) {
            Ok(harms) => {
                if let Some(bound) = options.max_stall {
                    report.properties.push(stall_report(&model, &harms, bound));
                }
                report.harms = Some(harms);
            }
            Err(cutoff) => report.stopped = Stopped::HarmsCut(cutoff),
        }
    }
    if options.liveness && !one_exploration {
        let limits = graph_limits(options, start);
        let (properties, stats) = liveness::check_liveness(&model, limits);
        if let (Some(cutoff), true) = (stats.cutoff, report.complete()) {
            report.stopped = Stopped::LivenessGraphCut(cutoff);
        }
        report.properties.extend(properties);
        report.liveness = Some(stats);
    }
    report
}

/// The part of a process other than the first in a distributed check
/// ([`Workers::Cluster`] with `process` above 0): it searches with the
/// others and returns when the search ends; the first process reports.
pub fn serve_check(model: RebalanceModel, options: &CheckOptions) -> Result<(), String> {
    let Some(workers) = &options.workers else {
        return Err("a distributed check needs its workers".to_string());
    };
    let served = distributed(&model, options, workers, &mut |_| {});
    match served {
        Ok(_) => Ok(()),
        Err(Failed::Communication(message)) => Err(message),
        Err(Failed::Unsupported(why)) => Err(format!("the model cannot be searched: {why:?}")),
    }
}

/// The options of the project's search for a check's.
fn bfs_options(options: &CheckOptions) -> bfs::Options {
    bfs::Options {
        limits: Limits {
            max_states: options.max_states,
            timeout: options.timeout,
            memory: options.memory,
            threads: options.threads,
        },
        reduction: options.reduction,
        progress_every: options.progress_every,
    }
}

/// The safety search on timely dataflow, with the fingerprints asked for.
fn distributed(
    model: &RebalanceModel,
    options: &CheckOptions,
    workers: &Workers,
    progress: &mut dyn FnMut(bfs::Counts),
) -> Result<Option<bfs::Outcome>, Failed> {
    let model = std::sync::Arc::new(model.clone());
    let independence = std::sync::Arc::new(ActorIndependence);
    let fingerprint_bits = options.fingerprint_bits;
    let options = bfs_options(options);
    match fingerprint_bits {
        FingerprintBits::B64 => {
            dataflow::search::<_, _, u64>(model, independence, options, workers, progress)
        }
        FingerprintBits::B128 => {
            dataflow::search::<_, _, u128>(model, independence, options, workers, progress)
        }
    }
}

/// The limits of an exploration of the graph ([`crate::search::Graph`])
/// that is part of a run begun at `start`: what is left of its budget.
fn graph_limits(options: &CheckOptions, start: Instant) -> Limits {
    Limits {
        max_states: options.max_states,
        timeout: options.timeout.map(|t| t.saturating_sub(start.elapsed())),
        memory: options.memory,
        threads: options.threads,
    }
}

fn check_safety(
    model: RebalanceModel,
    options: &CheckOptions,
    start: Instant,
    progress: impl FnMut(&Progress),
) -> Report {
    match options.search {
        Search::Bfs => search_safety(&model, options, start, progress),
        Search::Simulate(seed) => {
            let builder = model.checker().threads(options.threads.max(1));
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

/// The safety check on the project's breadth-first search.
fn search_safety(
    model: &RebalanceModel,
    options: &CheckOptions,
    start: Instant,
    mut progress: impl FnMut(&Progress),
) -> Report {
    let search_options = bfs_options(options);
    let progress_of = |counts: bfs::Counts| Progress {
        states: counts.generated,
        unique_states: counts.unique,
        max_depth: counts.max_depth,
        seconds: start.elapsed().as_secs_f64(),
    };
    let mut on_progress = |counts| progress(&progress_of(counts));
    let outcome = match &options.workers {
        Some(workers) => {
            let outcome = distributed(model, options, workers, &mut on_progress);
            match outcome {
                Ok(Some(outcome)) => Ok(outcome),
                Ok(None) | Err(Failed::Communication(_)) => {
                    return new_report(
                        model,
                        Stopped::WorkersFailed,
                        progress_of(bfs::Counts::default()),
                        Vec::new(),
                    );
                }
                Err(Failed::Unsupported(why)) => Err(why),
            }
        }
        None => match options.fingerprint_bits {
            FingerprintBits::B64 => bfs::search::<_, _, u64>(
                model,
                &ActorIndependence,
                search_options,
                &mut on_progress,
            ),
            FingerprintBits::B128 => bfs::search::<_, _, u128>(
                model,
                &ActorIndependence,
                search_options,
                &mut on_progress,
            ),
        },
    };
    let outcome = match outcome {
        Ok(outcome) => outcome,
        // Not a model of this project (its properties are `always` and
        // `sometimes` ones): Stateright's own breadth-first search, which
        // decides `eventually` on its terminal states.
        Err(_) => {
            let checker = model.clone().checker().threads(options.threads.max(1));
            return drive(checker.spawn_bfs(), options, start, progress);
        }
    };
    let stopped = match outcome.cutoff {
        None => Stopped::Exhausted,
        Some(Cutoff::EveryPropertyDecided) => Stopped::EveryPropertyDecided,
        Some(Cutoff::Timeout) => Stopped::Timeout,
        Some(Cutoff::ScratchFailed) => Stopped::ScratchFailed,
        Some(Cutoff::MemoryBudget) => Stopped::MemoryBudget,
        // The safety search stops early for its limits alone, otherwise.
        Some(_) => Stopped::StateLimit,
    };
    let done = progress_of(outcome.counts);
    let complete = stopped.is_complete();
    let shortest_limits = graph_limits(options, start);
    let properties = model
        .properties()
        .into_iter()
        .zip(outcome.discoveries)
        .map(|(p, discovery)| {
            let found = discovery.is_some();
            // The search's discovery is among the shortest; a
            // counterexample is the first in the order of the liveness
            // graph's exploration, so that both runs report one path.
            let counterexample = (found && p.expectation == stateright::Expectation::Always)
                .then(|| {
                    let target = Predicate {
                        condition: p.condition,
                        holds_when: true,
                    };
                    shortest_path_to_bad(model, &target, shortest_limits)
                })
                .flatten();
            let chosen = counterexample
                .or(discovery)
                .and_then(|indices| Some((path_of(model, &indices)?, indices)));
            safety_report(model, &p, found, complete, chosen, None)
        })
        .collect();
    let report = new_report(model, stopped, done, properties);
    Report {
        reduction: search_options.reduction,
        fingerprint_bits: options.fingerprint_bits.bits(),
        collision_probability: collision_probability(
            report.unique_states,
            options.fingerprint_bits.bits(),
        ),
        ..report
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
    let memory = Limits {
        memory: options.memory,
        ..Limits::default()
    };
    let mut last_report = Instant::now();
    let mut limit = None;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        if limit.is_none() {
            if options.timeout.is_some_and(|t| start.elapsed() >= t) {
                limit = Some(Stopped::Timeout);
            } else if options
                .max_states
                .is_some_and(|m| checker.state_count() >= m)
            {
                limit = Some(Stopped::StateLimit);
            } else if memory.memory_reached() {
                limit = Some(Stopped::MemoryBudget);
            }
            if limit.is_some() {
                checker.model().request_stop();
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
    let all_decided = discoveries.len() == model.properties().len();
    let stopped = if panicked {
        Stopped::CheckerPanicked
    } else if all_decided {
        Stopped::EveryPropertyDecided
    } else if let Some(limit) = limit {
        limit
    } else if matches!(options.search, Search::Simulate(_)) {
        Stopped::Simulation
    } else {
        Stopped::Exhausted
    };
    let complete = stopped.is_complete();
    // Stateright's counterexamples are not the shortest (its BFS keeps a
    // later violating state; a random walk wanders): search breadth-first
    // again, within what is left of the time budget, and keep Stateright's
    // when that runs out.
    let shortest_limits = graph_limits(options, start);
    let properties = model
        .properties()
        .into_iter()
        .map(|p| {
            // Counterexamples only: an example of a `sometimes` property may
            // lie deep, and searching for it breadth-first would cost more
            // than the check.
            let counterexample = p.expectation != stateright::Expectation::Sometimes;
            let shortest = discoveries
                .get(p.name)
                .filter(|_| counterexample)
                .and_then(|_| {
                    let target = Predicate {
                        condition: p.condition,
                        holds_when: counterexample,
                    };
                    shortest_path_to_bad(model, &target, shortest_limits)
                        .and_then(|indices| Some((path_of(model, &indices)?, indices)))
                });
            let found = discoveries.get(p.name);
            let chosen = shortest
                .or_else(|| found.and_then(|path| Some((path.clone(), indices_of(model, path)?))));
            safety_report(model, &p, found.is_some(), complete, chosen, found)
        })
        .collect();
    new_report(model, stopped, done, properties)
}

/// The report of a run of `model` that ended for `stopped`, with the
/// counters `done` and the verdicts `properties`.
fn new_report(
    model: &RebalanceModel,
    stopped: Stopped,
    done: Progress,
    properties: Vec<PropertyReport>,
) -> Report {
    let cfg = &model.cfg;
    Report {
        scenario: cfg.scenario,
        strategy: cfg.strategy.name().to_string(),
        network: cfg.network,
        sizes: cfg.sizes,
        protocol: cfg.protocol,
        stopped,
        states: done.states,
        unique_states: done.unique_states,
        max_depth: done.max_depth,
        seconds: done.seconds,
        unique_states_per_second: done.unique_per_second(),
        generated_per_unique: done.states as f64 / done.unique_states.max(1) as f64,
        reduction: false,
        // Stateright's fingerprints and the liveness graph's: 64 bits.
        fingerprint_bits: 64,
        collision_probability: collision_probability(done.unique_states, 64),
        properties,
        liveness: None,
        harms: None,
    }
}

/// The verdict on [`NO_LONG_STALL`] with `bound`: violated, with the
/// longest stall's path, when it is longer.
fn stall_report(model: &RebalanceModel, harms: &harms::Harms, bound: usize) -> PropertyReport {
    let stall = &harms.max_stall_ticks;
    let violated = stall.exceeds(bound);
    let path = stall.path.clone().filter(|_| violated);
    let mut trace = path
        .as_ref()
        .and_then(|indices| path_of(model, indices))
        .map(|path| describe_path(model, &path));
    if let Some(lines) = trace.as_mut() {
        let length = if stall.unbounded {
            format!("without end ({} {} a round)", stall.value, harms.stall_unit)
        } else {
            format!("{} {}", stall.value, harms.stall_unit)
        };
        lines.insert(
            0,
            format!("a queue stalls {length}, past the bound of {bound}"),
        );
    }
    PropertyReport {
        name: NO_LONG_STALL.to_string(),
        expectation: Expectation::Always,
        status: if violated {
            Status::Violated
        } else {
            Status::Holds
        },
        trace,
        explorer_path: stall.explorer_path.clone().filter(|_| violated),
        path,
        cycle_start: None,
    }
}

/// The verdict on safety property `p`, a (counter)example of which was
/// `found` or not in a run that was `complete` or not; `chosen` is the
/// path reported, `found_path` the checker's own when `chosen` is missing.
fn safety_report(
    model: &RebalanceModel,
    p: &Property<RebalanceModel>,
    found: bool,
    complete: bool,
    chosen: Option<(Path<SystemState, Action>, Vec<u32>)>,
    found_path: Option<&Path<SystemState, Action>>,
) -> PropertyReport {
    let expectation = Expectation::from(p.expectation.clone());
    PropertyReport {
        name: p.name.to_string(),
        expectation,
        status: Status::of(expectation, found, complete),
        // A simulation's path can be one the model does not replay (see
        // docs/spec.md): then it keeps its trace, without a path.
        trace: chosen
            .as_ref()
            .map(|(path, _)| path)
            .or(found_path)
            .map(|path| describe_path(model, path)),
        explorer_path: chosen
            .as_ref()
            .map(|(_, indices)| format!("#/steps/{}", encode_path(indices))),
        path: chosen.map(|(_, indices)| indices),
        cycle_start: None,
    }
}
