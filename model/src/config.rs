//! What one model run checks: sizes, scenario, strategy, network semantics
//! and fault budgets, plus everything derived from them once (queue
//! universe, routes, names) so that actors stay small and fast.

use rocketmq_rebalance::{rebalance_allocate, AllocateStrategy, MessageQueue};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Member sets are `u16` bit sets indexed by consumer.
pub const MAX_CONSUMERS: usize = 16;
/// Broker names are `broker-a` to `broker-h`.
pub const MAX_BROKERS: usize = 8;
/// Per-consumer state keeps one member view per topic in a fixed array.
pub const MAX_TOPICS: usize = 4;
/// Owned queues are a `u64` bit set over every queue any route version has.
pub const MAX_QUEUES: usize = 64;

/// A bit set of consumers, by consumer index.
pub type ConsumerSet = u16;
/// A bit set of queues, by index into [`Config::queues`].
pub type QueueSet = u64;

/// How messages travel between two actors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkKind {
    /// FIFO per (sender, receiver): RocketMQ remoting runs over one TCP
    /// connection per client and broker, so this is the faithful default.
    Ordered,
    /// Any in-flight message may overtake another; each is delivered once.
    Unordered,
    /// Unordered, and any message may be delivered again at any time.
    Duplicating,
}

impl NetworkKind {
    /// The names accepted by [`FromStr`].
    pub const NAMES: &'static [&'static str] = &["ordered", "unordered", "duplicating"];
}

impl FromStr for NetworkKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ordered" => Ok(Self::Ordered),
            "unordered" => Ok(Self::Unordered),
            "duplicating" => Ok(Self::Duplicating),
            _ => Err(format!(
                "unknown network '{s}', expected one of: {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

impl fmt::Display for NetworkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ordered => "ordered",
            Self::Unordered => "unordered",
            Self::Duplicating => "duplicating",
        })
    }
}

/// A named situation of a consumer group, each a failure mode or an
/// operation RocketMQ users meet in production.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Consumers start concurrently; nothing goes wrong. Every property holds.
    Healthy,
    /// Members of one group subscribe to different topics: the brokers list
    /// every member for every topic, so some queues are consumed by nobody.
    InconsistentSubscription,
    /// Two consumers share one client id (same IP and pid in containers):
    /// both take the same block and another block is orphaned.
    DuplicateClientId,
    /// The first consumer may crash; brokers expire it silently.
    Crash,
    /// The name server adds a queue while the group rebalances.
    RouteChange,
    /// The last consumer cannot reach the last broker.
    PartialPartition,
    /// The last consumer shuts down gracefully (scale-in, rolling deploy).
    GracefulShutdown,
}

impl Scenario {
    /// Every scenario, in documentation order.
    pub const ALL: &'static [Scenario] = &[
        Self::Healthy,
        Self::InconsistentSubscription,
        Self::DuplicateClientId,
        Self::Crash,
        Self::RouteChange,
        Self::PartialPartition,
        Self::GracefulShutdown,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::InconsistentSubscription => "inconsistent-subscription",
            Self::DuplicateClientId => "duplicate-client-id",
            Self::Crash => "crash",
            Self::RouteChange => "route-change",
            Self::PartialPartition => "partial-partition",
            Self::GracefulShutdown => "graceful-shutdown",
        }
    }

    /// The sizes and budgets this scenario uses unless overridden.
    pub fn default_sizes(self) -> Sizes {
        let base = Sizes::default();
        match self {
            Self::Healthy | Self::DuplicateClientId | Self::PartialPartition => base,
            Self::InconsistentSubscription => Sizes { topics: 2, ..base },
            // One event on a running group: the event alone is what is
            // checked, and the state space stays small. With AVG, three
            // queues per broker make a queue change hands between two
            // survivors, so the hazards are reachable.
            Self::Crash => Sizes {
                crashes: 1,
                joins: Some(0),
                ..base
            },
            Self::RouteChange => Sizes {
                route_changes: 1,
                joins: Some(0),
                queues: 3,
                ..base
            },
            Self::GracefulShutdown => Sizes {
                leaves: 1,
                joins: Some(0),
                queues: 3,
                ..base
            },
        }
    }
}

