//! How big a group is and how many environment events a run may spend.

use std::fmt;

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
    /// How many consumers (the first ones) may crash: their host dies or is
    /// cut off, and brokers expire them silently.
    pub crashes: usize,
    /// How many consumers (the first ones) may have their process killed:
    /// their connections close and brokers notify the group at once.
    pub kills: usize,
    /// How many consumers (the first ones) may pause or be cut off for over
    /// 120 s while alive: brokers expire them, they keep their queues (a
    /// zombie) and reconnect later.
    pub expiries: usize,
    /// How many brokers (the first ones) may restart, losing their tables.
    pub broker_restarts: usize,
    /// How many consumers (the last ones) may shut down gracefully.
    pub leaves: usize,
    /// Queue scale-outs: route changes that each add one read queue to the
    /// first topic.
    pub route_changes: usize,
    /// Queue scale-ins: route changes that each remove one read queue of
    /// the first topic.
    pub queue_removals: usize,
    /// Broker scale-outs: brokers beyond the first `brokers` that join the
    /// route with their queues.
    pub broker_joins: usize,
    /// Broker scale-ins (or upgrades): brokers that leave the route, the
    /// last one first.
    pub broker_leaves: usize,
    /// Name servers; consumer `i` polls name server `i % name_servers`.
    pub name_servers: usize,
    /// Partitions between the last broker and the last name server, which
    /// then drops the broker from its routes (its 120 s scan) until the
    /// partition heals.
    pub name_server_partitions: usize,
    /// How many consumers (the first ones) may each lose one
    /// `NOTIFY_CONSUMER_IDS_CHANGED` (a one-way message).
    pub lost_notifications: usize,
    /// How many consumers (the first ones) may each miss one route update
    /// (their name server unreachable for a poll) and see it at a later
    /// poll.
    pub stale_routes: usize,
    /// How many consumers (the first ones) may change their subscription
    /// once at runtime (subscribe to the last topic, or unsubscribe from
    /// it).
    pub subscription_changes: usize,
    /// How many consumers (the first ones) may each have one
    /// `GET_CONSUMER_LIST_BY_GROUP` fail (its broker unreachable for it).
    pub failed_queries: usize,
    /// How many consumers (the first ones) may each, once, open two
    /// connections to a broker where they reconnect: the broker then lists
    /// the client twice until its scan expires the silent one.
    pub second_channels: usize,
    /// Messages in each queue's log (the message layer: pulls, offsets,
    /// deliveries). 0 leaves messages out.
    pub messages: usize,
    /// Messages a pull fetches at most (`pullBatchSize`).
    pub pull_batch: usize,
    /// How many consumers (the first ones) may each lose one offset persist
    /// (a one-way message).
    pub lost_persists: usize,
    /// How many consumers (the first ones) may each have one offset read
    /// fail, so that the queue is not added that round.
    pub failed_offset_reads: usize,
    /// How many brokers (the first ones) may see their queues' first
    /// messages leave memory (`checkInMemByConsumeOffset` then fails).
    pub evictions: usize,
    /// How many brokers (the first ones) may restart on a replaced disk,
    /// losing their offset tables as well as their memory.
    pub disk_losses: usize,
    /// How many consumers (the first ones) may each have one batch fail:
    /// its listener returns `RECONSUME_LATER` (orderly,
    /// `SUSPEND_CURRENT_QUEUE_A_MOMENT`) and the batch is sent back or
    /// consumed again.
    pub consume_failures: usize,
    /// How many consumers (the first ones) may each have their pulls stall
    /// for over 120 s once: at their next round every queue they still get
    /// is dropped and added afresh (`isPullExpired`).
    pub pull_stalls: usize,
    /// With orderly consumption: by how many ticks in all the first
    /// consumer's wall clock may be stepped back in a run, a tick at a time
    /// (its renewal runs on the monotonic clock, which no step moves).
    pub clock_drift: usize,
    /// With orderly consumption: how many brokers (the first ones) may each
    /// have their wall clock stepped forward once, by a lease or more
    /// (their lock leases are wall-clock times).
    pub broker_clock_steps: usize,
    /// With orderly consumption: how many consumers (the first ones) may
    /// each lose one unlock (a one-way message).
    pub lost_unlocks: usize,
    /// With orderly consumption: how many consumers (the first ones) may
    /// lose their connection for lock calls: from then on every lock call
    /// times out, while they go on consuming what they have pulled.
    pub failed_locks: usize,
}

