//! The translator from a real trace to the model's observations
//! ([`Observation`]), the input of trace validation (`rebalance conform`).
//!
//! Its rules, each for a gap between what RocketMQ records and what the
//! model has:
//!
//! - **Names.** The run's topics, in the topology's order, are the model's
//!   topics in its order; the group's retry topic is the model's when it
//!   models one and is left out otherwise. A member's client id is what
//!   follows `@` (`127.0.0.1@c1` is `c1`), as the model names clients.
//! - **No-ops are dropped.** A broker's member table is observed when it
//!   changes (the periodic `REGISTER` of a known channel changes nothing);
//!   a consumer's queues of a topic when `messageQueueChanged` gives a new
//!   set.
//! - **Life.** `c.life starting` is the start; `c.life stopping` a graceful
//!   shutdown (the model's leave starts there, before it unregisters); the
//!   orchestrator's `kill`, or a `stop` (`SIGSTOP`) followed by neither
//!   `cont` nor `kill`, the process's death. A `stop` followed by `cont` is
//!   a pause the model sees only through what the brokers do (their expiry
//!   of it), so it is no observation of its own.
//! - **A stopping broker** lists nobody: its member table is lost (the
//!   unregistrations of its channels as it closes them, one by one, are
//!   that loss, not changes of their own), until it has started again. A
//!   broker that stops for good (scale-in: the model's leaving broker stays
//!   up off the route) is no longer observed.
//! - **Allocations** are not observations: each `c.alloc` is checked on
//!   its own against the crate (`rebalance_allocate` on the consumer's own
//!   inputs), since the model's consumers call the same function.
//!
//! Before any model, [`causality`] checks what the trace says of its own
//! order (each process's numbering and stamps, lives, answers and
//! requests, listings and heartbeats): a contradiction is a mismatch for
//! certain.

use std::collections::BTreeMap;

pub mod causality;

use crate::trace::{
    expired_entry, stop_ends, ClusterSpec, ConsumerState, Detail, Env, Event, GroupEvent, Kind,
    RequestCode, RuleAction, ServerState,
};
use causality::Contradiction;
use rocketmq_rebalance::conformance::{CallResult, Case};
use rocketmq_rebalance::{rebalance_allocate, MessageQueue, SortOrder};
use rocketmq_rebalance_model::{
    build_model,
    configuration::Config,
    configuration::Fault,
    validation::{
        conform, fault_name, Bounds, Conformance, End, Observation, Observed, Unseen, Verdict,
    },
    RebalanceModel,
};

/// A trace in the model's terms.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The observations, in the trace's order.
    pub observations: Vec<Observation>,
    /// `c.alloc` events checked against the crate.
    pub allocations: usize,
    /// Each allocation whose result differs from the crate's.
    pub allocation_mismatches: Vec<AllocationMismatch>,
    /// Each distinct allocation, as a client-level conformance case with
    /// the real consumer's result (the format of `tests/data`).
    pub cases: Vec<Case>,
    /// Where the trace contradicts itself ([`causality`]): a mismatch
    /// whatever the model.
    pub contradictions: Vec<Contradiction>,
    /// Each rule of the translator (this module's) that read an event
    /// otherwise than as it stands, with the lines it read so, in the
    /// order each first fired.
    pub rules_fired: Vec<RuleFired>,
    /// What the trace does not show: the brokers it no longer observes at
    /// its end (each stopped and never started again), and the lock calls
    /// when it names their queues without topics.
    pub unseen: Unseen,
    /// The order in which the run's consumers take their topics in a
    /// round, as the model's topic indices ([`subscription_order`]):
    /// the model validating the trace takes them so.
    pub round_order: Vec<u8>,
}

/// A translator rule that fired, and where.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RuleFired {
    /// The rule, in words.
    pub rule: &'static str,
    /// The trace lines (from 1) it read so.
    pub lines: Vec<usize>,
}

/// A stop followed by a kill.
const STOP_THEN_KILL: &str = "a stop followed by a kill is one death, at the kill";
/// A stop followed by a continue.
const PAUSE: &str = "a stop followed by a continue is a pause, observed only through the brokers";
/// A stop followed by nothing.
const STOP_FOR_GOOD: &str = "a stop never resumed is a death";
/// An expiry reported before its removal.
const LISTED_BEFORE_REMOVAL: &str = "a CLIENT_UNREGISTER that lists its client as often as the \
    broker's last listing did is the expiry scan's, which calls the listener before it removes the \
    channel: the table is the one the removal leaves";
/// The close of a channel the expiry scan reported.
const CLOSED_AS_SCANNED: &str = "a CLIENT_UNREGISTER of a channel the expiry scan has reported is \
    the channel's close, whose event removed the entry before the scan did: it lists the table \
    after the removal";
/// An expired channel registered again before its close.
const EXPIRED_CHANNEL_REGISTERS: &str = "a heartbeat already read from a channel the expiry scan \
    closed registers that channel again until its close removes it: the model's expired channel \
    takes no call, so that entry is left out of the tables observed meanwhile";
/// A queue change a frozen round records once the consumer continues.
const FROZEN_ROUND: &str = "a queue change a consumer's thread records first after a continue, \
    its previous event before the stop, is the round the stop froze, which had set its table \
    before: observed at the stop";
/// A stopping broker's unregistrations.
const STOPPING_BROKER: &str = "a stopping broker lists nobody until it has started again";
/// A broker that stops for good.
const BROKER_GONE: &str = "a broker that stops and never starts again is no longer observed";
/// A shutting-down consumer's last rebalance round.
const LAST_ROUND: &str = "a queue change between a consumer's stopping and stopped is its last \
     rebalance round's, which the shutdown's destroy discards (the model's leave is one step)";
/// A fault met during a consumer's shutdown.
const FAULT_IN_SHUTDOWN: &str = "a fault a consumer meets between its stopping and stopped (its \
     shutdown's persist lost) is observed with its shutdown (the model's leave is one step)";
/// A fault rule that is none of the model's faults.
const NO_MODEL_FAULT: &str = "a rule that fired and makes none of the model's faults a trace \
     can see is not observed";
/// A queue change recorded before the harness traced the table.
const ALLOCATION_AS_TABLE: &str = "a queue change without its table (a trace recorded before the \
     harness traced it) is read as its allocation: the two differ only where a lock was refused, \
     an offset read failed or a removal waits for its batch";
/// A gRPC client: the proxy's assignment.
const GRPC_EVERY_QUEUE: &str = "a gRPC client of the proxy (a FIFO group's consumer, or a POP \
    group's with --pop-client grpc) is given every queue of the run's topics, whatever the \
    members: its table, from its start";

/// A POP consumer's assignment of a whole broker.
const POP_WHOLE_BROKER: &str = "a POP consumer's queue `broker:-1` (the broker's assignment of \
     every queue it has, at the default popShareQueueNum) is each queue the broker has of the topic";
/// A batch begun while its consumer shuts down.
const BATCH_IN_SHUTDOWN: &str = "a batch begun between a consumer's stopping and stopped is not \
     checked: Java's consuming threads run the batches already handed to them while the shutdown \
     waits for them, where the model's consumer stops running when its leave begins";
/// The run's topic order in a round.
const ROUND_ORDER: &str = "a consumer's round takes its topics in the order Java iterates its \
     subscription table (a ConcurrentHashMap: by the names' hashes), here not the model's topic \
     order";
/// The retry topic of a model without one.
const RETRY_LEFT_OUT: &str = "the group's retry topic is left out of a model without one";
/// A lock call whose queues have no topic.
const LOCK_WITHOUT_TOPIC: &str = "a lock call that names its queues without their topics (a trace \
     recorded before the harness named them `TOPIC@broker:id`) is not observed: one batch holds \
     every topic's queues of a broker";
/// A lock renewal that changes no holder.
const SAME_RENEWAL: &str = "a lock renewal (`lockAll`, from a `ConsumeMessageScheduledThread_`) \
     answered exactly as the same client's last lock call to that broker is not observed: 5.x \
     renews from two services each period (`ConsumeMessageOrderlyService`'s and \
     `ConsumeMessagePopOrderlyService`'s), and a fixed-rate scheduler held past its period runs \
     again at once, where the model renews once a period; such a renewal changes no holder, only \
     the leases' age";
