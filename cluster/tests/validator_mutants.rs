//! The validator's strength as a test: tampered copies of every recorded
//! trace (`tests/traces/`), each validated as `rebalance conform`
//! validates a trace, against the model its script validates it with (its
//! `conform` flags, as `recorded_traces.rs` judges it), within the default
//! bounds. A mutant is **refused** when the validator says
//! bad input (exit 2) or does not conform (exit 1); **accepted** when it
//! conforms; **undecided** when a bound was hit (exit 3), which counts as
//! not refused. Its score is the share of the non-equivalent mutants it
//! refuses.
//!
//! The kinds of mutant, each a change to the trace a skeptical reviewer
//! would try: one event dropped (the process's later `seq` renumbered, as
//! if it had never been emitted); two causally ordered events of one
//! process swapped (each keeping the other's stamp and `seq`); a queue of
//! one running consumer given to a second (its `c.mqchanged` lists it
//! too); a ghost member (a broker listing a client that does not exist, or
//! a consumer before it starts or after it died and was removed); a
//! consumer's start restamped after its own first queue change (moved to
//! its new stamp's place in the merged trace, its `seq` kept); a batch's
//! start moved to a queue another running consumer holds and its own
//! consumer does not; a truncation at a byte offset; a malformed line.
//!
//! An **equivalent** mutant is one a real run could produce, or one the
//! validator does not claim to see; each is classified by an explicit rule
//! of [`Equivalence`], argued where it is defined (and in `docs/spec.md`,
//! "The mutation suite"), and is not counted in the score. Mutants are
//! sampled deterministically (SplitMix64 seeded by the trace's name and
//! the kind), a fixed number of each kind a trace, so that the suite runs
//! in seconds: the same mutants every run.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Instant;

use rocketmq_rebalance::SplitMix64;
use rocketmq_rebalance_cluster::pipeline::{Plan, Source};
use rocketmq_rebalance_cluster::run::RunResult;
use rocketmq_rebalance_cluster::trace::{
    self, ConsumerState, Env, Event, GroupEvent, Kind, ServerState,
};
use rocketmq_rebalance_cluster::translate::causality::makes_a_fault;
use rocketmq_rebalance_cluster::translate::{rule_fault, translate, validate, Start};
use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{
    configuration::Config,
    validation::{Bounds, End, Verdict},
};

/// What was done to the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mutation {
    Drop,
    Swap,
    SecondOwner,
    Ghost,
    LateStart,
    StolenBatch,
    Truncation,
    Malformed,
}

impl Mutation {
    const ALL: [Mutation; 8] = [
        Mutation::Drop,
        Mutation::Swap,
        Mutation::SecondOwner,
        Mutation::Ghost,
        Mutation::LateStart,
        Mutation::StolenBatch,
        Mutation::Truncation,
        Mutation::Malformed,
    ];

    /// Mutants of this kind sampled from each trace.
    fn per_trace(self) -> usize {
        match self {
            Mutation::Drop => 14,
            Mutation::Swap => 6,
            Mutation::SecondOwner
            | Mutation::Ghost
            | Mutation::StolenBatch
            | Mutation::Truncation => 3,
            Mutation::LateStart | Mutation::Malformed => 2,
        }
    }
}

/// Why a mutant is one a real run could produce, or outside what the
/// validator claims to see: it is then not counted in the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Equivalence {
    /// The event dropped is of a kind the validator does not observe
    /// ([`UNOBSERVED`]): a batch's end, sends, notifications, rules, the name
    /// servers' requests; a gate's rule (one that fails or loses no
    /// call); or a fault that fired which makes none of the model's faults
    /// (`translate::rule_fault`). The spec lists them as the
    /// silent layer; what dropping one would show is outside what the
    /// validator claims, so these mutants measure nothing it promises
    /// (they are counted apart, so that the silent layer's size shows).
    Unobserved,
    /// The event dropped is a broker's member table equal to the one it
    /// listed last (`REGISTER`, a known channel's periodic heartbeat; a
    /// `CHANGE` of the subscriptions): it changes no member table, the
    /// only thing of it the validator observes, and the subscription
    /// table it reports is not modelled.
    RepeatedListing,
    /// The event dropped is an allocation that changed nothing (no
    /// `c.mqchanged` follows it before the consumer's next allocation of
    /// the topic): a periodic rebalance that gives the same share is no
    /// observable step of the model, and a run whose 20 s timer fired
    /// once fewer has one such allocation fewer.
    IdleAllocation,
    /// The event dropped is an answer: its request is then unanswered,
    /// which real runs show (one-way requests, 15 and 42, are never
    /// answered; a request whose connection closes, or whose process
    /// stops, is not either).
    LostAnswer,
    /// The event dropped is a batch's start, which the validator checks
    /// against the state it falls in and requires of no run: every run
    /// that explains the trace explains it with one check fewer.
    CheckDropped,
    /// The truncation falls on a line boundary, or the trace's last event
    /// is dropped: what is left is a prefix of the run, every event whole,
    /// and the trace has no end-of-run marker: a run stopped there (its
    /// orchestrator killed) writes the same file.
    Prefix,
}

