//! The environment's events, defined once: what may go wrong (a crash, a
//! lost message, a broker restart) and what operators and users do (a
//! join, a route change), each with its budget, whom it happens to, the
//! layer of the model it needs, and its words.
//!
//! Everything else is derived from [`Fault::spec`]: which actors may have
//! which fault ([`picks`]), the validation of the budgets, the faults a
//! consumer records for its next call ([`Effect::Scheduled`]) and how the
//! pictures and traces name them. Faults are never fair: a run may spend
//! its budget or not, and the liveness check asks nothing of runs that
//! would need a fault to happen (`check::liveness`).

use super::dense::DenseSet;
use super::{Consumption, ProtocolOptions, Scenario, Size, Sizes};

dense_enum! {
    /// An event of the environment: a fault, or an operator's or a user's
    /// action, which a run may take at most as often as its budget allows
    /// and is never required to take. A fault is armed by the actor it
    /// happens to and fires as the checker chooses, like a timer; unlike a
    /// timer it is not fair.
    pub enum Fault {
        /// The consumer starts (`DefaultMQPushConsumerImpl.start`).
        Join,
        /// The consumer shuts down gracefully.
        Shutdown,
        /// The consumer's host dies or is cut off.
        Crash,
        /// The operator changes the route (the next step of its script).
        RouteChange,
        /// The consumer's next `NOTIFY_CONSUMER_IDS_CHANGED` is lost on the
        /// way (one-way messages may be).
        LoseNotification,
        /// The consumer's next `GET_CONSUMER_LIST_BY_GROUP` fails (its broker
        /// unreachable for that call).
        FailQuery,
        /// The consumer's next new connection to a broker is opened twice:
        /// the broker lists it twice (`getAllClientId` has one entry a
        /// channel) until its scan expires the silent channel.
        SecondChannel,
        /// The partition between the last broker and the last name server
        /// begins; that name server's scan drops the broker.
        Partition,
        /// The consumer's next route poll fails (its name server
        /// unreachable), so it keeps its cached route until a later one.
        MissRoute,
        /// The consumer's process dies on a live host: its connections close
        /// and every broker notices at once.
        Kill,
        /// The live consumer pauses (a long GC) or is cut off (a network
        /// blip) for over 120 s: every broker expires it while it keeps its
        /// queues.
        Pause,
        /// The broker restarts: its member table is lost and its
        /// connections close. One step, or with
        /// [`ProtocolOptions::restart_stops`](super::ProtocolOptions) its
        /// stop, the start on the same address coming after its downtime
        /// (`Timer::Start`).
        Restart,
        /// The consumer subscribes to the last topic, or unsubscribes from
        /// it, at runtime.
        Resubscribe,
        /// The consumer's next offset persist is lost.
        LosePersist,
        /// The consumer's next offset read fails.
        FailOffsetRead,
        /// The broker's queues' first messages leave memory.
        Evict,
        /// Orderly: the consumer's next unlock is lost.
        LoseUnlock,
        /// Orderly: the consumer loses its connection for lock calls: every
        /// lock call times out from then on.
        FailLocks,
        /// The broker restarts on a replaced disk: it loses what a restart
        /// loses and its offset table; its commit log is restored (the
        /// model has no log to lose, `BrokerDisk::lost`).
        DiskLoss,
        /// Orderly: the broker's wall clock steps forward by a lease or
        /// more (NTP correcting a clock that was behind): every lock it
        /// holds lapses at once.
        ClockStep,
        /// The consumer's next batch fails: its listener returns
        /// `RECONSUME_LATER`, and the batch is sent back to the broker (or,
        /// if that fails, consumed again); orderly, it returns
        /// `SUSPEND_CURRENT_QUEUE_A_MOMENT` and the batch is consumed again.
        FailConsume,
        /// The consumer's pulls stall for over 120 s (a stop-the-world
        /// pause, its pull thread blocked, `SIGSTOP`): at its next round
        /// every queue it still gets has expired (`isPullExpired`) and is
        /// dropped and added afresh, its offset persisted and read again.
        StallPulls,
        /// The broker's master fails and its slave serves in its place (a
        /// controller's election, or a slave acting as master): the
        /// consumers' heartbeats and channels are already there, but the
        /// new master has no lock table, and its offsets are those of its
        /// last sync from the master (`SlaveSynchronize.syncConsumerOffset`),
        /// the commits since then lost.
        Failover,
        /// POP: the consumer's next `ACK_MESSAGE` is lost (the remoting
        /// client sends it one-way, `ackMessageAsync`), so the handle it
        /// acknowledges expires: the broker revives the message into the
        /// group's retry topic.
        LoseAck,
        /// POP: the batches the consumer's listener is running outlast
        /// their invisible time (60 s by default): the broker revives their
        /// messages while they run, and the remoting client drops their
        /// results (the proxy refuses a FIFO group's gRPC client's late
        /// acknowledgement: its handle expired).
        SlowBatch,
        /// POP: the answer to the consumer's next `POP_MESSAGE` that brings
        /// messages is lost, the connection alive: its receive times out
        /// (`DEADLINE_EXCEEDED`) and it pops again, a FIFO group's gRPC
        /// client with the lost pop's attempt id. The popped messages stay
        /// invisible until their invisible time passes, unless that retry
        /// re-enters the queue and pops them again.
        LosePopAnswer,
        /// A FIFO group of POP consumers: the broker is killed with no
        /// clean shutdown and starts again. It loses what a restart loses
        /// and the group's order info of its queues' last pops
        /// (`consumerOrderInfo.json`, persisted every 10 s), so no queue
        /// is blocked any more.
        BrokerCrash,
    }
}

