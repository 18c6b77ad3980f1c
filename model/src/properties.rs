//! The guarantees checked on every reachable state, named after what they
//! promise, and the notions they rest on (quiescence, convergence).

use crate::actor::{NodeState, RebalanceActor, RebalanceModel};
use crate::broker::BrokerState;
use crate::config::{members_of, Config, ConsumerSet, QueueSet};
use crate::consumer::{subscribed, ConsumerState, Phase};
use crate::message::Message;
use crate::name_server::NameServerState;
use rocketmq_rebalance_properties::{double_owned, is_partition, orphaned};
use stateright::actor::{is_no_op, Actor, ActorModelState, Id, Network, Out};
use stateright::Expectation;
use std::borrow::Cow;
use std::sync::Arc;

/// A state of the whole system.
pub type SystemState = ActorModelState<RebalanceActor>;

/// One property of the model.
pub struct ModelProperty {
    /// The guarantee, as reported.
    pub name: &'static str,
    /// Always (a counterexample is a failure) or sometimes (an example is
    /// required, proving the model reaches the hazard).
    pub expectation: Expectation,
    /// The predicate on one state.
    pub condition: fn(&RebalanceModel, &SystemState) -> bool,
}

/// Name of the safety property: at rest, no queue is consumed twice.
pub const NO_DOUBLE_OWNERSHIP: &str = "no queue stays double-owned";
/// Name of the convergence property: at rest, the group agrees.
pub const CONVERGED_WHEN_QUIESCENT: &str = "converged when quiescent";
/// Name of the agreement property: at rest, every broker a consumer may ask
/// lists what it last used, so its periodic rebalance has nothing to do.
pub const AGREE_AT_REST: &str = "member lists agree at rest";
/// Name of the example of transient double ownership.
pub const TRANSIENT_DOUBLE: &str = "transient double ownership";
/// Name of the example of a transient orphaned queue.
pub const TRANSIENT_ORPHAN: &str = "transient orphaned queue";
/// Name of the example of full convergence.
pub const FULL_CONVERGENCE: &str = "full convergence";

/// Every property, in report order.
pub const PROPERTIES: &[ModelProperty] = &[
    ModelProperty {
        name: NO_DOUBLE_OWNERSHIP,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.quiescent(model, state) || !g.some_double_owned()
        },
    },
    ModelProperty {
        name: CONVERGED_WHEN_QUIESCENT,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.quiescent(model, state) || g.converged()
        },
    },
    ModelProperty {
        name: AGREE_AT_REST,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.settled(model, state) || g.ticks_are_no_ops()
        },
    },
    ModelProperty {
        name: TRANSIENT_DOUBLE,
        expectation: Expectation::Sometimes,
        // Evaluated on every state for the whole run, so an exact bit test
        // rather than the `properties` crate, which decides the guarantee.
        condition: |model, state| Group::of(model, state).held_twice() != 0,
    },
    ModelProperty {
        name: TRANSIENT_ORPHAN,
        expectation: Expectation::Sometimes,
        condition: |model, state| Group::of(model, state).has_orphan_after_rebalance(),
    },
    ModelProperty {
        name: FULL_CONVERGENCE,
        expectation: Expectation::Sometimes,
        condition: |model, state| {
            let g = Group::of(model, state);
            g.live() != 0
                && g.consumers().all(|c| c.phase != Phase::Idle)
                && g.quiescent(model, state)
                && g.converged()
        },
    },
];

/// Every message in flight. Stateright 0.31's `Network::iter_all` never
/// advances inside an ordered flow (it loops for ever), so ordered flows
/// are walked here.
pub fn in_flight(network: &Network<Message>) -> Box<dyn Iterator<Item = (Id, Id, &Message)> + '_> {
    match network {
        Network::Ordered(flows) => Box::new(
            flows
                .iter()
                .flat_map(|(&(src, dst), msgs)| msgs.iter().map(move |m| (src, dst, m))),
        ),
        other => Box::new(other.iter_all().map(|env| (env.src, env.dst, env.msg))),
    }
}

/// A typed view of one system state; borrowing only, so that evaluating
/// a property on every state allocates nothing until it needs to.
pub struct Group<'a> {
    /// The configuration.
    pub cfg: &'a Config,
    actors: &'a [Arc<NodeState>],
}

impl<'a> Group<'a> {
    /// Views a system state by role.
    pub fn of(model: &'a RebalanceModel, state: &'a SystemState) -> Self {
        Self {
            cfg: &model.cfg,
            actors: &state.actor_states,
        }
    }

