//! A broker's view of the consumer group (`ConsumerManager`,
//! `ConsumerGroupInfo`, `DefaultConsumerIdsChangeListener`). Brokers share
//! nothing: each learns members from the heartbeats it receives.
//!
//! In rooms by concern, as the consumer: its members and their
//! connections (`members.rs`), the offsets it stores and the log it serves
//! (`offsets.rs`), its lock table (`locks.rs`) and its queue of the retry
//! topic (`retry_log.rs`); here, its state, its start, stop and restart,
//! and the dispatch of what arrives.

mod locks;
mod members;
mod offsets;
pub(crate) mod pop;
mod retry_log;

pub use locks::LockTable;
pub use pop::{PopStatus, PopTable};
pub use retry_log::RetryLog;

use crate::config::{members_of, Config, ConsumerSet, Route};
use crate::config::{Dense, Fault, Target, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, Timer, NO_OFFSET};
use crate::protocol::{ConsumerState, Machine};
use offsets::with_offset;

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
    /// A FIFO group of gRPC clients, this the cluster's only broker: the
    /// proxy has no config of the group cached. The proxy does not keep
    /// that a group is FIFO: it reloads the group's config through a
    /// broker its route of the cluster lists, and a reload while this
    /// broker was down found none and cached nothing. Until its next
    /// reload ([`Timer::ReloadGroupConfig`]) it takes the group's clients
    /// for a concurrent group's, and their pops here are served without
    /// the queue's block (`POP_MESSAGE`). Neither memory nor disk:
    /// the proxy's, kept here for want of another place.
    pub proxy_lost_group: bool,
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
    /// With a failover in its budget, its slave's copy of `offsets` as of
    /// the slave's last sync ([`Timer::SyncOffsets`]), which a failover
    /// makes the offsets served; without one, the offsets it started with.
    pub synced: u32,
    /// With POP consumption, each message's checkpoint and
    /// acknowledgement, kept in its revive topic.
    pub pop: PopTable,
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
            synced: self.synced,
            pop: self.pop,
        }
    }

    /// The disk a crash leaves (the process killed, no clean shutdown):
    /// a FIFO group's order info as of before its queues' last pops
    /// ([`PopTable::order_info_lost`]). The offsets, persisted every 5 s,
    /// are the model's as of the crash (one just after their flush), and
    /// the checkpoints and acknowledgements are in the commit log. Every
    /// field is named, as in [`BrokerDisk::lost`].
    pub fn crashed(&self, cfg: &Config) -> Self {
        Self {
            offsets: self.offsets,
            evicted: self.evicted,
            retried: self.retried,
            synced: self.synced,
            pop: self.pop.order_info_lost(cfg),
        }
    }

    /// The disk of the slave that serves after a failover: the offsets of
    /// its last sync, and the same commit log (the model's logs are
    /// written before the run). Every field is named, as in
    /// [`BrokerDisk::lost`].
    pub fn failed_over(&self) -> Self {
        Self {
            offsets: self.synced,
            evicted: self.evicted,
            retried: self.retried,
            synced: self.synced,
            pop: self.pop,
        }
    }
}

