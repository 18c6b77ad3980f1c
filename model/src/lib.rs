//! A Stateright model of Apache RocketMQ's consumer-group rebalance.
//!
//! A name server, brokers and consumers run as actors over a simulated
//! network; consumers allocate with the production strategy code of
//! [`rocketmq_rebalance`] and apply the result with its `plan_update`, so
//! what is checked is what ships. Each actor is a thin shell ([`actor`])
//! over a sans-IO state machine ([`name_server`], [`broker`], [`consumer`]).
//!
//! Check any strategy from a test:
//!
//! ```no_run
//! use rocketmq_rebalance_model::{check_strategy, CheckOptions, Scenario};
//! let strategy = rocketmq_rebalance::strategy_from_name("AVG").unwrap();
//! let report = check_strategy(strategy.into(), Scenario::Healthy, None, &CheckOptions::default())
//!     .unwrap();
//! assert!(report.guarantees_hold(), "{report:#?}");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod actor;
pub mod broker;
pub mod check;
pub mod compare;
pub mod config;
pub mod consumer;
pub mod explorer;
pub mod fairness;
pub mod graph;
pub mod liveness;
pub mod message;
pub mod name_server;
pub mod properties;
pub mod trace;

pub use actor::{build_model, RebalanceModel};
pub use check::{check, CheckOptions, Progress, Report, Search, Status};
pub use config::{Config, ConfigError, NetworkKind, Scenario, Sizes};

use rocketmq_rebalance::AllocateStrategy;
use std::sync::Arc;

/// Checks `scenario` (with its default sizes unless `sizes` is given) on
/// the ordered network with `strategy`, silently.
pub fn check_strategy(
    strategy: Arc<dyn AllocateStrategy>,
    scenario: Scenario,
    sizes: Option<Sizes>,
    options: &CheckOptions,
) -> Result<Report, ConfigError> {
    let sizes = sizes.unwrap_or_else(|| scenario.default_sizes());
    let cfg = Config::new(scenario, sizes, NetworkKind::Ordered, strategy)?;
    Ok(check(build_model(cfg), options, |_| {}))
}