    /// The name server.
    pub fn name_server(&self) -> &'a NameServerState {
        match &*self.actors[0] {
            NodeState::NameServer(n) => n,
            other => unreachable!("actor 0 is the name server, not {other:?}"),
        }
    }

    /// Brokers, by index.
    pub fn brokers(&self) -> impl Iterator<Item = &'a BrokerState> {
        self.actors.iter().filter_map(|s| match &**s {
            NodeState::Broker(b) => Some(b),
            _ => None,
        })
    }

    /// Consumers, by index.
    pub fn consumers(&self) -> impl Iterator<Item = &'a ConsumerState> {
        self.actors.iter().filter_map(|s| match &**s {
            NodeState::Consumer(c) => Some(c),
            _ => None,
        })
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
        self.consumers()
            .filter(|c| c.phase == Phase::Running)
            .map(|c| members_of(c.owned & within).collect())
            .collect()
    }

    /// Some queue is owned by two live consumers (the `properties` crate
    /// decides, after a bit test rules out the common case cheaply:
    /// Stateright evaluates every property on every state).
    pub fn some_double_owned(&self) -> bool {
        self.held_twice() != 0 && !double_owned(&self.shares(!0)).is_empty()
    }

    /// Queues held by two or more live consumers, as a bit set.
    pub fn held_twice(&self) -> QueueSet {
        let mut seen: QueueSet = 0;
        let mut twice: QueueSet = 0;
        for c in self.consumers().filter(|c| c.phase == Phase::Running) {
            twice |= seen & c.owned;
            seen |= c.owned;
        }
        twice
    }

    /// Settled: no consumer has a rebalance due or in flight, and every
    /// message in flight would change nothing when delivered. This is where
    /// the model stops: it runs a rebalance only when woken (see
    /// `docs/spec.md`).
    pub fn settled(&self, model: &RebalanceModel, state: &SystemState) -> bool {
        let idle = self
            .consumers()
            .all(|c| c.phase != Phase::Running || (c.due == 0 && c.querying.is_none()));
        idle && in_flight(&state.network).all(|(src, dst, msg)| {
            let index = usize::from(dst);
            let current = &*state.actor_states[index];
            let mut next = Cow::Borrowed(current);
            let mut out = Out::new();
            model.actors[index].on_msg(dst, &mut next, src, *msg, &mut out);
            is_no_op(&next, &out)
        })
    }

    /// Periodic work is a no-op: every live consumer holds the current
    /// route, and every broker it can reach lists the members its last
    /// allocation used, so a route poll or a rebalance tick, whichever
    /// broker it asks, changes nothing.
    pub fn ticks_are_no_ops(&self) -> bool {
        let route = self.name_server().route;
        let brokers: Vec<&BrokerState> = self.brokers().collect();
        self.consumers().enumerate().all(|(i, c)| {
            let spec = &self.cfg.consumers[i];
            c.phase != Phase::Running
                || (c.route == route
                    && subscribed(self.cfg, i).all(|t| {
                        brokers.iter().enumerate().all(|(b, broker)| {
                            spec.unreachable & (1 << b) != 0 || c.views[t] == Some(broker.members)
                        })
                    }))
        })
    }

    /// Quiescent: settled, and periodic work is a no-op. Environment
    /// budgets left (a join, crash, leave or route change that may still
    /// happen) do not matter: the environment may never use them, so the
    /// group must be right while it waits.
    pub fn quiescent(&self, model: &RebalanceModel, state: &SystemState) -> bool {
        self.settled(model, state) && self.ticks_are_no_ops()
    }

    /// Converged: every live consumer holds the current route and the list
    /// of live consumers, and the queues of each subscribed topic are
    /// partitioned among its live subscribers.
    pub fn converged(&self) -> bool {
        let live = self.live();
        let route = self.name_server().route;
        let agree = self.consumers().enumerate().all(|(i, c)| {
            c.phase != Phase::Running
                || (c.route == route && subscribed(self.cfg, i).all(|t| c.views[t] == Some(live)))
        });
        agree
            && (0..self.cfg.topic_names.len()).all(|t| {
                let subscribers = members_of(u64::from(live))
                    .filter(|&i| self.cfg.consumers[i].topics & (1 << t) != 0)
                    .count();
                let all: Vec<usize> = members_of(self.cfg.route_queues(route, t)).collect();
                let shares = self.shares(self.cfg.topic_queues(t));
                if subscribers == 0 {
                    shares.iter().all(Vec::is_empty)
                } else {
                    is_partition(&all, &shares)
                }
            })
    }

    /// Some queue of the current route is owned by nobody although a live
    /// subscriber of its topic has completed a rebalance of it.
    pub fn has_orphan_after_rebalance(&self) -> bool {
        let route = self.name_server().route;
        (0..self.cfg.topic_names.len()).any(|t| {
            let rebalanced = self.consumers().enumerate().any(|(i, c)| {
                c.phase == Phase::Running
                    && self.cfg.consumers[i].topics & (1 << t) != 0
                    && c.views[t].is_some()
            });
            // Stateright evaluates every property on every state, found or
            // not: a bit test rules out the common case before the
            // `properties` crate decides.
            let route_queues = self.cfg.route_queues(route, t);
            let held = self
                .consumers()
                .filter(|c| c.phase == Phase::Running)
                .fold(0, |set, c| set | c.owned);
            if !rebalanced || route_queues & !held == 0 {
                return false;
            }
            let all: Vec<usize> = members_of(route_queues).collect();
            let shares = self.shares(self.cfg.topic_queues(t));
            !orphaned(&all, &shares).is_empty()
        })
    }
}
