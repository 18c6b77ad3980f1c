//! The broker's member table (`ConsumerManager`, `ConsumerGroupInfo`,
//! `DefaultConsumerIdsChangeListener`, `ClientHousekeepingService`): who is
//! registered, on which connection, and how the group hears of a change;
//! the member list and the server-side assignment it answers with.

use super::BrokerState;
use crate::config::{members_of, Config, ConsumerSet, Route};
use crate::protocol::message::{Message, Output, Peer, Step};

impl BrokerState {
    /// A new connection of consumer `c`: its older ones are closed.
    pub(super) fn open(&self, c: u8, epoch: u8) -> Self {
        let shift = 4 * u32::from(c);
        let mut next = *self;
        next.memory.closed &= !(1 << c);
        next.memory.twice &= !(1 << c);
        next.memory.epochs = self.memory.epochs & !(0xF << shift) | u64::from(epoch) << shift;
        next
    }

    /// `ConsumerManager.registerConsumer`: a new channel in the group, or a
    /// heartbeat that changes the topics of the group's subscription table
    /// (`ConsumerGroupInfo.updateSubscription`, which replaces the table
    /// with the heartbeat's), notifies every member, the sender included. A
    /// heartbeat that changes neither changes nothing.
    ///
    /// With the mutant that does not re-register (`heartbeat_reregisters`
    /// of `ProtocolOptions` off), a heartbeat on a later connection than
    /// the client's first (`epoch` past 0) of a client the broker does not
    /// list changes nothing either: a broker that lost its member table in
    /// a restart never gets its members back.
    pub(super) fn register(
        &self,
        cfg: &Config,
        bit: ConsumerSet,
        topics: u8,
        epoch: u8,
    ) -> Step<Self> {
        let listed = self.memory.members & bit != 0;
        if !cfg.protocol.heartbeat_reregisters && epoch > 0 && !listed {
            return None;
        }
        let mut next = *self;
        next.memory.members |= bit;
        if cfg.protocol.subscription_table {
            next.memory.subscription = topics;
        }
        (next != *self).then(|| (next, next.notify(next.change_notice(cfg))))
    }

    /// `ConsumerManager.unregisterConsumer` (`UNREGISTER_CLIENT`): the
    /// remaining members are notified.
    pub(super) fn unregister(&self, cfg: &Config, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, self.change_notice(cfg))
    }

    /// `ConsumerManager.doChannelCloseEvent`: the connection of a consumer
    /// whose process died closes, and the remaining members are notified at
    /// once.
    pub(super) fn channel_closed(&self, cfg: &Config, bit: ConsumerSet) -> Step<Self> {
        self.close(bit, self.change_notice(cfg))
    }

    /// `registerConsumer` with a second channel of a member: a new channel
    /// in the group, so every member is notified; the client is listed
    /// twice. A client not listed (its heartbeat not yet arrived, or its
    /// connection closed since) gets no second entry.
    pub(super) fn second_channel(
        &self,
        cfg: &Config,
        me: usize,
        consumer: u8,
        epoch: u8,
    ) -> Step<Self> {
        let bit: ConsumerSet = 1 << consumer;
        if self.memory.members & bit == 0 || self.memory.twice & bit != 0 {
            return None;
        }
        let mut next = *self;
        next.memory.twice |= bit;
        let mut outputs = next.notify(next.change_notice(cfg));
        // Its scan, later: on no connection of the consumer's.
        let expiry = Message::SecondChannelExpired { consumer, epoch };
        outputs.push(Output::Send(Peer::Broker(me as u8), expiry));
        Some((next, outputs))
    }

    /// The scan removes the silent second channel, silently: members see
    /// the client once again at their next periodic rebalance.
    pub(super) fn second_channel_expired(&self, bit: ConsumerSet) -> Step<Self> {
        if self.memory.twice & bit == 0 {
            return None;
        }
        let mut next = *self;
        next.memory.twice &= !bit;
        Some((next, next.notify(Message::LaterRebalance)))
    }

    /// `ConsumerManager.scanNotActiveChannel` removes a channel silent for
    /// 120 s and notifies nobody: members find out at their next periodic
    /// rebalance. It
    /// closes the channel too, which a consumer still alive sees.
    pub(super) fn expire(
        &self,
        from: Peer,
        bit: ConsumerSet,
        epoch: u8,
        alive: bool,
    ) -> Step<Self> {
        let (next, mut outputs) = self.close(bit, Message::LaterRebalance)?;
        if alive {
            outputs.push(Output::Send(from, Message::ConnectionClosed { epoch }));
        }
        Some((next, outputs))
    }

    /// `ConsumerManageProcessor.getConsumerListByGroup`: every member of the
    /// group, whatever topic it subscribes to
    /// (`ConsumerGroupInfo.getAllClientId`).
    pub(super) fn consumer_list(&self, from: Peer, topic: u8, epoch: u8) -> (Self, Vec<Output>) {
        let answer = Message::ConsumerList {
            topic,
            members: self.memory.members,
            twice: self.memory.twice,
            epoch,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    /// How members hear of a change: `NOTIFY_CONSUMER_IDS_CHANGED`, or, with
    /// notifications switched off (`notifyConsumerIdsChangedEnable=false`),
    /// only at their next periodic rebalance.
    pub(super) fn change_notice(&self, cfg: &Config) -> Message {
        if cfg.protocol.notify {
            Message::NotifyConsumerIdsChanged
        } else {
            Message::LaterRebalance
        }
    }

    /// `QueryAssignmentProcessor.doLoadBalance`: the broker allocates the
    /// topic for the asking consumer from its own member list and its own
    /// cached route.
    pub(super) fn allocate_for(&self, from: Peer, topic: u8, epoch: u8) -> (Self, Vec<Output>) {
        let answer = Message::BrokerAllocation {
            topic,
            members: self.memory.members,
            twice: self.memory.twice,
            route: self.memory.route,
            epoch,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    /// `TopicRouteInfoManager` polls its name server: the route it
    /// allocates from with server-side assignment.
    pub(super) fn cache_route(&self, route: Route) -> Step<Self> {
        (route != self.memory.route).then(|| {
            let mut next = *self;
            next.memory.route = route;
            (next, Vec::new())
        })
    }

    pub(super) fn close(&self, bit: ConsumerSet, tell_members: Message) -> Step<Self> {
        let mut next = *self;
        next.memory.members &= !bit;
        next.memory.twice &= !bit;
        next.memory.closed |= bit;
        let outputs = if self.memory.members & bit != 0 {
            next.notify(tell_members)
        } else {
            Vec::new()
        };
        Some((next, outputs))
    }

    pub(super) fn notify(&self, msg: Message) -> Vec<Output> {
        members_of(u64::from(self.memory.members))
            .map(|c| Output::SendWakeUp(Peer::Consumer(c as u8), msg))
            .collect()
    }
}
