//! The Stateright shell: the state of the whole system (every process's
//! state machine, the messages in flight, the armed timers) and the steps
//! between states. It decides nothing about the protocol: it hands each
//! delivery, timer and fault to the sans-IO machine it concerns
//! ([`crate::protocol`]), offers the clock's tick when the protocol's
//! [`clock`] says one may come, and carries out the machines' outputs.
//!
//! Its semantics are those of Stateright's `ActorModel` (a step that changes
//! nothing is no step; on an ordered network a delivery always consumes its
//! message; a timer that fires is disarmed unless re-armed), with the state
//! stored compactly: see `docs/performance.md`.

pub mod deliveries;
pub mod fingerprint;
pub mod independence;
pub mod network;
pub mod timers;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::config::{Config, NetworkKind};
use crate::protocol::{
    clock, subscription, BrokerState, ConsumerState, Fault, Input, Machine, NameServerState,
    Output, Peer, Timer,
};

pub use deliveries::Deliveries;

/// The actor index of a peer in `cfg`'s system: name server 0, then
/// brokers, then consumers.
pub(crate) fn actor_index(cfg: &Config, peer: Peer) -> usize {
    match peer {
        Peer::NameServer => 0,
        Peer::Broker(b) => 1 + usize::from(b),
        Peer::Consumer(c) => 1 + cfg.broker_names.len() + usize::from(c),
    }
}
pub use network::{Envelope, Network};
pub use timers::TimerSet;

/// The state of the whole system.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SystemState {
    /// The name server.
    pub name_server: NameServerState,
    /// Brokers, by index.
    pub brokers: Vec<BrokerState>,
    /// Consumers, by index.
    pub consumers: Vec<ConsumerState>,
    /// Messages in flight.
    pub network: Network,
    /// Armed timers, by actor index (name server, brokers, consumers).
    pub timers: Vec<TimerSet>,
    /// Ghost state: how many times each message reached application code.
    pub deliveries: Deliveries,
}

/// One step of the system: a delivery or a timer firing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Action {
    /// The message is delivered to its receiver.
    Deliver(Envelope),
    /// The actor's timer fires.
    Timeout(Peer, Timer),
    /// The environment makes the actor's armed fault happen.
    Fault(Peer, Fault),
    /// Orderly consumption only: a tick of the clock, 10 s of RocketMQ's
    /// (`clock::tick`). Every clock advances, except, with clock drift,
    /// the wall clock of the `lagging` consumer, stepped back by the tick.
    Elapse {
        /// The consumer whose clock stands still, if any.
        lagging: Option<u8>,
    },
}

/// The checked model: a configuration and a way to stop a run early.
#[derive(Clone, Debug)]
pub struct RebalanceModel {
    /// The configuration every step reads.
    pub cfg: Arc<Config>,
    /// Set to end a run early: every successor is then out of bounds.
    /// Stateright's own timeout only ends a thread when it runs out of
    /// local work (a simulation's, or the searches of a model's other
    /// users), which can take minutes.
    stop: Arc<AtomicBool>,
}

