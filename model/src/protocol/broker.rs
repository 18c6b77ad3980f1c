//! A broker's view of the consumer group (`ConsumerManager`,
//! `ConsumerGroupInfo`, `DefaultConsumerIdsChangeListener`). Brokers share
//! nothing: each learns members from the heartbeats it receives.

use crate::config::{members_of, Config, ConsumerSet, Route, MAX_MESSAGES};
use crate::config::{Dense, Fault, Target, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, Timer, NO_OFFSET};
use crate::protocol::ConsumerState;

/// `offsets` with queue `queue`'s offset set to `offset`.
fn with_offset(offsets: u32, queue: usize, offset: u8) -> u32 {
    let shift = 4 * queue as u32;
    offsets & !(0xF << shift) | u32::from(offset & 0xF) << shift
}

/// A broker's lock table (`RebalanceLockManager.mqLockTable`), orderly
/// consumption only: per queue index, the client id that holds the lock and
/// the ticks since it last locked or renewed it, one byte a queue. A lock
/// unrenewed past the lease is expired; it is removed then, as whoever asks
/// next gets it, the old holder included, as if there were none.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct LockTable(u64);

impl LockTable {
    /// The table as one word, a byte a queue.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The lock key ([`Config::lock_key`]) holding queue `q`'s lock, if any.
    pub fn holder(self, q: usize) -> Option<u8> {
        let byte = (self.0 >> (8 * q)) as u8;
        (byte & 0xF).checked_sub(1)
    }

    /// Ticks since queue `q`'s lock was last granted or renewed.
    pub fn age(self, q: usize) -> u8 {
        (self.0 >> (8 * q + 4)) as u8 & 0xF
    }

    fn set(&mut self, q: usize, holder: Option<u8>, age: u8) {
        let byte = holder.map_or(0, |key| u64::from(key + 1) | u64::from(age) << 4);
        self.0 = self.0 & !(0xFF << (8 * q)) | byte << (8 * q);
    }

    /// `tryLockBatch` for `key`: each queue that is free or already its own
    /// is (re)locked; the queues locked for it.
    fn try_lock(&mut self, key: u8, queues: u8) -> u8 {
        let mut granted = 0;
        for q in members_of(u64::from(queues)) {
            if self.holder(q).map_or(true, |holder| holder == key) {
                self.set(q, Some(key), 0);
                granted |= 1 << q;
            }
        }
        granted
    }

    /// `unlockBatch` for `key`: its own locks among `queues` are released;
    /// another's are left alone.
    fn unlock(&mut self, key: u8, queues: u8) {
        for q in members_of(u64::from(queues)) {
            if self.holder(q) == Some(key) {
                self.set(q, None, 0);
            }
        }
    }

    /// The queues whose locks lapse at the next tick of the broker's clock:
    /// held and unrenewed for the whole lease.
    pub fn lapsing(self, lease: u8) -> u8 {
        (0..8)
            .filter(|&q| self.holder(q).is_some() && self.age(q) >= lease)
            .fold(0, |set, q| set | 1 << q)
    }

    /// One tick of the broker's clock: every lock ages, and those past the
    /// lease expire.
    fn elapse(&mut self, lease: u8) {
        let lapsing = self.lapsing(lease);
        for q in 0..8 {
            if let Some(key) = self.holder(q) {
                let kept = lapsing & 1 << q == 0;
                self.set(q, kept.then_some(key), self.age(q) + 1);
            }
        }
    }
}

/// What a broker has appended to its queue of the group's retry topic
/// during the run, after the messages its log was written with: each
/// message sent back, as the message it is a copy of (queue index and
/// offset; RocketMQ keeps the origin in the copy's properties, and
/// `resetRetryAndNamespace` hands the listener the original topic). A
/// length and six bits an entry.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RetryLog(u64);

impl RetryLog {
    /// The most entries: a log holds at most [`MAX_MESSAGES`], one written
    /// before the run at least.
    const CAPACITY: usize = MAX_MESSAGES - 1;

    /// The log as one word.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// How many messages were appended.
    pub fn len(self) -> usize {
        (self.0 & 0x7) as usize
    }

    /// Whether nothing was appended.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The message entry `i` is a copy of: its queue index and offset.
    pub fn origin(self, i: usize) -> (usize, usize) {
        let entry = (self.0 >> (3 + 6 * i)) as usize & 0x3F;
        (entry & 0x7, entry >> 3)
    }