impl FromStr for Scenario {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|scenario| scenario.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|s| s.name()).collect();
                format!(
                    "unknown scenario '{s}', expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Sizes of the group and budgets of environment events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Sizes {
    /// Consumers in the group.
    pub consumers: usize,
    /// Brokers; each hosts every topic.
    pub brokers: usize,
    /// Topics the group subscribes to.
    pub topics: usize,
    /// Read queues per topic per broker in the initial route.
    pub queues: usize,
    /// How many consumers (the last ones) join during the run; the others
    /// start registered and balanced. `None` means all of them (a cold
    /// start). The default, one, is a scale-out of a running group.
    pub joins: Option<usize>,
    /// How many consumers (the first ones) may crash.
    pub crashes: usize,
    /// How many consumers (the last ones) may shut down gracefully.
    pub leaves: usize,
    /// Route changes the name server makes, each adding one queue.
    pub route_changes: usize,
    /// How many consumers (the first ones) may each lose one
    /// `NOTIFY_CONSUMER_IDS_CHANGED` (a one-way message).
    pub lost_notifications: usize,
    /// How many consumers (the first ones) may each have one
    /// `GET_CONSUMER_LIST_BY_GROUP` fail (its broker unreachable for it).
    pub failed_queries: usize,
}

impl Default for Sizes {
    fn default() -> Self {
        Self {
            consumers: 3,
            brokers: 2,
            topics: 1,
            queues: 2,
            joins: Some(1),
            crashes: 0,
            leaves: 0,
            route_changes: 0,
            lost_notifications: 0,
            failed_queries: 0,
        }
    }
}

/// What is fixed about one consumer for the whole run.
#[derive(Clone, Debug)]
pub struct ConsumerSpec {
    /// Name in traces, unique (`c1`, `c2`, ...).
    pub name: String,
    /// The client id it reports to brokers; not unique in `duplicate-client-id`.
    pub client_id: String,
    /// Topics it subscribes to, as a bit set of topic indices.
    pub topics: u8,
    /// Starts unregistered and joins during the run.
    pub joins: bool,
    /// May crash once.
    pub may_crash: bool,
    /// May shut down gracefully once.
    pub may_leave: bool,
    /// Brokers it cannot reach, as a bit set of broker indices.
    pub unreachable: u8,
    /// May lose one notification.
    pub may_lose_notification: bool,
    /// May have one consumer-list query fail.
    pub may_fail_query: bool,
}

/// One queue of the universe: every queue that any route version has.
#[derive(Clone, Debug)]
pub struct QueueInfo {
    /// Topic index.
    pub topic: usize,
    /// Broker index.
    pub broker: usize,
    /// The queue as the allocation crate sees it.
    pub mq: MessageQueue,
    /// Short name in traces, such as `a0` (or `t1.a0` with several topics).
    pub label: String,
}

/// Why a configuration cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Allocation memo key: route version, topic, members, consumer.
type AllocKey = (u8, u8, ConsumerSet, u8);

/// A complete, validated model configuration.
pub struct Config {
    /// The scenario it was built from.
    pub scenario: Scenario,
    /// Sizes and budgets.
    pub sizes: Sizes,
    /// Network semantics.
    pub network: NetworkKind,
    /// The allocation strategy every consumer runs.
    pub strategy: Arc<dyn AllocateStrategy>,
    /// Consumer group name passed to the strategy.
    pub group: String,
    /// Topic names.
    pub topic_names: Vec<String>,
    /// Broker names.
    pub broker_names: Vec<String>,
    /// One entry per consumer.
    pub consumers: Vec<ConsumerSpec>,
    /// Every queue of every route version.
    pub queues: Vec<QueueInfo>,
    /// `routes[v][topic]`: the queues of route version `v` for one topic.
    routes: Vec<Vec<QueueSet>>,
    /// Allocation results. The model is deterministic, so memoising the
    /// strategy's answers changes nothing but speed.
    memo: RwLock<HashMap<AllocKey, Option<QueueSet>>>,
    /// Consumers wake up periodically (the rebalance service's 20 s tick)
    /// instead of only when notified: needed to see endless rebalancing
    /// (liveness), not for the safety properties at rest. Off by default.
    pub periodic_ticks: bool,
    /// Set to end a run early: every successor is then out of bounds.
    /// Stateright's own timeout only ends a thread when it runs out of
    /// local work, which in depth-first search can take minutes.
    stop: AtomicBool,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("scenario", &self.scenario)
            .field("sizes", &self.sizes)
            .field("network", &self.network)
            .field("strategy", &self.strategy.name())
            .finish()
    }
}

