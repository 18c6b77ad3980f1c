//! Which steps commute: the independence relation the safety search's sleep
//! sets rely on ([`crate::search::bfs`]), derived from what each step
//! touches ([`Footprint`]).
//!
//! A step is its actor's: the receiver of a delivery, the owner of a timer
//! or an armed fault. A machine reads and writes its own state alone
//! (the protocol is sans-IO), and its step changes its own timers, takes
//! a message off one flow into it and appends to flows out of it. Appending
//! to a flow and taking the head off the same flow commute (the head is
//! there before and after), and the ghost delivery counts only grow,
//! saturating, so two steps of different actors commute, except where the
//! shell reads something that another actor's step writes. Those
//! exceptions, all of them, are the [`Footprint`] fields:
//!
//! 1. **The redundant periodic message** (`RebalanceModel::redundant`): a
//!    timer or fault that sends a periodic message drops it when a copy is
//!    already in flight on that flow (which the receiver's deliveries take
//!    off) or when its delivery would change nothing (which reads the
//!    receiver's state). Consumers send periodic messages to brokers (the
//!    heartbeat, the lock renewal) and to themselves; the shell checks
//!    each against [`periodic_receivers`].
//! 2. **Merged wake-ups** (`SendWakeUp` when
//!    [`subscription::wake_ups_merge`]): a notification identical to one
//!    still on its way is not sent again, which reads the flow to its
//!    receiver; brokers notify consumers ([`wake_up_receivers`]).
//! 3. **The orderly clock** (`Action::Elapse`): a tick changes every
//!    broker's and consumer's clock, and whether it may come reads the
//!    consumers and the messages in flight: it depends on every step.
//! 4. **Waiting for a stopped broker** (with
//!    [`ProtocolOptions::restart_stops`](crate::config::ProtocolOptions)):
//!    a consumer's timer that connects to a broker ([`Timer::connects_to`])
//!    is a step only while that broker listens, which reads the brokers'
//!    states ([`reads_listening`]).
//!
//! The environment's fault budgets live in each actor's armed faults, so a
//! fault is its actor's step like a timer. Network delivery to the same
//! receiver is two steps of one actor: dependent.

use crate::config::Config;
use crate::protocol::{subscription, Peer, Timer};
use crate::search::bfs::Reduction;

use super::{Action, RebalanceModel};

/// The rebalance model's [`Reduction`]: [`independent`] on its
/// configuration.
pub struct ActorIndependence;

impl Reduction<RebalanceModel> for ActorIndependence {
    fn independent(&self, model: &RebalanceModel, a: &Action, b: &Action) -> bool {
        independent(&model.cfg, a, b)
    }
}

/// Kinds of actor, as a set: which other actors a step reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles(u8);

impl Roles {
    /// No actor.
    pub const NONE: Roles = Roles(0);
    /// The name server.
    pub const NAME_SERVER: Roles = Roles(1);
    /// Every broker.
    pub const BROKERS: Roles = Roles(2);
    /// Every consumer.
    pub const CONSUMERS: Roles = Roles(4);
    /// Every actor.
    pub const ALL: Roles = Roles(7);

    /// The role of `peer`.
    pub fn of(peer: Peer) -> Roles {
        match peer {
            Peer::NameServer => Roles::NAME_SERVER,
            Peer::Broker(_) => Roles::BROKERS,
            Peer::Consumer(_) => Roles::CONSUMERS,
        }
    }

    /// Whether `peer`'s role is one of these.
    pub fn contains(self, peer: Peer) -> bool {
        self.0 & Roles::of(peer).0 != 0
    }
}

/// What a step reads and writes beyond its actor's own machine, timers and
/// outgoing flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Whose step it is; `None`: every actor's (the clock).
    pub actor: Option<Peer>,
    /// The sender of the flow it takes a message off, if it does.
    pub consumes_from: Option<Peer>,
    /// Actors whose machine state it reads (exception 1).
    pub reads_machines: Roles,
    /// Actors the flows from it to which it reads (exceptions 1 and 2).
    pub reads_flows_to: Roles,
}