/// Whether a stop of a broker may leave the proxy without a FIFO group's
/// config: the group's consumers are the proxy's (a FIFO group's are gRPC
/// clients), the broker is the only one its route of the cluster can list
/// (with several, the reload asks another; every broker down at once is
/// not modelled), and the proxy does not keep the config it loaded last
/// (the `proxy-keeps-group-config` remedy).
pub fn proxy_may_lose_group(cfg: &Config) -> bool {
    cfg.pops()
        && cfg.protocol.fifo
        && cfg.broker_names.len() == 1
        && !cfg.has(Variant::ProxyKeepsGroupConfig)
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

impl Machine for BrokerState {
    /// The table at start: consumers that are already running, if the
    /// broker is in the initial route; and the restart its budget allows.
    fn start(cfg: &Config, broker: usize) -> (Self, Vec<Output>) {
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
                synced: offsets,
                pop: PopTable::default(),
            },
            down: None,
            proxy_lost_group: false,
        };
        let mut outputs: Vec<Output> = Fault::all()
            .filter(|&f| f.target() == Target::Broker && cfg.may(f, broker))
            .map(Output::ArmFault)
            .collect();
        if cfg.messages() && cfg.may(Fault::Failover, broker) {
            outputs.push(Output::Arm(Timer::SyncOffsets));
        }
        (state, outputs)
    }

    /// Handles a fault in a model of `cfg`: dispatches to the step it
    /// starts. A restart is one step, the stop and the start at once, or
    /// with [`ProtocolOptions::restart_stops`](crate::config::ProtocolOptions)
    /// a stop, the start a step of its own.
    fn on_fault(&self, cfg: &Config, _: usize, fault: Fault) -> Step<Self> {
        self.fault(cfg, fault, cfg.protocol.restart_stops)
    }

    /// Handles a timer: a stopped broker starts again; a running one's
    /// slave copies its offsets when they changed, and the proxy reloads
    /// a FIFO group's config through it.
    fn on_timer(&self, cfg: &Config, _: usize, timer: &Timer) -> Step<Self> {
        match timer {
            Timer::Start => self.start_again(cfg),
            Timer::SyncOffsets => self.sync_offsets(),
            Timer::ReloadGroupConfig => self.reload_group_config(),
            _ => None,
        }
    }

    /// One tick of the broker's clock (orderly consumption): its locks age,
    /// and a stopped broker's downtime runs.
    fn elapse(&self, cfg: &Config, _: usize, _: bool) -> Self {
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

    /// Handles a message from `from` to broker `me`: dispatches to the
    /// protocol step it starts. Whatever arrives on a dead connection is
    /// ignored; a stopped broker refuses every other request's connection.
    fn on_message(&self, cfg: &Config, me: usize, from: Peer, msg: &Message) -> Step<Self> {
        let c = match (from, msg) {
            (Peer::Consumer(c), _) => c,
            (Peer::NameServer, Message::RouteData { route }) => return self.cache_route(*route),
            // Its own scan, of a consumer's channel.
            (Peer::Broker(b), Message::SecondChannelExpired { consumer, .. })
                if usize::from(b) == me =>
            {
                *consumer
            }
            _ => return None,
        };
        // Time at the broker, on no connection.
        if let Message::InvisibleTimeExpired {
            queue,
            from: first,
            to,
            attempt,
            ..
        } = *msg
        {
            return self.revive(cfg, queue, first, to, attempt);
        }
        let epoch = match msg {
            Message::Heartbeat { epoch, .. }
            | Message::Unregister { epoch }
            | Message::GetConsumerList { epoch, .. }
            | Message::QueryAssignment { epoch, .. }
            | Message::SilenceExpired { epoch, .. }
            | Message::ChannelClosed { epoch }
            | Message::SecondChannel { epoch }
            | Message::SecondChannelExpired { epoch, .. }
            | Message::QueryOffset { epoch, .. }
            | Message::UpdateOffset { epoch, .. }
            | Message::CommitOffset { epoch, .. }
            | Message::PullMessage { epoch, .. }
            | Message::SendMessageBack { epoch, .. }
            | Message::LockBatch { epoch, .. }
            | Message::UnlockBatch { epoch, .. }
            | Message::PopMessage { epoch, .. }
            | Message::AckMessage { epoch, .. } => *epoch,
            _ => return None,
        };
        let connection = self.connection(c, epoch);
        // An acknowledgement that cannot arrive (its connection closed,
        // or refused by a stopped broker) is as good as lost: its handle
        // expires unacknowledged.
        if let Message::AckMessage {
            queue,
            from: first,
            to,
            attempt,
            ..
        } = *msg
        {
            if connection == Connection::Dead || self.down.is_some() {
                return self.revive(cfg, queue, first, to, attempt);
            }
        }
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
                    | Message::PopMessage { .. }
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
            Message::SecondChannel { .. } => current.second_channel(cfg, me, c, epoch),
            Message::SecondChannelExpired { .. } => current.second_channel_expired(bit),
            Message::SilenceExpired { alive, .. } => current.expire(from, bit, epoch, *alive),
            Message::GetConsumerList { topic, .. } => {
                Some(current.consumer_list(from, *topic, epoch))
            }
            Message::QueryAssignment { topic, .. } => {
                Some(current.allocate_for(from, *topic, epoch))
            }
            Message::QueryOffset { queue, .. } => {
                Some(current.query_offset(cfg, from, *queue, epoch))
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
                Some(current.lock_batch(cfg, from, c, *queues, epoch))
            }
            Message::UnlockBatch { queues, .. } => Some(current.unlock_batch(cfg, c, *queues)),
            Message::PopMessage {
                queue,
                generation,
                reenters,
                ..
            } => Some(current.pop(cfg, from, *queue, *generation, *reenters, epoch)),
            Message::AckMessage {
                queue,
                from: first,
                to,
                attempt,
                ..
            } => current.ack(cfg, *queue, *first, *to, *attempt),
            _ => None,
        };
        // A new connection is news even when the message changes nothing.
        step.or_else(|| (connection == Connection::New).then(|| (current, Vec::new())))
    }
}

