//! A push consumer's rebalance (`RebalanceImpl`, `RebalanceService`,
//! `MQClientInstance`): no leader; each consumer computes its own share
//! from the member list of one broker and its cached route.

use crate::config::{
    members_of, Assignment, Commit, Config, ConsumeFrom, ConsumerSet, Effect, Fault, FaultSet,
    LockTiming, QueueSet, Route, MAX_TOPICS,
};
use crate::protocol::message::NO_OFFSET;
use crate::protocol::message::{Message, Output, Peer, Step, Timer};
use crate::protocol::process_queue::{ProcessQueue, ProcessQueues};
use rocketmq_rebalance::plan_update;

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

/// One consumer's state.
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

impl ConsumerState {
    /// The state at start: idle for joiners; otherwise running, registered
    /// and balanced, as if it had been up for a while.
    pub fn start(cfg: &Config, me: usize) -> (Self, Vec<Output>) {
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
            if let Some(share) = cfg.allocate(state.route, topic, members, me) {
                state.owned |= share;
            }
            // With messages, a running group has consumed nothing yet and
            // stored offset 0 everywhere; consuming orderly, it holds the
            // locks of its queues, just granted.
            if cfg.messages() {
                for q in members_of(state.owned) {
                    state.queues[q] = ProcessQueue {
                        locked: cfg.orderly().is_some(),
                        ..ProcessQueue::default()
                    };
                }
            }
            state.views[topic] = Some(members);
        }
        let outputs = state.environment_timers(cfg, me);
        (state, outputs)
    }

    /// Handles a timer: dispatches to the protocol step it starts.
    pub fn on_timer(&self, cfg: &Config, me: usize, timer: &Timer) -> Step<Self> {
        if self.phase != Phase::Running {
            return None;
        }
        match *timer {
            Timer::Rebalance { broker } => self.rebalance(cfg, me, broker),
            Timer::Tick => self.periodic_tick(cfg, me),
            Timer::Connect { broker } => Some(self.connect(cfg, me, broker)),
            Timer::Heartbeat => Some(self.heartbeat(cfg, me)),
            Timer::Pull { queue } => self.pull(cfg, me, usize::from(queue)),
            Timer::Done { queue } => self.done(cfg, usize::from(queue)),
            Timer::Persist => Some(self.persist(cfg, me)),
            Timer::LockAll => self.lock_all(cfg, me),
            Timer::Heal => None,
        }
    }

    /// Handles a fault: one scheduled for its next call is recorded (the
    /// step it concerns applies it); the others are steps of their own.
    /// Which faults may happen to this consumer is decided once, by the
    /// faults it arms when it starts ([`ConsumerSpec::may`](crate::config::ConsumerSpec)).
    pub fn on_fault(&self, cfg: &Config, me: usize, fault: Fault) -> Step<Self> {
        match (self.phase, fault.spec().effect) {
            (Phase::Idle, _) if fault == Fault::Join => Some(self.join(cfg, me)),
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
                _ => None,
            },
            _ => None,
        }
    }

    /// Handles a message from `from`: dispatches to the protocol step it
    /// starts.
    pub fn on_message(&self, cfg: &Config, me: usize, from: Peer, msg: &Message) -> Step<Self> {
        let broker = match from {
            Peer::Broker(b) => Some(b),
            _ => None,
        };
        match (self.phase, msg) {
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
            (Phase::Running, Message::NotifyConsumerIdsChanged | Message::PeriodicTick) => {
                self.wake(cfg, me)
            }
            (
                Phase::Running,
                Message::ConsumerList {
                    topic,
                    members,
                    epoch,
                },
            ) if self.answers(broker, *topic, *epoch) => {
                Some(self.allocate(cfg, me, usize::from(*topic), *members, self.route))
            }
            (
                Phase::Running,
                Message::Assignment {
                    topic,
                    members,
                    route,
                    epoch,
                },
            ) if self.answers(broker, *topic, *epoch) => {
                let (mut next, outputs) =
                    self.allocate(cfg, me, usize::from(*topic), *members, *route);
                next.assigned[usize::from(*topic)] = *route;
                Some((next, outputs))
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
            (Phase::Running, Message::CommitAck { queue }) => {
                let q = usize::from(*queue);
                self.queues[q].awaiting_ack.then(|| {
                    let mut next = *self;
                    next.queues[q].awaiting_ack = false;
                    (next, Vec::new())
                })
            }
            (Phase::Running, Message::ConnectionClosed { epoch })
                if broker.is_some_and(|b| self.epoch(b) == *epoch) =>
            {
                broker.map(|b| self.connection_closed(cfg, me, b))
            }
            _ => None,
        }
    }

    /// `DefaultMQPushConsumerImpl.start`: heartbeat to every broker, then
    /// `rebalanceImmediately` (every subscribed topic is due).
    fn join(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let next = Self {
            phase: Phase::Running,
            due: self.topics,
            ..*self
        };
        let topics = self.topics;
        let mut outputs = next.broadcast(cfg, me, |epoch| Message::Heartbeat { epoch, topics });
        outputs.extend(next.environment_timers(cfg, me));
        outputs.extend(next.schedule(cfg, me));
        (next, outputs)
    }

    /// `RebalanceImpl.rebalanceByTopic` up to `findConsumerIdList`: asks
    /// `broker` for the group's members for the first due topic. A query the
    /// environment made fail returns nothing.
    fn rebalance(&self, cfg: &Config, me: usize, broker: u8) -> Step<Self> {
        if self.busy() || self.due == 0 {
            return None;
        }
        if self.faults.contains(Fault::FailQuery) {
            return Some(self.query_fails(cfg, me));
        }
        let topic = self.due.trailing_zeros() as u8;
        let next = Self {
            due: self.due & !(1 << topic),
            querying: Some(Query {
                topic,
                broker,
                epoch: self.epoch(broker),
            }),
            ..*self
        };
        let mut outputs: Vec<Output> = self
            .targets(cfg, me)
            .filter(|&b| b != broker)
            .map(|b| Output::Disarm(Timer::Rebalance { broker: b }))
            .collect();
        let epoch = self.epoch(broker);
        let question = match cfg.protocol.assignment {
            Assignment::Client => Message::GetConsumerList { topic, epoch },
            Assignment::Server => Message::QueryAssignment { topic, epoch },
        };
        outputs.push(Output::Send(Peer::Broker(broker), question));
        Some((next, outputs))
    }

    /// `rebalanceByTopic` when its broker cannot be reached: the call
    /// returns nothing and the round counts as balanced (the topic is no
    /// longer due); the periodic tick will look again.
    fn query_fails(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let topic = self.due.trailing_zeros();
        let mut next = Self {
            due: self.due & !(1 << topic),
            faults: self.faults.without(Fault::FailQuery),
            ..*self
        };
        let mut outputs = self.retry_later(&mut next, cfg, me);
        outputs.extend(next.schedule(cfg, me));
        if next.due == 0 {
            outputs.extend(
                self.targets(cfg, me)
                    .map(|b| Output::Disarm(Timer::Rebalance { broker: b })),
            );
        }
        (next, outputs)
    }

    /// `RebalanceService.run`'s periodic wake-up (every 20 s): wakes an idle
    /// rebalance service; a busy one will look again when it finishes.
    fn periodic_tick(&self, cfg: &Config, me: usize) -> Step<Self> {
        if self.due != 0 || self.busy() {
            return None;
        }
        let (next, mut outputs) = self.wake(cfg, me)?;
        outputs.push(Output::Arm(Timer::Tick));
        Some((next, outputs))
    }

    /// `DefaultMQPushConsumerImpl.shutdown`: drops every process queue and
    /// sends `UNREGISTER_CLIENT` to every broker (`unregisterClientWithLock`).
    fn shutdown(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::DisarmAll];
        // Orderly, `ConsumeMessageOrderlyService.shutdown` unlocks every
        // queue first (`unlockAll`, a synchronous call).
        if cfg.orderly().is_some() {
            for broker in self.targets(cfg, me) {
                let queues = self.table() & cfg.broker_queues(usize::from(broker)) as u8;
                if queues != 0 {
                    let epoch = self.epoch(broker);
                    let unlock = Message::UnlockBatch { queues, epoch };
                    outputs.push(Output::Send(Peer::Broker(broker), unlock));
                }
            }
        }
        // `persistConsumerOffset` first.
        outputs.extend(
            members_of(self.owned)
                .filter_map(|q| self.offset_update(cfg, me, q))
                .map(|(broker, msg)| Output::Send(broker, msg)),
        );
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::Unregister { epoch }));
        (Self::empty(Phase::Left), outputs)
    }

    /// The offset update of queue `q` it would send: the lowest offset still
    /// in flight, to the queue's broker if it talks to it; none for a queue
    /// whose offset it has not read yet.
    fn offset_update(&self, cfg: &Config, me: usize, q: usize) -> Option<(Peer, Message)> {
        let pq = &self.queues[q];
        let broker = cfg.broker_of(q);
        (cfg.messages() && !pq.reading_offset && self.target_set(cfg, me) & 1 << broker != 0).then(
            || {
                let msg = Message::UpdateOffset {
                    queue: q as u8,
                    offset: pq.local_offset(),
                    epoch: self.epoch(broker),
                };
                (Peer::Broker(broker), msg)
            },
        )
    }

    /// `ConsumeMessageConcurrentlyService` on a pulled batch: the next
    /// messages of an owned, started queue whose broker it reaches (at most
    /// `pullBatchSize`), when no batch runs and, with synchronous commit,
    /// the last one is acknowledged. Orderly
    /// (`ConsumeMessageOrderlyService.ConsumeRequest`), only under a lock it
    /// trusts; otherwise it locks the queue again (`lockOneMQ`).
    fn pull(&self, cfg: &Config, me: usize, q: usize) -> Step<Self> {
        let pq = &self.queues[q];
        let end = cfg.sizes.messages as u8;
        let pullable = self.owned & 1 << q != 0
            && !pq.reading_offset
            && !pq.running()
            && !pq.awaiting_ack
            && pq.cursor < end
            && self.target_set(cfg, me) & 1 << cfg.broker_of(q) != 0;
        if !pullable {
            return None;
        }
        let mut next = *self;
        let mut outputs = vec![Output::Arm(Timer::Pull { queue: q as u8 })];
        if cfg
            .orderly()
            .is_some_and(|timing| !pq.lock_trusted(timing.validity))
        {
            if self.locking & 1 << q != 0 || self.faults.contains(Fault::FailLocks) {
                return None;
            }
            next.ask_locks(cfg, me, 1 << q, &mut outputs);
            return Some((next, outputs));
        }
        let to = (pq.cursor + cfg.sizes.pull_batch as u8).min(end);
        next.queues[q] = ProcessQueue {
            from: pq.cursor,
            to,
            cursor: to,
            batch_age: 0,
            ..*pq
        };
        Some((next, outputs))
    }

    /// The application finishes the running batch: its messages were
    /// delivered. The queue's offset moves on unless it was dropped
    /// meanwhile (`processConsumeResult` checks `isDropped`); with
    /// synchronous commit it is committed before the next pull.
    fn done(&self, cfg: &Config, q: usize) -> Step<Self> {
        let pq = self.queues[q];
        if !pq.running() {
            return None;
        }
        let mut next = *self;
        let mut outputs = vec![
            Output::Delivered {
                queue: q as u8,
                from: pq.from,
                to: pq.to,
            },
            Output::Arm(Timer::Done { queue: q as u8 }),
        ];
        let owned = self.owned & 1 << q != 0;
        // Orderly, a dropped queue stays in the table until unlocked.
        next.queues[q] = if owned || pq.dropped {
            ProcessQueue {
                from: 0,
                to: 0,
                batch_age: 0,
                ..pq
            }
        } else {
            ProcessQueue::default()
        };
        if owned && !pq.reading_offset && cfg.protocol.commit == Commit::Sync {
            let broker = cfg.broker_of(q);
            outputs.push(Output::Send(
                Peer::Broker(broker),
                Message::CommitOffset {
                    queue: q as u8,
                    offset: pq.cursor,
                    epoch: self.epoch(broker),
                },
            ));
            next.queues[q].awaiting_ack = true;
        }
        Some((next, outputs))
    }

    /// `MQClientInstance.persistAllConsumerOffset`, every 5 s, one-way: the
    /// offset of every queue it consumes. One may be lost.
    fn persist(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        if self.faults.contains(Fault::LosePersist) {
            let next = Self {
                faults: self.faults.without(Fault::LosePersist),
                ..*self
            };
            return (next, vec![Output::Arm(Timer::Persist)]);
        }
        let mut outputs: Vec<Output> = members_of(self.owned)
            .filter_map(|q| self.offset_update(cfg, me, q))
            .map(|(broker, msg)| Output::SendPeriodic(broker, msg))
            .collect();
        outputs.push(Output::Arm(Timer::Persist));
        (*self, outputs)
    }

    /// The broker's answer to an offset read
    /// (`computePullFromWhereWithException`): the stored offset, else the
    /// `ConsumeFromWhere` rule. A read that fails leaves the queue out of
    /// this round.
    fn offset_read(
        &self,
        cfg: &Config,
        me: usize,
        q: usize,
        stored: u8,
        in_memory: bool,
    ) -> Step<Self> {
        let pq = self.queues[q];
        if self.owned & 1 << q == 0 || !pq.reading_offset {
            return None;
        }
        let mut next = *self;
        if self.faults.contains(Fault::FailOffsetRead) {
            next.faults.remove(Fault::FailOffsetRead);
            next.owned &= !(1 << q);
            // A queue whose offset is being read has pulled nothing and
            // awaits no acknowledgement: only a running batch is kept.
            next.queues[q].reading_offset = false;
            next.due |= 1 << cfg.queues[q].topic;
            let mut outputs = self.retry_later(&mut next, cfg, me);
            outputs.extend(next.schedule(cfg, me));
            return Some((next, outputs));
        }
        let start = match (stored, cfg.protocol.consume_from) {
            (NO_OFFSET, ConsumeFrom::First) => 0,
            // The broker answers 0 while the first message is in memory;
            // otherwise the client starts at the queue's max offset.
            (NO_OFFSET, ConsumeFrom::Last) if in_memory => 0,
            (NO_OFFSET, ConsumeFrom::Last) => cfg.sizes.messages as u8,
            (offset, _) => offset,
        };
        next.queues[q] = ProcessQueue {
            reading_offset: false,
            cursor: start,
            ..pq
        };
        Some((next, Vec::new()))
    }

    /// The process dies: nothing is sent, and each broker's scan
    /// (`scanNotActiveChannel`) finds the silence 120 s later, which the
    /// model marks on each connection after its last heartbeat.
    fn crash(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::DisarmAll];
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::SilenceExpired {
            epoch,
            alive: false,
        }));
        (Self::empty(Phase::Crashed), outputs)
    }

    /// The process dies on a live host: the kernel closes its connections,
    /// which every broker sees at once (`doChannelCloseEvent`).
    fn kill(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::DisarmAll];
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::ChannelClosed { epoch }));
        (Self::empty(Phase::Crashed), outputs)
    }

    /// A pause (a long GC) or a network blip of over 120 s: each broker's
    /// scan expires it, silently, and closes its channel. It knows nothing
    /// yet, and keeps its queues.
    fn pause(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let expired = self.broadcast(cfg, me, |epoch| Message::SilenceExpired {
            epoch,
            alive: true,
        });
        (*self, expired)
    }

    /// It sees a broker close its connection: a question in flight there
    /// gets no answer (the round ends and counts as balanced), and its next
    /// request opens a new connection (`Connect`).
    fn connection_closed(&self, cfg: &Config, me: usize, broker: u8) -> (Self, Vec<Output>) {
        let mut next = Self {
            epochs: with_epoch(self.epochs, broker, self.epoch(broker) + 1),
            ..*self
        };
        let mut outputs = Vec::new();
        next.lock_calls_lost(cfg, broker);
        if self.querying.is_some_and(|q| q.broker == broker) {
            next.querying = None;
            outputs.extend(self.retry_later(&mut next, cfg, me));
        }
        if next.busy() != self.busy() {
            outputs.extend(next.schedule(cfg, me));
        }
        if next.target_set(cfg, me) & 1 << broker != 0 {
            outputs.push(Output::Arm(Timer::Connect { broker }));
        }
        (next, outputs)
    }

    /// `updateTopicRouteInfoFromNameServer` at start: an idle consumer caches
    /// the route too.
    fn cache_route(&self, route: Route) -> Step<Self> {
        (route != self.route).then(|| {
            let next = Self { route, ..*self };
            (next, Vec::new())
        })
    }

    /// `updateTopicRouteInfoFromNameServer` sees a changed route: cached, and
    /// acted on at the next rebalance, like a wake-up. Brokers follow the
    /// route (`cleanOfflineBroker`): it stops talking to those the route no
    /// longer lists (their scans expire it 120 s later) and connects to
    /// those it newly lists.
    fn route_changed(&self, cfg: &Config, me: usize, route: Route) -> (Self, Vec<Output>) {
        let mut next = Self { route, ..*self };
        let before = self.target_set(cfg, me);
        let after = next.target_set(cfg, me);
        let mut outputs = Vec::new();
        for broker in members_of(u64::from(before & !after)).map(|b| b as u8) {
            outputs.push(Output::Send(
                Peer::Broker(broker),
                Message::SilenceExpired {
                    epoch: self.epoch(broker),
                    alive: false,
                },
            ));
            outputs.push(Output::Disarm(Timer::Rebalance { broker }));
            outputs.push(Output::Disarm(Timer::Connect { broker }));
            // The next connection there is a new one.
            next.epochs = with_epoch(next.epochs, broker, self.epoch(broker) + 1);
            next.lock_calls_lost(cfg, broker);
        }
        // A new queue's lock call lost there ends the round unbalanced: the
        // next round is scheduled, as after a closed connection.
        let rescheduled = next.busy() != self.busy();
        if rescheduled {
            outputs.extend(next.schedule(cfg, me));
        }
        for broker in members_of(u64::from(after & !before)).map(|b| b as u8) {
            outputs.push(Output::Arm(Timer::Connect { broker }));
            if !rescheduled && next.due != 0 && next.querying.is_none() {
                outputs.push(Output::Arm(Timer::Rebalance { broker }));
            }
        }
        match next.wake(cfg, me) {
            Some((woken, more)) => {
                outputs.extend(more);
                (woken, outputs)
            }
            None => (next, outputs),
        }
    }

    /// `MQClientInstance.sendHeartbeatToAllBrokerWithLock`, every 30 s: its
    /// subscription to every broker it talks to.
    fn heartbeat(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let topics = self.topics;
        let mut outputs: Vec<Output> = self
            .targets(cfg, me)
            .map(|b| {
                let epoch = self.epoch(b);
                Output::SendPeriodic(Peer::Broker(b), Message::Heartbeat { epoch, topics })
            })
            .collect();
        outputs.push(Output::Arm(Timer::Heartbeat));
        (*self, outputs)
    }

    /// `DefaultMQPushConsumerImpl.subscribe` or `unsubscribe` at runtime, on
    /// the last topic: a subscription heartbeats every broker at once and
    /// the topic is rebalanced at the next round; an unsubscription waits
    /// for the next periodic heartbeat, and the topic's queues are dropped
    /// at the next round (`truncateMessageQueueNotMyTopic`).
    fn resubscribe(&self, cfg: &Config, me: usize) -> Step<Self> {
        let last: u8 = 1 << (cfg.sizes.topics - 1);
        let subscribing = self.topics & last == 0;
        let topics = self.topics ^ last;
        if topics == 0 {
            return None;
        }
        let mut next = Self { topics, ..*self };
        let mut outputs = Vec::new();
        if subscribing {
            outputs.extend(next.broadcast(cfg, me, |epoch| Message::Heartbeat { epoch, topics }));
        } else {
            next.views[last.trailing_zeros() as usize] = None;
            next.due &= topics;
        }
        match next.wake(cfg, me) {
            Some((woken, more)) => {
                outputs.extend(more);
                Some((woken, outputs))
            }
            None => Some((next, outputs)),
        }
    }

    /// A new connection to `broker` (`onChannelActive`): heartbeat there at
    /// once, then rebalance.
    fn connect(&self, cfg: &Config, me: usize, broker: u8) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::Send(
            Peer::Broker(broker),
            Message::Heartbeat {
                epoch: self.epoch(broker),
                topics: self.topics,
            },
        )];
        match self.wake(cfg, me) {
            Some((woken, more)) => {
                outputs.extend(more);
                (woken, outputs)
            }
            None => (*self, outputs),
        }
    }

    /// A route poll that fails (`updateTopicRouteInfoFromNameServer` cannot
    /// reach the name server): the cached route stays, and a later poll
    /// returns the new one.
    fn miss_route(&self, me: usize, route: Route) -> (Self, Vec<Output>) {
        let next = Self {
            faults: self.faults.without(Fault::MissRoute),
            ..*self
        };
        let later = Message::LaterPoll { route };
        (next, vec![Output::Send(Peer::Consumer(me as u8), later)])
    }

    /// A `NOTIFY_CONSUMER_IDS_CHANGED` lost on the way (one-way): the
    /// consumer learns at its periodic tick instead.
    fn lose_notification(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut next = Self {
            faults: self.faults.without(Fault::LoseNotification),
            ..*self
        };
        let outputs = self.retry_later(&mut next, cfg, me);
        (next, outputs)
    }

    /// `RebalanceService.wakeup`: every subscribed topic is due again.
    /// Wake-ups merge, so one that finds everything due changes nothing.
    fn wake(&self, cfg: &Config, me: usize) -> Step<Self> {
        let due = self.due | self.topics;
        if due == self.due {
            return None;
        }
        let next = Self { due, ..*self };
        let outputs = if self.due == 0 && self.querying.is_none() {
            next.schedule(cfg, me)
        } else {
            Vec::new()
        };
        Some((next, outputs))
    }

    /// `rebalanceByTopic` with the broker's answer: the strategy through
    /// the allocation crate, on `route`'s queues and `members` (the
    /// consumer's own route, or with server-side assignment the broker's),
    /// then `updateProcessQueueTableInRebalance` through its `plan_update`
    /// (drop what is no longer allocated, add what is new).
    fn allocate(
        &self,
        cfg: &Config,
        me: usize,
        topic: usize,
        members: ConsumerSet,
        route: Route,
    ) -> (Self, Vec<Output>) {
        let mut next = Self {
            querying: None,
            ..*self
        };
        // A failed allocation is logged and the round ends unchanged.
        if let Some(allocated) = cfg.allocate(route, topic, members, me) {
            let owned: Vec<usize> = members_of(self.owned & cfg.topic_queues(topic)).collect();
            let wanted: Vec<usize> = members_of(allocated).collect();
            let plan = plan_update(&owned, &wanted);
            let dropped = plan.drop.iter().fold(0, |set, q| set | 1 << q);
            let added = plan.add.iter().fold(0, |set, q| set | 1 << q);
            next.owned = (self.owned & !dropped) | added;
            next.views[topic] = Some(members);
        }
        // `truncateMessageQueueNotMyTopic`: queues of topics it no longer
        // subscribes to go at the end of the round.
        next.owned &= self
            .subscribed()
            .fold(0, |set, t| set | cfg.topic_queues(t));
        let mut outputs = Vec::new();
        if cfg.messages() {
            outputs.extend(next.hand_over(cfg, me, self.owned));
        }
        outputs.extend(next.schedule(cfg, me));
        (next, outputs)
    }

    /// `updateProcessQueueTableInRebalance` with messages: a dropped queue's
    /// offset is persisted (one-way, `removeUnnecessaryMessageQueue`) and its
    /// running batch, if any, finishes unrecorded; a new queue's offset is
    /// read from its broker before it is consumed. Consuming orderly, a
    /// dropped queue stays in the table until it is unlocked, and a new one
    /// enters it only once locked.
    fn hand_over(&mut self, cfg: &Config, me: usize, before: QueueSet) -> Vec<Output> {
        let mut outputs = Vec::new();
        for q in members_of(before & !self.owned) {
            if let Some((broker, msg)) = self.offset_update(cfg, me, q) {
                if self.faults.contains(Fault::LosePersist) {
                    self.faults.remove(Fault::LosePersist);
                } else {
                    outputs.push(Output::Send(broker, msg));
                }
            }
            let pq = self.queues[q];
            self.queues[q] = if cfg.orderly().is_some() {
                ProcessQueue {
                    dropped: true,
                    ..pq
                }
            } else {
                ProcessQueue {
                    from: pq.from,
                    to: pq.to,
                    ..ProcessQueue::default()
                }
            };
        }
        let Some(timing) = cfg.orderly() else {
            for q in members_of(self.owned & !before) {
                outputs.push(self.read_offset(cfg, q));
            }
            return outputs;
        };
        // A queue allocated again while still dropped stays dropped: the
        // table has it, so it is not added, until its pulls have stopped for
        // the pull expiry; then it is removed and added afresh.
        let dropped = u64::from(self.dropped());
        let stuck = self.owned & dropped;
        let expired = members_of(stuck)
            .filter(|&q| self.queues[q].idle_age >= timing.pull_expiry)
            .fold(0, |set, q| set | 1 << q);
        let mut added = self.owned & !before & !dropped;
        self.owned &= !dropped & !added;
        let mut waiting = false;
        for q in members_of(dropped & !stuck | expired) {
            // `removeUnnecessaryMessageQueue` persists at every try.
            if before & 1 << q == 0 {
                if let Some((broker, msg)) = self.offset_update(cfg, me, q) {
                    outputs.push(Output::SendPeriodic(broker, msg));
                }
            }
            if !self.try_remove(cfg, me, q, timing, &mut outputs) {
                waiting = true;
            } else if expired & 1 << q != 0 {
                added |= 1 << q;
            }
        }
        if waiting {
            let now = *self;
            outputs.extend(now.retry_later(self, cfg, me));
        }
        let added = added as u8;
        let asked = if self.faults.contains(Fault::FailLocks) {
            0
        } else {
            self.ask_locks(cfg, me, added, &mut outputs)
        };
        self.adding |= asked;
        if added & !asked != 0 {
            // `lock` failed: the round is not balanced (`rebalanceLater`).
            self.due |= self.topics;
        }
        outputs
    }

    /// `RebalancePushImpl.tryRemoveOrderMessageQueue`: a dropped queue is
    /// unlocked (one-way) and leaves the table when no batch runs, or
    /// without waiting for it once `unlock_delay` has passed since its last
    /// lock. Otherwise it stays, to be tried again at the next round.
    fn try_remove(
        &mut self,
        cfg: &Config,
        me: usize,
        q: usize,
        timing: &LockTiming,
        outputs: &mut Vec<Output>,
    ) -> bool {
        let pq = self.queues[q];
        let forced = pq.lock_age > timing.unlock_delay;
        if pq.running() && !forced {
            return false;
        }
        // The batch, if any, goes on.
        self.queues[q] = ProcessQueue {
            from: pq.from,
            to: pq.to,
            batch_age: pq.batch_age,
            ..ProcessQueue::default()
        };
        let broker = cfg.broker_of(q);
        if self.faults.contains(Fault::LoseUnlock) {
            self.faults.remove(Fault::LoseUnlock);
        } else if self.target_set(cfg, me) & 1 << broker != 0 {
            let unlock = Message::UnlockBatch {
                queues: 1 << q,
                epoch: self.epoch(broker),
            };
            outputs.push(Output::Send(Peer::Broker(broker), unlock));
        }
        true
    }

    /// `lockBatchMQ` for `queues`, one call per broker it can reach; the
    /// queues asked for, now in flight.
    fn ask_locks(&mut self, cfg: &Config, me: usize, queues: u8, outputs: &mut Vec<Output>) -> u8 {
        let mut asked = 0;
        for broker in self.targets(cfg, me) {
            let of_broker = queues & cfg.broker_queues(usize::from(broker)) as u8;
            if of_broker != 0 {
                let epoch = self.epoch(broker);
                let lock = Message::LockBatch {
                    queues: of_broker,
                    epoch,
                };
                outputs.push(Output::Send(Peer::Broker(broker), lock));
                asked |= of_broker;
            }
        }
        self.locking |= asked;
        asked
    }

    /// A broker's answer to a lock call: a new queue enters the table
    /// (its offset is read next) or, refused, waits for the next round
    /// (`rebalanceLater`); a queue in the table is locked again, or no
    /// longer (`lockAll`).
    fn lock_answered(
        &self,
        cfg: &Config,
        me: usize,
        asked: u8,
        granted: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        let mut outputs = Vec::new();
        let answered = asked & self.locking;
        next.locking &= !answered;
        next.adding &= !answered;
        for q in members_of(u64::from(answered)) {
            let ok = granted & 1 << q != 0;
            if self.adding & 1 << q != 0 {
                if ok {
                    next.owned |= 1 << q;
                    outputs.push(next.read_offset(cfg, q));
                    next.queues[q].locked = true;
                } else {
                    next.due |= next.topics;
                }
            } else if self.table() & 1 << q != 0 {
                let pq = &mut next.queues[q];
                pq.locked = ok;
                if ok {
                    pq.lock_age = 0;
                }
            }
        }
        outputs.extend(next.schedule(cfg, me));
        (next, outputs)
    }

    /// `lockMQPeriodically`, when its clock says the renewal is due: every
    /// queue of its table that is not dropped is locked again.
    fn lock_all(&self, cfg: &Config, me: usize) -> Step<Self> {
        let timing = cfg.orderly()?;
        if self.renew_age < timing.renew {
            return None;
        }
        let mut next = Self {
            renew_age: 0,
            ..*self
        };
        let mut outputs = vec![Output::Arm(Timer::LockAll)];
        if !self.faults.contains(Fault::FailLocks) {
            let queues = self.owned as u8 & !self.locking;
            next.ask_locks(cfg, me, queues, &mut outputs);
        }
        Some((next, outputs))
    }

    /// A queue starts being consumed: its offset is read from its broker
    /// first. A batch still running from an earlier hold goes on.
    fn read_offset(&mut self, cfg: &Config, q: usize) -> Output {
        let pq = self.queues[q];
        self.queues[q] = ProcessQueue {
            from: pq.from,
            to: pq.to,
            batch_age: pq.batch_age,
            ..ProcessQueue::reading()
        };
        let broker = cfg.broker_of(q);
        Output::Send(
            Peer::Broker(broker),
            Message::QueryOffset {
                queue: q as u8,
                epoch: self.epoch(broker),
            },
        )
    }

    /// One tick of real time, orderly consumption only: its clock advances
    /// (unless `own_clock` is false: it falls behind by a tick), and with it
    /// the age of its locks and of its lock renewal; running batches age.
    pub fn elapse(&self, cfg: &Config, own_clock: bool) -> Self {
        let Some(timing) = cfg.orderly() else {
            return *self;
        };
        if self.phase != Phase::Running {
            return *self;
        }
        let mut next = *self;
        let table = self.table();
        if own_clock {
            next.renew_age = (self.renew_age + 1).min(timing.renew);
            let cap = timing.validity.max(timing.unlock_delay) + 1;
            for q in members_of(u64::from(table)) {
                next.queues[q].lock_age = (self.queues[q].lock_age + 1).min(cap);
            }
        } else {
            next.lag += 1;
        }
        for pq in next.queues.iter_mut() {
            if pq.running() {
                pq.batch_age = (pq.batch_age + 1).min(timing.batch);
            }
            if pq.dropped {
                pq.idle_age = (pq.idle_age + 1).min(timing.pull_expiry);
            }
        }
        next
    }

    /// A timed step is due, which time may not pass: its lock renewal, or
    /// the end of a batch that has run as long as a batch runs.
    pub fn deadline(&self, cfg: &Config) -> bool {
        cfg.orderly().is_some_and(|timing| {
            self.phase == Phase::Running
                && (self.renew_age >= timing.renew
                    || self
                        .queues
                        .iter()
                        .any(|pq| pq.running() && pq.batch_age >= timing.batch))
        })
    }

    /// Queues in its process-queue table: those it consumes and, orderly,
    /// those dropped but not yet unlocked (bit set of queue indices).
    pub fn table(&self) -> u8 {
        self.owned as u8 | self.dropped()
    }

    /// Orderly: queues dropped but not yet unlocked.
    pub fn dropped(&self) -> u8 {
        (0..self.queues.len())
            .filter(|&q| self.queues[q].dropped)
            .fold(0, |set, q| set | 1 << q)
    }

    /// Whether an answer from `broker` about `topic` on connection `epoch`
    /// is the one its rebalance waits for.
    fn answers(&self, broker: Option<u8>, topic: u8, epoch: u8) -> bool {
        broker.is_some_and(|broker| {
            self.querying
                == Some(Query {
                    topic,
                    broker,
                    epoch,
                })
        })
    }

    /// The rebalance service is blocked on a call: a member query, or
    /// (orderly) the lock of a queue it is adding. The renewal (`lockAll`)
    /// and a pull's `lockOneMQ` run on other threads and block no round.
    fn busy(&self) -> bool {
        self.querying.is_some() || self.adding != 0
    }

    /// Lock calls in flight to `broker` that will get no answer (its
    /// connection closed or dropped): new queues wait for the next round.
    fn lock_calls_lost(&mut self, cfg: &Config, broker: u8) {
        let lost = self.locking & cfg.broker_queues(usize::from(broker)) as u8;
        self.locking &= !lost;
        if self.adding & lost != 0 {
            self.adding &= !lost;
            self.due |= self.topics;
        }
    }

    /// Arms the rebalance turn when a topic is due: one timer per broker
    /// it can ask, for RocketMQ picks one at random. Unreachable brokers
    /// are left out: asking one ends the round unchanged, which in a
    /// timeless model is the same as not asking yet.
    fn schedule(&self, cfg: &Config, me: usize) -> Vec<Output> {
        if self.due == 0 || self.busy() {
            return Vec::new();
        }
        self.targets(cfg, me)
            .map(|broker| Output::Arm(Timer::Rebalance { broker }))
            .collect()
    }

    /// What a consumer that missed a change (a lost notification, a failed
    /// query) still has: its periodic tick, which will find the change.
    /// Without the tick modelled, the tick is a wake-up the consumer
    /// receives later (a message to itself, delivered in any interleaving).
    /// With it, the tick is already armed, and `next` is woken as the tick
    /// would wake it: in a timeless model the tick's round and the next one
    /// are the same "later", and a state that owes a round is not one at
    /// rest. Orderly
    /// consumption retries a dropped queue's unlock at every round until it
    /// succeeds: one such wake-up on its way is enough, and with the tick
    /// the renewal and the clock repeat the work.
    fn retry_later(&self, next: &mut Self, cfg: &Config, me: usize) -> Vec<Output> {
        let to_self = Peer::Consumer(me as u8);
        if cfg.periodic_ticks {
            if cfg.orderly().is_some() {
                return Vec::new();
            }
            let Some((woken, outputs)) = next.wake(cfg, me) else {
                return Vec::new();
            };
            *next = woken;
            outputs
        } else if cfg.orderly().is_some() {
            vec![Output::SendPeriodic(to_self, Message::PeriodicTick)]
        } else {
            vec![Output::Send(to_self, Message::PeriodicTick)]
        }
    }

    /// The timers and faults a running consumer has besides its rebalance
    /// turn: the periodic ones its layers need, and the faults its budgets
    /// give it.
    fn environment_timers(&self, cfg: &Config, me: usize) -> Vec<Output> {
        let spec = &cfg.consumers[me];
        let timers = [
            (cfg.periodic_ticks, Timer::Tick),
            (cfg.protocol.subscription_table, Timer::Heartbeat),
            (cfg.messages(), Timer::Persist),
            (cfg.orderly().is_some(), Timer::LockAll),
        ]
        .into_iter()
        .filter(|(armed, _)| *armed)
        .map(|(_, timer)| timer)
        .chain(consumption_timers(cfg))
        .map(Output::Arm);
        let faults = spec
            .faults
            .without(Fault::Join)
            .iter()
            .map(Output::ArmFault);
        timers.chain(faults).collect()
    }

    /// A consumer that holds nothing: not started yet, or stopped (a stopped
    /// consumer keeps nothing, so all stopped states are equal).
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

/// With messages, the pull and finish of every queue: armed for good, each
/// a step only when it can happen.
fn consumption_timers(cfg: &Config) -> impl Iterator<Item = Timer> {
    let queues = if cfg.messages() { cfg.queues.len() } else { 0 };
    (0..queues as u8).flat_map(|queue| [Timer::Pull { queue }, Timer::Done { queue }])
}

/// `epochs` with `broker`'s epoch set to `epoch`.
fn with_epoch(epochs: u32, broker: u8, epoch: u8) -> u32 {
    let shift = 4 * u32::from(broker);
    epochs & !(0xF << shift) | u32::from(epoch & 0xF) << shift
}
