//! A push consumer's rebalance (`RebalanceImpl`, `RebalanceService`,
//! `MQClientInstance`): no leader; each consumer computes its own share
//! from the member list of one broker and its cached route.
//!
//! Here is the machine: its state, its start, and the dispatch of each
//! input to the step it starts. The steps live in rooms by concern, each
//! layer over the one before it (as Stateright's `ordered_reliable_link`
//! is a layer of its own):
//!
//! - `membership.rs`: joining and leaving, heartbeats, routes, the member
//!   query and the allocation (`RebalanceImpl`, `RebalanceService`);
//! - `messages.rs`: with messages, pulls, batches, offsets and the process
//!   queues (`ProcessQueue`, `RemoteBrokerOffsetStore`);
//! - `locks.rs`: consuming orderly, the queue locks and the clock they are
//!   timed by (`ConsumeMessageOrderlyService`, `RebalanceLockManager`).
//!
//! A room reaches into the one above it only through that room's named
//! hooks (`hand_over` after an allocation, `unlock_all` at shutdown,
//! `may_consume` before a pull, ...), which leave the step as it was when
//! their layer is not modelled.

mod locks;
mod membership;
mod messages;
mod pop;

use crate::config::{
    members_of, Call, Config, ConsumerSet, Effect, Fault, FaultSet, QueueSet, Route, MAX_TOPICS,
};
use crate::protocol::machine::Machine;
use crate::protocol::message::{Message, Output, Peer, Step, Timer};
use crate::protocol::process_queue::ProcessQueues;
use crate::protocol::process_queue::SendBack;
use crate::protocol::subscription;

/// Life cycle of a consumer process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    /// Not started yet.
    Idle,
    /// Started: heartbeating and rebalancing.
    Running,
    /// Shut down gracefully.
    Left,
    /// Died without a word.
    Crashed,
}

/// One consumer's state, its fields by room: membership's up to
/// `assigned`, then the messages' `queues`, then the locks'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsumerState {
    /// Life cycle.
    pub phase: Phase,
    /// Cached route (`topicSubscribeInfoTable`): its queues are what it
    /// allocates, its brokers whom it heartbeats and asks.
    pub route: Route,
    /// Topics whose rebalance is due (bit set): wake-ups merge into it.
    pub due: u8,
    /// The `GET_CONSUMER_LIST_BY_GROUP` in flight: the rebalance service is
    /// one thread, blocked on it.
    pub querying: Option<Query>,
    /// Queues it consumes (`processQueueTable`).
    pub owned: QueueSet,
    /// Per topic, the member list its last allocation used. Not kept by
    /// RocketMQ; recorded so the properties can say what the group agreed on.
    pub views: [Option<ConsumerSet>; MAX_TOPICS],
    /// Faults the environment has scheduled for its next message or call
    /// ([`Effect::Scheduled`](crate::config::Effect)) and not yet applied.
    pub faults: FaultSet,
    /// Per broker, the epoch of its connection there, four bits a broker:
    /// a new connection after the old one closed is the next epoch.
    pub epochs: u32,
    /// Topics it subscribes to, as a bit set (`subscriptionInner`).
    pub topics: u8,
    /// Per topic, with server-side assignment, the broker's route its last
    /// assignment was computed from (unused otherwise). Recorded, like
    /// `views`, for the properties.
    pub assigned: [Route; MAX_TOPICS],
    /// With messages, its consumption of each queue, by queue index.
    pub queues: ProcessQueues,
    /// Orderly: queues with a lock call in flight (bit set of queue
    /// indices).
    pub locking: u8,
    /// Orderly: the queues among `locking` that are newly allocated: they
    /// enter its table only if the lock is granted.
    pub adding: u8,
    /// Orderly: ticks of its clock since its last `lockAll`.
    pub renew_age: u8,
    /// Orderly: ticks its clock has fallen behind the brokers'.
    pub lag: u8,
    /// Queues whose progress it reports to no broker (no persist, commit
    /// or pull's commit), in another client: the Go client's drop erased
    /// their offsets in memory (`go-persist-wipes-offsets`, until their
    /// next batch ends), or rocketmq-rust left a batch it sent back in the
    /// process queue (`rust-sendback-offset-stuck`, until the queue
    /// leaves).
    pub unreported: u8,
}

