//! Liveness under weak fairness on the rebalance model, with the periodic
//! rebalance modelled: which scenarios converge for ever, and which
//! rebalance for ever.

mod common;

use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::{
    check_strategy,
    configuration::{Scenario, Sizes},
    report::{LivenessStats, PropertyReport, Status, CONVERGES},
    CheckOptions,
};

/// `check --liveness` of `scenario` (with `sizes`, or its own): the
/// liveness verdict and the graph's figures.
fn liveness(scenario: Scenario, sizes: Option<Sizes>) -> (PropertyReport, LivenessStats) {
    let strategy = Arc::from(strategy_from_name("AVG").unwrap());
    let options = CheckOptions {
        liveness: true,
        threads: 2,
        ..CheckOptions::default()
    };
    let report = check_strategy(strategy, scenario, sizes, &options).unwrap();
    let property = report
        .property(CONVERGES)
        .expect("liveness reported")
        .clone();
    (property, report.liveness.expect("liveness figures"))
}

#[test]
fn the_healthy_group_converges_for_ever() {
    let (report, stats) = liveness(Scenario::Healthy, None);
    assert_eq!(report.status, Status::Holds, "{:#?}", report.trace);
    assert!(stats.states > 0 && stats.cutoff.is_none());
}

#[test]
fn a_crash_and_a_route_change_converge() {
    for scenario in [Scenario::Crash, Scenario::RouteChange] {
        let (report, _) = liveness(scenario, None);
        assert_eq!(
            report.status,
            Status::Holds,
            "{scenario:?}: {:#?}",
            report.trace
        );
    }
}

#[test]
fn a_partial_partition_rebalances_for_ever() {
    let (report, _) = liveness(Scenario::PartialPartition, None);
    assert_eq!(report.status, Status::Violated);
    let trace = report.trace.expect("a lasso");
    assert!(
        trace.iter().any(|l| l.contains("repeat for ever")),
        "{trace:#?}"
    );
    assert!(report.explorer_path.unwrap().starts_with("#/steps/0/"));
}

/// A lost notification or a failed consumer-list query delays a consumer
/// until its periodic rebalance; the group still converges, at rest and under
/// fairness.
#[test]
fn lost_notifications_and_failed_queries_are_recovered_by_the_periodic_rebalance() {
    let faults = [
        Sizes {
            lost_notifications: 1,
            ..Scenario::Healthy.default_sizes()
        },
        Sizes {
            failed_queries: 1,
            ..Scenario::Healthy.default_sizes()
        },
    ];
    for sizes in faults {
        let strategy = Arc::from(strategy_from_name("AVG").unwrap());
        let report = check_strategy(
            strategy,
            Scenario::Healthy,
            Some(sizes),
            &CheckOptions::default(),
        )
        .unwrap();
        assert!(report.passed(), "{sizes:?}: {report:#?}");
        if sizes.failed_queries == 0 {
            // One liveness graph of a faulty group is enough for the test
            // suite's time budget; `check --liveness` does the other.
            continue;
        }
        let (property, stats) = liveness(Scenario::Healthy, Some(sizes));
        assert_eq!(property.status, Status::Holds, "{sizes:?}");
        assert!(stats.states > 100_000, "the faults add interleavings");
    }
}

/// With liveness, one breadth-first exploration (the liveness graph) also
/// decides the safety properties. It must agree with Stateright's own
/// exhaustive check of the same model (with the periodic rebalance): the
/// same states, the same verdicts, the same shortest counterexamples, and
/// examples that replay to a state that is one.
#[test]
fn one_exploration_decides_safety_as_stateright_does() {
    use rocketmq_rebalance_model::internals::replay;
    use rocketmq_rebalance_model::{check_model, checked_model, report::Expectation};
    use stateright::Model;

    let scenarios = [
        Scenario::Crash,
        Scenario::RouteChange,
        Scenario::PartialPartition,
        Scenario::StaleRoute,
        Scenario::BrokerRestart,
        Scenario::DuplicateClientId,
    ];
    for scenario in scenarios {
        let cfg = common::config(scenario);
        let options = CheckOptions {
            threads: 2,
            liveness: true,
            ..CheckOptions::default()
        };
        let model = checked_model(cfg, &options);
        let one = check_model(model.clone(), &options, |_| {});
        // Without sleep sets, so that it generates what the graph's
        // edges count.
        let safety_only = CheckOptions {
            liveness: false,
            reduction: false,
            ..options.clone()
        };
        let stateright = check_model(model.clone(), &safety_only, |_| {});
        assert!(one.complete() && stateright.complete(), "{scenario:?}");
        assert_eq!(one.unique_states, stateright.unique_states, "{scenario:?}");
        assert_eq!(one.states, stateright.states, "{scenario:?}");
        let properties = model.properties();
        for (p, theirs) in properties.iter().zip(&stateright.properties) {
            let ours = one.property(p.name).expect("reported");
            assert_eq!(ours.status, theirs.status, "{scenario:?} {}", p.name);
            match ours.expectation {
                // Both are the shortest, found breadth-first.
                Expectation::Always => assert_eq!(ours.path, theirs.path, "{}", p.name),
                _ => {
                    if let Some(path) = &ours.path {
                        let (last, _) = replay(&model, path).pop().expect("a state");
                        assert!((p.condition)(&model, &last), "{}", p.name);
                    }
                }
            }
        }
    }
}