impl RebalanceModel {
    /// The model of `cfg`.
    pub fn new(cfg: Config) -> Self {
        Self {
            cfg: Arc::new(cfg),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Asks a running check of this model (or of a clone) to stop exploring.
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`RebalanceModel::request_stop`] was called.
    pub(crate) fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The actor index of a peer: name server 0, then brokers, then
    /// consumers.
    pub(crate) fn index_of(&self, peer: Peer) -> usize {
        actor_index(&self.cfg, peer)
    }

    /// Every peer, in actor index order.
    pub(crate) fn peers(&self) -> impl Iterator<Item = Peer> {
        let brokers = self.cfg.broker_names.len() as u8;
        let consumers = self.cfg.consumers.len() as u8;
        std::iter::once(Peer::NameServer)
            .chain((0..brokers).map(Peer::Broker))
            .chain((0..consumers).map(Peer::Consumer))
    }

    /// The name of a peer in traces: `namesrv`, `broker-a`, `c1`.
    pub(crate) fn peer_name(&self, peer: Peer) -> &str {
        match peer {
            Peer::NameServer => "namesrv",
            Peer::Broker(b) => &self.cfg.broker_names[usize::from(b)],
            Peer::Consumer(c) => &self.cfg.consumers[usize::from(c)].name,
        }
    }

    /// Every actor started, with the outputs of each start carried out.
    pub fn initial_state(&self) -> SystemState {
        let cfg = &*self.cfg;
        let (name_server, ns_out) = NameServerState::start(cfg, 0);
        let (brokers, broker_out): (Vec<_>, Vec<_>) = (0..cfg.broker_names.len())
            .map(|b| BrokerState::start(cfg, b))
            .unzip();
        let (consumers, consumer_out): (Vec<_>, Vec<_>) = (0..cfg.consumers.len())
            .map(|c| ConsumerState::start(cfg, c))
            .unzip();
        let mut state = SystemState {
            name_server,
            brokers,
            consumers,
            network: Network::default(),
            timers: vec![TimerSet::default(); self.peers().count()],
            deliveries: Deliveries::default(),
        };
        self.carry_out(&mut state, Peer::NameServer, ns_out);
        for (b, outputs) in broker_out.into_iter().enumerate() {
            self.carry_out(&mut state, Peer::Broker(b as u8), outputs);
        }
        for (c, outputs) in consumer_out.into_iter().enumerate() {
            self.carry_out(&mut state, Peer::Consumer(c as u8), outputs);
        }
        state
    }

    /// Every step enabled in `state`: deliveries (sorted by sender, receiver
    /// and message), then by actor its timers, then its faults.
    pub fn enabled(&self, state: &SystemState, actions: &mut Vec<Action>) {
        actions.extend(
            state
                .network
                .deliverable(self.cfg.network)
                .map(|env| Action::Deliver(*env)),
        );
        for peer in self.peers() {
            let timers = state.timers[self.index_of(peer)];
            actions.extend(
                timers
                    .iter()
                    .filter(|timer| connects_to_a_listening_broker(state, timer))
                    .map(|timer| Action::Timeout(peer, timer)),
            );
            actions.extend(timers.faults().map(|fault| Action::Fault(peer, fault)));
        }
        let in_flight = state.network.iter().map(|env| &env.msg);
        if clock::may_tick(&self.cfg, &state.brokers, &state.consumers, in_flight) {
            actions.push(Action::Elapse { lagging: None });
            actions.extend(
                clock::may_lag(&self.cfg, &state.consumers)
                    .map(|c| Action::Elapse { lagging: Some(c) }),
            );
        }
    }

    /// The state after `action`, or `None` when it changes nothing.
    pub fn step(&self, state: &SystemState, action: Action) -> Option<SystemState> {
        match action {
            Action::Deliver(env) => {
                let step = self.on_message(state, &env).filter(|c| !c.is_nothing());
                // Over TCP a delivery that changes nothing still consumes
                // its message; elsewhere it is no step at all.
                if step.is_none() && self.cfg.network != NetworkKind::Ordered {
                    return None;
                }
                let mut next = state.clone();
                next.network.deliver(self.cfg.network, &env);
                if let Some(change) = step {
                    self.apply(&mut next, env.dst, change);
                }
                Some(next)
            }
            Action::Timeout(peer, timer) => {
                let mut change = self.react(state, peer, Input::Timer(&timer))?;
                declared_periodic(&action, peer, &change.outputs);
                change
                    .outputs
                    .retain(|output| !self.redundant(state, peer, output));
                // A timer whose step only re-arms it changed nothing.
                if change.state.is_none() && change.outputs == [Output::Arm(timer)] {
                    return None;
                }
                let mut next = state.clone();
                let index = self.index_of(peer);
                next.timers[index].disarm(timer);
                self.apply(&mut next, peer, change);
                Some(next)
            }
            Action::Fault(peer, fault) => {
                // As a timer: a fault its machine does not answer is no step.
                let mut change = self.react(state, peer, Input::Fault(fault))?;
                declared_periodic(&action, peer, &change.outputs);
                change
                    .outputs
                    .retain(|output| !self.redundant(state, peer, output));
                if change.state.is_none() && change.outputs == [Output::ArmFault(fault)] {
                    return None;
                }
                let mut next = state.clone();
                next.timers[self.index_of(peer)].disarm_fault(fault);
                self.apply(&mut next, peer, change);
                Some(next)
            }
            Action::Elapse { lagging } => {
                let mut next = state.clone();
                clock::tick(&self.cfg, &mut next.brokers, &mut next.consumers, lagging);
                // Once every age has saturated, a tick changes nothing.
                (next != *state).then_some(next)
            }
        }
    }

    /// A periodic message that would change nothing: its delivery now
    /// changes nothing, or a copy is already on its way.
    fn redundant(&self, state: &SystemState, from: Peer, output: &Output) -> bool {
        let Output::SendPeriodic(dst, msg) = output else {
            return false;
        };
        let env = Envelope {
            src: from,
            dst: *dst,
            msg: *msg,
        };
        state.network.iter().any(|e| *e == env) || self.delivery_changes_nothing(state, &env)
    }

    /// Whether some periodic message of a running consumer would change
    /// something now: its periodic heartbeat is work still to do.
    pub(crate) fn periodic_work_pending(&self, state: &SystemState) -> bool {
        subscription::periodic_heartbeats(&self.cfg)
            && (0..state.consumers.len()).any(|c| {
                let peer = Peer::Consumer(c as u8);
                self.react(state, peer, Input::Timer(&Timer::Heartbeat))
                    .is_some_and(|change| {
                        change.outputs.iter().any(|o| {
                            matches!(o, Output::SendPeriodic(..)) && !self.redundant(state, peer, o)
                        })
                    })
            })
    }

    /// Whether delivering `env` in `state` would change nothing (besides
    /// consuming it).
    pub(crate) fn delivery_changes_nothing(&self, state: &SystemState, env: &Envelope) -> bool {
        self.on_message(state, env).map_or(true, |c| c.is_nothing())
    }

    fn on_message(&self, state: &SystemState, env: &Envelope) -> Option<Change> {
        let input = Input::Message {
            from: env.src,
            msg: &env.msg,
        };
        self.react(state, env.dst, input)
    }

    /// The step `input` makes `peer`'s machine take: the one place that
    /// picks a machine by its role.
    fn react(&self, state: &SystemState, peer: Peer, input: Input<'_>) -> Option<Change> {
        let cfg = &*self.cfg;
        match peer {
            Peer::NameServer => Change::of(&state.name_server, cfg, 0, input),
            Peer::Broker(b) => {
                let b = usize::from(b);
                Change::of(&state.brokers[b], cfg, b, input)
            }
            Peer::Consumer(c) => {
                let c = usize::from(c);
                Change::of(&state.consumers[c], cfg, c, input)
            }
        }
    }

    fn apply(&self, state: &mut SystemState, peer: Peer, change: Change) {
        if let Some(node) = change.state {
            match (peer, node) {
                (Peer::NameServer, Node::NameServer(n)) => state.name_server = n,
                (Peer::Broker(b), Node::Broker(n)) => state.brokers[usize::from(b)] = n,
                (Peer::Consumer(c), Node::Consumer(n)) => state.consumers[usize::from(c)] = n,
                _ => {}
            }
        }
        self.carry_out(state, peer, change.outputs);
    }

    /// Sends, arms and disarms what `peer`'s step asked for, in order.
    fn carry_out(&self, state: &mut SystemState, peer: Peer, outputs: Vec<Output>) {
        let index = self.index_of(peer);
        for output in outputs {
            match output {
                Output::Send(dst, msg) | Output::SendPeriodic(dst, msg) => state.network.send(
                    self.cfg.network,
                    Envelope {
                        src: peer,
                        dst,
                        msg,
                    },
                ),
                Output::SendWakeUp(dst, msg) => {
                    let env = Envelope {
                        src: peer,
                        dst,
                        msg,
                    };
                    let merges = subscription::wake_ups_merge(&self.cfg);
                    // Reading the flow makes this step depend on the
                    // receiver's deliveries: the independence relation
                    // must know it.
                    assert!(
                        !merges || independence::wake_up_receivers(&self.cfg, peer).contains(dst),
                        "a merged wake-up from {peer:?} to {dst:?}: declare it in \
                         shell::independence"
                    );
                    let merged = merges && state.network.iter().any(|e| *e == env);
                    if !merged {
                        state.network.send(self.cfg.network, env);
                    }
                }
                Output::Arm(timer) => state.timers[index].arm(timer),
                Output::Disarm(timer) => state.timers[index].disarm(timer),
                Output::ArmFault(fault) => state.timers[index].arm_fault(fault),
                Output::DisarmAll => state.timers[index].clear(),
                Output::Delivered { queue, from, to } => {
                    state.deliveries.deliver(usize::from(queue), from, to)
                }
            }
        }
    }
}

/// Refuses a periodic message that the independence relation does not
/// know `action`'s step sends: the redundancy check reads its receiver's
/// state and flow, which makes the step depend on the receiver's steps
/// (`independence`, exception 1).
fn declared_periodic(action: &Action, from: Peer, outputs: &[Output]) {
    for output in outputs {
        if let Output::SendPeriodic(dst, _) = output {
            assert!(
                *dst == from
                    || (independence::may_send_periodic(action)
                        && independence::periodic_receivers(from).contains(*dst)),
                "{action:?} sends a periodic message to {dst:?}: declare it in \
                 shell::independence"
            );
        }
    }
}

/// Whether a timer may fire as far as connections go: a consumer's
/// `Connect` waits for a stopped broker's start (the client's next request
/// after it); and its rebalance does not ask a stopped broker, as it does
/// not ask one it cannot reach (`ConsumerState::schedule`: asking ends the
/// round unchanged, which in a timeless model is not asking yet). This
/// reads the broker's state (`independence`, exception 4).
fn connects_to_a_listening_broker(state: &SystemState, timer: &Timer) -> bool {
    match timer.connects_to() {
        Some(broker) => state.brokers[usize::from(broker)].listens(),
        None => true,
    }
}

/// One machine's new state, by role.
#[derive(Debug)]
enum Node {
    NameServer(NameServerState),
    Broker(BrokerState),
    Consumer(ConsumerState),
}

impl From<NameServerState> for Node {
    fn from(s: NameServerState) -> Self {
        Node::NameServer(s)
    }
}

impl From<BrokerState> for Node {
    fn from(s: BrokerState) -> Self {
        Node::Broker(s)
    }
}

impl From<ConsumerState> for Node {
    fn from(s: ConsumerState) -> Self {
        Node::Consumer(s)
    }
}

/// What a machine's step changes: its state (`None`: unchanged) and its
/// outputs.
#[derive(Debug)]
struct Change {
    state: Option<Node>,
    outputs: Vec<Output>,
}

impl Change {
    /// The change `input` makes machine `me`, in `current`, take; `None`
    /// when it takes no step.
    fn of<M: Machine + Into<Node>>(
        current: &M,
        cfg: &Config,
        me: usize,
        input: Input<'_>,
    ) -> Option<Change> {
        let (next, outputs) = current.react(cfg, me, input)?;
        let state = (next != *current).then(|| next.into());
        Some(Change { state, outputs })
    }