/// The receivers a periodic message of `from` may have besides itself
/// (exception 1). The shell refuses a periodic message to anyone else, so
/// a protocol change that sends one must come here first.
pub fn periodic_receivers(from: Peer) -> Roles {
    match from {
        Peer::Consumer(_) => Roles::BROKERS,
        // None today: a periodic message from these would be a new
        // behaviour, taken to read everyone until decided otherwise.
        Peer::NameServer | Peer::Broker(_) => Roles::ALL,
    }
}

/// Whether the step of `action` may send a periodic message that the shell
/// drops when redundant (exception 1): only timers' and faults' are
/// filtered. A new timer does not compile until it is decided here, a
/// fault says so in its definition (`FaultSpec::periodic`), and the shell
/// refuses a periodic message from a step declared not to send one.
pub fn may_send_periodic(action: &Action) -> bool {
    match *action {
        Action::Deliver(_) | Action::Elapse { .. } => false,
        Action::Timeout(_, timer) => match timer {
            // The heartbeat to every broker; every offset, persisted.
            Timer::Heartbeat | Timer::Persist => true,
            Timer::Rebalance { .. }
            | Timer::PeriodicRebalance
            | Timer::Connect { .. }
            | Timer::ChannelActive { .. }
            | Timer::Heal
            | Timer::Start
            | Timer::Pull { .. }
            | Timer::Done { .. }
            | Timer::LockAll
            | Timer::SyncOffsets
            | Timer::ReloadGroupConfig => false,
        },
        // From the fault's one definition.
        Action::Fault(_, fault) => fault.spec().periodic,
    }
}

/// Whether the step of `action` reads whether a broker listens (exception
/// 4): only when restarts have a stopped phase, where a broker may not.
pub fn reads_listening(cfg: &Config, action: &Action) -> bool {
    cfg.protocol.restart_stops
        && matches!(action, Action::Timeout(_, timer) if timer.connects_to().is_some())
}

/// The receivers of `from`'s wake-ups whose flows its steps read, when
/// wake-ups merge (exception 2). The shell refuses a merged wake-up to
/// anyone else.
pub fn wake_up_receivers(cfg: &Config, from: Peer) -> Roles {
    if !subscription::wake_ups_merge(cfg) {
        return Roles::NONE;
    }
    match from {
        Peer::Broker(_) => Roles::CONSUMERS,
        Peer::NameServer | Peer::Consumer(_) => Roles::ALL,
    }
}

/// What `action` touches in a model of `cfg`.
pub fn footprint(cfg: &Config, action: &Action) -> Footprint {
    match *action {
        Action::Deliver(env) => Footprint {
            actor: Some(env.dst),
            consumes_from: Some(env.src),
            reads_machines: Roles::NONE,
            reads_flows_to: wake_up_receivers(cfg, env.dst),
        },
        Action::Timeout(peer, _) | Action::Fault(peer, _) => {
            let periodic = if may_send_periodic(action) {
                periodic_receivers(peer)
            } else {
                Roles::NONE
            };
            let listening = if reads_listening(cfg, action) {
                Roles::BROKERS
            } else {
                Roles::NONE
            };
            Footprint {
                actor: Some(peer),
                consumes_from: None,
                reads_machines: Roles(periodic.0 | listening.0),
                reads_flows_to: Roles(periodic.0 | wake_up_receivers(cfg, peer).0),
            }
        }
        Action::Elapse { .. } => Footprint {
            actor: None,
            consumes_from: None,
            reads_machines: Roles::ALL,
            reads_flows_to: Roles::ALL,
        },
    }
}

/// Whether `a` and `b` commute in every state of a model of `cfg` where
/// both are steps: different actors, and neither reads what the other
/// writes (its actor's machine, or the flow it takes a message off).
pub fn independent(cfg: &Config, a: &Action, b: &Action) -> bool {
    let (fa, fb) = (footprint(cfg, a), footprint(cfg, b));
    let (Some(x), Some(y)) = (fa.actor, fb.actor) else {
        return false;
    };
    let reads = |f: &Footprint, other: &Footprint, me: Peer, them: Peer| {
        f.reads_machines.contains(them)
            || (other.consumes_from == Some(me) && f.reads_flows_to.contains(them))
    };
    x != y && !reads(&fa, &fb, x, y) && !reads(&fb, &fa, y, x)
}