/// A renewal of a lock the trace saw granted.
const RENEWAL: &str = "a lock granted to the client the trace last saw hold it at that broker (no \
     stop, failover, refusal or unlock of it since) renews it, which changes no holder, only the \
     lease's age: not observed, as the model's renewal of a lock its broker holds is silent";
/// A lock call of a client with a second channel.
const LOCK_OF_A_CLIENT_LISTED_TWICE: &str = "a lock call of a client some broker lists twice (a \
     second channel) is not observed: the model's second channel registers right after the \
     heartbeat of the connection it comes with, before any later call of its client, where a \
     real one is opened by a call racing that heartbeat and may register after the client's next \
     calls on the first";
/// A lock call a broker's rule failed.
const LOCK_FAILED: &str = "a lock call a rule at the broker fails is refused every queue it asks \
     (the rule stands in for a variant's refusal of locks, `lock-grace-after-start`)";
/// A lock call from a channel with no client yet.
const LOCK_BY_REQUEST: &str = "a lock call on a channel whose client the broker does not know yet \
     (it came before the client's heartbeat there) is the client's whose request of that id and \
     those queues to that broker came last before it";

/// Where a harness rule fires.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hook {
    /// A consumer's `RPCHook`: its requests, and the notifications it gets.
    Client,
    /// A broker's server `RPCHook`: the requests it gets.
    Broker,
    /// A consumer's message listener: a fault there makes the application
    /// fail the batch (code 0, no request).
    Listener,
}

/// The model's faults that harness rules make (`cluster/faults/`): where
/// the rule fires, on which request, what it does, and the fault, which
/// the consumer concerned meets there.
const RULE_FAULTS: [(Hook, RequestCode, RuleAction, Fault); 7] = [
    (
        Hook::Client,
        RequestCode::NOTIFY_CONSUMER_IDS_CHANGED,
        RuleAction::Drop,
        Fault::LoseNotification,
    ),
    (
        Hook::Client,
        RequestCode::GET_CONSUMER_LIST_BY_GROUP,
        RuleAction::Fail,
        Fault::FailQuery,
    ),
    (
        Hook::Client,
        RequestCode::QUERY_CONSUMER_OFFSET,
        RuleAction::Fail,
        Fault::FailOffsetRead,
    ),
    (
        Hook::Client,
        RequestCode::UNLOCK_BATCH_MQ,
        RuleAction::Drop,
        Fault::LoseUnlock,
    ),
    (
        Hook::Broker,
        RequestCode::UPDATE_CONSUMER_OFFSET,
        RuleAction::Fail,
        Fault::LosePersist,
    ),
    (
        Hook::Broker,
        RequestCode::UPDATE_CONSUMER_OFFSET,
        RuleAction::Drop,
        Fault::LosePersist,
    ),
    (
        Hook::Listener,
        RequestCode::NONE,
        RuleAction::Fail,
        Fault::FailConsume,
    ),
];

/// The model's fault that a rule that fired (`c.fault`, `b.fault`) makes,
/// if it makes one.
pub fn rule_fault(kind: &Kind) -> Option<Fault> {
    let (hook, code, action) = match kind {
        Kind::ConsumerFault { code, action, .. } if *code == RequestCode::NONE => {
            (Hook::Listener, *code, *action)
        }
        Kind::ConsumerFault { code, action, .. } => (Hook::Client, *code, *action),
        Kind::BrokerFault { code, action, .. } => (Hook::Broker, *code, *action),
        _ => return None,
    };
    RULE_FAULTS
        .iter()
        .find(|(h, c, a, _)| (*h, *c, *a) == (hook, code, action))
        .map(|&(.., fault)| fault)
}

/// A real allocation the crate computes otherwise.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AllocationMismatch {
    /// The trace line (from 1).
    pub line: usize,
    /// The consumer.
    pub consumer: String,
    /// What the real consumer took.
    pub real: Vec<String>,
    /// What the crate gives on the same inputs.
    pub crate_result: Vec<String>,
}

/// The client id as the model names it: what follows `@`.
fn client_name(id: &str) -> String {
    id.rsplit_once('@').map_or(id, |(_, name)| name).to_owned()
}

/// The consumer whose client id is `client` (`127.0.0.1@c1`) in the
/// model, the first of those that share it; else the name in the id, which
/// no consumer of the model has.
fn consumer_named(cfg: &Config, client: &str) -> String {
    let id = client_name(client);
    cfg.consumers
        .iter()
        .find(|c| c.client_id == id)
        .map_or(id, |c| c.name.clone())
}

fn parse_queue(topic: &str, queue: &str) -> Option<MessageQueue> {
    let (broker, id) = queue.rsplit_once(':')?;
    Some(MessageQueue::new(topic, broker, id.parse().ok()?))
}

/// Where the runs of the model that explain a trace start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// From nothing: every consumer of the model joins during the run
    /// ([`Config::cold_started`]), as a real run's consumers start one by
    /// one on a fresh cluster, so every observation is explained, from the
    /// first start on.
    #[default]
    Cold,
    /// From the scenario's group, registered and balanced: the
    /// observations up to the first point where the trace shows that group
    /// are a warm-up, which is not checked (`--from-settled`).
    Settled,
}

/// Trace validation of a whole run: its translation, the model it was
/// validated against, and the answer.
pub struct Validation {
    /// Where the model's runs started.
    pub start: Start,
    /// How the trace ended, which the model's run must match.
    pub end: End,
    /// The trace in the model's terms.
    pub translation: Translation,
    /// The model, which has the periodic rebalance: a real consumer
    /// rebalances every 20 s whatever happens, and may ask another broker
    /// each time.
    pub model: RebalanceModel,
    /// Whether the trace is a behaviour of it.
    pub conformance: Conformance,
}

impl Validation {
    /// The trace is a behaviour of the model, every allocation in it the
    /// crate's, and it contradicts itself nowhere.
    pub fn conforms(&self) -> bool {
        self.conformance.verdict == Verdict::Conforms && self.translation.refutes().is_none()
    }
}

impl Translation {
    /// The line of the first thing the trace shows that no run of any
    /// model could, found without a search: a contradiction, or an
    /// allocation that is not the crate's.
    pub fn refutes(&self) -> Option<usize> {
        let contradiction = self.contradictions.first().map(|c| c.line);
        let allocation = self.allocation_mismatches.first().map(|m| m.line);
        contradiction.into_iter().chain(allocation).min()
    }
}

/// How a trace ends, as its run's `end` event says: at rest if the run
/// ended settled; open if it did not, or if the trace has no `end` (cut
/// short, or written before runs recorded their end).
pub fn trace_end(events: &[Event]) -> End {
    let settled = events.iter().rev().find_map(|e| match e.kind {
        Kind::End { settled, .. } => Some(settled),
        _ => None,
    });
    if settled == Some(true) {
        End::AtRest
    } else {
        End::Open
    }
}

/// Validates `events` (a whole run) against `cfg`'s model, its runs
/// started as `start` says and ending as `end` says.
pub fn validate(
    events: &[Event],
    cfg: Config,
    bounds: Bounds,
    start: Start,
    end: End,
) -> Result<Validation, String> {
    let cfg = match start {
        Start::Cold => cfg
            .cold_started()
            .map_err(|e| format!("the model started cold: {e}"))?,
        Start::Settled => cfg,
    };
    let translation = translate(events, &cfg)?;
    // Every failover the trace shows is a step of the model's.
    let model = build_model(
        cfg.with_periodic_rebalance(true)
            .with_every_failover_a_step(true)
            .with_round_order(translation.round_order.clone())
            .map_err(|e| format!("the run's topic order: {e}"))?,
    );
    let conformance = conform(
        &model,
        &translation.observations,
        bounds,
        end,
        &translation.unseen,
    );
    Ok(Validation {
        start,
        end,
        translation,
        model,
        conformance,
    })
}

