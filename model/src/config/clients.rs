//! Each consumer's client: the order in which it sorts the queue list and
//! the client-id list, and the strategy it runs on them.
//!
//! RocketMQ allocates on the client, and a group need not run one client:
//! a group migrating from the Java client to the Rust client
//! (`rocketmq-client-rust`) or the Go client runs both for a while, and a
//! rolling change of the group's strategy runs the old and the new one.
//! The Java client sorts strings by UTF-16 code units, the Rust and Go
//! clients by their UTF-8 bytes ([`SortOrder`]); each runs its own copy of
//! the strategies, and the Go client's `CONSISTENT_HASH` is another ring
//! than Java's ([`GoConsistentHash`]). By default every consumer runs the
//! Java client with the group's strategy; [`Config::with_clients`] and
//! [`Config::with_client_ids`] change that, and two scenarios
//! (`mixed-clients`, `strategy-rollout`) come with their own.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rocketmq_rebalance::strategy::GoConsistentHash;
use rocketmq_rebalance::{AllocateStrategy, SortOrder, StrategySpec};

use super::universe::ConsumerSpec;
use super::{Config, ConfigError, Scenario};

/// The client a consumer runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientKind {
    /// The Java client: Java's order (UTF-16 code units) and the strategies
    /// as Java computes them (this project's, which are Java's bit for bit).
    Java,
    /// A client that sorts by UTF-8 bytes, as the Go client
    /// (`rocketmq-client-go` v2) and the Rust client
    /// (`rocketmq-client-rust`) do. It runs `CONSISTENT_HASH` as the Go
    /// client computes it, on Go's own ring ([`GoConsistentHash`], with
    /// the same number of virtual nodes), and every other strategy as Java
    /// computes it (Go's `AVG` and `AVG_BY_CIRCLE` are Java's).
    Bytes,
    /// The Rust client's own strategy code (`rocketmq-model`'s
    /// `AllocateMessageQueueStrategy` implementations), after its byte
    /// sort; only in a model built with the `rocketmq-rust` feature.
    RocketmqRust,
}

impl ClientKind {
    /// Every client kind, in the order the flag's help lists them.
    pub const ALL: &'static [ClientKind] = &[Self::Java, Self::Bytes, Self::RocketmqRust];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Java => "java",
            Self::Bytes => "bytes",
            Self::RocketmqRust => "rocketmq-rust",
        }
    }

    /// The order in which it sorts both lists before it allocates.
    pub fn order(self) -> SortOrder {
        match self {
            Self::Java => SortOrder::Java,
            Self::Bytes | Self::RocketmqRust => SortOrder::Bytes,
        }
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One consumer's client as the command line names it: `java:AVG`,
/// `bytes:AVG_BY_CIRCLE`, `rocketmq-rust:AVG`.
///
/// ```
/// use rocketmq_rebalance_model::configuration::{ClientChoice, ClientKind};
///
/// let choice: ClientChoice = "bytes:AVG_BY_CIRCLE".parse()?;
/// assert_eq!(choice.kind, ClientKind::Bytes);
/// assert_eq!(choice.to_string(), "bytes:AVG_BY_CIRCLE");
/// assert!("python:AVG".parse::<ClientChoice>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientChoice {
    /// The client.
    pub kind: ClientKind,
    /// The strategy it runs.
    pub strategy: StrategySpec,
}

impl fmt::Display for ClientChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.strategy.name())
    }
}

impl FromStr for ClientChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let kinds: Vec<&str> = ClientKind::ALL.iter().map(|k| k.name()).collect();
        let Some((kind, strategy)) = s.split_once(':') else {
            return Err(format!(
                "'{s}' is no client: expected CLIENT:STRATEGY, CLIENT one of {}",
                kinds.join(", ")
            ));
        };
        let kind = ClientKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == kind)
            .ok_or_else(|| {
                format!(
                    "unknown client '{kind}' in '{s}', expected one of: {}",
                    kinds.join(", ")
                )
            })?;
        let strategy = strategy.parse().map_err(|e| format!("in '{s}': {e}"))?;
        Ok(ClientChoice { kind, strategy })
    }
}

