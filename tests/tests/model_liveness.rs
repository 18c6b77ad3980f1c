//! Liveness under weak fairness on the rebalance model, with the periodic
//! tick modelled: which scenarios converge for ever, and which rebalance for
//! ever.

use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::check::Status;
use rocketmq_rebalance_model::fairness::{check_liveness, LivenessStats};
use rocketmq_rebalance_model::graph::Limits;
use rocketmq_rebalance_model::{build_model, check::PropertyReport, Config, NetworkKind, Scenario};

fn liveness(scenario: Scenario) -> (PropertyReport, LivenessStats) {
    let strategy = Arc::from(strategy_from_name("AVG").unwrap());
    let mut cfg = Config::new(
        scenario,
        scenario.default_sizes(),
        NetworkKind::Ordered,
        strategy,
    )
    .unwrap();
    cfg.periodic_ticks = true;
    let model = build_model(cfg);
    check_liveness(&model, Limits::default())
}

#[test]
fn the_healthy_group_converges_for_ever() {
    let (report, stats) = liveness(Scenario::Healthy);
    assert_eq!(report.status, Status::Holds, "{:#?}", report.trace);
    assert!(stats.states > 0 && stats.cutoff.is_none());
}

#[test]
fn a_crash_and_a_route_change_converge() {
    for scenario in [Scenario::Crash, Scenario::RouteChange] {
        let (report, _) = liveness(scenario);
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
    let (report, _) = liveness(Scenario::PartialPartition);
    assert_eq!(report.status, Status::Violated);
    let trace = report.trace.expect("a lasso");
    assert!(
        trace.iter().any(|l| l.contains("repeat for ever")),
        "{trace:#?}"
    );
    assert!(report.explorer_path.unwrap().starts_with("#/steps/0/"));
}
