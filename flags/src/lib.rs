//! The model flags: the words that pick a model configuration (scenario,
//! sizes, strategy, network, fault budgets, protocol options), parsed once
//! for every user of them: `rebalance check`, `explore` and `conform` (so
//! that a path printed by one opens the same state in another), and the
//! real-cluster runs, whose scripts and traces name their model by these
//! flags (`rocketmq-rebalance-cluster`).
//!
//! ```
//! use rocketmq_rebalance_flags::ModelArgs;
//!
//! let flags: Vec<String> = ["--scenario", "crash", "--queues", "3"].map(String::from).into();
//! let config = ModelArgs::config_from(&flags).unwrap();
//! assert_eq!((config.sizes.crashes, config.sizes.queues), (1, 3));
//! assert!(ModelArgs::config_from(&["--crashes".into(), "9".into()]).is_err());
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use rocketmq_rebalance::StrategySpec;
use rocketmq_rebalance_model::{
    Allocator, ClientChoices, Commit, Config, ConfigError, ConsumeFrom, Dense, LockTiming,
    NetworkKind, ProtocolOptions, Release, Scenario, Size, Variant,
};

/// Scenario, sizes, strategy, network and fault budgets.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// Situation to check: healthy, inconsistent-subscription,
    /// duplicate-client-id, crash, route-change, partial-partition,
    /// graceful-shutdown, broker-scale-out, broker-scale-in, queue-scale-in,
    /// nameserver-partition, stale-route, broker-restart, broker-disk-loss
    /// and evicted-new-queue (with messages), rolling-upgrade,
    /// zombie-consumer, subscription-flap, mixed-clients, strategy-rollout,
    /// and (orderly consumption) slow-batch, clock-drift.
    #[arg(long, default_value = "healthy")]
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
    #[arg(long, default_value = "AVG")]
    pub strategy: StrategySpec,
    /// Each consumer's client, CONSUMER=CLIENT:STRATEGY separated by
    /// commas (c1=java:AVG,c2=bytes:AVG): java sorts as the Java client
    /// (UTF-16 code units) and runs the strategies as Java computes them;
    /// bytes sorts by UTF-8 bytes as the Rust and Go clients and runs them
    /// as Java computes them, but CONSISTENT_HASH on the Go client's own
    /// ring (CRC-32, not Java's MD5); rocketmq-rust runs rocketmq-rust's own strategy code after its byte
    /// sort (a build with the rocketmq-rust feature). Consumers left out:
    /// java with --strategy (mixed-clients: the last one bytes;
    /// strategy-rollout: the joiner AVG_BY_CIRCLE).
    #[arg(long)]
    pub clients: Option<ClientChoices>,
    /// The consumers' client ids, one per consumer in order, separated by
    /// commas (default c1, c2, ...; mixed-clients: U+E000.., and U+10000
    /// for the last).
    #[arg(long, value_delimiter = ',')]
    pub client_ids: Option<Vec<String>>,
    /// Consumers whose message listener stops when its thread is
    /// interrupted, separated by commas (c2,c3), or all: a graceful
    /// shutdown interrupts the batches it does not wait for
    /// (shutdownNow), and their batch ends there, unconsumed. By default
    /// every listener ignores the interrupt and runs its batch to its end.
    #[arg(long, value_delimiter = ',', value_name = "CONSUMERS")]
    pub interruptible: Option<Vec<String>>,
    /// A protocol variant to switch on, by name (repeatable): RocketMQ as
    /// it behaved before a fix it shipped, a remedy for one of the model's
    /// findings, or another client's behaviour. `rebalance variants` lists
    /// the catalogue: each entry's origin, what it changes, and the flags
    /// where it matters, with the verdicts it changes.
    #[arg(
        long = "variant",
        value_name = "NAME",
        value_parser = PossibleValuesParser::new(Variant::all().map(Variant::name))
            .try_map(|name| name.parse::<Variant>()),
    )]
    pub variants: Vec<Variant>,
    /// The RocketMQ release to model: 4.9.4, 5.0.0, 5.1.4, 5.2.0 or 5.3.3
    /// (the default, the release the model follows). An older one switches
    /// on every historical variant it still has (`rebalance variants`
    /// gives each one's releases), beside any --variant.
    #[arg(
        long,
        value_name = "RELEASE",
        default_value = "5.3.3",
        value_parser = PossibleValuesParser::new(Release::PRESETS.map(|r| r.to_string()))
            .try_map(|name| name.parse::<Release>()),
    )]
    pub rocketmq: Release,
    /// Network semantics: ordered (per connection, as TCP), unordered,
    /// duplicating.
    #[arg(long, default_value = "ordered")]
    pub network: NetworkKind,
    /// Consumers (the last ones) that join during the run; the others start
    /// registered and balanced (default 1, a scale-out; crash, route-change
    /// and graceful-shutdown: 0; --joins equal to --consumers: a cold start).
    #[arg(long)]
    pub joins: Option<usize>,
    /// Consumers (the first ones) whose host may die or be cut off: brokers
    /// expire them silently after 120 s (crash: 1).
    #[arg(long)]
    pub crashes: Option<usize>,
    /// Consumers (the first ones) whose process may be killed on a live
    /// host: their connections close and brokers notify the group at once.
    #[arg(long)]
    pub kills: Option<usize>,
    /// Consumers (the first ones) that may pause or be cut off for over 120 s
    /// while alive: expired by brokers, they keep consuming (zombies) and
    /// reconnect (zombie-consumer: 1).
    #[arg(long)]
    pub expiries: Option<usize>,
    /// Brokers (the first ones) that may restart, losing their member
    /// tables; one step, without downtime, unless --restart-stops
    /// (broker-restart: 1).
    #[arg(long)]
    pub broker_restarts: Option<usize>,
    /// A broker's restart (--broker-restarts, --disk-losses) is a stop and
    /// a later start, anything between: while it is stopped the name
    /// servers leave it out of their routes (its channel closed) and it
    /// refuses calls; with --orderly it stays stopped --restart-downtime
    /// ticks. Off, the stop and the start are one step. The stopped phase
    /// multiplies the states (non-orderly broker-restart: 1,542 become over
    /// a million).
    #[arg(long)]
    pub restart_stops: bool,
    /// Consumers that may shut down gracefully: the last ones, or the first
    /// ones in rolling-upgrade (graceful-shutdown, rolling-upgrade: 1).
    #[arg(long)]
    pub leaves: Option<usize>,
    /// Route changes, each adding one queue (route-change, stale-route: 1).
    #[arg(long)]
    pub route_changes: Option<usize>,
    /// Route changes, each removing one queue of the first topic
    /// (queue-scale-in: 1).
    #[arg(long)]
    pub queue_removals: Option<usize>,
    /// Brokers that join the route with their queues, after the first
    /// --brokers (broker-scale-out: 1).
    #[arg(long)]
    pub broker_joins: Option<usize>,
    /// Brokers that leave the route, the last one first (broker-scale-in: 1).
    #[arg(long)]
    pub broker_leaves: Option<usize>,
    /// Name servers; consumer i polls name server i mod N (default 1;
    /// nameserver-partition: 2).
    #[arg(long)]
    pub name_servers: Option<usize>,
    /// Partitions between the last broker and the last name server, which
    /// then drops it until the partition heals: 0 or 1
    /// (nameserver-partition: 1).
    #[arg(long)]
    pub name_server_partitions: Option<usize>,
    /// Consumers (the first ones) that may each miss one route update, their
    /// name server unreachable for a poll (stale-route: 1).
    #[arg(long)]
    pub stale_routes: Option<usize>,
    /// Consumers (the first ones) that may each change their subscription
    /// once at runtime, on the last topic (default 0).
    #[arg(long)]
    pub subscription_changes: Option<usize>,
    /// Model each broker's per-group subscription table, replaced by every
    /// heartbeat; pulls of a topic it lacks fail; consumers heartbeat
    /// periodically (on in subscription-flap).
    #[arg(long)]
    pub subscription_table: bool,
    /// Every consumer also subscribes to the group's retry topic
    /// `%RETRY%<group>` (one queue a broker; on a cold start its route appears
    /// after the first heartbeats).
    #[arg(long)]
    pub retry_topic: bool,
    /// With messages, a pull is a request to the queue's broker
    /// (PULL_MESSAGE), which commits the offset it carries and answers with
    /// the next messages; a stale answer (the queue dropped meanwhile) is
    /// discarded. Off, a pull reads the log at once.
    #[arg(long)]
    pub pull_requests: bool,
    /// Brokers do not send NOTIFY_CONSUMER_IDS_CHANGED
    /// (notifyConsumerIdsChangedEnable=false): the group relies on the
    /// periodic rebalance alone.
    #[arg(long)]
    pub no_notify: bool,
    /// Who computes a consumer's share: client (each consumer, the default)
    /// or server (the broker it asks, QUERY_ASSIGNMENT). Not with --orderly:
    /// orderly consumers always allocate on the client.
    #[arg(long, default_value = "client")]
    pub assignment: Allocator,
    /// Messages in each queue's log: pulls, offsets and deliveries are
    /// modelled, with the properties no message skipped, duplicate delivery,
    /// paused queue and (with --liveness) every message consumed, and the
    /// harms. 0 (the default) leaves messages out. At most 6, and at most 8
    /// queues in all. Unless --consumers, --brokers or --queues say
    /// otherwise, 1 queue per broker and 2 consumers with healthy,
    /// inconsistent-subscription, duplicate-client-id, queue-scale-in,
    /// nameserver-partition, broker-restart and rolling-upgrade; 1 queue
    /// per broker with crash, route-change, stale-route and
    /// zombie-consumer; 1 broker with graceful-shutdown; 1 broker (and the
    /// joining one) with 1 queue each with broker-scale-out; 2 consumers
    /// with broker-scale-in; the scenario's own sizes otherwise.
    #[arg(long, default_value_t = 0)]
    pub messages: usize,
    /// Messages a pull fetches at most (pullBatchSize; default 1).
    #[arg(long, default_value_t = 1)]
    pub pull_batch: usize,
    /// When offsets reach the broker: async (every 5 s and on drop,
    /// one-way: RocketMQ's behaviour) or sync (each batch acknowledged
    /// before the next pull).
    #[arg(long, default_value = "async")]
    pub commit: Commit,
    /// Where a consumer starts on a queue the group has no offset for:
    /// last (CONSUME_FROM_LAST_OFFSET, the default: 0 while the queue's
    /// first message is in memory, else the queue's end) or first.
    #[arg(long, default_value = "last")]
    pub consume_from: ConsumeFrom,
    /// Consumers (the first ones) that may each lose one offset persist.
    #[arg(long)]
    pub lost_persists: Option<usize>,
    /// Consumers (the first ones) that may each have one offset read fail.
    #[arg(long)]
    pub failed_offset_reads: Option<usize>,
    /// Brokers (the first ones) whose queues' first messages may leave
    /// memory (then a consumer of a group without offsets, consuming from
    /// last, starts at the queue's end).
    #[arg(long)]
    pub evictions: Option<usize>,
    /// With messages, brokers (the first ones) that may restart on a
    /// replaced disk: their offset tables are lost with their memory, their
    /// commit logs restored (then a queue that changes hands starts where
    /// --consume-from says; broker-disk-loss: 1).
    #[arg(long)]
    pub disk_losses: Option<usize>,
    /// With messages, consumers (the first ones) whose next batch may fail
    /// once: its listener returns RECONSUME_LATER and the batch is sent
    /// back to its broker (CONSUMER_SEND_MSG_BACK), which appends it to the
    /// group's retry topic (consumed again with --retry-topic), or, if the
    /// broker is unreachable, consumed again; orderly it returns
    /// SUSPEND_CURRENT_QUEUE_A_MOMENT and the batch is consumed again. The
    /// offset never moves past a failed batch before it is stored
    /// (default 0).
    #[arg(long)]
    pub consume_failures: Option<usize>,
    /// Consumers (the first ones) whose pulls may each stall for over
    /// 120 s once (a stop-the-world pause, a blocked pull thread): at
    /// their next rebalance every queue they still get has expired
    /// (isPullExpired) and is dropped and added afresh, its offset
    /// persisted and read again (default 0).
    #[arg(long)]
    pub pull_stalls: Option<usize>,
    /// Consumers (the first ones) that may each lose one
    /// NOTIFY_CONSUMER_IDS_CHANGED (default 0).
    #[arg(long)]
    pub lost_notifications: Option<usize>,
    /// Consumers (the first ones) that may each have one
    /// GET_CONSUMER_LIST_BY_GROUP fail, its broker unreachable (default 0).
    #[arg(long)]
    pub failed_queries: Option<usize>,
    /// Consumers (the first ones) that may each, once, open a second
    /// connection to a broker they reconnect to, which the broker lists as
    /// a second member until its scan expires the silent one (default 0).
    #[arg(long)]
    pub second_channels: Option<usize>,
    /// Orderly consumption (MessageListenerOrderly): broker locks with
    /// leases, and a clock of 10 s ticks, with the properties no queue
    /// consumed by two at once, one live lock per queue and (with
    /// --liveness) every queue consumed again. Implies --messages 1 at
    /// least; unless --consumers, --brokers or --queues say otherwise: 2
    /// consumers, 1 broker with 2 queues (on in slow-batch and clock-drift;
    /// clock-drift counts at a coarser scale: renewal 1, validity 2, lease
    /// 3, forced unlock 1 tick).
    #[arg(long)]
    pub orderly: bool,
    /// Orderly: ticks between lock renewals (lockAll; default 2: 20 s).
    #[arg(long)]
    pub lock_renew: Option<u8>,
    /// Orderly: ticks a consumer trusts a lock after it was granted
    /// (default 3: 30 s).
    #[arg(long)]
    pub lock_validity: Option<u8>,
    /// Orderly: ticks a broker keeps a lock nobody renews (default 6: 60 s).
    #[arg(long)]
    pub lock_lease: Option<u8>,
    /// Orderly: ticks after the last lock when a dropped queue is unlocked
    /// without waiting for its running batch (default 2: 20 s).
    #[arg(long)]
    pub unlock_delay: Option<u8>,
    /// Orderly: the most ticks one batch takes (default 0: under a tick;
    /// slow-batch: 3).
    #[arg(long)]
    pub batch_ticks: Option<u8>,
    /// Orderly: ticks a restarting broker stays stopped before it starts
    /// again (1 or more; implies --restart-stops, which alone lets it start
    /// within the tick it stopped in). The old holder trusts its lock
    /// validity ticks after its last lock, so a downtime longer than that
    /// trust closes broker-restart's window.
    #[arg(long, value_name = "TICKS")]
    pub restart_downtime: Option<u8>,
    /// Orderly: ticks by which the first consumer's wall clock may be
    /// stepped back, a tick at a time: its locks' ages stand still, while
    /// its renewal, on the monotonic clock, comes when due (until this
    /// version the renewal slowed with it) (default 0; clock-drift: 3).
    #[arg(long)]
    pub clock_drift: Option<usize>,
    /// Orderly: brokers (the first ones) whose wall clock may step forward
    /// once by a lease or more, so that every lock they hold lapses at once
    /// while its holder still trusts it (default 0).
    #[arg(long)]
    pub broker_clock_steps: Option<usize>,
    /// Orderly: consumers (the first ones) that may each lose one unlock
    /// (default 0).
    #[arg(long)]
    pub lost_unlocks: Option<usize>,
    /// Orderly: consumers (the first ones) that may lose their connection
    /// for lock calls, every later one timing out (default 0).
    #[arg(long)]
    pub failed_locks: Option<usize>,
}

