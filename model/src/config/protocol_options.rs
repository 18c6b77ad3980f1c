//! Switches for the parts of RocketMQ the model can leave out, and one
//! mutant. Each is at RocketMQ's default by default, and there leaves the
//! model exactly as it was without it.

use std::fmt;
use std::str::FromStr;

use super::dense::DenseSet;
use super::variant::VariantSet;
use super::Dense;

/// Who computes a consumer's share (`--assignment`): the party that runs
/// the allocation, not the assignment it computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocator {
    /// Each consumer allocates for itself (`clientRebalance=true`, the
    /// default).
    #[default]
    Client,
    /// The broker a consumer asks allocates for it with its own member list
    /// and route (`QUERY_ASSIGNMENT`, `clientRebalance=false`).
    Server,
}

/// How a consumer gets its messages (`--consumption`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consumption {
    /// Push (the default): a consumer pulls the queues it was allocated,
    /// from its offset, and reports how far it consumed.
    #[default]
    Push,
    /// POP, message by message (`POP_MESSAGE`, `ACK_MESSAGE`): the group's
    /// mode is POP on the brokers and `clientRebalance` off, so each
    /// consumer's `QUERY_ASSIGNMENT` gets every queue of the route
    /// (`allocate4Pop` with `popShareQueueNum` at its default, -1) and
    /// pops whatever the broker gives it, each message invisible to the
    /// others until acknowledged or until its invisible time passes.
    Pop,
}

/// Which client a POP group's consumers run (`--pop-client`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PopClient {
    /// The remoting Java client in POP mode (`setClientRebalance(false)`),
    /// the default for a concurrent group: its shutdown drops the batches
    /// its listeners run, unacknowledged.
    #[default]
    Remoting,
    /// The 5.x gRPC client (`rocketmq-client-java`) through the proxy, which
    /// gives each client every queue of every broker: its shutdown waits
    /// for the batches its listeners run and acknowledges them. A FIFO
    /// group's consumers are always these.
    Grpc,
}

/// When a consumer's offsets reach the broker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Commit {
    /// Persisted every 5 s and on drop, one-way (RocketMQ's behaviour).
    #[default]
    Async,
    /// Each batch's offset is acknowledged by the broker before the next
    /// pull.
    Sync,
}

/// Where a consumer starts on a queue the group has no offset for
/// (`ConsumeFromWhere`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConsumeFrom {
    /// `CONSUME_FROM_LAST_OFFSET` (the default): the broker answers 0 while
    /// the queue's first message is in memory, else the client starts at
    /// the queue's max offset.
    #[default]
    Last,
    /// `CONSUME_FROM_FIRST_OFFSET`: from 0.
    First,
}

/// Orderly consumption's durations, in ticks of the model's clock. One tick
/// stands for 10 s of RocketMQ's, which makes each of its lock durations a
/// whole number of ticks (see `docs/spec.md`, "Orderly consumption").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct LockTiming {
    /// How often a consumer renews every lock it holds (`lockAll`, every
    /// `REBALANCE_LOCK_INTERVAL`, 20 s).
    pub renew: u8,
    /// How long a consumer trusts a lock after it was granted or renewed
    /// (`REBALANCE_LOCK_MAX_LIVE_TIME` of `ProcessQueue`, 30 s).
    pub validity: u8,
    /// How long a broker keeps a lock nobody renews (`RebalanceLockManager`,
    /// 60 s).
    pub lease: u8,
    /// How long after the last lock a dropped queue is unlocked without
    /// waiting for its running batch (`UNLOCK_DELAY_TIME_MILLS`, 20 s).
    pub unlock_delay: u8,
    /// The most ticks one batch of messages takes to consume: 0 means it
    /// finishes before the clock ticks again.
    pub batch: u8,
    /// How long a queue may go unpulled before a rebalance drops it and
    /// adds it afresh (`ProcessQueue.isPullExpired`, 120 s): what frees a
    /// queue allocated again while it was still dropped.
    pub pull_expiry: u8,
    /// Not RocketMQ's: with [`ProtocolOptions::restart_stops`], how long a
    /// stopped broker stays stopped before it starts again (0: it may start
    /// within the tick it stopped in).
    pub restart_downtime: u8,
}