/// Kinds the validator does not observe: see [`Equivalence::Unobserved`].
const UNOBSERVED: &[&str] = &[
    "ns.life",
    "ns.req",
    "ready",
    "nack",
    "failed",
    "c.notify",
    "c.consume.end",
    "c.consume.interrupted",
    "c.pick",
    "gate.passed",
    "p.sent",
    "p.failed",
    "relay",
    "b.route",
    "b.store",
    "b.disk",
    "snap",
    "await.timeout",
];

/// One tampered copy of a recorded trace.
struct Mutant {
    trace: String,
    mutation: Mutation,
    /// What was changed, for the report.
    what: String,
    text: String,
    equivalent: Option<Equivalence>,
}

/// What the validator said of a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    /// Bad input or a mismatch, and why.
    Refused(String),
    /// A bound was hit first.
    Undecided,
    Accepted,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Refused(why) => write!(f, "refused ({why})"),
            Answer::Undecided => f.write_str("undecided (a bound hit)"),
            Answer::Accepted => f.write_str("accepted"),
        }
    }
}

/// The script each recorded trace ran, as `recorded_traces.rs` judges it:
/// its `conform` flags are the model at the run's sizes (older runs did
/// not record them in their `run` event).
fn source(trace: &str) -> Source {
    let scenario = |name: &str, orderly| Source::Scenario {
        name: name.into(),
        orderly,
    };
    match trace {
        "harms-kill.ndjson" => Source::Harms("kill".into()),
        "cold-start-four.ndjson" => Source::Script(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/cold-start-four.json"),
        ),
        t if t.starts_with("random-") => Source::Random(
            t["random-".len()..]
                .split('-')
                .next()
                .and_then(|seed| seed.parse().ok())
                .expect("random-SEED-..."),
        ),
        t if t.starts_with("broker-restart-orderly") => scenario("broker-restart", true),
        t if t.starts_with("zombie-consumer") => scenario("zombie-consumer", false),
        t if t.starts_with("fault-") => Source::Script(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("faults")
                .join(t.trim_start_matches("fault-").replace(".ndjson", ".json")),
        ),
        t => scenario(t.trim_end_matches(".ndjson"), false),
    }
}

/// The model a recorded trace is validated against.
fn model_of(trace: &str) -> Config {
    let plan = Plan::load(&source(trace), false).expect("the trace's script");
    ModelArgs::config_from(plan.script.conform_flags()).expect("its conform flags")
}

/// How the recorded run `trace` ended: at rest or not, as its `end` event
/// says, or as the pipeline finds in a trace recorded before runs wrote
/// one.
fn recorded_end(trace: &str) -> End {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/traces")
        .join(trace);
    let text = std::fs::read_to_string(path).expect("a recorded trace");
    let events = trace::parse(&text).expect("a recorded trace parses");
    let plan = Plan::load(&source(trace), false).expect("the trace's script");
    if RunResult::recorded(&plan.script, events).settled {
        End::AtRest
    } else {
        End::Open
    }
}

/// How a mutant ends: as its real run did (`ends`, each trace's), except
/// that a cut trace has lost its end.
fn end_of(m: &Mutant, ends: &BTreeMap<String, End>) -> End {
    if m.mutation == Mutation::Truncation {
        End::Open
    } else {
        ends[&m.trace]
    }
}

