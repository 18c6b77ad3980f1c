//! What one model run checks: the scenario, sizes and budgets a user picks
//! ([`scenario`], [`sizes`], [`network_kind`]), validated ([`error`]), and
//! what is derived from them once ([`universe`], [`allocation`]) so that
//! actors stay small and fast ([`bits`]).

pub mod allocation;
pub mod bits;
pub mod clients;
#[macro_use]
pub mod dense;
pub mod error;
pub mod fault;
pub mod network_kind;
pub mod protocol_options;
pub mod scenario;
pub mod sizes;
pub mod universe;
pub mod variant;

use std::fmt;
use std::sync::Arc;

use rocketmq_rebalance::AllocateStrategy;

pub(crate) use bits::listed;
pub use bits::{
    members_of, set_of, ConsumerSet, QueueSet, MAX_BROKERS, MAX_CONSUMERS, MAX_MESSAGES,
    MAX_MESSAGE_QUEUES, MAX_QUEUES, MAX_TOPICS,
};
pub use clients::{shown_id, Client, ClientChoice, ClientChoices, ClientKind};
pub use dense::{Dense, DenseIter};
pub use error::ConfigError;
pub use fault::{picks, Effect, Fault, FaultSet, FaultSpec, Layer, Pick, Target};
pub use network_kind::{NetworkKind, UnknownNetwork};
pub use protocol_options::{
    Allocator, Call, CallSet, Commit, ConsumeFrom, Consumption, LockTiming, PopClient,
    ProtocolOptions, UnknownAllocator, UnknownCommit, UnknownConsumeFrom, UnknownConsumption,
    UnknownPopClient,
};
pub use scenario::{Scenario, UnknownScenario};
pub use sizes::{Size, Sizes};
pub use universe::{ConsumerSpec, Layout, QueueInfo, Route, RouteStep};
pub use variant::{
    Demonstration, Entry, HarmFigures, Needs, Release, Releases, UnknownRelease, UnknownVariant,
    Variant, VariantKind, VariantSet, Verdicts,
};

/// The most route changes a run may make.
pub const MAX_ROUTE_CHANGES: usize = 200;
/// The most name servers.
pub const MAX_NAME_SERVERS: usize = 4;

/// A complete, validated model configuration.
pub struct Config {
    /// The scenario it was built from.
    pub scenario: Scenario,
    /// Sizes and budgets.
    pub sizes: Sizes,
    /// Network semantics.
    pub network: NetworkKind,
    /// The group's allocation strategy (`--strategy`), which every
    /// consumer runs unless its client says otherwise.
    pub strategy: Arc<dyn AllocateStrategy>,
    /// One client per consumer, as [`Config::consumers`]: the order it
    /// sorts in and the strategy it runs (module `clients`).
    pub clients: Vec<Client>,
    /// The optional parts of the protocol this run models.
    pub protocol: ProtocolOptions,
    /// Consumers wake up periodically (the rebalance service's 20 s wait)
    /// instead of only when notified: needed to see endless rebalancing
    /// (liveness), not for the safety properties at rest. Off unless set
    /// with [`Config::with_periodic_rebalance`].
    pub periodic_rebalance: bool,
    /// A failover is a step even where it changes nothing of the system
    /// (no lock held, the slave's copy current), spending the broker's
    /// failover: a trace sees every failover, so trace validation needs
    /// it as the model's step. Off unless set with
    /// [`Config::with_every_failover_a_step`]: a check would only gain
    /// states that differ in a budget nobody can see.
    pub every_failover_a_step: bool,
    /// See [`Config::round_order`]: each topic index once.
    round_order: Vec<u8>,
    /// Consumer group name passed to the strategy.
    pub group: String,
    /// Topic names.
    pub topic_names: Vec<String>,
    /// Broker names: the first `sizes.brokers`, then those that may join.
    pub broker_names: Vec<String>,
    /// Name server names.
    pub name_server_names: Vec<String>,
    /// One entry per consumer.
    pub consumers: Vec<ConsumerSpec>,
    /// Every queue of every route version.
    pub queues: Vec<QueueInfo>,
    /// The operators' route changes, in the order a run applies them.
    pub script: Vec<RouteStep>,
    /// `routes[v]`: the route after `v` steps of the script.
    routes: Vec<Layout>,
    /// `on_broker[b]`: every queue broker `b` may host.
    on_broker: Vec<QueueSet>,
    /// `of_topic[t]`: every queue of topic `t` in any route version.
    of_topic: Vec<QueueSet>,
    memo: allocation::Memo,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("scenario", &self.scenario)
            .field("sizes", &self.sizes)
            .field("network", &self.network)
            .field("strategy", &self.strategy.name())
            .field("clients", &self.clients)
            .field("protocol", &self.protocol)
            .field("periodic_rebalance", &self.periodic_rebalance)
            .field("every_failover_a_step", &self.every_failover_a_step)
            .field("round_order", &self.round_order)
            .finish()
    }
}

