//! The observer: folds the trace's events, in order, into what the group
//! looks like (who is running, who owns which queue, which batches run,
//! which locks each consumer trusts) and what it has shown so far. The
//! orchestrator's waits and the final outcome read the same fold.

use std::collections::{BTreeMap, BTreeSet};

use rocketmq_rebalance_properties::{double_owned, orphaned};

use crate::script::{Consumption, Script};
use crate::trace::{
    expired_entry, ConsumerState, Detail, Env, Event, GroupEvent, Kind, RequestCode, ServerState,
};

/// A consumer process's state as the trace shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    /// Not started yet.
    Idle,
    /// Started and running.
    Running,
    /// Stopped by `SIGSTOP`: alive, frozen, holding what it held.
    Paused,
    /// Shutting down (`c.life stopping`): it has dropped and unlocked its
    /// queues, as the model's leave does at once, while a batch its
    /// application runs goes on (the shutdown does not wait for it).
    Stopping,
    /// Killed (`kill -9`).
    Killed,
    /// Shut down gracefully.
    Left,
}

impl Life {
    /// Alive: running, paused (a paused process resumes where it was) or
    /// shutting down (its batches still run).
    pub fn alive(self) -> bool {
        matches!(self, Life::Running | Life::Paused | Life::Stopping)
    }
}

#[derive(Clone, Debug)]
struct Member {
    client: String,
    life: Life,
    allocated: bool,
    owned: BTreeSet<String>,
    cid_all: Vec<String>,
    rounds: u32,
    open: BTreeMap<String, u32>,
    trusted_until: BTreeMap<String, u64>,
    /// The brokers of its last route answer for the topic, once it has one.
    route: Option<BTreeSet<String>>,
    /// When that answer came.
    route_at: u64,
    /// It subscribes to the observed topic: only then does it rebalance it.
    /// Brokers list every member of the group whatever it subscribes to.
    subscribed: bool,
    /// Its process-queue table of the topic, as its last `c.mqchanged`
    /// showed it.
    table: BTreeSet<String>,
    /// When it last began to run (its start, or its continue).
    running_since: Option<u64>,
    /// When it was last killed or stopped, while it is.
    halted_at: Option<u64>,
}

impl Member {
    /// Running and subscribed to the topic: it allocates the topic's queues.
    fn allocates(&self) -> bool {
        self.life == Life::Running && self.subscribed
    }
}

/// When and where something was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sighting {
    /// The event's stamp (ns).
    pub t: u64,
    /// The queue (`broker-a:0`).
    pub queue: String,
    /// The consumers involved.
    pub who: Vec<String>,
}

/// A span in which a consumer owned a queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The consumer.
    pub consumer: String,
    /// From (ns).
    pub from: u64,
    /// Until (ns), `None` while it still owns it.
    pub until: Option<u64>,
}

/// The fold. See the module doc.
#[derive(Clone, Debug)]
pub struct Observer {
    topic: String,
    broker_queues: BTreeMap<String, Vec<String>>,
    running_brokers: BTreeSet<String>,
    /// Each broker's first registration with a name server since it last
    /// started: from then on the name servers route it.
    registered: BTreeMap<String, u64>,
    /// The brokers a restart has not brought back yet, each with whether it
    /// has started again: back once it has, and has registered since (a
    /// periodic registration between the restart's order and its stop
    /// does not count).
    restarting: BTreeMap<String, bool>,
    /// When each broker last began to stop: the name servers drop it then.
    stopped_at: BTreeMap<String, u64>,
    broker_members: BTreeMap<String, Vec<String>>,
    /// Channels (broker, address) the expiry scan has reported.
    scanned: BTreeSet<(String, String)>,
    members: BTreeMap<String, Member>,
    /// The trace records process-queue tables (`c.mqchanged`'s `table`;
    /// traces before 2026-12-04 have none).
    tables: bool,
    lock_validity_ns: u64,
    /// Whether transient hazards are counted yet: from the start, or from
    /// the first state that is the model's initial state, where the
    /// consumers that do not join start registered and balanced: settled,
    /// each allocation made with the list of the running consumers, and
    /// every broker listing them.
    counting: bool,
    /// Each queue that came to be owned by two live consumers, when and by
    /// whom (one sighting per episode).
    pub double_owned: Vec<Sighting>,
    /// Each queue of a running broker that came to be owned by no live
    /// consumer (once some consumer had allocated), one sighting per
    /// episode.
    pub orphaned: Vec<Sighting>,
    /// Each queue owned by two running consumers at rest (settled, and
    /// every broker listing what the consumers allocated with: the model's
    /// quiescence), one sighting per episode.
    pub rest_double: Vec<Sighting>,
    /// Each moment at rest that was not converged: a queue of a running
    /// broker owned by nobody (or `-` when the views were wrong instead).
    pub rest_unconverged: Vec<Sighting>,
    /// Each settled moment whose member lists disagree: the broker, and
    /// what it lists.
    pub rest_disagree: Vec<Sighting>,
    /// The first settled, converged state with every consumer started.
    pub full_convergence: Option<u64>,
    /// The first moment at rest (settled), converged or not.
    pub first_at_rest: Option<u64>,
    /// Each start of a batch on a queue where another live consumer has one
    /// running.
    pub consumed_by_two: Vec<Sighting>,
    /// Each lock granted on a queue while another live consumer still
    /// trusts its own lock on it.
    pub two_live_locks: Vec<Sighting>,
    /// Deliveries of each message (topic queue, offset); a POP consumer's
    /// message counts once its batch ends (consumed), as the model counts it.
    pub deliveries: BTreeMap<(String, i64), u32>,
    /// Whether the group's consumers pop (the script's `consumption`): they
    /// ask the brokers for their assignment (`QUERY_ASSIGNMENT`), and their
    /// batches name their messages by id.
    pub pop: bool,
    /// Each start of a POP batch with a message another consumer's batch
    /// still runs (`no message consumed by two at once`).
    pub message_by_two: Vec<Sighting>,
    /// The group's consumers are gRPC clients of a proxy (a FIFO group's
    /// always are): the proxy gives each every queue, whatever the members,
    /// and no broker lists them.
    pub proxied: bool,
    /// A FIFO group: the broker's block gives each queue to one consumer
    /// at a time, and a queue's messages are consumed in order.
    pub fifo: bool,
    /// Each start of a FIFO batch of a message while an earlier message of
    /// its queue was never consumed (`no message consumed before an
    /// earlier one`).
    pub out_of_order: Vec<Sighting>,
    /// Each FIFO message given to a consumer that had run since before
    /// the consumer holding it was killed or stopped with its delivery
    /// unfinished: the queue waited for that delivery's invisible time,
    /// though a live consumer popped it (`queue blocked by an abandoned
    /// pop`).
    pub abandoned_blocks: Vec<Sighting>,
    /// Each message whose latest delivery has not ended: its consumer.
    holders: BTreeMap<String, String>,
    /// Each message sent, by id: its queue and offset.
    sent_ids: BTreeMap<String, (String, i64)>,
    /// POP consumptions of messages whose `p.sent` has not been seen yet
    /// (the trace merges processes by stamp).
    unresolved: BTreeMap<String, u32>,
    /// Each POP message in a running batch, with the consumers running it.
    open_msgs: BTreeMap<String, BTreeSet<String>>,
    /// Messages sent (queue, offset).
    pub produced: BTreeSet<(String, i64)>,
    /// Per queue, the first offset its broker still stores after an
    /// eviction (`b.store`): the messages below it were deleted by the
    /// store, the script's stand-in for messages that left memory, and no
    /// consumer can be given them.
    pub first_stored: BTreeMap<String, i64>,
    /// Each queue's owners over time.
    pub ownership: BTreeMap<String, Vec<Span>>,
    /// The first and last stamp seen.
    pub span: Option<(u64, u64)>,
    double_now: BTreeSet<(String, Vec<String>)>,
    orphaned_set: BTreeSet<(String, Vec<String>)>,
    rest_sets: [BTreeSet<(String, Vec<String>)>; 3],
}

