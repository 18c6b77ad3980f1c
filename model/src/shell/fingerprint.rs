//! The state's fingerprint, packed: Stateright keeps a state's 64-bit
//! hash, not the state, so the hash is most of what a check does with a
//! state, and it must tell apart every two distinct states. Each type
//! writes a few packed words instead of one write per field (a derived
//! hash makes dozens); every packing here is injective over the whole
//! domain of its fields' types (not only the values a run reaches), which
//! `model/tests/fingerprints.rs` checks by perturbing every field of a
//! serialized state, bit by bit.
//!
//! The encoding lives here, in the shell, not in the protocol: the
//! protocol's states say what they are, the shell how they are stored.

use std::hash::{Hash, Hasher};

use crate::config::{Dense, Fault, Route, MAX_MESSAGE_QUEUES, MAX_TOPICS};
use crate::protocol::{
    BrokerState, ConsumerState, Message, NameServerState, Peer, ProcessQueue, SendBack,
};
use crate::search::Packing;
use crate::shell::{Deliveries, Envelope, Network, RebalanceModel, SystemState, TimerSet};

/// A value in one word, distinct for distinct values.
pub trait Packed {
    /// The word.
    fn packed(&self) -> u128;
}

impl Packed for Route {
    /// 16 bits: the version below the dropped brokers.
    fn packed(&self) -> u128 {
        u128::from(self.version) | u128::from(self.dropped) << 8
    }
}

impl Packed for Peer {
    /// 16 bits: its kind above its index.
    fn packed(&self) -> u128 {
        match *self {
            Peer::NameServer => 0,
            Peer::Broker(b) => 1 << 8 | u128::from(b),
            Peer::Consumer(c) => 2 << 8 | u128::from(c),
        }
    }
}

impl Packed for ProcessQueue {
    /// 64 bits: its flags and counters, but for the POP handle's attempt,
    /// which its consumer writes apart.
    fn packed(&self) -> u128 {
        u128::from(self.reading_offset)
            | u128::from(self.cursor) << 1
            | u128::from(self.from) << 9
            | u128::from(self.to) << 17
            | u128::from(self.awaiting_ack) << 25
            | u128::from(self.locked) << 26
            | u128::from(self.dropped) << 27
            | u128::from(self.lock_age) << 28
            | u128::from(self.batch_age) << 36
            | u128::from(self.idle_age) << 44
            | u128::from(self.pulling) << 52
            | u128::from(self.generation) << 53
            | self.send_back.packed() << 54
    }
}

impl Packed for SendBack {
    /// 10 bits: the step, then the producer's broker.
    fn packed(&self) -> u128 {
        match *self {
            SendBack::No => 0,
            SendBack::ToBroker => 1,
            SendBack::ByProducer(broker) => 2 | u128::from(broker) << 2,
            SendBack::Later => 3,
        }
    }
}

