//! Membership and rebalance: the consumer joins and leaves its group,
//! heartbeats the brokers of its route and follows that route, asks one
//! broker for the group's members and allocates its share
//! (`RebalanceService`, `RebalanceImpl`, `MQClientInstance`).

use super::{locks, with_epoch, ConsumerState, Phase, Query};
use crate::config::{members_of, Allocator, Call, Config, ConsumerSet, Fault, Route, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, Timer};
use crate::protocol::process_queue::ProcessQueue;
use rocketmq_rebalance::plan_update;

impl ConsumerState {
    /// `DefaultMQPushConsumerImpl.start`: heartbeat to every broker, then
    /// `rebalanceImmediately` (every subscribed topic is due).
    pub(super) fn join(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
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

    /// `DefaultMQPushConsumerImpl.shutdown`: drops every process queue and
    /// sends `UNREGISTER_CLIENT` to every broker (`unregisterClientWithLock`).
    /// It does not wait for the batches the application is consuming
    /// (`awaitTerminationMillisWhenShutdown` is 0 by default): it
    /// interrupts their threads (`shutdownNow`), before the unlock and the
    /// persist, which records each batch's first message as the offset. A
    /// listener that ignores the interrupt runs its batch on to its end; one
    /// that stops ends it there, unconsumed. A FIFO group's gRPC client
    /// waits for its batches instead ([`Self::batches_awaited`]).
    pub(super) fn shutdown(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let (awaited, ended) = self.batches_awaited(cfg, me);
        let mut outputs = vec![Output::DisarmAll];
        outputs.extend(ended);
        awaited.shut_down(cfg, me, outputs)
    }

    /// The rest of the shutdown, once the batches it waits for (if any)
    /// have ended.
    fn shut_down(&self, cfg: &Config, me: usize, mut outputs: Vec<Output>) -> (Self, Vec<Output>) {
        // The Go client before v2.1.2 unlocked nothing at shutdown.
        if !cfg.has(Variant::GoShutdownKeepsLocks) {
            outputs.extend(self.unlock_all(cfg, me));
        }
        // `persistConsumerOffset` first.
        if !self.loses_persist_on_shutdown(cfg, me) {
            outputs.extend(
                self.offset_updates(cfg, me)
                    .map(|(broker, msg)| Output::Send(broker, msg)),
            );
        }
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::Unregister { epoch }));
        let mut left = Self::empty(Phase::Left);
        let outlives = !cfg.consumers[me].interruptible;
        // A batch stopped unconsumed is never acknowledged.
        if !outlives {
            outputs.extend(self.handles_expire(cfg, false));
        }
        for (q, pq) in self.queues.iter().enumerate() {
            if let Some(batch) = pq.batch_alone().filter(|_| outlives) {
                left.queues[q] = batch;
                outputs.push(Output::Arm(Timer::Done { queue: q as u8 }));
            }
        }
        (left, outputs)
    }

    /// After its shutdown, a batch the application was still consuming
    /// ends: its messages were delivered, and nothing is committed.
    /// With POP its result is not processed (its process queue was
    /// dropped): the handle expires.
    pub(super) fn outlived_batch_ends(&self, cfg: &Config, q: usize) -> Step<Self> {
        let pq = self.queues[q];
        pq.running().then(|| {
            let mut next = *self;
            let mut outputs = vec![Output::Delivered {
                queue: q as u8,
                from: pq.from,
                to: pq.to,
            }];
            if cfg.pops() {
                outputs.push(super::pop::expiry(
                    cfg,
                    q,
                    [pq.from, pq.to, pq.attempt],
                    false,
                ));
            }
            next.queues[q] = ProcessQueue::default();
            (next, outputs)
        })
    }

    /// The process dies: nothing is sent, and each broker's scan
    /// (`scanNotActiveChannel`) finds the silence 120 s later, which the
    /// model marks on each connection after its last heartbeat.
    pub(super) fn crash(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::DisarmAll];
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::SilenceExpired {
            epoch,
            alive: false,
        }));
        outputs.extend(self.handles_expire(cfg, false));
        (Self::empty(Phase::Crashed), outputs)
    }

    /// The process dies on a live host: the kernel closes its connections,
    /// which every broker sees at once (`doChannelCloseEvent`).
    pub(super) fn kill(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut outputs = vec![Output::DisarmAll];
        outputs.extend(self.broadcast(cfg, me, |epoch| Message::ChannelClosed { epoch }));
        outputs.extend(self.handles_expire(cfg, false));
        (Self::empty(Phase::Crashed), outputs)
    }

    /// A pause (a long GC) or a network blip of over 120 s: each broker's
    /// scan expires it, silently, and closes its channel. It knows nothing
    /// yet, and keeps its queues.
    pub(super) fn pause(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let expired = self.broadcast(cfg, me, |epoch| Message::SilenceExpired {
            epoch,
            alive: true,
        });
        (*self, expired)
    }

    /// `MQClientInstance.sendHeartbeatToAllBrokerWithLock`, every 30 s: its
    /// subscription to every broker it talks to.
    pub(super) fn heartbeat(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
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

    /// Its next request to `broker`, its rebalance's, opens a new
    /// connection there: the rebalance is woken, and the connection's
    /// heartbeat comes from the client's event thread
    /// ([`ConsumerState::channel_active`]), so the member query may reach
    /// the broker before it (the broker's processors run them apart).
    pub(super) fn connect(&self, cfg: &Config, me: usize, broker: u8) -> (Self, Vec<Output>) {
        let outputs = vec![Output::Arm(Timer::ChannelActive { broker })];
        self.woken_with(cfg, me, outputs)
    }

    /// `onChannelActive` on the new connection to `broker`:
    /// `sendHeartbeatToBroker` there, then `rebalanceImmediately`.
    /// With a second channel pending ([`Fault::SecondChannel`]), the
    /// client opens another beside it, which the broker registers after
    /// the heartbeat (and expires, silent, some time after that).
    pub(super) fn channel_active(
        &self,
        cfg: &Config,
        me: usize,
        broker: u8,
    ) -> (Self, Vec<Output>) {
        let epoch = self.epoch(broker);
        let to = Peer::Broker(broker);
        let mut outputs = vec![Output::Send(
            to,
            Message::Heartbeat {
                epoch,
                topics: self.topics,
            },
        )];
        let mut next = *self;
        if self.faults.contains(Fault::SecondChannel) {
            next.faults = self.faults.without(Fault::SecondChannel);
            outputs.push(Output::Send(to, Message::SecondChannel { epoch }));
        }
        next.woken_with(cfg, me, outputs)
    }

    /// `outputs`, then a wake-up of its rebalance.
    fn woken_with(&self, cfg: &Config, me: usize, mut outputs: Vec<Output>) -> (Self, Vec<Output>) {
        match self.wake(cfg, me) {
            Some((woken, more)) => {
                outputs.extend(more);
                (woken, outputs)
            }
            None => (*self, outputs),
        }
    }

    /// It sees a broker close its connection: its calls there fail, and
    /// its next request opens a new connection, the next epoch.
    pub(super) fn connection_closed(
        &self,
        cfg: &Config,
        me: usize,
        broker: u8,
    ) -> (Self, Vec<Output>) {
        let reopened = Self {
            epochs: with_epoch(self.epochs, broker, self.epoch(broker) + 1),
            ..*self
        };
        self.calls_fail(reopened, cfg, me, broker)
    }

    /// Its request could not connect to a stopped broker: its calls there
    /// fail, and its next request tries again (nothing was opened, so on
    /// the same epoch).
    pub(super) fn connection_refused(
        &self,
        cfg: &Config,
        me: usize,
        broker: u8,
    ) -> (Self, Vec<Output>) {
        self.calls_fail(*self, cfg, me, broker)
    }

    /// Its calls to `broker` fail, `next` being its state with the
    /// connection's fate: a question in flight there gets no answer (the
    /// round ends and counts as balanced), lock calls none either, the
    /// other calls fail with their retries
    /// ([`ConsumerState::requests_lost`]), and its next request there
    /// connects (`Connect`).
    fn calls_fail(
        &self,
        mut next: Self,
        cfg: &Config,
        me: usize,
        broker: u8,
    ) -> (Self, Vec<Output>) {
        let mut outputs = next.lose_calls(cfg, me, broker);
        if self.querying.is_some_and(|q| q.broker == broker) {
            outputs.extend(self.fail_query(&mut next, cfg, me));
        }
        if self.rescheduled(&next) {
            outputs.extend(next.schedule(cfg, me));
        }
        if next.target_set(cfg, me) & 1 << broker != 0 {
            outputs.push(Output::Arm(Timer::Connect { broker }));
        }
        (next, outputs)
    }

    /// Its member query, on a connection it no longer uses, fails: the
    /// round ends as in [`ConsumerState::calls_fail`], and nothing else
    /// it waits on was on that connection.
    pub(super) fn query_failed(&self, cfg: &Config, me: usize) -> Step<Self> {
        let mut next = *self;
        let mut outputs = self.fail_query(&mut next, cfg, me);
        if next == *self {
            return None;
        }
        if self.rescheduled(&next) {
            outputs.extend(next.schedule(cfg, me));
        }
        Some((next, outputs))
    }

    /// Its member query fails in `next` (unless the query's failure is
    /// not modelled): no answer, so the round ends and counts as
    /// balanced, and it runs again later.
    fn fail_query(&self, next: &mut Self, cfg: &Config, me: usize) -> Vec<Output> {
        if !cfg.protocol.calls_fail.contains(Call::Query) {
            return Vec::new();
        }
        next.querying = None;
        self.retry_later(next, cfg, me)
    }

    /// Whether `next` changes what its rebalance timer waits on (whether
    /// it is busy, or a round is due): then the timer is armed again.
    fn rescheduled(&self, next: &Self) -> bool {
        next.busy() != self.busy() || next.due != self.due
    }

    /// Its lock calls and requests in flight to `broker` are lost.
    fn lose_calls(&mut self, cfg: &Config, me: usize, broker: u8) -> Vec<Output> {
        if cfg.protocol.calls_fail.contains(Call::Lock) {
            self.lock_calls_lost(cfg, broker);
        }
        self.requests_lost(cfg, me, broker)
    }

    /// `updateTopicRouteInfoFromNameServer` at start: an idle consumer caches
    /// the route too.
    pub(super) fn cache_route(&self, route: Route) -> Step<Self> {
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
    pub(super) fn route_changed(
        &self,
        cfg: &Config,
        me: usize,
        route: Route,
    ) -> (Self, Vec<Output>) {
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
            outputs.push(Output::Disarm(Timer::ChannelActive { broker }));
            // The next connection there is a new one.
            next.epochs = with_epoch(next.epochs, broker, self.epoch(broker) + 1);
            outputs.extend(next.lose_calls(cfg, me, broker));
        }
        // A new queue's lock call lost there ends the round unbalanced: the
        // next round is scheduled, as after a closed connection.
        let rescheduled = self.rescheduled(&next);
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

    /// A route poll that fails (`updateTopicRouteInfoFromNameServer` cannot
    /// reach the name server): the cached route stays, and a later poll
    /// returns the new one.
    pub(super) fn miss_route(&self, me: usize, route: Route) -> (Self, Vec<Output>) {
        let next = Self {
            faults: self.faults.without(Fault::MissRoute),
            ..*self
        };
        let later = Message::LaterPoll { route };
        (next, vec![Output::Send(Peer::Consumer(me as u8), later)])
    }

    /// `DefaultMQPushConsumerImpl.subscribe` or `unsubscribe` at runtime, on
    /// the last topic: a subscription heartbeats every broker at once and
    /// the topic is rebalanced at the next round; an unsubscription waits
    /// for the next periodic heartbeat, and the topic's queues are dropped
    /// at the next round (`truncateMessageQueueNotMyTopic`).
    pub(super) fn resubscribe(&self, cfg: &Config, me: usize) -> Step<Self> {
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

    /// `RebalanceService.wakeup`: every subscribed topic is due again.
    /// Wake-ups merge, so one that finds everything due changes nothing.
    pub(super) fn wake(&self, cfg: &Config, me: usize) -> Step<Self> {
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

    /// `RebalanceService.run`'s periodic wake-up (every 20 s): wakes an idle
    /// rebalance service; a busy one will look again when it finishes.
    pub(super) fn periodic_rebalance(&self, cfg: &Config, me: usize) -> Step<Self> {
        if self.due != 0 || self.busy() {
            return None;
        }
        let (next, mut outputs) = self.wake(cfg, me)?;
        outputs.push(Output::Arm(Timer::PeriodicRebalance));
        Some((next, outputs))
    }

    /// A `NOTIFY_CONSUMER_IDS_CHANGED` lost on the way (one-way): the
    /// consumer learns at its periodic rebalance instead.
    pub(super) fn lose_notification(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut next = Self {
            faults: self.faults.without(Fault::LoseNotification),
            ..*self
        };
        let outputs = self.retry_later(&mut next, cfg, me);
        (next, outputs)
    }

    /// `RebalanceImpl.rebalanceByTopic` up to `findConsumerIdList`: asks
    /// `broker` for the group's members for the first due topic, in the
    /// order `doRebalance` walks its subscription table. A query the
    /// environment made fail returns nothing.
    pub(super) fn rebalance(&self, cfg: &Config, me: usize, broker: u8) -> Step<Self> {
        if self.busy() || self.due == 0 {
            return None;
        }
        if self.faults.contains(Fault::FailQuery) {
            return Some(self.query_fails(cfg, me));
        }
        let topic = cfg.first_due(self.due);
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
            Allocator::Client => Message::GetConsumerList { topic, epoch },
            Allocator::Server => Message::QueryAssignment { topic, epoch },
        };
        outputs.push(Output::Send(Peer::Broker(broker), question));
        Some((next, outputs))
    }

    /// `rebalanceByTopic` when its broker cannot be reached: the call
    /// returns nothing and the round counts as balanced (the topic is no
    /// longer due); the periodic rebalance will look again.
    fn query_fails(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let topic = cfg.first_due(self.due);
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

    /// Whether an answer from `broker` about `topic` on connection `epoch`
    /// is the one its rebalance waits for.
    pub(super) fn answers(&self, broker: Option<u8>, topic: u8, epoch: u8) -> bool {
        broker.is_some_and(|broker| {
            self.querying
                == Some(Query {
                    topic,
                    broker,
                    epoch,
                })
        })
    }

    /// `rebalanceByTopic` with the broker's answer: the strategy through
    /// the allocation crate, on `route`'s queues (the consumer's own route,
    /// or with server-side assignment the broker's) and the broker's
    /// listing (its members, and those of them it lists twice), then `updateProcessQueueTableInRebalance` through its `plan_update`
    /// (drop what is no longer allocated, add what is new).
    pub(super) fn allocate(
        &self,
        cfg: &Config,
        me: usize,
        topic: usize,
        (members, twice): (ConsumerSet, ConsumerSet),
        route: Route,
    ) -> (Self, Vec<Output>) {
        let mut next = Self {
            querying: None,
            ..*self
        };
        // A failed allocation is logged and the round ends unchanged.
        if let Some(allocated) = cfg.allocate(route, topic, members, twice, me) {
            let owned: Vec<usize> = members_of(self.owned & cfg.topic_queues(topic)).collect();
            let wanted: Vec<usize> = members_of(allocated).collect();
            let plan = plan_update(&owned, &wanted);
            let dropped = plan.drop.iter().fold(0, |set, q| set | 1 << q);
            let added = plan.add.iter().fold(0, |set, q| set | 1 << q);
            next.owned = (self.owned & !dropped) | added;
            next.views[topic] = Some(members);
        }
        // `truncateMessageQueueNotMyTopic`: queues of topics it no longer
        // subscribes to go at the end of the round, apart from the hand-over
        // (no persist, no unlock).
        let mine = self
            .subscribed()
            .fold(0, |set, t| set | cfg.topic_queues(t));
        next.truncate_not_my_topic(cfg, mine);
        // Pulls stalled over 120 s: every queue of the topic still
        // allocated has expired (`isPullExpired`), and is dropped and added
        // afresh.
        // Before 5.3.3 the stall was an Error that ended the pull thread:
        // the queues added again are given to no one, and pulls never run.
        let expired = if self.faults.contains(Fault::StallPulls)
            && !cfg.has(Variant::PullThreadDiesOnError)
        {
            next.faults.remove(Fault::StallPulls);
            self.owned & next.owned & cfg.topic_queues(topic)
        } else {
            0
        };
        let mut outputs = next.hand_over(cfg, me, self.owned & mine, expired);
        outputs.extend(next.schedule(cfg, me));
        (next, outputs)
    }

    /// `QUERY_ASSIGNMENT`'s answer: allocated as a member list is, on the
    /// broker's route, which is recorded for the properties.
    pub(super) fn broker_allocation(
        &self,
        cfg: &Config,
        me: usize,
        topic: usize,
        listing: (ConsumerSet, ConsumerSet),
        route: Route,
    ) -> (Self, Vec<Output>) {
        let (mut next, outputs) = self.allocate(cfg, me, topic, listing, route);
        next.assigned[topic] = route;
        (next, outputs)
    }

    /// The rebalance service is blocked on a call: a member query, or
    /// (orderly) the lock of a queue it is adding. The renewal (`lockAll`)
    /// and a pull's `lockOneMQ` run on other threads and block no round.
    fn busy(&self) -> bool {
        self.querying.is_some() || self.adding != 0
    }

    /// Arms the rebalance turn when a topic is due: one timer per broker
    /// it can ask, for RocketMQ picks one at random. Unreachable brokers
    /// are left out: asking one ends the round unchanged, which in a
    /// timeless model is the same as not asking yet.
    pub(super) fn schedule(&self, cfg: &Config, me: usize) -> Vec<Output> {
        if self.due == 0 || self.busy() {
            return Vec::new();
        }
        self.targets(cfg, me)
            .map(|broker| Output::Arm(Timer::Rebalance { broker }))
            .collect()
    }

    /// What a consumer that missed a change (a lost notification, a failed
    /// query) still has: its periodic rebalance, which will find the
    /// change. Without the periodic rebalance modelled, it is a wake-up the
    /// consumer receives later (a message to itself, delivered in any
    /// interleaving). With it, its timer is already armed, and `next` is
    /// woken as the timer would wake it: in a timeless model that round and
    /// the next one are the same "later", and a state that owes a round is
    /// not one at rest. A retry the locks repeat (`locks::retries_repeat`)
    /// needs at most one wake-up on its way, and none with the periodic
    /// rebalance.
    pub(super) fn retry_later(&self, next: &mut Self, cfg: &Config, me: usize) -> Vec<Output> {
        let to_self = Peer::Consumer(me as u8);
        match (cfg.periodic_rebalance, locks::retries_repeat(cfg)) {
            (true, true) => Vec::new(),
            (true, false) => {
                let Some((woken, outputs)) = next.wake(cfg, me) else {
                    return Vec::new();
                };
                *next = woken;
                outputs
            }
            (false, true) => vec![Output::SendPeriodic(to_self, Message::LaterRebalance)],
            (false, false) => vec![Output::Send(to_self, Message::LaterRebalance)],
        }
    }
}