/// A set of faults, one bit each.
pub type FaultSet = DenseSet<Fault>;

/// The kind of actor a fault happens to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The name servers.
    NameServer,
    /// A broker.
    Broker,
    /// A consumer.
    Consumer,
}

/// A part of the model: the one a fault needs (without it, the fault is
/// never armed) or a property speaks of (without it, the property is not
/// checked, nor reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// The rebalance itself (membership, routes, ownership): always
    /// modelled.
    Rebalance,
    /// Messages and offsets (`--messages`).
    Messages,
    /// Orderly consumption: locks, leases and the clock (`--orderly`).
    Orderly,
    /// Queues consumed by one owner each, as push consumers take them
    /// (`--consumption push`, the default): with POP every consumer is
    /// given every queue, and the broker hands out messages.
    Ownership,
    /// POP consumption: handles, acknowledgements and the revive
    /// (`--consumption pop`).
    Pop,
    /// One batch of a queue at a time, which orderly push consumers and
    /// FIFO groups of POP consumers promise (`--orderly`).
    Sequential,
    /// A FIFO group of POP consumers (`--consumption pop --orderly`).
    Fifo,
}

impl Layer {
    /// Whether a run with `sizes` and `protocol` models this part.
    pub fn modelled_with(self, sizes: &Sizes, protocol: &ProtocolOptions) -> bool {
        match self {
            Self::Rebalance => true,
            Self::Messages => sizes.messages > 0,
            Self::Orderly => protocol.orderly.is_some(),
            Self::Ownership => protocol.consumption == Consumption::Push,
            Self::Pop => sizes.messages > 0 && protocol.consumption == Consumption::Pop,
            Self::Sequential => {
                protocol.orderly.is_some() || Self::Fifo.modelled_with(sizes, protocol)
            }
            Self::Fifo => Self::Pop.modelled_with(sizes, protocol) && protocol.fifo,
        }
    }
}

/// Which actors of its kind a fault's budget picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The first ones, as many as the budget.
    First,
    /// The last ones, as many as the budget.
    Last,
    /// Every one: the budget is spent as the actor goes (the operators'
    /// route script, walked a step at a time).
    Script,
}

/// What a fault does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// It happens at once: the actor's machine takes the step.
    Now,
    /// It is recorded in the consumer's state (its `faults`) and the
    /// step it concerns applies it; the words say what is pending, as the
    /// pictures list it.
    Scheduled(&'static str),
}

/// Everything about one fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    /// Whom it happens to.
    pub target: Target,
    /// The sizes whose sum bounds how many actors may have it (each at
    /// most once, but for the route script).
    pub budgets: &'static [Size],
    /// Which actors the budget picks.
    pub pick: Pick,
    /// The layer it needs.
    pub layer: Layer,
    /// What it does.
    pub effect: Effect,
    /// The trace's words for it happening (after the actor's name).
    pub words: &'static str,
    /// Whether its step may send a periodic message, which the shell drops
    /// when redundant: that reads the receiver's state and flow, so the
    /// independence relation of the sleep sets derives from this which
    /// steps the fault's step commutes with (`shell::independence`). A
    /// fault that sends one without saying so is refused by the shell.
    pub periodic: bool,
}