impl ClientChoice {
    /// The client, ready to allocate.
    pub fn build(&self) -> Result<Client, ConfigError> {
        let strategy: Arc<dyn AllocateStrategy> = match self.kind {
            ClientKind::Java => Arc::from(self.strategy.build()),
            ClientKind::Bytes => go_strategy(&self.strategy),
            ClientKind::RocketmqRust => rocketmq_rust_strategy(&self.strategy)?,
        };
        Ok(Client {
            kind: self.kind,
            strategy,
        })
    }
}

/// `spec` as the Go client computes it.
fn go_strategy(spec: &StrategySpec) -> Arc<dyn AllocateStrategy> {
    match spec {
        StrategySpec::ConsistentHash { virtual_nodes } => {
            Arc::new(GoConsistentHash::new(*virtual_nodes))
        }
        other => Arc::from(other.build()),
    }
}

/// rocketmq-rust's own code for `spec`, behind this crate's trait.
#[cfg(feature = "rocketmq-rust")]
fn rocketmq_rust_strategy(spec: &StrategySpec) -> Result<Arc<dyn AllocateStrategy>, ConfigError> {
    rocketmq_rebalance_rust_client::RocketmqRustStrategy::from_spec(spec)
        .map(|s| Arc::new(s) as Arc<dyn AllocateStrategy>)
        .map_err(|reason| ConfigError::Clients { reason })
}

/// Without the `rocketmq-rust` feature there is no rocketmq-rust code.
#[cfg(not(feature = "rocketmq-rust"))]
fn rocketmq_rust_strategy(_: &StrategySpec) -> Result<Arc<dyn AllocateStrategy>, ConfigError> {
    Err(ConfigError::Clients {
        reason: "client rocketmq-rust needs a build with the `rocketmq-rust` feature \
                 (cargo build --release -p rocketmq-rebalance-cli --features rocketmq-rust)"
            .into(),
    })
}

/// Some consumers' clients, by consumer name: `c1=java:AVG,c2=bytes:AVG`.
/// Consumers left out run the Java client with the group's strategy (or
/// their scenario's client).
///
/// ```
/// use rocketmq_rebalance_model::configuration::ClientChoices;
///
/// let choices: ClientChoices = "c1=java:AVG,c2=bytes:AVG".parse()?;
/// assert_eq!(choices.0.len(), 2);
/// assert_eq!(choices.0[1].0, "c2");
/// assert!("c1=java:AVG,c1=bytes:AVG".parse::<ClientChoices>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientChoices(pub Vec<(String, ClientChoice)>);

impl FromStr for ClientChoices {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut choices: Vec<(String, ClientChoice)> = Vec::new();
        for item in s.split(',') {
            let Some((consumer, choice)) = item.split_once('=') else {
                return Err(format!(
                    "'{item}' is no consumer's client: expected CONSUMER=CLIENT:STRATEGY, such as c2=bytes:AVG"
                ));
            };
            if choices.iter().any(|(c, _)| c == consumer) {
                return Err(format!("consumer {consumer} is given two clients"));
            }
            choices.push((consumer.to_string(), choice.parse()?));
        }
        Ok(ClientChoices(choices))
    }
}

/// A consumer's client, built: its kind and its strategy.
#[derive(Clone)]
pub struct Client {
    /// The client.
    pub kind: ClientKind,
    /// The strategy it runs.
    pub strategy: Arc<dyn AllocateStrategy>,
}

impl Client {
    /// The Java client running `strategy`.
    pub fn java(strategy: Arc<dyn AllocateStrategy>) -> Self {
        Client {
            kind: ClientKind::Java,
            strategy,
        }
    }

    /// The order in which it sorts.
    pub fn order(&self) -> SortOrder {
        self.kind.order()
    }

    /// `java:AVG`, as the flag names it.
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind, self.strategy.name())
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// The strategy a rollout moves the group to: `AVG_BY_CIRCLE`, or `AVG`
/// when the group already runs `AVG_BY_CIRCLE`.
fn rollout_target(group: &dyn AllocateStrategy) -> StrategySpec {
    if group.name() == "AVG_BY_CIRCLE" {
        StrategySpec::Averagely
    } else {
        StrategySpec::AveragelyByCircle
    }
}