/// Checks every bound the compact state representation and the scenario
/// rely on.
fn validate(scenario: Scenario, sizes: &Sizes) -> Result<(), ConfigError> {
    let range = |size, value: usize, min, max| {
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(ConfigError::OutOfRange { size, min, max })
        }
    };
    range(Size::Consumers, sizes.consumers, 1, MAX_CONSUMERS)?;
    range(Size::Brokers, sizes.brokers, 1, MAX_BROKERS)?;
    range(Size::Topics, sizes.topics, 1, MAX_TOPICS)?;
    range(Size::Queues, sizes.queues, 1, MAX_QUEUES)?;
    range(
        Size::RouteChanges,
        sizes.route_changes,
        0,
        MAX_ROUTE_CHANGES,
    )?;
    range(
        Size::QueueRemovals,
        sizes.queue_removals,
        0,
        sizes.brokers * sizes.queues,
    )?;
    range(
        Size::BrokerJoins,
        sizes.broker_joins,
        0,
        MAX_BROKERS - sizes.brokers,
    )?;
    range(
        Size::BrokerLeaves,
        sizes.broker_leaves,
        0,
        sizes.brokers - 1,
    )?;
    range(Size::NameServers, sizes.name_servers, 1, MAX_NAME_SERVERS)?;
    range(
        Size::NameServerPartitions,
        sizes.name_server_partitions,
        0,
        1,
    )?;
    range(Size::Messages, sizes.messages, 0, MAX_MESSAGES)?;
    range(Size::PullBatch, sizes.pull_batch, 1, MAX_MESSAGES)?;
    // Each broker has a broker fault at most once.
    for fault in Fault::all().filter(|f| f.target() == Target::Broker) {
        for &size in fault.spec().budgets {
            range(size, sizes.count(size).unwrap_or(0), 0, sizes.brokers)?;
        }
    }
    // Each consumer has a consumer fault at most once.
    let exceeds = Fault::all()
        .filter(|f| f.target() == Target::Consumer)
        .flat_map(|f| f.spec().budgets.iter().copied())
        .find(|&size| sizes.count(size).is_some_and(|n| n > sizes.consumers));
    if let Some(size) = exceeds {
        return Err(ConfigError::ExceedsConsumers { size });
    }
    let needs = |size, value: usize, min| {
        if value < min {
            Err(ConfigError::ScenarioNeeds {
                scenario,
                size,
                min,
            })
        } else {
            Ok(())
        }
    };
    match scenario {
        Scenario::InconsistentSubscription | Scenario::SubscriptionFlap => {
            needs(Size::Topics, sizes.topics, 2)
        }
        Scenario::DuplicateClientId | Scenario::MixedClients => {
            needs(Size::Consumers, sizes.consumers, 2)
        }
        // A disk loss is a loss of offsets, and an evicted new queue a
        // missing one: without messages, there are none.
        Scenario::BrokerDiskLoss | Scenario::EvictedNewQueue => {
            needs(Size::Messages, sizes.messages, 1)
        }
        _ => Ok(()),
    }?;
    // A fault of the message layer has nothing to happen to without
    // messages.
    let without_messages = Fault::all()
        .filter(|f| f.spec().layer == Layer::Messages)
        .flat_map(|f| f.spec().budgets.iter().copied())
        .find(|&size| sizes.messages == 0 && sizes.count(size).is_some_and(|n| n > 0));
    if let Some(size) = without_messages {
        return Err(ConfigError::MessagesOnly { size });
    }
    Ok(())
}