    /// Appends a copy of message `offset` of `queue`. A full log (only the
    /// duplicating network sends one batch back twice) stays as it is.
    fn push(&mut self, queue: usize, offset: usize) {
        let len = self.len();
        if len < Self::CAPACITY {
            let entry = (queue | offset << 3) as u64;
            self.0 = (self.0 & !0x7 | (len + 1) as u64) | entry << (3 + 6 * len);
        }
    }
}

/// One broker, in two parts: what its process holds, which a restart
/// loses, and what it keeps on disk across a restart. A restart stops the
/// process, which loses its memory (`BrokerMemory::restarted`), and starts
/// it again on the same address; the disk is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BrokerState {
    /// Its process's tables.
    pub memory: BrokerMemory,
    /// Its store.
    pub disk: BrokerDisk,
    /// Stopped: ticks of the orderly clock since it stopped (saturating at
    /// the restart downtime; always 0 without orderly consumption). `None`
    /// while it runs.
    pub down: Option<u8>,
}

/// What a broker's process holds (`ConsumerManager`,
/// `RebalanceLockManager`, `TopicRouteInfoManager`): the member table,
/// what it knows of each consumer's connection, the subscription table,
/// the cached route and the lock table. A restart loses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BrokerMemory {
    /// Registered consumers (channels), by consumer index.
    pub members: ConsumerSet,
    /// Members with a second channel open besides their connection's (see
    /// [`Message::SecondChannel`]): listed twice.
    pub twice: ConsumerSet,
    /// Consumers whose newest known connection is closed (unregistered or
    /// expired): nothing arrives on it any more, so a late message on it
    /// (possible on the unordered networks) must not register anyone.
    pub closed: ConsumerSet,
    /// Each consumer's newest known connection epoch, four bits a consumer.
    pub epochs: u64,
    /// The topics of the group's subscription table, when it is modelled
    /// (`ConsumerGroupInfo.subscriptionTable`).
    pub subscription: u8,
    /// Its cached route (`TopicRouteInfoManager`), which it allocates from
    /// with server-side assignment.
    pub route: Route,
    /// With orderly consumption, its lock table.
    pub locks: LockTable,
    /// Ticks of its clock left in which it grants no lock: a start's grace
    /// (the `lock-grace-after-start` remedy; always 0 without it).
    pub grace: u8,
}

impl BrokerMemory {
    /// The memory of the process started again. Every field is named, so
    /// that a new one is a decision here: the tables are empty; what
    /// carries over is the network's, kept here for want of another
    /// place. The connections it knew are all gone (every member's is now
    /// closed; their epochs are kept so that a late message on one is
    /// known dead, as nothing sent on a closed socket arrives), and its
    /// first route lookup gets the route it had from its name server.
    pub fn restarted(&self, cfg: &Config) -> Self {
        Self {
            members: 0,
            twice: 0,
            closed: self.closed | self.members,
            epochs: self.epochs,
            subscription: 0,
            route: self.route,
            locks: LockTable::default(),
            grace: start_grace(cfg),
        }
    }
}

/// The ticks a started process grants no lock for: with
/// `lock-grace-after-start`, as long as a client may trust a lock granted
/// before the stop (through its validity's last tick, counted from the
/// stop, so a downtime counts too); none otherwise.
fn start_grace(cfg: &Config) -> u8 {
    match cfg.orderly() {
        Some(timing) if cfg.has(Variant::LockGraceAfterStart) => timing.validity + 1,
        _ => 0,
    }
}

/// What a broker keeps on disk, which a restart does not lose: the
/// offset table (`ConsumerOffsetManager`, flushed to
/// `consumerOffset.json`) and what the model knows of its commit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BrokerDisk {
    /// With messages, the group's committed offset of each of its queues,
    /// four bits a queue by queue index, [`NO_OFFSET`] when none is
    /// stored.
    pub offsets: u32,
    /// Its queues' first messages have left memory
    /// (`checkInMemByConsumeOffset` fails): a fact of the log, which a
    /// restart keeps.
    pub evicted: bool,
    /// What was sent back to its queue of the retry topic.
    pub retried: RetryLog,
}