impl Packed for Message {
    /// 72 bits: the variant in the low byte, then up to four fields of 16
    /// bits each (no field is wider).
    fn packed(&self) -> u128 {
        use Message::*;
        let (variant, fields): (u8, [u16; 4]) = match *self {
            Heartbeat { epoch, topics } => (0, [epoch.into(), topics.into(), 0, 0]),
            Unregister { epoch } => (1, [epoch.into(), 0, 0, 0]),
            NotifyConsumerIdsChanged => (2, [0; 4]),
            GetConsumerList { topic, epoch } => (3, [topic.into(), epoch.into(), 0, 0]),
            ConsumerList {
                topic,
                members,
                twice,
                epoch,
            } => (4, [topic.into(), members, epoch.into(), twice]),
            QueryAssignment { topic, epoch } => (5, [topic.into(), epoch.into(), 0, 0]),
            BrokerAllocation {
                topic,
                members,
                twice: 0,
                route,
                epoch,
            } => (
                6,
                [topic.into(), members, route.packed() as u16, epoch.into()],
            ),
            // With a member listed twice, a variant of its own: the topic and
            // the epoch share a field (each is a byte), and the one above
            // stays as it was.
            BrokerAllocation {
                topic,
                members,
                twice,
                route,
                epoch,
            } => (
                27,
                [
                    u16::from(topic) | u16::from(epoch) << 8,
                    members,
                    route.packed() as u16,
                    twice,
                ],
            ),
            SecondChannel { epoch } => (28, [epoch.into(), 0, 0, 0]),
            SecondChannelExpired { consumer, epoch } => (29, [epoch.into(), consumer.into(), 0, 0]),
            RouteData { route } => (7, [route.packed() as u16, 0, 0, 0]),
            SilenceExpired { epoch, alive } => (8, [epoch.into(), alive.into(), 0, 0]),
            ChannelClosed { epoch } => (9, [epoch.into(), 0, 0, 0]),
            ConnectionClosed { epoch } => (10, [epoch.into(), 0, 0, 0]),
            LaterRebalance => (11, [0; 4]),
            QueryOffset { queue, epoch } => (12, [queue.into(), epoch.into(), 0, 0]),
            Offset {
                queue,
                stored,
                in_memory,
                epoch,
            } => (
                13,
                [queue.into(), stored.into(), in_memory.into(), epoch.into()],
            ),
            UpdateOffset {
                queue,
                offset,
                epoch,
            } => (14, [queue.into(), offset.into(), epoch.into(), 0]),
            CommitOffset {
                queue,
                offset,
                epoch,
            } => (15, [queue.into(), offset.into(), epoch.into(), 0]),
            CommitAck { queue } => (16, [queue.into(), 0, 0, 0]),
            PullMessage {
                queue,
                offset,
                commit,
                generation,
                epoch,
            } => (
                21,
                [
                    u16::from(queue) | u16::from(generation) << 8,
                    offset.into(),
                    commit.into(),
                    epoch.into(),
                ],
            ),
            PullResult {
                queue,
                from,
                to,
                generation,
                epoch,
            } => (
                22,
                [
                    u16::from(queue) | u16::from(generation) << 8,
                    from.into(),
                    to.into(),
                    epoch.into(),
                ],
            ),
            LockBatch { queues, epoch } => (17, [queues.into(), epoch.into(), 0, 0]),
            Locked {
                asked,
                granted,
                epoch,
            } => (18, [asked.into(), granted.into(), epoch.into(), 0]),
            UnlockBatch { queues, epoch } => (19, [queues.into(), epoch.into(), 0, 0]),
            LaterPoll { route } => (20, [route.packed() as u16, 0, 0, 0]),
            SendMessageBack {
                queue,
                from,
                to,
                epoch,
            } => (25, [queue.into(), from.into(), to.into(), epoch.into()]),
            SentBack { queue, epoch } => (26, [queue.into(), epoch.into(), 0, 0]),
            Refused { epoch } => (23, [epoch.into(), 0, 0, 0]),
            BrokerPresence { alive } => (24, [alive.into(), 0, 0, 0]),
            PopMessage {
                queue,
                generation,
                epoch,
                reenters,
            } => (
                30,
                [
                    u16::from(queue) | u16::from(generation) << 8,
                    epoch.into(),
                    reenters.map_or(0, |h| 0x100 | u16::from(h)),
                    0,
                ],
            ),
            PopResult {
                queue,
                from,
                to,
                attempt,
                generation,
                epoch,
            } => (
                31,
                [
                    u16::from(queue) | u16::from(generation) << 8,
                    u16::from(from) | u16::from(to) << 8,
                    attempt.into(),
                    epoch.into(),
                ],
            ),
            AckMessage {
                queue,
                from,
                to,
                attempt,
                epoch,
            } => (
                32,
                [
                    queue.into(),
                    u16::from(from) | u16::from(to) << 8,
                    attempt.into(),
                    epoch.into(),
                ],
            ),
            InvisibleTimeExpired {
                queue,
                from,
                to,
                attempt,
                passed,
            } => (
                33,
                [
                    queue.into(),
                    u16::from(from) | u16::from(to) << 8,
                    attempt.into(),
                    passed.into(),
                ],
            ),
        };
        fields
            .iter()
            .rev()
            .fold(0, |word, &field| word << 16 | u128::from(field))
            << 8
            | u128::from(variant)
    }
}

/// One write an envelope (a derived hash makes eight).
impl Hash for Envelope {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u128(self.msg.packed() | self.src.packed() << 72 | self.dst.packed() << 88);
    }
}

// The consumer's pending faults fit the bits its third word leaves above
// its views (17 bits a topic) and its query (25 bits).
const _: () = assert!(17 * MAX_TOPICS + 25 <= 96 && Fault::COUNT <= 32);

// A byte a process queue's POP attempt, in one word; a bit a queue's
// timed-out POP batch, in one byte; 16 bits a queue's retry, in two words.
const _: () = assert!(MAX_MESSAGE_QUEUES <= 8);