/// Validates a trace's text against `cfg`, ending as `end` says, as
/// `rebalance conform` does.
fn judge(text: &str, cfg: Config, end: End) -> Answer {
    let events = match trace::parse(text) {
        Ok(events) => events,
        Err(e) => return Answer::Refused(format!("bad input: {e}")),
    };
    // What the translation refutes is refused whatever the search finds
    // (`rebalance conform` exits 1 on it before any bound): the search is
    // skipped for it, the answer is the same.
    match translate(&events, &cfg).map(|t| t.refutes()) {
        Err(e) => return Answer::Refused(format!("bad input: {e}")),
        Ok(Some(line)) => return Answer::Refused(format!("refuted at line {line}")),
        Ok(None) => {}
    }
    match validate(&events, cfg, Bounds::default(), Start::Cold, end) {
        Err(e) => Answer::Refused(format!("bad input: {e}")),
        Ok(v) if v.conforms() => Answer::Accepted,
        Ok(v) if v.conformance.verdict == Verdict::BoundHit => Answer::Undecided,
        Ok(v) => {
            let line = v
                .conformance
                .unexplained
                .and_then(|i| v.translation.observations.get(i))
                .map(|o| format!("line {}: {}", o.line, o.what));
            Answer::Refused(match (line, v.translation.allocation_mismatches.first()) {
                (_, Some(m)) => format!("line {}: an allocation not the crate's", m.line),
                (Some(line), None) => format!("unexplained {line}"),
                (None, None) => "does not conform".into(),
            })
        }
    }
}

fn text_of(events: &[Event]) -> String {
    events.iter().map(|e| e.to_line() + "\n").collect()
}

/// Moves the `seq` of `p`'s events from index `from` on by `delta`: what
/// its counter would have given had an event been emitted or not.
fn renumber(events: &mut [Event], from: usize, p: &str, delta: i64) {
    for e in events[from..].iter_mut().filter(|e| e.p == p) {
        e.seq = e.seq.saturating_add_signed(delta);
    }
}

/// A deterministic sample of `n` of `items`.
fn sample<T: Clone>(rng: &mut SplitMix64, items: &[T], n: usize) -> Vec<T> {
    let mut pool = items.to_vec();
    let mut out = Vec::new();
    while out.len() < n && !pool.is_empty() {
        let i = (rng.next_u64() % pool.len() as u64) as usize;
        out.push(pool.swap_remove(i));
    }
    out
}

