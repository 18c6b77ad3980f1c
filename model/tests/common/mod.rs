//! What the model's integration tests share: building a configuration and
//! running a complete check. Each test crate uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::{
    check,
    configuration::{Config, NetworkKind, ProtocolOptions, Scenario, Sizes},
    report::{Report, Status},
    CheckOptions,
};

/// `scenario` with `sizes`, `strategy` and `protocol`, over TCP.
pub fn config_with(
    scenario: Scenario,
    sizes: Sizes,
    strategy: &str,
    protocol: ProtocolOptions,
) -> Config {
    let strategy = Arc::from(strategy_from_name(strategy).unwrap());
    Config::new_with(scenario, sizes, NetworkKind::Ordered, strategy, protocol).unwrap()
}

/// `scenario` as `rebalance check --scenario` runs it: its default sizes
/// and protocol, `AVG`.
pub fn config(scenario: Scenario) -> Config {
    config_with(
        scenario,
        scenario.default_sizes(),
        "AVG",
        scenario.default_protocol(),
    )
}

/// A check of `cfg` on two threads, which must complete.
pub fn run(cfg: Config, liveness: bool) -> Report {
    complete(cfg, liveness, true)
}

/// [`run`] for the verdicts only: no harms measured
/// ([`CheckOptions::harms`]), with messages most of a check's time.
pub fn verdicts(cfg: Config, liveness: bool) -> Report {
    complete(cfg, liveness, false)
}

fn complete(cfg: Config, liveness: bool, harms: bool) -> Report {
    let options = CheckOptions {
        threads: 2,
        liveness,
        harms,
        ..CheckOptions::default()
    };
    let report = check(cfg, &options, |_| {});
    assert!(report.complete(), "{report:#?}");
    report
}

/// The verdict on the property `name`.
pub fn status(report: &Report, name: &str) -> Status {
    report.property(name).expect("reported").status
}