/// Three words, four more when it holds a process queue, a byte when it
/// leaves queues' progress unreported, eight when it holds POP handles,
/// one when a POP batch of it timed out, and sixteen when it retries a
/// lost pop. The first word says whether those follow, so distinct states
/// write distinct sequences.
impl Hash for ConsumerState {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // Nothing to write without messages or orderly consumption: then
        // every process queue is idle, found by comparing, not packing.
        let busy = self.queues.iter().fold(false, |busy, q| busy | !q.idle());
        let queues = busy && self.queues.iter().any(|q| q.packed() != 0);
        let (attempts, timed_out) = if busy {
            self.queues
                .iter()
                .rev()
                .fold((0u64, 0u8), |(word, byte), q| {
                    (
                        word << 8 | u64::from(q.attempt),
                        byte << 1 | u8::from(q.pop_timed_out),
                    )
                })
        } else {
            (0, 0)
        };
        let reentries = self.queues.iter().rev().fold(0u128, |word, q| {
            word << 16 | q.reenters.map_or(0, |h| 0x100 | u128::from(h))
        });
        let assigned = self
            .assigned
            .iter()
            .fold(0u128, |word, route| word << 16 | route.packed());
        h.write_u128(
            self.phase as u128
                | u128::from(self.route.version) << 8
                | u128::from(self.due) << 16
                | u128::from(self.route.dropped) << 24
                | u128::from(self.topics) << 32
                | u128::from(queues) << 40
                | u128::from(self.unreported != 0) << 41
                | u128::from(attempts != 0) << 42
                | u128::from(timed_out != 0) << 43
                | u128::from(reentries != 0) << 44
                | assigned << 64,
        );
        if queues {
            for pair in self.queues.chunks(2) {
                h.write_u128(pair.iter().fold(0, |word, q| word << 64 | q.packed()));
            }
        }
        if self.unreported != 0 {
            h.write_u8(self.unreported);
        }
        if attempts != 0 {
            h.write_u64(attempts);
        }
        if timed_out != 0 {
            h.write_u8(timed_out);
        }
        if reentries != 0 {
            h.write_u128(reentries);
        }
        let orderly = u128::from(self.locking)
            | u128::from(self.adding) << 8
            | u128::from(self.renew_age) << 16
            | u128::from(self.lag) << 24;
        h.write_u128(u128::from(self.epochs) | orderly << 32 | u128::from(self.owned) << 64);
        let views = self.views.iter().fold(0u128, |word, v| {
            word << 17 | v.map_or(0, |m| 1 << 16 | u128::from(m))
        });
        let querying = self.querying.map_or(0, |q| {
            1 | u128::from(q.topic) << 1 | u128::from(q.broker) << 9 | u128::from(q.epoch) << 17
        });
        h.write_u128(views | querying << 68 | u128::from(self.faults.bits()) << 96);
    }
}

/// Two words, memory and disk together (with whether it is stopped, and a
/// start's lock grace, above the offsets), a third when messages were sent
/// back to its retry topic, a fourth when it lists members twice, a
/// fifth when its slave's copy of its offsets is behind them, and a sixth
/// when it has handed out a message by POP. The
/// first word says which follow, so distinct states write distinct
/// sequences.
impl Hash for BrokerState {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let (memory, disk) = (&self.memory, &self.disk);
        let retried = disk.retried.bits() != 0;
        let twice = memory.twice != 0;
        let synced = disk.synced != disk.offsets;
        let pops = disk.pop.bits() != 0;
        h.write_u128(
            u128::from(memory.members)
                | u128::from(memory.closed) << 16
                | u128::from(memory.subscription) << 32
                | memory.route.packed() << 40
                | u128::from(disk.evicted) << 56
                | u128::from(retried) << 57
                | u128::from(twice) << 58
                | u128::from(synced) << 59
                | u128::from(pops) << 60
                | u128::from(self.proxy_lost_group) << 61
                | u128::from(disk.offsets) << 64
                | self.down.map_or(0, |ticks| 1 << 8 | u128::from(ticks)) << 96
                | u128::from(memory.grace) << 112,
        );
        h.write_u128(u128::from(memory.epochs) | u128::from(memory.locks.bits()) << 64);
        if retried {
            h.write_u64(disk.retried.bits());
        }
        if twice {
            h.write_u16(memory.twice);
        }
        if synced {
            h.write_u32(disk.synced);
        }
        if pops {
            h.write_u128(disk.pop.bits());
        }
    }
}