    /// A step that left the state as it was and asked for nothing.
    fn is_nothing(&self) -> bool {
        self.state.is_none() && self.outputs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Route, Scenario, Sizes};
    use crate::protocol::{Message, Phase};

    fn model_of(sizes: Sizes, network: NetworkKind) -> RebalanceModel {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        RebalanceModel::new(Config::new(Scenario::Healthy, sizes, network, avg).expect("valid"))
    }

    /// The default group: c1 and c2 running, c3 about to join.
    fn model(network: NetworkKind) -> RebalanceModel {
        model_of(Sizes::default(), network)
    }

    fn in_flight(state: &SystemState) -> Vec<Envelope> {
        state.network.iter().copied().collect()
    }

    #[test]
    fn actors_are_the_name_server_then_the_brokers_then_the_consumers() {
        let m = model(NetworkKind::Ordered);
        let peers: Vec<Peer> = m.peers().collect();
        assert_eq!(
            peers,
            [
                Peer::NameServer,
                Peer::Broker(0),
                Peer::Broker(1),
                Peer::Consumer(0),
                Peer::Consumer(1),
                Peer::Consumer(2)
            ]
        );
        for (index, &peer) in peers.iter().enumerate() {
            assert_eq!(m.index_of(peer), index, "{peer:?}");
        }
        let names: Vec<&str> = peers.iter().map(|&p| m.peer_name(p)).collect();
        assert_eq!(names, ["namesrv", "broker-a", "broker-b", "c1", "c2", "c3"]);
    }