/// A question in flight: which topic, asked of which broker, on which
/// connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Query {
    /// Topic index.
    pub topic: u8,
    /// Broker index.
    pub broker: u8,
    /// The connection's epoch.
    pub epoch: u8,
}

impl Machine for ConsumerState {
    /// The state at start: idle for joiners; otherwise running, registered
    /// and balanced, as if it had been up for a while.
    fn start(cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let spec = &cfg.consumers[me];
        let mut state = Self::empty(Phase::Idle);
        state.topics = spec.topics;
        if spec.joins() {
            return (state, vec![Output::ArmFault(Fault::Join)]);
        }
        state.phase = Phase::Running;
        for topic in state.subscribed() {
            // The member list of a broker this consumer reaches.
            let members = state.targets(cfg, me).next().map_or(0, |b| {
                cfg.initial_members() & cfg.reachable_from(usize::from(b))
            });
            if let Some(share) = cfg.allocate(state.route, topic, members, 0, me) {
                state.owned |= share;
            }
            state.views[topic] = Some(members);
        }
        // With messages, a running group has consumed nothing yet and
        // stored offset 0 everywhere: its process queues are as they start,
        // and consuming orderly it holds their locks.
        state.hold_locks(cfg);
        let outputs = state.environment_timers(cfg, me);
        (state, outputs)
    }

    /// Handles a timer: dispatches to the protocol step it starts.
    fn on_timer(&self, cfg: &Config, me: usize, timer: &Timer) -> Step<Self> {
        match (self.phase, *timer) {
            (Phase::Running, _) => {}
            (Phase::Left, Timer::Done { queue }) => {
                return self.outlived_batch_ends(cfg, usize::from(queue))
            }
            _ => return None,
        }
        match *timer {
            Timer::Rebalance { broker } => self.rebalance(cfg, me, broker),
            Timer::PeriodicRebalance => self.periodic_rebalance(cfg, me),
            Timer::Connect { broker } => Some(self.connect(cfg, me, broker)),
            Timer::ChannelActive { broker } => Some(self.channel_active(cfg, me, broker)),
            Timer::Heartbeat => Some(self.heartbeat(cfg, me)),
            Timer::Pull { queue } => self.pull(cfg, me, usize::from(queue)),
            Timer::Done { queue } => self.done(cfg, me, usize::from(queue)),
            Timer::Persist => Some(self.persist(cfg, me)),
            Timer::LockAll => self.lock_all(cfg, me),
            Timer::Heal | Timer::Start | Timer::SyncOffsets | Timer::ReloadGroupConfig => None,
        }
    }

    /// Handles a fault: one scheduled for its next call is recorded (the
    /// step it concerns applies it); the others are steps of their own.
    /// Which faults may happen to this consumer is decided once, by the
    /// faults it arms when it starts ([`ConsumerSpec::may`](crate::config::ConsumerSpec)).
    fn on_fault(&self, cfg: &Config, me: usize, fault: Fault) -> Step<Self> {
        match (self.phase, fault.spec().effect) {
            (Phase::Idle, _) if fault == Fault::Join => Some(self.join(cfg, me)),
            (Phase::Running, _) if fault == Fault::StallPulls => Some(self.stall_pulls(cfg, me)),
            (Phase::Running, Effect::Scheduled(_)) => Some((
                Self {
                    faults: self.faults.with(fault),
                    ..*self
                },
                Vec::new(),
            )),
            (Phase::Running, Effect::Now) => match fault {
                Fault::Shutdown => Some(self.shutdown(cfg, me)),
                Fault::Crash => Some(self.crash(cfg, me)),
                Fault::Kill => Some(self.kill(cfg, me)),
                Fault::Pause => Some(self.pause(cfg, me)),
                Fault::Resubscribe => self.resubscribe(cfg, me),
                Fault::SlowBatch => self.slow_batches(cfg),
                _ => None,
            },
            _ => None,
        }
    }

