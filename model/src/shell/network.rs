//! Messages in flight, stored as one sorted vector: cheap to clone and to
//! hash, which is most of what a model checker does with a state.

use crate::config::NetworkKind;
use crate::protocol::{Message, Peer};

/// A message on its way from `src` to `dst`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Envelope {
    /// Sender.
    pub src: Peer,
    /// Receiver.
    pub dst: Peer,
    /// The message.
    pub msg: Message,
}

/// Every message in flight, sorted by sender and receiver.
///
/// - Ordered (one TCP connection per pair): within a flow, in the order
///   sent; only the head of a flow can be delivered. A flow is a sender, a
///   receiver, and whether its messages ride their connection
///   ([`Message::rides_connection`]): the broker's own time, which a
///   consumer's step marks, is a flow of its own beside the connection.
/// - Unordered: a multiset sorted by the whole envelope; any one can be
///   delivered, once.
/// - Duplicating: a set; any one can be delivered, any number of times.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Network(Vec<Envelope>);

impl Network {
    /// Puts `env` on the network.
    pub fn send(&mut self, kind: NetworkKind, env: Envelope) {
        match kind {
            NetworkKind::Ordered => {
                // After the flow's last message: FIFO within the flow.
                let at = self.0.partition_point(|e| flow(e) <= flow(&env));
                self.0.insert(at, env);
            }
            NetworkKind::Unordered => {
                let at = self.0.partition_point(|e| *e <= env);
                self.0.insert(at, env);
            }
            NetworkKind::Duplicating => {
                if let Err(at) = self.0.binary_search(&env) {
                    self.0.insert(at, env);
                }
            }
        }
    }

    /// Takes `env` off the network after its delivery (a duplicating
    /// network keeps it).
    pub fn deliver(&mut self, kind: NetworkKind, env: &Envelope) {
        let found = match kind {
            NetworkKind::Duplicating => return,
            NetworkKind::Ordered => self.0.iter().position(|e| flow(e) == flow(env)),
            NetworkKind::Unordered => self.0.binary_search(env).ok(),
        };
        if let Some(at) = found {
            self.0.remove(at);
        }
    }

    /// The messages that can be delivered next, in order, each once.
    pub fn deliverable(&self, kind: NetworkKind) -> impl Iterator<Item = &Envelope> {
        let mut previous: Option<&Envelope> = None;
        self.0.iter().filter(move |e| {
            let repeat = previous.is_some_and(|p| match kind {
                NetworkKind::Ordered => flow(p) == flow(e),
                NetworkKind::Unordered | NetworkKind::Duplicating => p == *e,
            });
            previous = Some(e);
            !repeat
        })
    }

    /// Every message in flight.
    pub fn iter(&self) -> impl Iterator<Item = &Envelope> {
        self.0.iter()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every message in flight, in the network's order: by sender and
    /// receiver, then as [`Network::send`] placed them.
    pub(crate) fn as_slice(&self) -> &[Envelope] {
        &self.0
    }

    /// The network whose messages, in its order, are `envelopes`: those
    /// of [`Network::as_slice`].
    pub(crate) fn from_slices(slices: &[&[Envelope]]) -> Self {
        Network(slices.concat())
    }
}

/// The ordered flow `e` travels on: by sender first, as the fingerprint's
/// runs by sender need.
fn flow(e: &Envelope) -> (Peer, Peer, bool) {
    (e.src, e.dst, !e.msg.rides_connection())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(src: u8, dst: u8, topic: u8) -> Envelope {
        Envelope {
            src: Peer::Consumer(src),
            dst: Peer::Broker(dst),
            msg: Message::GetConsumerList { topic, epoch: 0 },
        }
    }

    #[test]
    fn an_ordered_flow_delivers_in_the_order_sent() {
        let mut net = Network::default();
        let kind = NetworkKind::Ordered;
        for e in [env(1, 0, 2), env(0, 0, 5), env(1, 0, 1), env(0, 1, 0)] {
            net.send(kind, e);
        }
        let heads: Vec<Envelope> = net.deliverable(kind).copied().collect();
        assert_eq!(heads, [env(0, 0, 5), env(0, 1, 0), env(1, 0, 2)]);
        net.deliver(kind, &env(1, 0, 2));
        let heads: Vec<Envelope> = net.deliverable(kind).copied().collect();
        assert_eq!(heads, [env(0, 0, 5), env(0, 1, 0), env(1, 0, 1)]);
    }

    #[test]
    fn the_broker_s_time_waits_behind_no_message_of_the_connection() {
        let mut net = Network::default();
        let kind = NetworkKind::Ordered;
        let expiry = Envelope {
            msg: Message::InvisibleTimeExpired {
                queue: 0,
                from: 0,
                to: 1,
                attempt: 0,
                passed: false,
            },
            ..env(0, 0, 0)
        };
        for e in [env(0, 0, 1), expiry, env(0, 0, 2)] {
            net.send(kind, e);
        }
        let heads: Vec<Envelope> = net.deliverable(kind).copied().collect();
        assert_eq!(heads, [env(0, 0, 1), expiry]);
        net.deliver(kind, &expiry);
        let heads: Vec<Envelope> = net.deliverable(kind).copied().collect();
        assert_eq!(heads, [env(0, 0, 1)], "the connection's order holds");
    }

    #[test]
    fn unordered_copies_are_delivered_once_each_and_duplicates_stay() {
        let mut net = Network::default();
        for e in [env(1, 0, 2), env(1, 0, 1), env(1, 0, 2)] {
            net.send(NetworkKind::Unordered, e);
        }
        assert_eq!(net.deliverable(NetworkKind::Unordered).count(), 2);
        net.deliver(NetworkKind::Unordered, &env(1, 0, 2));
        assert_eq!(net.iter().count(), 2);

        let mut dup = Network::default();
        dup.send(NetworkKind::Duplicating, env(0, 0, 0));
        dup.send(NetworkKind::Duplicating, env(0, 0, 0));
        dup.deliver(NetworkKind::Duplicating, &env(0, 0, 0));
        assert_eq!(dup.iter().count(), 1);
        assert!(!dup.is_empty());
        assert!(Network::default().is_empty());
    }
}