impl BrokerDisk {
    /// The disk that replaces a lost one. Every field is named, so that a
    /// new one is a decision here: no offset is stored for any queue
    /// (RocketMQ starts with an empty table when `consumerOffset.json` and
    /// its backup are missing). The commit log is restored, as from a
    /// replica: the model's logs are written before the run and its pulls
    /// read them without asking the broker, so it has no log to lose, and
    /// `evicted` and the retry topic's appended messages, facts of the
    /// log, are kept.
    pub fn lost(&self) -> Self {
        Self {
            offsets: NONE_STORED,
            evicted: self.evicted,
            retried: self.retried,
        }
    }
}

/// The ticks a stopped broker stays stopped: none without the clock,
/// where its start may come at any moment after its stop.
fn downtime(cfg: &Config) -> u8 {
    cfg.orderly().map_or(0, |timing| timing.restart_downtime)
}

/// An offset table with [`NO_OFFSET`] for every queue.
const NONE_STORED: u32 = u32::MAX;
const _: () = assert!(NO_OFFSET == 0xF);

/// How a message's connection compares with the newest the broker knows.
#[derive(Debug, PartialEq, Eq)]
enum Connection {
    /// An older connection, or the newest one closed: nothing can arrive
    /// on it.
    Dead,
    /// The newest known connection, open.
    Current,
    /// A newer connection than any the broker knew.
    New,
}

impl BrokerState {
    /// The table at start: consumers that are already running, if the
    /// broker is in the initial route; and the restart its budget allows.
    pub fn start(cfg: &Config, broker: usize) -> (Self, Vec<Output>) {
        let members = if broker < cfg.sizes.brokers {
            cfg.initial_members() & cfg.reachable_from(broker)
        } else {
            0
        };
        // The table holds what the last heartbeat said: the last member's.
        let subscription = match members_of(u64::from(members)).last() {
            Some(c) if cfg.protocol.subscription_table => cfg.consumers[c].topics,
            _ => 0,
        };
        // A running group has stored offset 0 for each queue of the route it
        // has been consuming; a queue added later, or any queue of a broker
        // that joins later, has none, and a group that starts cold has none
        // at all.
        let cold = cfg.sizes.joiners() == cfg.sizes.consumers;
        let consumed = if cold { 0 } else { cfg.initial_queues() };
        let offsets = if !cfg.messages() {
            0
        } else {
            (0..cfg.queues.len())
                .filter(|&q| usize::from(cfg.broker_of(q)) == broker)
                .fold(0, |set, q| {
                    let stored = consumed & 1 << q != 0;
                    with_offset(set, q, if stored { 0 } else { NO_OFFSET })
                })
        };
        // Consuming orderly, a running group holds the locks of what it
        // consumes.
        let mut locks = LockTable::default();
        if cfg.orderly().is_some() {
            for c in members_of(u64::from(cfg.initial_members())) {
                let owned = ConsumerState::start(cfg, c).0.owned & cfg.broker_queues(broker);
                locks.try_lock(cfg.lock_key(c), owned as u8);
            }
        }
        let state = Self {
            memory: BrokerMemory {
                members,
                twice: 0,
                closed: 0,
                epochs: 0,
                subscription,
                route: Route::default(),
                locks,
                grace: 0,
            },
            disk: BrokerDisk {
                offsets,
                evicted: false,
                retried: RetryLog::default(),
            },
            down: None,
        };
        let outputs = Fault::all()
            .filter(|&f| f.target() == Target::Broker && cfg.may(f, broker))
            .map(Output::ArmFault)
            .collect();
        (state, outputs)
    }

    /// Handles a fault in a model of `cfg`: dispatches to the step it
    /// starts. A restart is one step, the stop and the start at once, or
    /// with [`ProtocolOptions::restart_stops`](crate::config::ProtocolOptions)
    /// a stop, the start a step of its own.
    pub fn on_fault(&self, cfg: &Config, fault: Fault) -> Step<Self> {
        self.fault(cfg, fault, cfg.protocol.restart_stops)
    }

