//! The checked model as Stateright sees it: the shell's states and steps
//! ([`crate::shell`]), the guarantees ([`crate::guarantees`]), and the
//! explorer's readable views ([`crate::trace`], [`crate::explorer`]).

use stateright::{Model, Path, Property};

use crate::config::Config;
use crate::explorer::path_svg;
use crate::guarantees::checked;
use crate::shell::{Action, RebalanceModel, SystemState};
use crate::trace::{describe_action, describe_state};

/// The model of `cfg`, with every property of the parts it models.
pub fn build_model(cfg: Config) -> RebalanceModel {
    RebalanceModel::new(cfg)
}

impl Model for RebalanceModel {
    type State = SystemState;
    type Action = Action;

    fn init_states(&self) -> Vec<SystemState> {
        vec![self.initial_state()]
    }

    fn actions(&self, state: &SystemState, actions: &mut Vec<Action>) {
        self.enabled(state, actions)
    }

    fn next_state(&self, state: &SystemState, action: Action) -> Option<SystemState> {
        self.step(state, action)
    }

    fn format_action(&self, action: &Action) -> String {
        describe_action(self, None, action)
    }

    fn format_step(&self, last_state: &SystemState, action: Action) -> Option<String> {
        let label = describe_action(self, Some(last_state), &action);
        self.step(last_state, action)
            .map(|next| format!("{label}\n{}", describe_state(self, &next).join("\n")))
    }

    fn as_svg(&self, path: Path<SystemState, Action>) -> Option<String> {
        Some(path_svg(self, &path))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        checked(self)
            .map(|p| match p.expectation {
                stateright::Expectation::Always => Property::always(p.name, p.condition),
                stateright::Expectation::Sometimes => Property::sometimes(p.name, p.condition),
                stateright::Expectation::Eventually => Property::eventually(p.name, p.condition),
            })
            .collect()
    }

    fn within_boundary(&self, _: &SystemState) -> bool {
        !self.stop_requested()
    }
}