/// Only the model flags, to read a list of them (a script's `model`, a
/// trace's `run`).
#[derive(clap::Parser, Debug)]
#[command(name = "model")]
struct ModelFlags {
    #[command(flatten)]
    model: ModelArgs,
}

impl ModelArgs {
    /// The configuration a list of model flags describes (without the
    /// program name), or what is wrong with them.
    pub fn config_from(flags: &[String]) -> Result<Config, String> {
        use clap::Parser;
        ModelFlags::try_parse_from(std::iter::once("model".to_owned()).chain(flags.to_vec()))
            .map_err(|e| e.to_string())
            .and_then(|f| f.model.build_config())
    }

    /// The configuration these flags describe, or what is wrong with them
    /// in the flags' own terms.
    pub fn build_config(&self) -> Result<Config, String> {
        let orderly = self.orderly || self.scenario.needs_orderly();
        let mut sizes = self.scenario.layered_sizes(self.messages, orderly);
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
        set(&mut sizes.kills, self.kills);
        set(&mut sizes.expiries, self.expiries);
        set(&mut sizes.broker_restarts, self.broker_restarts);
        set(&mut sizes.leaves, self.leaves);
        set(&mut sizes.route_changes, self.route_changes);
        set(&mut sizes.queue_removals, self.queue_removals);
        set(&mut sizes.broker_joins, self.broker_joins);
        set(&mut sizes.broker_leaves, self.broker_leaves);
        set(&mut sizes.name_servers, self.name_servers);
        set(
            &mut sizes.name_server_partitions,
            self.name_server_partitions,
        );
        set(&mut sizes.stale_routes, self.stale_routes);
        set(&mut sizes.subscription_changes, self.subscription_changes);
        sizes.pull_batch = self.pull_batch;
        set(&mut sizes.clock_drift, self.clock_drift);
        set(&mut sizes.broker_clock_steps, self.broker_clock_steps);
        set(&mut sizes.lost_unlocks, self.lost_unlocks);
        set(&mut sizes.failed_locks, self.failed_locks);
        set(&mut sizes.lost_persists, self.lost_persists);
        set(&mut sizes.failed_offset_reads, self.failed_offset_reads);
        set(&mut sizes.evictions, self.evictions);
        set(&mut sizes.disk_losses, self.disk_losses);
        set(&mut sizes.consume_failures, self.consume_failures);
        set(&mut sizes.pull_stalls, self.pull_stalls);
        set(&mut sizes.lost_notifications, self.lost_notifications);
        set(&mut sizes.failed_queries, self.failed_queries);
        set(&mut sizes.second_channels, self.second_channels);
        if self.joins.is_some() {
            sizes.joins = self.joins;
        }
        let defaults = self.scenario.default_protocol();
        let protocol = ProtocolOptions {
            subscription_table: defaults.subscription_table || self.subscription_table,
            retry_topic: defaults.retry_topic || self.retry_topic,
            notify: defaults.notify && !self.no_notify,
            assignment: self.assignment,
            commit: self.commit,
            consume_from: self.consume_from,
            pull_requests: self.pull_requests,
            orderly: self.lock_timing(orderly, defaults.orderly)?,
            // The mutant is the library's, for the trace tests: no flag.
            heartbeat_reregisters: defaults.heartbeat_reregisters,
            restart_stops: self.restart_stops || self.restart_downtime.is_some(),
            // The mutants that keep a lost call waiting are the library's,
            // for the model's tests: no flag.
            calls_fail: defaults.calls_fail,
            // Switched on below, once the consumers are known.
            variants: defaults.variants,
        };
        let strategy = Arc::from(self.strategy.build());
        let mut config = Config::new_with(self.scenario, sizes, self.network, strategy, protocol)
            .map_err(|e| describe(&e))?;
        if let Some(ids) = &self.client_ids {
            config = config
                .with_client_ids(ids)
                .map_err(|e| format!("--client-ids: {e}"))?;
        }
        if let Some(clients) = &self.clients {
            config = config
                .with_clients(clients)
                .map_err(|e| format!("--clients: {e}"))?;
        }
        if let Some(names) = &self.interruptible {
            config = config
                .with_interruptible_listeners(names)
                .map_err(|e| format!("--interruptible: {e}"))?;
        }
        let release = config.variants_of_release(self.rocketmq);
        config
            .with_variants(
                self.variants
                    .iter()
                    .copied()
                    .chain(release.iter())
                    .collect(),
            )
            .map_err(|e| format!("--variant: {e}"))
    }
}

