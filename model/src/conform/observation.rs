//! What a real trace can see of the model: the observables of a state
//! (each broker's member table, each running consumer's queues by topic,
//! each consumer's life), the faults a consumer meets, the lock calls a
//! broker answers, and the changes a step makes to them, in
//! RocketMQ's names so that a translator of real events can produce the
//! same values.

use std::fmt;

use crate::config::{listed, members_of, Config, Dense, Effect, Fault};
use crate::protocol::{ConsumerState, Message, Peer, Phase};
use crate::shell::{actor_index, Action, SystemState};

/// A change that a real trace records and the model's step makes, in
/// RocketMQ's names: brokers `broker-a`, client ids as the broker lists
/// them, consumers by their process name (`c1`), queues `broker-a:0`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Observed {
    /// The broker's member table of the group is now these client ids,
    /// sorted (one per consumer listed; a shared id appears twice).
    Members {
        /// The broker.
        broker: String,
        /// Its members' client ids.
        clients: Vec<String>,
    },
    /// The running consumer's queues of the topic are now these, sorted
    /// (`messageQueueChanged`).
    Owns {
        /// The consumer.
        consumer: String,
        /// The topic.
        topic: String,
        /// Its queues of the topic.
        queues: Vec<String>,
    },
    /// The consumer started (`DefaultMQPushConsumer.start`).
    Started {
        /// The consumer.
        consumer: String,
    },
    /// The consumer shut down gracefully.
    ShutDown {
        /// The consumer.
        consumer: String,
    },
    /// The consumer's process died, or its host.
    Died {
        /// The consumer.
        consumer: String,
    },
    /// The broker's master failed and its slave serves in its place (a
    /// harness `fail_over` step).
    FailedOver {
        /// The broker.
        broker: String,
    },
    /// The broker answered a lock call (`LOCK_BATCH_MQ`) of the client
    /// for this queue: locked for it where another or nobody held it, or
    /// refused. One observation a queue: Java's rebalance locks a new
    /// queue alone, its renewal every queue of a broker at once. A renewal
    /// of a lock the client holds changes no holder, only the lease's age,
    /// which the model counts in ticks and the trace in milliseconds: it
    /// is not observed.
    Locked {
        /// The client id that asked.
        client: String,
        /// The broker.
        broker: String,
        /// The queue, with its topic: `TopicTest@broker-a:0`.
        queue: String,
        /// Whether the broker locked it for the client.
        granted: bool,
    },
    /// The consumer's listener began a batch of the queue
    /// (`c.consume.begin`). No step makes it: it is a check on the state
    /// it falls in ([`Observed::is_check`]), which must have the consumer
    /// running with the queue in its process-queue table (its offset
    /// read, not dropped) and, orderly, under a lock it trusts (Java's
    /// consume request checks both before it calls the listener).
    Consumes {
        /// The consumer.
        consumer: String,
        /// The topic.
        topic: String,
        /// The queue (`broker-a:0`).
        queue: String,
        /// A FIFO group's delivery: the offset of its message, which a
        /// batch the consumer runs of the queue holds (a FIFO message is
        /// popped at its place in its queue, so its offset is the model's).
        offset: Option<u8>,
    },
    /// A fault of the environment the consumer's next call of some kind
    /// was to meet met it: a notification lost, a query or an offset read
    /// that failed, a persist or an unlock lost, a batch its listener failed
    /// (a harness rule that fired, `c.fault` or `b.fault`).
    Faulted {
        /// The consumer.
        consumer: String,
        /// The fault, by the flag that budgets it (`failed-queries`).
        fault: String,
    },
}

/// The name an observation gives `fault`: the flag of its first budget,
/// without its dashes (`failed-queries`).
pub fn fault_name(fault: Fault) -> &'static str {
    fault
        .spec()
        .budgets
        .first()
        .map_or("", |size| size.flag().trim_start_matches('-'))
}

/// The fault of that name whose step a trace can see happen, if any: one
/// scheduled for a consumer's next call ([`Effect::Scheduled`]).
pub fn observable_fault(name: &str) -> Option<Fault> {
    Fault::all().find(|&f| fault_name(f) == name && observable(f))
}

/// The faults a trace sees happen: those a harness rule makes by failing
/// a call or losing a message at a hook, or failing a batch at a listener
/// (`c.fault`, `b.fault`), each
/// scheduled for the consumer's next call of a kind, which meets it and
/// clears it. A second channel is seen through the listings instead, and
/// a fault that applies from then on (every lock call timing out) has no
/// moment to be seen at.
const OBSERVED_FAULTS: [Fault; 6] = [
    Fault::LoseNotification,
    Fault::FailQuery,
    Fault::FailOffsetRead,
    Fault::LosePersist,
    Fault::LoseUnlock,
    Fault::FailConsume,
];

/// Whether a trace sees `fault` happen ([`OBSERVED_FAULTS`]).
fn observable(fault: Fault) -> bool {
    debug_assert!(
        !OBSERVED_FAULTS.contains(&fault) || matches!(fault.spec().effect, Effect::Scheduled(_))
    );
    OBSERVED_FAULTS.contains(&fault)
}

impl Observed {
    /// Who makes the change: the events of one actor keep their order.
    pub fn actor(&self) -> &str {
        match self {
            Self::Members { broker, .. } | Self::FailedOver { broker } => broker,
            Self::Owns { consumer, .. }
            | Self::Started { consumer }
            | Self::ShutDown { consumer }
            | Self::Died { consumer }
            | Self::Consumes { consumer, .. }
            | Self::Faulted { consumer, .. } => consumer,
            // A client's calls are one after another: its consumer's.
            Self::Locked { client, .. } => client,
        }
    }
}

impl Observed {
    /// Whether it is a check on a state rather than a change a step makes:
    /// the state it falls in must have it.
    pub fn is_check(&self) -> bool {
        matches!(self, Self::Consumes { .. })
    }
}

