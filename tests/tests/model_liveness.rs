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

/// A lost notification or a failed consumer-list query delays a consumer
/// until its periodic tick; the group still converges, at rest and under
/// fairness.
#[test]
fn lost_notifications_and_failed_queries_are_recovered_by_the_tick() {
    use rocketmq_rebalance_model::{check_strategy, CheckOptions, Sizes};
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
        let strategy = Arc::from(strategy_from_name("AVG").unwrap());
        let mut cfg =
            Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, strategy).unwrap();
        cfg.periodic_ticks = true;
        let (property, stats) = check_liveness(&build_model(cfg), Limits::default());
        assert_eq!(property.status, Status::Holds, "{sizes:?}");
        assert!(stats.states > 100_000, "the faults add interleavings");
    }
}
