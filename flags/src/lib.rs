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

mod numbers;

use std::sync::Arc;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
pub use numbers::Numbers;
use rocketmq_rebalance::StrategySpec;
use rocketmq_rebalance_model::configuration::{
    Allocator, ClientChoices, Commit, Config, ConfigError, ConsumeFrom, Consumption, Dense,
    LockTiming, NetworkKind, PopClient, ProtocolOptions, Release, Scenario, Size, Variant,
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
    /// The sizes, the fault budgets and orderly consumption's durations:
    /// one flag a row of the model's table of numbers (`Size`).
    #[command(flatten)]
    pub numbers: Numbers,
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
    /// A broker's restart (--broker-restarts, --disk-losses,
    /// --broker-crashes) is a stop and
    /// a later start, anything between: while it is stopped the name
    /// servers leave it out of their routes (its channel closed) and it
    /// refuses calls; with --orderly it stays stopped --restart-downtime
    /// ticks. Off, the stop and the start are one step. The stopped phase
    /// multiplies the states (non-orderly broker-restart: 1,542 become over
    /// a million).
    #[arg(long)]
    pub restart_stops: bool,
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
    /// Who computes a consumer's share: client (each consumer; the default
    /// with push) or server (the broker it asks, QUERY_ASSIGNMENT; the
    /// default, and the only choice, with --consumption pop). Not with
    /// --orderly: orderly consumers always allocate on the client.
    #[arg(long)]
    pub assignment: Option<Allocator>,
    /// How consumers get messages: push (the default: each pulls the
    /// queues it was allocated and reports its offsets) or pop (POP_MESSAGE
    /// and ACK_MESSAGE: the broker assigns every queue to every consumer
    /// and hands out each message under a handle, revived into the retry
    /// topic if its invisible time passes unacknowledged); with --orderly,
    /// a FIFO group (the broker blocks a queue while its last pop is
    /// unacknowledged). Pop needs --messages; not with --commit sync or
    /// --retry-topic; its faults are --lost-acks, --slow-batches and
    /// --lost-pop-answers, and a FIFO group's also --broker-crashes.
    #[arg(long, default_value = "push")]
    pub consumption: Consumption,
    /// With --consumption pop, the client the consumers run: remoting (the
    /// default for a concurrent group: the remoting Java client with
    /// setClientRebalance(false), whose shutdown drops the batches its
    /// listeners run, unacknowledged) or grpc (the 5.x gRPC client through
    /// the proxy, which gives each client every queue of every broker; its
    /// shutdown waits for its running batches and acknowledges them). A
    /// FIFO group's consumers are always grpc.
    #[arg(long)]
    pub pop_client: Option<PopClient>,
    /// With --consumption pop, the group's popShareQueueNum: -1 (the
    /// default) and anything below 1 give every consumer every queue; N
    /// gives each consumer its own share by the strategy and the shares of
    /// the next N consumers of the sorted client ids (allocate4Pop), every
    /// queue again once N is at least the consumers but one.
    #[arg(long, default_value = "-1", allow_negative_numbers = true)]
    pub pop_share_queue_num: i32,
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
    /// Orderly consumption (MessageListenerOrderly): broker locks with
    /// leases, and a clock of 10 s ticks (with --consumption pop, a FIFO
    /// group instead: the broker blocks a queue while its last pop is
    /// unacknowledged and visible-time not reached; no locks, no clock), with the properties no queue
    /// consumed by two at once, one live lock per queue and (with
    /// --liveness) every queue consumed again. Implies --messages 1 at
    /// least; unless --consumers, --brokers or --queues say otherwise: 2
    /// consumers, 1 broker with 2 queues (on in slow-batch and clock-drift;
    /// clock-drift counts at a coarser scale: renewal 1, validity 2, lease
    /// 3, forced unlock 1 tick).
    #[arg(long)]
    pub orderly: bool,
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
        let messages = self.numbers.get(Size::Messages).unwrap_or(0);
        let mut sizes = self.scenario.layered_sizes(messages, orderly);
        // The messages are given to the layering, which keeps at least
        // one for orderly consumption.
        for (size, value) in self.numbers.given().filter(|(s, _)| *s != Size::Messages) {
            sizes.set(size, value);
        }
        // Orderly POP consumers are a FIFO group: no locks, no clock.
        let fifo = orderly && self.consumption == Consumption::Pop;
        if let Some((size, _)) = self.numbers.durations().next().filter(|_| fifo) {
            return Err(format!(
                "{}: a FIFO group of POP consumers has no locks and no clock",
                size.flag()
            ));
        }
        if fifo && self.pop_client == Some(PopClient::Remoting) {
            return Err(
                "--pop-client remoting: the remoting client never pops for an orderly \
                        listener, so a FIFO group's consumers are gRPC clients"
                    .to_string(),
            );
        }
        let defaults = self.scenario.default_protocol();
        let protocol = ProtocolOptions {
            subscription_table: defaults.subscription_table || self.subscription_table,
            retry_topic: defaults.retry_topic || self.retry_topic,
            notify: defaults.notify && !self.no_notify,
            assignment: self.assignment.unwrap_or(match self.consumption {
                Consumption::Push => Allocator::Client,
                Consumption::Pop => Allocator::Server,
            }),
            consumption: self.consumption,
            fifo,
            pop_client: self.pop_client.unwrap_or_default(),
            pop_share: u8::try_from(self.pop_share_queue_num.max(0))
                .map_err(|_| "--pop-share-queue-num must be at most 255".to_string())?,
            commit: self.commit,
            consume_from: self.consume_from,
            pull_requests: self.pull_requests,
            orderly: self.lock_timing(orderly && !fifo, defaults.orderly)?,
            // The mutant is the library's, for the trace tests: no flag.
            heartbeat_reregisters: defaults.heartbeat_reregisters,
            restart_stops: self.restart_stops
                || self.numbers.duration(Size::RestartDowntime).is_some(),
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
        let downtime = self.numbers.duration(Size::RestartDowntime);
        if matches!(downtime, Some(d) if !(1..=LockTiming::MAX).contains(&d)) {
            return Err(format!(
                "--restart-downtime must be 1..={} (--restart-stops alone lets the broker \
                 start within the tick it stopped in)",
                LockTiming::MAX
            ));
        }
        if !orderly {
            return match self.numbers.durations().next() {
                Some((size, _)) => Err(format!("{} needs --orderly", size.flag())),
                None => Ok(None),
            };
        }
        let base = scenario.unwrap_or_default();
        Ok(Some(LockTiming {
            renew: self.numbers.duration(Size::LockRenew).unwrap_or(base.renew),
            validity: self
                .numbers
                .duration(Size::LockValidity)
                .unwrap_or(base.validity),
            lease: self.numbers.duration(Size::LockLease).unwrap_or(base.lease),
            unlock_delay: self
                .numbers
                .duration(Size::UnlockDelay)
                .unwrap_or(base.unlock_delay),
            batch: self
                .numbers
                .duration(Size::BatchTicks)
                .unwrap_or(base.batch),
            restart_downtime: downtime.unwrap_or(base.restart_downtime),
            ..base
        }))
    }
}