/// Checks that POP consumption has what it needs and nothing it does not
/// model, and that its faults come with it.
fn validate_pop(sizes: &Sizes, protocol: &ProtocolOptions) -> Result<(), ConfigError> {
    let faults_of = |layer| {
        Fault::all()
            .filter(move |f| f.spec().layer == layer)
            .flat_map(|f| f.spec().budgets.iter().copied())
    };
    let given = |size: Size| sizes.count(size).is_some_and(|n| n > 0);
    if !protocol.fifo {
        if let Some(size) = faults_of(Layer::Fifo).find(|&size| given(size)) {
            return Err(ConfigError::FifoOnly { size });
        }
    }
    if protocol.fifo && protocol.consumption == Consumption::Push {
        return Err(ConfigError::NotTogether {
            first: "a FIFO group of POP consumers",
            second: "push consumption (orderly push consumers are --orderly alone)",
        });
    }
    if protocol.pop_client == PopClient::Grpc && protocol.consumption == Consumption::Push {
        return Err(ConfigError::NotTogether {
            first: "gRPC POP clients (--pop-client grpc)",
            second: "push consumption (a gRPC client pops: add --consumption pop)",
        });
    }
    if protocol.pop_share > 0
        && (protocol.consumption == Consumption::Push || protocol.grpc_clients())
    {
        return Err(ConfigError::NotTogether {
            first: "a POP share (popShareQueueNum)",
            second: if protocol.fifo {
                "a FIFO group (the proxy gives its consumers every queue)"
            } else if protocol.grpc_clients() {
                "gRPC clients (the proxy gives each every queue of every broker)"
            } else {
                "push consumption"
            },
        });
    }
    if protocol.consumption == Consumption::Push {
        return match faults_of(Layer::Pop).find(|&size| given(size)) {
            Some(size) => Err(ConfigError::PopOnly { size }),
            None => Ok(()),
        };
    }
    if sizes.messages == 0 {
        return Err(ConfigError::PopNeeds {
            needs: "messages (--messages)",
        });
    }
    let not_together = |second| {
        Err(ConfigError::NotTogether {
            first: "POP consumption",
            second,
        })
    };
    if protocol.orderly.is_some() {
        return not_together(
            "orderly consumption's locks (a FIFO group of POP consumers locks nothing: \
             --consumption pop --orderly)",
        );
    }
    if protocol.assignment == Allocator::Client {
        return not_together(
            "client-side assignment (a POP consumer is assigned by its broker: --assignment server)",
        );
    }
    if protocol.commit == Commit::Sync {
        return not_together("--commit sync (a POP consumer acknowledges each message)");
    }
    if protocol.retry_topic {
        return not_together("--retry-topic (POP reads its own retry topic)");
    }
    // What only push consumers do with their offsets and pulls.
    let push_only = [
        Size::LostPersists,
        Size::FailedOffsetReads,
        Size::PullStalls,
        Size::Evictions,
        Size::DiskLosses,
        Size::Failovers,
    ];
    match push_only.into_iter().find(|&size| given(size)) {
        Some(size) => Err(ConfigError::NotTogether {
            first: "POP consumption",
            second: size.name(),
        }),
        None => Ok(()),
    }
}

/// The messages a broker's POP table holds, by queue index and offset
/// (`PopTable`).
pub(crate) const POP_SLOTS: usize = 32;

