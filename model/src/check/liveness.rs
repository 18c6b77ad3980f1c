//! Which of the model's steps fairness covers, and the predicate the
//! liveness check asks to hold in the end: the bridge between the rebalance
//! model and the generic fair-cycle search ([`crate::search::fair_cycle`]).
//!
//! The fair steps are listed, as a TLA+ spec's `Fairness ==` lists them
//! ([`fairness`], [`timer_fairness`]: exhaustive matches, so a new kind of
//! step does not compile until it is classified):
//!
//! | step | fairness |
//! |---|---|
//! | delivery of a message (one class per sender, receiver and message) | weak |
//! | [`Timer::Rebalance`] (one class per consumer and broker) | strong |
//! | every other [`Timer`] (one class per actor and timer) | weak |
//! | a tick of every clock (orderly) | strong |
//! | a [`Fault`](crate::config::Fault), a clock that runs slow | none |
//!
//! The rebalance service picks a broker at random each round, one timer
//! per broker: each is asked again with probability 1, which is strong
//! fairness (the turn of a broker not picked is disarmed, so it is enabled
//! again and again but not continuously). The environment is never
//! required: it spends a finite budget.

use std::hash::Hash;
use std::time::{Duration, Instant};

use stateright::{Model, Property};

use crate::check::report::{Expectation, LivenessStats, PropertyReport, Report, Status, Stopped};
use crate::check::{new_report, safety_report, Progress, Search};
use crate::guarantees::{Group, LIVENESS};
use crate::protocol::Timer;
use crate::search::{
    encode_path, explorer_indices, find_fair_cycle_missing, fingerprint, path_of, Classify, Cutoff,
    Graph, Lasso, Limits, STRONG,
};
use crate::shell::{Action, RebalanceModel, SystemState};
use crate::trace::{cycle_marker, describe_path};

/// Fairness classes and convergence for [`RebalanceModel`], and the safety
/// properties it checks on the same graph, if any.
#[derive(Default)]
pub struct RebalanceFairness {
    /// Bit `i` of [`Classify::discoveries`] is `safety[i]`.
    safety: Vec<Property<RebalanceModel>>,
}

impl RebalanceFairness {
    /// Also recording the discoveries of `model`'s safety properties, for
    /// a run whose only exploration is the liveness graph (see
    /// [`decides_safety`]).
    pub fn with_safety(model: &RebalanceModel) -> Self {
        Self {
            safety: model.properties(),
        }
    }
}

/// Whether the liveness graph of a `search` of `model` can decide its
/// safety properties too, so that one exploration does both: the search is
/// exhaustive (a simulation samples instead), and every property is an
/// `always` or a `sometimes` one that fits a discovery bit. The graph holds
/// every reachable state, so a property has a (counter)example in it
/// exactly when Stateright's exhaustive search finds one, and the first
/// found breadth-first has the fewest steps.
pub fn decides_safety(model: &RebalanceModel, search: Search) -> bool {
    let properties = model.properties();
    !matches!(search, Search::Simulate(_))
        && properties.len() <= 64
        && properties
            .iter()
            .all(|p| p.expectation != stateright::Expectation::Eventually)
}

fn class_of<T: Hash>(value: T) -> u64 {
    fingerprint(&value)
}

/// How a kind of step is required to happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fairness {
    /// Weak: a step that stays enabled is taken in the end.
    Weak,
    /// Strong: a step enabled again and again is taken in the end.
    Strong,
    /// None: the environment's, never required.
    Unfair,
}

/// The fairness of a protocol timer. No wildcard: a new timer does not
/// compile until it is classified here.
pub fn timer_fairness(timer: &Timer) -> Fairness {
    match timer {
        Timer::Rebalance { .. } => Fairness::Strong,
        Timer::PeriodicRebalance
        | Timer::Connect { .. }
        | Timer::ChannelActive { .. }
        | Timer::Heal
        | Timer::Start
        | Timer::Heartbeat
        | Timer::Pull { .. }
        | Timer::Done { .. }
        | Timer::Persist
        | Timer::LockAll
        | Timer::SyncOffsets
        | Timer::ReloadGroupConfig => Fairness::Weak,
    }
}