    #[test]
    fn a_stop_request_reaches_every_clone() {
        let m = model(NetworkKind::Ordered);
        let clone = m.clone();
        assert!(!clone.stop_requested());
        m.request_stop();
        assert!(clone.stop_requested());
    }

    #[test]
    fn the_initial_state_carries_out_every_start() {
        let m = model(NetworkKind::Ordered);
        let state = m.initial_state();
        assert_eq!(state.name_server.route(0), Route::default());
        assert!(state.brokers.iter().all(|b| b.memory.members == 0b011));
        let phases: Vec<Phase> = state.consumers.iter().map(|c| c.phase).collect();
        assert_eq!(phases, [Phase::Running, Phase::Running, Phase::Idle]);
        assert!(state.network.is_empty());
        let mut actions = Vec::new();
        m.enabled(&state, &mut actions);
        assert_eq!(actions, [Action::Fault(Peer::Consumer(2), Fault::Join)]);
    }

    #[test]
    fn a_timer_fires_once_and_its_outputs_are_carried_out() {
        let m = model(NetworkKind::Ordered);
        let state = m.initial_state();
        let joined = m
            .step(&state, Action::Fault(Peer::Consumer(2), Fault::Join))
            .expect("the join is a step");
        assert_eq!(joined.consumers[2].phase, Phase::Running);
        assert_eq!(joined.consumers[..2], state.consumers[..2]);
        let heartbeat = |b| Envelope {
            src: Peer::Consumer(2),
            dst: Peer::Broker(b),
            msg: Message::Heartbeat {
                epoch: 0,
                topics: 1,
            },
        };
        assert_eq!(in_flight(&joined), [heartbeat(0), heartbeat(1)]);
        let turn = |broker| Timer::Rebalance { broker };
        let armed: Vec<Timer> = joined.timers[m.index_of(Peer::Consumer(2))]
            .iter()
            .collect();
        assert_eq!(armed, [turn(0), turn(1)], "Join is disarmed");
        // Deliveries first, then timers by actor.
        let mut actions = Vec::new();
        m.enabled(&joined, &mut actions);
        assert_eq!(
            actions,
            [
                Action::Deliver(heartbeat(0)),
                Action::Deliver(heartbeat(1)),
                Action::Timeout(Peer::Consumer(2), turn(0)),
                Action::Timeout(Peer::Consumer(2), turn(1)),
            ]
        );
        // Timers and faults that no machine answers are no step.
        assert!(m
            .step(&state, Action::Fault(Peer::NameServer, Fault::RouteChange))
            .is_none());
        assert!(m
            .step(&state, Action::Fault(Peer::Broker(0), Fault::Join))
            .is_none());
        assert!(m
            .step(
                &state,
                Action::Timeout(Peer::Broker(0), Timer::PeriodicRebalance)
            )
            .is_none());
    }