/// A part of a [`SystemState`] as the safety search keeps it: each
/// machine's state whole, the messages in flight, the timers, the ghost
/// counts. Each distinct part is stored once, so a state is its parts'
/// ids; the parts take few distinct values (tens of consumer states in a
/// space of millions), their combinations many. A field added to a
/// machine's state is in its part with nothing to change here. The
/// machines' states are boxed: they are few and large, the networks many
/// and small, and every stored part takes the room of the largest
/// variant (24 bytes instead of 192).
///
/// The messages in flight are split by who sent them: the name server's,
/// each broker's, the consumers'. The network is in sender order, so each
/// is a run of it, and the state is their concatenation. Each sender's
/// messages take few distinct values where the whole network takes many
/// (at four consumers, 118,059 networks; 1,006 and 954 runs of the two
/// brokers', 246 of the rest), so that the parts stored are few.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// The name server.
    NameServer(NameServerState),
    /// A broker.
    Broker(Box<BrokerState>),
    /// A consumer.
    Consumer(Box<ConsumerState>),
    /// The messages in flight of one sender or of the consumers.
    Network(Box<[Envelope]>),
    /// Every actor's timers and faults.
    Timers(Box<[TimerSet]>),
    /// The ghost counts of deliveries.
    Deliveries(Deliveries),
}