/// The fairness of a step of the model: the positive list of the module's
/// table.
pub fn fairness(action: &Action) -> Fairness {
    match action {
        Action::Deliver(_) => Fairness::Weak,
        Action::Timeout(_, timer) => timer_fairness(timer),
        // Time passes in every real run: a cycle of steps in which the
        // clock could tick again and again but never does (a lock retried
        // every 500 ms for ever within one tick) is no execution, so the
        // tick is strongly fair. A clock that runs slow is the
        // environment's.
        Action::Elapse { lagging: None } => Fairness::Strong,
        Action::Elapse { lagging: Some(_) } | Action::Fault(..) => Fairness::Unfair,
    }
}

impl Classify<RebalanceModel> for RebalanceFairness {
    fn class(&self, _: &RebalanceModel, _: &SystemState, action: &Action) -> Option<u64> {
        let class = match action {
            Action::Deliver(env) => class_of(("deliver", env)),
            Action::Timeout(peer, timer) => class_of(("timer", peer, timer)),
            Action::Elapse { .. } => class_of("elapse"),
            Action::Fault(..) => 0,
        };
        match fairness(action) {
            Fairness::Weak => Some(class & !STRONG),
            Fairness::Strong => Some(class | STRONG),
            Fairness::Unfair => None,
        }
    }

    /// Converged: every live consumer holds the current route and the live
    /// member list, and each subscribed topic's queues are partitioned among
    /// its live subscribers.
    fn good(&self, model: &RebalanceModel, state: &SystemState) -> bool {
        Group::of(model, state).converged()
    }

    /// Bit 0: converged; bit 1, with messages: every message of the route in
    /// force delivered; bit 2, orderly: every queue held under a trusted
    /// lock.
    fn goals(&self, model: &RebalanceModel, state: &SystemState) -> u8 {
        let group = Group::of(model, state);
        u8::from(group.converged())
            | u8::from(model.cfg.messages() && group.every_message_delivered()) << 1
            | u8::from(group.every_queue_held()) << 2
    }

    /// Bit `i`: the state is a counterexample of `always` property `i`, or
    /// an example of `sometimes` property `i`.
    fn discoveries(&self, model: &RebalanceModel, state: &SystemState) -> u64 {
        self.safety.iter().enumerate().fold(0, |bits, (i, p)| {
            let holds = (p.condition)(model, state);
            let discovery = match p.expectation {
                stateright::Expectation::Sometimes => holds,
                _ => !holds,
            };
            bits | u64::from(discovery) << i
        })
    }
}

/// Checks `model` (with the periodic rebalance) in one exploration: the
/// liveness graph, built breadth-first, decides the safety properties (a
/// shortest (counter)example each) and then the `eventually` ones. Call it
/// when [`decides_safety`] says it can. `progress` is called about every
/// `every`, `seconds` of the report is the exploration's.
pub fn check(
    model: &RebalanceModel,
    limits: Limits,
    every: Duration,
    mut progress: impl FnMut(&Progress),
) -> Report {
    let started = Instant::now();
    let classify = RebalanceFairness::with_safety(model);
    let mut last_report = Instant::now();
    let counters = |graph: &Graph| Progress {
        states: graph.generated(),
        unique_states: graph.len(),
        max_depth: graph.depth(),
        seconds: started.elapsed().as_secs_f64(),
    };
    let graph = Graph::explore_observing(model, &classify, limits, &mut |graph, id, _| {
        if id % 4096 == 0 && last_report.elapsed() >= every {
            last_report = Instant::now();
            progress(&counters(graph));
        }
    });
    let done = counters(&graph);
    let complete = graph.cutoff.is_none();
    let mut properties: Vec<PropertyReport> = classify
        .safety
        .iter()
        .enumerate()
        .map(|(bit, p)| {
            let found = graph.first_discovery(bit as u8);
            let chosen = found.and_then(|state| {
                let indices = explorer_indices(model, &graph.path_to(state));
                Some((path_of(model, &indices)?, indices))
            });
            safety_report(model, p, found.is_some(), complete, chosen, None)
        })
        .collect();
    properties.extend(liveness_reports(model, &graph, limits.threads));
    let stopped = match graph.cutoff {
        None => Stopped::Exhausted,
        Some(Cutoff::Timeout) => Stopped::Timeout,
        Some(Cutoff::StateLimit) => Stopped::StateLimit,
        Some(cutoff) => Stopped::LivenessGraphCut(cutoff),
    };
    let mut report = new_report(model, stopped, done, properties);
    report.liveness = Some(liveness_stats(&graph, started));
    report
}