impl Sizes {
    /// Three consumers, two brokers, one topic with two queues per broker;
    /// the last consumer joins a balanced group. Usable in constants
    /// (`..Sizes::DEFAULT`).
    pub const DEFAULT: Sizes = Sizes {
        consumers: 3,
        brokers: 2,
        topics: 1,
        queues: 2,
        joins: Some(1),
        crashes: 0,
        kills: 0,
        expiries: 0,
        broker_restarts: 0,
        leaves: 0,
        route_changes: 0,
        queue_removals: 0,
        broker_joins: 0,
        broker_leaves: 0,
        name_servers: 1,
        name_server_partitions: 0,
        lost_notifications: 0,
        stale_routes: 0,
        subscription_changes: 0,
        failed_queries: 0,
        second_channels: 0,
        messages: 0,
        pull_batch: 1,
        lost_persists: 0,
        failed_offset_reads: 0,
        evictions: 0,
        disk_losses: 0,
        consume_failures: 0,
        pull_stalls: 0,
        clock_drift: 0,
        broker_clock_steps: 0,
        lost_unlocks: 0,
        failed_locks: 0,
    };
}

impl Default for Sizes {
    /// [`Sizes::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Sizes {
    /// How many consumers join: `joins`, or all of them for a cold start.
    pub fn joiners(&self) -> usize {
        self.joins.unwrap_or(self.consumers)
    }

    /// The value of the field `size` names; `None` for the durations of
    /// [`LockTiming`](super::LockTiming), which are not sizes.
    pub fn count(&self, size: Size) -> Option<usize> {
        Some(match size {
            Size::Consumers => self.consumers,
            Size::Brokers => self.brokers,
            Size::Topics => self.topics,
            Size::Queues => self.queues,
            Size::Joins => self.joiners(),
            Size::Crashes => self.crashes,
            Size::Kills => self.kills,
            Size::Expiries => self.expiries,
            Size::BrokerRestarts => self.broker_restarts,
            Size::Leaves => self.leaves,
            Size::RouteChanges => self.route_changes,
            Size::QueueRemovals => self.queue_removals,
            Size::BrokerJoins => self.broker_joins,
            Size::BrokerLeaves => self.broker_leaves,
            Size::NameServers => self.name_servers,
            Size::NameServerPartitions => self.name_server_partitions,
            Size::LostNotifications => self.lost_notifications,
            Size::FailedQueries => self.failed_queries,
            Size::SecondChannels => self.second_channels,
            Size::StaleRoutes => self.stale_routes,
            Size::SubscriptionChanges => self.subscription_changes,
            Size::Messages => self.messages,
            Size::PullBatch => self.pull_batch,
            Size::LostPersists => self.lost_persists,
            Size::FailedOffsetReads => self.failed_offset_reads,
            Size::Evictions => self.evictions,
            Size::DiskLosses => self.disk_losses,
            Size::ConsumeFailures => self.consume_failures,
            Size::PullStalls => self.pull_stalls,
            Size::ClockDrift => self.clock_drift,
            Size::BrokerClockSteps => self.broker_clock_steps,
            Size::LostUnlocks => self.lost_unlocks,
            Size::FailedLocks => self.failed_locks,
            Size::LockRenew
            | Size::LockValidity
            | Size::LockLease
            | Size::UnlockDelay
            | Size::BatchTicks
            | Size::RestartDowntime => return None,
        })
    }
}

