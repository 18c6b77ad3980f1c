//! A typed view of one system state, and the notions the guarantees rest
//! on: settled, quiescent, converged.

use rocketmq_rebalance_properties::{double_owned, is_partition, orphaned};

use crate::config::{members_of, Config, ConsumerSet, QueueSet};
use crate::config::{set_of, Allocator, Route};
use crate::protocol::message::NO_OFFSET;
use crate::protocol::{
    BrokerState, ConsumerState, Message, NameServerState, Peer, Phase, PopStatus, Timer,
};
use crate::shell::{RebalanceModel, SystemState};

/// One system state seen by role; borrowing only, so that evaluating a
/// property on every state allocates nothing until it needs to.
pub struct Group<'a> {
    /// The configuration.
    pub cfg: &'a Config,
    model: &'a RebalanceModel,
    state: &'a SystemState,
}

impl<'a> Group<'a> {
    /// Views a system state by role.
    pub fn of(model: &'a RebalanceModel, state: &'a SystemState) -> Self {
        Self {
            cfg: &model.cfg,
            model,
            state,
        }
    }

    /// The name servers.
    pub fn name_server(&self) -> &'a NameServerState {
        &self.state.name_server
    }

    /// The route in force: the operators' script as far as it went, every
    /// broker of it listed.
    pub fn true_route(&self) -> Route {
        Config::true_route(self.state.name_server.version)
    }

    /// Brokers, by index.
    pub fn brokers(&self) -> impl Iterator<Item = &'a BrokerState> {
        self.state.brokers.iter()
    }

    /// Consumers, by index.
    pub fn consumers(&self) -> impl Iterator<Item = &'a ConsumerState> {
        self.state.consumers.iter()
    }

    /// Consumers that subscribe to `topic` now.
    pub fn subscribers(&self, topic: usize) -> ConsumerSet {
        self.consumers()
            .enumerate()
            .filter(|(_, c)| c.topics & 1 << topic != 0)
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// Running consumers. Crashed and stopped ones own nothing.
    pub fn live(&self) -> ConsumerSet {
        self.consumers()
            .enumerate()
            .filter(|(_, c)| c.phase == Phase::Running)
            .fold(0, |set, (i, _)| set | 1 << i)
    }

    /// Queues each live consumer owns within `within`, as queue indices.
    pub fn shares(&self, within: QueueSet) -> Vec<Vec<usize>> {
        self.consumed()
            .map(|(_, consumed)| members_of(consumed & within).collect())
            .collect()
    }

    /// Each live consumer with the queues it consumes: those it owns that
    /// it can pull. A pull reaches a queue's broker only if the consumer can
    /// reach it and its cached route lists it (`findBrokerAddressInSubscribe`),
    /// and, with the subscription table modelled, succeeds only if the
    /// broker's table for the group has the queue's topic
    /// (`PullMessageProcessor`: `SUBSCRIPTION_NOT_EXIST`). Owning a queue one
    /// cannot pull is not consuming it.
    pub fn consumed(&self) -> impl Iterator<Item = (usize, QueueSet)> + '_ {
        self.consumers()
            .enumerate()
            .filter(|(_, c)| c.phase == Phase::Running)
            .map(|(i, c)| {
                let pullable = c.targets(self.cfg, i).fold(0, |set, b| {
                    let broker = &self.state.brokers[usize::from(b)];
                    let topics = if self.cfg.protocol.subscription_table {
                        members_of(u64::from(broker.memory.subscription))
                            .fold(0, |set, t| set | self.cfg.topic_queues(t))
                    } else {
                        !0
                    };
                    set | self.cfg.broker_queues(usize::from(b)) & topics
                });
                (i, c.owned & pullable)
            })
    }

    /// Some queue is owned by two live consumers (the `properties` crate
    /// decides, after a bit test rules out the common case cheaply:
    /// Stateright evaluates every property on every state).
    pub fn some_double_owned(&self) -> bool {
        self.held_twice() != 0 && !double_owned(&self.shares(!0)).is_empty()
    }

    /// Queues consumed by two or more live consumers, as a bit set.
    pub fn held_twice(&self) -> QueueSet {
        let mut seen: QueueSet = 0;
        let mut twice: QueueSet = 0;
        for (_, consumed) in self.consumed() {
            twice |= seen & consumed;
            seen |= consumed;
        }
        twice
    }

    /// How many times message `offset` of `queue` reached application code
    /// (3: three or more), its copies sent back to the retry topic
    /// included: the listener is handed a copy as the message itself
    /// (`resetRetryAndNamespace`).
    pub fn deliveries(&self, queue: usize, offset: usize) -> u8 {
        let own = self.state.deliveries.count(queue, offset);
        let copies: u8 = self
            .copies()
            .filter(|&(copy, _)| self.copy_of(copy).any(|origin| origin == (queue, offset)))
            .map(|((retry, at), _)| self.state.deliveries.count(retry, at))
            .sum();
        (own + copies).min(3)
    }

    /// Every message appended to a retry queue during the run, as its queue
    /// and offset, with the broker whose log holds it.
    fn copies(&self) -> impl Iterator<Item = ((usize, usize), usize)> + '_ {
        (0..self.state.brokers.len()).flat_map(move |b| {
            let log = self.state.brokers[b].disk.retried;
            let retry = self.cfg.retry_queue_of(b).filter(|_| !log.is_empty());
            retry.into_iter().flat_map(move |retry| {
                (0..log.len()).map(move |i| ((retry, self.cfg.sizes.messages + i), b))
            })
        })
    }

    /// What the message at `copy` (a retry queue and an offset past its
    /// written messages) is a copy of, nearest first: a copy a producer
    /// sent to another broker's retry topic is recorded there as a copy of
    /// the copy, whose own origin its broker's log holds.
    fn copy_of(&self, copy: (usize, usize)) -> impl Iterator<Item = (usize, usize)> + '_ {
        let messages = self.cfg.sizes.messages;
        let mut at = Some(copy);
        std::iter::from_fn(move || {
            let (queue, offset) = at?;
            let index = offset.checked_sub(messages)?;
            if !self.cfg.is_retry_queue(queue) {
                return None;
            }
            let broker = &self.state.brokers[usize::from(self.cfg.broker_of(queue))];
            let log = broker.disk.retried;
            let origin = (index < log.len()).then(|| log.origin(index))?;
            at = Some(origin);
            Some(origin)
        })
    }

    /// Every call a live consumer waits on can still end: the call, its
    /// answer or its failure is in flight between it and the broker asked.
    pub fn every_call_ends(&self) -> bool {
        self.consumers().enumerate().all(|(i, c)| {
            let me = Peer::Consumer(i as u8);
            c.waiting(self.cfg).all(|call| {
                let broker = Peer::Broker(call.broker);
                self.state.network.iter().any(|env| {
                    (env.src == me && env.dst == broker && call.ended_by(true, &env.msg))
                        || (env.src == broker && env.dst == me && call.ended_by(false, &env.msg))
                })
            })
        })
    }

    /// No message below its queue's committed offset was left undelivered:
    /// what a new owner skips is lost.
    pub fn no_message_skipped(&self) -> bool {
        if self.cfg.pops() {
            return self.no_message_acked_undelivered();
        }
        (0..self.cfg.queues.len()).all(|q| {
            let stored = self.state.brokers[usize::from(self.cfg.broker_of(q))].offset(q);
            stored == NO_OFFSET || (0..usize::from(stored)).all(|o| self.deliveries(q, o) > 0)
        })
    }

    /// POP: no message is acknowledged at its broker without having
    /// reached application code.
    fn no_message_acked_undelivered(&self) -> bool {
        (0..self.cfg.queues.len()).all(|q| {
            let table = self.state.brokers[usize::from(self.cfg.broker_of(q))]
                .disk
                .pop;
            (0..self.cfg.sizes.messages).all(|o| {
                table.status(self.cfg, q, o).0 != PopStatus::Acked || self.deliveries(q, o) > 0
            })
        })
    }

    /// POP: messages that two consumers' running batches hold at once, as
    /// a count.
    pub fn messages_run_twice(&self) -> usize {
        (0..self.cfg.queues.len())
            .flat_map(|q| (0..self.cfg.sizes.messages).map(move |o| (q, o as u8)))
            .filter(|&(q, o)| {
                self.consumers()
                    .filter(|c| {
                        let pq = &c.queues[q];
                        pq.running() && (pq.from..pq.to).contains(&o)
                    })
                    .count()
                    >= 2
            })
            .count()
    }

    /// FIFO: running batches that start past a message of their queue
    /// not delivered yet, as a count.
    pub fn out_of_order(&self) -> usize {
        self.consumers()
            .flat_map(|c| c.queues.iter().enumerate())
            .filter(|(q, pq)| {
                pq.running() && (0..usize::from(pq.from)).any(|o| self.deliveries(*q, o) == 0)
            })
            .count()
    }

    /// FIFO: queues a consumer's pop was refused for (its empty answer on
    /// its way) while a handle nobody will settle blocks them: no batch
    /// runs it, no answer brings it to a consumer that asked, no retry
    /// with its pop's attempt id re-enters it, no acknowledgement of it is
    /// on its way on a live connection, and its invisible time has not
    /// passed already. Such a queue waits for the handle's invisible time,
    /// however often it is popped.
    pub fn blocked_by_abandoned_pops(&self) -> QueueSet {
        let network = &self.state.network;
        // The answers on their way of queue `q`'s pops, to consumers that
        // asked for them: their batch's first and end offsets and handle.
        let answers = |q: usize| {
            network
                .iter()
                .filter_map(move |env| match (env.msg, env.src, env.dst) {
                    (
                        Message::PopResult {
                            queue,
                            from,
                            to,
                            attempt,
                            generation,
                            epoch,
                        },
                        Peer::Broker(b),
                        Peer::Consumer(c),
                    ) if usize::from(queue) == q
                        && self.state.consumers[usize::from(c)].asked(b, q, generation, epoch) =>
                    {
                        Some((from, to, attempt))
                    }
                    _ => None,
                })
        };
        let claimed = |q: usize, h: u8| {
            let by_consumer = self.consumers().any(|c| {
                let pq = &c.queues[q];
                (pq.running() && pq.attempt == h) || pq.reenters == Some(h)
            });
            let on_its_way = network.iter().any(|env| match (env.msg, env.src, env.dst) {
                (
                    Message::PopMessage {
                        queue, reenters, ..
                    },
                    ..,
                ) => usize::from(queue) == q && reenters == Some(h),
                // A batch ran past the handle's invisible time: the broker's
                // block has already ended, only its marker is on its way.
                (
                    Message::InvisibleTimeExpired {
                        queue,
                        attempt,
                        passed: true,
                        ..
                    },
                    ..,
                ) => usize::from(queue) == q && attempt == h,
                (
                    Message::AckMessage {
                        queue,
                        attempt,
                        epoch,
                        ..
                    },
                    Peer::Consumer(c),
                    Peer::Broker(b),
                ) => {
                    usize::from(queue) == q
                        && attempt == h
                        && self.state.consumers[usize::from(c)].epoch(b) == epoch
                }
                _ => false,
            });
            by_consumer
                || on_its_way
                || answers(q).any(|(from, to, attempt)| from < to && attempt == h)
        };
        set_of(self.cfg.queues.len(), |q| {
            let broker = &self.state.brokers[usize::from(self.cfg.broker_of(q))];
            answers(q).any(|(from, to, _)| from == to)
                && (0..self.cfg.sizes.messages).any(|o| {
                    let (status, h) = broker.disk.pop.status(self.cfg, q, o);
                    status == PopStatus::Invisible && !claimed(q, h)
                })
        })
    }

    /// Every message of the route in force reached application code, on
    /// every topic some live consumer subscribes to (with nobody to consume
    /// a topic, the environment, not the protocol, holds it up).
    /// With POP, each one also acknowledged at its broker: a message
    /// delivered but revived is not done with.
    pub fn every_message_delivered(&self) -> bool {
        members_of(self.subscribed_queues()).all(|q| {
            let table = self.state.brokers[usize::from(self.cfg.broker_of(q))]
                .disk
                .pop;
            (0..self.cfg.sizes.messages).all(|o| {
                self.deliveries(q, o) > 0
                    && (!self.cfg.pops() || table.status(self.cfg, q, o).0 == PopStatus::Acked)
            })
        })
    }

    /// Queues of the route in force of a topic some live consumer
    /// subscribes to.
    fn subscribed_queues(&self) -> QueueSet {
        let live = self.live();
        let route = self.true_route();
        (0..self.cfg.topic_names.len())
            .filter(|&t| live & self.subscribers(t) != 0)
            .fold(0, |set, t| set | self.cfg.route_queues(route, t))
    }

    /// Orderly: the queues that satisfy `holds` for two consumers or more
    /// at once, as a bit set of queue indices.
    fn twice(&self, holds: impl Fn(&ConsumerState, usize) -> bool) -> u8 {
        let (mut once, mut twice) = (0u8, 0u8);
        for c in self.consumers() {
            for q in 0..self.cfg.queues.len() {
                if holds(c, q) {
                    twice |= once & 1 << q;
                    once |= 1 << q;
                }
            }
        }
        twice
    }

    /// Orderly: queues of which two consumers run a batch at once: live
    /// ones, or one that has left and still runs a batch its shutdown did
    /// not wait for.
    pub fn consumed_by_two(&self) -> u8 {
        self.twice(|c, q| c.queues[q].running())
    }

    /// Orderly: queues whose lock two live consumers trust at once (the
    /// lock granted, and valid by their own clock).
    pub fn trusted_twice(&self) -> u8 {
        let Some(timing) = self.cfg.orderly() else {
            return 0;
        };
        self.twice(|c, q| {
            c.phase == Phase::Running
                && c.table() & 1 << q != 0
                && c.queues[q].lock_trusted(timing.validity)
        })
    }

    /// Orderly: every queue of a topic some live consumer subscribes to is
    /// owned by a live consumer that can pull it and trusts its lock of it.
    pub fn every_queue_held(&self) -> bool {
        let Some(timing) = self.cfg.orderly() else {
            return false;
        };
        let held = self.consumed().fold(0, |set, (i, consumed)| {
            let c = &self.state.consumers[i];
            set | members_of(consumed)
                .filter(|&q| c.queues[q].lock_trusted(timing.validity))
                .fold(0, |set, q| set | 1 << q)
        });
        self.subscribed_queues() & !held == 0
    }

    /// The most times one message reached application code (3: three or
    /// more).
    pub fn max_deliveries(&self) -> u8 {
        (0..self.cfg.queues.len())
            .flat_map(|q| (0..self.cfg.sizes.messages).map(move |o| (q, o)))
            .map(|(q, o)| self.deliveries(q, o))
            .max()
            .unwrap_or(0)
    }

    /// The most messages of one queue delivered more than once.
    pub fn max_duplicates_of_a_queue(&self) -> usize {
        (0..self.cfg.queues.len())
            .map(|q| {
                (0..self.cfg.sizes.messages)
                    .filter(|&o| self.deliveries(q, o) >= 2)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// Messages delivered more than once, every queue together.
    pub fn duplicated_messages(&self) -> usize {
        (0..self.cfg.queues.len())
            .flat_map(|q| (0..self.cfg.sizes.messages).map(move |o| (q, o)))
            .filter(|&(q, o)| self.deliveries(q, o) >= 2)
            .count()
    }

    /// Paused queues: queues of the route in force with a message not yet
    /// delivered that no live consumer consumes, once a live subscriber of
    /// its topic has rebalanced it.
    pub fn paused_queues(&self) -> QueueSet {
        let route = self.true_route();
        let consumed = self.consumed().fold(0, |set, (_, c)| set | c);
        (0..self.cfg.topic_names.len())
            .filter(|&t| {
                self.consumers().any(|c| {
                    c.phase == Phase::Running && c.topics & (1 << t) != 0 && c.views[t].is_some()
                })
            })
            .fold(0, |set, t| set | self.cfg.route_queues(route, t))
            & !consumed
            & set_of(self.cfg.queues.len(), |q| {
                (0..self.cfg.sizes.messages).any(|o| self.deliveries(q, o) == 0)
            })
    }

    /// Stalled queues, with the consumers they wait on: bits `16 q ..
    /// 16 q + 16` are the live consumers that own queue `q` and can pull
    /// it (orderly: trusting their lock of it, or holding it at its broker,
    /// so that no one else may consume it) while it has a message not yet
    /// delivered and no batch of it runs. A queue nobody owns is paused
    /// ([`Group::paused_queues`]), not stalled.
    pub fn stalled_owners(&self) -> u128 {
        let timing = self.cfg.orderly();
        let running = self.consumers().fold(0u64, |set, c| {
            set | set_of(c.queues.len(), |q| c.queues[q].running())
        });
        let waiting = set_of(self.cfg.queues.len(), |q| {
            (0..self.cfg.sizes.messages).any(|o| self.deliveries(q, o) == 0)
        }) & !running;
        self.consumed().fold(0, |owners, (i, consumed)| {
            let c = &self.state.consumers[i];
            let key = self.cfg.lock_key(i);
            let held = |q: usize| {
                let broker = &self.state.brokers[usize::from(self.cfg.broker_of(q))];
                broker.down.is_none() && broker.memory.locks.holder(q) == Some(key)
            };
            members_of(consumed & waiting)
                .filter(|&q| {
                    timing.map_or(true, |t| c.queues[q].lock_trusted(t.validity) || held(q))
                })
                .fold(owners, |owners, q| owners | 1u128 << (16 * q + i))
        })
    }

    /// The queues consumer `i` allocates itself from the member lists of
    /// its last rounds: those it consumes, and those it wants but has not
    /// yet locked (orderly, a refused lock leaves no trace of the queue in
    /// its table until the next round).
    fn wanted(&self, i: usize, c: &ConsumerState) -> QueueSet {
        c.subscribed().fold(c.owned, |set, t| {
            let allocated =
                c.views[t].and_then(|members| self.cfg.allocate(c.route, t, members, 0, i));
            set | allocated.unwrap_or(0)
        })
    }

    /// Orderly: queues whose owner (a consumer that consumes them, or that
    /// allocated them itself and asks for their lock) waits for a lock that
    /// their broker, up, still gives another client.
    pub fn lock_waits(&self) -> QueueSet {
        (0..self.state.consumers.len()).fold(0, |set, i| set | self.lock_waits_of(i))
    }

    /// Orderly: the queues consumer `i`, running, waits for the lock of
    /// ([`Group::lock_waits`]).
    pub fn lock_waits_of(&self, i: usize) -> QueueSet {
        let Some(timing) = self.cfg.orderly() else {
            return 0;
        };
        let c = &self.state.consumers[i];
        if c.phase != Phase::Running {
            return 0;
        }
        let key = self.cfg.lock_key(i);
        members_of(self.wanted(i, c))
            .filter(|&q| {
                let broker = &self.state.brokers[usize::from(self.cfg.broker_of(q))];
                !c.queues[q].lock_trusted(timing.validity)
                    && broker.down.is_none()
                    && broker.memory.locks.holder(q).is_some_and(|h| h != key)
            })
            .fold(0, |set, q| set | 1 << q)
    }

    /// Settled: no consumer has a rebalance due or in flight, and every
    /// message in flight would change nothing when delivered. This is where
    /// the model stops: it runs a rebalance only when woken (see
    /// `docs/spec.md`).
    pub fn settled(&self) -> bool {
        let idle = self.consumers().enumerate().all(|(i, c)| {
            c.phase != Phase::Running
                || (c.due == 0
                    && c.querying.is_none()
                    && !self.connecting(i)
                    && !self.waits_for_pull_expiry(i, c))
        });
        // A stopped broker's start is still to come.
        let brokers_up = self.state.brokers.iter().all(|b| b.down.is_none());
        idle && brokers_up
            && self
                .state
                .network
                .iter()
                .all(|env| self.model.delivery_changes_nothing(self.state, env))
            && !self.model.periodic_work_pending(self.state)
    }

    /// Consumer `i` (orderly) holds a queue that is dropped but allocated to
    /// it again: its table has the queue, so no round adds it, until its
    /// pulls have stopped for the pull expiry and a periodic rebalance
    /// drops it and adds it afresh (`isPullExpired`, 120 s). Time and that
    /// round are still to come: it is not at rest.
    fn waits_for_pull_expiry(&self, i: usize, c: &ConsumerState) -> bool {
        let dropped = u64::from(c.dropped());
        dropped != 0
            && c.subscribed().any(|t| {
                c.views[t]
                    .and_then(|members| self.cfg.allocate(c.route, t, members, 0, i))
                    .is_some_and(|share| share & dropped != 0)
            })
    }

    /// Consumer `i` is about to open a connection, or its new one is not
    /// yet active (its `Connect` or `ChannelActive` timer is armed): its
    /// heartbeat there is still to come.
    fn connecting(&self, i: usize) -> bool {
        let timers = self.state.timers[self.model.index_of(Peer::Consumer(i as u8))];
        timers
            .iter()
            .any(|t| matches!(t, Timer::Connect { .. } | Timer::ChannelActive { .. }))
    }

    /// Periodic work is a no-op: every live consumer holds the route its
    /// name server serves, and every broker it talks to lists the members
    /// its last allocation used, so a route poll or a periodic rebalance,
    /// whichever broker it asks, changes nothing.
    pub fn periodic_work_is_no_op(&self) -> bool {
        let server = self.cfg.protocol.assignment == Allocator::Server;
        self.brokers_routes_current()
            && self.consumers().enumerate().all(|(i, c)| {
                let polled = self.name_server().route(self.cfg.consumers[i].name_server);
                c.phase != Phase::Running
                    || (c.route == polled
                        && c.subscribed().all(|t| {
                            // `rebalanceByTopic` stops at a topic its route
                            // lacks (the retry topic before it is created).
                            (!server && self.cfg.route_queues(c.route, t) == 0)
                                || c.targets(self.cfg, i).all(|b| {
                                    let broker = &self.state.brokers[usize::from(b)];
                                    c.views[t] == Some(broker.memory.members)
                                        && (!server || c.assigned[t] == broker.memory.route)
                                })
                        }))
            })
    }

    /// With server-side assignment brokers allocate from their own cached
    /// routes: each holds what its name server serves.
    fn brokers_routes_current(&self) -> bool {
        let servers = self.cfg.name_server_names.len();
        self.cfg.protocol.assignment == Allocator::Client
            || self
                .brokers()
                .enumerate()
                .all(|(b, broker)| broker.memory.route == self.name_server().route(b % servers))
    }

    /// Quiescent: settled, and periodic work is a no-op. Environment
    /// budgets left (a join, crash, leave or route change that may still
    /// happen) do not matter: the environment may never use them, so the
    /// group must be right while it waits.
    pub fn quiescent(&self) -> bool {
        self.settled() && self.periodic_work_is_no_op()
    }

    /// Converged: every live consumer holds the route in force and the list
    /// of live consumers, and the queues of each subscribed topic are
    /// partitioned among its live subscribers.
    pub fn converged(&self) -> bool {
        let live = self.live();
        let route = self.true_route();
        let agree = self.consumers().all(|c| {
            c.phase != Phase::Running
                || (c.route == route
                    && c.subscribed()
                        .all(|t| self.cfg.route_queues(route, t) == 0 || c.views[t] == Some(live)))
        });
        agree
            && (0..self.cfg.topic_names.len()).all(|t| {
                let all: Vec<usize> = members_of(self.cfg.route_queues(route, t)).collect();
                let shares = self.shares(self.cfg.topic_queues(t));
                if live & self.subscribers(t) == 0 {
                    shares.iter().all(Vec::is_empty)
                } else if self.cfg.pops() {
                    // POP's assignments overlap: each live consumer consumes
                    // what the broker assigns it from the live members, and
                    // together they consume every queue.
                    let topic = self.cfg.topic_queues(t);
                    let assigned = self.consumed().all(|(i, consumed)| {
                        Some(consumed & topic) == self.cfg.allocate(route, t, live, 0, i)
                    });
                    let covered = self.consumed().fold(0, |set, (_, c)| set | c);
                    assigned && self.cfg.route_queues(route, t) & !covered == 0
                } else {
                    is_partition(&all, &shares)
                }
            })
    }

    /// Some queue of the current route is owned by nobody although a live
    /// subscriber of its topic has completed a rebalance of it.
    pub fn has_orphan_after_rebalance(&self) -> bool {
        let route = self.true_route();
        let held = self.consumed().fold(0, |set, (_, consumed)| set | consumed);
        (0..self.cfg.topic_names.len()).any(|t| {
            let rebalanced = self.consumers().any(|c| {
                c.phase == Phase::Running && c.topics & (1 << t) != 0 && c.views[t].is_some()
            });
            // Stateright evaluates every property on every state, found or
            // not: a bit test rules out the common case before the
            // `properties` crate decides.
            let route_queues = self.cfg.route_queues(route, t);
            if !rebalanced || route_queues & !held == 0 {
                return false;
            }
            let all: Vec<usize> = members_of(route_queues).collect();
            let shares = self.shares(self.cfg.topic_queues(t));
            !orphaned(&all, &shares).is_empty()
        })
    }
}
