//! Which of the model's actions weak fairness covers, and the predicate the
//! liveness check asks to hold in the end: the bridge between the rebalance
//! model and the generic fair-cycle search ([`crate::search::fair_cycle`]).
//!
//! Fair (an action that stays enabled is eventually taken): every delivery
//! of a message (one class per sender, receiver and message) and every
//! protocol timer of an actor (one class per actor and timer; the rebalance
//! service's random choice of broker is one timer per broker, so a fair run
//! asks every broker again and again, as random picks do with probability 1).
//! Not fair, never required: the environment — joins, graceful shutdowns,
//! crashes, route changes, and message loss — which spends a finite budget.

use std::hash::Hash;

use crate::check::report::{Expectation, LivenessStats, PropertyReport, Status};
use crate::properties::{Group, CONVERGES, EVERY_MESSAGE_CONSUMED, EVERY_QUEUE_CONSUMED_AGAIN};
use crate::protocol::Timer;
use crate::search::{
    encode_path, find_fair_cycle_missing, fingerprint, path_of, Classify, Graph, Lasso, Limits,
    STRONG,
};
use crate::shell::{Action, RebalanceModel, SystemState};
use crate::trace::{cycle_marker, describe_path};

/// Fairness classes and convergence for [`RebalanceModel`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RebalanceFairness;

fn class_of<T: Hash>(value: T) -> u64 {
    fingerprint(&value)
}

/// Whether a timer is the environment's rather than the protocol's.
fn is_environment(timer: &Timer) -> bool {
    matches!(
        timer,
        Timer::Join
            | Timer::Shutdown
            | Timer::Crash
            | Timer::RouteChange
            | Timer::LoseNotification
            | Timer::FailQuery
            | Timer::Partition
            | Timer::MissRoute
            | Timer::Kill
            | Timer::Pause
            | Timer::Restart
            | Timer::Resubscribe
            | Timer::LosePersist
            | Timer::FailOffsetRead
            | Timer::Evict
            | Timer::LoseUnlock
            | Timer::FailLocks
    )
}

impl Classify<RebalanceModel> for RebalanceFairness {
    fn class(&self, _: &RebalanceModel, _: &SystemState, action: &Action) -> Option<u64> {
        match action {
            Action::Deliver(env) => Some(class_of(("deliver", env)) & !STRONG),
            // RocketMQ picks the broker at random each round: each is asked
            // again with probability 1, which is strong fairness.
            Action::Timeout(peer, timer @ Timer::Rebalance { .. }) => {
                Some(class_of(("timer", peer, timer)) | STRONG)
            }
            Action::Timeout(peer, timer) if !is_environment(timer) => {
                Some(class_of(("timer", peer, timer)) & !STRONG)
            }
            Action::Timeout(..) => None,
            // Time passes in every real run: a cycle of steps in which the
            // clock could tick again and again but never does (a lock
            // retried every 500 ms for ever within one tick) is no
            // execution, so the tick is strongly fair. A clock that runs
            // slow is the environment's.
            Action::Elapse { lagging: None } => Some(class_of("elapse") | STRONG),
            Action::Elapse { .. } => None,
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
}

/// Checks that every fair execution of `model` reaches a converged state and
/// stays converged (see [`crate::search::fair_cycle`]). The model should have
/// [`Config::periodic_ticks`](crate::config::Config) set: without the tick a
/// consumer only rebalances when woken, and no endless rebalancing exists to
/// find.
///
/// With messages, it also checks that every fair execution delivers every
/// message in the end (`every message consumed`), on the same graph.
pub fn check_liveness(
    model: &RebalanceModel,
    limits: Limits,
) -> (Vec<PropertyReport>, LivenessStats) {
    let started = std::time::Instant::now();
    let graph = Graph::explore(model, &RebalanceFairness, limits);
    let goals: &[(u8, &str)] = match (model.cfg.messages(), model.cfg.orderly()) {
        (_, Some(_)) => &[
            (0, CONVERGES),
            (1, EVERY_MESSAGE_CONSUMED),
            (2, EVERY_QUEUE_CONSUMED_AGAIN),
        ],
        (true, None) => &[(0, CONVERGES), (1, EVERY_MESSAGE_CONSUMED)],
        (false, None) => &[(0, CONVERGES)],
    };
    let reports = goals
        .iter()
        .map(|&(goal, name)| {
            let lasso = match graph.cutoff {
                None => find_fair_cycle_missing(&graph, goal)
                    .map(|lasso| lasso.in_explorer_indices(model)),
                Some(_) => None,
            };
            lasso_report(model, name, lasso.as_ref(), graph.cutoff.is_some())
        })
        .collect();
    let stats = LivenessStats {
        states: graph.len(),
        edges: graph.edge_count(),
        bytes_per_state: graph.bytes_per_state(),
        seconds: started.elapsed().as_secs_f64(),
        cutoff: graph.cutoff,
    };
    (reports, stats)
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