impl ModelArgs {
    /// Orderly consumption's durations: the scenario's, with the flags
    /// given; none without orderly consumption, where a duration flag is an
    /// error.
    fn lock_timing(
        &self,
        orderly: bool,
        scenario: Option<LockTiming>,
    ) -> Result<Option<LockTiming>, String> {
        let flags = [
            ("--lock-renew", self.lock_renew),
            ("--lock-validity", self.lock_validity),
            ("--lock-lease", self.lock_lease),
            ("--unlock-delay", self.unlock_delay),
            ("--batch-ticks", self.batch_ticks),
            ("--restart-downtime", self.restart_downtime),
        ];
        if matches!(self.restart_downtime, Some(d) if !(1..=LockTiming::MAX).contains(&d)) {
            return Err(format!(
                "--restart-downtime must be 1..={} (--restart-stops alone lets the broker \
                 start within the tick it stopped in)",
                LockTiming::MAX
            ));
        }
        if !orderly {
            return match flags.iter().find(|(_, value)| value.is_some()) {
                Some((flag, _)) => Err(format!("{flag} needs --orderly")),
                None => Ok(None),
            };
        }
        let base = scenario.unwrap_or_default();
        Ok(Some(LockTiming {
            renew: self.lock_renew.unwrap_or(base.renew),
            validity: self.lock_validity.unwrap_or(base.validity),
            lease: self.lock_lease.unwrap_or(base.lease),
            unlock_delay: self.unlock_delay.unwrap_or(base.unlock_delay),
            batch: self.batch_ticks.unwrap_or(base.batch),
            restart_downtime: self.restart_downtime.unwrap_or(base.restart_downtime),
            ..base
        }))
    }
}