fn seed(trace: &str, mutation: Mutation) -> u64 {
    // FNV-1a of the name and the kind: a stable seed per (trace, kind).
    format!("{trace}/{mutation:?}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The consumer a client id names (`127.0.0.1@c1` is `c1`).
fn consumer_of(client: &str) -> &str {
    client.rsplit_once('@').map_or(client, |(_, name)| name)
}

/// The consumer an event's death is of: a kill, a shutdown begun.
fn death(e: &Event) -> Option<&str> {
    match &e.kind {
        Kind::Env {
            action: Env::Kill { consumer },
        } => Some(consumer),
        Kind::ConsumerLife {
            state: ConsumerState::Stopping,
            ..
        } => Some(&e.p),
        _ => None,
    }
}

/// Which rule, if any, makes dropping event `i` an equivalent mutant.
fn drop_equivalence(events: &[Event], i: usize) -> Option<Equivalence> {
    let e = &events[i];
    match &e.kind {
        // The last line dropped is the trace cut there.
        _ if i + 1 == events.len() => Some(Equivalence::Prefix),
        _ if UNOBSERVED.contains(&e.ev()) => Some(Equivalence::Unobserved),
        Kind::ConsumeBegin { .. } => Some(Equivalence::CheckDropped),
        Kind::ConsumerFault { .. } | Kind::BrokerFault { .. } if rule_fault(&e.kind).is_none() => {
            Some(Equivalence::Unobserved)
        }
        Kind::Rule { .. } if makes_a_fault(&e.kind).is_none() => Some(Equivalence::Unobserved),
        Kind::Member {
            broker, members, ..
        } => {
            let last = events[..i].iter().rev().find_map(|x| match &x.kind {
                Kind::Member {
                    broker: b, members, ..
                } if b == broker => Some(members),
                _ => None,
            });
            (last == Some(members)).then_some(Equivalence::RepeatedListing)
        }
        Kind::Alloc {
            topic: Some(topic), ..
        } => {
            let changed =
                events[i + 1..]
                    .iter()
                    .filter(|x| x.p == e.p)
                    .find_map(|x| match &x.kind {
                        Kind::Alloc { topic: Some(t), .. } if t == topic => Some(false),
                        Kind::QueuesChanged { topic: t, .. } if t == topic => Some(true),
                        _ => None,
                    });
            (changed != Some(true)).then_some(Equivalence::IdleAllocation)
        }
        Kind::Alloc { topic: None, .. } => Some(Equivalence::IdleAllocation),
        Kind::ConsumerResponse { .. } | Kind::BrokerResponse { .. } => {
            Some(Equivalence::LostAnswer)
        }
        _ => None,
    }
}

fn drops(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    // Every event a candidate; sampled so that the observed kinds are not
    // drowned by the many requests and deliveries.
    let (observed, silent): (Vec<usize>, Vec<usize>) =
        (0..events.len()).partition(|&i| drop_equivalence(events, i).is_none());
    let n = Mutation::Drop.per_trace();
    let mut picked = sample(rng, &observed, n - n / 4);
    picked.extend(sample(rng, &silent, n / 4));
    // Every fault the model observes, too: there are few.
    let faults: Vec<usize> = (0..events.len())
        .filter(|&i| rule_fault(&events[i].kind).is_some() && !picked.contains(&i))
        .collect();
    picked.extend(faults);
    picked
        .into_iter()
        .map(|i| {
            let mut mutated = events.to_vec();
            let gone = mutated.remove(i);
            renumber(&mut mutated, i, &gone.p, -1);
            Mutant {
                trace: name.into(),
                mutation: Mutation::Drop,
                what: format!("line {} ({}) dropped", i + 1, gone.ev()),
                text: text_of(&mutated),
                equivalent: drop_equivalence(events, i),
            }
        })
        .collect()
}

/// Pairs (cause, effect) of one process: a request and its answer, an
/// allocation and the queue change it gave, a start and the consumer's
/// first queue change, a start and its return, a broker's stop begun and
/// done.
fn causal_pairs(events: &[Event]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let later = || {
            events
                .iter()
                .enumerate()
                .skip(i + 1)
                .filter(|(_, x)| x.p == e.p)
        };
        let effect = match &e.kind {
            Kind::ConsumerRequest {
                code, peer, opaque, ..
            } => later()
                .find(|(_, x)| {
                    matches!(&x.kind, Kind::ConsumerResponse { code: c, peer: p, opaque: o, .. }
                        if c == code && p == peer && o == opaque)
                })
                .map(|(j, _)| j),
            Kind::BrokerRequest {
                broker,
                code,
                opaque,
                ..
            } => later()
                .find(|(_, x)| {
                    matches!(&x.kind, Kind::BrokerResponse { broker: b, code: c, opaque: o, .. }
                        if b == broker && c == code && o == opaque)
                })
                .map(|(j, _)| j),
            Kind::Alloc {
                topic: Some(topic),
                result,
                ..
            } => later()
                .find_map(|(j, x)| match &x.kind {
                    Kind::Alloc { topic: Some(t), .. } if t == topic => Some(None),
                    Kind::QueuesChanged {
                        topic: t, divided, ..
                    } if t == topic => {
                        Some((divided == result).then_some(j))
                    }
                    _ => None,
                })
                .flatten(),
            Kind::ConsumerLife {
                state: ConsumerState::Starting,
                ..
            } => {
                if let Some((j, _)) = later().find(|(_, x)| {
                    matches!(
                        x.kind,
                        Kind::ConsumerLife {
                            state: ConsumerState::Started,
                            ..
                        }
                    )
                }) {
                    pairs.push((i, j));
                }
                later()
                    .find(|(_, x)| matches!(x.kind, Kind::QueuesChanged { .. }))
                    .map(|(j, _)| j)
            }
            Kind::BrokerLife {
                broker,
                state: ServerState::Stopping,
                ..
            } => later()
                .find(|(_, x)| {
                    matches!(&x.kind, Kind::BrokerLife { broker: b, state: ServerState::Stopped, .. }
                        if b == broker)
                })
                .map(|(j, _)| j),
            _ => None,
        };
        pairs.extend(effect.map(|j| (i, j)));
    }
    pairs
}

fn swaps(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    // Requests and answers are most of the pairs: half the sample from the
    // others, so that starts, allocations and stops are swapped too.
    let is_request = |&(i, _): &(usize, usize)| {
        matches!(
            events[i].kind,
            Kind::ConsumerRequest { .. } | Kind::BrokerRequest { .. }
        )
    };
    let (requests, others): (Vec<_>, Vec<_>) =
        causal_pairs(events).into_iter().partition(is_request);
    let n = Mutation::Swap.per_trace();
    let mut picked = sample(rng, &others, n / 2);
    picked.extend(sample(rng, &requests, n - picked.len()));
    picked
        .into_iter()
        .map(|(i, j)| {
            let mut mutated = events.to_vec();
            let (first, second) = mutated.split_at_mut(j);
            std::mem::swap(&mut first[i].kind, &mut second[0].kind);
            std::mem::swap(&mut first[i].thr, &mut second[0].thr);
            Mutant {
                trace: name.into(),
                mutation: Mutation::Swap,
                what: format!(
                    "{}'s line {} ({}) and line {} ({}) swapped",
                    events[i].p,
                    i + 1,
                    events[i].ev(),
                    j + 1,
                    events[j].ev()
                ),
                text: text_of(&mutated),
                equivalent: None,
            }
        })
        .collect()
}

/// The queues of `topic` that consumers other than `p` hold (`owned`) and
/// `mine` lacks.
fn held_by_others(
    owned: &BTreeMap<(String, String), Vec<String>>,
    p: &str,
    topic: &str,
    mine: &[String],
) -> Vec<String> {
    owned
        .iter()
        .filter(|((other, t), _)| other != p && t == topic)
        .flat_map(|(_, queues)| queues.iter().filter(|q| !mine.contains(q)).cloned())
        .collect()
}

fn second_owners(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    // The queues each running consumer holds, by topic, as its queue
    // changes say; a dead consumer holds none.
    let mut owned: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut candidates = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Some(dead) = death(e) {
            owned.retain(|(c, _), _| c != dead);
        }
        let Kind::QueuesChanged { topic, divided, .. } = &e.kind else {
            continue;
        };
        let taken = held_by_others(&owned, &e.p, topic, divided);
        candidates.extend(taken.into_iter().map(|q| (i, q)));
        owned.insert((e.p.clone(), topic.clone()), divided.clone());
    }
    sample(rng, &candidates, Mutation::SecondOwner.per_trace())
        .into_iter()
        .map(|(i, queue)| {
            let mut mutated = events.to_vec();
            if let Kind::QueuesChanged { divided, table, .. } = &mut mutated[i].kind {
                for set in std::iter::once(divided).chain(table) {
                    set.push(queue.clone());
                    set.sort();
                }
            }
            Mutant {
                trace: name.into(),
                mutation: Mutation::SecondOwner,
                what: format!("line {}: {} also given {queue}", i + 1, events[i].p),
                text: text_of(&mutated),
                equivalent: None,
            }
        })
        .collect()
}