    /// Handles a message from `from`: dispatches to the protocol step it
    /// starts.
    fn on_message(&self, cfg: &Config, me: usize, from: Peer, msg: &Message) -> Step<Self> {
        let broker = match from {
            Peer::Broker(b) => Some(b),
            _ => None,
        };
        match (self.phase, msg) {
            // Whatever became of the consumer, a pop's answer settles its
            // handle.
            (
                _,
                Message::PopResult {
                    queue,
                    from,
                    to,
                    attempt,
                    generation,
                    epoch,
                },
            ) => broker.and_then(|b| {
                let q = usize::from(*queue);
                self.popped(cfg, b, q, *from, *to, *attempt, *generation, *epoch)
            }),
            // A route with no broker of the topic is no route
            // (`TOPIC_NOT_EXIST`): the poll fails and the cache stays. Only
            // with the restart's stopped phase, whose name servers may drop
            // a topic's last broker; without it the model keeps its pinned
            // behaviour, where a name server partitioned from the only
            // broker serves an empty route and the consumer drops its queues.
            (_, Message::RouteData { route } | Message::LaterPoll { route })
                if cfg.protocol.restart_stops && cfg.route_brokers(*route) == 0 =>
            {
                None
            }
            (Phase::Idle, Message::RouteData { route }) => self.cache_route(*route),
            (Phase::Running, Message::RouteData { route })
                if self.faults.contains(Fault::MissRoute) =>
            {
                Some(self.miss_route(me, *route))
            }
            (Phase::Running, Message::RouteData { route }) => {
                Some(self.route_changed(cfg, me, *route))
            }
            (Phase::Running, Message::LaterPoll { route })
                if *route != self.route && route.version >= self.route.version =>
            {
                Some(self.route_changed(cfg, me, *route))
            }
            (Phase::Running, Message::NotifyConsumerIdsChanged)
                if self.faults.contains(Fault::LoseNotification) =>
            {
                Some(self.lose_notification(cfg, me))
            }
            (Phase::Running, Message::NotifyConsumerIdsChanged | Message::LaterRebalance) => {
                self.wake(cfg, me)
            }
            (
                Phase::Running,
                Message::ConsumerList {
                    topic,
                    members,
                    twice,
                    epoch,
                },
            ) if self.answers(broker, *topic, *epoch) => {
                let listing = (*members, *twice);
                Some(self.allocate(cfg, me, usize::from(*topic), listing, self.route))
            }
            (
                Phase::Running,
                Message::BrokerAllocation {
                    topic,
                    members,
                    twice,
                    route,
                    epoch,
                },
            ) if self.answers(broker, *topic, *epoch) => {
                let listing = (*members, *twice);
                Some(self.broker_allocation(cfg, me, usize::from(*topic), listing, *route))
            }
            (
                Phase::Running,
                Message::Offset {
                    queue,
                    stored,
                    in_memory,
                    epoch,
                },
            ) if broker.is_some_and(|b| self.epoch(b) == *epoch) => {
                self.offset_read(cfg, me, usize::from(*queue), *stored, *in_memory)
            }
            (
                Phase::Running,
                Message::Locked {
                    asked,
                    granted,
                    epoch,
                },
            ) if broker.is_some_and(|b| self.epoch(b) == *epoch) => {
                Some(self.lock_answered(cfg, me, *asked, *granted))
            }
            (
                Phase::Running,
                Message::PullResult {
                    queue,
                    from,
                    to,
                    generation,
                    epoch,
                },
            ) if broker.is_some_and(|b| self.epoch(b) == *epoch) => {
                self.pulled(cfg, usize::from(*queue), *from, *to, *generation)
            }
            (Phase::Running, Message::SentBack { queue, epoch }) => match broker {
                Some(b) if self.epoch(b) == *epoch => self.sent_back(cfg, usize::from(*queue), b),
                _ => None,
            },
            (Phase::Running, Message::CommitAck { queue }) => {
                self.commit_acknowledged(usize::from(*queue))
            }
            (Phase::Running, Message::ConnectionClosed { epoch })
                if broker.is_some_and(|b| self.epoch(b) == *epoch) =>
            {
                broker.map(|b| self.connection_closed(cfg, me, b))
            }
            (Phase::Running, Message::Refused { epoch })
                if broker.is_some_and(|b| self.epoch(b) == *epoch) =>
            {
                broker.map(|b| self.connection_refused(cfg, me, b))
            }
            // The member query's own connection, one the consumer has
            // since stopped using (a route without its broker), closes or
            // refuses it: the query's call fails with its channel.
            (Phase::Running, Message::ConnectionClosed { epoch } | Message::Refused { epoch })
                if self
                    .querying
                    .is_some_and(|q| Some(q.broker) == broker && q.epoch == *epoch) =>
            {
                self.query_failed(cfg, me)
            }
            _ => None,
        }
    }

