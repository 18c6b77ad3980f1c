//! A broker's view of the consumer group (`ConsumerManager`,
//! `ConsumerGroupInfo`, `DefaultConsumerIdsChangeListener`). Brokers share
//! nothing: each learns members from the heartbeats it receives.

use crate::config::{members_of, Config, ConsumerSet};
use crate::protocol::message::{Message, Output, Peer, Step};

/// One broker's member table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct BrokerState {
    /// Registered consumers (channels), by consumer index.
    pub members: ConsumerSet,
    /// Consumers whose connection closed (unregistered or expired). Over
    /// TCP nothing arrives after a close; on the unordered networks a late
    /// heartbeat could, and must not register a dead consumer again.
    pub closed: ConsumerSet,
}

impl BrokerState {
    /// The table at start: consumers that are already running.
    pub fn start(cfg: &Config, broker: usize) -> Self {
        Self {
            members: cfg.initial_members() & cfg.reachable_from(broker),
            closed: 0,
        }
    }

    /// Handles a message from `from`: dispatches to the protocol step it
    /// starts.
    pub fn on_message(&self, from: Peer, msg: &Message) -> Step<Self> {
        let Peer::Consumer(c) = from else {
            return None;
        };
        let bit: ConsumerSet = 1 << c;
        match msg {
            Message::Heartbeat => self.register(bit),
            Message::Unregister => self.unregister(bit),
            Message::SilenceExpired => self.expire(bit),
            Message::GetConsumerList { topic } => Some(self.consumer_list(from, *topic)),
            _ => None,
        }
    }

    /// `ConsumerManager.registerConsumer`: a new channel in the group
    /// notifies every member, the new one included. Subscriptions never
    /// change in the model, so a heartbeat of a known member changes
    /// nothing.
    fn register(&self, bit: ConsumerSet) -> Step<Self> {
        if self.members & bit != 0 || self.closed & bit != 0 {
            return None;
        }
        let next = Self {
            members: self.members | bit,
            ..*self
        };
        Some((next, next.notify(Message::NotifyConsumerIdsChanged)))
    }

    /// `ConsumerManager.unregisterConsumer` (`UNREGISTER_CLIENT`): the
    /// remaining members are notified.
    fn unregister(&self, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, Message::NotifyConsumerIdsChanged)
    }

    /// `ConsumerManager.scanNotActiveChannel` removes a channel silent for
    /// 120 s and notifies nobody: members find out at their next tick.
    fn expire(&self, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, Message::PeriodicTick)
    }

    /// `ConsumerManageProcessor.getConsumerListByGroup`: every member of the
    /// group, whatever topic it subscribes to
    /// (`ConsumerGroupInfo.getAllClientId`).
    fn consumer_list(&self, from: Peer, topic: u8) -> (Self, Vec<Output>) {
        let answer = Message::ConsumerList {
            topic,
            members: self.members,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    fn close(&self, bit: ConsumerSet, tell_members: Message) -> Step<Self> {
        if self.closed & bit != 0 {
            return None;
        }
        let next = Self {
            members: self.members & !bit,
            closed: self.closed | bit,
        };
        let outputs = if self.members & bit != 0 {
            next.notify(tell_members)
        } else {
            Vec::new()
        };
        Some((next, outputs))
    }

    fn notify(&self, msg: Message) -> Vec<Output> {
        members_of(u64::from(self.members))
            .map(|c| Output::Send(Peer::Consumer(c as u8), msg))
            .collect()
    }
}
