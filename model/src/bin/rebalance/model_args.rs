//! The flags that pick a model configuration, shared by `check` and
//! `explore` so that a path printed by one opens the same state in the other.

use std::sync::Arc;

use clap::Args;
use rocketmq_rebalance::{strategy_from_name, STRATEGY_NAMES};
use rocketmq_rebalance_model::{Config, NetworkKind, Scenario};

/// Scenario, sizes, strategy, network and fault budgets.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// Situation to check: healthy, inconsistent-subscription,
    /// duplicate-client-id, crash, route-change, partial-partition,
    /// graceful-shutdown.
    #[arg(long, default_value = "healthy", value_parser = parse_scenario)]
    pub scenario: Scenario,
    /// Consumers in the group (scenario default: 3).
    #[arg(long)]
    pub consumers: Option<usize>,
    /// Brokers, each hosting every topic (default 2).
    #[arg(long)]
    pub brokers: Option<usize>,
    /// Topics (default 1; inconsistent-subscription: 2).
    #[arg(long)]
    pub topics: Option<usize>,
    /// Read queues per topic per broker (default 2; route-change and
    /// graceful-shutdown: 3).
    #[arg(long)]
    pub queues: Option<usize>,
    /// Allocation strategy, any name of the allocation crate (AVG,
    /// AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG, MACHINE_ROOM,
    /// MACHINE_ROOM_NEARBY[-X], STICKY[-k]).
    #[arg(long, default_value = "AVG", value_parser = parse_strategy)]
    pub strategy: String,
    /// Network semantics: ordered (per connection, as TCP), unordered,
    /// duplicating.
    #[arg(long, default_value = "ordered", value_parser = parse_network)]
    pub network: NetworkKind,
    /// Consumers (the last ones) that join during the run; the others start
    /// registered and balanced (default 1, a scale-out; crash, route-change
    /// and graceful-shutdown: 0; --joins equal to --consumers: a cold start).
    #[arg(long)]
    pub joins: Option<usize>,
    /// Consumers (the first ones) that may crash (crash: 1).
    #[arg(long)]
    pub crashes: Option<usize>,
    /// Consumers (the last ones) that may shut down gracefully
    /// (graceful-shutdown: 1).
    #[arg(long)]
    pub leaves: Option<usize>,
    /// Route changes, each adding one queue (route-change: 1).
    #[arg(long)]
    pub route_changes: Option<usize>,
    /// Consumers (the first ones) that may each lose one
    /// NOTIFY_CONSUMER_IDS_CHANGED (default 0).
    #[arg(long)]
    pub lost_notifications: Option<usize>,
    /// Consumers (the first ones) that may each have one
    /// GET_CONSUMER_LIST_BY_GROUP fail, its broker unreachable (default 0).
    #[arg(long)]
    pub failed_queries: Option<usize>,
}

impl ModelArgs {
    /// The configuration these flags describe, or why there is none.
    pub fn build_config(&self) -> Result<Config, String> {
        let mut sizes = self.scenario.default_sizes();
        let set = |target: &mut usize, value: Option<usize>| {
            if let Some(v) = value {
                *target = v;
            }
        };
        set(&mut sizes.consumers, self.consumers);
        set(&mut sizes.brokers, self.brokers);
        set(&mut sizes.topics, self.topics);
        set(&mut sizes.queues, self.queues);
        set(&mut sizes.crashes, self.crashes);
        set(&mut sizes.leaves, self.leaves);
        set(&mut sizes.route_changes, self.route_changes);
        set(&mut sizes.lost_notifications, self.lost_notifications);
        set(&mut sizes.failed_queries, self.failed_queries);
        if self.joins.is_some() {
            sizes.joins = self.joins;
        }
        let strategy = strategy_from_name(&self.strategy).map_err(|e| e.to_string())?;
        Config::new(self.scenario, sizes, self.network, Arc::from(strategy))
            .map_err(|e| e.to_string())
    }
}

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    s.parse()
}

fn parse_network(s: &str) -> Result<NetworkKind, String> {
    s.parse()
}

/// Any name the allocation crate knows, including variants such as
/// `STICKY-2` or `MACHINE_ROOM_NEARBY-CONSISTENT_HASH`.
fn parse_strategy(s: &str) -> Result<String, String> {
    match strategy_from_name(s) {
        Ok(_) => Ok(s.to_string()),
        Err(_) => Err(format!(
            "unknown strategy '{s}', expected one of: {}",
            STRATEGY_NAMES.join(", ")
        )),
    }
}