/// Checks orderly consumption's durations, and that what only orderly
/// consumption has is asked for with it.
fn validate_orderly(
    scenario: Scenario,
    sizes: &Sizes,
    orderly: Option<LockTiming>,
) -> Result<(), ConfigError> {
    let Some(timing) = orderly else {
        if scenario.needs_orderly() {
            return Err(ConfigError::ScenarioNeedsOrderly { scenario });
        }
        // The clock, and the faults of orderly consumption.
        let only_orderly = std::iter::once(Size::ClockDrift).chain(
            Fault::all()
                .filter(|f| f.spec().layer == Layer::Orderly)
                .flat_map(|f| f.spec().budgets.iter().copied()),
        );
        return match only_orderly
            .into_iter()
            .find(|&size| sizes.count(size).is_some_and(|n| n > 0))
        {
            Some(size) => Err(ConfigError::OrderlyOnly { size }),
            None => Ok(()),
        };
    };
    let max = usize::from(LockTiming::MAX);
    let durations = [
        (Size::LockRenew, timing.renew, 1),
        (Size::LockValidity, timing.validity, 1),
        (Size::LockLease, timing.lease, 1),
        (Size::UnlockDelay, timing.unlock_delay, 1),
        (Size::BatchTicks, timing.batch, 0),
        (Size::RestartDowntime, timing.restart_downtime, 0),
    ];
    for (size, value, min) in durations {
        if !(min..=max).contains(&usize::from(value)) {
            return Err(ConfigError::OutOfRange { size, min, max });
        }
    }
    if !(0..=max).contains(&sizes.clock_drift) {
        return Err(ConfigError::OutOfRange {
            size: Size::ClockDrift,
            min: 0,
            max,
        });
    }
    // Orderly consumption is about batches: at least one message a queue.
    if sizes.messages == 0 {
        return Err(ConfigError::OutOfRange {
            size: Size::Messages,
            min: 1,
            max: MAX_MESSAGES,
        });
    }
    Ok(())
}

impl Config {
    /// Builds the configuration of `scenario` with `sizes` and the
    /// scenario's protocol options, checking every bound the compact state
    /// representation relies on.
    pub fn new(
        scenario: Scenario,
        sizes: Sizes,
        network: NetworkKind,
        strategy: Arc<dyn AllocateStrategy>,
    ) -> Result<Self, ConfigError> {
        Self::new_with(
            scenario,
            sizes,
            network,
            strategy,
            scenario.default_protocol(),
        )
    }

    /// The same configuration with other protocol options.
    pub fn with_protocol(self, protocol: ProtocolOptions) -> Result<Self, ConfigError> {
        let sizes = self.sizes;
        self.rebuilt(sizes, protocol)
    }

    /// The same configuration started cold: every consumer joins during
    /// the run, so the group starts with no member, no stored offset and
    /// no lock, as a new group on a fresh cluster does. Each consumer keeps
    /// its client id, its client and its other faults.
    ///
    /// ```
    /// use rocketmq_rebalance_model::configuration::{Config, NetworkKind, Scenario};
    /// use std::sync::Arc;
    ///
    /// let settled = Config::new(
    ///     Scenario::Healthy,
    ///     Scenario::Healthy.default_sizes(),
    ///     NetworkKind::Ordered,
    ///     Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("known")),
    /// )?;
    /// assert_eq!(settled.sizes.joiners(), 1);
    /// let cold = settled.cold_started()?;
    /// assert_eq!(cold.sizes.joiners(), cold.sizes.consumers);
    /// # Ok::<(), rocketmq_rebalance_model::configuration::ConfigError>(())
    /// ```
    pub fn cold_started(self) -> Result<Self, ConfigError> {
        let sizes = Sizes {
            joins: None,
            ..self.sizes
        };
        let protocol = self.protocol;
        self.rebuilt(sizes, protocol)
    }

    /// This configuration built again with `sizes` and `protocol`, keeping
    /// what was set on it after it was built: the periodic rebalance,
    /// whether every failover is a step, the rounds' topic order, each
    /// consumer's client id and whether its listener stops on an
    /// interrupt, and the clients.
    fn rebuilt(self, sizes: Sizes, protocol: ProtocolOptions) -> Result<Self, ConfigError> {
        let (periodic_rebalance, every_failover) =
            (self.periodic_rebalance, self.every_failover_a_step);
        let round_order = self.round_order.clone();
        let kept: Vec<(String, bool)> = self
            .consumers
            .iter()
            .map(|c| (c.client_id.clone(), c.interruptible))
            .collect();
        let clients = self.clients;
        let mut cfg = Self::new_with(self.scenario, sizes, self.network, self.strategy, protocol)?
            .with_periodic_rebalance(periodic_rebalance)
            .with_every_failover_a_step(every_failover)
            .with_round_order(round_order)?;
        for (spec, (id, interruptible)) in cfg.consumers.iter_mut().zip(kept) {
            spec.client_id = id;
            spec.interruptible = interruptible;
        }
        cfg.clients = clients;
        Ok(cfg)
    }