    fn elapse(&self, cfg: &Config, _: usize, wall_clock: bool) -> Self {
        self.aged(cfg, wall_clock)
    }
}

impl ConsumerState {
    /// The timers and faults a running consumer has besides its rebalance
    /// turn: the periodic ones its layers need, and the faults its budgets
    /// give it.
    fn environment_timers(&self, cfg: &Config, me: usize) -> Vec<Output> {
        let spec = &cfg.consumers[me];
        let timers = [
            (cfg.periodic_rebalance, Timer::PeriodicRebalance),
            (subscription::periodic_heartbeats(cfg), Timer::Heartbeat),
            (cfg.messages(), Timer::Persist),
            (cfg.orderly().is_some(), Timer::LockAll),
        ]
        .into_iter()
        .filter(|(armed, _)| *armed)
        .map(|(_, timer)| timer)
        .chain(messages::consumption_timers(cfg))
        .map(Output::Arm);
        let faults = spec
            .faults
            .without(Fault::Join)
            .iter()
            .map(Output::ArmFault);
        timers.chain(faults).collect()
    }

    /// A consumer that holds nothing: not started yet, or stopped (a stopped
    /// consumer keeps nothing but the batches it was consuming, so all
    /// stopped states are equal once they end).
    fn empty(phase: Phase) -> Self {
        Self {
            phase,
            route: Route::default(),
            due: 0,
            querying: None,
            owned: 0,
            views: [None; MAX_TOPICS],
            faults: FaultSet::EMPTY,
            epochs: 0,
            topics: 0,
            assigned: [Route::default(); MAX_TOPICS],
            queues: ProcessQueues::default(),
            locking: 0,
            adding: 0,
            renew_age: 0,
            lag: 0,
            unreported: 0,
        }
    }

    /// Topics it subscribes to.
    pub fn subscribed(&self) -> impl Iterator<Item = usize> {
        members_of(u64::from(self.topics))
    }

    /// The epoch of its connection to `broker`.
    pub fn epoch(&self, broker: u8) -> u8 {
        (self.epochs >> (4 * broker) & 0xF) as u8
    }

    /// Brokers it heartbeats and may ask: those of its cached route that it
    /// can reach (`cleanOfflineBroker`), as a bit set.
    pub fn target_set(&self, cfg: &Config, me: usize) -> u8 {
        cfg.route_brokers(self.route) & !cfg.consumers[me].unreachable
    }

    /// [`ConsumerState::target_set`], lowest broker first.
    pub fn targets(&self, cfg: &Config, me: usize) -> impl Iterator<Item = u8> {
        members_of(u64::from(self.target_set(cfg, me))).map(|b| b as u8)
    }

    /// `msg` (made with the connection's epoch) to every broker it talks to.
    fn broadcast(&self, cfg: &Config, me: usize, msg: impl Fn(u8) -> Message) -> Vec<Output> {
        self.targets(cfg, me)
            .map(|b| Output::Send(Peer::Broker(b), msg(self.epoch(b))))
            .collect()
    }
}

/// A call a consumer waits on: to which broker, on which connection, and
/// about which topic (a member query) or queue (every other call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// What it asked.
    pub call: Call,
    /// The broker asked.
    pub broker: u8,
    /// The connection's epoch.
    pub epoch: u8,
    /// The topic index of a member query, the queue index otherwise.
    pub about: u8,
}