fn stolen_batches(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    // A batch this near a change of its consumer's table may fall on
    // either side of it (its thread runs beside the rebalance): left
    // alone, with room to spare beyond the validator's window.
    let near = 2 * Bounds::default().concurrency_ns;
    let mut changed: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in events {
        if matches!(e.kind, Kind::QueuesChanged { .. }) {
            changed.entry(&e.p).or_default().push(e.t);
        }
    }
    // Each running consumer's table by topic, as its queue changes say; a
    // dead or leaving consumer holds none.
    let mut owned: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut candidates = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Some(dead) = death(e) {
            owned.retain(|(c, _), _| c != dead);
        }
        match &e.kind {
            Kind::QueuesChanged {
                topic,
                divided,
                table,
            } => {
                let queues = table.as_ref().unwrap_or(divided);
                owned.insert((e.p.clone(), topic.clone()), queues.clone());
            }
            Kind::ConsumeBegin {
                topic,
                queue,
                msgs: None,
                ..
            } => {
                let Some(mine) = owned.get(&(e.p.clone(), topic.clone())) else {
                    continue;
                };
                let quiet = changed[e.p.as_str()]
                    .iter()
                    .all(|&t| t.abs_diff(e.t) > near);
                if !quiet || !mine.contains(queue) {
                    continue;
                }
                let stolen = held_by_others(&owned, &e.p, topic, mine);
                candidates.extend(stolen.into_iter().map(|q| (i, q)));
            }
            _ => {}
        }
    }
    sample(rng, &candidates, Mutation::StolenBatch.per_trace())
        .into_iter()
        .map(|(i, stolen)| {
            let mut mutated = events.to_vec();
            if let Kind::ConsumeBegin { queue, .. } = &mut mutated[i].kind {
                *queue = stolen.clone();
            }
            Mutant {
                trace: name.into(),
                mutation: Mutation::StolenBatch,
                what: format!("line {}: {} begins a batch of {stolen}", i + 1, events[i].p),
                text: text_of(&mutated),
                equivalent: None,
            }
        })
        .collect()
}