/// Whether `state`, where the trace has shown the tables `shown`, has what
/// the check `what` says ([`Observed::is_check`]); false for a change,
/// which no state has by itself. A batch's queue must be in the table the
/// trace last showed of its consumer: Java hands a new queue's first pull
/// out only once its round has added every queue, just before it reports
/// the table. A POP batch names its assignment, a whole broker
/// (`broker-a:-1`), and may hold messages of any of its queues: one of
/// them will do.
pub fn has(cfg: &Config, state: &SystemState, shown: &Shown, what: &Observed) -> bool {
    let Observed::Consumes {
        consumer,
        topic,
        queue,
        offset,
    } = what
    else {
        return false;
    };
    let Some(c) = cfg.consumers.iter().position(|c| c.name == *consumer) else {
        return false;
    };
    let Some(set) = queue_set(cfg, topic, queue) else {
        return false;
    };
    let held = &state.consumers[c];
    held.phase == Phase::Running
        && members_of(set & shown.0[c] & held.owned).any(|q| {
            let pq = &held.queues[q];
            // A queue whose offset read is in flight is not in Java's table yet.
            !(cfg.messages() && pq.reading_offset)
                && held.may_consume(cfg, q)
                && offset.map_or(true, |o| pq.running() && (pq.from..pq.to).contains(&o))
        })
}

/// The first check of `observations`, from `start` on, that no run of the
/// model can explain whatever its steps, with why: a batch of a queue
/// missing from every table the trace shows of its consumer within
/// `window_ns` of it (before `start`, the tables of `initial`). A state
/// has a batch only where the table last shown has its queue, and the
/// table shown changes only with an observation, which a run explains in
/// the trace's order up to the window.
pub fn unheld(
    cfg: &Config,
    initial: &Shown,
    observations: &[Observation],
    start: usize,
    window_ns: u64,
) -> Option<(usize, String)> {
    let tail = observations.get(start..)?;
    tail.iter().enumerate().find_map(|(k, batch)| {
        let Observed::Consumes {
            consumer,
            topic,
            queue,
            ..
        } = &batch.what
        else {
            return None;
        };
        let c = cfg.consumers.iter().position(|x| x.name == *consumer)?;
        let set = queue_set(cfg, topic, queue)?;
        let names = queue_names(cfg, cfg.topic_names.iter().position(|n| n == topic)?, set);
        let (from, to) = (
            batch.t.saturating_sub(window_ns),
            batch.t.saturating_add(window_ns),
        );
        // The table as the window opens, and every one shown within it.
        let mut before = initial.0[c] & set != 0;
        let mut within = false;
        for o in tail {
            let holds = match &o.what {
                Observed::Owns {
                    consumer: c2,
                    topic: t2,
                    queues,
                } if c2 == consumer && t2 == topic => queues.iter().any(|n| names.contains(n)),
                Observed::Started { consumer: c2 }
                | Observed::ShutDown { consumer: c2 }
                | Observed::Died { consumer: c2 }
                    if c2 == consumer =>
                {
                    false
                }
                _ => continue,
            };
            if o.t < from {
                before = holds;
            } else if o.t <= to {
                within |= holds;
            }
        }
        (!before && !within).then(|| {
            (
                start + k,
                format!(
                    "{consumer} shows no table with {queue} within {} ms of it",
                    window_ns as f64 / 1e6
                ),
            )
        })
    })
}

/// The model's queues of `topic` that `queue` names, as a set: the one
/// queue `broker-a:0`, or every queue of the broker for a POP
/// assignment's `broker-a:-1`; `None` if the model has none of them.
fn queue_set(cfg: &Config, topic: &str, queue: &str) -> Option<u64> {
    let t = cfg.topic_names.iter().position(|n| n == topic)?;
    let (broker, id) = queue.rsplit_once(':')?;
    let id: i32 = id.parse().ok()?;
    let set = members_of(cfg.topic_queues(t))
        .filter(|&q| {
            let mq = &cfg.queues[q].mq;
            mq.broker_name == broker && (id == -1 || mq.queue_id == id)
        })
        .fold(0u64, |set, q| set | 1 << q);
    (set != 0).then_some(set)
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Members { broker, clients } => {
                write!(f, "{broker} lists [{}]", clients.join(" "))
            }
            Self::Owns {
                consumer,
                topic,
                queues,
            } => write!(f, "{consumer} consumes [{}] of {topic}", queues.join(" ")),
            Self::Started { consumer } => write!(f, "{consumer} starts"),
            Self::ShutDown { consumer } => write!(f, "{consumer} shuts down"),
            Self::Died { consumer } => write!(f, "{consumer} dies"),
            Self::FailedOver { broker } => write!(f, "{broker} fails over"),
            Self::Faulted { consumer, fault } => write!(f, "{consumer} meets its {fault} fault"),
            Self::Consumes {
                consumer,
                topic,
                queue,
                offset: None,
            } => write!(f, "{consumer} begins a batch of {queue} of {topic}"),
            Self::Consumes {
                consumer,
                topic,
                queue,
                offset: Some(o),
            } => write!(
                f,
                "{consumer} begins a batch of {queue} of {topic} with offset {o}"
            ),
            Self::Locked {
                client,
                broker,
                queue,
                granted: true,
            } => write!(f, "{broker} locks {queue} for {client}"),
            Self::Locked {
                client,
                broker,
                queue,
                granted: false,
            } => write!(f, "{broker} refuses {client} the lock of {queue}"),
        }
    }
}

/// One observation of a real trace: what changed, when, and the event
/// that showed it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Observation {
    /// The change.
    pub what: Observed,
    /// When (ns, the trace's monotonic clock).
    pub t: u64,
    /// The trace line (from 1) of the event that showed it.
    pub line: usize,
}

