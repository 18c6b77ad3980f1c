//! This project's RocketMQ allocation strategies for the Rust RocketMQ
//! client, and the Rust client's strategies for this project's tests.
//!
//! The Rust client (`rocketmq-client-rust`, of the rocketmq-rust project)
//! allocates as the Java client does: each consumer sorts the topic's
//! queues and the group's client ids, then calls an
//! `AllocateMessageQueueStrategy` (the trait is defined in
//! `rocketmq-model::allocation`, and `rocketmq-client-rust` re-exports it).
//! It sorts by UTF-8 bytes, where the Java client sorts strings by UTF-16
//! code units; the orders differ where a character in `U+E000..U+FFFF`
//! meets one outside the Basic Multilingual Plane, and a group that mixes
//! both clients then splits its queues on two different lists.
//!
//! - [`JavaOrder`] puts any strategy of `rocketmq-rebalance` behind the
//!   Rust client's trait, and sorts both lists again in Java's order before
//!   it allocates, so that a Rust consumer in a group of Java consumers
//!   takes exactly the share the Java client would.
//! - [`AsGiven`] is the same without the sort: Java's strategy-level call,
//!   which takes the lists in the order given.
//! - [`RocketmqRustStrategy`] goes the other way: the Rust client's own
//!   strategies behind `rocketmq-rebalance`'s [`AllocateStrategy`], so that
//!   the Java client's conformance cases and the model can run them.
//!
//! ```
//! use cheetah_string::CheetahString;
//! use rocketmq_model::allocation::AllocateMessageQueueStrategy;
//! use rocketmq_model::message::MessageQueue;
//! use rocketmq_rebalance_rust_client::JavaOrder;
//!
//! let strategy = JavaOrder::from_name("AVG")?;
//! let queues: Vec<MessageQueue> = (0..4).map(|i| MessageQueue::from_parts("T", "broker-a", i)).collect();
//! // The smallest ids whose orders differ: Java sorts U+10000 (a surrogate
//! // pair) before U+E000, the byte order after it.
//! let mut ids = vec![CheetahString::from_slice("\u{E000}"), CheetahString::from_slice("\u{10000}")];
//! ids.sort(); // as the Rust client does, by bytes
//! let group = CheetahString::from_slice("group");
//! let mine = strategy.allocate(&group, &ids[0], &queues, &ids)?;
//! // In Java's order "\u{E000}" is second, and takes the second half.
//! assert_eq!(mine, queues[2..]);
//! assert_eq!(strategy.get_name(), "AVG");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};

use cheetah_string::CheetahString;
use rocketmq_error::{Error, CORE_ARGUMENT_INVALID};
use rocketmq_model::allocation::{
    AllocateMachineRoomNearby, AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle, AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom, AllocateMessageQueueConsistentHash,
    AllocateMessageQueueStrategy, MachineRoomResolver,
};
use rocketmq_model::message::MessageQueue as TheirQueue;
use rocketmq_rebalance::java::split;
use rocketmq_rebalance::strategy::StrategySpec;
use rocketmq_rebalance::{
    rebalance_allocate, AllocateError, AllocateStrategy, MessageQueue, UnknownStrategy,
};

/// A strategy of `rocketmq-rebalance` behind the Rust client's
/// `AllocateMessageQueueStrategy`, sorting both lists in Java's order
/// first (as the Java client's `RebalanceImpl.rebalanceByTopic` does), so
/// that a Rust consumer allocates exactly as a Java one.
///
/// The Rust client has sorted both lists by bytes before it calls the
/// strategy; `JavaOrder` sorts copies again, by UTF-16 code units, and
/// answers with the queues the Java client would own. Failures are the
/// Java client's (`currentCID is empty`, ...), as an
/// `core.argument.invalid` error whose source is the
/// [`AllocateError`].
///
/// ```
/// use cheetah_string::CheetahString;
/// use rocketmq_model::allocation::AllocateMessageQueueStrategy;
/// use rocketmq_model::message::MessageQueue;
/// use rocketmq_rebalance::strategy::AveragelyByCircle;
/// use rocketmq_rebalance_rust_client::JavaOrder;
///
/// let strategy = JavaOrder::new(AveragelyByCircle);
/// let queues: Vec<MessageQueue> = (0..3).map(|i| MessageQueue::from_parts("T", "b", i)).collect();
/// let ids = vec![CheetahString::from_slice("c1"), CheetahString::from_slice("c2")];
/// let group = CheetahString::from_slice("g");
/// let mine = strategy.allocate(&group, &ids[0], &queues, &ids)?;
/// assert_eq!(mine, [queues[0].clone(), queues[2].clone()]);
/// let empty = strategy.allocate(&group, &ids[0], &[], &ids);
/// assert!(empty.is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JavaOrder<S> {
    strategy: S,
    name: &'static str,
}