/// Checks that every fair execution of `model` reaches a converged state and
/// stays converged (see [`crate::search::fair_cycle`]). The model should have
/// [`Config::periodic_rebalance`](crate::config::Config) set: without it a
/// consumer only rebalances when woken, and no endless rebalancing exists
/// to find.
///
/// With messages, it also checks that every fair execution delivers every
/// message in the end (`every message consumed`), on the same graph.
pub fn check_liveness(
    model: &RebalanceModel,
    limits: Limits,
) -> (Vec<PropertyReport>, LivenessStats) {
    let started = Instant::now();
    let graph = Graph::explore(model, &RebalanceFairness::default(), limits);
    (
        liveness_reports(model, &graph, limits.threads),
        liveness_stats(&graph, started),
    )
}

/// The verdicts on the `eventually` properties of `model` on its liveness
/// graph.
fn liveness_reports(model: &RebalanceModel, graph: &Graph, threads: usize) -> Vec<PropertyReport> {
    let cfg = &model.cfg;
    LIVENESS
        .iter()
        .zip(0u8..)
        .filter(|((_, layer), _)| layer.modelled_with(&cfg.sizes, &cfg.protocol))
        .map(|(&(name, _), goal)| {
            let lasso = match graph.cutoff {
                None => find_fair_cycle_missing(graph, goal, threads)
                    .map(|lasso| lasso.in_explorer_indices(model)),
                Some(_) => None,
            };
            lasso_report(model, name, lasso.as_ref(), graph.cutoff.is_some())
        })
        .collect()
}

/// The figures of a liveness graph whose check began at `started`.
fn liveness_stats(graph: &Graph, started: Instant) -> LivenessStats {
    LivenessStats {
        states: graph.len(),
        edges: graph.edge_count(),
        bytes_per_state: graph.bytes_per_state(),
        seconds: started.elapsed().as_secs_f64(),
        cutoff: graph.cutoff,
    }
}

/// The verdict on an `eventually` property: violated with a lasso, unknown
/// on a partial graph, else holds.
fn lasso_report(
    model: &RebalanceModel,
    name: &str,
    lasso: Option<&Lasso>,
    partial: bool,
) -> PropertyReport {
    let status = match (lasso, partial) {
        (Some(_), _) => Status::Violated,
        (None, false) => Status::Holds,
        (None, true) => Status::Unknown,
    };
    let path = lasso.map(Lasso::path);
    PropertyReport {
        name: name.to_string(),
        expectation: Expectation::Eventually,
        status,
        trace: lasso.map(|lasso| describe_lasso(model, lasso)),
        explorer_path: path
            .as_ref()
            .map(|indices| format!("#/steps/{}", encode_path(indices))),
        path,
        cycle_start: lasso.map(|lasso| lasso.prefix.len().saturating_sub(1)),
    }
}

/// The lasso as a readable trace: the steps to the cycle, a marker, the
/// steps of one turn of the cycle, and the final state.
fn describe_lasso(model: &RebalanceModel, lasso: &Lasso) -> Vec<String> {
    let Some(path) = path_of(model, &lasso.path()) else {
        return Vec::new();
    };
    let mut lines = describe_path(model, &path);
    let prefix_steps = lasso.prefix.len().saturating_sub(1);
    let marker = cycle_marker(prefix_steps, lasso.cycle.len());
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{}. ", prefix_steps + 1)) || l == "final state:")
        .unwrap_or(lines.len());
    lines.insert(at, marker);
    lines
}