impl Fault {
    /// The one definition of the fault.
    pub const fn spec(self) -> FaultSpec {
        use Effect::{Now, Scheduled};
        use Layer::{Fifo, Messages, Orderly, Pop, Rebalance};
        use Pick::{First, Last, Script};
        use Target::{Broker, Consumer, NameServer};
        let (target, budgets, pick, layer, effect, words, periodic): (_, &[Size], _, _, _, _, _) = match self {
            Self::Join => (
                Consumer,
                &[Size::Joins],
                Last,
                Rebalance,
                Now,
                "start, heartbeat to every broker",
                false,
            ),
            Self::Shutdown => (
                Consumer,
                &[Size::Leaves],
                Last,
                Rebalance,
                Now,
                "shutdown, unregister from every broker",
                false,
            ),
            Self::Crash => (Consumer, &[Size::Crashes], First, Rebalance, Now, "crash", false),
            Self::RouteChange => (
                NameServer,
                &[
                    Size::RouteChanges,
                    Size::QueueRemovals,
                    Size::BrokerJoins,
                    Size::BrokerLeaves,
                ],
                Script,
                Rebalance,
                Now,
                "route change",
                false,
            ),
            Self::LoseNotification => (
                Consumer,
                &[Size::LostNotifications],
                First,
                Rebalance,
                Scheduled("loses its next NOTIFY_CONSUMER_IDS_CHANGED"),
                "its next NOTIFY_CONSUMER_IDS_CHANGED will be lost",
                false,
            ),
            Self::FailQuery => (
                Consumer,
                &[Size::FailedQueries],
                First,
                Rebalance,
                Scheduled("its next GET_CONSUMER_LIST_BY_GROUP fails"),
                "its next GET_CONSUMER_LIST_BY_GROUP will fail (broker unreachable)",
                false,
            ),
            Self::SecondChannel => (
                Consumer,
                &[Size::SecondChannels],
                First,
                Rebalance,
                Scheduled("its next new connection opens a second channel"),
                "its next new connection to a broker will open a second, silent channel",
                false,
            ),
            Self::Partition => (
                NameServer,
                &[Size::NameServerPartitions],
                First,
                Rebalance,
                Now,
                "partition from a broker",
                false,
            ),
            Self::MissRoute => (
                Consumer,
                &[Size::StaleRoutes],
                First,
                Rebalance,
                Scheduled("its next route poll fails"),
                "its next route poll will fail (name server unreachable)",
                false,
            ),
            Self::Kill => (
                Consumer,
                &[Size::Kills],
                First,
                Rebalance,
                Now,
                "process killed (host alive: connections close)",
                false,
            ),
            Self::Pause => (
                Consumer,
                &[Size::Expiries],
                First,
                Rebalance,
                Now,
                "pauses over 120 s while alive (GC or network blip)",
                false,
            ),
            Self::Restart => (
                Broker,
                &[Size::BrokerRestarts],
                First,
                Rebalance,
                Now,
                "restarts (member table lost)",
                false,
            ),
            Self::Resubscribe => (
                Consumer,
                &[Size::SubscriptionChanges],
                First,
                Rebalance,
                Now,
                "changes its subscription",
                false,
            ),
            Self::LosePersist => (
                Consumer,
                &[Size::LostPersists],
                First,
                Messages,
                Scheduled("its next offset persist is lost"),
                "its next offset persist will be lost",
                false,
            ),
            Self::FailOffsetRead => (
                Consumer,
                &[Size::FailedOffsetReads],
                First,
                Messages,
                Scheduled("its next offset read fails"),
                "its next offset read will fail",
                false,
            ),
            Self::Evict => (
                Broker,
                &[Size::Evictions],
                First,
                Messages,
                Now,
                "loses its queues' first messages from memory",
                false,
            ),
            Self::LoseUnlock => (
                Consumer,
                &[Size::LostUnlocks],
                First,
                Orderly,
                Scheduled("its next UNLOCK_BATCH_MQ is lost"),
                "its next UNLOCK_BATCH_MQ will be lost",
                false,
            ),
            Self::FailLocks => (
                Consumer,
                &[Size::FailedLocks],
                First,
                Orderly,
                Scheduled("every lock call times out"),
                "loses its connection for lock calls: every lock call times out from now on",
                false,
            ),
            Self::DiskLoss => (
                Broker,
                &[Size::DiskLosses],
                First,
                Messages,
                Now,
                "restarts on a replaced disk: its tables in memory and its offsets lost, its commit log restored",
                false,
            ),
            Self::ClockStep => (
                Broker,
                &[Size::BrokerClockSteps],
                First,
                Orderly,
                Now,
                "has its wall clock stepped forward a lease or more: every lock it holds lapses",
                false,
            ),
            Self::FailConsume => (
                Consumer,
                &[Size::ConsumeFailures],
                First,
                Messages,
                Scheduled("its next batch fails"),
                "its next batch will fail (RECONSUME_LATER; orderly SUSPEND_CURRENT_QUEUE_A_MOMENT)",
                false,
            ),
            Self::StallPulls => (
                Consumer,
                &[Size::PullStalls],
                First,
                Messages,
                Scheduled("its pulls have stalled over 120 s"),
                "its pulls stall over 120 s: at its next rebalance they have expired",
                false,
            ),
            Self::Failover => (
                Broker,
                &[Size::Failovers],
                First,
                Rebalance,
                Now,
                "fails over: its slave serves, with no lock table and the offsets of its last sync",
                false,
            ),
            Self::LoseAck => (
                Consumer,
                &[Size::LostAcks],
                First,
                Pop,
                Scheduled("its next ACK_MESSAGE is lost"),
                "its next ACK_MESSAGE will be lost",
                false,
            ),
            Self::SlowBatch => (
                Consumer,
                &[Size::SlowBatches],
                First,
                Pop,
                Now,
                "its running batches outlast their invisible time",
                false,
            ),
            Self::LosePopAnswer => (
                Consumer,
                &[Size::LostPopAnswers],
                First,
                Pop,
                Scheduled("its next answer to a POP_MESSAGE is lost"),
                "its next answer to a POP_MESSAGE with messages will be lost",
                false,
            ),
            Self::BrokerCrash => (
                Broker,
                &[Size::BrokerCrashes],
                First,
                Fifo,
                Now,
                "crashes and starts again (member table and the order info of its queues' last pops lost)",
                false,
            ),
        };
        FaultSpec {
            target,
            budgets,
            pick,
            layer,
            effect,
            words,
            periodic,
        }
    }