impl<S: AllocateStrategy> JavaOrder<S> {
    /// `strategy` behind the Rust client's trait.
    pub fn new(strategy: S) -> Self {
        let name = interned(strategy.name());
        JavaOrder { strategy, name }
    }

    /// The strategy inside.
    pub fn strategy(&self) -> &S {
        &self.strategy
    }
}

impl JavaOrder<Box<dyn AllocateStrategy>> {
    /// The strategy of this stable name (`AVG`, `AVG_BY_CIRCLE`,
    /// `CONSISTENT_HASH`, `MACHINE_ROOM_NEARBY[-X]`, `STICKY[-k]`, ...),
    /// as `rocketmq_rebalance::strategy_from_name` reads it.
    pub fn from_name(name: &str) -> Result<Self, UnknownStrategy> {
        Ok(Self::new(rocketmq_rebalance::strategy_from_name(name)?))
    }
}

impl<S: fmt::Debug> fmt::Debug for JavaOrder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JavaOrder").field(&self.strategy).finish()
    }
}

impl<S: AllocateStrategy> AllocateMessageQueueStrategy for JavaOrder<S> {
    fn allocate(
        &self,
        consumer_group: &CheetahString,
        current_cid: &CheetahString,
        mq_all: &[TheirQueue],
        cid_all: &[CheetahString],
    ) -> rocketmq_error::Result<Vec<TheirQueue>> {
        let queues: Vec<MessageQueue> = mq_all.iter().map(ours).collect();
        let ids: Vec<String> = cid_all.iter().map(|id| id.as_str().to_owned()).collect();
        rebalance_allocate(
            &self.strategy,
            consumer_group.as_str(),
            current_cid.as_str(),
            &queues,
            &ids,
        )
        .map(|mine| mine.iter().map(theirs).collect())
        .map_err(|e| Error::caused_by(&CORE_ARGUMENT_INVALID, e))
    }

    fn get_name(&self) -> &'static str {
        self.name
    }
}

/// A strategy of `rocketmq-rebalance` behind the Rust client's trait,
/// without sorting: Java's strategy-level call
/// (`AllocateMessageQueueStrategy.allocate`), which allocates on the lists
/// in the order given. Use [`JavaOrder`] in a consumer; this one is for
/// callers that sort themselves.
///
/// ```
/// use cheetah_string::CheetahString;
/// use rocketmq_model::allocation::AllocateMessageQueueStrategy;
/// use rocketmq_model::message::MessageQueue;
/// use rocketmq_rebalance::strategy::Averagely;
/// use rocketmq_rebalance_rust_client::AsGiven;
///
/// let strategy = AsGiven::new(Averagely);
/// let queues: Vec<MessageQueue> = (0..2).map(|i| MessageQueue::from_parts("T", "b", i)).collect();
/// let ids = vec![CheetahString::from_slice("c2"), CheetahString::from_slice("c1")];
/// let g = CheetahString::from_slice("g");
/// assert_eq!(strategy.allocate(&g, &ids[0], &queues, &ids)?, queues[..1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AsGiven<S> {
    strategy: S,
    name: &'static str,
}

