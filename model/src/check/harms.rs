//! What a rebalance costs when messages are modelled, measured on the whole
//! reachable space: the worst of each harm, with the path to a state that
//! reaches it.
//!
//! - `max_deliveries`: the most times one message reached application code
//!   (3 means three or more).
//! - `max_duplicates_per_handover`: the most messages of one queue delivered
//!   twice or more. With the budgets of a run a queue changes hands a few
//!   times at most (once with one join), so this is what hand-overs
//!   duplicate.
//! - `max_duplicated_messages`: the most messages delivered twice or more
//!   at once, over every queue: what a strategy that moves fewer queues
//!   should lower.
//! - `max_paused_queues`: the most queues with messages waiting that nobody
//!   consumes at once, after a rebalance started. The model has no clock, so
//!   a pause has no length; how many queues stop together is what it can
//!   measure, and times the length of a rebalance (up to the 20 s of the
//!   periodic rebalance when a notification is lost) it gives the
//!   throughput lost.

use serde::Serialize;

use crate::guarantees::Group;
use crate::search::{encode_path, explorer_indices, Classify, Cutoff, Graph, Limits, StateId};
use crate::shell::{Action, RebalanceModel, SystemState};

/// The worst value of one harm, and where it is reached.
#[derive(Clone, Debug, Serialize)]
pub struct Harm {
    /// The worst value over every reachable state.
    pub value: usize,
    /// The path to open in Stateright's explorer (`#/steps/...`) of a state
    /// that reaches it, with the fewest steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explorer_path: Option<String>,
}

/// The harms of a run with messages.
#[derive(Clone, Debug, Serialize)]
pub struct Harms {
    /// The most deliveries of one message.
    pub max_deliveries: Harm,
    /// The most messages of one queue delivered twice or more.
    pub max_duplicates_per_handover: Harm,
    /// The most messages delivered twice or more, every queue together.
    pub max_duplicated_messages: Harm,
    /// The most queues paused at once.
    pub max_paused_queues: Harm,
}

/// Judges no state: the exploration only measures.
struct Measure;

impl Classify<RebalanceModel> for Measure {
    fn class(&self, _: &RebalanceModel, _: &SystemState, _: &Action) -> Option<u64> {
        None
    }

    fn good(&self, _: &RebalanceModel, _: &SystemState) -> bool {
        true
    }
}

/// Measures the harms of `model` (with messages) over every reachable
/// state, within `limits`; why not, when the exploration was cut short.
pub fn measure(model: &RebalanceModel, limits: Limits) -> Result<Harms, Cutoff> {
    // Value and the first state (fewest steps: BFS order) reaching it.
    let mut worst = [(0usize, 0 as StateId); 4];
    // Parents only: no state is bad, so the exploration is whole.
    let graph = Graph::explore_paths(model, &Measure, limits, &mut |_, id, state| {
        let group = Group::of(model, state);
        let values = [
            usize::from(group.max_deliveries()),
            group.max_duplicates_of_a_queue(),
            group.duplicated_messages(),
            group.paused_queues().count_ones() as usize,
        ];
        for (slot, value) in worst.iter_mut().zip(values) {
            if value > slot.0 {
                *slot = (value, id);
            }
        }
    });
    if let Some(cutoff) = graph.cutoff {
        return Err(cutoff);
    }
    let harm = |(value, id): (usize, StateId)| Harm {
        value,
        explorer_path: (value > 0).then(|| {
            format!(
                "#/steps/{}",
                encode_path(&explorer_indices(model, &graph.path_to(id)))
            )
        }),
    };
    Ok(Harms {
        max_deliveries: harm(worst[0]),
        max_duplicates_per_handover: harm(worst[1]),
        max_duplicated_messages: harm(worst[2]),
        max_paused_queues: harm(worst[3]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, CheckOptions};
    use crate::config::{Config, NetworkKind, Scenario, Sizes};
    use std::sync::Arc;

    fn config() -> Config {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            brokers: 1,
            queues: 1,
            messages: 1,
            ..Scenario::Healthy.default_sizes()
        };
        Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg).expect("valid")
    }

    /// A measurement cut short says why, and a check whose harms pass is cut
    /// is incomplete: its harms are missing, never silently absent.
    #[test]
    fn harms_cut_short_make_the_check_incomplete() {
        let model = crate::check::checked_model(config(), &CheckOptions::default());
        let cut = Limits {
            max_states: Some(10),
            timeout: None,
            threads: 1,
        };
        assert_eq!(measure(&model, cut).err(), Some(Cutoff::StateLimit));
        let whole = Limits {
            max_states: None,
            ..cut
        };
        assert!(measure(&model, whole).is_ok());
        let report = check(config(), &CheckOptions::default(), |_| {});
        assert!(report.complete() && report.harms.is_some());
        let stopped = crate::check::Stopped::HarmsCut(Cutoff::Timeout);
        assert!(!stopped.is_complete());
        assert_eq!(
            stopped.to_string(),
            "harms cut: timeout (the harms are not measured)"
        );
    }
}