fn letter(index: usize) -> char {
    char::from(b'a' + index as u8)
}

impl Config {
    /// Builds the configuration of `scenario` with `sizes`, checking every
    /// bound the compact state representation relies on.
    pub fn new(
        scenario: Scenario,
        sizes: Sizes,
        network: NetworkKind,
        strategy: Arc<dyn AllocateStrategy>,
    ) -> Result<Self, ConfigError> {
        let fail = |msg: String| Err(ConfigError(msg));
        if sizes.consumers == 0 || sizes.consumers > MAX_CONSUMERS {
            return fail(format!("--consumers must be 1..={MAX_CONSUMERS}"));
        }
        if sizes.brokers == 0 || sizes.brokers > MAX_BROKERS {
            return fail(format!("--brokers must be 1..={MAX_BROKERS}"));
        }
        if sizes.topics == 0 || sizes.topics > MAX_TOPICS {
            return fail(format!("--topics must be 1..={MAX_TOPICS}"));
        }
        if sizes.queues == 0 {
            return fail("--queues must be at least 1".into());
        }
        let joins = sizes.joins.unwrap_or(sizes.consumers);
        if joins > sizes.consumers {
            return fail("--joins cannot exceed --consumers".into());
        }
        if sizes.crashes > sizes.consumers || sizes.leaves > sizes.consumers {
            return fail("--crashes and --leaves cannot exceed --consumers".into());
        }
        if sizes.lost_notifications > sizes.consumers || sizes.failed_queries > sizes.consumers {
            return fail(
                "--lost-notifications and --failed-queries cannot exceed --consumers".into(),
            );
        }
        if sizes.route_changes > 200 {
            return fail("--route-changes must be at most 200".into());
        }
        match scenario {
            Scenario::InconsistentSubscription if sizes.topics < 2 => {
                return fail("inconsistent-subscription needs --topics 2 or more".into())
            }
            Scenario::DuplicateClientId if sizes.consumers < 2 => {
                return fail("duplicate-client-id needs --consumers 2 or more".into())
            }
            _ => {}
        }

        // Route version v adds v queues, one at a time, round robin over
        // the brokers, to the first topic.
        let extra = |broker: usize, version: usize| {
            (0..version)
                .filter(|change| change % sizes.brokers == broker)
                .count()
        };
        let topic_names: Vec<String> = (0..sizes.topics)
            .map(|t| format!("Topic{}", letter(t).to_ascii_uppercase()))
            .collect();
        let broker_names: Vec<String> = (0..sizes.brokers)
            .map(|b| format!("broker-{}", letter(b)))
            .collect();
        let mut queues = Vec::new();
        let mut index_of = HashMap::new();
        for (topic, topic_name) in topic_names.iter().enumerate() {
            for (broker, broker_name) in broker_names.iter().enumerate() {
                let most = sizes.queues
                    + if topic == 0 {
                        extra(broker, sizes.route_changes)
                    } else {
                        0
                    };
                for queue_id in 0..most {
                    index_of.insert((topic, broker, queue_id), queues.len());
                    let short = format!("{}{queue_id}", letter(broker));
                    queues.push(QueueInfo {
                        topic,
                        broker,
                        mq: MessageQueue::new(
                            topic_name.clone(),
                            broker_name.clone(),
                            queue_id as i32,
                        ),
                        label: if sizes.topics == 1 {
                            short
                        } else {
                            format!("t{}.{short}", topic + 1)
                        },
                    });
                }
            }
        }
        if queues.len() > MAX_QUEUES {
            return fail(format!(
                "{} queues in all (topics x brokers x queues, plus route changes); at most {MAX_QUEUES}",
                queues.len()
            ));
        }
        let routes = (0..=sizes.route_changes)
            .map(|version| {
                (0..sizes.topics)
                    .map(|topic| {
                        let mut set = 0;
                        for broker in 0..sizes.brokers {
                            let count = sizes.queues
                                + if topic == 0 {
                                    extra(broker, version)
                                } else {
                                    0
                                };
                            for queue_id in 0..count {
                                set |= 1 << index_of[&(topic, broker, queue_id)];
                            }
                        }
                        set
                    })
                    .collect()
            })
            .collect();

        let n = sizes.consumers;
        let consumers = (0..n)
            .map(|i| {
                let name = format!("c{}", i + 1);
                // The last consumer reuses its neighbour's id, as two pods
                // with one IP and pid would.
                let client_id = if scenario == Scenario::DuplicateClientId && i == n - 1 {
                    format!("c{}", i)
                } else {
                    name.clone()
                };
                let all_topics = (1u8 << sizes.topics) - 1;
                let topics = if scenario == Scenario::InconsistentSubscription {
                    1 << (i % sizes.topics)
                } else {
                    all_topics
                };
                let unreachable = if scenario == Scenario::PartialPartition && i == n - 1 {
                    1 << (sizes.brokers - 1)
                } else {
                    0
                };
                ConsumerSpec {
                    name,
                    client_id,
                    topics,
                    joins: i >= n - joins,
                    may_crash: i < sizes.crashes,
                    may_leave: i >= n - sizes.leaves,
                    unreachable,
                    may_lose_notification: i < sizes.lost_notifications,
                    may_fail_query: i < sizes.failed_queries,
                }
            })
            .collect();
        Ok(Self {
            scenario,
            sizes,
            network,
            strategy,
            group: "GID_rebalance".into(),
            topic_names,
            broker_names,
            consumers,
            queues,
            routes,
            memo: RwLock::new(HashMap::new()),
            periodic_ticks: false,
            stop: AtomicBool::new(false),
        })
    }