impl<S: AllocateStrategy> AsGiven<S> {
    /// `strategy` behind the Rust client's trait, without sorting.
    pub fn new(strategy: S) -> Self {
        let name = interned(strategy.name());
        AsGiven { strategy, name }
    }
}

impl<S: fmt::Debug> fmt::Debug for AsGiven<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AsGiven").field(&self.strategy).finish()
    }
}

impl<S: AllocateStrategy> AllocateMessageQueueStrategy for AsGiven<S> {
    fn allocate(
        &self,
        consumer_group: &CheetahString,
        current_cid: &CheetahString,
        mq_all: &[TheirQueue],
        cid_all: &[CheetahString],
    ) -> rocketmq_error::Result<Vec<TheirQueue>> {
        let queues: Vec<MessageQueue> = mq_all.iter().map(ours).collect();
        let ids: Vec<String> = cid_all.iter().map(|id| id.as_str().to_owned()).collect();
        self.strategy
            .allocate(consumer_group.as_str(), current_cid.as_str(), &queues, &ids)
            .map(|mine| mine.into_iter().map(theirs).collect())
            .map_err(|e| Error::caused_by(&CORE_ARGUMENT_INVALID, e))
    }

    fn get_name(&self) -> &'static str {
        self.name
    }
}

/// The Rust client's own strategy code (`rocketmq-model`'s
/// `AllocateMessageQueueStrategy` implementations) behind
/// `rocketmq-rebalance`'s [`AllocateStrategy`], for measuring it against
/// the Java client's conformance cases and for the model's
/// `rocketmq-rust` client.
///
/// The queues it answers are mapped back, by value, to the caller's list
/// (the trait returns references into it); an answered queue that is not
/// in the list (only `CONFIG` answers such) is dropped. Its failures are
/// [`AllocateError::Other`] with the Rust client's message.
///
/// ```
/// use rocketmq_rebalance::{AllocateStrategy, MessageQueue};
/// use rocketmq_rebalance_rust_client::RocketmqRustStrategy;
///
/// let theirs = RocketmqRustStrategy::from_spec(&"AVG".parse()?)?;
/// let queues: Vec<_> = (0..3).map(|i| MessageQueue::new("T", "b", i)).collect();
/// let ids = vec!["c1".to_string(), "c2".to_string()];
/// let mine = theirs.allocate("g", "c1", &queues, &ids)?;
/// assert_eq!(mine, [&queues[0], &queues[1]]);
/// assert_eq!(theirs.name(), "AVG");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RocketmqRustStrategy {
    inner: Box<dyn AllocateMessageQueueStrategy>,
}

impl RocketmqRustStrategy {
    /// Any implementation of the Rust client's trait.
    pub fn new(inner: Box<dyn AllocateMessageQueueStrategy>) -> Self {
        RocketmqRustStrategy { inner }
    }

    /// The Rust client's implementation of the strategy `spec` describes,
    /// with its parameters: `AVG`, `AVG_BY_CIRCLE`, `CONSISTENT_HASH`
    /// (virtual nodes), `CONFIG` (queues), `MACHINE_ROOM` (consumer rooms)
    /// and `MACHINE_ROOM_NEARBY` over any of these, with rooms read as
    /// [`StrategySpec`] reads them (the text before the first `-`). Fails,
    /// saying why, for a strategy the Rust client does not have (`STICKY`).
    pub fn from_spec(spec: &StrategySpec) -> Result<Self, String> {
        Ok(Self::new(their_strategy(spec)?))
    }
}

impl fmt::Debug for RocketmqRustStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RocketmqRustStrategy")
            .field(&self.inner.get_name())
            .finish()
    }
}

impl AllocateStrategy for RocketmqRustStrategy {
    fn name(&self) -> &str {
        self.inner.get_name()
    }