    fn fault(&self, cfg: &Config, fault: Fault, stops: bool) -> Step<Self> {
        if self.down.is_some() {
            return None;
        }
        match fault {
            Fault::Restart => Some(self.stop(cfg, self.disk, stops)),
            Fault::DiskLoss => Some(self.stop(cfg, self.disk.lost(), stops)),
            // A lease timed by the monotonic clock: the step moves none.
            Fault::ClockStep if cfg.has(Variant::BrokerLeaseMonotonic) => None,
            Fault::ClockStep => (self.memory.locks != LockTable::default()).then(|| {
                let mut next = *self;
                next.memory.locks = LockTable::default();
                (next, Vec::new())
            }),
            Fault::Evict => (!self.disk.evicted).then(|| {
                let mut next = *self;
                next.disk.evicted = true;
                (next, Vec::new())
            }),
            _ => None,
        }
    }

    /// Handles a timer: a stopped broker starts again.
    pub fn on_timer(&self, cfg: &Config, timer: &Timer) -> Step<Self> {
        match timer {
            Timer::Start => self.start_again(cfg),
            _ => None,
        }
    }

    /// One tick of the broker's clock (orderly consumption): its locks age,
    /// and a stopped broker's downtime runs.
    pub fn elapse(&self, cfg: &Config) -> Self {
        let mut next = *self;
        if let Some(timing) = cfg.orderly() {
            next.memory.locks.elapse(timing.lease);
            next.memory.grace = self.memory.grace.saturating_sub(1);
            next.down = self
                .down
                .map(|ticks| (ticks + 1).min(timing.restart_downtime));
        }
        next
    }

    /// Running: a connection to it can be opened.
    pub fn listens(&self) -> bool {
        self.down.is_none()
    }

    /// Stopped, its downtime over: it must start before time passes again,
    /// so that a downtime lasts what the configuration says.
    pub fn due_to_start(&self, cfg: &Config) -> bool {
        self.down.is_some_and(|ticks| ticks >= downtime(cfg))
    }

    /// The committed offset of queue `queue`, [`NO_OFFSET`] when none.
    pub fn offset(&self, queue: usize) -> u8 {
        (self.disk.offsets >> (4 * queue) & 0xF) as u8
    }

    /// The broker stops for a restart (an upgrade, or its disk replaced,
    /// `disk` then being the new one): its process and with it the member,
    /// subscription and lock tables are gone, and every member's connection
    /// closes, which the member sees. With the stopped phase (`stops`) so
    /// does its channel to the name servers, which drop it from their
    /// routes at once, and it starts again after its downtime
    /// (`Timer::Start`); without it, it starts in the same step, before
    /// anyone could see it gone.
    fn stop(&self, cfg: &Config, disk: BrokerDisk, stops: bool) -> (Self, Vec<Output>) {
        let next = Self {
            memory: self.memory.restarted(cfg),
            disk,
            down: stops.then_some(0),
        };
        let mut outputs: Vec<Output> = members_of(u64::from(self.memory.members))
            .map(|c| {
                let epoch = self.epoch(c as u8);
                Output::Send(Peer::Consumer(c as u8), Message::ConnectionClosed { epoch })
            })
            .collect();
        if stops {
            let gone = Message::BrokerPresence { alive: false };
            outputs.extend([
                Output::Send(Peer::NameServer, gone),
                Output::Arm(Timer::Start),
            ]);
        }
        (next, outputs)
    }

    /// `BrokerController.start` on the same address, once the downtime has
    /// passed (before, the timer is no step): empty member and lock tables,
    /// and a registration with every name server, which lists it again.
    fn start_again(&self, cfg: &Config) -> Step<Self> {
        if self.down? < downtime(cfg) {
            return None;
        }
        let next = Self {
            down: None,
            ..*self
        };
        let register = Message::BrokerPresence { alive: true };
        Some((next, vec![Output::Send(Peer::NameServer, register)]))
    }

    /// The newest connection epoch known of consumer `c`.
    pub fn epoch(&self, c: u8) -> u8 {
        (self.memory.epochs >> (4 * c) & 0xF) as u8
    }

    fn connection(&self, c: u8, epoch: u8) -> Connection {
        let known = self.epoch(c);
        if epoch > known {
            Connection::New
        } else if epoch < known || self.memory.closed & 1 << c != 0 {
            Connection::Dead
        } else {
            Connection::Current
        }
    }