impl LockTiming {
    /// The largest value each duration may take: three bits of state.
    pub const MAX: u8 = 7;
}

impl Default for LockTiming {
    /// RocketMQ's durations (20 s, 30 s, 60 s, 20 s, 120 s) and batches
    /// shorter than a tick.
    fn default() -> Self {
        Self {
            renew: 2,
            validity: 3,
            lease: 6,
            unlock_delay: 2,
            batch: 0,
            pull_expiry: 12,
            restart_downtime: 0,
        }
    }
}

/// Names, parsing and display of a command-line choice.
macro_rules! named {
    ($type:ident, $error:ident, $what:literal, $($variant:ident => $name:literal),+) => {
        impl $type {
            /// The name used on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        #[doc = concat!("A ", $what, " name the model does not know.")]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $error(pub String);

        impl fmt::Display for $error {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let names: &[&str] = &[$($name),+];
                write!(f, "unknown {} '{}', expected one of: {}", $what, self.0, names.join(", "))
            }
        }

        impl std::error::Error for $error {}

        impl FromStr for $type {
            type Err = $error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok(Self::$variant),)+
                    _ => Err($error(s.to_string())),
                }
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.name())
            }
        }
    };
}

named!(Allocator, UnknownAllocator, "assignment", Client => "client", Server => "server");
named!(Consumption, UnknownConsumption, "consumption", Push => "push", Pop => "pop");
named!(PopClient, UnknownPopClient, "POP client", Remoting => "remoting", Grpc => "grpc");
named!(Commit, UnknownCommit, "commit mode", Async => "async", Sync => "sync");
named!(ConsumeFrom, UnknownConsumeFrom, "consume-from rule", Last => "last", First => "first");

dense_enum! {
    /// A call a consumer makes to a broker and waits on.
    pub enum Call {
        /// `GET_CONSUMER_LIST_BY_GROUP` or `QUERY_ASSIGNMENT`: the rebalance
        /// round ends and counts as balanced.
        Query,
        /// `LOCK_BATCH_MQ`: a new queue waits for the next round.
        Lock,
        /// `QUERY_CONSUMER_OFFSET`: the queue is not added, and the round
        /// runs again.
        OffsetRead,
        /// `PULL_MESSAGE`: the pull is tried again later.
        Pull,
        /// A synchronous commit: it stops waiting.
        Commit,
        /// `CONSUMER_SEND_MSG_BACK`, then the producer's send: the next way
        /// is tried.
        SendBack,
    }
}

/// A set of calls, one bit each.
pub type CallSet = DenseSet<Call>;