    /// Asks a running check to stop exploring.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`Config::request_stop`] was called.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The last route version the name server will publish.
    pub fn last_route(&self) -> u8 {
        (self.routes.len() - 1) as u8
    }

    /// Queues of `topic` in route version `route`.
    pub fn route_queues(&self, route: u8, topic: usize) -> QueueSet {
        self.routes[route as usize][topic]
    }

    /// Queues of `topic` in any route version.
    pub fn topic_queues(&self, topic: usize) -> QueueSet {
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.topic == topic)
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// Consumers that never join, crash or leave: registered from the start.
    pub fn initial_members(&self) -> ConsumerSet {
        self.consumers
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.joins)
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// Consumers that can reach `broker`.
    pub fn reachable_from(&self, broker: usize) -> ConsumerSet {
        self.consumers
            .iter()
            .enumerate()
            .filter(|(_, c)| c.unreachable & (1 << broker) == 0)
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// What `consumer` gets of `topic` when route `route` is cached and the
    /// broker listed `members`: RocketMQ's `rebalanceByTopic` through the
    /// allocation crate. `None` when the strategy fails (RocketMQ then logs
    /// and keeps what it has).
    pub fn allocate(
        &self,
        route: u8,
        topic: usize,
        members: ConsumerSet,
        consumer: usize,
    ) -> Option<QueueSet> {
        let key = (route, topic as u8, members, consumer as u8);
        if let Some(hit) = self.memo.read().ok().and_then(|m| m.get(&key).copied()) {
            return hit;
        }
        let queue_set = self.route_queues(route, topic);
        let indices: Vec<usize> = members_of(queue_set).collect();
        let mqs: Vec<MessageQueue> = indices.iter().map(|&i| self.queues[i].mq.clone()).collect();
        let cids: Vec<String> = members_of(u64::from(members))
            .map(|c| self.consumers[c].client_id.clone())
            .collect();
        let result = rebalance_allocate(
            self.strategy.as_ref(),
            &self.group,
            &self.consumers[consumer].client_id,
            &mqs,
            &cids,
        )
        .ok()
        .map(|allocated| {
            allocated
                .iter()
                .filter_map(|mq| mqs.iter().position(|m| m == mq))
                .fold(0, |set, pos| set | 1 << indices[pos])
        });
        if let Ok(mut memo) = self.memo.write() {
            memo.insert(key, result);
        }
        result
    }

    /// Names of the queues in `set`, for traces.
    pub fn queue_labels(&self, set: QueueSet) -> String {
        let labels: Vec<&str> = members_of(set)
            .map(|i| self.queues[i].label.as_str())
            .collect();
        format!("[{}]", labels.join(" "))
    }

    /// Names of the consumers in `set` as brokers report them (client ids).
    pub fn member_labels(&self, set: ConsumerSet) -> String {
        let labels: Vec<&str> = members_of(u64::from(set))
            .map(|i| self.consumers[i].client_id.as_str())
            .collect();
        format!("[{}]", labels.join(" "))
    }
}

/// The indices of the bits set in `set`, lowest first.
pub fn members_of(set: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |i| set & (1 << i) != 0)
}