    /// Handles a message from `from` to broker `me`: dispatches to the
    /// protocol step it starts. Whatever arrives on a dead connection is
    /// ignored; a stopped broker refuses every other request's connection.
    pub fn on_message(&self, cfg: &Config, me: usize, from: Peer, msg: &Message) -> Step<Self> {
        let c = match (from, msg) {
            (Peer::Consumer(c), _) => c,
            (Peer::NameServer, Message::RouteData { route }) => return self.cache_route(*route),
            _ => return None,
        };
        let epoch = match msg {
            Message::Heartbeat { epoch, .. }
            | Message::Unregister { epoch }
            | Message::GetConsumerList { epoch, .. }
            | Message::QueryAssignment { epoch, .. }
            | Message::SilenceExpired { epoch, .. }
            | Message::ChannelClosed { epoch }
            | Message::SecondChannel { epoch }
            | Message::SecondChannelExpired { epoch }
            | Message::QueryOffset { epoch, .. }
            | Message::UpdateOffset { epoch, .. }
            | Message::CommitOffset { epoch, .. }
            | Message::PullMessage { epoch, .. }
            | Message::SendMessageBack { epoch, .. }
            | Message::LockBatch { epoch, .. }
            | Message::UnlockBatch { epoch, .. } => *epoch,
            _ => return None,
        };
        let connection = self.connection(c, epoch);
        if connection == Connection::Dead {
            return None;
        }
        if self.down.is_some() {
            // Every call fails at once (its connection is refused), and a
            // heartbeat's failure leaves the client to connect later;
            // one-way messages and the environment's markers are lost.
            let call = matches!(
                msg,
                Message::Heartbeat { .. }
                    | Message::GetConsumerList { .. }
                    | Message::QueryAssignment { .. }
                    | Message::QueryOffset { .. }
                    | Message::CommitOffset { .. }
                    | Message::LockBatch { .. }
                    | Message::PullMessage { .. }
                    | Message::SendMessageBack { .. }
            );
            return call.then(|| (*self, vec![Output::Send(from, Message::Refused { epoch })]));
        }
        let current = if connection == Connection::New {
            self.open(c, epoch)
        } else {
            *self
        };
        let bit: ConsumerSet = 1 << c;
        let step = match msg {
            Message::Heartbeat { topics, .. } => current.register(cfg, bit, *topics, epoch),
            Message::Unregister { .. } => current.unregister(cfg, bit),
            Message::ChannelClosed { .. } => current.channel_closed(cfg, bit),
            Message::SecondChannel { .. } => current.second_channel(cfg, bit),
            Message::SecondChannelExpired { .. } => current.second_channel_expired(bit),
            Message::SilenceExpired { alive, .. } => current.expire(from, bit, epoch, *alive),
            Message::GetConsumerList { topic, .. } => {
                Some(current.consumer_list(from, *topic, epoch))
            }
            Message::QueryAssignment { topic, .. } => {
                Some(current.allocate_for(from, *topic, epoch))
            }
            Message::QueryOffset { queue, .. } => {
                let answer = Message::Offset {
                    queue: *queue,
                    stored: current.offset(usize::from(*queue)),
                    // 5.0.x says nothing of memory: "not found" is all.
                    in_memory: !current.disk.evicted && !cfg.has(Variant::OffsetNotFoundIsNotFound),
                    epoch,
                };
                Some((current, vec![Output::Send(from, answer)]))
            }
            Message::UpdateOffset { queue, offset, .. } => {
                current.store_offset(usize::from(*queue), *offset, Vec::new())
            }
            Message::CommitOffset { queue, offset, .. } => {
                let ack = Message::CommitAck { queue: *queue };
                current.store_offset(usize::from(*queue), *offset, vec![Output::Send(from, ack)])
            }
            Message::PullMessage {
                queue,
                offset,
                commit,
                generation,
                ..
            } => {
                Some(current.pull_message(cfg, from, *queue, *offset, *commit, *generation, epoch))
            }
            Message::SendMessageBack {
                queue,
                from: first,
                to,
                ..
            } => Some(current.send_back(cfg, me, from, *queue, *first, *to, epoch)),
            Message::LockBatch { queues, .. } => {
                let mut next = current;
                let granted = if current.memory.grace > 0 {
                    0
                } else {
                    next.memory
                        .locks
                        .try_lock(cfg.lock_key(usize::from(c)), *queues)
                };
                let answer = Message::Locked {
                    asked: *queues,
                    granted,
                    epoch,
                };
                Some((next, vec![Output::Send(from, answer)]))
            }
            Message::UnlockBatch { queues, .. } => {
                let mut next = current;
                next.memory
                    .locks
                    .unlock(cfg.lock_key(usize::from(c)), *queues);
                Some((next, Vec::new()))
            }
            _ => None,
        };
        // A new connection is news even when the message changes nothing.
        step.or_else(|| (connection == Connection::New).then(|| (current, Vec::new())))
    }