/// What the trace has last shown of each consumer's process-queue table
/// (bit sets of queue indices, by consumer). Java runs a rebalance round
/// in one go, each lock and offset read a call it waits for, and reports
/// the table once, at the round's end, if the round changed it
/// (`messageQueueChanged`); the model takes each call as a step of its
/// own, so a round's table is seen once the round is over, against the
/// table last shown. So a run's observations depend on its path, not only
/// on its state: the search keeps this with each state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shown(Vec<u64>);

impl Shown {
    /// Nothing shown yet: no consumer has a table.
    pub fn nothing(cfg: &Config) -> Self {
        Self(vec![0; cfg.consumers.len()])
    }
}

/// The running consumer's process-queue table of `topic` once the round
/// that changes it is over: the queues it consumes and, orderly, those
/// dropped and still waiting to be removed. None while a round is under
/// way: a new queue's offset read or, orderly, its lock in flight (Java
/// adds a queue only once both succeeded, and reports at the round's end).
fn table_after_round(cfg: &Config, consumer: &ConsumerState, topic: usize) -> Option<u64> {
    let of_topic = cfg.topic_queues(topic);
    let reading = cfg.messages()
        && members_of(consumer.owned & of_topic).any(|q| consumer.queues[q].reading_offset);
    let locking_new = u64::from(consumer.adding) & of_topic != 0;
    (!reading && !locking_new).then(|| (consumer.owned | u64::from(consumer.dropped())) & of_topic)
}

/// The client ids of a broker's member table, sorted: one a channel, so
/// those of `twice` twice.
pub(super) fn clients(cfg: &Config, members: u16, twice: u16) -> Vec<String> {
    let mut ids: Vec<String> = listed(members, twice)
        .map(|c| cfg.consumers[c].client_id.clone())
        .collect();
    ids.sort();
    ids
}

/// The queues of `set` in `topic`, as `broker-a:0`, sorted.
pub(super) fn queue_names(cfg: &Config, topic: usize, set: u64) -> Vec<String> {
    let mut names: Vec<String> = members_of(set & cfg.topic_queues(topic))
        .map(|q| {
            let mq = &cfg.queues[q].mq;
            format!("{}:{}", mq.broker_name, mq.queue_id)
        })
        .collect();
    names.sort();
    names
}

/// A queue as a lock call names it: `TopicTest@broker-a:0`.
pub(super) fn locked_name(cfg: &Config, q: usize) -> String {
    let mq = &cfg.queues[q].mq;
    format!("{}@{}:{}", mq.topic, mq.broker_name, mq.queue_id)
}

/// The lock calls a broker takes in `action`, the delivery of a lock
/// call: one observation a queue, granted when the broker now holds it
/// for the caller's client id (`tryLockBatch` locks what is free or
/// already the caller's, nothing in a start's grace), except a renewal of
/// a lock the broker held for it already. A call on a dead connection or
/// to a stopped broker never reaches it. An unlock is one-way: the model
/// sends a round's with the step that ends the round and shows its table,
/// where the real broker takes it before or after the round's end as it
/// happens, so unlocks are not observed.
fn lock_calls(
    cfg: &Config,
    before: &SystemState,
    after: &SystemState,
    action: &Action,
) -> Vec<Observed> {
    let Action::Deliver(env) = action else {
        return Vec::new();
    };
    let (Peer::Consumer(c), Peer::Broker(b), Message::LockBatch { queues, epoch }) =
        (env.src, env.dst, env.msg)
    else {
        return Vec::new();
    };
    let (old, new) = (
        &before.brokers[usize::from(b)],
        &after.brokers[usize::from(b)],
    );
    if !old.takes_call(c, epoch) {
        return Vec::new();
    }
    let key = cfg.lock_key(usize::from(c));
    let renewal = |q: usize| old.memory.grace == 0 && old.memory.locks.holder(q) == Some(key);
    members_of(u64::from(queues))
        .filter(|&q| !renewal(q))
        .map(|q| Observed::Locked {
            client: cfg.consumers[usize::from(c)].client_id.clone(),
            broker: cfg.broker_names[usize::from(b)].clone(),
            queue: locked_name(cfg, q),
            granted: old.memory.grace == 0 && new.memory.locks.holder(q) == Some(key),
        })
        .collect()
}

/// The scheduled faults consumer `c` meets in the step from `before` to
/// `after`: one cleared while it runs on is the call it was for meeting
/// it; a graceful shutdown's persist meets a pending lost persist when it
/// sends any offset. A consumer that dies or crashes meets none: its
/// pending faults go with it.
fn met(cfg: &Config, before: &SystemState, after: &SystemState, c: usize) -> Vec<Fault> {
    let (old, new) = (&before.consumers[c], &after.consumers[c]);
    if old.phase != Phase::Running {
        return Vec::new();
    }
    match new.phase {
        Phase::Running => old
            .faults
            .iter()
            .filter(|&f| !new.faults.contains(f) && observable(f))
            .collect(),
        Phase::Left if old.loses_persist_on_shutdown(cfg, c) => vec![Fault::LosePersist],
        _ => Vec::new(),
    }
}