#[cfg(test)]
mod tests {
    use std::collections::{HashSet, VecDeque};
    use std::sync::Arc;

    use super::*;
    use crate::config::{NetworkKind, Scenario};
    use crate::shell::{RebalanceModel, SystemState};

    /// States of `model` breadth-first, at most `limit`.
    fn reachable(model: &RebalanceModel, limit: usize) -> Vec<SystemState> {
        let init = model.initial_state();
        let mut seen = HashSet::from([init.clone()]);
        let mut queue = VecDeque::from([init]);
        let mut out = Vec::new();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            actions.clear();
            model.enabled(&state, &mut actions);
            for &action in &actions {
                if let Some(next) = model.step(&state, action) {
                    if seen.len() < limit && seen.insert(next.clone()) {
                        queue.push_back(next);
                    }
                }
            }
            out.push(state);
        }
        out
    }

    /// Every pair the relation calls independent, in every state reached
    /// (the whole space of the small scenarios, the first states of the
    /// others): both orders are steps and end in the same state.
    fn check_commutation(model: &RebalanceModel, limit: usize) -> usize {
        let mut pairs = 0;
        let mut actions = Vec::new();
        for state in reachable(model, limit) {
            actions.clear();
            model.enabled(&state, &mut actions);
            let steps: Vec<_> = actions
                .iter()
                .filter_map(|&a| Some((a, model.step(&state, a)?)))
                .collect();
            for (i, (a, after_a)) in steps.iter().enumerate() {
                for (b, after_b) in &steps[i + 1..] {
                    if !independent(&model.cfg, a, b) {
                        continue;
                    }
                    assert!(independent(&model.cfg, b, a), "symmetric: {a:?} {b:?}");
                    pairs += 1;
                    let ab = model.step(after_a, *b);
                    let ba = model.step(after_b, *a);
                    assert!(ab.is_some(), "{a:?} disables {b:?} in {state:?}");
                    assert!(ba.is_some(), "{b:?} disables {a:?} in {state:?}");
                    assert_eq!(ab, ba, "{a:?} and {b:?} do not commute in {state:?}");
                }
            }
        }
        pairs
    }

    fn config(scenario: Scenario, network: NetworkKind) -> Option<Config> {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        Config::new(scenario, scenario.default_sizes(), network, avg).ok()
    }

    fn model(scenario: Scenario, network: NetworkKind) -> Option<RebalanceModel> {
        config(scenario, network).map(RebalanceModel::new)
    }

    #[test]
    fn independent_steps_commute_in_every_scenario() {
        for &scenario in Scenario::ALL {
            for network in [
                NetworkKind::Ordered,
                NetworkKind::Unordered,
                NetworkKind::Duplicating,
            ] {
                let Some(model) = model(scenario, network) else {
                    continue;
                };
                let pairs = check_commutation(&model, 20_000);
                assert!(pairs > 0, "{scenario} {network:?}: nothing to reduce");
            }
        }
    }

    #[test]
    fn independent_steps_commute_with_the_periodic_rebalance() {
        for scenario in [
            Scenario::Healthy,
            Scenario::Crash,
            Scenario::SubscriptionFlap,
        ] {
            let cfg = config(scenario, NetworkKind::Ordered).expect("valid");
            let model = RebalanceModel::new(cfg.with_periodic_rebalance(true));
            check_commutation(&model, 20_000);
        }
    }

    #[test]
    fn the_clock_and_one_actors_steps_are_dependent() {
        let model = model(Scenario::Healthy, NetworkKind::Ordered).expect("valid");
        let c1 = Peer::Consumer(0);
        let tick = Action::Elapse { lagging: None };
        let join = Action::Fault(c1, crate::protocol::Fault::Join);
        assert!(!independent(&model.cfg, &tick, &join));
        assert!(!independent(&model.cfg, &join, &join));
    }
}