    /// Whom it happens to.
    pub const fn target(self) -> Target {
        self.spec().target
    }

    /// The total of its budgets in `sizes`.
    pub fn budget(self, sizes: &Sizes) -> usize {
        self.spec()
            .budgets
            .iter()
            .map(|&size| sizes.count(size).unwrap_or(0))
            .sum()
    }
}

/// Whether actor `actor` of `actors` of the fault's kind may have `fault`
/// in a run of `scenario` with `sizes` and `protocol`: its layer is
/// modelled and its budget picks the actor.
pub fn picks(
    fault: Fault,
    scenario: Scenario,
    sizes: &Sizes,
    protocol: &ProtocolOptions,
    actor: usize,
    actors: usize,
) -> bool {
    let spec = fault.spec();
    let layer = spec.layer.modelled_with(sizes, protocol);
    let budget = fault.budget(sizes);
    // A rolling upgrade stops the old consumers, the first ones; the new
    // ones are the joiners, the last ones.
    let pick = match (fault, scenario) {
        (Fault::Shutdown, Scenario::RollingUpgrade | Scenario::StrategyRollout) => Pick::First,
        _ => spec.pick,
    };
    layer
        && match pick {
            Pick::First => actor < budget,
            Pick::Last => actor >= actors.saturating_sub(budget),
            Pick::Script => true,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Dense;

    #[test]
    fn every_fault_round_trips_its_index() {
        let all: Vec<Fault> = Fault::all().collect();
        assert_eq!(all.len(), Fault::COUNT as usize);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        for (i, f) in all.iter().enumerate() {
            assert_eq!(f.index(), i as u32);
            assert_eq!(Fault::from_index(i as u32), Some(*f));
        }
        assert_eq!(Fault::from_index(Fault::COUNT), None);
    }

    #[test]
    fn every_fault_has_a_budget_a_size_names() {
        for fault in Fault::all() {
            let spec = fault.spec();
            assert!(!spec.budgets.is_empty(), "{fault:?}");
            for &size in spec.budgets {
                assert!(Sizes::DEFAULT.count(size).is_some(), "{fault:?}: {size}");
            }
            assert!(!spec.words.is_empty(), "{fault:?}");
            if let Effect::Scheduled(words) = spec.effect {
                assert_eq!(spec.target, Target::Consumer, "{fault:?}: {words}");
            }
        }
    }
}