/// The flag that sets `size`.
fn flag(size: Size) -> &'static str {
    match size {
        Size::Consumers => "--consumers",
        Size::Brokers => "--brokers",
        Size::Topics => "--topics",
        Size::Queues => "--queues",
        Size::Joins => "--joins",
        Size::Crashes => "--crashes",
        Size::Kills => "--kills",
        Size::Expiries => "--expiries",
        Size::BrokerRestarts => "--broker-restarts",
        Size::Leaves => "--leaves",
        Size::RouteChanges => "--route-changes",
        Size::QueueRemovals => "--queue-removals",
        Size::BrokerJoins => "--broker-joins",
        Size::BrokerLeaves => "--broker-leaves",
        Size::NameServers => "--name-servers",
        Size::NameServerPartitions => "--name-server-partitions",
        Size::LostNotifications => "--lost-notifications",
        Size::FailedQueries => "--failed-queries",
        Size::SecondChannels => "--second-channels",
        Size::StaleRoutes => "--stale-routes",
        Size::SubscriptionChanges => "--subscription-changes",
        Size::Messages => "--messages",
        Size::PullBatch => "--pull-batch",
        Size::LostPersists => "--lost-persists",
        Size::FailedOffsetReads => "--failed-offset-reads",
        Size::Evictions => "--evictions",
        Size::DiskLosses => "--disk-losses",
        Size::ConsumeFailures => "--consume-failures",
        Size::PullStalls => "--pull-stalls",
        Size::ClockDrift => "--clock-drift",
        Size::BrokerClockSteps => "--broker-clock-steps",
        Size::LostUnlocks => "--lost-unlocks",
        Size::FailedLocks => "--failed-locks",
        Size::LockRenew => "--lock-renew",
        Size::LockValidity => "--lock-validity",
        Size::LockLease => "--lock-lease",
        Size::UnlockDelay => "--unlock-delay",
        Size::BatchTicks => "--batch-ticks",
        Size::RestartDowntime => "--restart-downtime",
    }
}