impl Observer {
    /// An observer of `topic` on these brokers' queues, for consumers
    /// `(name, client id)`, with clients trusting a lock for
    /// `lock_validity_ms`, counting transient hazards from the first
    /// settled state if `from_settled`.
    pub fn new(
        topic: &str,
        brokers: &[String],
        queues: usize,
        consumers: &[(String, String)],
        lock_validity_ms: u64,
        from_settled: bool,
    ) -> Self {
        Observer {
            topic: topic.to_owned(),
            broker_queues: brokers
                .iter()
                .map(|b| (b.clone(), (0..queues).map(|q| format!("{b}:{q}")).collect()))
                .collect(),
            running_brokers: BTreeSet::new(),
            registered: BTreeMap::new(),
            restarting: BTreeMap::new(),
            stopped_at: BTreeMap::new(),
            broker_members: BTreeMap::new(),
            scanned: BTreeSet::new(),
            members: consumers
                .iter()
                .map(|(name, client)| {
                    let member = Member {
                        client: client.clone(),
                        life: Life::Idle,
                        allocated: false,
                        owned: BTreeSet::new(),
                        cid_all: Vec::new(),
                        rounds: 0,
                        open: BTreeMap::new(),
                        trusted_until: BTreeMap::new(),
                        route: None,
                        route_at: 0,
                        subscribed: true,
                        table: BTreeSet::new(),
                        running_since: None,
                        halted_at: None,
                    };
                    (name.clone(), member)
                })
                .collect(),
            tables: false,
            lock_validity_ns: lock_validity_ms * 1_000_000,
            counting: !from_settled,
            double_owned: Vec::new(),
            orphaned: Vec::new(),
            rest_double: Vec::new(),
            rest_unconverged: Vec::new(),
            rest_disagree: Vec::new(),
            full_convergence: None,
            first_at_rest: None,
            consumed_by_two: Vec::new(),
            two_live_locks: Vec::new(),
            deliveries: BTreeMap::new(),
            pop: false,
            message_by_two: Vec::new(),
            proxied: false,
            fifo: false,
            out_of_order: Vec::new(),
            abandoned_blocks: Vec::new(),
            holders: BTreeMap::new(),
            sent_ids: BTreeMap::new(),
            unresolved: BTreeMap::new(),
            open_msgs: BTreeMap::new(),
            produced: BTreeSet::new(),
            first_stored: BTreeMap::new(),
            ownership: BTreeMap::new(),
            span: None,
            double_now: BTreeSet::new(),
            orphaned_set: BTreeSet::new(),
            rest_sets: Default::default(),
        }
    }

    /// The observer of a script's run: its topic, brokers, queues and
    /// consumers, and the lock validity it gives consumers (RocketMQ's
    /// 30 s unless it scales `rocketmq.client.rebalance.lockMaxLiveTime`).
    pub fn for_script(script: &Script) -> Observer {
        let validity = script
            .timers
            .client_properties
            .get("rocketmq.client.rebalance.lockMaxLiveTime")
            .and_then(|v| v.as_u64())
            .unwrap_or(30_000);
        let consumers: Vec<(String, String)> = script
            .consumers
            .iter()
            .map(|c| (c.name.clone(), c.client_id()))
            .collect();
        let mut observer = Observer::new(
            Script::TOPIC,
            &script.broker_names(),
            script.queues,
            &consumers,
            validity,
            script.from_settled,
        );
        observer.pop = script.consumption == Consumption::Pop;
        observer.proxied = script.grpc();
        observer.fifo = script.fifo();
        for c in &script.consumers {
            if let (Some(topics), Some(m)) = (&c.topics, observer.members.get_mut(&c.name)) {
                m.subscribed = topics.iter().any(|t| t == Script::TOPIC);
            }
        }
        observer
    }

    /// A consumer's life.
    pub fn life(&self, consumer: &str) -> Option<Life> {
        self.members.get(consumer).map(|m| m.life)
    }

    /// What a consumer owns (its last allocation of the topic).
    pub fn owned(&self, consumer: &str) -> Option<&BTreeSet<String>> {
        self.members.get(consumer).map(|m| &m.owned)
    }

    /// The consumers, in the script's order of names.
    pub fn consumers(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(String::as_str)
    }

    /// Folds one event.
    pub fn apply(&mut self, e: &Event) {
        self.span = Some(self.span.map_or((e.t, e.t), |(a, _)| (a, e.t)));
        let topic = |t: &str| t == self.topic;
        let changed = match &e.kind {
            Kind::Env { action } => self.environment(action, e.t),
            Kind::ConsumerLife { state, .. } => self.life_event(&e.p, *state, e.t),
            Kind::Alloc {
                topic: Some(t),
                cid_all,
                result,
                ..
            } if topic(t) => self.allocation(&e.p, cid_all, result, e.t),
            Kind::Member {
                broker,
                kind,
                client,
                members,
                addr,
            } => {
                // A stopping broker still closes its channels: its table is gone.
                if self.running_brokers.contains(broker) {
                    let mut table = members.clone();
                    if let (GroupEvent::ClientUnregister, Some(gone)) = (kind, client) {
                        let last = self.broker_members.get(broker).map(Vec::as_slice);
                        let channel = addr.clone().map(|a| (broker.clone(), a));
                        // The scan's channel closed: its event may remove the
                        // entry before the scan does, and reports after.
                        let closed = channel.as_ref().is_some_and(|c| self.scanned.contains(c));
                        if !closed {
                            if let Some(at) = expired_entry(&table, gone, last) {
                                table.remove(at);
                                self.scanned.extend(channel);
                            }
                        }
                    }
                    self.broker_members.insert(broker.clone(), table);
                }
                // CHANGE without a new member is the subscription table
                // changing: the broker notifies the group, which rebalances.
                matches!(
                    kind,
                    GroupEvent::ClientRegister | GroupEvent::ClientUnregister | GroupEvent::Change
                )
            }
            Kind::BrokerLife { broker, state, .. } => {
                match state {
                    // Its table is live from `start()` on.
                    ServerState::Starting | ServerState::Started => {
                        if *state == ServerState::Starting {
                            self.registered.remove(broker);
                        }
                        self.running_brokers.insert(broker.clone());
                        if let Some(started) = self.restarting.get_mut(broker) {
                            *started = true;
                        }
                    }
                    ServerState::Stopping => {
                        self.running_brokers.remove(broker);
                        self.broker_members.remove(broker);
                        self.registered.remove(broker);
                        self.stopped_at.insert(broker.clone(), e.t);
                    }
                    ServerState::Stopped => {}
                }
                if self.proxied {
                    self.proxy_assigns(e.t);
                }
                true
            }
            Kind::Route {
                broker,
                topic: t,
                queues,
            } if topic(t) => {
                let queues = (0..*queues).map(|q| format!("{broker}:{q}")).collect();
                self.broker_queues.insert(broker.clone(), queues);
                true
            }
            Kind::QueuesChanged {
                topic: t,
                table: Some(table),
                ..
            } if topic(t) => {
                self.tables = true;
                let table = self.expand(table);
                if let Some(m) = self.members.get_mut(&e.p) {
                    m.table = table;
                }
                false
            }
            Kind::ConsumerResponse {
                code: RequestCode::QUERY_ASSIGNMENT,
                peer,
                topic: Some(t),
                detail: Some(Detail::Names(assigned)),
                ..
            } if topic(t) && self.pop => {
                // The broker that answered allocated with the members it lists.
                let cid_all = self.listed(peer);
                let result: Vec<String> = self.expand(assigned).into_iter().collect();
                self.allocation(&e.p, &cid_all, &result, e.t)
            }
            // A FIFO delivery names its message's queue, which the broker's
            // block gives one consumer at a time; a POP batch's is the
            // assignment's, a broker's every queue.
            Kind::ConsumeBegin {
                topic: t,
                queue,
                msgs: Some(ids),
                ..
            } if topic(t) => {
                self.messages_begin(&e.p, ids, e.t);
                if self.fifo {
                    self.queue_opens(&e.p, queue, e.t);
                }
                false
            }
            Kind::ConsumeEnd {
                topic: t,
                queue,
                msgs: Some(ids),
                ..
            }
            | Kind::ConsumeInterrupted {
                topic: t,
                queue,
                msgs: Some(ids),
                ..
            } if topic(t) => {
                // An interrupted batch ends unconsumed.
                let consumed = matches!(e.kind, Kind::ConsumeEnd { .. });
                self.messages_end(&e.p, ids, consumed);
                if self.fifo {
                    self.batch_ends(&e.p, queue);
                }
                false
            }
            Kind::ConsumeBegin {
                topic: t,
                queue,
                offsets,
                msgs: None,
            } if topic(t) => {
                self.batch_begins(&e.p, queue, offsets, e.t);
                false
            }
            Kind::ConsumeInterrupted {
                topic: t,
                queue,
                offsets,
                msgs: None,
            } if topic(t) => {
                // Stopped unconsumed: the model's batch that ends there is
                // no delivery.
                for &o in offsets {
                    if let Some(n) = self.deliveries.get_mut(&(queue.clone(), o)) {
                        *n = n.saturating_sub(1);
                    }
                }
                self.batch_ends(&e.p, queue);
                false
            }
            Kind::ConsumeEnd {
                topic: t,
                queue,
                msgs: None,
                ..
            } if topic(t) => {
                self.batch_ends(&e.p, queue);
                false
            }
            Kind::ConsumerResponse {
                code: RequestCode::GET_ROUTEINFO_BY_TOPIC,
                topic: Some(t),
                detail: Some(Detail::Route(route)),
                ..
            } if topic(t) => self.route_answered(&e.p, route, e.t),
            Kind::NameServerRequest {
                code: RequestCode::REGISTER_BROKER,
                broker: Some(broker),
                ..
            } => {
                if self.running_brokers.contains(broker) {
                    self.registered.entry(broker.clone()).or_insert(e.t);
                    if self.restarting.get(broker) == Some(&true) {
                        self.restarting.remove(broker);
                    }
                }
                false
            }
            Kind::ConsumerResponse {
                code: RequestCode::LOCK_BATCH_MQ,
                detail: Some(detail),
                ..
            } => {
                let granted = self.locked_queues(detail.names());
                self.locks_granted(&e.p, &granted, e.t);
                false
            }
            Kind::ConsumerRequest {
                code: RequestCode::UNLOCK_BATCH_MQ,
                queues: Some(queues),
                ..
            } => {
                let unlocked = self.locked_queues(queues);
                if let Some(m) = self.members.get_mut(&e.p) {
                    for q in unlocked {
                        m.trusted_until.remove(&q);
                    }
                }
                false
            }
            Kind::Sent {
                topic: t,
                queue,
                offset,
                msg,
            } if topic(t) => {
                let message = (queue.clone(), *offset);
                self.produced.insert(message.clone());
                if let Some(n) = self.unresolved.remove(msg) {
                    *self.deliveries.entry(message.clone()).or_default() += n;
                }
                self.sent_ids.insert(msg.clone(), message);
                false
            }
            Kind::Store {
                topic: t,
                queue,
                min,
                ..
            } if topic(t) => {
                self.first_stored.insert(queue.clone(), *min);
                false
            }
            _ => false,
        };
        if changed {
            for m in self.members.values_mut() {
                m.rounds = 0;
            }
        }
        self.sight(e.t);
    }

