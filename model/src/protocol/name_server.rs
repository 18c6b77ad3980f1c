//! The name servers (`NamesrvController`, `RouteInfoManager`): the route of
//! every topic, changed by operators a bounded number of times, and each
//! name server's own view of which brokers are alive.
//!
//! Name servers share nothing; brokers register with each of them. One
//! actor stands for all of them: an operator's change (a broker or a queue
//! added or removed) reaches every name server, while a partition between a
//! broker and one name server makes only that one drop the broker.

use crate::config::{Allocator, Config, Route, MAX_NAME_SERVERS};
use crate::config::{Dense, Fault, Pick, Target};
use crate::protocol::machine::Machine;
use crate::protocol::message::{Message, Output, Peer, Step, Timer};

/// The name servers' state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NameServerState {
    /// Steps of the operators' route script applied.
    pub version: u8,
    /// `dropped[n]`: brokers name server `n` has dropped, as a bit set.
    pub dropped: [u8; MAX_NAME_SERVERS],
    /// Brokers stopped (restarting), which every name server dropped when
    /// their channels closed, as a bit set.
    pub stopped: u8,
}

impl Machine for NameServerState {
    /// The initial route, and the environment's timers its budgets allow.
    fn start(cfg: &Config, _: usize) -> (Self, Vec<Output>) {
        let state = Self {
            version: 0,
            dropped: [0; MAX_NAME_SERVERS],
            stopped: 0,
        };
        let mut outputs = state.arm(cfg);
        // The faults its budgets give it; the route script's changes are
        // armed a step at a time.
        outputs.extend(
            Fault::all()
                .filter(|&f| f.target() == Target::NameServer && f.spec().pick != Pick::Script)
                .filter(|&f| cfg.may(f, 0))
                .map(Output::ArmFault),
        );
        (state, outputs)
    }

    /// Handles a message: a broker's channel closes as it stops
    /// (`BrokerHousekeepingService.onChannelClose`, which drops it from the
    /// routes at once, not only at the 120 s scan), or it registers again
    /// as it starts; every name server serves the changed route.
    fn on_message(&self, cfg: &Config, _: usize, from: Peer, msg: &Message) -> Step<Self> {
        let (Peer::Broker(b), Message::BrokerPresence { alive }) = (from, msg) else {
            return None;
        };
        let mut next = *self;
        if *alive {
            next.stopped &= !(1 << b);
        } else {
            next.stopped |= 1 << b;
        }
        (next != *self).then(|| {
            let outputs = next.publish(cfg, 0..cfg.name_server_names.len());
            (next, outputs)
        })
    }

    /// Handles a timer: the partition heals.
    fn on_timer(&self, cfg: &Config, _: usize, timer: &Timer) -> Step<Self> {
        match timer {
            Timer::Heal => Some(self.heal(cfg)),
            _ => None,
        }
    }

    /// Handles a fault: dispatches to the step it starts.
    fn on_fault(&self, cfg: &Config, _: usize, fault: Fault) -> Step<Self> {
        match fault {
            Fault::RouteChange => self.change_route(cfg),
            Fault::Partition => Some(self.drop_broker(cfg)),
            _ => None,
        }
    }

    /// The name servers keep no time that a tick ages: their scan's 120 s
    /// is the partition's step.
    fn elapse(&self, _: &Config, _: usize, _: bool) -> Self {
        *self
    }
}

impl NameServerState {
    /// The route name server `n` serves.
    pub fn route(&self, n: usize) -> Route {
        Route {
            version: self.version,
            dropped: self.dropped[n] | self.stopped,
        }
    }

    fn arm(&self, cfg: &Config) -> Vec<Output> {
        if self.version < cfg.last_route() {
            vec![Output::ArmFault(Fault::RouteChange)]
        } else {
            Vec::new()
        }
    }

    /// An operator changes the route: the next step of the script, which
    /// brokers register with every name server
    /// (`RouteInfoManager.registerBroker`).
    fn change_route(&self, cfg: &Config) -> Step<Self> {
        if self.version >= cfg.last_route() {
            return None;
        }
        let next = Self {
            version: self.version + 1,
            ..*self
        };
        let mut outputs = next.publish(cfg, 0..cfg.name_server_names.len());
        outputs.extend(next.arm(cfg));
        Some((next, outputs))
    }

    /// `RouteInfoManager.scanNotActiveBroker`: the last name server has not
    /// heard from the last broker for 120 s and drops it from its routes.
    fn drop_broker(&self, cfg: &Config) -> (Self, Vec<Output>) {
        let (n, broker) = partitioned(cfg);
        let mut next = *self;
        next.dropped[n] |= 1 << broker;
        let mut outputs = next.publish(cfg, n..n + 1);
        outputs.push(Output::Arm(Timer::Heal));
        (next, outputs)
    }

    /// The partition heals: the broker's next registration reaches the name
    /// server again.
    fn heal(&self, cfg: &Config) -> (Self, Vec<Output>) {
        let (n, broker) = partitioned(cfg);
        let mut next = *self;
        next.dropped[n] &= !(1 << broker);
        let outputs = next.publish(cfg, n..n + 1);
        (next, outputs)
    }

    /// The next route poll (`getRouteInfoByTopic`) of every consumer of the
    /// name servers `servers` returns their new route, so it is sent to
    /// those consumers; with server-side assignment, to the brokers that
    /// poll them too (broker `b` polls name server `b mod N`). Polls that
    /// return an unchanged route change nothing, so only changes are sent.
    fn publish(&self, cfg: &Config, servers: std::ops::Range<usize>) -> Vec<Output> {
        let count = cfg.name_server_names.len();
        let brokers = if cfg.protocol.assignment == Allocator::Server {
            cfg.broker_names.len()
        } else {
            0
        };
        servers
            .flat_map(|n| {
                let data = Message::RouteData {
                    route: self.route(n),
                };
                let consumers = (0..cfg.consumers.len())
                    .filter(move |&c| cfg.consumers[c].name_server == n)
                    .map(move |c| Output::Send(Peer::Consumer(c as u8), data));
                let polling = (0..brokers)
                    .filter(move |b| b % count == n)
                    .map(move |b| Output::Send(Peer::Broker(b as u8), data));
                consumers.chain(polling)
            })
            .collect()
    }
}

/// The name server and the broker a partition separates: the last of each.
pub fn partitioned(cfg: &Config) -> (usize, usize) {
    (cfg.name_server_names.len() - 1, cfg.sizes.brokers - 1)
}