/// The order in which Java iterates a `ConcurrentHashMap` of a few keys,
/// `names` in the order they were put (as indices into `names`): by bin of
/// the default table of 16 (the spread `String.hashCode`'s low bits), and
/// within a bin in insertion order. Such a map resizes only past 12 keys,
/// more than a model has topics.
pub fn subscription_order(names: &[&str]) -> Vec<usize> {
    let bin = |name: &str| {
        let hash = name.encode_utf16().fold(0u32, |h, unit| {
            h.wrapping_mul(31).wrapping_add(u32::from(unit))
        });
        // `spread`'s sign mask clears a bit the 16 bins never read.
        (hash ^ (hash >> 16)) & 15
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| bin(names[i]));
    order
}

/// The model's name of a real topic a consumer's event names (`topics`):
/// none for the group's retry topic in a model without one (a rule that
/// fired), the topic itself for any other the model lacks, observed as it
/// is for no state of the model to have.
fn model_topic<'a>(
    topics: &'a BTreeMap<String, String>,
    retry_topic: &str,
    topic: &'a String,
    rules: &mut Vec<RuleFired>,
    line: usize,
) -> Option<&'a String> {
    match topics.get(topic) {
        Some(model) => Some(model),
        None if topic == retry_topic => {
            fired(rules, RETRY_LEFT_OUT, line);
            None
        }
        None => Some(topic),
    }
}

/// Records that `rule` read the event of `line`.
fn fired(rules: &mut Vec<RuleFired>, rule: &'static str, line: usize) {
    match rules.iter_mut().find(|r| r.rule == rule) {
        Some(r) => r.lines.push(line),
        None => rules.push(RuleFired {
            rule,
            lines: vec![line],
        }),
    }
}

/// Whether the model restarts its brokers as the run does: a restart with
/// a downtime is a stop, calls refused while it lasts, and a start, which
/// the model has only when its restarts stop first (`--restart-stops`); a
/// restart of no downtime is either.
fn check_restarts(events: &[Event], cfg: &Config) -> Result<(), String> {
    let downtime = events.iter().enumerate().find_map(|(i, e)| match &e.kind {
        Kind::Env {
            action:
                Env::RestartBroker {
                    broker,
                    downtime_ms,
                },
        } if *downtime_ms > 0 => Some((i + 1, broker, downtime_ms)),
        _ => None,
    });
    match downtime {
        Some((line, broker, ms)) if !cfg.protocol.restart_stops => Err(format!(
            "line {line}: {broker} restarts with a downtime of {ms} ms, and the model's \
             restart is one step: validate the run against a model with --restart-stops"
        )),
        _ => Ok(()),
    }
}

/// Whether a trace restarts a broker with a downtime: its model then needs
/// restarts that stop first (`--restart-stops`).
pub fn restarts_with_downtime(events: &[Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            &e.kind,
            Kind::Env {
                action: Env::RestartBroker { downtime_ms, .. }
            } if *downtime_ms > 0
        )
    })
}

/// Whether the run's sizes are the model's: its brokers at the start, each
/// topic's queues on each, its consumers.
fn check_sizes(spec: &ClusterSpec, events: &[Event], cfg: &Config) -> Result<(), String> {
    let brokers = spec.brokers.iter().filter(|b| !b.late).count();
    let queues: Vec<usize> = spec.topics.iter().map(|t| t.queues as usize).collect();
    let mut consumers: Vec<&str> = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                Kind::ConsumerLife {
                    state: ConsumerState::Ready,
                    ..
                }
            )
        })
        .map(|e| e.p.as_str())
        .collect();
    consumers.dedup();
    same_sizes(brokers, &queues, consumers.len(), cfg)
}

/// Whether a run of `brokers` brokers at the start, each topic with these
/// queues on each, and `consumers` consumers has the sizes of `cfg`'s
/// model: trace validation needs them equal.
pub fn same_sizes(
    brokers: usize,
    queues: &[usize],
    consumers: usize,
    cfg: &Config,
) -> Result<(), String> {
    let sizes = &cfg.sizes;
    let differ = |what: &str, real: usize, model: usize| {
        format!("the run has {real} {what}, the model {model}: give the model the run's sizes")
    };
    if brokers != sizes.brokers {
        return Err(differ("brokers", brokers, sizes.brokers));
    }
    if let Some(&q) = queues.iter().find(|&&q| q != sizes.queues) {
        return Err(differ("queues a broker", q, sizes.queues));
    }
    if consumers != sizes.consumers {
        return Err(differ("consumers", consumers, sizes.consumers));
    }
    Ok(())
}