    #[test]
    fn a_delivery_applies_the_receivers_step() {
        let m = model(NetworkKind::Ordered);
        let mut state = m.initial_state();
        let heartbeat = Envelope {
            src: Peer::Consumer(2),
            dst: Peer::Broker(0),
            msg: Message::Heartbeat {
                epoch: 0,
                topics: 1,
            },
        };
        state.network.send(NetworkKind::Ordered, heartbeat);
        assert!(!m.delivery_changes_nothing(&state, &heartbeat));
        let next = m.step(&state, Action::Deliver(heartbeat)).expect("a join");
        assert_eq!(next.brokers[0].memory.members, 0b111);
        assert_eq!(next.brokers[1], state.brokers[1]);
        let notify = |c| Envelope {
            src: Peer::Broker(0),
            dst: Peer::Consumer(c),
            msg: Message::NotifyConsumerIdsChanged,
        };
        assert_eq!(in_flight(&next), [notify(0), notify(1), notify(2)]);
        // A message to the name server changes nothing.
        let mut state = m.initial_state();
        let stray = Envelope {
            src: Peer::Consumer(0),
            dst: Peer::NameServer,
            msg: Message::Heartbeat {
                epoch: 0,
                topics: 1,
            },
        };
        state.network.send(NetworkKind::Ordered, stray);
        assert!(m.delivery_changes_nothing(&state, &stray));
    }

    #[test]
    fn a_delivery_that_changes_nothing_is_consumed_only_over_tcp() {
        // A member's repeated heartbeat: the broker has it already.
        let repeat = Envelope {
            src: Peer::Consumer(0),
            dst: Peer::Broker(0),
            msg: Message::Heartbeat {
                epoch: 0,
                topics: 1,
            },
        };
        for network in [
            NetworkKind::Ordered,
            NetworkKind::Unordered,
            NetworkKind::Duplicating,
        ] {
            let m = model(network);
            let mut state = m.initial_state();
            state.network.send(network, repeat);
            assert!(m.delivery_changes_nothing(&state, &repeat));
            let next = m.step(&state, Action::Deliver(repeat));
            if network == NetworkKind::Ordered {
                assert_eq!(next, Some(m.initial_state()), "consumed");
            } else {
                assert_eq!(next, None, "{network:?}");
            }
        }
    }

    #[test]
    fn a_fault_is_disarmed_even_when_its_machine_changes_nothing() {
        let m = model_of(
            Sizes {
                lost_notifications: 1,
                joins: Some(0),
                ..Sizes::default()
            },
            NetworkKind::Ordered,
        );
        let mut state = m.initial_state();
        let fault = Fault::LoseNotification;
        let first = m.index_of(Peer::Consumer(0));
        assert!(state.timers[first].contains_fault(fault));
        // The fault is armed already: firing again changes no machine.
        state.consumers[0].faults.insert(fault);
        let next = m
            .step(&state, Action::Fault(Peer::Consumer(0), fault))
            .expect("the firing itself is a step");
        assert_eq!(next.consumers, state.consumers);
        assert!(!next.timers[first].contains_fault(fault));
    }
}