    /// A route answer: the brokers with queues of the topic. A new route is
    /// a change.
    fn route_answered(&mut self, consumer: &str, answer: &BTreeMap<String, i64>, t: u64) -> bool {
        let route: BTreeSet<String> = answer
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(b, _)| b.clone())
            .collect();
        let Some(m) = self.members.get_mut(consumer) else {
            return false;
        };
        m.route_at = t;
        let changed = m.route.as_ref() != Some(&route);
        m.route = Some(route);
        changed
    }

    /// Every broker a restart stopped has started and registered with the
    /// name servers again, and so has every broker that started: until
    /// then the model's group is not at rest either (its stopped broker's
    /// start, or its registration, is still to come).
    fn brokers_back(&self) -> bool {
        self.restarting.is_empty()
            && self
                .running_brokers
                .iter()
                .all(|b| self.registered.contains_key(b))
    }

    /// Whether the name servers route brokers `m`'s last route answer does
    /// not have: a broker with queues of the topic that registered after
    /// the answer came and is not in it (a restarted or a new broker), or
    /// one in it that began to stop after it came. Its next route poll will
    /// change its route, so the group is not at rest, as the model's
    /// quiescence needs every consumer's route to be its name server's. A
    /// broker a name server drops otherwise (a cut link) is not seen here.
    fn route_is_stale(&self, m: &Member) -> bool {
        let Some(route) = &m.route else {
            return false;
        };
        let has_queues = |b: &String| self.broker_queues.get(b).is_some_and(|q| !q.is_empty());
        let routed_since = self.registered.iter().any(|(b, &t)| {
            t > m.route_at
                && !route.contains(b)
                && self.running_brokers.contains(b)
                && has_queues(b)
        });
        let dropped_since = route.iter().any(|b| {
            !self.running_brokers.contains(b)
                && self.stopped_at.get(b).is_some_and(|&t| t > m.route_at)
        });
        routed_since || dropped_since
    }

    fn environment(&mut self, action: &Env, t: u64) -> bool {
        let (name, life) = match action {
            Env::Subscribe { consumer, topic } | Env::Unsubscribe { consumer, topic }
                if *topic == self.topic =>
            {
                let subscribed = matches!(action, Env::Subscribe { .. });
                if let Some(m) = self.members.get_mut(consumer) {
                    m.subscribed = subscribed;
                }
                // Its next rebalance drops the topic's queues (RocketMQ
                // truncates what it no longer subscribes to); taken as
                // dropped now.
                if !subscribed {
                    self.gone(consumer, t);
                }
                return true;
            }
            Env::Stop { consumer } => (consumer, Life::Paused),
            Env::Cont { consumer } => (consumer, Life::Running),
            Env::Kill { consumer } => (consumer, Life::Killed),
            Env::RestartBroker { broker, .. } => {
                self.restarting.insert(broker.clone(), false);
                return true;
            }
            _ => return true,
        };
        if let Some(m) = self.members.get_mut(name) {
            m.life = life;
            if life == Life::Running {
                m.running_since = Some(t);
                m.halted_at = None;
            } else {
                m.halted_at = Some(t);
            }
        }
        if life == Life::Killed {
            self.gone(name, t);
        }
        true
    }

    fn life_event(&mut self, name: &str, state: ConsumerState, t: u64) -> bool {
        let member = self.members.get_mut(name);
        match state {
            // Its first rebalance may run before start() returns.
            ConsumerState::Starting => {
                if let Some(m) = member {
                    if m.life == Life::Idle || m.life == Life::Left {
                        m.life = Life::Running;
                        m.running_since = Some(t);
                    }
                }
                true
            }
            // A gRPC client gets every queue from the proxy, whatever the
            // members: its assignment is its start.
            ConsumerState::Started if self.proxied => {
                let every = self.route();
                self.allocation(name, &[], &every, t)
            }
            // The model's leave: its queues are nobody's from here, though
            // its process queue table goes only when it has stopped.
            ConsumerState::Stopping => {
                if let Some(m) = member {
                    m.life = Life::Stopping;
                }
                self.releases(name, t);
                true
            }
            // Its process lives on, and with it a batch its listener did not
            // stop: that batch ends with its own end.
            ConsumerState::Stopped => {
                if let Some(m) = member {
                    m.life = Life::Left;
                }
                self.releases(name, t);
                true
            }
            ConsumerState::Ready | ConsumerState::Started => false,
        }
    }

    /// A consumer that died or left owns nothing, runs nothing, trusts no lock.
    fn gone(&mut self, name: &str, t: u64) {
        self.releases(name, t);
        if let Some(m) = self.members.get_mut(name) {
            m.open.clear();
        }
        for running in self.open_msgs.values_mut() {
            running.remove(name);
        }
    }

    /// Queue names with a POP assignment's `broker:-1` (every queue of the
    /// broker) spelt out.
    fn expand(&self, names: &[String]) -> BTreeSet<String> {
        names
            .iter()
            .flat_map(|name| match name.strip_suffix(":-1") {
                Some(broker) => self.broker_queues.get(broker).cloned().unwrap_or_default(),
                None => vec![name.clone()],
            })
            .collect()
    }

    /// A POP batch begins: each of its messages another consumer's batch
    /// still runs is consumed by two at once. In a FIFO group, one that
    /// begins before an earlier message of its queue was consumed is out of
    /// order, and one whose last delivery a halted consumer left unfinished
    /// shows the queue blocked by that abandoned pop.
    fn messages_begin(&mut self, name: &str, ids: &[String], t: u64) {
        for id in ids {
            if self.fifo {
                self.fifo_begin(name, id, t);
            }
            let running = self.open_msgs.entry(id.clone()).or_default();
            if running.iter().any(|other| other != name) {
                let mut who: Vec<String> = running.iter().cloned().collect();
                who.push(name.to_owned());
                let queue = match self.sent_ids.get(id) {
                    Some((queue, offset)) => format!("{queue}@{offset}"),
                    None => id.clone(),
                };
                self.message_by_two.push(Sighting { t, queue, who });
            }
            running.insert(name.to_owned());
        }
    }

    /// A FIFO message `id` begins at `name`: see [`Self::messages_begin`].
    fn fifo_begin(&mut self, name: &str, id: &str, t: u64) {
        let message = self.sent_ids.get(id).cloned();
        if let Some((queue, offset)) = &message {
            let unconsumed = self.produced.iter().find(|(q, o)| {
                q == queue && o < offset && !self.deliveries.contains_key(&(q.clone(), *o))
            });
            if let Some((_, earlier)) = unconsumed {
                self.out_of_order.push(Sighting {
                    t,
                    queue: format!("{queue}@{offset} before {queue}@{earlier}"),
                    who: vec![name.to_owned()],
                });
            }
        }
        let at = |m: &str| self.members.get(m);
        if let Some(holder) = self.holders.get(id) {
            let halted = at(holder).and_then(|m| m.halted_at);
            let since = at(name).and_then(|m| m.running_since);
            if let (Some(halted), Some(since)) = (halted, since) {
                if since <= halted {
                    let what = message.map_or(id.to_owned(), |(q, o)| format!("{q}@{o}"));
                    self.abandoned_blocks.push(Sighting {
                        t,
                        queue: what,
                        who: vec![holder.clone(), name.to_owned()],
                    });
                }
            }
        }
        self.holders.insert(id.to_owned(), name.to_owned());
    }

    /// The proxy gives each gRPC client of a FIFO group every queue of
    /// the running brokers: a broker that stops or starts changes every
    /// running client's assignment at once.
    fn proxy_assigns(&mut self, t: u64) {
        let every = self.route();
        let assigned: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.allocated)
            .map(|(name, _)| name.clone())
            .collect();
        for name in assigned {
            self.allocation(&name, &[], &every, t);
        }
    }

    /// The sightings of `by_two` where two of the consumers ran at `t`:
    /// one stopped at or before `t` and never continued is a dead host,
    /// whose frozen batch runs no further (the translator reads such a
    /// stop as a death). A paused consumer that continues resumes its
    /// batch, so it counts while paused, as the model's paused consumer
    /// keeps its batch.
    pub fn by_two_live(&self, by_two: &[Sighting]) -> Vec<Sighting> {
        let frozen_for_good = |name: &String, t: u64| {
            self.members
                .get(name)
                .is_some_and(|m| m.life == Life::Paused && m.halted_at.is_some_and(|h| h <= t))
        };
        by_two
            .iter()
            .filter(|s| s.who.iter().filter(|c| !frozen_for_good(c, s.t)).count() >= 2)
            .cloned()
            .collect()
    }

    /// Whether no consumer runs a batch: every batch a live consumer
    /// began has ended (a dead one's are gone with it).
    pub fn idle(&self) -> bool {
        self.members
            .values()
            .all(|m| m.open.values().all(|&n| n == 0))
            && self.open_msgs.values().all(BTreeSet::is_empty)
    }

    /// A POP batch ends, its messages `consumed` or not (interrupted).
    fn messages_end(&mut self, name: &str, ids: &[String], consumed: bool) {
        for id in ids {
            if self.holders.get(id).is_some_and(|holder| holder == name) {
                self.holders.remove(id);
            }
            if let Some(running) = self.open_msgs.get_mut(id) {
                running.remove(name);
            }
            if consumed {
                match self.sent_ids.get(id) {
                    Some(message) => *self.deliveries.entry(message.clone()).or_default() += 1,
                    None => *self.unresolved.entry(id.clone()).or_default() += 1,
                }
            }
        }
    }

    /// A consumer that stops rebalancing owns nothing and trusts no lock
    /// from `t`; its batches are another matter.
    fn releases(&mut self, name: &str, t: u64) {
        if let Some(m) = self.members.get_mut(name) {
            m.trusted_until.clear();
            m.allocated = false;
            m.table.clear();
            for q in std::mem::take(&mut m.owned) {
                close_span(&mut self.ownership, &q, name, t);
            }
        }
    }

    fn allocation(&mut self, name: &str, cid_all: &[String], result: &[String], t: u64) -> bool {
        let Some(m) = self.members.get_mut(name) else {
            return false;
        };
        if !m.life.alive() || !m.subscribed {
            return false;
        }
        let result: BTreeSet<String> = result.iter().cloned().collect();
        m.cid_all = cid_all.to_vec();
        m.allocated = true;
        if result == m.owned {
            m.rounds += 1;
            return false;
        }
        let before = std::mem::replace(&mut m.owned, result.clone());
        for q in before.difference(&result) {
            close_span(&mut self.ownership, q, name, t);
        }
        for q in result.difference(&before) {
            self.ownership.entry(q.clone()).or_default().push(Span {
                consumer: name.to_owned(),
                from: t,
                until: None,
            });
        }
        true
    }

    fn batch_begins(&mut self, name: &str, queue: &str, offsets: &[i64], t: u64) {
        for &o in offsets {
            *self.deliveries.entry((queue.to_owned(), o)).or_default() += 1;
        }
        self.queue_opens(name, queue, t);
    }

    /// A batch of `queue` begins at `name`: by two at once if another runs
    /// one of it.
    fn queue_opens(&mut self, name: &str, queue: &str, t: u64) {
        // A batch runs wherever its process lives: a consumer that has left
        // still runs one its listener did not stop (a dead one's are gone).
        let running = |m: &Member| m.open.get(queue).is_some_and(|&k| k > 0);
        if let Some(who) = self.involved_where(name, |_| true, running) {
            self.consumed_by_two.push(Sighting {
                t,
                queue: queue.to_owned(),
                who,
            });
        }
        if let Some(m) = self.members.get_mut(name) {
            *m.open.entry(queue.to_owned()).or_default() += 1;
        }
    }

    fn batch_ends(&mut self, name: &str, queue: &str) {
        if let Some(n) = self
            .members
            .get_mut(name)
            .and_then(|m| m.open.get_mut(queue))
        {
            *n = n.saturating_sub(1);
        }
    }

    /// The live consumers other than `me` of which `holds` is true, then
    /// `me`: who is involved, if anyone else is.
    fn involved(&self, me: &str, holds: impl Fn(&Member) -> bool) -> Option<Vec<String>> {
        self.involved_where(me, Life::alive, holds)
    }

    /// The consumers other than `me` whose life passes `life` and of which
    /// `holds` is true, then `me`: who is involved, if anyone else is.
    fn involved_where(
        &self,
        me: &str,
        life: impl Fn(Life) -> bool,
        holds: impl Fn(&Member) -> bool,
    ) -> Option<Vec<String>> {
        let mut who: Vec<String> = self
            .members
            .iter()
            .filter(|(n, m)| n.as_str() != me && life(m.life) && holds(m))
            .map(|(n, _)| n.clone())
            .collect();
        if who.is_empty() {
            return None;
        }
        who.push(me.to_owned());
        Some(who)
    }

    /// The queues of the observed topic among those a lock or an unlock
    /// names: `TOPIC@broker:id` (one batch locks every topic's queues of a
    /// broker, the group's retry topic's among them), or `broker:id` in
    /// traces recorded before names carried their topic.
    fn locked_queues(&self, names: &[String]) -> Vec<String> {
        names
            .iter()
            .filter_map(|name| match name.split_once('@') {
                Some((topic, queue)) => (topic == self.topic).then(|| queue.to_owned()),
                None => Some(name.clone()),
            })
            .collect()
    }

    fn locks_granted(&mut self, name: &str, granted: &[String], t: u64) {
        for q in granted {
            let trusts = |m: &Member| m.trusted_until.get(q).is_some_and(|&until| until > t);
            if let Some(who) = self.involved(name, trusts) {
                self.two_live_locks.push(Sighting {
                    t,
                    queue: q.clone(),
                    who,
                });
            }
            if let Some(m) = self.members.get_mut(name) {
                m.trusted_until.insert(q.clone(), t + self.lock_validity_ns);
            }
        }
    }

    fn sight(&mut self, t: u64) {
        if !self.counting {
            // Settled alone is not enough: a consumer whose first rounds
            // saw a list without itself has allocated nothing, and the
            // group's cold start goes on (a real run, `--random 15`, had a
            // queue double-owned there, in a state the model never starts
            // in).
            self.counting = self.settled(2) && self.member_lists_agree();
            if !self.counting {
                return;
            }
        }
        // Every POP consumer is assigned every queue: no queue has an owner.
        if self.pop {
            self.judge_at_rest(t);
            self.note_full_convergence(t);
            return;
        }
        let double: Vec<Sighting> = self
            .doubles(Life::alive)
            .into_iter()
            .map(|(queue, who)| Sighting { t, queue, who })
            .collect();
        note_episodes(&mut self.double_owned, &mut self.double_now, double);
        let orphaned: Vec<Sighting> =
            if self.members.values().any(|m| m.allocated && m.life.alive()) {
                self.orphans(Life::alive)
                    .into_iter()
                    .map(|queue| Sighting {
                        t,
                        queue,
                        who: Vec::new(),
                    })
                    .collect()
            } else {
                Vec::new()
            };
        note_episodes(&mut self.orphaned, &mut self.orphaned_set, orphaned);
        self.judge_at_rest(t);
        self.note_full_convergence(t);
    }

    fn note_full_convergence(&mut self, t: u64) {
        if self.first_at_rest.is_none() && self.settled(2) {
            self.first_at_rest = Some(t);
        }
        let all_started = self.members.values().all(|m| m.life != Life::Idle);
        if self.full_convergence.is_none() && all_started && self.settled(2) && self.converged() {
            self.full_convergence = Some(t);
        }
    }

    /// The `always` properties of rest, judged at every settled moment, as
    /// the model judges them in every state: settled but with member lists
    /// that disagree is not quiescent (the promise is that it does not
    /// happen); quiescent, no queue owned twice and converged.
    fn judge_at_rest(&mut self, t: u64) {
        let (mut d, mut u, mut a) = (Vec::new(), Vec::new(), Vec::new());
        if self.settled(2) {
            if self.member_lists_agree() {
                // A POP group's queues are everyone's.
                if !self.pop {
                    d = self
                        .double_owned_now()
                        .into_iter()
                        .map(|(queue, who)| Sighting { t, queue, who })
                        .collect();
                }
                if !self.converged() {
                    let queue = self.orphaned_now().into_iter().next().unwrap_or("-".into());
                    u.push(Sighting {
                        t,
                        queue,
                        who: Vec::new(),
                    });
                }
            } else {
                let clients = self.running_clients();
                let running = self.members.values().filter(|m| m.life == Life::Running);
                let asked: BTreeSet<&String> = running.flat_map(|m| self.asked_by(m)).collect();
                for broker in asked {
                    let listed = self.listed(broker);
                    if listed != clients {
                        a.push(Sighting {
                            t,
                            queue: broker.clone(),
                            who: listed,
                        });
                    }
                }
                if a.is_empty() {
                    a.push(Sighting {
                        t,
                        queue: "-".into(),
                        who: Vec::new(),
                    });
                }
            }
        }
        let [double, unconverged, disagree] = &mut self.rest_sets;
        note_episodes(&mut self.rest_double, double, d);
        note_episodes(&mut self.rest_unconverged, unconverged, u);
        note_episodes(&mut self.rest_disagree, disagree, a);
    }

    /// The queues of the running brokers.
    fn route(&self) -> Vec<String> {
        self.running_brokers
            .iter()
            .filter_map(|b| self.broker_queues.get(b))
            .flatten()
            .cloned()
            .collect()
    }

    /// The consumers whose life passes `alive`, and what each owns.
    fn shares(&self, alive: impl Fn(Life) -> bool) -> (Vec<&String>, Vec<Vec<String>>) {
        self.members
            .iter()
            .filter(|(_, m)| alive(m.life))
            .map(|(name, m)| (name, m.owned.iter().cloned().collect::<Vec<String>>()))
            .unzip()
    }

    /// Each queue two consumers whose life passes `alive` own, with them.
    fn doubles(&self, alive: impl Fn(Life) -> bool) -> Vec<(String, Vec<String>)> {
        let (names, shares) = self.shares(alive);
        double_owned(&shares)
            .into_iter()
            .map(|queue| {
                let who = names
                    .iter()
                    .zip(&shares)
                    .filter(|(_, share)| share.contains(&queue))
                    .map(|(name, _)| (*name).clone())
                    .collect();
                (queue, who)
            })
            .collect()
    }

    /// The queues of the running brokers that no consumer whose life passes
    /// `alive` owns.
    fn orphans(&self, alive: impl Fn(Life) -> bool) -> Vec<String> {
        let (_, shares) = self.shares(alive);
        orphaned(&self.route(), &shares)
    }

    fn running_clients(&self) -> Vec<String> {
        let mut clients: Vec<String> = self
            .members
            .values()
            .filter(|m| m.life == Life::Running)
            .map(|m| m.client.clone())
            .collect();
        clients.sort();
        clients
    }

    /// Every running consumer has rebalanced `rounds` times since the last
    /// change of membership or allocation, and one consumer runs. No broker
    /// lists a stale entry either ([`Observer::stale_channels`]): one that
    /// will expire is a change still to come; nor is a broker's restart or
    /// registration still to come, nor has a consumer a route its next
    /// poll will change.
    pub fn settled(&self, rounds: u32) -> bool {
        let mut running = self.members.values().filter(|m| m.allocates()).peekable();
        running.peek().is_some()
            && running.all(|m| {
                m.allocated
                    && (self.proxied || m.rounds >= rounds)
                    && (!self.tables || m.table == m.owned)
                    && !self.route_is_stale(m)
            })
            && self.brokers_back()
            && self.stale_channels().is_empty()
    }

    /// The (broker, client id) pairs listed more often than processes with
    /// that id run (a paused one heartbeats nobody), or listed by a broker
    /// that no process with that id has in its route any more: entries that
    /// nothing keeps alive, which the broker's scan will expire.
    pub fn stale_channels(&self) -> Vec<(String, String)> {
        let mut stale = Vec::new();
        for (broker, listed) in &self.broker_members {
            for client in listed.iter().collect::<BTreeSet<_>>() {
                let entries = listed.iter().filter(|c| *c == client).count();
                let alive = self
                    .members
                    .values()
                    .filter(|m| &m.client == client && m.life == Life::Running)
                    .filter(|m| m.route.as_ref().map_or(true, |r| r.contains(broker)))
                    .count();
                if entries > alive {
                    stale.push((broker.clone(), client.clone()));
                }
            }
        }
        stale
    }

    /// Every lock `consumer` was granted is past its trust by the latest
    /// stamp seen (true for a consumer that trusts none).
    pub fn trust_lapsed(&self, consumer: &str) -> bool {
        let now = self.span.map_or(0, |(_, last)| last);
        self.members.get(consumer).map_or(true, |m| {
            m.trusted_until.values().all(|&until| until <= now)
        })
    }

    /// Every message sent has been delivered at least once, but those the
    /// store deleted first.
    pub fn all_delivered(&self) -> bool {
        self.never_delivered().next().is_none()
    }

    /// The messages sent and never delivered, but those the store deleted
    /// first ([`Observer::deleted`]).
    pub fn never_delivered(&self) -> impl Iterator<Item = &(String, i64)> {
        self.produced
            .iter()
            .filter(|m| !self.deliveries.contains_key(*m) && !self.deleted(m))
    }

    /// Whether message `(queue, offset)` is below the first offset the
    /// store kept after an eviction, and never delivered: gone before any
    /// consumer could be given it.
    pub fn deleted(&self, (queue, offset): &(String, i64)) -> bool {
        self.first_stored
            .get(queue)
            .is_some_and(|&min| *offset < min)
            && !self.deliveries.contains_key(&(queue.clone(), *offset))
    }

    /// The queues owned by two running consumers now.
    pub fn double_owned_now(&self) -> Vec<(String, Vec<String>)> {
        self.doubles(|l| l == Life::Running)
    }

    /// The queues of running brokers owned by no running consumer now.
    pub fn orphaned_now(&self) -> Vec<String> {
        self.orphans(|l| l == Life::Running)
    }

    /// The running consumers partition the running brokers' queues (in a
    /// POP group: each was assigned every queue of the running brokers, at
    /// the default `popShareQueueNum`), and each allocated with the list of
    /// running consumers.
    pub fn converged(&self) -> bool {
        let clients = self.running_clients();
        let route: BTreeSet<String> = self.route().into_iter().collect();
        let shares = if self.pop {
            self.members
                .values()
                .filter(|m| m.allocates())
                .all(|m| m.owned == route)
        } else {
            self.double_owned_now().is_empty() && self.orphaned_now().is_empty()
        };
        !clients.is_empty()
            && shares
            && self.members.values().filter(|m| m.allocates()).all(|m| {
                let mut seen = m.cid_all.clone();
                seen.sort();
                // A gRPC client's assignment takes no member list.
                m.allocated && (self.proxied || seen == clients)
            })
    }

    /// Every running consumer allocated with the list of running consumers,
    /// and every running broker it may ask (those of its route) lists them:
    /// what the model's quiescence asks of member tables.
    pub fn member_lists_agree(&self) -> bool {
        // No broker lists a gRPC client, and none allocates for them.
        if self.proxied {
            return true;
        }
        let clients = self.running_clients();
        self.members.values().filter(|m| m.allocates()).all(|m| {
            let mut seen = m.cid_all.clone();
            seen.sort();
            seen == clients && self.asked_by(m).all(|b| self.listed(b) == seen)
        })
    }

    /// The running brokers a consumer may ask: those of its last route
    /// (all of them before it has one).
    fn asked_by<'a>(&'a self, m: &'a Member) -> impl Iterator<Item = &'a String> + 'a {
        self.running_brokers
            .iter()
            .filter(move |b| m.route.as_ref().map_or(true, |r| r.contains(*b)))
    }

    /// What a broker lists, sorted.
    fn listed(&self, broker: &str) -> Vec<String> {
        let mut listed = self.broker_members.get(broker).cloned().unwrap_or_default();
        listed.sort();
        listed
    }
}