/// The changes a trace can see of `action`, the step from `before` to
/// `after` (none for the jump to the initial state), brokers first, with
/// `shown` the tables the trace has shown so far (updated). A consumer
/// that stops running is seen to stop, not to drop its queues.
pub fn changes(
    cfg: &Config,
    before: &SystemState,
    action: Option<&Action>,
    after: &SystemState,
    shown: &mut Shown,
) -> Vec<Observed> {
    let mut out = action.map_or_else(Vec::new, |a| lock_calls(cfg, before, after, a));
    for (b, (old, new)) in before.brokers.iter().zip(&after.brokers).enumerate() {
        // A failover is the step that spends its broker's one failover.
        let timers = actor_index(cfg, Peer::Broker(b as u8));
        let armed = |s: &SystemState| s.timers[timers].contains_fault(Fault::Failover);
        if armed(before) && !armed(after) {
            out.push(Observed::FailedOver {
                broker: cfg.broker_names[b].clone(),
            });
        }
        if (old.memory.members, old.memory.twice) != (new.memory.members, new.memory.twice) {
            out.push(Observed::Members {
                broker: cfg.broker_names[b].clone(),
                clients: clients(cfg, new.memory.members, new.memory.twice),
            });
        }
    }
    for c in 0..cfg.consumers.len() {
        let (old, new) = (&before.consumers[c], &after.consumers[c]);
        let consumer = &cfg.consumers[c].name;
        if old.phase != new.phase {
            out.push(match new.phase {
                Phase::Running => Observed::Started {
                    consumer: consumer.clone(),
                },
                Phase::Left => Observed::ShutDown {
                    consumer: consumer.clone(),
                },
                Phase::Crashed | Phase::Idle => Observed::Died {
                    consumer: consumer.clone(),
                },
            });
        }
        for fault in met(cfg, before, after, c) {
            out.push(Observed::Faulted {
                consumer: consumer.clone(),
                fault: fault_name(fault).to_owned(),
            });
        }
        if new.phase != Phase::Running {
            // Its process and table are gone; a new one starts empty.
            shown.0[c] = 0;
            continue;
        }
        for (topic, name) in cfg.topic_names.iter().enumerate() {
            let of_topic = cfg.topic_queues(topic);
            let Some(table) = table_after_round(cfg, new, topic) else {
                continue;
            };
            if shown.0[c] & of_topic != table {
                shown.0[c] = shown.0[c] & !of_topic | table;
                out.push(Observed::Owns {
                    consumer: consumer.clone(),
                    topic: name.clone(),
                    queues: queue_names(cfg, topic, table),
                });
            }
        }
    }
    out
}

/// What the trace must have shown to reach the model's initial state from
/// nothing started: each broker's members, each consumer's start and
/// queues (a running group starts registered and balanced), and the
/// tables so shown.
pub fn initial_observables(cfg: &Config, state: &SystemState) -> (Vec<Observed>, Shown) {
    let nothing = SystemState {
        brokers: state
            .brokers
            .iter()
            .map(|b| {
                let mut empty = *b;
                empty.memory.members = 0;
                empty
            })
            .collect(),
        consumers: state
            .consumers
            .iter()
            .map(|c| {
                let mut idle = *c;
                idle.phase = Phase::Idle;
                idle.owned = 0;
                idle
            })
            .collect(),
        ..state.clone()
    };
    let mut shown = Shown::nothing(cfg);
    let observed = changes(cfg, &nothing, None, state, &mut shown);
    (observed, shown)
}