/// Turns `events` (a whole trace, as `trace::parse` reads it) into the
/// observations of `cfg`'s model. An error names what the trace lacks.
pub fn translate(events: &[Event], cfg: &Config) -> Result<Translation, String> {
    let spec = events
        .iter()
        .find_map(|e| match &e.kind {
            Kind::Topology { spec, .. } => Some(spec),
            _ => None,
        })
        .ok_or("no `topology` event: the trace does not say what ran")?;
    let group = spec.group.as_str();
    let real_topics: Vec<&str> = spec.topics.iter().map(|t| t.name.as_str()).collect();
    let business = cfg.sizes.topics;
    if real_topics.len() != business {
        return Err(format!(
            "the trace has {} topics ({}), the model {business}",
            real_topics.len(),
            real_topics.join(", ")
        ));
    }
    check_sizes(spec, events, cfg)?;
    check_restarts(events, cfg)?;
    // A topic of the model's name is that topic; the others pair up in
    // order.
    let mut unnamed = cfg.topic_names[..business]
        .iter()
        .filter(|m| !real_topics.contains(&m.as_str()));
    let mut topics: BTreeMap<String, String> = real_topics
        .iter()
        .map(|real| {
            let model = if cfg.topic_names[..business].iter().any(|m| m == real) {
                real.to_string()
            } else {
                unnamed.next().cloned().unwrap_or_default()
            };
            (real.to_string(), model)
        })
        .collect();
    // A FIFO group's run, and one of gRPC clients of a proxy (a FIFO
    // group's always are; a trace recorded before the file said so names
    // only the FIFO group).
    let flag = |key: &str| spec.file.get(key).and_then(serde_json::Value::as_bool) == Some(true);
    let fifo = flag("fifo");
    let proxied = fifo || flag("grpc");
    let clients = |grpc: bool| {
        if grpc {
            "gRPC clients"
        } else {
            "remoting clients"
        }
    };
    if proxied != cfg.protocol.grpc_clients() {
        return Err(format!(
            "the run's consumers are {} and the model's are {}: give the model the run's client \
             (--pop-client)",
            clients(proxied),
            clients(cfg.protocol.grpc_clients())
        ));
    }
    let retry_topic = format!("%RETRY%{group}");
    if cfg.protocol.retry_topic {
        topics.insert(retry_topic.clone(), cfg.topic_names[business].clone());
    }
    // A consumer subscribes to the run's topics, then at its start to the
    // retry topic (`copySubscription`): that is the table's insertion order.
    let subscribed: Vec<&str> = real_topics
        .iter()
        .copied()
        .chain(std::iter::once(retry_topic.as_str()))
        .collect();
    let round_order: Vec<u8> = subscription_order(&subscribed)
        .into_iter()
        .filter_map(|i| topics.get(subscribed[i]))
        .filter_map(|model| cfg.topic_names.iter().position(|m| m == model))
        .map(|t| t as u8)
        .collect();
    // A broker that stops and never starts again leaves for good (scale-in):
    // its table is no longer anyone's, so it is no longer observed.
    let starts_again = |i: usize, broker: &str| {
        events[i + 1..].iter().any(|e| match &e.kind {
            Kind::BrokerLife {
                broker: b,
                state: ServerState::Started,
                ..
            } => b == broker,
            _ => false,
        })
    };

    let mut out = Translation {
        observations: Vec::new(),
        allocations: 0,
        allocation_mismatches: Vec::new(),
        cases: Vec::new(),
        contradictions: causality::contradictions(events),
        rules_fired: Vec::new(),
        unseen: Unseen::default(),
        round_order,
    };
    out.unseen.members = proxied;
    if out.round_order.windows(2).any(|w| w[0] > w[1]) {
        let topology = events
            .iter()
            .position(|e| matches!(e.kind, Kind::Topology { .. }));
        fired(
            &mut out.rules_fired,
            ROUND_ORDER,
            topology.map_or(0, |i| i + 1),
        );
    }

    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut owns: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // Each topic's queues on each broker, as the topology starts them and
    // route steps change them: what a POP assignment of a whole broker is.
    let mut broker_queues: BTreeMap<(String, String), u64> = spec
        .topics
        .iter()
        .flat_map(|t| {
            spec.brokers
                .iter()
                .map(move |b| ((b.name.clone(), t.name.clone()), t.queues))
        })
        .collect();
    // Brokers shutting down: each closed channel is unregistered on the
    // way, one by one, but the whole table is lost.
    let mut stopping: Vec<&str> = Vec::new();
    // Consumers shutting down: the rebalance thread may still finish a
    // round (`RebalanceService` stops only in `MQClientInstance.shutdown`),
    // and `rebalanceImpl.destroy()` then drops its table.
    let mut leaving: Vec<&str> = Vec::new();
    // Each consumer's lock and unlock requests (`c.req`), by its process
    // and the request's id, with their line index.
    let requests: BTreeMap<(&str, i64), (usize, &Event)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.kind {
            Kind::ConsumerRequest {
                code: RequestCode::LOCK_BATCH_MQ | RequestCode::UNLOCK_BATCH_MQ,
                opaque,
                ..
            } => Some(((e.p.as_str(), opaque), (i, e))),
            _ => None,
        })
        .collect();
    // The queues of each lock call a broker took, until it answers: by
    // broker, client and the call's id.
    let mut lock_calls: BTreeMap<(String, String, i64), Vec<String>> = BTreeMap::new();
    // Clients a broker lists twice (a second channel): their lock calls
    // are not observed.
    let twice: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::Member { members, .. } => Some(members),
            _ => None,
        })
        .flat_map(|members| {
            members
                .iter()
                .filter(|m| members.iter().filter(|n| n == m).count() > 1)
                .map(|m| client_name(m))
                .collect::<Vec<_>>()
        })
        .collect();
    for client in twice {
        if !out.unseen.lock_calls_of.contains(&client) {
            out.unseen.lock_calls_of.push(client);
        }
    }
    // The client each broker last locked each queue for, as far as the
    // trace shows: until a refusal, an unlock, a stop or a failover.
    let mut holders: BTreeMap<(String, String), String> = BTreeMap::new();
    // Channels (broker, address) the expiry scan removed, and by broker the
    // address and client of the one a heartbeat read before its close
    // registered again, until that close.
    let mut expired: Vec<(String, Option<String>)> = Vec::new();
    let mut reopened: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
    // The last lock call each broker answered each client: its queues and
    // those granted.
    let mut last_lock: BTreeMap<(String, String), (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let line = i + 1;
        let mut seen = Vec::new();
        let mut observe = |what: Observed| seen.push(what);
        match &e.kind {
            Kind::Member {
                broker,
                kind,
                client,
                addr,
                members: listed,
            } => {
                if stopping.contains(&broker.as_str()) {
                    fired(&mut out.rules_fired, STOPPING_BROKER, line);
                    continue;
                }
                // One entry a channel: a client listed twice is observed
                // so, and the model explains it only with a second channel.
                let mut clients: Vec<String> = listed.iter().map(|c| client_name(c)).collect();
                clients.sort();
                let channel = (broker.clone(), addr.clone());
                let named = client.as_deref().map(client_name);
                if let (GroupEvent::ClientRegister, Some(c)) = (kind, &named) {
                    if addr.is_some() && expired.contains(&channel) {
                        reopened.insert(broker.clone(), (addr.clone(), c.clone()));
                    } else if reopened
                        .get(broker)
                        .is_some_and(|(open, again)| again == c && open != addr)
                    {
                        // A new channel of the client: the expired one's
                        // entry is gone (its heartbeat found it still there,
                        // and the scan removed it without an event).
                        reopened.remove(broker);
                    }
                }
                if let Some((open, again)) = reopened.get(broker).cloned() {
                    fired(&mut out.rules_fired, EXPIRED_CHANNEL_REGISTERS, line);
                    if *kind == GroupEvent::ClientUnregister && open == *addr {
                        // Its close, reported after the removal: the
                        // channel is gone, and its port free for another.
                        reopened.remove(broker);
                        expired.retain(|c| *c != channel);
                    } else if let Some(at) = clients.iter().position(|c| *c == again) {
                        clients.remove(at);
                    }
                } else if let (GroupEvent::ClientUnregister, Some(gone)) = (kind, named) {
                    let last = members.get(broker).map(Vec::as_slice);
                    if addr.is_some() && expired.contains(&channel) {
                        // The scan closes the channel before it removes the
                        // entry: the close's event may remove it first, and
                        // reports the table after the removal.
                        fired(&mut out.rules_fired, CLOSED_AS_SCANNED, line);
                        expired.retain(|c| *c != channel);
                    } else if let Some(at) = expired_entry(&clients, &gone, last) {
                        fired(&mut out.rules_fired, LISTED_BEFORE_REMOVAL, line);
                        clients.remove(at);
                        expired.push(channel);
                    }
                }
                if members.get(broker) != Some(&clients) {
                    members.insert(broker.clone(), clients.clone());
                    observe(Observed::Members {
                        broker: broker.clone(),
                        clients,
                    });
                }
            }
            // Its table is live again from `start()` on.
            Kind::BrokerLife {
                broker,
                state: ServerState::Starting | ServerState::Started,
                ..
            } => {
                stopping.retain(|b| b != broker);
            }
            Kind::BrokerLife {
                broker,
                state: ServerState::Stopping,
                ..
            } => {
                holders.retain(|(b, _), _| b != broker);
                // A stop closes every channel.
                expired.retain(|(b, _)| b != broker);
                reopened.remove(broker);
                stopping.push(broker);
                if !starts_again(i, broker) {
                    fired(&mut out.rules_fired, BROKER_GONE, line);
                    out.unseen.at_end.push(broker.clone());
                } else if members.get(broker).is_some_and(|m| !m.is_empty()) {
                    members.insert(broker.clone(), Vec::new());
                    observe(Observed::Members {
                        broker: broker.clone(),
                        clients: Vec::new(),
                    });
                }
            }
            Kind::Route {
                broker,
                topic,
                queues,
            } => {
                broker_queues.insert((broker.clone(), topic.clone()), *queues);
            }
            Kind::QueuesChanged { .. } if leaving.contains(&e.p.as_str()) => {
                fired(&mut out.rules_fired, LAST_ROUND, line);
            }
            Kind::QueuesChanged {
                topic,
                divided,
                table,
            } => {
                let real_topic = topic.clone();
                let Some(topic) =
                    model_topic(&topics, &retry_topic, topic, &mut out.rules_fired, line)
                else {
                    continue;
                };
                let real = table.clone().unwrap_or_else(|| {
                    fired(&mut out.rules_fired, ALLOCATION_AS_TABLE, line);
                    divided.clone()
                });
                let mut queues = Vec::new();
                for q in real {
                    match q.strip_suffix(":-1") {
                        Some(broker) => {
                            fired(&mut out.rules_fired, POP_WHOLE_BROKER, line);
                            let key = (broker.to_owned(), real_topic.clone());
                            let n = broker_queues.get(&key).copied().unwrap_or_default();
                            queues.extend((0..n).map(|i| format!("{broker}:{i}")));
                        }
                        None => queues.push(q),
                    }
                }
                queues.sort();
                let key = (e.p.clone(), topic.clone());
                if owns.get(&key).map_or(!queues.is_empty(), |q| *q != queues) {
                    owns.insert(key, queues.clone());
                    observe(Observed::Owns {
                        consumer: e.p.clone(),
                        topic: topic.clone(),
                        queues,
                    });
                }
            }
            Kind::ConsumeBegin { .. } if leaving.contains(&e.p.as_str()) => {
                fired(&mut out.rules_fired, BATCH_IN_SHUTDOWN, line);
            }
            Kind::ConsumeBegin {
                topic,
                queue,
                offsets,
                ..
            } => {
                let Some(topic) =
                    model_topic(&topics, &retry_topic, topic, &mut out.rules_fired, line)
                else {
                    continue;
                };
                // A FIFO message is popped at its place: its offset is the
                // model's (a fresh queue's, from 0), so its batch is checked
                // by it. A gRPC client delivers one message at a time.
                let offset = if fifo {
                    let first = offsets
                        .first()
                        .and_then(|&o| u8::try_from(o).ok())
                        .filter(|&o| usize::from(o) < cfg.sizes.messages);
                    if first.is_none() {
                        return Err(format!(
                            "line {line}: a FIFO delivery of offset {offsets:?}, where the model \
                             has {} messages a queue: give the model the run's messages \
                             (--messages)",
                            cfg.sizes.messages
                        ));
                    }
                    first
                } else {
                    None
                };
                observe(Observed::Consumes {
                    consumer: e.p.clone(),
                    topic: topic.clone(),
                    queue: queue.clone(),
                    offset,
                });
            }
            // A heartbeat read from a channel the scan has reported
            // registers it again when the scan's removal came first; a
            // listing may show that entry before its registration's event.
            Kind::BrokerRequest {
                broker,
                code: RequestCode::HEART_BEAT,
                client: Some(client),
                addr,
                ..
            } => {
                let channel = (broker.clone(), Some(format!("/{addr}")));
                if expired.contains(&channel) {
                    reopened.insert(broker.clone(), (channel.1, client_name(client)));
                }
            }
            Kind::BrokerRequest {
                broker,
                code: code @ (RequestCode::LOCK_BATCH_MQ | RequestCode::UNLOCK_BATCH_MQ),
                client,
                opaque,
                queues: Some(names),
                ..
            } => {
                let client = match client {
                    Some(client) => client_name(client),
                    None => {
                        fired(&mut out.rules_fired, LOCK_BY_REQUEST, line);
                        let name = requester(&requests, i, broker, *code, *opaque, names);
                        cfg.consumers
                            .iter()
                            .find(|c| c.name == name)
                            .map_or(name, |c| c.client_id.clone())
                    }
                };
                if out.unseen.lock_calls_of.contains(&client) {
                    fired(&mut out.rules_fired, LOCK_OF_A_CLIENT_LISTED_TWICE, line);
                    continue;
                }
                let Some(queues) =
                    lock_queues(names, &topics, &retry_topic, &mut out.rules_fired, line)
                else {
                    out.unseen.lock_calls = true;
                    continue;
                };
                if *code == RequestCode::LOCK_BATCH_MQ {
                    lock_calls.insert((broker.clone(), client, *opaque), queues);
                } else {
                    // An unlock is not observed (the model's is sent at
                    // the end of its round), but it ends a hold.
                    for queue in queues {
                        let key = (broker.clone(), queue);
                        if holders.get(&key) == Some(&client) {
                            holders.remove(&key);
                        }
                    }
                }
            }
            Kind::BrokerResponse {
                broker,
                code: RequestCode::LOCK_BATCH_MQ,
                opaque,
                ..
            }
            | Kind::BrokerFault {
                broker,
                code: RequestCode::LOCK_BATCH_MQ,
                opaque,
                action: RuleAction::Fail,
                ..
            } => {
                // A rule that fails the call grants nothing.
                let detail = match &e.kind {
                    Kind::BrokerResponse { detail, .. } => detail.as_ref(),
                    _ => {
                        fired(&mut out.rules_fired, LOCK_FAILED, line);
                        None
                    }
                };
                // Its request's client: the channel's may be known by now.
                let call = lock_calls
                    .keys()
                    .find(|(b, _, o)| b == broker && o == opaque)
                    .cloned();
                let Some((asked, client)) =
                    call.and_then(|key| Some((lock_calls.remove(&key)?, key.1)))
                else {
                    continue;
                };
                let names = detail.map_or(&[][..], Detail::names);
                let granted = lock_queues(names, &topics, &retry_topic, &mut out.rules_fired, line)
                    .unwrap_or_default();
                let key = (broker.clone(), client.clone());
                let answer = (asked.clone(), granted.clone());
                let same = last_lock.insert(key, answer.clone()) == Some(answer)
                    && renewal(&requests, cfg, &client, *opaque);
                if same {
                    fired(&mut out.rules_fired, SAME_RENEWAL, line);
                    continue;
                }
                for queue in asked {
                    let key = (broker.clone(), queue.clone());
                    let granted = granted.contains(&queue);
                    if granted && holders.get(&key) == Some(&client) {
                        fired(&mut out.rules_fired, RENEWAL, line);
                        continue;
                    }
                    if granted {
                        holders.insert(key, client.clone());
                    } else if holders.get(&key) == Some(&client) {
                        holders.remove(&key);
                    }
                    observe(Observed::Locked {
                        client: client.clone(),
                        broker: broker.clone(),
                        granted,
                        queue,
                    });
                }
            }
            Kind::ConsumerFault { .. } | Kind::BrokerFault { .. } => {
                // The consumer it concerns: the one whose hook fired, or
                // the client on the broker's channel.
                let consumer = match &e.kind {
                    Kind::BrokerFault { client, .. } => {
                        client.as_deref().map(|c| consumer_named(cfg, c))
                    }
                    _ => Some(e.p.clone()),
                };
                match (rule_fault(&e.kind), consumer) {
                    (Some(fault), Some(consumer)) => observe(Observed::Faulted {
                        consumer,
                        fault: fault_name(fault).to_owned(),
                    }),
                    _ => fired(&mut out.rules_fired, NO_MODEL_FAULT, line),
                }
            }
            Kind::ConsumerLife { state, .. } => {
                let consumer = e.p.clone();
                match state {
                    ConsumerState::Starting => observe(Observed::Started { consumer }),
                    ConsumerState::Started if proxied => {
                        fired(&mut out.rules_fired, GRPC_EVERY_QUEUE, line);
                        for real_topic in &real_topics {
                            let topic = real_topic.to_string();
                            let Some(model) = topics.get(&topic) else {
                                continue;
                            };
                            let mut queues: Vec<String> = broker_queues
                                .iter()
                                .filter(|((_, t), _)| *t == topic)
                                .flat_map(|((b, _), &n)| (0..n).map(move |i| format!("{b}:{i}")))
                                .collect();
                            queues.sort();
                            owns.insert((e.p.clone(), model.clone()), queues.clone());
                            observe(Observed::Owns {
                                consumer: e.p.clone(),
                                topic: model.clone(),
                                queues,
                            });
                        }
                    }
                    // The model's leave starts with it: the consumer is no
                    // longer running while it unregisters.
                    ConsumerState::Stopping => {
                        owns.retain(|(c, _), _| *c != e.p);
                        leaving.push(&e.p);
                        observe(Observed::ShutDown { consumer })
                    }
                    ConsumerState::Stopped => leaving.retain(|c| *c != e.p),
                    _ => {}
                }
            }
            Kind::Env {
                action: Env::FailOver { broker },
            } => {
                // The slave serves with no lock table.
                holders.retain(|(b, _), _| b != broker);
                observe(Observed::FailedOver {
                    broker: broker.clone(),
                });
            }
            Kind::Env { action } => {
                let died = match action {
                    Env::Kill { consumer } => Some(consumer),
                    Env::Stop { consumer } => match stop_ends(events, i, consumer) {
                        None => {
                            fired(&mut out.rules_fired, STOP_FOR_GOOD, line);
                            Some(consumer)
                        }
                        Some(ended) => {
                            let rule = if ended { STOP_THEN_KILL } else { PAUSE };
                            fired(&mut out.rules_fired, rule, line);
                            None
                        }
                    },
                    _ => None,
                };
                if let Some(consumer) = died {
                    owns.retain(|(c, _), _| c != consumer);
                    observe(Observed::Died {
                        consumer: consumer.clone(),
                    });
                }
            }
            Kind::Alloc {
                topic: Some(topic),
                cid,
                mq_all,
                cid_all,
                result,
            } => {
                out.allocations += 1;
                let queues: Vec<MessageQueue> = mq_all
                    .iter()
                    .filter_map(|q| parse_queue(topic, q))
                    .collect();
                let indices: Vec<usize> = result
                    .iter()
                    .filter_map(|r| {
                        let mq = parse_queue(topic, r)?;
                        queues.iter().position(|q| *q == mq)
                    })
                    .collect();
                let case = Case {
                    strategy: cfg.strategy.name().to_owned(),
                    sort: true,
                    // The harness's consumers are the Java client.
                    order: SortOrder::Java,
                    virtual_nodes: None,
                    consumer_idcs: None,
                    queues: queues.clone(),
                    consumers: cid_all.clone(),
                    results: vec![CallResult::expect_queues(cid, indices)],
                };
                if !out.cases.contains(&case) {
                    out.cases.push(case);
                }
                let mut real = result.clone();
                real.sort();
                let mut computed: Vec<String> =
                    rebalance_allocate(&*cfg.strategy, group, cid, &queues, cid_all)
                        .map(|qs| {
                            qs.iter()
                                .map(|q| format!("{}:{}", q.broker_name, q.queue_id))
                                .collect()
                        })
                        .unwrap_or_default();
                computed.sort();
                if computed != real {
                    out.allocation_mismatches.push(AllocationMismatch {
                        line,
                        consumer: e.p.clone(),
                        real,
                        crate_result: computed,
                    });
                }
            }
            _ => {}
        }
        // A round frozen by a stop recorded its table after the continue
        // (the harness records it after the round's heartbeats).
        let frozen = match e.kind {
            Kind::QueuesChanged { .. } => frozen_round(events, i),
            _ => None,
        };
        for what in seen {
            if let (Some(stop), Observed::Owns { .. }) = (frozen, &what) {
                fired(&mut out.rules_fired, FROZEN_ROUND, line);
                let at = out
                    .observations
                    .iter()
                    .position(|o| o.line > stop + 1)
                    .unwrap_or(out.observations.len());
                let t = events[stop].t;
                out.observations.insert(at, Observation { what, t, line });
                continue;
            }
            // The model's leave is one step: what the consumer meets on its way
            // out follows its shutdown at once.
            let shutdown = match &what {
                Observed::Faulted { consumer, .. } if leaving.contains(&consumer.as_str()) => {
                    out.observations.iter().rposition(|o| {
                        o.what
                            == Observed::ShutDown {
                                consumer: consumer.clone(),
                            }
                    })
                }
                _ => None,
            };
            match shutdown {
                Some(at) => {
                    fired(&mut out.rules_fired, FAULT_IN_SHUTDOWN, line);
                    let t = out.observations[at].t;
                    let after = out.observations[at + 1..]
                        .iter()
                        .take_while(|o| matches!(o.what, Observed::Faulted { .. }) && o.t == t)
                        .count();
                    out.observations
                        .insert(at + 1 + after, Observation { what, t, line });
                }
                None => out.observations.push(Observation { what, t: e.t, line }),
            }
        }
    }
    Ok(out)
}