/// A part of a state, borrowed from it: [`Part`] without its copy.
#[derive(Debug, PartialEq)]
pub enum Lane<'s> {
    /// The name server.
    NameServer(&'s NameServerState),
    /// A broker.
    Broker(&'s BrokerState),
    /// A consumer.
    Consumer(&'s ConsumerState),
    /// The messages in flight of one sender or of the consumers.
    Network(&'s [Envelope]),
    /// Every actor's timers and faults.
    Timers(&'s [TimerSet]),
    /// The ghost counts of deliveries.
    Deliveries(&'s Deliveries),
}

impl<'s> Lane<'s> {
    fn of_part(part: &'s Part) -> Self {
        match part {
            Part::NameServer(n) => Lane::NameServer(n),
            Part::Broker(b) => Lane::Broker(b),
            Part::Consumer(c) => Lane::Consumer(c),
            Part::Network(n) => Lane::Network(n),
            Part::Timers(t) => Lane::Timers(t),
            Part::Deliveries(d) => Lane::Deliveries(d),
        }
    }

    fn to_part(&self) -> Part {
        match *self {
            Lane::NameServer(n) => Part::NameServer(*n),
            Lane::Broker(b) => Part::Broker(Box::new(*b)),
            Lane::Consumer(c) => Part::Consumer(Box::new(*c)),
            Lane::Network(n) => Part::Network(n.into()),
            Lane::Timers(t) => Part::Timers(t.into()),
            Lane::Deliveries(d) => Part::Deliveries(*d),
        }
    }
}

/// The network's senders as its parts split it: the name server, each
/// of `brokers` brokers, the consumers.
fn senders(brokers: usize) -> usize {
    brokers + 2
}

/// Which of the [`senders`] `src` is; in the order of [`Peer`], and so of
/// the network.
fn sender_of(src: Peer, brokers: usize) -> usize {
    match src {
        Peer::NameServer => 0,
        Peer::Broker(b) => 1 + usize::from(b),
        Peer::Consumer(_) => 1 + brokers,
    }
}

impl Packing for RebalanceModel {
    type Part = Part;
    type Lane<'s> = Lane<'s>;

    fn parts(&self) -> usize {
        let brokers = self.cfg.broker_names.len();
        3 + brokers + self.cfg.consumers.len() + senders(brokers)
    }

    /// The name server, the brokers, the consumers, the network's runs by
    /// sender (the name server, each broker, the consumers), the timers,
    /// the ghost counts.
    fn lanes<'s>(&self, state: &'s SystemState, visit: &mut dyn FnMut(Lane<'s>)) {
        // Every field named: a new one does not compile until it is here.
        let SystemState {
            name_server,
            brokers,
            consumers,
            network,
            timers,
            deliveries,
        } = state;
        visit(Lane::NameServer(name_server));
        brokers.iter().for_each(|b| visit(Lane::Broker(b)));
        consumers.iter().for_each(|c| visit(Lane::Consumer(c)));
        let mut rest = network.as_slice();
        for sender in 0..senders(brokers.len()) {
            let end = rest.partition_point(|e| sender_of(e.src, brokers.len()) == sender);
            let (run, after) = rest.split_at(end);
            visit(Lane::Network(run));
            rest = after;
        }
        visit(Lane::Timers(timers));
        visit(Lane::Deliveries(deliveries));
    }

    fn is(lane: &Lane<'_>, part: &Part) -> bool {
        *lane == Lane::of_part(part)
    }

    fn own(lane: &Lane<'_>) -> Part {
        lane.to_part()
    }

    fn join(&self, parts: &[&Part]) -> Option<SystemState> {
        let (brokers, consumers) = (self.cfg.broker_names.len(), self.cfg.consumers.len());
        let [Part::NameServer(name_server), rest @ ..] = parts else {
            return None;
        };
        let (broker_parts, rest) = rest.split_at_checked(brokers)?;
        let (consumer_parts, rest) = rest.split_at_checked(consumers)?;
        let (network_parts, rest) = rest.split_at_checked(senders(brokers))?;
        let [Part::Timers(timers), Part::Deliveries(deliveries)] = rest else {
            return None;
        };
        // Each sender's run, of that sender's messages only.
        let runs = network_parts
            .iter()
            .enumerate()
            .map(|(sender, p)| match p {
                Part::Network(run) if run.iter().all(|e| sender_of(e.src, brokers) == sender) => {
                    Some(&run[..])
                }
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let brokers = broker_parts
            .iter()
            .map(|p| match p {
                Part::Broker(b) => Some(**b),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let consumers = consumer_parts
            .iter()
            .map(|p| match p {
                Part::Consumer(c) => Some(**c),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SystemState {
            name_server: *name_server,
            brokers,
            consumers,
            network: Network::from_slices(&runs),
            timers: timers.to_vec(),
            deliveries: *deliveries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, with fields drawn from a few values each.
    fn samples() -> Vec<Message> {
        use Message::*;
        let mut all = Vec::new();
        for x in [0u8, 1, 15, 255] {
            for y in [0u8, 2, 255] {
                let members = u16::from(x) << 8 | u16::from(y);
                let route = Route {
                    version: y,
                    dropped: x,
                };
                let flag = x % 2 == 1;
                all.extend([
                    Heartbeat {
                        epoch: x,
                        topics: y,
                    },
                    Unregister { epoch: x },
                    NotifyConsumerIdsChanged,
                    GetConsumerList { topic: x, epoch: y },
                    ConsumerList {
                        topic: y,
                        members,
                        twice: members & 0x0F0F,
                        epoch: x,
                    },
                    ConsumerList {
                        topic: y,
                        members,
                        twice: 0,
                        epoch: x,
                    },
                    QueryAssignment { topic: x, epoch: y },
                    BrokerAllocation {
                        topic: x,
                        members,
                        twice: 0,
                        route,
                        epoch: y,
                    },
                    BrokerAllocation {
                        topic: x,
                        members,
                        twice: members | 1,
                        route,
                        epoch: y,
                    },
                    SecondChannel { epoch: x },
                    SecondChannelExpired {
                        consumer: x,
                        epoch: y,
                    },
                    RouteData { route },
                    SilenceExpired {
                        epoch: y,
                        alive: flag,
                    },
                    ChannelClosed { epoch: y },
                    ConnectionClosed { epoch: x },
                    LaterRebalance,
                    QueryOffset { queue: x, epoch: y },
                    Offset {
                        queue: y,
                        stored: x,
                        in_memory: flag,
                        epoch: y,
                    },
                    UpdateOffset {
                        queue: x,
                        offset: y,
                        epoch: x,
                    },
                    CommitOffset {
                        queue: y,
                        offset: x,
                        epoch: y,
                    },
                    CommitAck { queue: x },
                    PullMessage {
                        queue: x,
                        offset: y,
                        commit: x,
                        generation: flag,
                        epoch: y,
                    },
                    PullResult {
                        queue: y,
                        from: x,
                        to: y,
                        generation: flag,
                        epoch: x,
                    },
                    LockBatch {
                        queues: x,
                        epoch: y,
                    },
                    Locked {
                        asked: x,
                        granted: y,
                        epoch: x,
                    },
                    UnlockBatch {
                        queues: y,
                        epoch: x,
                    },
                    LaterPoll { route },
                    SendMessageBack {
                        queue: x,
                        from: y,
                        to: x,
                        epoch: y,
                    },
                    SentBack { queue: y, epoch: x },
                    Refused { epoch: y },
                    BrokerPresence { alive: flag },
                ]);
            }
        }
        all
    }

    #[test]
    fn distinct_messages_pack_distinctly() {
        let all = samples();
        for a in &all {
            for b in &all {
                assert_eq!(a.packed() == b.packed(), a == b, "{a:?} {b:?}");
            }
            assert!(a.packed() < 1 << 72, "{a:?}");
        }
    }

    #[test]
    fn distinct_peers_pack_distinctly() {
        let peers: Vec<Peer> = std::iter::once(Peer::NameServer)
            .chain((0..=255).map(Peer::Broker))
            .chain((0..=255).map(Peer::Consumer))
            .collect();
        let packed: std::collections::BTreeSet<u128> = peers.iter().map(|p| p.packed()).collect();
        assert_eq!(packed.len(), peers.len());
    }
}