impl BrokerState {
    fn fault(&self, cfg: &Config, fault: Fault, stops: bool) -> Step<Self> {
        if self.down.is_some() {
            return None;
        }
        match fault {
            Fault::Restart => Some(self.stop(cfg, self.disk, stops)),
            Fault::DiskLoss => Some(self.stop(cfg, self.disk.lost(), stops)),
            Fault::BrokerCrash => Some(self.stop(cfg, self.disk.crashed(cfg), stops)),
            Fault::Failover => self.fail_over(cfg),
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

    /// Running: a connection to it can be opened.
    pub fn listens(&self) -> bool {
        self.down.is_none()
    }

    /// Stopped, its downtime over: it must start before time passes again,
    /// so that a downtime lasts what the configuration says.
    pub fn due_to_start(&self, cfg: &Config) -> bool {
        self.down.is_some_and(|ticks| ticks >= downtime(cfg))
    }

    /// The broker stops for a restart (an upgrade, or its disk replaced,
    /// `disk` then being the new one): its process and with it the member,
    /// subscription and lock tables are gone, and every member's connection
    /// closes, which the member sees. With the stopped phase (`stops`) so
    /// does its channel to the name servers, which drop it from their
    /// routes at once, and it starts again after its downtime
    /// (`Timer::Start`); without it, it starts in the same step, before
    /// anyone could see it gone.
    ///
    /// The cluster's only broker down, the proxy's reload of a FIFO
    /// group's config may fall in its downtime and find no broker to ask
    /// (a one-step restart stands for a stop and a start some seconds
    /// apart): the proxy may lose the group's config, until a reload once
    /// the broker is back. Whether the reload fell there is whether it
    /// comes before the group's next pop.
    fn stop(&self, cfg: &Config, disk: BrokerDisk, stops: bool) -> (Self, Vec<Output>) {
        let loses_group = proxy_may_lose_group(cfg);
        let next = Self {
            memory: self.memory.restarted(cfg),
            disk,
            down: stops.then_some(0),
            proxy_lost_group: loses_group,
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
        if loses_group {
            outputs.push(Output::Arm(Timer::ReloadGroupConfig));
        }
        (next, outputs)
    }

    /// The proxy's reload of a FIFO group's config through this broker,
    /// once it listens: the proxy knows the group is FIFO again. No step
    /// while the broker is down (the reload finds no broker to ask, and
    /// is due again), nor when the proxy has the config.
    fn reload_group_config(&self) -> Step<Self> {
        if self.down.is_some() || !self.proxy_lost_group {
            return None;
        }
        let next = Self {
            proxy_lost_group: false,
            ..*self
        };
        Some((next, Vec::new()))
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

    /// The slave serves in the master's place. Consumers heartbeat to
    /// every broker of a set, slaves included
    /// (`MQClientInstance.sendHeartbeatToAllBroker`), so its member table
    /// and its channels are already there, as the master's: nothing
    /// closes that the group would see. Locks live in the master's memory
    /// alone (`RebalanceLockManager`): the new master has none (and, with
    /// the `lock-grace-after-start` remedy, grants none for its grace).
    /// Its offsets are its last copy of the master's. No step when that
    /// changes nothing (no lock held, the copy current): no one could
    /// tell, but for a trace that sees the failover itself
    /// ([`Config::every_failover_a_step`]).
    fn fail_over(&self, cfg: &Config) -> Step<Self> {
        let mut next = *self;
        next.memory.locks = LockTable::default();
        next.memory.grace = start_grace(cfg);
        next.disk = self.disk.failed_over();
        (next != *self || cfg.every_failover_a_step).then_some((next, Vec::new()))
    }

    /// `SlaveSynchronize.syncConsumerOffset`: the slave copies the running
    /// master's offset table. No step when the copy is current.
    fn sync_offsets(&self) -> Step<Self> {
        if self.down.is_some() || self.disk.synced == self.disk.offsets {
            return None;
        }
        let mut next = *self;
        next.disk.synced = self.disk.offsets;
        Some((next, vec![Output::Arm(Timer::SyncOffsets)]))
    }

    /// The newest connection epoch known of consumer `c`.
    pub fn epoch(&self, c: u8) -> u8 {
        (self.memory.epochs >> (4 * c) & 0xF) as u8
    }

    /// Whether a call of consumer `c` on its connection `epoch` reaches
    /// this broker's processor: the broker is up and the connection is
    /// not dead. What the broker's own trace sees arrive.
    pub fn takes_call(&self, c: u8, epoch: u8) -> bool {
        self.down.is_none() && self.connection(c, epoch) != Connection::Dead
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
                synced: 0,
                pop: PopTable::default(),
            },
            down: None,
            proxy_lost_group: false,
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
}