    /// A new connection of consumer `c`: its older ones are closed.
    fn open(&self, c: u8, epoch: u8) -> Self {
        let shift = 4 * u32::from(c);
        let mut next = *self;
        next.memory.closed &= !(1 << c);
        next.memory.twice &= !(1 << c);
        next.memory.epochs = self.memory.epochs & !(0xF << shift) | u64::from(epoch) << shift;
        next
    }

    /// `ConsumerManager.registerConsumer`: a new channel in the group, or a
    /// heartbeat that changes the topics of the group's subscription table
    /// (`ConsumerGroupInfo.updateSubscription`, which replaces the table
    /// with the heartbeat's), notifies every member, the sender included. A
    /// heartbeat that changes neither changes nothing.
    ///
    /// With the mutant that does not re-register (`heartbeat_reregisters`
    /// of `ProtocolOptions` off), a heartbeat on a later connection than
    /// the client's first (`epoch` past 0) of a client the broker does not
    /// list changes nothing either: a broker that lost its member table in
    /// a restart never gets its members back.
    fn register(&self, cfg: &Config, bit: ConsumerSet, topics: u8, epoch: u8) -> Step<Self> {
        let listed = self.memory.members & bit != 0;
        if !cfg.protocol.heartbeat_reregisters && epoch > 0 && !listed {
            return None;
        }
        let mut next = *self;
        next.memory.members |= bit;
        if cfg.protocol.subscription_table {
            next.memory.subscription = topics;
        }
        (next != *self).then(|| (next, next.notify(next.change_notice(cfg))))
    }