    fn allocate<'a>(
        &'a self,
        group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        let mq_all: Vec<TheirQueue> = queues.iter().map(theirs).collect();
        let cid_all: Vec<CheetahString> = consumers
            .iter()
            .map(|id| CheetahString::from_slice(id))
            .collect();
        let answer = self
            .inner
            .allocate(
                &CheetahString::from_slice(group),
                &CheetahString::from_slice(current),
                &mq_all,
                &cid_all,
            )
            .map_err(|e| AllocateError::Other(e.to_string()))?;
        // Each answered queue at the next position of the list that holds
        // it, so that a queue listed twice and answered twice maps twice.
        let mut positions: HashMap<&TheirQueue, (Vec<usize>, usize)> = HashMap::new();
        for (i, queue) in mq_all.iter().enumerate() {
            positions.entry(queue).or_default().0.push(i);
        }
        Ok(answer
            .iter()
            .filter_map(|queue| {
                let (slots, next) = positions.get_mut(queue)?;
                let i = slots.get(*next).or(slots.first()).copied()?;
                *next += 1;
                queues.get(i)
            })
            .collect())
    }
}

/// The Rust client's implementation of `spec`.
fn their_strategy(spec: &StrategySpec) -> Result<Box<dyn AllocateMessageQueueStrategy>, String> {
    Ok(match spec {
        StrategySpec::Averagely => Box::new(AllocateMessageQueueAveragely),
        StrategySpec::AveragelyByCircle => Box::new(AllocateMessageQueueAveragelyByCircle),
        StrategySpec::ConsistentHash { virtual_nodes } => {
            let nodes = i32::try_from(*virtual_nodes)
                .map_err(|_| format!("{virtual_nodes} virtual nodes do not fit Java's int"))?;
            Box::new(AllocateMessageQueueConsistentHash::new(nodes))
        }
        StrategySpec::ByConfig { queues } => Box::new(AllocateMessageQueueByConfig::new(
            queues.iter().map(theirs).collect(),
        )),
        StrategySpec::ByMachineRoom { consumer_rooms } => {
            Box::new(AllocateMessageQueueByMachineRoom::new(
                consumer_rooms
                    .iter()
                    .map(|room| CheetahString::from_slice(room))
                    .collect::<HashSet<_>>(),
            ))
        }
        StrategySpec::MachineRoomNearby { inner } => Box::new(AllocateMachineRoomNearby::new(
            their_strategy(inner)?,
            Box::new(PrefixRooms),
        )),
        other => {
            return Err(format!(
                "rocketmq-rust has no strategy {}: it implements AVG, AVG_BY_CIRCLE, \
                 CONSISTENT_HASH, CONFIG, MACHINE_ROOM and MACHINE_ROOM_NEARBY",
                other.name()
            ))
        }
    })
}

/// The machine rooms of `MACHINE_ROOM_NEARBY` as this project's
/// `PrefixResolver('-')` and the Java conformance cases read them: the
/// text before the first `-`, as Java's `name.split("-")[0]` (a name made
/// only of separators has none).
#[derive(Debug, Clone, Copy)]
struct PrefixRooms;

impl PrefixRooms {
    fn room(name: &str) -> Option<CheetahString> {
        split(name, '-')
            .first()
            .map(|room| CheetahString::from_slice(room))
    }
}

impl MachineRoomResolver for PrefixRooms {
    fn broker_deploy_in(&self, message_queue: &TheirQueue) -> Option<CheetahString> {
        Self::room(message_queue.broker_name().as_str())
    }

    fn consumer_deploy_in(&self, client_id: &CheetahString) -> Option<CheetahString> {
        Self::room(client_id.as_str())
    }
}

/// Their queue as this project's.
fn ours(queue: &TheirQueue) -> MessageQueue {
    MessageQueue::new(
        queue.topic_str(),
        queue.broker_name().as_str(),
        queue.queue_id(),
    )
}

/// This project's queue as theirs.
fn theirs(queue: &MessageQueue) -> TheirQueue {
    TheirQueue::from_parts(
        CheetahString::from_slice(&queue.topic),
        CheetahString::from_slice(&queue.broker_name),
        queue.queue_id,
    )
}

/// `name` for the lifetime of the program, as the trait's `get_name`
/// returns it: each distinct name is allocated once.
fn interned(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