    /// Like [`Config::new`], with `protocol` instead of the scenario's
    /// options; the sizes are checked against these (the orderly budgets
    /// need orderly consumption).
    pub fn new_with(
        scenario: Scenario,
        sizes: Sizes,
        network: NetworkKind,
        strategy: Arc<dyn AllocateStrategy>,
        protocol: ProtocolOptions,
    ) -> Result<Self, ConfigError> {
        validate(scenario, &sizes)?;
        validate_orderly(scenario, &sizes, protocol.orderly)?;
        validate_pop(&sizes, &protocol)?;
        // A FIFO group's consumers are gRPC clients whatever was asked.
        let protocol = ProtocolOptions {
            pop_client: if protocol.fifo {
                PopClient::Grpc
            } else {
                protocol.pop_client
            },
            ..protocol
        };
        let restarts = sizes.broker_restarts + sizes.disk_losses + sizes.broker_crashes;
        if protocol.restart_stops && restarts == 0 {
            return Err(ConfigError::StopsWithoutRestarts);
        }
        if protocol.orderly.is_some_and(|t| t.restart_downtime > 0) && !protocol.restart_stops {
            return Err(ConfigError::DowntimeWithoutStops);
        }
        if protocol.assignment == Allocator::Server && protocol.orderly.is_some() {
            return Err(ConfigError::OrderlyOnServer);
        }
        if protocol.assignment == Allocator::Server
            && !matches!(strategy.name(), "AVG" | "AVG_BY_CIRCLE")
        {
            return Err(ConfigError::UnsupportedServerStrategy {
                strategy: strategy.name().to_string(),
            });
        }
        let all_topics = sizes.topics + usize::from(protocol.retry_topic);
        if all_topics > MAX_TOPICS {
            return Err(ConfigError::OutOfRange {
                size: Size::Topics,
                min: 1,
                max: MAX_TOPICS - usize::from(protocol.retry_topic),
            });
        }
        // Each failure sends back at most a batch, which the broker appends
        // to its queue of the retry topic: the log's offsets must fit.
        let copies = sizes.consume_failures * sizes.pull_batch;
        if protocol.retry_topic
            && protocol.orderly.is_none()
            && sizes.messages > 0
            && sizes.messages + copies > MAX_MESSAGES
        {
            return Err(ConfigError::OutOfRange {
                size: Size::ConsumeFailures,
                min: 0,
                max: (MAX_MESSAGES - sizes.messages) / sizes.pull_batch,
            });
        }
        if sizes.messages > 0 && protocol.subscription_table {
            return Err(ConfigError::NotTogether {
                first: "messages",
                second: "the subscription table",
            });
        }
        let group = "GID_rebalance".to_string();
        let topic_names = universe::topic_names(&sizes, &group, &protocol);
        let broker_names = universe::broker_names(&sizes);
        let name_server_names = universe::name_server_names(&sizes);
        let script = universe::route_script(&sizes, &protocol);
        let routes = universe::routes(&sizes, &script, &topic_names, &broker_names)?;
        if sizes.messages > 0 && routes.queues.len() > MAX_MESSAGE_QUEUES {
            return Err(ConfigError::TooManyMessageQueues {
                queues: routes.queues.len(),
                max: MAX_MESSAGE_QUEUES,
            });
        }
        if protocol.consumption == Consumption::Pop
            && routes.queues.len() * sizes.messages > POP_SLOTS
        {
            return Err(ConfigError::OutOfRange {
                size: Size::Messages,
                min: 1,
                max: POP_SLOTS / routes.queues.len(),
            });
        }
        let of_topic = (0..topic_names.len())
            .map(|t| set_of(routes.queues.len(), |q| routes.queues[q].topic == t))
            .collect();
        let mut consumers = universe::consumer_specs(scenario, &sizes, &protocol);
        clients::scenario_ids(scenario, &mut consumers);
        let clients = clients::scenario_clients(scenario, &consumers, &strategy);
        Ok(Self {
            scenario,
            sizes,
            network,
            strategy,
            clients,
            protocol,
            periodic_rebalance: false,
            every_failover_a_step: false,
            round_order: (0..topic_names.len() as u8).collect(),
            group,
            consumers,
            script,
            topic_names,
            broker_names,
            name_server_names,
            queues: routes.queues,
            routes: routes.versions,
            on_broker: routes.on_broker,
            of_topic,
            memo: allocation::Memo::default(),
        })
    }

