//! The name server (`NamesrvController`, `RouteInfoManager`): holds the
//! route of every topic and changes it a bounded number of times.

use crate::config::Config;
use crate::protocol::message::{Message, Output, Peer, Step, Timer};

/// The name server's state: which route version it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct NameServerState {
    /// Index into the configuration's route versions.
    pub route: u8,
}

impl NameServerState {
    /// The initial route, and the route-change timer when the budget allows.
    pub fn start(cfg: &Config) -> (Self, Vec<Output>) {
        let state = Self { route: 0 };
        let outputs = state.arm(cfg);
        (state, outputs)
    }

    fn arm(&self, cfg: &Config) -> Vec<Output> {
        if self.route < cfg.last_route() {
            vec![Output::Arm(Timer::RouteChange)]
        } else {
            Vec::new()
        }
    }

    /// Handles a timer: dispatches to the step it starts.
    pub fn on_timer(&self, cfg: &Config, timer: &Timer) -> Step<Self> {
        match timer {
            Timer::RouteChange => self.change_route(cfg),
            _ => None,
        }
    }

    /// An operator changes the route (`RouteInfoManager.registerBroker` with
    /// one read queue more). Every consumer's next route poll
    /// (`getRouteInfoByTopic`) returns it, so it is sent to every consumer.
    fn change_route(&self, cfg: &Config) -> Step<Self> {
        if self.route >= cfg.last_route() {
            return None;
        }
        let next = Self {
            route: self.route + 1,
        };
        let mut outputs: Vec<Output> = (0..cfg.consumers.len())
            .map(|c| {
                Output::Send(
                    Peer::Consumer(c as u8),
                    Message::RouteData {
                        version: next.route,
                    },
                )
            })
            .collect();
        outputs.extend(next.arm(cfg));
        Some((next, outputs))
    }
}
