//! The vocabulary between actors: messages, timers, and the addresses and
//! outputs the sans-IO state machines use instead of doing IO.

use crate::config::{ConsumerSet, Route, MAX_BROKERS, MAX_MESSAGE_QUEUES};

/// Who a message goes to or comes from, in domain terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Peer {
    /// The name servers (`NamesrvController`), as one actor: operators'
    /// route changes reach them all, and each has its own view of which
    /// brokers are alive.
    NameServer,
    /// A broker, by index.
    Broker(u8),
    /// A consumer, by index.
    Consumer(u8),
}

impl Peer {
    /// The peer in 16 bits, distinct for distinct peers: its kind above its
    /// index.
    pub fn packed(self) -> u16 {
        match self {
            Peer::NameServer => 0,
            Peer::Broker(b) => 1 << 8 | u16::from(b),
            Peer::Consumer(c) => 2 << 8 | u16::from(c),
        }
    }
}

/// An offset field that holds no offset: the broker has none stored.
pub const NO_OFFSET: u8 = 0xF;

/// A message on the wire. Payloads are reduced to what changes a decision.
///
/// Messages from a consumer to a broker carry the epoch of the connection
/// they travel on: a consumer opens a new connection (the next epoch) to a
/// broker after the old one closed, and a broker ignores what arrives on a
/// connection it knows is closed, as nothing arrives on a closed socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Message {
    /// `HEART_BEAT`, consumer to broker: registers the consumer and its
    /// subscription (`ClientManageProcessor.heartBeat`).
    Heartbeat {
        /// Connection epoch.
        epoch: u8,
        /// The topics it subscribes to, as a bit set.
        topics: u8,
    },
    /// `UNREGISTER_CLIENT`, consumer to broker, on graceful shutdown.
    Unregister {
        /// Connection epoch.
        epoch: u8,
    },
    /// `NOTIFY_CONSUMER_IDS_CHANGED`, broker to every member, one-way.
    NotifyConsumerIdsChanged,
    /// `GET_CONSUMER_LIST_BY_GROUP` for the rebalance of one topic.
    GetConsumerList {
        /// Topic index being rebalanced.
        topic: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer: the broker's member list of the group.
    ConsumerList {
        /// Topic index being rebalanced.
        topic: u8,
        /// Members (by consumer index, so equal client ids stay distinct).
        members: ConsumerSet,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// `QUERY_ASSIGNMENT` (server-side assignment): the broker allocates
    /// the topic for the asking consumer.
    QueryAssignment {
        /// Topic index being rebalanced.
        topic: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer: what the broker allocated to the consumer
    /// (`QueryAssignmentProcessor.doLoadBalance`). It carries what the broker
    /// allocated from, its member list and its cached route: the allocation
    /// is the same pure function of them, computed where it is received.
    Assignment {
        /// Topic index being rebalanced.
        topic: u8,
        /// The broker's member list.
        members: ConsumerSet,
        /// The broker's cached route.
        route: Route,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// What the consumer's next route poll (`updateTopicRouteInfoFromNameServer`)
    /// returns after a route change. Polls that return an unchanged route
    /// change nothing, so only changes are sent.
    RouteData {
        /// The route its name server now serves.
        route: Route,
    },
    /// Not a RocketMQ message: marks the moment the broker's scan
    /// (`ConsumerManager.scanNotActiveChannel`) finds a consumer silent for
    /// 120 s on a connection (it crashed, or stopped talking to the broker).
    /// It travels on that connection so it cannot overtake the consumer's
    /// last heartbeat.
    SilenceExpired {
        /// The silent connection's epoch.
        epoch: u8,
        /// The consumer is alive (a pause or a network blip, not a dead
        /// host): it will see the channel the broker closes.
        alive: bool,
    },
    /// Not a RocketMQ message: the TCP connection of a consumer whose process
    /// died closes (the kernel closes its sockets), which the broker sees at
    /// once (`channelInactive`, `ConsumerManager.doChannelCloseEvent`).
    ChannelClosed {
        /// The closed connection's epoch.
        epoch: u8,
    },
    /// Not a RocketMQ message: the broker closed this connection (its scan
    /// expired the consumer, or the broker restarted); the client sees the
    /// channel close and opens a new one at its next request.
    ConnectionClosed {
        /// The closed connection's epoch.
        epoch: u8,
    },
    /// Not a RocketMQ message: marks the moment a member's periodic
    /// rebalance tick would see a change made without notification (an
    /// expiry). The tick itself is abstracted; see `docs/spec.md`.
    PeriodicTick,
    /// `QUERY_CONSUMER_OFFSET`: the committed offset of a newly allocated
    /// queue (`RemoteBrokerOffsetStore.readOffset`).
    QueryOffset {
        /// Queue index.
        queue: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer (`ConsumerManageProcessor.queryConsumerOffset`): the
    /// stored offset, if any, and whether the queue's first message is
    /// still in memory (then a missing offset is answered with 0).
    Offset {
        /// Queue index.
        queue: u8,
        /// The stored offset, [`NO_OFFSET`] when there is none.
        stored: u8,
        /// The queue's first message is in memory
        /// (`checkInMemByConsumeOffset`).
        in_memory: bool,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// `UPDATE_CONSUMER_OFFSET`, one-way: the periodic persist
    /// (`persistAllConsumerOffset`, every 5 s) or the persist on drop.
    UpdateOffset {
        /// Queue index.
        queue: u8,
        /// The offset.
        offset: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// A synchronous commit of a batch's offset (`--commit sync`).
    CommitOffset {
        /// Queue index.
        queue: u8,
        /// The offset.
        offset: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The broker's acknowledgement of a synchronous commit.
    CommitAck {
        /// Queue index.
        queue: u8,
    },
    /// `LOCK_BATCH_MQ`, orderly consumption: lock these queues for the
    /// sender's client id (`RebalanceImpl.lock` for a new queue, `lockAll`
    /// to renew). A synchronous call with a 1 s timeout.
    LockBatch {
        /// The queues, as a bit set of queue indices.
        queues: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer (`RebalanceLockManager.tryLockBatch`): the queues now
    /// locked for the asker.
    Locked {
        /// The queues asked for.
        asked: u8,
        /// Those locked for the asker.
        granted: u8,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// `UNLOCK_BATCH_MQ`, one-way: a dropped queue's lock is released
    /// (`RebalancePushImpl.tryRemoveOrderMessageQueue`).
    UnlockBatch {
        /// The queues, as a bit set of queue indices.
        queues: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// Not a RocketMQ message: a consumer that missed a route update (its
    /// name server unreachable for that poll) sees it at a later poll, which
    /// this marks; sent to itself.
    LaterPoll {
        /// The route the later poll returns.
        route: Route,
    },
}

/// A timer. Timers carry no duration: the checker fires any armed timer at
/// any moment. Only orderly consumption has a clock (the shell's tick
/// action); its timed steps
/// ([`Timer::LockAll`], a batch's end) check the clock themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Timer {
    /// Environment: the consumer starts (`DefaultMQPushConsumerImpl.start`).
    Join,
    /// Environment: the consumer shuts down gracefully.
    Shutdown,
    /// Environment: the consumer's process dies.
    Crash,
    /// The rebalance service's turn (`RebalanceService`), asking this broker:
    /// one timer per candidate broker makes RocketMQ's random pick a
    /// nondeterministic choice.
    Rebalance {
        /// Broker index to ask.
        broker: u8,
    },
    /// Environment: the operator changes the route (adds a queue).
    RouteChange,
    /// Environment: this consumer's next `NOTIFY_CONSUMER_IDS_CHANGED` will
    /// be lost on the way (one-way messages may be).
    LoseNotification,
    /// Environment: this consumer's next `GET_CONSUMER_LIST_BY_GROUP` will
    /// fail (its broker unreachable for that call).
    FailQuery,
    /// The rebalance service's periodic wake-up (every 20 s in RocketMQ).
    /// Armed only when [`Config::periodic_ticks`](crate::config::Config) is
    /// set (the liveness check): it makes every topic due again, so a group
    /// whose brokers disagree can rebalance for ever.
    Tick,
    /// A consumer opens a connection to a broker its route lists and has no
    /// open connection to: its next request there connects and heartbeats
    /// at once (`onChannelActive`), then rebalances.
    Connect {
        /// Broker index.
        broker: u8,
    },
    /// Environment: the partition between the last broker and the last name
    /// server begins; that name server's scan drops the broker.
    Partition,
    /// The partition heals and the broker registers again. Partitions are
    /// taken to end, so this is a protocol timer under fairness.
    Heal,
    /// Environment: this consumer's next route poll fails (its name server
    /// unreachable), so it keeps its cached route until a later one.
    MissRoute,
    /// Environment: this consumer's process dies on a live host: its
    /// connections close and every broker notices at once.
    Kill,
    /// Environment: this live consumer pauses (a long GC) or is cut off (a
    /// network blip) for over 120 s: every broker expires it while it keeps
    /// its queues.
    Pause,
    /// Environment: this broker restarts and loses its member table.
    Restart,
    /// The consumer's periodic heartbeat to every broker (every 30 s).
    /// Armed only when the subscription table is modelled.
    Heartbeat,
    /// Environment: this consumer subscribes to the last topic, or
    /// unsubscribes from it, at runtime.
    Resubscribe,
    /// With messages: the consumer pulls the next batch of this queue and
    /// its application starts consuming it.
    Pull {
        /// Queue index.
        queue: u8,
    },
    /// With messages: the application finishes the running batch of this
    /// queue.
    Done {
        /// Queue index.
        queue: u8,
    },
    /// With messages: the periodic persist of every offset (every 5 s).
    Persist,
    /// Environment: this consumer's next offset persist is lost.
    LosePersist,
    /// Environment: this consumer's next offset read fails.
    FailOffsetRead,
    /// Environment: this broker's queues' first messages leave memory.
    Evict,
    /// Orderly consumption: the periodic renewal of every lock
    /// (`ConsumeMessageOrderlyService.lockMQPeriodically`); it fires when
    /// the consumer's clock says it is due, and must before time passes.
    LockAll,
    /// Environment: this consumer's next unlock is lost.
    LoseUnlock,
    /// Environment: this consumer loses its connection for lock calls:
    /// every lock call times out from now on.
    FailLocks,
}

impl Message {
    /// The message in 72 bits, distinct for distinct messages, for the
    /// state's fingerprint: the variant in the low byte, then up to four
    /// fields of 16 bits each (no field is wider).
    pub fn packed(&self) -> u128 {
        use Message::*;
        let (variant, fields): (u8, [u16; 4]) = match *self {
            Heartbeat { epoch, topics } => (0, [epoch.into(), topics.into(), 0, 0]),
            Unregister { epoch } => (1, [epoch.into(), 0, 0, 0]),
            NotifyConsumerIdsChanged => (2, [0; 4]),
            GetConsumerList { topic, epoch } => (3, [topic.into(), epoch.into(), 0, 0]),
            ConsumerList {
                topic,
                members,
                epoch,
            } => (4, [topic.into(), members, epoch.into(), 0]),
            QueryAssignment { topic, epoch } => (5, [topic.into(), epoch.into(), 0, 0]),
            Assignment {
                topic,
                members,
                route,
                epoch,
            } => (6, [topic.into(), members, route.packed(), epoch.into()]),
            RouteData { route } => (7, [route.packed(), 0, 0, 0]),
            SilenceExpired { epoch, alive } => (8, [epoch.into(), alive.into(), 0, 0]),
            ChannelClosed { epoch } => (9, [epoch.into(), 0, 0, 0]),
            ConnectionClosed { epoch } => (10, [epoch.into(), 0, 0, 0]),
            PeriodicTick => (11, [0; 4]),
            QueryOffset { queue, epoch } => (12, [queue.into(), epoch.into(), 0, 0]),
            Offset {
                queue,
                stored,
                in_memory,
                epoch,
            } => (
                13,
                [queue.into(), stored.into(), in_memory.into(), epoch.into()],
            ),
            UpdateOffset {
                queue,
                offset,
                epoch,
            } => (14, [queue.into(), offset.into(), epoch.into(), 0]),
            CommitOffset {
                queue,
                offset,
                epoch,
            } => (15, [queue.into(), offset.into(), epoch.into(), 0]),
            CommitAck { queue } => (16, [queue.into(), 0, 0, 0]),
            LockBatch { queues, epoch } => (17, [queues.into(), epoch.into(), 0, 0]),
            Locked {
                asked,
                granted,
                epoch,
            } => (18, [asked.into(), granted.into(), epoch.into(), 0]),
            UnlockBatch { queues, epoch } => (19, [queues.into(), epoch.into(), 0, 0]),
            LaterPoll { route } => (20, [route.packed(), 0, 0, 0]),
        };
        fields
            .iter()
            .rev()
            .fold(0, |word, &field| word << 16 | u128::from(field))
            << 8
            | u128::from(variant)
    }
}

impl Timer {
    /// How many distinct timers there are: [`Timer::index`] is below it.
    pub const COUNT: u32 = 22 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32;

    /// A dense index that keeps the order of the variants, so that a set of
    /// timers can be one word and iterate in `Ord` order.
    pub fn index(self) -> u32 {
        match self {
            Self::Join => 0,
            Self::Shutdown => 1,
            Self::Crash => 2,
            Self::Rebalance { broker } => 3 + u32::from(broker),
            Self::RouteChange => 3 + MAX_BROKERS as u32,
            Self::LoseNotification => 4 + MAX_BROKERS as u32,
            Self::FailQuery => 5 + MAX_BROKERS as u32,
            Self::Tick => 6 + MAX_BROKERS as u32,
            Self::Connect { broker } => 7 + MAX_BROKERS as u32 + u32::from(broker),
            Self::Partition => 7 + 2 * MAX_BROKERS as u32,
            Self::Heal => 8 + 2 * MAX_BROKERS as u32,
            Self::MissRoute => 9 + 2 * MAX_BROKERS as u32,
            Self::Kill => 10 + 2 * MAX_BROKERS as u32,
            Self::Pause => 11 + 2 * MAX_BROKERS as u32,
            Self::Restart => 12 + 2 * MAX_BROKERS as u32,
            Self::Heartbeat => 13 + 2 * MAX_BROKERS as u32,
            Self::Resubscribe => 14 + 2 * MAX_BROKERS as u32,
            Self::Pull { queue } => 15 + 2 * MAX_BROKERS as u32 + u32::from(queue),
            Self::Done { queue } => {
                15 + 2 * MAX_BROKERS as u32 + MAX_MESSAGE_QUEUES as u32 + u32::from(queue)
            }
            Self::Persist => 15 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::LosePersist => 16 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::FailOffsetRead => 17 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::Evict => 18 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::LockAll => 19 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::LoseUnlock => 20 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
            Self::FailLocks => 21 + 2 * MAX_BROKERS as u32 + 2 * MAX_MESSAGE_QUEUES as u32,
        }
    }

    /// The timer of an [`index`](Timer::index), if any.
    pub fn from_index(index: u32) -> Option<Self> {
        const BROKERS: u32 = MAX_BROKERS as u32;
        const QUEUES: u32 = MAX_MESSAGE_QUEUES as u32;
        Some(match index {
            0 => Self::Join,
            1 => Self::Shutdown,
            2 => Self::Crash,
            i if (3..3 + BROKERS).contains(&i) => Self::Rebalance {
                broker: (i - 3) as u8,
            },
            i if i == 3 + BROKERS => Self::RouteChange,
            i if i == 4 + BROKERS => Self::LoseNotification,
            i if i == 5 + BROKERS => Self::FailQuery,
            i if i == 6 + BROKERS => Self::Tick,
            i if (7 + BROKERS..7 + 2 * BROKERS).contains(&i) => Self::Connect {
                broker: (i - 7 - BROKERS) as u8,
            },
            i if i == 7 + 2 * BROKERS => Self::Partition,
            i if i == 8 + 2 * BROKERS => Self::Heal,
            i if i == 9 + 2 * BROKERS => Self::MissRoute,
            i if i == 10 + 2 * BROKERS => Self::Kill,
            i if i == 11 + 2 * BROKERS => Self::Pause,
            i if i == 12 + 2 * BROKERS => Self::Restart,
            i if i == 13 + 2 * BROKERS => Self::Heartbeat,
            i if i == 14 + 2 * BROKERS => Self::Resubscribe,
            i if (15 + 2 * BROKERS..15 + 2 * BROKERS + QUEUES).contains(&i) => Self::Pull {
                queue: (i - 15 - 2 * BROKERS) as u8,
            },
            i if (15 + 2 * BROKERS + QUEUES..15 + 2 * BROKERS + 2 * QUEUES).contains(&i) => {
                Self::Done {
                    queue: (i - 15 - 2 * BROKERS - QUEUES) as u8,
                }
            }
            i if i == 15 + 2 * BROKERS + 2 * QUEUES => Self::Persist,
            i if i == 16 + 2 * BROKERS + 2 * QUEUES => Self::LosePersist,
            i if i == 17 + 2 * BROKERS + 2 * QUEUES => Self::FailOffsetRead,
            i if i == 18 + 2 * BROKERS + 2 * QUEUES => Self::Evict,
            i if i == 19 + 2 * BROKERS + 2 * QUEUES => Self::LockAll,
            i if i == 20 + 2 * BROKERS + 2 * QUEUES => Self::LoseUnlock,
            i if i == 21 + 2 * BROKERS + 2 * QUEUES => Self::FailLocks,
            _ => return None,
        })
    }
}

/// What a state machine asks its shell to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Send a message.
    Send(Peer, Message),
    /// Send a wake-up (`NOTIFY_CONSUMER_IDS_CHANGED`, or the marker of a
    /// tick that will see a change). Wake-ups merge: with the subscription
    /// table modelled, whose flips notify without end, none is sent when an
    /// identical one is already on its way to the same consumer (the
    /// broker's notify task replaces the pending one,
    /// `DefaultConsumerIdsChangeListener`).
    SendWakeUp(Peer, Message),
    /// Send a message the protocol repeats periodically for ever (a
    /// heartbeat). Repeating what changes nothing is no behaviour, so the
    /// shell sends it only when its delivery now would change something and
    /// no copy is already on its way (see `docs/spec.md`).
    SendPeriodic(Peer, Message),
    /// Arm a timer.
    Arm(Timer),
    /// Disarm a timer.
    Disarm(Timer),
    /// Not a command: the application code was handed messages `[from, to)`
    /// of `queue` (ghost state, for the properties only).
    Delivered {
        /// Queue index.
        queue: u8,
        /// First offset.
        from: u8,
        /// One past the last offset.
        to: u8,
    },
}

/// The result of one input to a state machine: `None` when the input
/// changes nothing and sends nothing, so the checker prunes it.
pub type Step<S> = Option<(S, Vec<Output>)>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, with fields drawn from a few values each.
    fn samples() -> Vec<Message> {
        use Message::*;
        let mut all = Vec::new();
        for x in [0u8, 1, 15, 255] {
            for y in [0u8, 2, 255] {
                let members = u16::from(x) << 8 | u16::from(y);
                let route = Route {
                    version: y,
                    dropped: x,
                };
                let flag = x % 2 == 1;
                all.extend([
                    Heartbeat {
                        epoch: x,
                        topics: y,
                    },
                    Unregister { epoch: x },
                    NotifyConsumerIdsChanged,
                    GetConsumerList { topic: x, epoch: y },
                    ConsumerList {
                        topic: y,
                        members,
                        epoch: x,
                    },
                    QueryAssignment { topic: x, epoch: y },
                    Assignment {
                        topic: x,
                        members,
                        route,
                        epoch: y,
                    },
                    RouteData { route },
                    SilenceExpired {
                        epoch: y,
                        alive: flag,
                    },
                    ChannelClosed { epoch: y },
                    ConnectionClosed { epoch: x },
                    PeriodicTick,
                    QueryOffset { queue: x, epoch: y },
                    Offset {
                        queue: y,
                        stored: x,
                        in_memory: flag,
                        epoch: y,
                    },
                    UpdateOffset {
                        queue: x,
                        offset: y,
                        epoch: x,
                    },
                    CommitOffset {
                        queue: y,
                        offset: x,
                        epoch: y,
                    },
                    CommitAck { queue: x },
                    LockBatch {
                        queues: x,
                        epoch: y,
                    },
                    Locked {
                        asked: x,
                        granted: y,
                        epoch: x,
                    },
                    UnlockBatch {
                        queues: y,
                        epoch: x,
                    },
                    LaterPoll { route },
                ]);
            }
        }
        all
    }

    #[test]
    fn distinct_messages_pack_distinctly() {
        let all = samples();
        for a in &all {
            for b in &all {
                assert_eq!(a.packed() == b.packed(), a == b, "{a:?} {b:?}");
            }
            assert!(a.packed() < 1 << 72, "{a:?}");
        }
    }

    #[test]
    fn distinct_peers_pack_distinctly() {
        let peers: Vec<Peer> = std::iter::once(Peer::NameServer)
            .chain((0..=255).map(Peer::Broker))
            .chain((0..=255).map(Peer::Consumer))
            .collect();
        let packed: std::collections::BTreeSet<u16> = peers.iter().map(|p| p.packed()).collect();
        assert_eq!(packed.len(), peers.len());
    }
}