/// Where a ghost can be listed: after event `at`, by `broker` (up, its
/// table `members`), the client `client`.
#[derive(Clone)]
struct Ghost {
    at: usize,
    broker: String,
    members: Vec<String>,
    client: String,
    why: &'static str,
}

fn ghosts(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    let clients: BTreeMap<String, String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ConsumerLife { client, .. } => Some((e.p.clone(), client.clone())),
            _ => None,
        })
        .collect();
    let starts: BTreeMap<&str, usize> = events
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(i, e)| match e.kind {
            Kind::ConsumerLife {
                state: ConsumerState::Starting,
                ..
            } => Some((e.p.as_str(), i)),
            _ => None,
        })
        .collect();
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut up: Vec<String> = Vec::new();
    let mut dead: Vec<String> = Vec::new();
    // Each broker's dead consumers it has stopped listing since they died.
    let mut removed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut places: [Vec<Ghost>; 3] = Default::default();
    for (i, e) in events.iter().enumerate() {
        match &e.kind {
            Kind::BrokerLife {
                broker,
                state: ServerState::Started,
                ..
            } => up.push(broker.clone()),
            Kind::BrokerLife { broker, .. } => up.retain(|b| b != broker),
            Kind::Member {
                broker, members, ..
            } => {
                tables.insert(broker.clone(), members.clone());
                for d in &dead {
                    if !members.iter().any(|m| consumer_of(m) == d) {
                        let gone = removed.entry(broker.clone()).or_default();
                        if !gone.contains(d) {
                            gone.push(d.clone());
                        }
                    }
                }
            }
            _ => {}
        }
        if let Some(d) = death(e) {
            dead.push(d.to_owned());
        }
        for broker in &up {
            let members = tables.get(broker).cloned().unwrap_or_default();
            let ghost = |client: &str, why| Ghost {
                at: i,
                broker: broker.clone(),
                members: members.clone(),
                client: client.to_owned(),
                why,
            };
            places[0].push(ghost("127.0.0.1@ghost", "a client that does not exist"));
            for (consumer, &start) in &starts {
                if i < start {
                    if let Some(id) = clients.get(*consumer) {
                        places[1].push(ghost(id, "a consumer before it starts"));
                    }
                }
            }
            for d in removed.get(broker).into_iter().flatten() {
                if let Some(id) = clients.get(d) {
                    places[2].push(ghost(id, "a consumer it removed after it died"));
                }
            }
        }
    }
    places
        .iter()
        .flat_map(|p| sample(rng, p, 1))
        .map(|g| {
            let mut mutated = events.to_vec();
            let seq = events[..=g.at]
                .iter()
                .filter(|e| e.p == "cluster")
                .map(|e| e.seq)
                .max()
                .unwrap_or(0);
            renumber(&mut mutated, g.at + 1, "cluster", 1);
            let mut members = g.members.clone();
            members.push(g.client.clone());
            members.sort();
            mutated.insert(
                g.at + 1,
                Event {
                    t: events[g.at].t,
                    p: "cluster".into(),
                    seq: seq + 1,
                    thr: "NettyServerCodecThread_1".into(),
                    kind: Kind::Member {
                        broker: g.broker.clone(),
                        kind: GroupEvent::ClientRegister,
                        client: Some(g.client.clone()),
                        addr: Some("127.0.0.1:65000".into()),
                        members,
                    },
                },
            );
            Mutant {
                trace: name.into(),
                mutation: Mutation::Ghost,
                what: format!(
                    "after line {}: {} lists {} ({})",
                    g.at + 1,
                    g.broker,
                    g.client,
                    g.why
                ),
                text: text_of(&mutated),
                equivalent: None,
            }
        })
        .collect()
}

