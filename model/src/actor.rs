//! The Stateright shell: one enum actor over the three sans-IO state
//! machines, translating ids to peers and outputs to commands.

use crate::broker::BrokerState;
use crate::config::{Config, NetworkKind};
use crate::consumer::ConsumerState;
use crate::message::{Message, Output, Peer, Step, Timer};
use crate::name_server::NameServerState;
use crate::properties;
use stateright::actor::{model_timeout, Actor, ActorModel, Id, Network, Out};
use std::borrow::Cow;
use std::sync::Arc;

/// Every actor of the model: which process it is and the shared configuration.
#[derive(Clone, Debug)]
pub struct RebalanceActor {
    /// Which process this actor is.
    pub peer: Peer,
    /// The configuration every actor reads.
    pub cfg: Arc<Config>,
}

/// The state of any actor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum NodeState {
    /// The name server's state.
    NameServer(NameServerState),
    /// A broker's state.
    Broker(BrokerState),
    /// A consumer's state.
    Consumer(ConsumerState),
}

/// The checked model: actors, network and properties.
pub type RebalanceModel = ActorModel<RebalanceActor, Arc<Config>>;

/// The Stateright id of a peer: name server 0, then brokers, then consumers.
pub fn id_of(cfg: &Config, peer: Peer) -> Id {
    Id::from(match peer {
        Peer::NameServer => 0,
        Peer::Broker(b) => 1 + usize::from(b),
        Peer::Consumer(c) => 1 + cfg.broker_names.len() + usize::from(c),
    })
}

/// The peer of a Stateright id.
pub fn peer_of(cfg: &Config, id: Id) -> Peer {
    let index = usize::from(id);
    let brokers = cfg.broker_names.len();
    match index {
        0 => Peer::NameServer,
        i if i <= brokers => Peer::Broker((i - 1) as u8),
        i => Peer::Consumer((i - 1 - brokers) as u8),
    }
}

/// The name of a peer in traces.
pub fn peer_name(cfg: &Config, peer: Peer) -> String {
    match peer {
        Peer::NameServer => "namesrv".into(),
        Peer::Broker(b) => cfg.broker_names[usize::from(b)].clone(),
        Peer::Consumer(c) => cfg.consumers[usize::from(c)].name.clone(),
    }
}

/// Builds the model of `cfg` with every property of [`properties`].
pub fn build_model(cfg: Config) -> RebalanceModel {
    let cfg = Arc::new(cfg);
    let network = match cfg.network {
        NetworkKind::Ordered => Network::new_ordered([]),
        NetworkKind::Unordered => Network::new_unordered_nonduplicating([]),
        NetworkKind::Duplicating => Network::new_unordered_duplicating([]),
    };
    let brokers = cfg.broker_names.len() as u8;
    let consumers = cfg.consumers.len() as u8;
    let peers = std::iter::once(Peer::NameServer)
        .chain((0..brokers).map(Peer::Broker))
        .chain((0..consumers).map(Peer::Consumer));
    let actors: Vec<RebalanceActor> = peers
        .map(|peer| RebalanceActor {
            peer,
            cfg: Arc::clone(&cfg),
        })
        .collect();
    let mut model = ActorModel::new(Arc::clone(&cfg), ())
        .actors(actors)
        .init_network(network)
        .within_boundary(|cfg, _| !cfg.stop_requested());
    for p in properties::PROPERTIES {
        model = model.property(p.expectation.clone(), p.name, p.condition);
    }
    model
}

impl RebalanceActor {
    fn emit(&self, outputs: Vec<Output>, o: &mut Out<Self>) {
        for output in outputs {
            match output {
                Output::Send(peer, msg) => o.send(id_of(&self.cfg, peer), msg),
                Output::Arm(timer) => o.set_timer(timer, model_timeout()),
                Output::Disarm(timer) => o.cancel_timer(timer),
            }
        }
    }

    /// Applies a step, leaving the state borrowed when it did not change so
    /// that Stateright can prune the action as a no-op.
    fn apply<S: PartialEq>(
        &self,
        step: Step<S>,
        current: &S,
        wrap: fn(S) -> NodeState,
        state: &mut Cow<NodeState>,
        o: &mut Out<Self>,
    ) {
        if let Some((next, outputs)) = step {
            if next != *current {
                *state.to_mut() = wrap(next);
            }
            self.emit(outputs, o);
        }
    }
}

impl Actor for RebalanceActor {
    type Msg = Message;
    type State = NodeState;
    type Timer = Timer;
    type Random = ();
    type Storage = ();

    fn name(&self) -> String {
        peer_name(&self.cfg, self.peer)
    }

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> NodeState {
        let (state, outputs) = match self.peer {
            Peer::NameServer => {
                let (s, out) = NameServerState::start(&self.cfg);
                (NodeState::NameServer(s), out)
            }
            Peer::Broker(b) => (
                NodeState::Broker(BrokerState::start(&self.cfg, usize::from(b))),
                Vec::new(),
            ),
            Peer::Consumer(c) => {
                let (s, out) = ConsumerState::start(&self.cfg, usize::from(c));
                (NodeState::Consumer(s), out)
            }
        };
        self.emit(outputs, o);
        state
    }

    fn on_msg(
        &self,
        _id: Id,
        state: &mut Cow<NodeState>,
        src: Id,
        msg: Message,
        o: &mut Out<Self>,
    ) {
        let from = peer_of(&self.cfg, src);
        match (self.peer, &**state) {
            (Peer::Broker(_), NodeState::Broker(s)) => {
                let s = *s;
                self.apply(s.on_message(from, &msg), &s, NodeState::Broker, state, o)
            }
            (Peer::Consumer(c), NodeState::Consumer(s)) => {
                let s = *s;
                let step = s.on_message(&self.cfg, usize::from(c), &msg);
                self.apply(step, &s, NodeState::Consumer, state, o)
            }
            _ => {}
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<NodeState>, timer: &Timer, o: &mut Out<Self>) {
        let step_taken = match (self.peer, &**state) {
            (Peer::NameServer, NodeState::NameServer(s)) => {
                let s = *s;
                let step = s.on_timer(&self.cfg, timer);
                let taken = step.is_some();
                self.apply(step, &s, NodeState::NameServer, state, o);
                taken
            }
            (Peer::Consumer(c), NodeState::Consumer(s)) => {
                let s = *s;
                let step = s.on_timer(&self.cfg, usize::from(c), timer);
                let taken = step.is_some();
                self.apply(step, &s, NodeState::Consumer, state, o);
                taken
            }
            _ => false,
        };
        // A timer that does nothing stays armed, which Stateright prunes.
        if !step_taken {
            o.set_timer(*timer, model_timeout());
        }
    }
}