/// The index of the stop that froze the round whose queue change is
/// `events[i]`: the first event its thread records after the consumer was
/// continued, the thread's previous event coming before that stop.
fn frozen_round(events: &[Event], i: usize) -> Option<usize> {
    let e = &events[i];
    let of = |x: &Event, stop: bool| match &x.kind {
        Kind::Env {
            action: Env::Stop { consumer },
        } if stop => *consumer == e.p,
        Kind::Env {
            action: Env::Cont { consumer },
        } if !stop => *consumer == e.p,
        _ => false,
    };
    let before = events[..i]
        .iter()
        .rposition(|x| x.p == e.p && x.thr == e.thr)?;
    let cont = before + events[before..i].iter().position(|x| of(x, false))?;
    Some(before + events[before..cont].iter().rposition(|x| of(x, true))?)
}

/// A consumer's lock and unlock requests, by its process and the
/// request's id: the line index and the event.
type LockRequests<'a> = BTreeMap<(&'a str, i64), (usize, &'a Event)>;

/// The client whose request (`c.req`) of `code` with id `opaque` and
/// `queues` to `broker` came last before line index `before`: a call the
/// broker took on a channel it knows no client of yet: the consumer's
/// name, else none.
fn requester(
    requests: &LockRequests,
    before: usize,
    broker: &str,
    code: RequestCode,
    opaque: i64,
    queues: &[String],
) -> String {
    requests
        .values()
        .filter(|(i, e)| {
            *i < before
                && matches!(&e.kind, Kind::ConsumerRequest {
                    code: c,
                    opaque: o,
                    peer,
                    queues: Some(q),
                    ..
                } if *c == code && *o == opaque && peer == broker && q == queues)
        })
        .max_by_key(|(i, _)| *i)
        .map(|(_, e)| e.p.clone())
        .unwrap_or_default()
}

/// Whether the lock call `opaque` of `client` is a renewal: its request
/// came from a consumer's `ConsumeMessageScheduledThread_`, where both
/// orderly services run `lockMQPeriodically`.
fn renewal(requests: &LockRequests, cfg: &Config, client: &str, opaque: i64) -> bool {
    let process = consumer_named(cfg, client);
    requests
        .get(&(process.as_str(), opaque))
        .is_some_and(|(_, e)| e.thr.starts_with("ConsumeMessageScheduledThread_"))
}

/// The queues a lock call names (`TOPIC@broker:id`), as the model names
/// them: its topic the model's, the retry topic left out of a model
/// without one, a topic the model lacks kept for no state to have. None
/// when they have no topic (a trace recorded before the harness named
/// it), which the rule says.
fn lock_queues(
    names: &[String],
    topics: &BTreeMap<String, String>,
    retry_topic: &str,
    rules: &mut Vec<RuleFired>,
    line: usize,
) -> Option<Vec<String>> {
    let mut queues = Vec::new();
    for name in names {
        let Some((topic, queue)) = name.split_once('@') else {
            fired(rules, LOCK_WITHOUT_TOPIC, line);
            return None;
        };
        match topics.get(topic) {
            Some(model) => queues.push(format!("{model}@{queue}")),
            None if topic == retry_topic => fired(rules, RETRY_LEFT_OUT, line),
            None => queues.push(name.clone()),
        }
    }
    Some(queues)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocketmq_rebalance_model::validation::observable_fault;

    /// Java's iteration order of a subscription table, as the recorded
    /// runs show it: each round of `graceful-shutdown` allocates the retry
    /// topic first, each of `healthy` last, and `subscription-flap`'s
    /// `TopicB` comes before `TopicTest`; names in one bin keep the order
    /// they were put in.
    #[test]
    fn a_round_takes_its_topics_as_java_iterates_its_subscriptions() {
        let order = |names: &[&str]| subscription_order(names);
        assert_eq!(
            order(&["TopicTest", "%RETRY%rebalance-graceful-shutdown"]),
            [1, 0]
        );
        assert_eq!(order(&["TopicTest", "%RETRY%rebalance-healthy"]), [0, 1]);
        assert_eq!(
            order(&["TopicTest", "TopicB", "%RETRY%rebalance-subscription-flap"]),
            [1, 0, 2]
        );
        assert_eq!(order(&["TopicQ", "TopicA"]), [0, 1]);
        assert_eq!(order(&["TopicA", "TopicQ"]), [0, 1]);
    }

    /// Each fault a rule makes is one the model's observations name, by
    /// the same name: a rule no state could explain would refuse every
    /// run that fires it.
    #[test]
    fn every_fault_a_rule_makes_is_one_the_model_observes() {
        for &(.., fault) in &RULE_FAULTS {
            assert_eq!(
                observable_fault(fault_name(fault)),
                Some(fault),
                "{fault:?}"
            );
        }
    }

    /// The first two lines of a recorded orderly run (its `run` and its
    /// `topology`: two brokers of two queues, `c1` and `c2`), the model
    /// it is validated against, and the observations of `lines` after
    /// them, with the rules that fired.
    fn translated(lines: &[String]) -> (Translation, Vec<String>) {
        let recorded = include_str!("../tests/traces/fault-consume-failure-orderly.ndjson");
        let head: Vec<&str> = recorded.lines().take(2).collect();
        let starts = ["c1", "c2"].map(|c| {
            ["starting", "ready"]
                .map(|state| format!(
                    r#"{{"t":3,"p":"{c}","seq":0,"thr":"main","ev":"c.life","state":"{state}","client":"127.0.0.1@{c}","pid":1}}"#
                ))
                .join("\n")
        });
        let text = format!(
            "{}\n{}\n{}",
            head.join("\n"),
            starts.join("\n"),
            lines.join("\n")
        );
        let events = crate::trace::parse(&text).expect("a trace");
        let flags = [
            "--scenario",
            "healthy",
            "--consumers",
            "2",
            "--joins",
            "0",
            "--messages",
            "1",
            "--queues",
            "2",
            "--brokers",
            "2",
            "--orderly",
        ]
        .map(String::from);
        let cfg = rocketmq_rebalance_flags::ModelArgs::config_from(&flags).expect("valid flags");
        let out = translate(&events, &cfg).expect("translates");
        let seen = out
            .observations
            .iter()
            .filter(|o| !matches!(o.what, Observed::Started { .. }))
            .map(|o| o.what.to_string())
            .collect();
        (out, seen)
    }

    /// A lock call (41) or an unlock (42) the broker takes, from `c1`
    /// unless `client` is null, of `queues`; `ev` `b.req` or `b.resp`.
    fn call(t: u64, ev: &str, code: u32, client: &str, opaque: u32, queues: &str) -> String {
        let field = if ev == "b.req" { "queues" } else { "detail" };
        let addr = if ev == "b.req" {
            r#""addr":"127.0.0.1:1","#
        } else {
            ""
        };
        let status = if ev == "b.resp" { r#","status":0"# } else { "" };
        format!(
            r#"{{"t":{t},"p":"cluster","seq":{t},"thr":"x","ev":"{ev}",{addr}"broker":"broker-a","client":{client},"code":{code},"opaque":{opaque},"{field}":[{queues}]{status}}}"#
        )
    }

    /// Each queue of a lock call is observed where the broker answers it,
    /// granted or refused; a grant to the client the trace saw hold the
    /// lock is a renewal, not observed, until an unlock (itself not
    /// observed) ends that hold; a call a broker's rule fails is refused
    /// every queue; a call from a channel the broker knows no client of
    /// yet is its requester's.
    #[test]
    fn a_lock_call_is_observed_queue_by_queue_and_a_renewal_of_a_held_lock_is_not() {
        let c1 = r#""127.0.0.1@c1""#;
        let (a0, a1) = (r#""TopicTest@broker-a:0""#, r#""TopicTest@broker-a:1""#);
        let both = format!("{a0},{a1}");
        let lines = [
            call(10, "b.req", 41, c1, 1, &both),
            call(11, "b.resp", 41, c1, 1, a0),
            call(12, "b.req", 41, c1, 2, a0),
            call(13, "b.resp", 41, c1, 2, a0),
            call(14, "b.req", 41, c1, 3, a1),
            format!(
                r#"{{"t":15,"p":"cluster","seq":15,"thr":"x","ev":"b.fault","action":"fail","broker":"broker-a","client":{c1},"code":41,"opaque":3}}"#
            ),
            call(16, "b.req", 42, c1, 4, a0),
            r#"{"t":17,"p":"c2","seq":1,"thr":"RebalanceService","ev":"c.req","code":41,"opaque":5,"peer":"broker-a","queues":["TopicTest@broker-a:0"]}"#.to_owned(),
            call(18, "b.req", 41, "null", 5, a0),
            call(19, "b.resp", 41, r#""127.0.0.1@c2""#, 5, a0),
        ];
        let (out, seen) = translated(&lines);
        assert_eq!(
            seen,
            [
                "broker-a locks TopicA@broker-a:0 for c1",
                "broker-a refuses c1 the lock of TopicA@broker-a:1",
                "broker-a refuses c1 the lock of TopicA@broker-a:1",
                "broker-a locks TopicA@broker-a:0 for c2",
            ]
        );
        let fired = |rule: &str| out.rules_fired.iter().any(|r| r.rule == rule);
        assert!(fired(RENEWAL) && fired(LOCK_FAILED) && fired(LOCK_BY_REQUEST));
        assert!(!out.unseen.lock_calls);
    }

    /// `broker-a`'s `b.member` event of `kind` for `client`'s channel
    /// from port `addr`, listing `members`.
    fn member(t: u64, kind: &str, client: &str, addr: u16, members: &[&str]) -> String {
        let members: Vec<String> = members
            .iter()
            .map(|m| format!(r#""127.0.0.1@{m}""#))
            .collect();
        format!(
            r#"{{"t":{t},"p":"cluster","seq":{t},"thr":"x","ev":"b.member","broker":"broker-a","kind":"{kind}","client":"127.0.0.1@{client}","addr":"/127.0.0.1:{addr}","members":[{}]}}"#,
            members.join(",")
        )
    }

    /// The trace lines at which `rule` fired.
    fn rule_lines(out: &Translation, rule: &str) -> Vec<usize> {
        out.rules_fired
            .iter()
            .filter(|r| r.rule == rule)
            .flat_map(|r| r.lines.clone())
            .collect()
    }

    /// A broker's expiry scan reports the channel it removes before it
    /// removes it, so its `CLIENT_UNREGISTER` still lists the client: the
    /// table observed is the one the removal leaves, even when no later
    /// listing shows it (the client's heartbeat registered it again
    /// first). A close reports the table after the removal, as it is. A
    /// heartbeat read from the expired channel before its close registers
    /// it again until that close: the model's expired channel takes no
    /// call, so that entry is left out meanwhile, and the other clients'
    /// changes are observed.
    #[test]
    fn an_expiry_is_observed_as_the_table_it_leaves() {
        let lines = [
            member(10, "CLIENT_REGISTER", "c2", 2, &["c1", "c2"]),
            member(11, "CLIENT_UNREGISTER", "c1", 1, &["c1", "c2"]),
            member(12, "CLIENT_REGISTER", "c1", 3, &["c1", "c2"]),
            member(13, "CLIENT_UNREGISTER", "c1", 3, &["c2"]),
            // The scan expires channel 4; a heartbeat read from it
            // registers it again, and its close removes it.
            member(14, "CLIENT_REGISTER", "c1", 4, &["c1", "c2"]),
            member(15, "CLIENT_UNREGISTER", "c1", 4, &["c1", "c2"]),
            member(16, "CLIENT_REGISTER", "c1", 4, &["c1", "c2"]),
            // Meanwhile `c2`'s channel closes: the table left is observed.
            member(17, "CLIENT_UNREGISTER", "c2", 2, &["c1"]),
            member(18, "CLIENT_REGISTER", "c2", 6, &["c1", "c2"]),
            member(19, "CLIENT_UNREGISTER", "c1", 4, &["c2"]),
            member(20, "CLIENT_REGISTER", "c1", 5, &["c1", "c2"]),
            // A second channel of `c1` closes: it is still listed once.
            member(21, "CLIENT_REGISTER", "c1", 7, &["c1", "c1", "c2"]),
            member(22, "CLIENT_UNREGISTER", "c1", 7, &["c1", "c2"]),
        ];
        let (out, seen) = translated(&lines);
        assert_eq!(
            seen,
            [
                "broker-a lists [c1 c2]",
                "broker-a lists [c2]",
                "broker-a lists [c1 c2]",
                "broker-a lists [c2]",
                "broker-a lists [c1 c2]",
                "broker-a lists [c2]",
                "broker-a lists []",
                "broker-a lists [c2]",
                "broker-a lists [c1 c2]",
                "broker-a lists [c1 c1 c2]",
                "broker-a lists [c1 c2]",
            ]
        );
        let lines_of = |rule: &str| rule_lines(&out, rule);
        let first = lines_of(LISTED_BEFORE_REMOVAL)[0];
        assert_eq!(lines_of(LISTED_BEFORE_REMOVAL), [first, first + 4]);
        assert_eq!(
            lines_of(EXPIRED_CHANNEL_REGISTERS),
            [first + 5, first + 6, first + 7, first + 8]
        );
    }

    /// A heartbeat read from a channel the scan has reported registers it
    /// again when the scan's removal came first, and a listing may show
    /// that entry before the registration's own event: it is left out
    /// until the channel's close. When the heartbeat came before the
    /// removal, nothing registers it again and no close reports it: the
    /// client's new channel ends the rule. (Seen on the real cluster:
    /// seed 7's randomised run.)
    #[test]
    fn a_heartbeat_read_from_an_expired_channel_is_its_registration() {
        let heartbeat = |t: u64, addr: u16| {
            format!(
                r#"{{"t":{t},"p":"cluster","seq":{t},"thr":"x","ev":"b.req","broker":"broker-a","code":34,"client":"127.0.0.1@c1","addr":"127.0.0.1:{addr}","opaque":{t}}}"#
            )
        };
        let lines = [
            member(10, "CLIENT_REGISTER", "c1", 1, &["c1"]),
            member(11, "CLIENT_REGISTER", "c2", 2, &["c1", "c2"]),
            // The scan reports channel 1; a heartbeat is read from it, and
            // `c2`'s next heartbeat lists the entry it made again.
            member(12, "CLIENT_UNREGISTER", "c1", 1, &["c1", "c2"]),
            heartbeat(13, 1),
            member(14, "REGISTER", "c2", 2, &["c1", "c2"]),
            member(15, "CLIENT_UNREGISTER", "c1", 1, &["c2"]),
            member(16, "CLIENT_REGISTER", "c1", 1, &["c2"]),
            member(17, "CLIENT_REGISTER", "c1", 3, &["c1", "c2"]),
            // The scan reports channel 3 and removes it before the
            // heartbeat read from it: no close reports it.
            member(18, "CLIENT_UNREGISTER", "c1", 3, &["c1", "c2"]),
            heartbeat(19, 3),
            member(20, "CLIENT_REGISTER", "c1", 4, &["c1", "c2"]),
        ];
        let (out, seen) = translated(&lines);
        assert_eq!(
            seen,
            [
                "broker-a lists [c1]",
                "broker-a lists [c1 c2]",
                "broker-a lists [c2]",
                "broker-a lists [c1 c2]",
                "broker-a lists [c2]",
                "broker-a lists [c1 c2]",
            ]
        );
        let lines_of = |rule: &str| rule_lines(&out, rule);
        let first = lines_of(LISTED_BEFORE_REMOVAL)[0];
        assert_eq!(lines_of(LISTED_BEFORE_REMOVAL), [first, first + 6]);
        assert_eq!(lines_of(EXPIRED_CHANNEL_REGISTERS), [first + 2, first + 3]);
    }

    /// A channel the expiry scan removed is gone once its close is seen:
    /// a later connection from the same port (the system may give it out
    /// again) registers and closes as any other.
    #[test]
    fn a_port_reused_after_an_expired_channel_s_close_is_a_new_channel() {
        let member = |t: u64, kind: &str, members: &[&str]| member(t, kind, "c1", 1, members);
        let lines = [
            member(10, "CLIENT_REGISTER", &["c1"]),
            // The scan reports the channel it removes, then it closes.
            member(11, "CLIENT_UNREGISTER", &["c1"]),
            member(12, "CLIENT_UNREGISTER", &[]),
            // A new connection on the same port.
            member(13, "CLIENT_REGISTER", &["c1"]),
            member(14, "CLIENT_UNREGISTER", &[]),
        ];
        let (_, seen) = translated(&lines);
        assert_eq!(
            seen,
            [
                "broker-a lists [c1]",
                "broker-a lists []",
                "broker-a lists [c1]",
                "broker-a lists []",
            ]
        );
    }

    /// A round frozen by a stop records its table once the consumer
    /// continues (the harness records it after the round's heartbeats):
    /// observed at the stop, before what others did meanwhile. A round
    /// its thread begins after the continue is observed where it is.
    #[test]
    fn a_round_frozen_by_a_stop_is_observed_at_the_stop() {
        let env = |t: u64, action: &str| {
            format!(
                r#"{{"t":{t},"p":"orchestrator","seq":{t},"ev":"env","action":"{action}","consumer":"c1"}}"#
            )
        };
        let rebalance = |t: u64, ev: &str| {
            let fields = match ev {
                "c.req" => r#""code":38,"opaque":1,"peer":"broker-a""#,
                _ => r#""divided":["broker-a:0"],"table":["broker-a:0"],"topic":"TopicTest""#,
            };
            format!(
                r#"{{"t":{t},"p":"c1","seq":{t},"thr":"RebalanceService","ev":"{ev}",{fields}}}"#
            )
        };
        let frozen = [
            rebalance(9, "c.req"),
            member(10, "CLIENT_REGISTER", "c1", 1, &["c1"]),
            env(11, "stop"),
            member(12, "CLIENT_REGISTER", "c2", 2, &["c1", "c2"]),
            env(13, "cont"),
            rebalance(14, "c.mqchanged"),
        ];
        let (out, seen) = translated(&frozen);
        assert_eq!(
            seen,
            [
                "broker-a lists [c1]",
                "c1 consumes [broker-a:0] of TopicA",
                "broker-a lists [c1 c2]"
            ]
        );
        assert_eq!(rule_lines(&out, FROZEN_ROUND).len(), 1);
        let later = [
            env(11, "stop"),
            member(12, "CLIENT_REGISTER", "c2", 2, &["c2"]),
            env(13, "cont"),
            rebalance(14, "c.req"),
            rebalance(15, "c.mqchanged"),
        ];
        let (out, seen) = translated(&later);
        assert_eq!(
            seen,
            ["broker-a lists [c2]", "c1 consumes [broker-a:0] of TopicA"]
        );
        assert!(rule_lines(&out, FROZEN_ROUND).is_empty());
    }

    /// A trace that names locked queues without their topics (recorded
    /// before the harness named them) shows no lock call, and says so: the
    /// model's are then silent too.
    #[test]
    fn lock_calls_named_without_topics_are_unseen() {
        let c1 = r#""127.0.0.1@c1""#;
        let lines = [
            call(10, "b.req", 41, c1, 1, r#""broker-a:0""#),
            call(11, "b.resp", 41, c1, 1, r#""broker-a:0""#),
        ];
        let (out, seen) = translated(&lines);
        assert!(seen.is_empty(), "{seen:?}");
        assert!(out.unseen.lock_calls);
        assert!(out.rules_fired.iter().any(|r| r.rule == LOCK_WITHOUT_TOPIC));
    }

    /// A trace ends at rest only when its `end` event says so.
    #[test]
    fn a_trace_ends_at_rest_only_when_its_end_says_so() {
        let run = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","model":[],"orderly":false,"rocketmq":"5.3.3","scenario":"healthy","schema":2}"#;
        let ended = |settled: bool| {
            format!(r#"{{"t":2,"p":"orchestrator","seq":2,"ev":"end","settled":{settled}}}"#)
        };
        let end_of = |text: &str| trace_end(&crate::trace::parse(text).expect("a trace"));
        assert_eq!(end_of(run), End::Open);
        assert_eq!(end_of(&format!("{run}\n{}", ended(false))), End::Open);
        assert_eq!(end_of(&format!("{run}\n{}", ended(true))), End::AtRest);
    }

    /// A run of gRPC clients is validated against a model of gRPC
    /// clients only: the model's remoting clients, listed by the brokers
    /// and assigned by the members, are not what ran, and the reverse.
    #[test]
    fn a_run_and_its_model_run_the_same_client() {
        let recorded = include_str!("../tests/traces/grpc-pop-leave.ndjson");
        let events = crate::trace::parse(recorded).expect("a trace");
        let flags = |client: &str| {
            let flags = [
                "--scenario",
                "graceful-shutdown",
                "--consumption",
                "pop",
                "--pop-client",
                client,
                "--brokers",
                "1",
                "--queues",
                "1",
                "--consumers",
                "2",
                "--joins",
                "1",
                "--leaves",
                "1",
                "--messages",
                "1",
            ]
            .map(String::from);
            rocketmq_rebalance_flags::ModelArgs::config_from(&flags).expect("valid flags")
        };
        let out = translate(&events, &flags("grpc")).expect("translates");
        assert!(out.unseen.members);
        assert!(out.rules_fired.iter().any(|r| r.rule == GRPC_EVERY_QUEUE));
        let err = translate(&events, &flags("remoting"))
            .map(|_| ())
            .unwrap_err();
        assert!(
            err.contains("gRPC clients and the model's are remoting"),
            "{err}"
        );
        let recorded = include_str!("../tests/traces/pop-leave.ndjson");
        let events = crate::trace::parse(recorded).expect("a trace");
        let err = translate(&events, &flags("grpc")).map(|_| ()).unwrap_err();
        assert!(
            err.contains("remoting clients and the model's are gRPC"),
            "{err}"
        );
    }
}