    /// `ConsumerManager.unregisterConsumer` (`UNREGISTER_CLIENT`): the
    /// remaining members are notified.
    fn unregister(&self, cfg: &Config, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, self.change_notice(cfg))
    }

    /// `ConsumerManager.doChannelCloseEvent`: the connection of a consumer
    /// whose process died closes, and the remaining members are notified at
    /// once.
    fn channel_closed(&self, cfg: &Config, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, self.change_notice(cfg))
    }

    /// `registerConsumer` with a second channel of a member: a new channel
    /// in the group, so every member is notified; the client is listed
    /// twice. A client not listed (its heartbeat not yet arrived, or its
    /// connection closed since) gets no second entry.
    fn second_channel(&self, cfg: &Config, bit: ConsumerSet) -> Step<Self> {
        if self.memory.members & bit == 0 || self.memory.twice & bit != 0 {
            return None;
        }
        let mut next = *self;
        next.memory.twice |= bit;
        Some((next, next.notify(next.change_notice(cfg))))
    }

    /// The scan removes the silent second channel, silently: members see
    /// the client once again at their next periodic rebalance.
    fn second_channel_expired(&self, bit: ConsumerSet) -> Step<Self> {
        if self.memory.twice & bit == 0 {
            return None;
        }
        let mut next = *self;
        next.memory.twice &= !bit;
        Some((next, next.notify(Message::LaterRebalance)))
    }

    /// `ConsumerManager.scanNotActiveChannel` removes a channel silent for
    /// 120 s and notifies nobody: members find out at their next periodic
    /// rebalance. It
    /// closes the channel too, which a consumer still alive sees.
    fn expire(&self, from: Peer, bit: ConsumerSet, epoch: u8, alive: bool) -> Step<Self> {
        let (next, mut outputs) = self.close(bit, Message::LaterRebalance)?;
        if alive {
            outputs.push(Output::Send(from, Message::ConnectionClosed { epoch }));
        }
        Some((next, outputs))
    }

    /// `ConsumerManageProcessor.getConsumerListByGroup`: every member of the
    /// group, whatever topic it subscribes to
    /// (`ConsumerGroupInfo.getAllClientId`).
    fn consumer_list(&self, from: Peer, topic: u8, epoch: u8) -> (Self, Vec<Output>) {
        let answer = Message::ConsumerList {
            topic,
            members: self.memory.members,
            twice: self.memory.twice,
            epoch,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    /// How members hear of a change: `NOTIFY_CONSUMER_IDS_CHANGED`, or, with
    /// notifications switched off (`notifyConsumerIdsChangedEnable=false`),
    /// only at their next periodic rebalance.
    fn change_notice(&self, cfg: &Config) -> Message {
        if cfg.protocol.notify {
            Message::NotifyConsumerIdsChanged
        } else {
            Message::LaterRebalance
        }
    }

    /// `ConsumerOffsetManager.commitOffset`: the last write wins, a smaller
    /// offset over a larger one included (RocketMQ only logs a warning).
    fn store_offset(&self, queue: usize, offset: u8, outputs: Vec<Output>) -> Step<Self> {
        let mut next = *self;
        next.disk.offsets = with_offset(self.disk.offsets, queue, offset);
        (next != *self || !outputs.is_empty()).then_some((next, outputs))
    }

    /// `PullMessageProcessor.processRequest`: the offset the pull carries,
    /// if any, is committed (`tryCommitOffset`), and the next messages of
    /// the log from the offset asked for are the answer (at most
    /// `pullBatchSize`).
    #[allow(clippy::too_many_arguments)]
    fn pull_message(
        &self,
        cfg: &Config,
        from: Peer,
        queue: u8,
        offset: u8,
        commit: u8,
        generation: bool,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        if commit != NO_OFFSET {
            next.disk.offsets = with_offset(self.disk.offsets, usize::from(queue), commit);
        }
        let end = self.log_end(cfg, usize::from(queue));
        let answer = Message::PullResult {
            queue,
            from: offset,
            to: (offset + cfg.sizes.pull_batch as u8).min(end),
            generation,
            epoch,
        };
        (next, vec![Output::Send(from, answer)])
    }

    /// The end of queue `q`'s log: the messages it was written with and,
    /// on its queue of the retry topic, those sent back since.
    fn log_end(&self, cfg: &Config, q: usize) -> u8 {
        let appended = if cfg.is_retry_queue(q) {
            self.disk.retried.len()
        } else {
            0
        };
        (cfg.sizes.messages + appended) as u8
    }

    /// `SendMessageProcessor.consumerSendMsgBack`, or the client producer's
    /// send to the retry topic: the batch `[first, to)` of queue `queue`
    /// is appended to its queue of the group's retry topic
    /// (`retryQueueNums` is 1), each message as the one it is a copy of (a
    /// copy of its own retry queue's sent back again is still a copy of
    /// the first; a copy of another broker's is recorded as that copy,
    /// whose origin that broker's log holds). A run that does not model
    /// the retry topic stores it where nobody in the run reads.
    #[allow(clippy::too_many_arguments)]
    fn send_back(
        &self,
        cfg: &Config,
        me: usize,
        from: Peer,
        queue: u8,
        first: u8,
        to: u8,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        let q = usize::from(queue);
        if cfg.retry_log_grows() {
            for offset in usize::from(first)..usize::from(to) {
                let own_retry = cfg.retry_queue_of(me);
                let origin = match offset.checked_sub(cfg.sizes.messages) {
                    Some(copy) if own_retry == Some(q) => self.disk.retried.origin(copy),
                    _ => (q, offset),
                };
                next.disk.retried.push(origin.0, origin.1);
            }
        }
        let answer = Message::SentBack { queue, epoch };
        (next, vec![Output::Send(from, answer)])
    }

    /// `QueryAssignmentProcessor.doLoadBalance`: the broker allocates the
    /// topic for the asking consumer from its own member list and its own
    /// cached route.
    fn allocate_for(&self, from: Peer, topic: u8, epoch: u8) -> (Self, Vec<Output>) {
        let answer = Message::BrokerAllocation {
            topic,
            members: self.memory.members,
            twice: self.memory.twice,
            route: self.memory.route,
            epoch,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    /// `TopicRouteInfoManager` polls its name server: the route it
    /// allocates from with server-side assignment.
    fn cache_route(&self, route: Route) -> Step<Self> {
        (route != self.memory.route).then(|| {
            let mut next = *self;
            next.memory.route = route;
            (next, Vec::new())
        })
    }

    fn close(&self, bit: ConsumerSet, tell_members: Message) -> Step<Self> {
        let mut next = *self;
        next.memory.members &= !bit;
        next.memory.twice &= !bit;
        next.memory.closed |= bit;
        let outputs = if self.memory.members & bit != 0 {
            next.notify(tell_members)
        } else {
            Vec::new()
        };
        Some((next, outputs))
    }

    fn notify(&self, msg: Message) -> Vec<Output> {
        members_of(u64::from(self.memory.members))
            .map(|c| Output::SendWakeUp(Peer::Consumer(c as u8), msg))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_table_keeps_each_queue_apart() {
        let mut table = LockTable::default();
        assert_eq!(table.try_lock(2, 0b101), 0b101, "free queues are granted");
        assert_eq!(
            (table.holder(0), table.holder(1), table.holder(2)),
            (Some(2), None, Some(2))
        );
        assert_eq!(table.try_lock(5, 0b110), 0b010, "queue 2 is another's");
        assert_eq!(table.holder(1), Some(5));
        table.elapse(2);
        table.elapse(2);
        assert_eq!((table.age(0), table.age(1), table.age(2)), (2, 2, 2));
        assert_eq!(table.try_lock(2, 0b100), 0b100, "its own lock is renewed");
        assert_eq!((table.age(2), table.holder(2)), (0, Some(2)));
        table.elapse(2);
        assert_eq!(table.holder(0), None, "unrenewed past the lease: expired");
        assert_eq!(table.holder(1), None);
        assert_eq!((table.holder(2), table.age(2)), (Some(2), 1));
        table.unlock(5, 0b100);
        assert_eq!(table.holder(2), Some(2), "another's lock is left alone");
        table.unlock(2, 0b100);
        assert_eq!(table, LockTable::default());
        // The last queue and the largest key and age fit their byte.
        table.set(7, Some(14), 15);
        assert_eq!(
            (table.holder(7), table.age(7), table.holder(6)),
            (Some(14), 15, None)
        );
    }

    fn table(members: ConsumerSet) -> BrokerState {
        BrokerState {
            memory: BrokerMemory {
                members,
                twice: 0,
                closed: 0,
                epochs: 0,
                subscription: 0,
                route: Route::default(),
                locks: LockTable::default(),
                grace: 0,
            },
            disk: BrokerDisk {
                offsets: 0,
                evicted: false,
                retried: RetryLog::default(),
            },
            down: None,
        }
    }

    #[test]
    fn each_consumer_has_its_own_connection_epoch() {
        let opened = table(0).open(2, 3).open(15, 15);
        assert_eq!(
            (opened.epoch(0), opened.epoch(2), opened.epoch(15)),
            (0, 3, 15)
        );
        let again = opened.open(2, 4);
        assert_eq!(
            (again.epoch(2), again.epoch(15)),
            (4, 15),
            "replaced, not merged"
        );
        let closed = table(0b100).close(0b100, Message::NotifyConsumerIdsChanged);
        let (closed, _) = closed.expect("a member's close changes the table");
        assert_eq!((closed.memory.members, closed.memory.closed), (0, 0b100));
        assert_eq!(
            closed.open(2, 1).memory.closed,
            0,
            "a new connection is open"
        );
    }

    #[test]
    fn closing_a_non_member_notifies_nobody() {
        let broker = table(0b011);
        let (after, outputs) = broker
            .close(0b100, Message::NotifyConsumerIdsChanged)
            .expect("the connection is marked closed");
        assert_eq!((after.memory.members, after.memory.closed), (0b011, 0b100));
        assert!(outputs.is_empty());
        let (twice, _) = after
            .close(0b100, Message::NotifyConsumerIdsChanged)
            .unwrap();
        assert_eq!(twice.memory.closed, 0b100, "closed stays closed");
        let (left, outputs) = broker
            .close(0b001, Message::NotifyConsumerIdsChanged)
            .unwrap();
        assert_eq!(left.memory.members, 0b010);
        assert_eq!(outputs.len(), 1, "the remaining member is told");
    }

    #[test]
    fn offsets_are_four_bits_a_queue() {
        let offsets = with_offset(with_offset(0, 0, 3), 2, 9);
        assert_eq!(offsets, 0x903);
        assert_eq!(with_offset(offsets, 2, 1), 0x103, "replaced, not merged");
        assert_eq!(with_offset(0, 7, 15), 0xF000_0000);
    }
}