/// A configuration error in the flags' terms.
fn describe(error: &ConfigError) -> String {
    match error {
        ConfigError::OutOfRange { size, min, max } => {
            format!("{} must be {min}..={max}", size.flag())
        }
        ConfigError::ExceedsConsumers { size } => {
            format!("{} cannot exceed --consumers", size.flag())
        }
        ConfigError::TooManyQueues { queues, max } => format!(
            "{queues} queues in all (--topics x --brokers x --queues, plus --route-changes); at most {max}"
        ),
        ConfigError::ScenarioNeeds {
            scenario,
            size,
            min,
        } => format!("--scenario {scenario} needs {} {min} or more", size.flag()),
        ConfigError::OrderlyOnly { size } => format!("{} needs --orderly", size.flag()),
        ConfigError::MessagesOnly { size } => format!("{} needs --messages", size.flag()),
        ConfigError::FifoOnly { size } => format!(
            "{} needs a FIFO group of POP consumers (--consumption pop --orderly)",
            size.flag()
        ),
        ConfigError::StopsWithoutRestarts => {
            "--restart-stops and --restart-downtime need --broker-restarts, --disk-losses or --broker-crashes".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use rocketmq_rebalance_model::configuration::{Dense, Fault, Layer};

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
            // POP's faults with a FIFO group of POP consumers, the others
            // with orderly push consumers.
            let consumption = match fault.spec().layer {
                Layer::Pop | Layer::Fifo => "pop",
                _ => "push",
            };
            for &size in fault.spec().budgets {
                let args = [
                    "rebalance",
                    "--orderly",
                    "--consumption",
                    consumption,
                    "--brokers",
                    "2",
                    "--consumers",
                    "3",
                    size.flag(),
                    "1",
                ];
                let flags = Flags::try_parse_from(args)
                    .unwrap_or_else(|e| panic!("{fault:?}: {} is no flag: {e}", size.flag()));
                let cfg = flags
                    .model
                    .build_config()
                    .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
                assert_eq!(cfg.sizes.count(size), Some(1), "{fault:?}: {}", size.flag());
            }
        }
    }
}
