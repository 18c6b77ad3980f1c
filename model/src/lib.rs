//! A model-checked specification of Apache RocketMQ's consumer-group
//! rebalance, in [Stateright](https://docs.rs/stateright).
//!
//! # The protocol in one page
//!
//! In clustering mode every consumer of a group decides on its own which
//! queues of a topic it consumes; there is no leader.
//!
//! - The **name server** holds each topic's route: which brokers host it and
//!   how many read queues each has. Consumers poll it every 30 s and turn the
//!   route into a list of queues.
//! - Each **broker** keeps its own table of the group's members, learnt from
//!   the heartbeats it receives (every 30 s, and at once when a consumer
//!   starts or its share changes). A heartbeat from a new member makes the
//!   broker send `NOTIFY_CONSUMER_IDS_CHANGED` to every member; a graceful
//!   shutdown (`UNREGISTER_CLIENT`) does too; a consumer that falls silent is
//!   removed after 120 s without a word to anyone. Brokers share nothing.
//! - Each **consumer** rebalances when notified and every 20 s: for each
//!   topic it asks one broker, picked at random, for the member list, sorts
//!   that list and its cached queue list, runs the allocation strategy for
//!   itself, drops the queues it no longer gets and starts on the new ones.
//!
//! Consumers agree only when they allocate from the same lists. While their
//! views differ a queue can be consumed by two of them or by nobody.
//!
//! # The model
//!
//! Each process is a sans-IO state machine ([`protocol`]); the shell
//! ([`shell`]) runs them over a simulated network, and consumers allocate
//! with the production code of [`rocketmq_rebalance`], so what is checked is
//! what ships. A run is configured by a scenario, sizes and budgets of
//! faults ([`config`]; each fault is defined once, in
//! [`config::Fault::spec`], and `docs/contributing.md` is the recipe for
//! adding one). The guarantees ([`properties`]) are
//! checked on every reachable state; [`check()`] runs them, and liveness
//! under fairness when asked, into a [`Report`]. [`search`] holds the
//! model-agnostic searches (shortest counterexamples, fair cycles);
//! [`trace`] describes states and paths in RocketMQ's words, [`view`] as
//! data that [`explorer`] and the HTML report draw.
//! `docs/spec.md` is the full specification.
//!
//! | property | promise |
//! |---|---|
//! | `no queue stays double-owned` | at rest, no queue is consumed by two consumers |
//! | `converged when quiescent` | at rest, the group agrees and every queue has exactly one owner |
//! | `member lists agree at rest` | when messages stop, no broker contradicts what a consumer used |
//! | `converges and stays converged` | under fairness, every run ends converged for ever (`--liveness`) |
//!
//! # Check your own strategy
//!
//! ```no_run
//! use rocketmq_rebalance_model::{check_strategy, CheckOptions, Scenario};
//! let strategy = rocketmq_rebalance::strategy_from_name("AVG").unwrap();
//! let options = CheckOptions { liveness: true, ..CheckOptions::default() };
//! let report = check_strategy(strategy.into(), Scenario::Healthy, None, &options).unwrap();
//! assert!(report.guarantees_hold(), "{report:#?}");
//! ```
#![forbid(unsafe_code)]

pub mod check;
#[macro_use]
pub mod config;
pub mod explorer;
pub mod model;
pub mod properties;
pub mod protocol;
pub mod search;
pub mod shell;
pub mod trace;
pub mod view;

pub use check::{check, CheckOptions, Progress, Report, Search, Status};
pub use config::{Config, ConfigError, NetworkKind, Scenario, Sizes};
pub use model::build_model;
pub use shell::RebalanceModel;

use rocketmq_rebalance::AllocateStrategy;
use std::sync::Arc;

/// Checks `scenario` (with its default sizes unless `sizes` is given) on
/// the ordered network with `strategy`, silently; liveness too when
/// `options.liveness` asks for it.
pub fn check_strategy(
    strategy: Arc<dyn AllocateStrategy>,
    scenario: Scenario,
    sizes: Option<Sizes>,
    options: &CheckOptions,
) -> Result<Report, ConfigError> {
    let sizes = sizes.unwrap_or_else(|| scenario.default_sizes());
    let cfg = Config::new(scenario, sizes, NetworkKind::Ordered, strategy)?;
    Ok(check(cfg, options, |_| {}))
}