impl Waiting {
    /// Whether `msg`, on its way from the consumer to the broker
    /// (`to_broker`) or back, is this call, its answer, or the failure
    /// that ends it (the connection closed, or refused): what must still
    /// come for the wait to end.
    pub fn ended_by(&self, to_broker: bool, msg: &Message) -> bool {
        let Waiting {
            call, epoch, about, ..
        } = *self;
        let has = |queues: u8| queues & 1 << about != 0;
        match (to_broker, *msg) {
            (false, Message::ConnectionClosed { epoch: e } | Message::Refused { epoch: e }) => {
                e == epoch
            }
            (true, Message::GetConsumerList { topic, epoch: e })
            | (true, Message::QueryAssignment { topic, epoch: e })
            | (
                false,
                Message::ConsumerList {
                    topic, epoch: e, ..
                },
            )
            | (
                false,
                Message::BrokerAllocation {
                    topic, epoch: e, ..
                },
            ) => call == Call::Query && topic == about && e == epoch,
            (true, Message::LockBatch { queues, epoch: e })
            | (
                false,
                Message::Locked {
                    asked: queues,
                    epoch: e,
                    ..
                },
            ) => call == Call::Lock && has(queues) && e == epoch,
            (true, Message::QueryOffset { queue, epoch: e })
            | (
                false,
                Message::Offset {
                    queue, epoch: e, ..
                },
            ) => call == Call::OffsetRead && queue == about && e == epoch,
            (
                true,
                Message::PullMessage {
                    queue, epoch: e, ..
                },
            )
            | (
                false,
                Message::PullResult {
                    queue, epoch: e, ..
                },
            )
            | (
                true,
                Message::PopMessage {
                    queue, epoch: e, ..
                },
            )
            | (
                false,
                Message::PopResult {
                    queue, epoch: e, ..
                },
            ) => call == Call::Pull && queue == about && e == epoch,
            (
                true,
                Message::CommitOffset {
                    queue, epoch: e, ..
                },
            ) => call == Call::Commit && queue == about && e == epoch,
            (false, Message::CommitAck { queue }) => call == Call::Commit && queue == about,
            (
                true,
                Message::SendMessageBack {
                    queue, epoch: e, ..
                },
            )
            | (false, Message::SentBack { queue, epoch: e }) => {
                call == Call::SendBack && queue == about && e == epoch
            }
            _ => false,
        }
    }
}

impl ConsumerState {
    /// Every call it waits on, running: its member query, its lock calls,
    /// and each queue's offset read, pull, commit and send-back.
    pub fn waiting<'a>(&'a self, cfg: &'a Config) -> impl Iterator<Item = Waiting> + 'a {
        let running = self.phase == Phase::Running;
        let on = move |call, broker: u8, about| Waiting {
            call,
            broker,
            epoch: self.epoch(broker),
            about,
        };
        let query = self.querying.filter(|_| running).map(|q| Waiting {
            call: Call::Query,
            broker: q.broker,
            epoch: q.epoch,
            about: q.topic,
        });
        let queues = (0..if running { cfg.queues.len() } else { 0 }).flat_map(move |q| {
            let (pq, broker, about) = (&self.queues[q], cfg.broker_of(q), q as u8);
            let send_back = match pq.send_back {
                SendBack::ToBroker => Some(broker),
                SendBack::ByProducer(b) => Some(b),
                SendBack::No | SendBack::Later => None,
            };
            [
                (self.locking & 1 << q != 0, Call::Lock, Some(broker)),
                (pq.reading_offset, Call::OffsetRead, Some(broker)),
                (pq.pulling, Call::Pull, Some(broker)),
                (pq.awaiting_ack, Call::Commit, Some(broker)),
                (send_back.is_some(), Call::SendBack, send_back),
            ]
            .into_iter()
            .filter_map(move |(waits, call, to)| to.filter(|_| waits).map(|b| on(call, b, about)))
        });
        query.into_iter().chain(queues)
    }
}

/// `epochs` with `broker`'s epoch set to `epoch`.
fn with_epoch(epochs: u32, broker: u8, epoch: u8) -> u32 {
    let shift = 4 * u32::from(broker);
    epochs & !(0xF << shift) | u32::from(epoch & 0xF) << shift
}