    /// The same configuration with the periodic rebalance modelled or
    /// not (see [`Config::periodic_rebalance`]).
    pub fn with_periodic_rebalance(mut self, on: bool) -> Self {
        self.periodic_rebalance = on;
        self
    }

    /// The same configuration with every failover a step or not (see
    /// [`Config::every_failover_a_step`]).
    pub fn with_every_failover_a_step(mut self, on: bool) -> Self {
        self.every_failover_a_step = on;
        self
    }

    /// The order in which a consumer's rebalance round takes its due
    /// topics, as topic indices. Java iterates its subscription table
    /// (`RebalanceImpl.subscriptionInner`, a `ConcurrentHashMap`), so the
    /// order follows the real names' hashes: a run whose names hash in
    /// topic order is the model's default, and trace validation sets the
    /// run's own with [`Config::with_round_order`].
    pub fn round_order(&self) -> &[u8] {
        &self.round_order
    }

    /// The same configuration with its rounds taking their due topics in
    /// `order` (see [`Config::round_order`]), which must name each of its
    /// topics once.
    ///
    /// ```
    /// use rocketmq_rebalance_model::configuration::{Config, NetworkKind, Scenario};
    /// use std::sync::Arc;
    ///
    /// let flap = Scenario::SubscriptionFlap;
    /// let cfg = Config::new(
    ///     flap,
    ///     flap.default_sizes(),
    ///     NetworkKind::Ordered,
    ///     Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("known")),
    /// )?;
    /// assert_eq!(cfg.round_order(), [0, 1]);
    /// let cfg = cfg.with_round_order(vec![1, 0])?;
    /// assert_eq!(cfg.first_due(0b11), 1);
    /// assert!(cfg.with_round_order(vec![1, 1]).is_err());
    /// # Ok::<(), rocketmq_rebalance_model::configuration::ConfigError>(())
    /// ```
    pub fn with_round_order(mut self, order: Vec<u8>) -> Result<Self, ConfigError> {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        if !sorted.iter().copied().eq(0..self.topic_names.len() as u8) {
            return Err(ConfigError::RoundOrder { order });
        }
        self.round_order = order;
        Ok(self)
    }

    /// The topic a round takes first of the topics in `due` (a set of
    /// topic indices, not empty), in [`Config::round_order`].
    pub fn first_due(&self, due: u8) -> u8 {
        self.round_order
            .iter()
            .copied()
            .find(|&t| due & 1 << t != 0)
            .unwrap_or(due.trailing_zeros() as u8)
    }

    /// The last version of the route script.
    pub(crate) fn last_route(&self) -> u8 {
        (self.routes.len() - 1) as u8
    }

    /// Queues of `topic` in `route`.
    pub fn route_queues(&self, route: Route, topic: usize) -> QueueSet {
        let dropped =
            members_of(u64::from(route.dropped)).fold(0, |set, b| set | self.on_broker[b]);
        self.routes[usize::from(route.version)].queues[topic] & !dropped
    }

    /// The queues of the route at the start, every topic's.
    pub(crate) fn initial_queues(&self) -> QueueSet {
        (0..self.topic_names.len()).fold(0, |set, t| set | self.route_queues(Route::default(), t))
    }

    /// Whether queue `queue` is one of the group's retry topic
    /// (`%RETRY%<group>`, the topic after the others).
    pub(crate) fn is_retry_queue(&self, queue: usize) -> bool {
        self.protocol.retry_topic && self.queues[queue].topic == self.sizes.topics
    }

    /// Whether the retry topic's logs grow during the run: consuming
    /// concurrently, a batch that fails is sent back and its broker appends
    /// it to the group's retry topic, when that topic is modelled.
    pub(crate) fn retry_log_grows(&self) -> bool {
        self.protocol.retry_topic
            && self.protocol.orderly.is_none()
            && self.sizes.consume_failures > 0
    }

    /// Broker `broker`'s queue of the retry topic, when modelled.
    pub(crate) fn retry_queue_of(&self, broker: usize) -> Option<usize> {
        (0..self.queues.len()).find(|&q| self.is_retry_queue(q) && self.queues[q].broker == broker)
    }