/// Why no state of the model can show `what`, if none can: it names a
/// broker, a client, a consumer, a topic or a queue the model does not
/// have (or a client more often than the model's consumers share its id).
pub fn impossible(cfg: &Config, what: &Observed) -> Option<String> {
    let consumer_known = |name: &str| cfg.consumers.iter().any(|c| c.name == name);
    match what {
        Observed::Members { broker, clients } => {
            if !cfg.broker_names.contains(broker) {
                return Some(format!("the model has no broker {broker}"));
            }
            clients.iter().find_map(|id| {
                let listed = clients.iter().filter(|c| *c == id).count();
                let holders = cfg.consumers.iter().filter(|c| c.client_id == *id);
                let held = holders.clone().count();
                // One entry a channel: a consumer with a second channel
                // may be listed twice.
                let channels: usize = holders
                    .map(|c| if c.may(Fault::SecondChannel) { 2 } else { 1 })
                    .sum();
                (listed > channels).then(|| match held {
                    0 => format!("the model has no client {id}"),
                    _ => format!(
                        "{held} of the model's consumers have the id {id}, listed {listed} times"
                    ),
                })
            })
        }
        Observed::Owns {
            consumer,
            topic,
            queues,
        } => {
            if !consumer_known(consumer) {
                return Some(format!("the model has no consumer {consumer}"));
            }
            let Some(t) = cfg.topic_names.iter().position(|n| n == topic) else {
                return Some(format!("the model has no topic {topic}"));
            };
            let all = queue_names(cfg, t, u64::MAX);
            queues
                .iter()
                .find(|q| !all.contains(q))
                .map(|q| format!("the model's {topic} has no queue {q}"))
        }
        Observed::Started { consumer }
        | Observed::ShutDown { consumer }
        | Observed::Died { consumer } => {
            (!consumer_known(consumer)).then(|| format!("the model has no consumer {consumer}"))
        }
        Observed::FailedOver { broker } => match cfg.broker_names.iter().position(|b| b == broker) {
            None => Some(format!("the model has no broker {broker}")),
            Some(b) if !cfg.may(Fault::Failover, b) => Some(format!(
                "the model gives {broker} no failover (its budget, --failovers, picks others or is 0)"
            )),
            Some(_) => None,
        },
        Observed::Locked {
            client,
            broker,
            queue,
            ..
        } => {
            if cfg.orderly().is_none() {
                Some("the model's consumers take no locks (it does not consume orderly)".to_owned())
            } else if !cfg.broker_names.contains(broker) {
                Some(format!("the model has no broker {broker}"))
            } else if !cfg.consumers.iter().any(|c| c.client_id == *client) {
                Some(format!("the model has no client {client}"))
            } else if !(0..cfg.queues.len()).any(|q| locked_name(cfg, q) == *queue) {
                Some(format!("the model has no queue {queue}"))
            } else {
                None
            }
        }
        Observed::Consumes {
            consumer,
            topic,
            queue,
            ..
        } => {
            if !consumer_known(consumer) {
                Some(format!("the model has no consumer {consumer}"))
            } else if !cfg.topic_names.contains(topic) {
                Some(format!("the model has no topic {topic}"))
            } else if queue_set(cfg, topic, queue).is_none() {
                Some(format!("the model's {topic} has no queue {queue}"))
            } else {
                None
            }
        }
        Observed::Faulted { consumer, fault } => {
            let Some(spec) = cfg.consumers.iter().find(|c| c.name == *consumer) else {
                return Some(format!("the model has no consumer {consumer}"));
            };
            match observable_fault(fault) {
                None => Some(format!("the model has no fault {fault} a trace can see")),
                Some(f) if !spec.may(f) => Some(format!(
                    "the model gives {consumer} no {fault} fault (its budget, --{fault}, picks others or is 0)"
                )),
                Some(_) => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashSet, VecDeque};
    use std::sync::Arc;

    use stateright::Model;

    use super::*;
    use crate::config::{LockTiming, NetworkKind, ProtocolOptions, Scenario, Sizes};
    use crate::shell::Action;
    use crate::shell::RebalanceModel;

    /// Two consumers starting cold, one queue a broker, one message each:
    /// every queue's offset is read when it is added.
    fn cold_start() -> RebalanceModel {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            queues: 1,
            messages: 1,
            ..Sizes::default()
        };
        let cfg = Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg)
            .and_then(Config::cold_started)
            .expect("valid");
        RebalanceModel::new(cfg)
    }

    /// Two consumers consuming orderly from one broker, one message each,
    /// with `sizes`' other counts.
    fn orderly(sizes: Sizes) -> Result<Config, crate::config::ConfigError> {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            brokers: 1,
            messages: 1,
            ..sizes
        };
        let protocol = ProtocolOptions {
            orderly: Some(LockTiming::default()),
            ..Scenario::Healthy.default_protocol()
        };
        Config::new_with(
            Scenario::Healthy,
            sizes,
            NetworkKind::Ordered,
            avg,
            protocol,
        )
    }

    /// A settled model's initial state is what the trace must have shown
    /// from nothing started: every broker listing every member, every
    /// consumer started, and its share shown; a cold start's is nothing.
    #[test]
    fn a_settled_start_is_observed_as_every_member_start_and_share() {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            queues: 1,
            joins: Some(0),
            ..Sizes::default()
        };
        let cfg = Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg).expect("valid");
        let model = RebalanceModel::new(cfg);
        let cfg = &*model.cfg;
        let init = model.init_states()[0].clone();
        let (observed, shown) = initial_observables(cfg, &init);
        for broker in &cfg.broker_names {
            assert!(observed.iter().any(|o| matches!(o,
                Observed::Members { broker: b, clients } if b == broker && clients.len() == 2)));
        }
        for (c, consumer) in init.consumers.iter().enumerate() {
            let name = &cfg.consumers[c].name;
            assert!(observed.contains(&Observed::Started {
                consumer: name.clone()
            }));
            assert_ne!(consumer.owned, 0);
            assert_eq!(shown.0[c], consumer.owned);
        }
        let cold = cold_start();
        let (observed, shown) = initial_observables(&cold.cfg, &cold.init_states()[0]);
        assert!(observed.is_empty());
        assert_eq!(shown, Shown::nothing(&cold.cfg));
    }

    /// Every step from the first `limit` nodes breadth first from the
    /// model's initial state, a node being a state and the tables the trace
    /// last showed: `step` sees the node, the action and the state after
    /// it, and gives the tables shown after it.
    fn each_step(
        model: &RebalanceModel,
        limit: usize,
        mut step: impl FnMut(&SystemState, &Shown, Action, &SystemState) -> Shown,
    ) {
        let init = model.init_states()[0].clone();
        let (_, shown) = initial_observables(&model.cfg, &init);
        let mut queue = VecDeque::from([(init, shown)]);
        let mut visited = HashSet::new();
        let mut actions = Vec::new();
        while let Some((state, shown)) = queue.pop_front().filter(|_| visited.len() < limit) {
            if !visited.insert((crate::search::fingerprint(&state), shown.clone())) {
                continue;
            }
            actions.clear();
            model.actions(&state, &mut actions);
            for &action in &actions {
                let Some(after) = model.next_state(&state, action) else {
                    continue;
                };
                let next = step(&state, &shown, action, &after);
                queue.push_back((after, next));
            }
        }
    }

    /// A queue whose offset read is still in flight is in the model's
    /// `owned` but not yet in Java's table: no step shows a table with it,
    /// and a step that adds it to `owned` shows nothing of that consumer's
    /// queues until its round is over.
    #[test]
    fn a_table_is_shown_only_once_its_rounds_offset_reads_are_over() {
        let model = cold_start();
        let cfg = &*model.cfg;
        let (mut rounds_under_way, mut tables_shown) = (0, 0);
        // The first states breadth first: the cold start and its rounds.
        each_step(&model, 20_000, |state, shown, action, after| {
            let mut next = shown.clone();
            let seen = changes(cfg, state, Some(&action), after, &mut next);
            for (c, consumer) in after.consumers.iter().enumerate() {
                let reading = members_of(consumer.owned)
                    .filter(|&q| consumer.queues[q].reading_offset)
                    .fold(0u64, |set, q| set | 1 << q);
                let name = &cfg.consumers[c].name;
                let owns = seen
                    .iter()
                    .any(|o| matches!(o, Observed::Owns { consumer, .. } if consumer == name));
                if reading != 0 {
                    assert!(!owns, "{name} shown mid-round: {seen:?}");
                    assert_eq!(next.0[c] & reading, 0);
                    rounds_under_way += 1;
                }
                tables_shown += usize::from(owns);
            }
            next
        });
        assert!(rounds_under_way > 0 && tables_shown > 0);
    }

    /// A broker's lock call is observed queue by queue where the broker
    /// takes it, each granted exactly when the answer it sends locks it
    /// for the caller, except a renewal of a lock it held for the caller
    /// already; no other step shows a lock call.
    #[test]
    fn a_lock_call_is_observed_queue_by_queue_where_the_broker_answers_it() {
        let sizes = Sizes {
            queues: 2,
            leaves: 1,
            ..Sizes::default()
        };
        let cfg = orderly(sizes)
            .and_then(Config::cold_started)
            .expect("valid");
        let model = RebalanceModel::new(cfg);
        let cfg = &*model.cfg;
        let (mut grants, mut refusals, mut renewals) = (0, 0, 0);
        each_step(&model, 20_000, |state, shown, action, after| {
            let mut next = shown.clone();
            let seen = changes(cfg, state, Some(&action), after, &mut next);
            let calls: Vec<&Observed> = seen
                .iter()
                .filter(|o| matches!(o, Observed::Locked { .. }))
                .collect();
            let Action::Deliver(env) = action else {
                assert!(calls.is_empty(), "{action:?}: {seen:?}");
                return next;
            };
            // The lock answers the step sent: those more in flight after it.
            let count = |s: &SystemState, e: &crate::shell::Envelope| {
                s.network.iter().filter(|x| *x == e).count()
            };
            let answers: Vec<(u8, u8)> = after
                .network
                .iter()
                .filter(|e| count(after, e) > count(state, e))
                .filter_map(|e| match e.msg {
                    Message::Locked { asked, granted, .. } => Some((asked, granted)),
                    _ => None,
                })
                .collect();
            match env.msg {
                Message::LockBatch { .. } if answers.is_empty() => {
                    // Not taken (a dead connection, a stopped broker).
                    assert!(calls.is_empty(), "{action:?}");
                }
                Message::LockBatch { queues, .. } => {
                    let [(asked, granted)] = answers[..] else {
                        panic!("{action:?}: {answers:?}");
                    };
                    assert_eq!(asked, queues);
                    // A renewal of a lock the broker holds for it shows nothing.
                    let Peer::Consumer(c) = env.src else {
                        panic!("{env:?}")
                    };
                    let held = |q: usize| {
                        state.brokers[0].memory.locks.holder(q)
                            == Some(cfg.lock_key(usize::from(c)))
                    };
                    let news: Vec<usize> = members_of(u64::from(queues))
                        .filter(|&q| !held(q))
                        .collect();
                    renewals += queues.count_ones() as usize - news.len();
                    assert_eq!(calls.len(), news.len(), "{action:?}: {seen:?}");
                    for (o, &q) in calls.iter().zip(&news) {
                        let want = granted & 1 << q != 0;
                        assert!(
                            matches!(o, Observed::Locked { queue, granted, .. } if *queue == locked_name(cfg, q) && *granted == want),
                            "{o:?}"
                        );
                        if want {
                            grants += 1
                        } else {
                            refusals += 1
                        }
                    }
                }
                _ => assert!(calls.is_empty(), "{action:?}: {seen:?}"),
            }
            next
        });
        assert!(
            grants > 0 && refusals > 0 && renewals > 0,
            "{grants} {refusals} {renewals}"
        );
    }

    /// A run of the model whose lock call a broker answers conforms to its
    /// own observations, and not once the trace is said not to show lock
    /// calls: no step of the model then shows the answer.
    #[test]
    fn a_lock_call_the_trace_does_not_show_is_no_step_of_the_model_that_shows_one() {
        use crate::conform::{conform, Bounds, End, Unseen, Verdict};
        let sizes = Sizes {
            queues: 2,
            ..Sizes::default()
        };
        let model = RebalanceModel::new(
            orderly(sizes)
                .and_then(Config::cold_started)
                .expect("valid"),
        );
        let cfg = &*model.cfg;
        // Breadth first to the first answered lock call, each node with
        // the observations of its path.
        let init = model.init_states()[0].clone();
        let (_, shown) = initial_observables(cfg, &init);
        let mut queue = VecDeque::from([(init, shown, Vec::new())]);
        let mut visited = HashSet::new();
        let mut actions = Vec::new();
        let observed = loop {
            let (state, shown, seen) = queue.pop_front().expect("a lock call within reach");
            if !visited.insert(crate::search::fingerprint(&state)) {
                continue;
            }
            actions.clear();
            model.actions(&state, &mut actions);
            let found = actions.iter().find_map(|action| {
                let after = model.next_state(&state, *action)?;
                let mut next = shown.clone();
                let mut seen = seen.clone();
                seen.extend(changes(cfg, &state, Some(action), &after, &mut next));
                if seen.iter().any(|o| matches!(o, Observed::Locked { .. })) {
                    return Some(seen);
                }
                queue.push_back((after, next, seen));
                None
            });
            if let Some(seen) = found {
                break seen;
            }
        };
        // Ten milliseconds apart: in their order.
        let observations: Vec<Observation> = observed
            .into_iter()
            .enumerate()
            .map(|(i, what)| Observation {
                what,
                t: i as u64 * 10_000_000,
                line: i + 1,
            })
            .collect();
        let verdict = |unseen: &Unseen| {
            conform(&model, &observations, Bounds::default(), End::Open, unseen).verdict
        };
        assert_eq!(verdict(&Unseen::default()), Verdict::Conforms);
        let hidden = Unseen {
            lock_calls: true,
            ..Unseen::default()
        };
        assert_ne!(verdict(&hidden), Verdict::Conforms);
        let of_client = Unseen {
            lock_calls_of: vec![
                cfg.consumers[0].client_id.clone(),
                cfg.consumers[1].client_id.clone(),
            ],
            ..Unseen::default()
        };
        assert_ne!(verdict(&of_client), Verdict::Conforms);
    }

    /// A failover is observed at the step that spends it, and no other
    /// step shows one; once spent, it is no step again.
    #[test]
    fn a_failover_is_observed_where_the_broker_fails_over() {
        let sizes = Sizes {
            queues: 1,
            failovers: 1,
            ..Sizes::default()
        };
        let model = RebalanceModel::new(orderly(sizes).expect("valid"));
        let cfg = &*model.cfg;
        let mut failovers = 0;
        each_step(&model, 5_000, |state, shown, action, after| {
            let mut next = shown.clone();
            let seen = changes(cfg, state, Some(&action), after, &mut next);
            let failed_over = seen.contains(&Observed::FailedOver {
                broker: "broker-a".into(),
            });
            let is_failover = action == Action::Fault(Peer::Broker(0), Fault::Failover);
            assert_eq!(failed_over, is_failover, "{action:?}: {seen:?}");
            if failed_over {
                failovers += 1;
                let mut later = Vec::new();
                model.actions(after, &mut later);
                assert!(!later.contains(&action), "a second failover");
            }
            next
        });
        assert!(failovers > 0);
    }

    /// A failover that changes nothing of the system (no lock, no
    /// message) is no step of a check, but a step, and observed, where a
    /// trace is validated: the trace sees it.
    #[test]
    fn a_failover_that_changes_nothing_is_a_step_only_under_observation() {
        let avg: Arc<dyn rocketmq_rebalance::AllocateStrategy> =
            Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            brokers: 1,
            queues: 1,
            failovers: 1,
            ..Sizes::default()
        };
        let failover = Action::Fault(Peer::Broker(0), Fault::Failover);
        for observed in [false, true] {
            let cfg = Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg.clone())
                .expect("valid")
                .with_every_failover_a_step(observed);
            let model = RebalanceModel::new(cfg);
            let init = model.init_states()[0].clone();
            let after = model.next_state(&init, failover);
            assert_eq!(after.is_some(), observed);
            if let Some(after) = after {
                let (_, mut shown) = initial_observables(&model.cfg, &init);
                assert_eq!(
                    changes(&model.cfg, &init, Some(&failover), &after, &mut shown),
                    [Observed::FailedOver {
                        broker: "broker-a".into()
                    }]
                );
            }
        }
    }

    /// The batch `consumer` begins of queue `q` (`broker-a:0`) of the
    /// model's first topic.
    fn batch(cfg: &Config, consumer: usize, q: usize) -> Observed {
        delivery(cfg, consumer, q, None)
    }

    /// [`batch`], of a FIFO delivery of the message at `offset` if some.
    fn delivery(cfg: &Config, consumer: usize, q: usize, offset: Option<u8>) -> Observed {
        Observed::Consumes {
            consumer: cfg.consumers[consumer].name.clone(),
            topic: cfg.topic_names[0].clone(),
            queue: queue_names(cfg, 0, 1 << q).remove(0),
            offset,
        }
    }

    /// A FIFO delivery names its message's offset: had exactly where a
    /// batch of its queue is had and the consumer runs one holding that
    /// offset.
    #[test]
    fn a_fifo_delivery_is_had_where_a_running_batch_holds_its_offset() {
        let model = RebalanceModel::new(crate::protocol::broker::pop::tests::config_of(true));
        let cfg = &*model.cfg;
        let mut running = 0;
        each_step(&model, 20_000, |state, shown, action, after| {
            let mut next = shown.clone();
            changes(cfg, state, Some(&action), after, &mut next);
            for (c, consumer) in after.consumers.iter().enumerate() {
                for q in 0..cfg.queues.len() {
                    let pq = &consumer.queues[q];
                    let queue_held = has(cfg, after, &next, &batch(cfg, c, q));
                    for o in 0..cfg.sizes.messages as u8 {
                        let delivery = delivery(cfg, c, q, Some(o));
                        let holds = pq.running() && (pq.from..pq.to).contains(&o);
                        assert_eq!(has(cfg, after, &next, &delivery), queue_held && holds);
                        running += usize::from(queue_held && holds);
                    }
                }
            }
            next
        });
        assert!(running > 0);
    }

    /// A batch's start is had by exactly the states where its consumer
    /// runs and holds the queue with its offset read, in the table the
    /// trace last showed: never a queue of another, never one whose offset
    /// read is in flight, never one its round has not shown yet, never a
    /// consumer or queue the model lacks. A POP batch, which names a whole
    /// broker (`broker-a:-1`), is had where one of its queues would be.
    #[test]
    fn a_batch_is_had_where_its_consumer_holds_its_queue_with_its_offset_read() {
        let model = cold_start();
        let cfg = &*model.cfg;
        let (mut held, mut reading) = (0, 0);
        each_step(&model, 20_000, |state, shown, action, after| {
            let mut next = shown.clone();
            changes(cfg, state, Some(&action), after, &mut next);
            for (c, consumer) in after.consumers.iter().enumerate() {
                for broker in &cfg.broker_names {
                    let whole = Observed::Consumes {
                        consumer: cfg.consumers[c].name.clone(),
                        topic: cfg.topic_names[0].clone(),
                        queue: format!("{broker}:-1"),
                        offset: None,
                    };
                    let any = (0..cfg.queues.len())
                        .filter(|&q| cfg.queues[q].mq.broker_name == *broker)
                        .any(|q| has(cfg, after, &next, &batch(cfg, c, q)));
                    assert_eq!(has(cfg, after, &next, &whole), any);
                }
                for q in 0..cfg.queues.len() {
                    let running = consumer.phase == Phase::Running;
                    let owned = consumer.owned & 1 << q != 0;
                    let read = !consumer.queues[q].reading_offset;
                    let in_shown = next.0[c] & 1 << q != 0;
                    let batch = batch(cfg, c, q);
                    assert_eq!(
                        has(cfg, after, &next, &batch),
                        running && owned && read && in_shown
                    );
                    held += usize::from(running && owned && read && in_shown);
                    reading += usize::from(running && owned && !read);
                }
            }
            next
        });
        assert!(held > 0 && reading > 0);
        let init = model.init_states()[0].clone();
        let ghost = Observed::Consumes {
            consumer: "c9".into(),
            topic: cfg.topic_names[0].clone(),
            queue: "broker-a:0".into(),
            offset: None,
        };
        let (_, shown) = initial_observables(cfg, &init);
        assert!(!has(cfg, &init, &shown, &ghost));
        assert!(impossible(cfg, &ghost).is_some());
        let elsewhere = Observed::Consumes {
            consumer: cfg.consumers[0].name.clone(),
            topic: cfg.topic_names[0].clone(),
            queue: "broker-z:0".into(),
            offset: None,
        };
        assert!(impossible(cfg, &elsewhere).is_some());
        assert_eq!(impossible(cfg, &batch(cfg, 0, 0)), None);
        assert!(batch(cfg, 0, 0).is_check());
        assert!(!Observed::Started {
            consumer: "c1".into()
        }
        .is_check());
    }

    /// Consuming orderly, a queue held without a lock the consumer trusts
    /// (its renewal failed and its lease ran out) has no batch begun.
    #[test]
    fn an_orderly_batch_is_had_only_under_a_lock_its_consumer_trusts() {
        let sizes = Sizes {
            failed_locks: 1,
            ..Sizes::default()
        };
        let model = RebalanceModel::new(orderly(sizes).expect("valid"));
        let cfg = &*model.cfg;
        let validity = cfg.orderly().expect("orderly").validity;
        let (mut trusted, mut distrusted) = (0, 0);
        each_step(&model, 20_000, |state, shown, action, after| {
            let mut next = shown.clone();
            changes(cfg, state, Some(&action), after, &mut next);
            for (c, consumer) in after.consumers.iter().enumerate() {
                for q in members_of(consumer.owned) {
                    let shown_held = next.0[c] & 1 << q != 0;
                    if consumer.phase != Phase::Running
                        || consumer.queues[q].reading_offset
                        || !shown_held
                    {
                        continue;
                    }
                    let trusts = consumer.queues[q].lock_trusted(validity);
                    assert_eq!(has(cfg, after, &next, &batch(cfg, c, q)), trusts);
                    trusted += usize::from(trusts);
                    distrusted += usize::from(!trusts);
                }
            }
            next
        });
        assert!(trusted > 0 && distrusted > 0, "{trusted} {distrusted}");
    }

    /// A batch is decided before any search when no table the trace shows
    /// of its consumer around it (within the window, or the last before
    /// it) has its queue, or its consumer died or restarted since.
    #[test]
    fn a_batch_no_table_shown_around_it_has_is_unheld() {
        let model = cold_start();
        let cfg = &*model.cfg;
        let at = |t: u64, what: Observed| Observation {
            what,
            t,
            line: t as usize,
        };
        let owns = |queues: &[&str]| Observed::Owns {
            consumer: "c1".into(),
            topic: cfg.topic_names[0].clone(),
            queues: queues.iter().map(|q| q.to_string()).collect(),
        };
        let a0 = batch(cfg, 0, 0);
        let b0 = batch(cfg, 0, 1);
        let started = Observed::Started {
            consumer: "c1".into(),
        };
        let died = Observed::Died {
            consumer: "c1".into(),
        };
        let nothing = Shown::nothing(cfg);
        let unheld_at = |observations: &[Observation]| {
            unheld(cfg, &nothing, observations, 0, 10).map(|(i, _)| i)
        };
        // Held since its table showed it.
        let held = [
            at(0, started.clone()),
            at(5, owns(&["broker-a:0"])),
            at(100, a0.clone()),
        ];
        assert_eq!(unheld_at(&held), None);
        // Another queue, or one given up long before.
        let other = [
            at(0, started.clone()),
            at(5, owns(&["broker-a:0"])),
            at(100, b0.clone()),
        ];
        assert_eq!(unheld_at(&other), Some(2));
        let gone = [
            at(5, owns(&["broker-a:0"])),
            at(50, owns(&[])),
            at(100, a0.clone()),
        ];
        assert_eq!(unheld_at(&gone), Some(2));
        // Given up or given within the window: either side of the change.
        let racing = [
            at(5, owns(&["broker-a:0"])),
            at(95, owns(&[])),
            at(100, a0.clone()),
        ];
        assert_eq!(unheld_at(&racing), None);
        let early = [at(100, a0.clone()), at(105, owns(&["broker-a:0"]))];
        assert_eq!(unheld_at(&early), None);
        let too_early = [at(100, a0.clone()), at(111, owns(&["broker-a:0"]))];
        assert_eq!(unheld_at(&too_early), Some(0));
        // A POP batch of a whole broker: held through any of its queues.
        let whole = |broker: &str| Observed::Consumes {
            consumer: "c1".into(),
            topic: cfg.topic_names[0].clone(),
            queue: format!("{broker}:-1"),
            offset: None,
        };
        let popped = [at(5, owns(&["broker-a:0"])), at(100, whole("broker-a"))];
        assert_eq!(unheld_at(&popped), None);
        let other_broker = [at(5, owns(&["broker-a:0"])), at(100, whole("broker-b"))];
        assert_eq!(unheld_at(&other_broker), Some(1));
        // A death empties the table; before `start`, the initial tables.
        let dead = [
            at(5, owns(&["broker-a:0"])),
            at(50, died),
            at(100, a0.clone()),
        ];
        assert_eq!(unheld_at(&dead), Some(2));
        let init = model.init_states()[0].clone();
        let (_, shown) = initial_observables(cfg, &init);
        assert_eq!(shown.0, nothing.0, "a cold start shows no table");
        let mut settled = nothing.clone();
        settled.0[0] = 1;
        assert_eq!(unheld(cfg, &settled, &[at(100, a0)], 0, 10), None);
    }
}
