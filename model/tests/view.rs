//! The view of a report's paths: replayed from the action indices a check
//! reports, each step says what the trace says, and the states show what
//! the properties found.

use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::view::{Holding, PathView};
use rocketmq_rebalance_model::{
    check_model, checked_model,
    configuration::{Config, NetworkKind, Scenario},
    report::{PropertyReport, CONVERGES, NO_DOUBLE_OWNERSHIP},
    CheckOptions, RebalanceModel,
};

/// The model `check` explores for `scenario` and the report it gives.
fn checked(scenario: Scenario, liveness: bool) -> (RebalanceModel, Vec<PropertyReport>) {
    let avg = Arc::from(strategy_from_name("AVG").expect("AVG exists"));
    let cfg = Config::new(
        scenario,
        scenario.default_sizes(),
        NetworkKind::Ordered,
        avg,
    )
    .expect("valid sizes");
    let options = CheckOptions {
        liveness,
        threads: 2,
        ..CheckOptions::default()
    };
    let model = checked_model(cfg, &options);
    let report = check_model(model.clone(), &options, |_| {});
    (model, report.properties)
}

fn view_of(model: &RebalanceModel, property: &PropertyReport) -> PathView {
    let path = property.path.as_ref().expect("a path");
    PathView::replay(model, path, property.cycle_start).expect("a path of the model")
}

#[test]
fn every_step_of_a_counterexample_is_its_trace_line() {
    let (model, properties) = checked(Scenario::DuplicateClientId, false);
    let property = properties
        .iter()
        .find(|p| p.name == NO_DOUBLE_OWNERSHIP)
        .expect("reported");
    let view = view_of(&model, property);
    let trace = property.trace.as_ref().expect("a trace");
    let mut expected = Vec::new();
    for step in &view.steps[1..] {
        let action = step
            .action
            .as_ref()
            .expect("every step but the first has one");
        expected.push(format!("{}. {action}", step.number));
        expected.extend(step.changes.iter().map(|c| format!("   {c}")));
    }
    let before_final: Vec<&String> = trace.iter().take_while(|l| *l != "final state:").collect();
    assert_eq!(before_final, expected.iter().collect::<Vec<_>>());
    assert_eq!(view.steps[0].action, None);
    let last = view.steps.last().expect("a last state");
    assert_eq!(Some(&last.explorer_path), property.explorer_path.as_ref());
    assert!(!last.state.ownership.held(Holding::Twice).is_empty());
    assert!(view.steps[0]
        .state
        .ownership
        .held(Holding::Twice)
        .is_empty());
    assert_eq!(view.cycle_start, None);
    assert_eq!(view.sequence.events.len(), view.last());
    let titles: Vec<&str> = last.state.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        ["name server", "brokers", "consumers", "messages in flight"]
    );
}

#[test]
fn a_lasso_marks_its_cycle_as_the_trace_does() {
    let (model, properties) = checked(Scenario::PartialPartition, true);
    let property = properties
        .iter()
        .find(|p| p.name == CONVERGES)
        .expect("reported");
    let view = view_of(&model, property);
    let start = view.cycle_start.expect("a lasso");
    assert!(!view.in_cycle(start) && view.in_cycle(start + 1));
    let marker = view.cycle_marker().expect("a marker");
    assert!(property.trace.as_ref().expect("a trace").contains(&marker));
    // The cycle comes back where it started.
    assert_eq!(view.steps[start].state, view.steps[view.last()].state);
}

#[test]
fn indices_that_are_no_path_of_the_model_give_no_view() {
    let (model, _) = checked(Scenario::Crash, false);
    assert!(PathView::replay(&model, &[0, 999], None).is_none());
    assert!(PathView::replay(&model, &[7], None).is_none());
    assert!(PathView::replay(&model, &[0], Some(3)).is_none());
    let initial = PathView::replay(&model, &[0], None).expect("the initial state");
    assert_eq!(initial.steps.len(), 1);
    assert_eq!(initial.steps[0].explorer_path, "#/steps/0");
}
