//! Which of the model's actions weak fairness covers, and the predicate the
//! liveness check asks to hold in the end: the bridge between the rebalance
//! model and the generic [`crate::liveness`] check.
//!
//! Fair (an action that stays enabled is eventually taken): every delivery
//! of a message (one class per sender, receiver and message) and every
//! protocol timer of an actor (one class per actor and timer; the rebalance
//! service's random choice of broker is one timer per broker, so a fair run
//! asks every broker again and again, as random picks do with probability 1).
//! Not fair, never required: the environment — joins, graceful shutdowns,
//! crashes, route changes, and message loss — which spends a finite budget.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use stateright::actor::ActorModelAction;

use crate::actor::RebalanceModel;
use crate::graph::Classify;
use crate::message::Timer;
use crate::properties::{Group, SystemState};

/// The model's action type.
pub type Action = <RebalanceModel as stateright::Model>::Action;

/// Fairness classes and convergence for [`RebalanceModel`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RebalanceFairness;

fn class_of<T: Hash>(value: T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Whether a timer is the environment's rather than the protocol's.
fn is_environment(timer: &Timer) -> bool {
    matches!(
        timer,
        Timer::Join | Timer::Shutdown | Timer::Crash | Timer::RouteChange
    )
}

impl Classify<RebalanceModel> for RebalanceFairness {
    fn class(&self, _: &RebalanceModel, _: &SystemState, action: &Action) -> Option<u64> {
        match action {
            ActorModelAction::Deliver { src, dst, msg } => {
                Some(class_of(("deliver", src, dst, msg)))
            }
            ActorModelAction::Timeout(id, timer) if !is_environment(timer) => {
                Some(class_of(("timer", id, timer)))
            }
            _ => None,
        }
    }

    /// Converged: every live consumer holds the current route and the live
    /// member list, and each subscribed topic's queues are partitioned among
    /// its live subscribers.
    fn good(&self, model: &RebalanceModel, state: &SystemState) -> bool {
        Group::of(model, state).converged()
    }
}