/// Records each sighting not already in progress as a new episode; the
/// ones in progress are the `current` set.
fn note_episodes(
    episodes: &mut Vec<Sighting>,
    current: &mut BTreeSet<(String, Vec<String>)>,
    now: Vec<Sighting>,
) {
    let keys: BTreeSet<(String, Vec<String>)> = now
        .iter()
        .map(|s| (s.queue.clone(), s.who.clone()))
        .collect();
    for s in now {
        if !current.contains(&(s.queue.clone(), s.who.clone())) {
            episodes.push(s);
        }
    }
    *current = keys;
}

fn close_span(ownership: &mut BTreeMap<String, Vec<Span>>, queue: &str, consumer: &str, t: u64) {
    if let Some(span) = ownership.get_mut(queue).and_then(|spans| {
        spans
            .iter_mut()
            .rev()
            .find(|s| s.consumer == consumer && s.until.is_none())
    }) {
        span.until = Some(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(t: u64, p: &str, kind: Kind) -> Event {
        Event {
            t,
            p: p.into(),
            seq: t,
            thr: String::new(),
            kind,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn observer() -> Observer {
        let consumers = [
            ("c1".to_owned(), "127.0.0.1@c1".to_owned()),
            ("c2".to_owned(), "127.0.0.1@c2".to_owned()),
        ];
        Observer::new("T", &["broker-a".to_owned()], 2, &consumers, 30_000, true)
    }

    fn alloc(t: u64, p: &str, cids: &[&str], result: &[&str]) -> Event {
        let cid_all: Vec<String> = cids.iter().map(|c| format!("127.0.0.1@{c}")).collect();
        let kind = Kind::Alloc {
            topic: Some("T".into()),
            cid: format!("127.0.0.1@{p}"),
            mq_all: strings(&["broker-a:0", "broker-a:1"]),
            cid_all,
            result: strings(result),
        };
        event(t, p, kind)
    }

    fn members(t: u64, listed: &[&str]) -> Event {
        let kind = Kind::Member {
            broker: "broker-a".into(),
            kind: GroupEvent::ClientRegister,
            client: None,
            addr: None,
            members: strings(listed),
        };
        event(t, "cluster", kind)
    }

    /// `broker` registers with the name server.
    fn register(t: u64, broker: &str) -> Event {
        let kind = Kind::NameServerRequest {
            ns: "namesrv-1".into(),
            code: RequestCode::REGISTER_BROKER,
            broker: Some(broker.into()),
            addr: "127.0.0.1:1".into(),
        };
        event(t, "cluster", kind)
    }

    /// Message `msg` sent to `broker-a:0` at `offset`.
    fn sent(t: u64, offset: i64, msg: &str) -> Event {
        let kind = Kind::Sent {
            topic: "T".into(),
            queue: "broker-a:0".into(),
            offset,
            msg: msg.into(),
        };
        event(t, "cluster", kind)
    }

    /// Consumer `c`'s life `state`, its client id `x@c`.
    fn life(t: u64, c: &str, state: ConsumerState) -> Event {
        let kind = Kind::ConsumerLife {
            state,
            client: format!("x@{c}"),
            pid: None,
        };
        event(t, c, kind)
    }

    fn env(t: u64, action: Env) -> Event {
        event(t, "orchestrator", Kind::Env { action })
    }

    fn begin(t: u64, p: &str, queue: &str) -> Event {
        let kind = Kind::ConsumeBegin {
            topic: "T".into(),
            queue: queue.into(),
            offsets: vec![0],
            msgs: None,
        };
        event(t, p, kind)
    }

    /// Both consumers running and registered on broker-a.
    fn registered(mut o: Observer) -> Observer {
        let started = Kind::BrokerLife {
            broker: "broker-a".into(),
            state: ServerState::Started,
            port: None,
        };
        o.apply(&event(1, "cluster", started));
        o.apply(&register(1, "broker-a"));
        for c in ["c1", "c2"] {
            let life = Kind::ConsumerLife {
                state: ConsumerState::Starting,
                client: format!("127.0.0.1@{c}"),
                pid: None,
            };
            o.apply(&event(2, c, life));
        }
        o.apply(&members(3, &["127.0.0.1@c1", "127.0.0.1@c2"]));
        o
    }

    /// Both consumers running on broker-a, balanced and settled.
    fn balanced() -> Observer {
        let mut o = registered(observer());
        for t in [10, 20, 30] {
            o.apply(&alloc(t, "c1", &["c1", "c2"], &["broker-a:0"]));
            o.apply(&alloc(t + 1, "c2", &["c1", "c2"], &["broker-a:1"]));
        }
        o
    }

    /// A POP consumer's assignment answer (`QUERY_ASSIGNMENT`), and its
    /// batch of message `id` begun or ended.
    fn assigned(t: u64, p: &str, queues: &[&str]) -> Event {
        let kind = Kind::ConsumerResponse {
            code: RequestCode::QUERY_ASSIGNMENT,
            peer: "broker-a".into(),
            opaque: 1,
            status: Some(0),
            detail: Some(Detail::Names(strings(queues))),
            topic: Some("T".into()),
        };
        event(t, p, kind)
    }

    fn popped(t: u64, p: &str, queue: &str, id: &str, ends: bool) -> Event {
        let (topic, queue, offsets, msgs) =
            ("T".into(), queue.into(), vec![0], Some(strings(&[id])));
        let kind = if ends {
            Kind::ConsumeEnd {
                topic,
                queue,
                offsets,
                msgs,
            }
        } else {
            Kind::ConsumeBegin {
                topic,
                queue,
                offsets,
                msgs,
            }
        };
        event(t, p, kind)
    }

    /// A POP group is converged when every consumer is assigned every queue
    /// (`broker-a:-1`); a message is judged by its id, counted once its
    /// batch ends, whether its `p.sent` comes before or after; two
    /// consumers running one message's batches at once is the hazard.
    #[test]
    fn a_pop_group_converges_on_whole_brokers_and_judges_messages_by_id() {
        let mut o = observer();
        o.pop = true;
        let mut o = registered(o);
        // Assigned by a broker that listed c1 alone: every queue, but made
        // with a list that is not the group's.
        o.apply(&members(4, &["127.0.0.1@c1"]));
        o.apply(&assigned(5, "c1", &["broker-a:-1"]));
        o.apply(&assigned(6, "c2", &["broker-a:-1"]));
        assert!(!o.converged());
        o.apply(&members(7, &["127.0.0.1@c1", "127.0.0.1@c2"]));
        for t in [10, 20, 30] {
            o.apply(&assigned(t, "c1", &["broker-a:-1"]));
            o.apply(&assigned(t + 1, "c2", &["broker-a:-1"]));
        }
        assert!(o.settled(2) && o.member_lists_agree() && o.converged());
        assert_eq!(o.owned("c1").map(|q| q.len()), Some(2));
        o.apply(&sent(40, 0, "m0"));
        o.apply(&popped(41, "c1", "broker-a:-1", "m0", false));
        assert!(
            !o.all_delivered(),
            "a batch that has not ended consumed nothing"
        );
        assert!(!o.idle(), "c1 runs a batch");
        o.apply(&popped(42, "c2", "broker-a:-1", "m0", false));
        assert_eq!(o.message_by_two.len(), 1);
        assert_eq!(o.message_by_two[0].queue, "broker-a:0@0");
        o.apply(&popped(43, "c1", "broker-a:-1", "m0", true));
        o.apply(&popped(44, "c2", "broker-a:-1", "m0", true));
        assert_eq!(o.deliveries[&("broker-a:0".to_owned(), 0)], 2);
        // Consumed before its send is seen: counted when it is.
        o.apply(&popped(50, "c1", "broker-a:-1", "m1", false));
        o.apply(&popped(51, "c1", "broker-a:-1", "m1", true));
        o.apply(&sent(52, 1, "m1"));
        assert!(o.all_delivered() && o.idle());
        assert_eq!(o.deliveries[&("broker-a:0".to_owned(), 1)], 1);
        assert_eq!(o.message_by_two.len(), 1);
    }

    /// Both consumers of a group of gRPC clients started, through the
    /// proxy: a FIFO group's, or a concurrent one's.
    fn grpc_group(fifo: bool) -> Observer {
        let mut o = observer();
        o.pop = true;
        o.proxied = true;
        o.fifo = fifo;
        let mut o = registered(o);
        for c in ["c1", "c2"] {
            o.apply(&life(4, c, ConsumerState::Started));
        }
        o
    }

    /// A FIFO group's gRPC clients: each gets every queue at its start,
    /// with no broker listing it; a message of a halted holder given to a
    /// consumer running since before the halt shows the queue blocked, and
    /// a message begun before an earlier one was consumed is out of order.
    #[test]
    fn a_fifo_group_judges_its_blocks_and_its_order() {
        let mut o = grpc_group(true);
        assert!(o.settled(2) && o.member_lists_agree() && o.converged());
        assert_eq!(o.owned("c2").map(|q| q.len()), Some(2));
        o.apply(&sent(5, 0, "m0"));
        o.apply(&sent(5, 1, "m1"));
        o.apply(&popped(10, "c1", "broker-a:0", "m0", false));
        // Not halted: another consumer's delivery is no block.
        o.apply(&popped(11, "c2", "broker-a:0", "m0", false));
        assert_eq!(
            o.consumed_by_two.len(),
            1,
            "a FIFO queue is one consumer's at a time"
        );
        o.apply(&popped(12, "c2", "broker-a:0", "m0", true));
        assert!(o.abandoned_blocks.is_empty());
        o.apply(&popped(13, "c1", "broker-a:0", "m1", false));
        o.apply(&env(
            14,
            Env::Kill {
                consumer: "c1".into(),
            },
        ));
        o.apply(&popped(20, "c2", "broker-a:0", "m1", false));
        assert_eq!(o.abandoned_blocks.len(), 1);
        assert_eq!(o.abandoned_blocks[0].who, strings(&["c1", "c2"]));
        assert!(o.out_of_order.is_empty(), "m0 was consumed first");
        // A third message begun while m1 never ended: out of order.
        o.apply(&sent(21, 2, "m2"));
        o.apply(&popped(22, "c2", "broker-a:0", "m2", false));
        assert_eq!(o.out_of_order.len(), 1);
        assert_eq!(o.out_of_order[0].queue, "broker-a:0@2 before broker-a:0@1");
    }

    /// Only a consumer that ran when the holder was halted shows the block:
    /// one that starts later was never refused the queue for it.
    #[test]
    fn a_fifo_consumer_started_after_the_holders_death_shows_no_block() {
        let mut o = observer();
        o.pop = true;
        o.proxied = true;
        o.fifo = true;
        let started = Kind::BrokerLife {
            broker: "broker-a".into(),
            state: ServerState::Started,
            port: None,
        };
        o.apply(&event(1, "cluster", started));
        o.apply(&life(2, "c1", ConsumerState::Starting));
        o.apply(&life(3, "c1", ConsumerState::Started));
        o.apply(&sent(4, 0, "m0"));
        o.apply(&popped(10, "c1", "broker-a:0", "m0", false));
        o.apply(&env(
            11,
            Env::Kill {
                consumer: "c1".into(),
            },
        ));
        o.apply(&life(12, "c2", ConsumerState::Starting));
        o.apply(&life(13, "c2", ConsumerState::Started));
        o.apply(&popped(20, "c2", "broker-a:0", "m0", false));
        assert!(o.abandoned_blocks.is_empty());
        assert!(o.out_of_order.is_empty());
    }

    /// The proxy gives a FIFO group's clients every queue of the running
    /// brokers: while broker-a is down they have none, and the group is
    /// not unconverged for it; its batches keep running, and the group is
    /// idle once they have ended.
    #[test]
    fn a_fifo_groups_assignment_follows_the_brokers_that_run() {
        let mut o = grpc_group(true);
        o.apply(&sent(5, 0, "m0"));
        o.apply(&popped(10, "c1", "broker-a:0", "m0", false));
        assert!(!o.idle());
        for (t, state) in [(11, ServerState::Stopping), (12, ServerState::Started)] {
            o.apply(&broker_life(t, state));
            let every = if state == ServerState::Started { 2 } else { 0 };
            assert_eq!(o.owned("c2").map(|q| q.len()), Some(every), "{state:?}");
            assert!(o.converged(), "{state:?}");
        }
        assert!(o.rest_unconverged.is_empty());
        o.apply(&popped(20, "c2", "broker-a:0", "m0", false));
        o.apply(&popped(21, "c2", "broker-a:0", "m0", true));
        assert!(!o.idle(), "c1 still runs m0");
        o.apply(&popped(22, "c1", "broker-a:0", "m0", true));
        assert!(o.idle());
        assert_eq!(o.consumed_by_two.len(), 1);
    }

    /// A concurrent group of gRPC clients: each gets every queue at its
    /// start, as a FIFO group's; but two consumers run messages of one
    /// queue at once by design, and a message begun before an earlier one
    /// ended is no disorder. One message run by two at once still is the
    /// hazard.
    #[test]
    fn a_concurrent_grpc_group_shares_its_queues_and_judges_messages_by_id() {
        let mut o = grpc_group(false);
        assert!(o.settled(2) && o.member_lists_agree() && o.converged());
        assert_eq!(o.owned("c1").map(|q| q.len()), Some(2));
        o.apply(&sent(5, 0, "m0"));
        o.apply(&sent(5, 1, "m1"));
        o.apply(&popped(10, "c1", "broker-a:0", "m0", false));
        o.apply(&popped(11, "c2", "broker-a:0", "m1", false));
        o.apply(&popped(20, "c2", "broker-a:0", "m1", true));
        assert!(o.consumed_by_two.is_empty() && o.out_of_order.is_empty());
        assert!(o.message_by_two.is_empty());
        o.apply(&popped(21, "c2", "broker-a:0", "m0", false));
        assert_eq!(o.message_by_two.len(), 1, "c1 still runs m0");
        assert!(o.consumed_by_two.is_empty() && o.abandoned_blocks.is_empty());
    }

    /// A consumer stopped for good holding a message (`grpc-pop-crash`)
    /// is a dead host: the message begun again elsewhere is not run by
    /// two at once, unless the stopped one continues.
    #[test]
    fn a_message_frozen_for_good_is_not_run_by_two_at_once() {
        let mut o = grpc_group(false);
        o.apply(&sent(5, 0, "m0"));
        o.apply(&popped(10, "c1", "broker-a:0", "m0", false));
        let stop = |c: &str| Env::Stop { consumer: c.into() };
        o.apply(&env(11, stop("c1")));
        o.apply(&popped(20, "c2", "broker-a:0", "m0", false));
        assert_eq!(o.message_by_two.len(), 1);
        assert!(o.by_two_live(&o.message_by_two).is_empty());
        o.apply(&env(
            21,
            Env::Cont {
                consumer: "c1".into(),
            },
        ));
        assert_eq!(o.by_two_live(&o.message_by_two).len(), 1);
        // Run by both, then one of them stops for good: it ran until then.
        o.apply(&sent(25, 1, "m1"));
        o.apply(&popped(30, "c1", "broker-a:0", "m1", false));
        o.apply(&popped(31, "c2", "broker-a:0", "m1", false));
        o.apply(&env(40, stop("c2")));
        assert_eq!(o.by_two_live(&o.message_by_two).len(), 2);
    }

    #[test]
    fn a_member_that_does_not_subscribe_orphans_its_share_and_is_not_waited_for() {
        let mut o = observer();
        o.members.get_mut("c2").expect("c2").subscribed = false;
        let mut o = registered(o);
        for t in [10, 20, 30] {
            o.apply(&alloc(t, "c1", &["c1", "c2"], &["broker-a:0"]));
        }
        // c2 rebalances only its own topic: the group is at rest without it,
        // the lists agree (brokers list the whole group), and a1 is nobody's.
        assert!(o.settled(2) && o.member_lists_agree());
        assert!(!o.converged());
        assert_eq!(o.orphaned_now(), ["broker-a:1"]);
        assert!(!o.rest_unconverged.is_empty());
    }

    /// A cold start settles before it is the model's initial state: c2's
    /// first rounds saw a list without itself and took nothing, then it
    /// takes a1 while c1 still holds it. That double ownership is the cold
    /// start's, which the model does not start in: not counted.
    #[test]
    fn hazards_count_from_the_models_initial_state_not_from_the_first_settling() {
        let mut o = registered(observer());
        for t in [10, 20, 30] {
            o.apply(&alloc(t, "c1", &["c1"], &["broker-a:0", "broker-a:1"]));
            o.apply(&alloc(t + 1, "c2", &["c1"], &[]));
        }
        assert!(o.settled(2) && !o.member_lists_agree());
        o.apply(&alloc(40, "c2", &["c1", "c2"], &["broker-a:1"]));
        assert_eq!(o.double_owned_now().len(), 1);
        o.apply(&alloc(50, "c1", &["c1", "c2"], &["broker-a:0"]));
        o.apply(&alloc(60, "c2", &["c1", "c2"], &["broker-a:1"]));
        assert!(o.converged());
        assert!(o.double_owned.is_empty(), "{:?}", o.double_owned);
    }

    /// A consumer's table (its `c.mqchanged`) must hold its allocation for
    /// the group to be at rest: an orderly queue whose lock is refused is
    /// allocated but not consumed, and Java's next round tries again.
    #[test]
    fn a_table_without_its_allocation_is_not_at_rest() {
        let mut o = balanced();
        let table = |t, p: &str, queues: &[&str]| {
            let kind = Kind::QueuesChanged {
                topic: "T".into(),
                divided: strings(queues),
                table: Some(strings(queues)),
            };
            event(t, p, kind)
        };
        o.apply(&table(40, "c1", &["broker-a:0"]));
        o.apply(&table(41, "c2", &[]));
        assert!(!o.settled(2), "c2's table lacks a1");
        o.apply(&table(50, "c2", &["broker-a:1"]));
        assert!(o.settled(2));
    }

    #[test]
    fn a_balanced_group_settles_and_converges() {
        let o = balanced();
        assert!(o.settled(2) && o.converged() && o.member_lists_agree());
        assert!(o.double_owned.is_empty() && o.orphaned.is_empty());
        assert!(o.full_convergence.is_some());
    }

    /// A route answer of `p`'s: broker-a with its queues, or without it.
    fn route(t: u64, p: &str, with_broker: bool) -> Event {
        let route = if with_broker {
            [("broker-a".to_owned(), 2)].into()
        } else {
            BTreeMap::new()
        };
        let kind = Kind::ConsumerResponse {
            code: RequestCode::GET_ROUTEINFO_BY_TOPIC,
            peer: "namesrv-1".into(),
            opaque: t as i64,
            status: Some(0),
            detail: Some(Detail::Route(route)),
            topic: Some("T".into()),
        };
        event(t, p, kind)
    }

    fn broker_life(t: u64, state: ServerState) -> Event {
        let kind = Kind::BrokerLife {
            broker: "broker-a".into(),
            state,
            port: None,
        };
        event(t, "cluster", kind)
    }

    /// Two more rounds of both consumers, each allocating `c1` and `c2`
    /// their shares (`None`: nothing).
    fn rounds(o: &mut Observer, t: u64, shares: Option<(&str, &str)>) {
        for t in [t, t + 2, t + 4] {
            let (a, b) = shares.map_or((vec![], vec![]), |(a, b)| (vec![a], vec![b]));
            o.apply(&alloc(t, "c1", &["c1", "c2"], &a));
            o.apply(&alloc(t + 1, "c2", &["c1", "c2"], &b));
        }
    }

    /// The balanced group's shares of broker-a's two queues.
    const SHARES: Option<(&str, &str)> = Some(("broker-a:0", "broker-a:1"));

    /// The balanced group, each consumer's route answered with broker-a,
    /// and two rounds since.
    fn routed() -> Observer {
        let mut o = balanced();
        for c in ["c1", "c2"] {
            o.apply(&route(31, c, true));
        }
        rounds(&mut o, 32, SHARES);
        o
    }

    /// The model's group is not at rest while a stopped broker's start, its
    /// registration or a consumer's route poll that brings it back is
    /// still to come; a real run judged at rest there found `converged
    /// when quiescent` violated (`--random 13`). The consumers heartbeat
    /// only the brokers of their routes, so the restarted broker lists
    /// nobody until they poll: no stale entry keeps them from rest.
    #[test]
    fn a_restarting_broker_and_a_route_without_it_keep_the_group_from_rest() {
        let mut o = routed();
        assert!(o.settled(2));
        let restart = Env::RestartBroker {
            broker: "broker-a".into(),
            downtime_ms: 3000,
        };
        o.apply(&env(40, restart));
        // A periodic registration before the stop brings nothing back.
        o.apply(&register(40, "broker-a"));
        o.apply(&broker_life(41, ServerState::Stopping));
        o.apply(&broker_life(42, ServerState::Stopped));
        for c in ["c1", "c2"] {
            o.apply(&route(43, c, false));
        }
        rounds(&mut o, 44, None);
        assert!(!o.settled(2), "the stopped broker's start is still to come");
        o.apply(&broker_life(50, ServerState::Starting));
        o.apply(&broker_life(51, ServerState::Started));
        rounds(&mut o, 52, None);
        assert!(!o.settled(2), "its registration is still to come");
        assert!(o.rest_unconverged.is_empty());
        o.apply(&register(60, "broker-a"));
        rounds(&mut o, 61, None);
        assert!(!o.settled(2), "the routes' polls are still to come");
        for c in ["c1", "c2"] {
            o.apply(&route(70, c, true));
        }
        assert!(!o.settled(2), "a new route is a change: two rounds again");
        o.apply(&members(71, &["127.0.0.1@c1", "127.0.0.1@c2"]));
        rounds(&mut o, 72, SHARES);
        assert!(o.settled(2) && o.converged());
        assert!(o.rest_unconverged.is_empty(), "{:?}", o.rest_unconverged);
    }

    /// A restart no route poll saw: the broker is back, registered, and in
    /// every route, as the name servers route it.
    #[test]
    fn a_restart_between_two_polls_leaves_the_routes_current() {
        let mut o = routed();
        let restart = Env::RestartBroker {
            broker: "broker-a".into(),
            downtime_ms: 0,
        };
        o.apply(&env(40, restart));
        o.apply(&broker_life(41, ServerState::Stopping));
        o.apply(&broker_life(42, ServerState::Starting));
        o.apply(&register(43, "broker-a"));
        o.apply(&members(44, &["127.0.0.1@c1", "127.0.0.1@c2"]));
        rounds(&mut o, 45, SHARES);
        assert!(o.settled(2) && o.converged());
    }

    /// A broker that stops for good: until a consumer's poll drops it, its
    /// route names a broker the name servers no longer route.
    #[test]
    fn a_route_with_a_stopped_broker_keeps_the_group_from_rest() {
        let mut o = routed();
        o.apply(&broker_life(40, ServerState::Stopping));
        rounds(&mut o, 41, Some(("broker-a:0", "broker-a:1")));
        assert!(!o.settled(2), "the routes' polls are still to come");
        for c in ["c1", "c2"] {
            o.apply(&route(50, c, false));
        }
        rounds(&mut o, 51, None);
        assert!(o.settled(2));
    }

    #[test]
    fn a_zombie_keeps_its_queue_while_its_successor_takes_it() {
        let mut o = balanced();
        o.apply(&begin(40, "c1", "broker-a:0"));
        o.apply(&env(
            41,
            Env::Stop {
                consumer: "c1".into(),
            },
        ));
        assert!(!o.settled(0) || o.life("c1") == Some(Life::Paused));
        o.apply(&alloc(50, "c2", &["c2"], &["broker-a:0", "broker-a:1"]));
        assert_eq!(o.double_owned.len(), 1);
        assert_eq!(o.double_owned[0].who, ["c1", "c2"]);
        o.apply(&begin(51, "c2", "broker-a:0"));
        assert_eq!(o.consumed_by_two.len(), 1, "c1's batch is still open");
        assert_eq!(o.deliveries[&("broker-a:0".to_owned(), 0)], 2);
        // At rest only running consumers count: the paused one is not judged.
        assert!(o.double_owned_now().is_empty());
    }

    #[test]
    fn a_lock_granted_while_another_trusts_its_own_is_seen() {
        let mut o = balanced();
        let grant = |t, p: &str| {
            let kind = Kind::ConsumerResponse {
                code: RequestCode::LOCK_BATCH_MQ,
                peer: "broker-a".into(),
                opaque: 1,
                status: Some(0),
                detail: Some(Detail::Names(strings(&["broker-a:0"]))),
                topic: None,
            };
            event(t, p, kind)
        };
        let unlock = |t, p: &str| {
            let kind = Kind::ConsumerRequest {
                code: RequestCode::UNLOCK_BATCH_MQ,
                peer: "broker-a".into(),
                opaque: 2,
                queues: Some(strings(&["broker-a:0"])),
            };
            event(t, p, kind)
        };
        o.apply(&grant(100, "c1"));
        o.apply(&grant(200, "c2"));
        assert_eq!(o.two_live_locks.len(), 1);
        // An unlock ends the trust; a grant after it is no violation.
        o.apply(&unlock(300, "c2"));
        o.apply(&unlock(301, "c1"));
        o.apply(&grant(400, "c1"));
        assert_eq!(o.two_live_locks.len(), 1);
        // Past the validity the old holder trusts it no more.
        o.apply(&grant(400 + 30_000 * 1_000_000 + 1, "c2"));
        assert_eq!(o.two_live_locks.len(), 1);
    }

    /// A lock batch names each queue with its topic: the group's retry
    /// topic's `broker-a:0` is another queue than the observed topic's.
    #[test]
    fn a_lock_of_another_topics_queue_of_the_same_name_is_no_second_lock() {
        let mut o = balanced();
        let grant = |t, p: &str, queue: &str| {
            let kind = Kind::ConsumerResponse {
                code: RequestCode::LOCK_BATCH_MQ,
                peer: "broker-a".into(),
                opaque: 1,
                status: Some(0),
                detail: Some(Detail::Names(strings(&[queue]))),
                topic: None,
            };
            event(t, p, kind)
        };
        let observed = format!("{}@broker-a:0", o.topic);
        o.apply(&grant(100, "c1", &observed));
        o.apply(&grant(200, "c2", "%RETRY%group@broker-a:0"));
        assert!(o.two_live_locks.is_empty());
        o.apply(&grant(300, "c2", &observed));
        assert_eq!(o.two_live_locks.len(), 1);
        assert_eq!(o.two_live_locks[0].queue, "broker-a:0");
    }

    #[test]
    fn a_stale_channel_keeps_the_group_from_rest() {
        let mut o = balanced();
        o.apply(&members(
            40,
            &["127.0.0.1@c1", "127.0.0.1@c1", "127.0.0.1@c2"],
        ));
        for t in [50, 60, 70] {
            o.apply(&alloc(t, "c1", &["c1", "c2"], &["broker-a:0"]));
            o.apply(&alloc(t + 1, "c2", &["c1", "c2"], &["broker-a:1"]));
        }
        assert_eq!(
            o.stale_channels(),
            [("broker-a".to_owned(), "127.0.0.1@c1".to_owned())]
        );
        assert!(!o.settled(2));
    }

    /// The expiry scan reports the channel it removes before removing it:
    /// the table is the one the removal leaves, so the stale entry is gone
    /// and the group may rest without another listing.
    #[test]
    fn an_expiry_listed_before_its_removal_leaves_the_table_without_it() {
        let mut o = balanced();
        let listing = |t, kind, listed: &[&str]| {
            let kind = Kind::Member {
                broker: "broker-a".into(),
                kind,
                client: Some("127.0.0.1@c1".into()),
                addr: None,
                members: strings(listed),
            };
            event(t, "cluster", kind)
        };
        let twice = ["127.0.0.1@c1", "127.0.0.1@c1", "127.0.0.1@c2"];
        o.apply(&listing(40, GroupEvent::ClientRegister, &twice));
        assert!(!o.stale_channels().is_empty());
        o.apply(&listing(41, GroupEvent::ClientUnregister, &twice));
        assert_eq!(o.listed("broker-a"), ["127.0.0.1@c1", "127.0.0.1@c2"]);
        assert!(o.stale_channels().is_empty());
        // Another path reports the table after the removal: taken as it is.
        let once = ["127.0.0.1@c1", "127.0.0.1@c2"];
        o.apply(&listing(42, GroupEvent::ClientUnregister, &once[1..]));
        assert_eq!(o.listed("broker-a"), ["127.0.0.1@c2"]);
    }

    #[test]
    fn a_killed_consumer_owns_nothing_and_its_queue_is_orphaned_until_taken() {
        let mut o = balanced();
        o.apply(&env(
            40,
            Env::Kill {
                consumer: "c1".into(),
            },
        ));
        assert_eq!(o.orphaned.len(), 1);
        assert_eq!(o.orphaned[0].queue, "broker-a:0");
        assert!(o.ownership["broker-a:0"][0].until == Some(40));
        o.apply(&alloc(50, "c2", &["c2"], &["broker-a:0", "broker-a:1"]));
        o.apply(&alloc(60, "c2", &["c2"], &["broker-a:0", "broker-a:1"]));
        o.apply(&alloc(70, "c2", &["c2"], &["broker-a:0", "broker-a:1"]));
        assert!(o.converged());
    }
}