/// A configuration error in the flags' terms.
fn describe(error: &ConfigError) -> String {
    match error {
        ConfigError::OutOfRange { size, min, max } => {
            format!("{} must be {min}..={max}", flag(*size))
        }
        ConfigError::ExceedsConsumers { size } => {
            format!("{} cannot exceed --consumers", flag(*size))
        }
        ConfigError::TooManyQueues { queues, max } => format!(
            "{queues} queues in all (--topics x --brokers x --queues, plus --route-changes); at most {max}"
        ),
        ConfigError::ScenarioNeeds {
            scenario,
            size,
            min,
        } => format!("--scenario {scenario} needs {} {min} or more", flag(*size)),
        ConfigError::OrderlyOnly { size } => format!("{} needs --orderly", flag(*size)),
        ConfigError::MessagesOnly { size } => format!("{} needs --messages", flag(*size)),
        ConfigError::StopsWithoutRestarts => {
            "--restart-stops and --restart-downtime need --broker-restarts or --disk-losses".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use rocketmq_rebalance_model::{Dense, Fault};

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        model: ModelArgs,
    }

    /// Every fault's budget, as its definition names it
    /// (`Fault::spec`), has a flag, and the flag sets that budget.
    #[test]
    fn every_fault_budget_has_a_flag_that_sets_it() {
        for fault in Fault::all() {
            for &size in fault.spec().budgets {
                let args = [
                    "rebalance",
                    "--orderly",
                    "--brokers",
                    "2",
                    "--consumers",
                    "3",
                    flag(size),
                    "1",
                ];
                let flags = Flags::try_parse_from(args)
                    .unwrap_or_else(|e| panic!("{fault:?}: {} is no flag: {e}", flag(size)));
                let cfg = flags
                    .model
                    .build_config()
                    .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
                assert_eq!(cfg.sizes.count(size), Some(1), "{fault:?}: {}", flag(size));
            }
        }
    }
}