/// Each consumer's client in `scenario`: the Java client with the group's
/// `strategy`, but in `mixed-clients` the last consumer (the one that
/// joins) runs the Go client (bytes) with the group's strategy, and in
/// `strategy-rollout` the joiners (the consumers restarted with the new
/// strategy) run [`rollout_target`].
pub(crate) fn scenario_clients(
    scenario: Scenario,
    consumers: &[ConsumerSpec],
    strategy: &Arc<dyn AllocateStrategy>,
) -> Vec<Client> {
    let n = consumers.len();
    consumers
        .iter()
        .enumerate()
        .map(|(i, spec)| match scenario {
            Scenario::MixedClients if i + 1 == n => Client {
                kind: ClientKind::Bytes,
                strategy: go_strategy_of(strategy),
            },
            Scenario::StrategyRollout if spec.joins() => {
                Client::java(Arc::from(rollout_target(strategy.as_ref()).build()))
            }
            _ => Client::java(strategy.clone()),
        })
        .collect()
}

/// The group's `strategy` as the Go client computes it. The model names
/// strategies (`--strategy`, `--clients`), so this reads it by its name as
/// `--clients` does: a `CONSISTENT_HASH` ring has the default 10 virtual
/// nodes. Any other strategy, the crate's or not, is the group's own.
fn go_strategy_of(strategy: &Arc<dyn AllocateStrategy>) -> Arc<dyn AllocateStrategy> {
    match strategy.name().parse::<StrategySpec>() {
        Ok(spec @ StrategySpec::ConsistentHash { .. }) => go_strategy(&spec),
        _ => strategy.clone(),
    }
}

/// The client ids of `mixed-clients`: the smallest ids on which Java's
/// order and the byte order disagree. The last consumer's is `U+10000`,
/// the first character outside the Basic Multilingual Plane (in UTF-16 a
/// surrogate pair, `D800 DC00`); the others' are `U+E000`, `U+E001`, ...,
/// the first characters above the surrogates. Java sorts the last id
/// first, the byte order last.
pub(crate) fn scenario_ids(scenario: Scenario, consumers: &mut [ConsumerSpec]) {
    if scenario != Scenario::MixedClients {
        return;
    }
    let n = consumers.len();
    for (i, spec) in consumers.iter_mut().enumerate() {
        let c = if i + 1 == n {
            '\u{10000}'
        } else {
            char::from_u32(0xE000 + i as u32).unwrap_or('\u{E000}')
        };
        spec.client_id = c.to_string();
    }
}