fn late_starts(name: &str, events: &[Event], rng: &mut SplitMix64) -> Vec<Mutant> {
    let candidates: Vec<(usize, usize)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            matches!(
                e.kind,
                Kind::ConsumerLife {
                    state: ConsumerState::Starting,
                    ..
                }
            )
        })
        .filter_map(|(s, e)| {
            let m = events[s + 1..]
                .iter()
                .position(|x| x.p == e.p && matches!(x.kind, Kind::QueuesChanged { .. }))?;
            Some((s, s + 1 + m))
        })
        .collect();
    sample(rng, &candidates, Mutation::LateStart.per_trace())
        .into_iter()
        .map(|(s, m)| {
            // 1 ms to 1 s after the queue change.
            let late = 1_000_000 + rng.next_u64() % 999_000_000;
            let mut mutated = events.to_vec();
            let mut start = mutated.remove(s);
            start.t = events[m].t + late;
            let at = mutated.partition_point(|e| e.t <= start.t);
            mutated.insert(at, start);
            Mutant {
                trace: name.into(),
                mutation: Mutation::LateStart,
                what: format!(
                    "{}'s start (line {}) restamped {} ms after its queue change (line {})",
                    events[s].p,
                    s + 1,
                    late / 1_000_000,
                    m + 1
                ),
                text: text_of(&mutated),
                equivalent: None,
            }
        })
        .collect()
}

fn truncations(name: &str, text: &str, rng: &mut SplitMix64) -> Vec<Mutant> {
    let lines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
    let mut cuts: Vec<usize> = (1..Mutation::Truncation.per_trace())
        .map(|_| text.len() / 2 + (rng.next_u64() % (text.len() as u64 / 2)) as usize)
        .collect();
    // One at a line boundary, to try the rule that says it is a prefix.
    cuts.extend(sample(rng, &lines[lines.len() / 2..], 1));
    cuts.into_iter()
        .filter(|&cut| text.is_char_boundary(cut))
        .map(|cut| {
            let kept = &text[..cut];
            let whole = kept.ends_with('\n') || text[cut..].starts_with('\n');
            Mutant {
                trace: name.into(),
                mutation: Mutation::Truncation,
                what: format!("cut at byte {cut} (line {})", kept.lines().count()),
                text: kept.to_owned(),
                equivalent: whole.then_some(Equivalence::Prefix),
            }
        })
        .collect()
}

fn malformed(name: &str, text: &str, rng: &mut SplitMix64) -> Vec<Mutant> {
    let lines: Vec<&str> = text.lines().collect();
    let with = |key: &str| -> Vec<usize> {
        (0..lines.len())
            .filter(|&i| lines[i].contains(&format!("\"{key}\":")))
            .collect()
    };
    let lists: Vec<usize> = with("members").into_iter().chain(with("divided")).collect();
    let corruptions: [(&str, Vec<usize>); 5] = [
        ("a list missing", lists.clone()),
        ("a list null", lists.clone()),
        ("a list a string", lists),
        ("an unknown schema version", with("schema")),
        ("cut in half", (0..lines.len()).collect()),
    ];
    let mut out = Vec::new();
    for _ in 0..Mutation::Malformed.per_trace() {
        let (how, at) = &corruptions[(rng.next_u64() % corruptions.len() as u64) as usize];
        let Some(&i) = sample(rng, at, 1).first() else {
            continue;
        };
        let mut event: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(lines[i]).expect("a recorded line is an object");
        let key = ["members", "divided"]
            .into_iter()
            .find(|k| event.contains_key(*k));
        let line = match (*how, key) {
            ("a list missing", Some(k)) => {
                event.remove(k);
                serde_json::Value::Object(event).to_string()
            }
            ("a list null", Some(k)) => {
                event.insert(k.into(), serde_json::Value::Null);
                serde_json::Value::Object(event).to_string()
            }
            ("a list a string", Some(k)) => {
                event.insert(k.into(), "broker-a:0".into());
                serde_json::Value::Object(event).to_string()
            }
            ("an unknown schema version", _) => {
                event.insert("schema".into(), 99.into());
                serde_json::Value::Object(event).to_string()
            }
            _ => lines[i][..lines[i].len() / 2].to_owned(),
        };
        let mut mutated: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        mutated[i] = line;
        out.push(Mutant {
            trace: name.into(),
            mutation: Mutation::Malformed,
            what: format!("line {}: {how}", i + 1),
            text: mutated.join("\n") + "\n",
            equivalent: None,
        });
    }
    out
}