/// One number of a configuration (a field of [`Sizes`] or of
/// [`LockTiming`](super::LockTiming)), to say which one a
/// [`ConfigError`](super::ConfigError) is about. Ordered as declared: the
/// order in which reports list the budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Size {
    /// [`Sizes::consumers`].
    Consumers,
    /// [`Sizes::brokers`].
    Brokers,
    /// [`Sizes::topics`].
    Topics,
    /// [`Sizes::queues`].
    Queues,
    /// [`Sizes::joins`].
    Joins,
    /// [`Sizes::crashes`].
    Crashes,
    /// [`Sizes::kills`].
    Kills,
    /// [`Sizes::expiries`].
    Expiries,
    /// [`Sizes::broker_restarts`].
    BrokerRestarts,
    /// [`Sizes::leaves`].
    Leaves,
    /// [`Sizes::route_changes`].
    RouteChanges,
    /// [`Sizes::queue_removals`].
    QueueRemovals,
    /// [`Sizes::broker_joins`].
    BrokerJoins,
    /// [`Sizes::broker_leaves`].
    BrokerLeaves,
    /// [`Sizes::name_servers`].
    NameServers,
    /// [`Sizes::name_server_partitions`].
    NameServerPartitions,
    /// [`Sizes::lost_notifications`].
    LostNotifications,
    /// [`Sizes::failed_queries`].
    FailedQueries,
    /// [`Sizes::second_channels`].
    SecondChannels,
    /// [`Sizes::stale_routes`].
    StaleRoutes,
    /// [`Sizes::subscription_changes`].
    SubscriptionChanges,
    /// [`Sizes::messages`].
    Messages,
    /// [`Sizes::pull_batch`].
    PullBatch,
    /// [`Sizes::lost_persists`].
    LostPersists,
    /// [`Sizes::failed_offset_reads`].
    FailedOffsetReads,
    /// [`Sizes::evictions`].
    Evictions,
    /// [`Sizes::disk_losses`].
    DiskLosses,
    /// [`Sizes::consume_failures`].
    ConsumeFailures,
    /// [`Sizes::pull_stalls`].
    PullStalls,
    /// [`Sizes::clock_drift`].
    ClockDrift,
    /// [`Sizes::broker_clock_steps`].
    BrokerClockSteps,
    /// [`Sizes::lost_unlocks`].
    LostUnlocks,
    /// [`Sizes::failed_locks`].
    FailedLocks,
    /// [`LockTiming::renew`](super::LockTiming::renew).
    LockRenew,
    /// [`LockTiming::validity`](super::LockTiming::validity).
    LockValidity,
    /// [`LockTiming::lease`](super::LockTiming::lease).
    LockLease,
    /// [`LockTiming::unlock_delay`](super::LockTiming::unlock_delay).
    UnlockDelay,
    /// [`LockTiming::batch`](super::LockTiming::batch).
    BatchTicks,
    /// [`LockTiming::restart_downtime`](super::LockTiming::restart_downtime).
    RestartDowntime,
}

impl Size {
    /// The field's name in words, as in [`Sizes`].
    pub fn name(self) -> &'static str {
        match self {
            Self::Consumers => "consumers",
            Self::Brokers => "brokers",
            Self::Topics => "topics",
            Self::Queues => "queues",
            Self::Joins => "joins",
            Self::Crashes => "crashes",
            Self::Kills => "kills",
            Self::Expiries => "expiries",
            Self::BrokerRestarts => "broker restarts",
            Self::Leaves => "leaves",
            Self::RouteChanges => "route changes",
            Self::QueueRemovals => "queue removals",
            Self::BrokerJoins => "broker joins",
            Self::BrokerLeaves => "broker leaves",
            Self::NameServers => "name servers",
            Self::NameServerPartitions => "name server partitions",
            Self::LostNotifications => "lost notifications",
            Self::FailedQueries => "failed queries",
            Self::SecondChannels => "second channels",
            Self::StaleRoutes => "stale routes",
            Self::SubscriptionChanges => "subscription changes",
            Self::Messages => "messages",
            Self::PullBatch => "pull batch",
            Self::LostPersists => "lost persists",
            Self::FailedOffsetReads => "failed offset reads",
            Self::Evictions => "evictions",
            Self::DiskLosses => "disk losses",
            Self::ConsumeFailures => "consume failures",
            Self::PullStalls => "pull stalls",
            Self::ClockDrift => "clock drift",
            Self::BrokerClockSteps => "broker clock steps",
            Self::LostUnlocks => "lost unlocks",
            Self::FailedLocks => "failed locks",
            Self::LockRenew => "lock renewal interval",
            Self::LockValidity => "lock validity",
            Self::LockLease => "lock lease",
            Self::UnlockDelay => "unlock delay",
            Self::BatchTicks => "batch duration",
            Self::RestartDowntime => "restart downtime",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