/// The parts of the protocol a run models beyond membership and routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ProtocolOptions {
    /// Each broker keeps one subscription table per group, replaced by every
    /// member's heartbeat (`ConsumerGroupInfo.updateSubscription`); a
    /// heartbeat that changes its topics notifies the group, and a pull of a
    /// topic the table lacks fails. Consumers heartbeat periodically.
    pub subscription_table: bool,
    /// Every consumer also subscribes to the group's retry topic
    /// `%RETRY%<group>`, one queue per broker.
    pub retry_topic: bool,
    /// Brokers send `NOTIFY_CONSUMER_IDS_CHANGED`
    /// (`notifyConsumerIdsChangedEnable`, on by default); off, the group
    /// relies on the periodic rebalance alone.
    pub notify: bool,
    /// Who computes a consumer's share.
    pub assignment: Allocator,
    /// How consumers get their messages: push, or POP (with messages
    /// modelled).
    pub consumption: Consumption,
    /// With POP, a FIFO group (`--consumption pop --orderly`): the broker
    /// blocks a queue while a message of its last pop is neither
    /// acknowledged nor past its invisible time
    /// (`ConsumerOrderInfoManager.checkBlock`), and a message whose handle
    /// expired is popped again at its place, not through the retry topic.
    /// RocketMQ's remoting client never pops for an orderly listener
    /// (`clientRebalance` is true for it): these are the 5.x gRPC clients,
    /// which the proxy gives every queue of a FIFO group.
    pub fifo: bool,
    /// With POP, the client its consumers run; always
    /// [`PopClient::Grpc`] in a FIFO group (see [`Self::grpc_clients`]).
    pub pop_client: PopClient,
    /// With POP, the group's `popShareQueueNum`: 0 (RocketMQ's -1, and
    /// anything below 1) gives every consumer every queue; N gives each its
    /// own share and the shares of the next N consumers (`allocate4Pop`).
    pub pop_share: u8,
    /// When offsets reach the broker (with messages modelled).
    pub commit: Commit,
    /// Where a consumer starts on a queue without an offset (with messages
    /// modelled).
    pub consume_from: ConsumeFrom,
    /// A pull is a request to the queue's broker (`PULL_MESSAGE`), which
    /// commits the offset it carries (the commit-offset flag) and answers
    /// with the next messages, applied to the process queue that asked
    /// (with messages modelled). Off, a pull reads the queue's log at once.
    pub pull_requests: bool,
    /// Orderly consumption (`MessageListenerOrderly`): broker locks with
    /// leases, and the clock that measures them. `None`: concurrent
    /// consumption, and no clock.
    pub orderly: Option<LockTiming>,
    /// A heartbeat registers its client whichever connection it comes on
    /// (`ConsumerManager.registerConsumer` makes no difference between a
    /// client's first heartbeat and a later one): that is how a broker that
    /// lost its member table in a restart gets its members back, each at
    /// its reconnection (at once since 5.2.0) or its next periodic
    /// heartbeat. On by default, RocketMQ's behaviour.
    ///
    /// Off is not a RocketMQ setting but a mutant, which exists to show
    /// that trace validation can fail on a plausible bug: a heartbeat
    /// registers a client the broker does not list only on the client's
    /// first connection there (epoch 0, until its four bits wrap), and on
    /// any later one (after a restart, an expiry or a route change closed
    /// the old) refreshes a listed client only. A real broker restart,
    /// whose members come back, is not a behaviour of it
    /// (`cluster/tests/conform_traces.rs`).
    pub heartbeat_reregisters: bool,
    /// A broker's restart (and its restart on a replaced disk) is a stop
    /// and a later start, two steps with anything between: while it is
    /// stopped its connections are closed, the name servers leave it out
    /// of their routes (`BrokerHousekeepingService`) and it refuses calls;
    /// with orderly consumption it stays stopped
    /// [`LockTiming::restart_downtime`] ticks. Off (the default), a restart
    /// is one step, the stop and the start at once: no downtime. The
    /// stopped phase multiplies the states (every other step may come
    /// between the two), so it is a choice, not the default.
    pub restart_stops: bool,
    /// The calls that fail for their caller when they are lost (their
    /// connection closes, the stopped broker refuses it, or a route change
    /// drops the broker), each with Java's own retry (see [`Call`]): every
    /// call, RocketMQ's behaviour. A call left out is a mutant, which
    /// exists to show what its retry buys: its caller then waits for an
    /// answer that can no longer come, which `every call answered or
    /// failed` refuses, and the liveness verdicts it kept flip
    /// (`model/tests/calls.rs`).
    pub calls_fail: CallSet,
    /// The protocol variants switched on ([`Variant`](super::Variant)); none is RocketMQ
    /// 5.3.3 as shipped, with its default settings.
    pub variants: VariantSet,
}

impl ProtocolOptions {
    /// Whether the group's consumers are gRPC clients through the proxy: a
    /// FIFO group's, or a POP group's of `--pop-client grpc`.
    pub fn grpc_clients(&self) -> bool {
        self.consumption == Consumption::Pop && (self.fifo || self.pop_client == PopClient::Grpc)
    }
}

impl Default for ProtocolOptions {
    /// RocketMQ's defaults, with the optional parts left out.
    fn default() -> Self {
        Self {
            subscription_table: false,
            retry_topic: false,
            notify: true,
            assignment: Allocator::Client,
            consumption: Consumption::Push,
            fifo: false,
            pop_client: PopClient::Remoting,
            pop_share: 0,
            commit: Commit::Async,
            consume_from: ConsumeFrom::Last,
            pull_requests: false,
            orderly: None,
            heartbeat_reregisters: true,
            restart_stops: false,
            calls_fail: Call::all().collect(),
            variants: VariantSet::EMPTY,
        }
    }
}
