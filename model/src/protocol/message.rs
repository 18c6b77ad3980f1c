//! The vocabulary between actors: messages, timers, and the addresses and
//! outputs the sans-IO state machines use instead of doing IO.

pub use crate::config::Fault;
use crate::config::{ConsumerSet, Route, MAX_BROKERS, MAX_MESSAGE_QUEUES};

/// Who a message goes to or comes from, in domain terms.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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

/// An offset field that holds no offset: the broker has none stored.
pub const NO_OFFSET: u8 = 0xF;

/// A message on the wire. Payloads are reduced to what changes a decision.
///
/// Messages from a consumer to a broker carry the epoch of the connection
/// they travel on: a consumer opens a new connection (the next epoch) to a
/// broker after the old one closed, and a broker ignores what arrives on a
/// connection it knows is closed, as nothing arrives on a closed socket.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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
        /// Members it lists twice (a second channel of theirs is open).
        twice: ConsumerSet,
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
    /// The answer to `QUERY_ASSIGNMENT`: the broker's allocation for the
    /// consumer (`QueryAssignmentProcessor.doLoadBalance`). It carries what
    /// the broker allocated from, its member list and its cached route: the
    /// allocation is the same pure function of them, computed where it is
    /// received.
    BrokerAllocation {
        /// Topic index being rebalanced.
        topic: u8,
        /// The broker's member list.
        members: ConsumerSet,
        /// Members it lists twice.
        twice: ConsumerSet,
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
    /// The heartbeat on a second channel the client opened to the broker
    /// with its new connection (the real 5.3.3 clients do, now and then,
    /// after a reconnect): the broker's member table has one entry a
    /// channel, so it lists the client twice. Nothing else is sent on that
    /// channel.
    SecondChannel {
        /// The connection epoch it was opened with.
        epoch: u8,
    },
    /// Not a RocketMQ message: the broker's scan finds the second channel
    /// silent and removes it, notifying nobody, as it does any silent
    /// channel ([`Message::SilenceExpired`]). The broker sends it to
    /// itself when it registers the second channel, so it cannot overtake
    /// that registration, and the consumer's calls to the broker go on
    /// meanwhile (on its flow to the broker it would hold them until the
    /// expiry: a client could never see itself listed twice).
    SecondChannelExpired {
        /// The consumer whose channel it is.
        consumer: u8,
        /// The connection epoch it was opened with.
        epoch: u8,
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
    /// rebalance would see a change made without notification (an expiry),
    /// sent to a later rebalance as [`Message::LaterPoll`] is to a later
    /// poll. The periodic rebalance itself is abstracted; see `docs/spec.md`.
    LaterRebalance,
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
    /// `PULL_MESSAGE` (with pull requests): the next messages of a queue
    /// from `offset`, carrying the consumer's offset of it in memory for
    /// the broker to commit (the commit-offset flag,
    /// `PullMessageProcessor`'s `tryCommitOffset`).
    PullMessage {
        /// Queue index.
        queue: u8,
        /// The first offset asked for.
        offset: u8,
        /// The offset to commit, [`NO_OFFSET`] when the flag is off (none
        /// above 0 in memory).
        commit: u8,
        /// The asking process queue's generation.
        generation: bool,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer: messages `[from, to)`, for the process queue that asked.
    PullResult {
        /// Queue index.
        queue: u8,
        /// First offset.
        from: u8,
        /// One past the last offset.
        to: u8,
        /// The asking process queue's generation.
        generation: bool,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// `CONSUMER_SEND_MSG_BACK`, a synchronous call: a batch whose listener
    /// returned `RECONSUME_LATER` goes back to the queue's broker, which
    /// appends it to the group's retry topic
    /// (`ConsumeMessageConcurrentlyService.sendMessageBack`,
    /// `SendMessageProcessor.consumerSendMsgBack`).
    SendMessageBack {
        /// Queue index.
        queue: u8,
        /// First offset of the batch.
        from: u8,
        /// One past its last offset.
        to: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// The answer: the batch is stored in the retry topic.
    SentBack {
        /// Queue index.
        queue: u8,
        /// Epoch of the connection the call came on.
        epoch: u8,
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
    /// Not a RocketMQ message: the consumer's request could not open a
    /// connection, the broker being stopped (connection refused); the call
    /// fails at once and the next request tries again.
    Refused {
        /// The epoch of the connection it tried to open.
        epoch: u8,
    },
    /// Not a RocketMQ message: a broker's presence at the name servers.
    /// Stopped, its channel to each closes and each drops it from its
    /// routes at once (`BrokerHousekeepingService.onChannelClose`); started,
    /// it registers with each (`REGISTER_BROKER`).
    BrokerPresence {
        /// Started (registers) or stopped (its channel closed).
        alive: bool,
    },
    /// `POP_MESSAGE`, consumer to broker (POP): the next messages of the
    /// queue, or one revived into the group's retry topic, each invisible
    /// to the others until acknowledged or until its invisible time
    /// passes. RocketMQ's queue id -1 lets the broker start at a random
    /// queue: here the consumer's pop of one queue is that start.
    PopMessage {
        /// Queue index.
        queue: u8,
        /// The asking process queue's generation.
        generation: bool,
        /// Connection epoch.
        epoch: u8,
        /// A FIFO group's retry of a pop whose answer was lost, with its
        /// attempt id: the handle that pop was answered with.
        reenters: Option<u8>,
    },
    /// The answer to `POP_MESSAGE`: messages `[from, to)` of the queue
    /// under one handle (none when equal).
    PopResult {
        /// Queue index.
        queue: u8,
        /// First offset.
        from: u8,
        /// One past the last offset.
        to: u8,
        /// The handle: which pop of these messages it is (modulo 4).
        attempt: u8,
        /// The asking process queue's generation.
        generation: bool,
        /// Epoch of the connection the question came on.
        epoch: u8,
    },
    /// `ACK_MESSAGE`, consumer to broker, one-way (`ackMessageAsync`): the
    /// messages of a handle are consumed.
    AckMessage {
        /// Queue index.
        queue: u8,
        /// First offset.
        from: u8,
        /// One past the last offset.
        to: u8,
        /// The handle's attempt.
        attempt: u8,
        /// Connection epoch.
        epoch: u8,
    },
    /// Not a RocketMQ message: marks the moment a handle's invisible time
    /// passes at its broker with no acknowledgement that can still come
    /// (its consumer died, its ack was lost, its batch failed or is too
    /// slow), when `PopReviveService` puts its messages into the group's
    /// retry topic. The consumer sends it once it has the answer to the
    /// pop, so the broker holds the handle; no ack of that handle will
    /// come. It is the broker's time, not a message of a connection
    /// ([`Message::rides_connection`]): it arrives whatever became of the
    /// consumer's, and nothing the consumer sends that broker waits behind
    /// it.
    InvisibleTimeExpired {
        /// Queue index.
        queue: u8,
        /// First offset.
        from: u8,
        /// One past the last offset.
        to: u8,
        /// The handle's attempt.
        attempt: u8,
        /// The moment has passed already (a batch ran past it), rather
        /// than being one the broker will reach: nothing waits for it.
        passed: bool,
    },
}

impl Message {
    /// Whether it travels on its sender's connection to its receiver, in
    /// the order sent. The marker of a handle's expiry does not: it is the
    /// broker's clock, so the consumer's later pops and acknowledgements
    /// to that broker may arrive before it, and it before them.
    pub fn rides_connection(&self) -> bool {
        !matches!(self, Message::InvisibleTimeExpired { .. })
    }
}

dense_enum! {
    /// A timer of the protocol. Timers carry no duration: the checker fires
    /// any armed timer at any moment, and every timer is fair (see
    /// `check::liveness`). Only orderly consumption has a clock (the shell's
    /// tick action); its timed steps ([`Timer::LockAll`], a batch's end)
    /// check the clock themselves. What the environment does is a
    /// [`Fault`], not a timer.
    pub enum Timer {
        /// The rebalance service's turn (`RebalanceService`), asking this
        /// broker: one timer per candidate broker makes RocketMQ's random
        /// pick a nondeterministic choice.
        Rebalance {
            /// Broker index to ask.
            broker: u8 < MAX_BROKERS
        },
        /// The rebalance service's periodic wake-up (every 20 s in
        /// RocketMQ). Armed only when
        /// [`Config::periodic_rebalance`](crate::config::Config) is set (the
        /// liveness check): it makes every topic due again, so a group whose
        /// brokers disagree can rebalance for ever.
        PeriodicRebalance,
        /// A consumer opens a connection to a broker its route lists and has
        /// no open connection to: its next request there, its rebalance's,
        /// connects.
        Connect {
            /// Broker index.
            broker: u8 < MAX_BROKERS
        },
        /// The new connection is active (`onChannelActive`): the client's
        /// event thread heartbeats there, then rebalances at once. Another
        /// thread than the request that opened the connection, so that
        /// request may reach the broker first.
        ChannelActive {
            /// Broker index.
            broker: u8 < MAX_BROKERS
        },
        /// The partition ([`Fault::Partition`]) heals and the broker
        /// registers again. Partitions are taken to end, so this is a
        /// protocol timer under fairness.
        Heal,
        /// A stopped broker ([`Fault::Restart`]) starts again on the same
        /// address, once its downtime has passed. Operators start what they
        /// stop, so this is a protocol timer under fairness.
        Start,
        /// The consumer's periodic heartbeat to every broker (every 30 s).
        /// Armed only when the subscription table is modelled.
        Heartbeat,
        /// With messages: the consumer pulls the next batch of this queue and
        /// its application starts consuming it.
        Pull {
            /// Queue index.
            queue: u8 < MAX_MESSAGE_QUEUES
        },
        /// With messages: the application finishes the running batch of this
        /// queue.
        Done {
            /// Queue index.
            queue: u8 < MAX_MESSAGE_QUEUES
        },
        /// With messages: the periodic persist of every offset (every 5 s).
        Persist,
        /// Orderly consumption: the periodic renewal of every lock
        /// (`ConsumeMessageOrderlyService.lockMQPeriodically`); it fires when
        /// the consumer's clock says it is due, and must before time passes.
        LockAll,
        /// With messages, a broker that may fail over
        /// ([`Fault::Failover`]): its slave copies the offset table
        /// (`SlaveSynchronize.syncConsumerOffset`, every 10 s).
        SyncOffsets,
        /// A FIFO group of gRPC clients whose proxy has no config of the
        /// group cached ([`BrokerState::proxy_lost_group`](crate::protocol::BrokerState)):
        /// the proxy's periodic reload of it (`ClusterMetadataService`,
        /// every 20 s), through this broker, the only one its route of the
        /// cluster lists. It waits for the broker to listen. The proxy
        /// reloads for ever, so this is a protocol timer under fairness.
        ReloadGroupConfig,
    }
}

impl Timer {
    /// The broker this timer's step connects to: a consumer's `Connect`
    /// opens a connection there and its rebalance asks it, which a stopped
    /// broker refuses, so the step waits for the broker to listen.
    pub fn connects_to(&self) -> Option<u8> {
        match *self {
            Timer::Connect { broker } | Timer::Rebalance { broker } => Some(broker),
            _ => None,
        }
    }
}

/// What a state machine asks its shell to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Send a message.
    Send(Peer, Message),
    /// Send a wake-up (`NOTIFY_CONSUMER_IDS_CHANGED`, or the marker of a
    /// periodic rebalance that will see a change). Wake-ups merge: with the subscription
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
    /// Arm a fault: the environment may now make it happen, once.
    ArmFault(Fault),
    /// Disarm every timer and fault of the actor (it stopped).
    DisarmAll,
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