/// Every mutant of every recorded trace.
fn mutants() -> Vec<Mutant> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("the recorded traces")
        .map(|e| e.expect("an entry").path())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).expect("a recorded trace");
        let events = trace::parse(&text).expect("a recorded trace parses");
        // A real run contradicts itself nowhere (that it conforms is
        // `recorded_traces.rs`'s): what refutes a mutant is its change.
        let translation =
            translate(&events, &model_of(&name)).expect("a recorded trace translates");
        assert_eq!(translation.contradictions, [], "{name}");
        for mutation in Mutation::ALL {
            let rng = &mut SplitMix64::new(seed(&name, mutation));
            out.extend(match mutation {
                Mutation::Drop => drops(&name, &events, rng),
                Mutation::Swap => swaps(&name, &events, rng),
                Mutation::SecondOwner => second_owners(&name, &events, rng),
                Mutation::Ghost => ghosts(&name, &events, rng),
                Mutation::LateStart => late_starts(&name, &events, rng),
                Mutation::StolenBatch => stolen_batches(&name, &events, rng),
                Mutation::Truncation => truncations(&name, &text, rng),
                Mutation::Malformed => malformed(&name, &text, rng),
            });
        }
    }
    out
}

/// The least share of the non-equivalent mutants the validator must
/// refuse.
const REQUIRED_SCORE: f64 = 0.95;

#[test]
fn the_validator_refuses_the_mutants_no_real_run_could_produce() {
    let started = Instant::now();
    let mutants = mutants();
    let ends: BTreeMap<String, End> = mutants
        .iter()
        .map(|m| m.trace.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|t| {
            let end = recorded_end(&t);
            (t, end)
        })
        .collect();
    // Judged on every core, each taking every n-th mutant.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut judged: Vec<(usize, Answer, f64)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (mutants, ends) = (&mutants, &ends);
                scope.spawn(move || {
                    (t..mutants.len())
                        .step_by(threads)
                        .map(|i| {
                            let m = &mutants[i];
                            let began = Instant::now();
                            let answer = judge(&m.text, model_of(&m.trace), end_of(m, ends));
                            (i, answer, began.elapsed().as_secs_f64())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker"))
            .collect()
    });
    judged.sort_by_key(|(i, _, _)| *i);
    let mut slowest: Vec<(f64, String)> = judged
        .iter()
        .map(|(i, _, seconds)| {
            let m = &mutants[*i];
            (*seconds, format!("{} {}", m.trace, m.what))
        })
        .collect();
    let answers: Vec<Answer> = judged.into_iter().map(|(_, answer, _)| answer).collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut by_kind: BTreeMap<Mutation, (usize, usize, usize)> = BTreeMap::new();
    let mut by_rule: BTreeMap<Equivalence, (usize, usize)> = BTreeMap::new();
    let mut survivors = Vec::new();
    for (m, answer) in mutants.iter().zip(&answers) {
        let refused = matches!(answer, Answer::Refused(_));
        match m.equivalent {
            Some(rule) => {
                let counts = by_rule.entry(rule).or_default();
                counts.0 += 1;
                counts.1 += usize::from(refused);
                if refused {
                    survivors.push(format!(
                        "  equivalent {} {:?}: {}: {answer}",
                        m.trace, m.mutation, m.what
                    ));
                }
            }
            None => {
                let counts = by_kind.entry(m.mutation).or_default();
                counts.0 += 1;
                counts.1 += usize::from(refused);
                counts.2 += usize::from(*answer == Answer::Undecided);
                if !refused {
                    survivors.push(format!(
                        "  {} {:?}: {}: {answer}",
                        m.trace, m.mutation, m.what
                    ));
                }
            }
        }
    }
    let (total, refused) = by_kind
        .values()
        .fold((0, 0), |(t, r), &(kt, kr, _)| (t + kt, r + kr));
    println!(
        "{} mutants of the recorded traces in {:.1} s",
        mutants.len(),
        started.elapsed().as_secs_f64()
    );
    for (kind, (t, r, u)) in &by_kind {
        println!("  {kind:?}: {r} of {t} refused ({u} undecided)");
    }
    for (rule, (t, r)) in &by_rule {
        println!("  equivalent, {rule:?}: {t} ({r} refused)");
    }
    let score = refused as f64 / total.max(1) as f64;
    println!(
        "score: {refused} of {total} non-equivalent mutants refused ({:.1}%)",
        100.0 * score
    );
    println!(
        "not refused (and equivalent refused):\n{}",
        survivors.join("\n")
    );
    for (seconds, what) in slowest.iter().take(8) {
        println!("  {seconds:.2} s: {what}");
    }
    assert!(total > 0, "no mutant generated");
    assert!(
        score >= REQUIRED_SCORE,
        "the validator refuses {:.1}% of the mutants no real run could produce, not {:.0}%",
        100.0 * score,
        100.0 * REQUIRED_SCORE
    );
}
