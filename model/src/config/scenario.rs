//! The catalogue of situations a user can check: each a failure mode or an
//! operation RocketMQ users meet in production, with the sizes that show it.

use std::fmt;
use std::str::FromStr;

use super::{LockTiming, ProtocolOptions, Sizes};

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
    /// A new broker with queues joins the route (broker scale-out).
    BrokerScaleOut,
    /// The last broker leaves the route (broker scale-in, or an upgrade).
    BrokerScaleIn,
    /// The first topic loses a read queue (queue scale-in).
    QueueScaleIn,
    /// Two name servers; the last broker is cut off from the last one,
    /// which drops it from its routes until the partition heals.
    NameserverPartition,
    /// A queue is added while the first consumer cannot reach its name
    /// server: its route poll fails and it keeps the old route until a later
    /// poll succeeds.
    StaleRoute,
    /// The first broker restarts (an upgrade): its member table is lost and
    /// members register again on their new connections (with
    /// `--restart-stops`, after a stopped phase in which the name servers
    /// leave it out of their routes).
    BrokerRestart,
    /// With messages: the first broker, whose queues' first messages may
    /// have left memory, restarts on a replaced disk and loses its offset
    /// table; a queue that changes hands meanwhile starts where
    /// `ConsumeFromWhere` says.
    BrokerDiskLoss,
    /// With messages: a queue is added to a running group's topic, and its
    /// broker's first messages may leave memory before the group reads
    /// the new queue's offset: none is stored, so consuming from last the
    /// new owner starts at the queue's end.
    EvictedNewQueue,
    /// A consumer upgrade: the first consumer shuts down and a new one (a
    /// new client id) joins, in either order.
    RollingUpgrade,
    /// The first consumer pauses (GC) or is cut off for over 120 s while
    /// alive: brokers expire it, it keeps consuming its queues, then
    /// reconnects.
    ZombieConsumer,
    /// Members subscribe to different topics, and each broker keeps one
    /// subscription table for the group, which every member's heartbeat
    /// replaces: the table flips, each flip notifies the group, and a pull
    /// of a topic the table lacks fails.
    SubscriptionFlap,
    /// A group of mixed clients: a consumer of the Rust client (which sorts
    /// client ids by bytes) joins a running Java consumer, with the
    /// smallest ids on which the two orders disagree (`U+E000`, `U+10000`):
    /// both find themselves at the same index and take the same queues.
    MixedClients,
    /// A rolling change of the group's strategy (`AVG` to `AVG_BY_CIRCLE`):
    /// the first consumer shuts down and comes back, a new client id, with
    /// the new strategy, while the others still run the old one.
    StrategyRollout,
    /// Orderly consumption with batches that may outlast the forced-unlock
    /// delay: a queue dropped while its batch runs is unlocked without
    /// waiting for it.
    SlowBatch,
    /// Orderly consumption where the first consumer's wall clock is
    /// stepped back beyond the margin between its lock validity and the
    /// broker's lease: it trusts a lock on a queue it dropped. Its renewal
    /// runs on the monotonic clock (until this version it slowed with the
    /// wall clock), so the broker's lease on what it consumes holds.
    ClockDrift,
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
        Self::BrokerScaleOut,
        Self::BrokerScaleIn,
        Self::QueueScaleIn,
        Self::NameserverPartition,
        Self::StaleRoute,
        Self::BrokerRestart,
        Self::BrokerDiskLoss,
        Self::EvictedNewQueue,
        Self::RollingUpgrade,
        Self::ZombieConsumer,
        Self::SubscriptionFlap,
        Self::MixedClients,
        Self::StrategyRollout,
        Self::SlowBatch,
        Self::ClockDrift,
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
            Self::BrokerScaleOut => "broker-scale-out",
            Self::BrokerScaleIn => "broker-scale-in",
            Self::QueueScaleIn => "queue-scale-in",
            Self::NameserverPartition => "nameserver-partition",
            Self::StaleRoute => "stale-route",
            Self::BrokerRestart => "broker-restart",
            Self::BrokerDiskLoss => "broker-disk-loss",
            Self::EvictedNewQueue => "evicted-new-queue",
            Self::RollingUpgrade => "rolling-upgrade",
            Self::ZombieConsumer => "zombie-consumer",
            Self::SubscriptionFlap => "subscription-flap",
            Self::MixedClients => "mixed-clients",
            Self::StrategyRollout => "strategy-rollout",
            Self::SlowBatch => "slow-batch",
            Self::ClockDrift => "clock-drift",
        }
    }

    /// The protocol options this scenario needs: the subscription table for
    /// `subscription-flap`, orderly consumption for `slow-batch` (batches one
    /// tick longer than the forced-unlock delay) and `clock-drift` (its
    /// durations at the smallest scale that keeps their order), RocketMQ's
    /// defaults otherwise.
    pub fn default_protocol(self) -> ProtocolOptions {
        let timing = LockTiming::default();
        let orderly = match self {
            Self::SlowBatch => Some(LockTiming {
                batch: timing.unlock_delay + 1,
                ..timing
            }),
            // RocketMQ's order (renewal < validity < lease, forced unlock
            // at the renewal period) at the smallest scale, a margin of one
            // tick: at 10 s ticks a drift past the 30 s margin takes four
            // lagging ticks and the check takes minutes.
            Self::ClockDrift => Some(LockTiming {
                renew: 1,
                validity: 2,
                lease: 3,
                unlock_delay: 1,
                batch: 0,
                pull_expiry: 6,
                restart_downtime: 0,
            }),
            _ => None,
        };
        ProtocolOptions {
            subscription_table: self == Self::SubscriptionFlap,
            orderly,
            ..ProtocolOptions::default()
        }
    }

    /// Whether the scenario is about orderly consumption.
    pub fn needs_orderly(self) -> bool {
        self.default_protocol().orderly.is_some()
    }

    /// The sizes this scenario uses with the message layer on (`messages`
    /// in each queue) or with orderly consumption, unless overridden.
    ///
    /// Each message on a queue multiplies the state space by about 20, so
    /// with messages a scenario keeps only the consumers and queues its
    /// hazard needs: those whose ownership verdicts stay what they are
    /// without messages with two consumers and one queue per broker (the
    /// healthy check is then one consumer joining another over two queues)
    /// take that; a crash, a route change and a stale route keep their
    /// three consumers over one queue per broker; a graceful leave and a
    /// broker joining need only one broker running, a broker leaving only
    /// two consumers, and a zombie one queue per broker; the others keep
    /// their sizes. Orderly consumption
    /// adds the clock and the locks: every orderly scenario is two consumers
    /// and one broker with two queues of one message each (at least), where
    /// one queue changes hands.
    pub fn layered_sizes(self, messages: usize, orderly: bool) -> Sizes {
        let base = self.default_sizes();
        if orderly {
            let orderly_sizes = Sizes {
                consumers: 2,
                brokers: 1,
                queues: 2,
                messages: messages.max(1),
                ..base
            };
            // The restart alone, on a running group with one queue: the
            // member that re-registers first sees only itself and asks for
            // the queue the other still trusts its lock on. A second queue
            // and a join multiply the interleavings of the re-registrations
            // (over 15M states) and add no hazard.
            if self == Self::BrokerRestart {
                return Sizes {
                    queues: 1,
                    joins: Some(0),
                    ..orderly_sizes
                };
            }
            return orderly_sizes;
        }
        if messages == 0 {
            return base;
        }
        let kept = match self {
            Self::Healthy
            | Self::InconsistentSubscription
            | Self::DuplicateClientId
            | Self::QueueScaleIn
            | Self::NameserverPartition
            | Self::BrokerRestart
            | Self::RollingUpgrade => Sizes {
                consumers: 2,
                queues: 1,
                ..base
            },
            // A zombie needs two brokers (with one, no queue is ever
            // orphaned); a second queue on each would multiply its space
            // by more than four.
            Self::Crash | Self::RouteChange | Self::StaleRoute | Self::ZombieConsumer => {
                Sizes { queues: 1, ..base }
            }
            // One broker: the leave then reaches every survivor through it
            // alone, and one queue still changes hands between survivors.
            Self::GracefulShutdown => Sizes { brokers: 1, ..base },
            // One broker running, one joining, one queue each.
            Self::BrokerScaleOut => Sizes {
                brokers: 1,
                queues: 1,
                ..base
            },
            // Two members over the two brokers' two queues each: with one
            // queue a broker, no queue is ever orphaned.
            Self::BrokerScaleIn => Sizes {
                consumers: 2,
                ..base
            },
            _ => base,
        };
        Sizes { messages, ..kept }
    }

    /// The sizes and budgets this scenario uses unless overridden.
    pub fn default_sizes(self) -> Sizes {
        let base = Sizes::default();
        match self {
            Self::Healthy | Self::DuplicateClientId | Self::PartialPartition => base,
            Self::InconsistentSubscription => Sizes { topics: 2, ..base },
            // Two consumers, one per topic, already running: the flipping
            // alone is what is checked.
            Self::SubscriptionFlap => Sizes {
                consumers: 2,
                topics: 2,
                joins: Some(0),
                ..base
            },
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
            // Two consumers: a third broker multiplies every consumer's
            // choices, and two already show a broker that lists nobody yet.
            Self::BrokerScaleOut => Sizes {
                consumers: 2,
                broker_joins: 1,
                joins: Some(0),
                ..base
            },
            Self::BrokerScaleIn => Sizes {
                broker_leaves: 1,
                joins: Some(0),
                ..base
            },
            Self::QueueScaleIn => Sizes {
                queue_removals: 1,
                joins: Some(0),
                queues: 3,
                ..base
            },
            Self::NameserverPartition => Sizes {
                name_servers: 2,
                name_server_partitions: 1,
                joins: Some(0),
                ..base
            },
            // Two consumers: with three, every reconnection notifies every
            // member and the liveness graph passes 30 s.
            Self::BrokerRestart => Sizes {
                consumers: 2,
                broker_restarts: 1,
                joins: Some(0),
                ..base
            },
            // Messages are what it is about: one broker with one queue of
            // one message, two consumers running, one owning it. The
            // eviction lets the restored log's first message be out of
            // memory, as after a disk is replaced; without it the broker
            // answers a missing offset with 0.
            Self::BrokerDiskLoss => Sizes {
                consumers: 2,
                brokers: 1,
                queues: 1,
                joins: Some(0),
                messages: 1,
                evictions: 1,
                disk_losses: 1,
                ..base
            },
            // Messages are what it is about: two consumers running on one
            // broker's queue, a second queue added; two messages a queue,
            // so that the one skipped is not the new queue's only one.
            Self::EvictedNewQueue => Sizes {
                consumers: 2,
                brokers: 1,
                queues: 1,
                joins: Some(0),
                route_changes: 1,
                messages: 2,
                evictions: 1,
                ..base
            },
            // Two consumers running and a third, the new version, joining:
            // with three running the join and the leave together pass 30 s.
            Self::RollingUpgrade => Sizes {
                joins: Some(1),
                leaves: 1,
                ..base
            },
            // A Java consumer running alone, and a Rust one joining.
            Self::MixedClients => Sizes {
                consumers: 2,
                ..base
            },
            // The rolling upgrade's shape (the first consumer leaves, a new
            // one joins) on one broker with three queues: two consumers on
            // the two strategies then disagree on one queue of three.
            Self::StrategyRollout => Sizes {
                brokers: 1,
                queues: 3,
                joins: Some(1),
                leaves: 1,
                ..base
            },
            // Two consumers: the zombie and one that takes its queues.
            Self::ZombieConsumer => Sizes {
                consumers: 2,
                expiries: 1,
                joins: Some(0),
                ..base
            },
            Self::StaleRoute => Sizes {
                route_changes: 1,
                stale_routes: 1,
                joins: Some(0),
                queues: 3,
                ..base
            },
            // The orderly scenarios' sizes are those of `layered_sizes`; the
            // join makes the second queue change hands.
            Self::SlowBatch => Sizes {
                consumers: 2,
                brokers: 1,
                messages: 1,
                ..base
            },
            // The first consumer holds both queues when the second joins,
            // and its wall clock is stepped back three ticks: past the
            // margin of one tick between its lock validity and the
            // broker's lease, at this scenario's coarser scale.
            Self::ClockDrift => Sizes {
                consumers: 2,
                brokers: 1,
                messages: 1,
                clock_drift: 3,
                ..base
            },
        }
    }
}

/// A scenario name that is not one of [`Scenario::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScenario(pub String);

impl fmt::Display for UnknownScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
        write!(
            f,
            "unknown scenario '{}', expected one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownScenario {}

impl FromStr for Scenario {
    type Err = UnknownScenario;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|scenario| scenario.name() == s)
            .ok_or_else(|| UnknownScenario(s.to_string()))
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