/// A client id as traces show it: characters that print as nothing
/// (controls, private use, unassigned planes' private use) as `\u{...}`.
///
/// ```
/// use rocketmq_rebalance_model::configuration::shown_id;
///
/// assert_eq!(shown_id("10.0.0.1@1"), "10.0.0.1@1");
/// assert_eq!(shown_id("\u{E000}"), "\\u{e000}");
/// assert_eq!(shown_id("\u{10000}"), "\u{10000}");
/// ```
pub fn shown_id(id: &str) -> Cow<'_, str> {
    let hidden = |c: char| {
        c.is_control()
            || ('\u{E000}'..='\u{F8FF}').contains(&c)
            || c >= '\u{F0000}'
            || ('\u{FFF0}'..='\u{FFFF}').contains(&c)
    };
    if !id.chars().any(hidden) {
        return Cow::Borrowed(id);
    }
    Cow::Owned(
        id.chars()
            .map(|c| {
                if hidden(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

impl Config {
    /// The same configuration with the clients `choices` names (the
    /// others keep theirs).
    ///
    /// ```
    /// use rocketmq_rebalance::strategy_from_name;
    /// use rocketmq_rebalance_model::configuration::{ClientChoices, Config, NetworkKind, Scenario};
    ///
    /// let avg = strategy_from_name("AVG").unwrap();
    /// let cfg = Config::new(Scenario::Healthy, Scenario::Healthy.default_sizes(), NetworkKind::Ordered, avg.into())
    ///     .unwrap()
    ///     .with_clients(&"c3=bytes:AVG_BY_CIRCLE".parse::<ClientChoices>().unwrap())
    ///     .unwrap();
    /// assert_eq!(cfg.clients[2].label(), "bytes:AVG_BY_CIRCLE");
    /// assert!(cfg.mixed_clients());
    /// ```
    pub fn with_clients(mut self, choices: &ClientChoices) -> Result<Self, ConfigError> {
        for (name, choice) in &choices.0 {
            let Some(i) = self.consumers.iter().position(|c| &c.name == name) else {
                return Err(ConfigError::Clients {
                    reason: format!(
                        "no consumer {name}: consumers are c1..c{}",
                        self.consumers.len()
                    ),
                });
            };
            self.clients[i] = choice.build()?;
        }
        self.memo = super::allocation::Memo::default();
        Ok(self)
    }

    /// The same configuration with these client ids, one per consumer in
    /// order (ids may repeat, as two pods with one IP and pid do).
    pub fn with_client_ids(mut self, ids: &[String]) -> Result<Self, ConfigError> {
        if ids.len() != self.consumers.len() {
            return Err(ConfigError::Clients {
                reason: format!(
                    "{} client ids for {} consumers: give one per consumer",
                    ids.len(),
                    self.consumers.len()
                ),
            });
        }
        if ids.iter().any(|id| id.is_empty()) {
            return Err(ConfigError::Clients {
                reason: "a client id cannot be empty".into(),
            });
        }
        for (spec, id) in self.consumers.iter_mut().zip(ids) {
            spec.client_id = id.clone();
        }
        self.memo = super::allocation::Memo::default();
        Ok(self)
    }

    /// The same configuration where the consumers `names` run a message
    /// listener that stops when interrupted
    /// (`ConsumerSpec::interruptible`); `all` names every consumer.
    ///
    /// ```
    /// use rocketmq_rebalance::strategy_from_name;
    /// use rocketmq_rebalance_model::configuration::{Config, NetworkKind, Scenario};
    ///
    /// let healthy = || {
    ///     let avg = strategy_from_name("AVG").unwrap();
    ///     let sizes = Scenario::Healthy.default_sizes();
    ///     Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg.into()).unwrap()
    /// };
    /// let cfg = healthy().with_interruptible_listeners(&["c2".to_string()]).unwrap();
    /// assert!(cfg.consumers[1].interruptible && !cfg.consumers[0].interruptible);
    /// assert!(healthy().with_interruptible_listeners(&["c9".to_string()]).is_err());
    /// ```
    pub fn with_interruptible_listeners(mut self, names: &[String]) -> Result<Self, ConfigError> {
        for name in names {
            let every = name == "all";
            if !every && !self.consumers.iter().any(|c| &c.name == name) {
                return Err(ConfigError::Clients {
                    reason: format!(
                        "no consumer {name}: consumers are c1..c{} (or all)",
                        self.consumers.len()
                    ),
                });
            }
            for spec in self.consumers.iter_mut() {
                spec.interruptible |= every || &spec.name == name;
            }
        }
        Ok(self)
    }

    /// The consumers whose listener stops when interrupted, for the
    /// report's summary: `c1 c3`, or none.
    pub fn interruptible_listeners(&self) -> Option<String> {
        let names: Vec<&str> = self
            .consumers
            .iter()
            .filter(|c| c.interruptible)
            .map(|c| c.name.as_str())
            .collect();
        (!names.is_empty()).then(|| names.join(" "))
    }

    /// The client ids of `set` as consumer `consumer`'s client sorts them
    /// before it allocates, for traces: `[𐀀 \u{e000}] in java order`.
    pub(crate) fn members_as_sorted_by(&self, consumer: usize, set: super::ConsumerSet) -> String {
        let order = self.clients[consumer].order();
        let mut ids: Vec<&str> = super::members_of(u64::from(set))
            .map(|i| self.consumers[i].client_id.as_str())
            .collect();
        ids.sort_by(|a, b| order.compare_ids(a, b));
        let shown: Vec<Cow<'_, str>> = ids.into_iter().map(shown_id).collect();
        format!("[{}] in {} order", shown.join(" "), order.name())
    }

    /// Whether some consumer runs another client than the Java client with
    /// the group's strategy (the report's summary then lists them).
    pub fn custom_clients(&self) -> bool {
        self.clients
            .iter()
            .any(|c| c.kind != ClientKind::Java || c.strategy.name() != self.strategy.name())
    }

    /// Whether the consumers run different clients (sort orders or
    /// strategies): traces then name each consumer's client.
    pub fn mixed_clients(&self) -> bool {
        let mut labels = self.clients.iter().map(|c| (c.order(), c.label()));
        match labels.next() {
            Some(first) => labels.any(|l| l != first),
            None => false,
        }
    }
}