    /// Whether a pull of queue `q` is a request to its broker: with pull
    /// requests, and for a log that grows during the run, whose end only
    /// its broker knows (the other logs are written before the run, so a
    /// pull reads them at once).
    pub(crate) fn pulls_by_request(&self, q: usize) -> bool {
        self.protocol.pull_requests || (self.retry_log_grows() && self.is_retry_queue(q))
    }

    /// The most messages queue `q`'s log may hold: those written before
    /// the run and, on a retry queue whose log grows, every batch the
    /// failures' budget may send back.
    pub(crate) fn log_capacity(&self, q: usize) -> u8 {
        let copies = if self.retry_log_grows() && self.is_retry_queue(q) {
            self.sizes.consume_failures * self.sizes.pull_batch
        } else {
            0
        };
        (self.sizes.messages + copies) as u8
    }

    /// Every queue broker `broker` may host.
    pub(crate) fn broker_queues(&self, broker: usize) -> QueueSet {
        self.on_broker[broker]
    }

    /// Brokers `route` lists.
    pub(crate) fn route_brokers(&self, route: Route) -> u8 {
        self.routes[usize::from(route.version)].brokers & !route.dropped
    }

    /// The route in force: the script at `version`, nothing dropped.
    pub fn true_route(version: u8) -> Route {
        Route {
            version,
            dropped: 0,
        }
    }

    /// Queues of `topic` in any route version.
    pub fn topic_queues(&self, topic: usize) -> QueueSet {
        self.of_topic[topic]
    }

    /// Consumers that never join, crash or leave: registered from the start.
    pub(crate) fn initial_members(&self) -> ConsumerSet {
        set_of(self.consumers.len(), |c| !self.consumers[c].joins()) as ConsumerSet
    }

    /// Consumers that can reach `broker` (the network allows it; whether
    /// they talk to it depends on their routes).
    pub(crate) fn reachable_from(&self, broker: usize) -> ConsumerSet {
        set_of(self.consumers.len(), |c| {
            self.consumers[c].unreachable & (1 << broker) == 0
        }) as ConsumerSet
    }

    /// Whether broker `broker` may have `fault` in this run (for a
    /// consumer, see `ConsumerSpec::may`; the name servers are actor 0).
    pub(crate) fn may(&self, fault: Fault, actor: usize) -> bool {
        let actors = match fault.target() {
            Target::NameServer => 1,
            Target::Broker => self.broker_names.len(),
            Target::Consumer => return self.consumers[actor].may(fault),
        };
        picks(
            fault,
            self.scenario,
            &self.sizes,
            &self.protocol,
            actor,
            actors,
        )
    }

    /// Whether messages are modelled.
    pub(crate) fn messages(&self) -> bool {
        self.sizes.messages > 0
    }

    /// POP consumption: the broker hands out messages, with handles.
    pub(crate) fn pops(&self) -> bool {
        self.protocol.consumption == Consumption::Pop
    }

    /// Orderly consumption's durations, when it is modelled (and with it the
    /// clock).
    pub(crate) fn orderly(&self) -> Option<&LockTiming> {
        self.protocol.orderly.as_ref()
    }

    /// The key a broker's lock table knows consumer `c` by: its client id,
    /// as the index of the first consumer with that id (two consumers that
    /// share an id share their locks).
    pub fn lock_key(&self, c: usize) -> u8 {
        let id = &self.consumers[c].client_id;
        self.consumers
            .iter()
            .position(|other| &other.client_id == id)
            .unwrap_or(c) as u8
    }

    /// The index of the broker hosting queue `queue`.
    pub fn broker_of(&self, queue: usize) -> u8 {
        self.queues[queue].broker as u8
    }

    /// Names of the queues in `set`, for traces: `[a0 b1]`.
    pub(crate) fn queue_labels(&self, set: QueueSet) -> String {
        let labels: Vec<&str> = members_of(set)
            .map(|i| self.queues[i].label.as_str())
            .collect();
        format!("[{}]", labels.join(" "))
    }

    /// Names of the consumers in `set` as brokers report them (client ids):
    /// `[c1 c2]`.
    pub(crate) fn member_labels(&self, set: ConsumerSet, twice: ConsumerSet) -> String {
        let labels: Vec<_> = listed(set, twice)
            .map(|i| shown_id(&self.consumers[i].client_id))
            .collect();
        format!("[{}]", labels.join(" "))
    }
}
