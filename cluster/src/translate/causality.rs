//! What a trace shows of its own order, checked before any model: each
//! check is a fact of how the harness numbers and stamps its events and of
//! what causes what in RocketMQ, so a trace that breaks one is one no run
//! wrote, whatever the model. Trace validation ([`super`])
//! reports each as a [`Contradiction`], a mismatch for certain.
//!
//! - **A process's own order** is its `seq` (the harness's counter, one a
//!   process): its events are numbered 1, 2, ... with none missing or
//!   repeated, and its stamps follow that order (the harness takes both
//!   under one lock; up to [`STAMP_SLACK_NS`] for traces recorded before
//!   it did). The merged trace is ordered by stamp. An `end` that says
//!   each process's last number makes the last event of each due too.
//! - **Lives.** A consumer goes `ready`, `starting` (after the
//!   orchestrator's `start` of it), `started`, `stopping` (after its
//!   `shutdown`), `stopped`, and sends, allocates and changes its queues
//!   only once it is starting; a broker goes `starting`, `started`,
//!   `stopping`, `stopped`, `starting` again (traces from before
//!   `starting` existed skip it; one that records it once records it
//!   every time), and lists members only from its
//!   `starting` to its `stopped`: `start()` registers heartbeats before it
//!   returns. The cluster is `ready` once every broker has started.
//! - **Answers follow requests**: a response (`c.resp`, `b.resp`) answers
//!   a request of the same process with its code, peer and opaque id, not
//!   answered yet.
//! - **A queue change is an allocation's result** (`c.mqchanged` is
//!   `messageQueueChanged`, handed the allocation's set, F3-18): it is the
//!   set the consumer's last `c.alloc` of the topic gave. **A round that
//!   changes its table reports it**: one that read a new queue's offset
//!   (so added it) or, not orderly, dropped a queue of the table the trace
//!   last showed (so removed it) has its `c.mqchanged` before its thread's
//!   next round or its consumer's stop, unless one of its calls failed.
//! - **A request received was sent**: a broker's `b.req` from a consumer
//!   is that consumer's `c.req` of the same code and opaque id to it.
//! - **A listing needs a heartbeat and a registration**: a broker lists a
//!   client once more than before only after a `HEART_BEAT` of that client
//!   to it, sent since the broker last dropped it (or stopped), and a
//!   `CLIENT_REGISTER` of it that no listing has shown yet, or one that
//!   comes before the broker answers a heartbeat of it it is handling
//!   (another heartbeat thread's listing may show a channel before its
//!   own thread records the registration).
//! - **A fault follows its rule**: a rule that fails or loses a call at a
//!   client's or a broker's hook (or fails a batch at a listener) is
//!   followed, in its process, by the fault
//!   event of that call (`c.fault`, `b.fault`, the same code), and every
//!   fault event follows such a rule.
//! - **Only the orchestrator stops a broker**, and a consumer acknowledges
//!   its start (its shutdown) once it has started (stopped).
//! - **Every command is acknowledged, in turn**: the orchestrator numbers
//!   its commands 1, 2, ... and waits for each one's acknowledgement before
//!   it sends the next, so the acknowledgements come in that order, none
//!   missing or repeated (but the last, if the trace stops there; an `end`
//!   that says how many commands were sent makes the last one due too).

use std::collections::BTreeMap;

use crate::trace::{
    expired_entry, ConsumerState, Env, Event, GroupEvent, Kind, RequestCode, RuleAction,
    ServerState,
};

/// How far a process's stamps may run against its own numbering, for the
/// traces recorded when the harness stamped an event (`System.nanoTime`)
/// and then numbered it apart, so that two threads of one process could
/// take the two in opposite orders: those show inversions of at most
/// 21 µs. It now takes both under one lock, and a run's numbering orders
/// its stamps exactly. 1 ms is still far below the 300 ms a consumer's
/// start takes to reach any broker's table.
pub const STAMP_SLACK_NS: u64 = 1_000_000;

/// A trace contradicting itself: the line and what no run does there.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Contradiction {
    /// The trace line (from 1).
    pub line: usize,
    /// What is impossible.
    pub problem: String,
}

/// Every contradiction of `events` (a whole trace, in its order), by line.
pub fn contradictions(events: &[Event]) -> Vec<Contradiction> {
    let mut found = Vec::new();
    own_order(events, &mut found);
    lives(events, &mut found);
    answers(events, &mut found);
    queue_changes(events, &mut found);
    listings(events, &mut found);
    faults(events, &mut found);
    acknowledgements(events, &mut found);
    found.sort_by_key(|c| c.line);
    found
}

/// The orchestrator's commands are numbered 1, 2, ... and each waits for
/// its acknowledgement before the next is sent (`run.rs`'s `command`); the
/// exits it asks for at the end are not numbered. Its `end` says how many
/// it sent, so that the last one's acknowledgement is due too.
fn acknowledgements(events: &[Event], found: &mut Vec<Contradiction>) {
    let mut due = 1;
    for (i, e) in events.iter().enumerate() {
        if let Kind::End {
            commands: Some(sent),
            ..
        } = e.kind
        {
            if due <= sent {
                at(
                    found,
                    i,
                    format!(
                        "the run ends having sent {sent} commands, each acknowledged before \
                         it went on, but command {due}'s acknowledgement is not in the trace"
                    ),
                );
            }
            continue;
        }
        let Kind::Ack { id, cmd } = &e.kind else {
            continue;
        };
        let Ok(n) = id.parse::<u64>() else {
            continue;
        };
        if n != due {
            at(
                found,
                i,
                format!(
                    "{} acknowledges command {n} ({cmd}) where command {due}'s acknowledgement \
                     was due: the orchestrator waits for each before it sends the next",
                    e.p
                ),
            );
        }
        due = n + 1;
    }
}

fn at(found: &mut Vec<Contradiction>, i: usize, problem: String) {
    found.push(Contradiction {
        line: i + 1,
        problem,
    });
}

/// The indices of each process's events, in its own (`seq`) order.
fn by_process(events: &[Event]) -> BTreeMap<&str, Vec<usize>> {
    let mut processes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        processes.entry(e.p.as_str()).or_default().push(i);
    }
    for indices in processes.values_mut() {
        indices.sort_by_key(|&i| events[i].seq);
    }
    processes
}

/// The run's `end` says each process's last `seq` in the trace: each
/// process's last event is there, and no process it does not name.
fn last_events(events: &[Event], found: &mut Vec<Contradiction>) {
    let Some((i, last)) = events.iter().enumerate().find_map(|(i, e)| match &e.kind {
        Kind::End {
            last_seq: Some(last),
            ..
        } => Some((i, last)),
        _ => None,
    }) else {
        return;
    };
    let processes = by_process(events);
    for (p, &n) in last {
        let seen = processes
            .get(p.as_str())
            .and_then(|indices| indices.last())
            .map_or(0, |&l| events[l].seq);
        if seen != n {
            at(
                found,
                i,
                format!(
                    "the run ends with {p}'s event {n} its last in the trace, but its last one \
                     here is {seen}: {}",
                    if seen < n {
                        "its last events are missing"
                    } else {
                        "the events after it are none of the run's"
                    }
                ),
            );
        }
    }
    for (p, indices) in &processes {
        if !last.contains_key(*p) {
            at(
                found,
                indices[0],
                format!("{p} is no process of the run: its end names each process's last event"),
            );
        }
    }
}

fn own_order(events: &[Event], found: &mut Vec<Contradiction>) {
    last_events(events, found);
    for (i, pair) in events.windows(2).enumerate() {
        if pair[1].t < pair[0].t {
            at(
                found,
                i + 1,
                "stamped before the line above: the merged trace is ordered by stamp".into(),
            );
        }
    }
    for (p, indices) in by_process(events) {
        let mut latest: Option<usize> = None;
        for (n, &i) in indices.iter().enumerate() {
            let e = &events[i];
            let expected = n as u64 + 1;
            if e.seq != expected {
                at(
                    found,
                    i,
                    format!(
                        "{p}'s event numbered {} where {expected} is due: one of its events is {}",
                        e.seq,
                        if e.seq > expected {
                            "missing"
                        } else {
                            "repeated"
                        }
                    ),
                );
            }
            if let Some(l) = latest.filter(|&l| events[l].t > e.t.saturating_add(STAMP_SLACK_NS)) {
                at(
                    found,
                    i,
                    format!(
                        "{p}'s event {} is stamped {:.1} ms before its event {} (line {})",
                        e.seq,
                        (events[l].t - e.t) as f64 / 1e6,
                        events[l].seq,
                        l + 1
                    ),
                );
            }
            if latest.map_or(true, |l| events[l].t < e.t) {
                latest = Some(i);
            }
        }
    }
}

/// The state a consumer's life must be in before each state.
fn before(state: ConsumerState) -> Option<ConsumerState> {
    match state {
        ConsumerState::Ready => None,
        ConsumerState::Starting => Some(ConsumerState::Ready),
        ConsumerState::Started => Some(ConsumerState::Starting),
        ConsumerState::Stopping => Some(ConsumerState::Started),
        ConsumerState::Stopped => Some(ConsumerState::Stopping),
    }
}

fn lives(events: &[Event], found: &mut Vec<Contradiction>) {
    // A harness that records a broker's `starting` records it before every
    // start (every trace of schema 3 does); traces recorded before it did
    // go from stopped to started.
    let records_starting = events.iter().any(|e| match &e.kind {
        Kind::BrokerLife {
            state: ServerState::Starting,
            ..
        } => true,
        Kind::Topology { schema, .. } => schema.0 >= 3,
        _ => false,
    });
    // How often each consumer has been starting and stopping so far.
    let mut done: BTreeMap<(&str, ConsumerState), usize> = BTreeMap::new();
    for (p, indices) in by_process(events) {
        let mut life: Option<ConsumerState> = None;
        for &i in &indices {
            let e = &events[i];
            match &e.kind {
                Kind::ConsumerLife { state, .. } => {
                    if before(*state) != life {
                        at(
                            found,
                            i,
                            format!(
                                "{p} is {} after {}: a consumer's life goes ready, starting, \
                                 started, stopping, stopped",
                                state.word(),
                                life.map_or("nothing", |s| s.word())
                            ),
                        );
                    }
                    life = Some(*state);
                    if matches!(state, ConsumerState::Starting | ConsumerState::Stopping) {
                        // Each needs the orchestrator's command stamped before it.
                        let count = done.entry((p, *state)).or_default();
                        *count += 1;
                        let commanded = events
                            .iter()
                            .take_while(|x| x.t <= e.t)
                            .filter(|x| match (&x.kind, state) {
                                (
                                    Kind::Env {
                                        action: Env::Start { consumer },
                                    },
                                    ConsumerState::Starting,
                                )
                                | (
                                    Kind::Env {
                                        action: Env::Shutdown { consumer },
                                    },
                                    ConsumerState::Stopping,
                                ) => consumer == p,
                                _ => false,
                            })
                            .count();
                        if commanded < *count {
                            at(
                                found,
                                i,
                                format!(
                                    "{p} is {} before the orchestrator told it to",
                                    state.word()
                                ),
                            );
                        }
                    }
                }
                // The agent acknowledges a start or a shutdown once it has
                // returned.
                Kind::Ack { cmd, .. }
                    if (cmd == "start" && life < Some(ConsumerState::Started))
                        || (cmd == "shutdown" && life < Some(ConsumerState::Stopped)) =>
                {
                    at(
                        found,
                        i,
                        format!(
                            "{p} acknowledges its {cmd} while {}",
                            life.map_or("nothing", |s| s.word())
                        ),
                    );
                }
                Kind::ConsumerRequest { .. } | Kind::Alloc { .. } | Kind::QueuesChanged { .. }
                    if life.is_none() || life == Some(ConsumerState::Ready) =>
                {
                    at(found, i, format!("{p}'s `{}` before it starts", e.ev()));
                }
                _ => {}
            }
        }
    }
    // Brokers: in the cluster's own order.
    let mut brokers: BTreeMap<&str, ServerState> = BTreeMap::new();
    let mut stopped: BTreeMap<&str, usize> = BTreeMap::new();
    for indices in by_process(events).values() {
        for &i in indices {
            match &events[i].kind {
                // The harness is ready once every broker of the cluster has
                // started.
                Kind::Ready {} if events[i].p == "cluster" => {
                    for (broker, state) in &brokers {
                        if *state != ServerState::Started {
                            at(
                                found,
                                i,
                                format!(
                                    "the cluster is ready while {broker} is {}: it is ready once \
                                     every broker has started",
                                    state.word()
                                ),
                            );
                        }
                    }
                }
                Kind::BrokerLife { broker, state, .. } => {
                    let was = brokers.get(broker.as_str()).copied();
                    let ok = match state {
                        ServerState::Starting => matches!(was, None | Some(ServerState::Stopped)),
                        ServerState::Started if records_starting => {
                            was == Some(ServerState::Starting)
                        }
                        ServerState::Started => matches!(was, None | Some(ServerState::Stopped)),
                        ServerState::Stopping => was == Some(ServerState::Started),
                        ServerState::Stopped => was == Some(ServerState::Stopping),
                    };
                    if !ok {
                        at(
                            found,
                            i,
                            format!(
                                "{broker} is {} after {}: a broker goes starting, started, \
                                 stopping, stopped",
                                state.word(),
                                was.map_or("nothing", |s| s.word())
                            ),
                        );
                    }
                    brokers.insert(broker, *state);
                    if *state == ServerState::Stopping {
                        // Only the orchestrator stops a broker.
                        let stops = stopped.entry(broker).or_default();
                        *stops += 1;
                        let asked = events
                            .iter()
                            .take_while(|x| x.t <= events[i].t)
                            .filter(|x| {
                                matches!(&x.kind, Kind::Env {
                                    action: Env::RestartBroker { broker: b, .. } | Env::StopBroker { broker: b },
                                } if b == broker)
                            })
                            .count();
                        if asked < *stops {
                            at(
                                found,
                                i,
                                format!("{broker} stops without the orchestrator stopping it"),
                            );
                        }
                    }
                }
                Kind::Member { broker, .. }
                    if matches!(
                        brokers.get(broker.as_str()),
                        None | Some(ServerState::Stopped)
                    ) =>
                {
                    at(found, i, format!("{broker} lists members while it is down"));
                }
                _ => {}
            }
        }
    }
}

fn answers(events: &[Event], found: &mut Vec<Contradiction>) {
    requests_received(events, found);
    for indices in by_process(events).values() {
        // Requests not yet answered, by (peer or broker, code, opaque).
        let mut open: BTreeMap<(&str, RequestCode, i64), usize> = BTreeMap::new();
        for &i in indices {
            let key = match &events[i].kind {
                Kind::ConsumerRequest {
                    code, peer, opaque, ..
                } => {
                    *open.entry((peer, *code, *opaque)).or_default() += 1;
                    continue;
                }
                Kind::BrokerRequest {
                    broker,
                    code,
                    opaque,
                    ..
                } => {
                    *open.entry((broker, *code, *opaque)).or_default() += 1;
                    continue;
                }
                Kind::ConsumerResponse {
                    code, peer, opaque, ..
                } => (peer.as_str(), *code, *opaque),
                Kind::BrokerResponse {
                    broker,
                    code,
                    opaque,
                    ..
                } => (broker.as_str(), *code, *opaque),
                _ => continue,
            };
            match open.get_mut(&key) {
                Some(n) if *n > 0 => *n -= 1,
                _ => at(
                    found,
                    i,
                    format!(
                        "an answer to {} (code {}, opaque {}) that nothing asked",
                        key.0, key.1 .0, key.2
                    ),
                ),
            }
        }
    }
}

/// Whether a `rule` event is one that fails or loses a call at a client's
/// or a broker's hook, or fails a batch at a listener: such a rule makes a
/// fault event (`c.fault`, `b.fault`) of what it matched.
pub fn makes_a_fault(kind: &Kind) -> Option<RequestCode> {
    match kind {
        Kind::Rule {
            at, code, action, ..
        } if matches!(at.as_str(), "client" | "broker" | "listener")
            && matches!(action, RuleAction::Fail | RuleAction::Drop) =>
        {
            Some(*code)
        }
        _ => None,
    }
}

/// A rule that fails or loses a call is followed, in its process, by the
/// fault it made on that call, and every fault event follows such a rule:
/// the harness records both, one after the other, in the hook.
fn faults(events: &[Event], found: &mut Vec<Contradiction>) {
    for indices in by_process(events).values() {
        // Rules fired whose fault is still to come, by request code.
        let mut pending: BTreeMap<RequestCode, Vec<usize>> = BTreeMap::new();
        for &i in indices {
            let kind = &events[i].kind;
            if let Some(code) = makes_a_fault(kind) {
                pending.entry(code).or_default().push(i);
                continue;
            }
            let code = match kind {
                Kind::ConsumerFault { code, .. } | Kind::BrokerFault { code, .. } => *code,
                _ => continue,
            };
            let fired = pending.get_mut(&code).filter(|rules| !rules.is_empty());
            match fired {
                Some(rules) => {
                    rules.remove(0);
                }
                None => at(
                    found,
                    i,
                    format!("a fault on code {} that no rule fired", code.0),
                ),
            }
        }
        for &i in pending.values().flatten() {
            at(
                found,
                i,
                "a rule that failed or lost a call, and no fault of it".into(),
            );
        }
    }
}

/// The processes of each consumer's client id.
fn processes_of(events: &[Event]) -> BTreeMap<&str, Vec<&str>> {
    let mut ids: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in events {
        if let Kind::ConsumerLife { client, .. } = &e.kind {
            let processes = ids.entry(client).or_default();
            if !processes.contains(&e.p.as_str()) {
                processes.push(&e.p);
            }
        }
    }
    ids
}

/// A request a broker received from a consumer was sent by it before:
/// the consumer's `c.req` of that code and opaque id, to that broker.
fn requests_received(events: &[Event], found: &mut Vec<Contradiction>) {
    let ids = processes_of(events);
    // Requests sent and not yet received, by (process, peer, code, opaque).
    let mut sent: BTreeMap<(&str, &str, RequestCode, i64), usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        match &e.kind {
            Kind::ConsumerRequest {
                code, peer, opaque, ..
            } => *sent.entry((&e.p, peer, *code, *opaque)).or_default() += 1,
            Kind::BrokerRequest {
                broker,
                code,
                client: Some(client),
                opaque,
                ..
            } => {
                // Other clients (the harness's producer) trace nothing.
                let Some(processes) = ids.get(client.as_str()) else {
                    continue;
                };
                let sender = processes
                    .iter()
                    .map(|p| (*p, broker.as_str(), *code, *opaque))
                    .find(|key| sent.get(key).is_some_and(|&n| n > 0));
                match sender.and_then(|key| sent.get_mut(&key)) {
                    Some(n) => *n -= 1,
                    None => at(
                        found,
                        i,
                        format!(
                            "{broker} receives {client}'s request (code {}, opaque {opaque}) \
                             that it never sent",
                            code.0
                        ),
                    ),
                }
            }
            _ => {}
        }
    }
}

/// A rebalance round of one topic on one thread, from its allocation (or
/// its query of the broker's assignment, `QUERY_ASSIGNMENT`) to the
/// thread's next round.
struct Round<'a> {
    /// Its topic, when the trace names it (an assignment's query does not).
    topic: Option<&'a str>,
    /// The allocation's (or the query's) index in the trace.
    at: usize,
    /// Brokers where one of its offset reads failed.
    failed: Vec<&'a str>,
    /// The calls it made, by id, and those of them still unanswered that
    /// read an offset.
    sent: Vec<i64>,
    reading: Vec<i64>,
    /// Its offset reads answered with an offset or "none stored": one a
    /// queue it adds.
    read: usize,
    /// It changed the table, so Java's `updateProcessQueueTableInRebalance`
    /// returns true and `messageQueueChanged` is called: it removed a queue
    /// of a table known exactly (a push consumer's removal always succeeds
    /// unless it is orderly, where it waits for a running batch), or it
    /// read a new queue's offset (answered with one, or with "none
    /// stored"; orderly, once the queue's lock was granted), which it adds.
    /// A read that cannot connect leaves no trace, so an allocation alone
    /// proves no change.
    owes: bool,
    /// A call of the round failed.
    excused: bool,
    reported: bool,
}

impl<'a> Round<'a> {
    /// A round begun at index `at`, owing a queue change already when
    /// `owes` (its allocation removes a queue).
    fn begun(topic: Option<&'a str>, at: usize, owes: bool) -> Self {
        Self {
            topic,
            at,
            failed: Vec::new(),
            sent: Vec::new(),
            reading: Vec::new(),
            read: 0,
            owes,
            excused: false,
            reported: false,
        }
    }

    /// A round owed a queue change that ends without one, every call of
    /// it answered.
    fn unreported(&self) -> bool {
        self.owes && !self.reported && !self.excused && self.reading.is_empty()
    }
}

/// A response status a round goes on with: success, or an offset read's
/// "none stored" (`QUERY_NOT_FOUND`, which the round takes as an offset).
fn goes_on(status: Option<i64>) -> bool {
    matches!(status, Some(0 | 22))
}

fn queue_changes(events: &[Event], found: &mut Vec<Contradiction>) {
    // A run whose consumers allocate on the broker traces no allocation.
    let allocates = events.iter().any(|e| matches!(e.kind, Kind::Alloc { .. }));
    for (p, indices) in by_process(events) {
        let mut last: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
        // Each topic's table as the process last reported it, and whether
        // that is exact: a queue change recorded before the harness traced
        // the table gives the allocation, which a failed call makes more.
        let mut tables: BTreeMap<&str, (&[String], bool)> = BTreeMap::new();
        // An orderly consumer's removal waits for a running batch, which
        // no event shows: its removals prove no change.
        let orderly = indices.iter().any(|&i| {
            matches!(
                events[i].kind,
                Kind::ConsumerRequest {
                    code: RequestCode::LOCK_BATCH_MQ,
                    ..
                }
            )
        });
        // By thread, the round it began last. A round allocates, reads the
        // new queues' offsets, then reports, before the thread begins the
        // next topic's round.
        let mut rounds: BTreeMap<&str, Round> = BTreeMap::new();
        let owed = |round: Option<Round>, found: &mut Vec<Contradiction>| {
            if let Some(round) = round.filter(Round::unreported) {
                at(
                    found,
                    round.at,
                    match round.topic {
                        Some(topic) => format!(
                            "{p}'s allocation of {topic} changes its table, but its round ends \
                             with no queue change and no failed call"
                        ),
                        None => format!(
                            "{p}'s round read a new queue's offset, so added it, but ends with \
                             no queue change and no failed call"
                        ),
                    },
                );
            }
        };
        for &i in &indices {
            let thread = events[i].thr.as_str();
            match &events[i].kind {
                Kind::Alloc {
                    topic: Some(topic),
                    result,
                    ..
                } => {
                    let mut set: Vec<&String> = result.iter().collect();
                    set.sort();
                    let removes = !orderly
                        && tables.get(topic.as_str()).is_some_and(|&(table, exact)| {
                            exact && table.iter().any(|q| !result.contains(q))
                        });
                    last.insert(topic, set);
                    owed(
                        rounds.insert(thread, Round::begun(Some(topic), i, removes)),
                        found,
                    );
                }
                Kind::ConsumerRequest { code, opaque, .. } => {
                    if *code == RequestCode::QUERY_ASSIGNMENT {
                        owed(rounds.insert(thread, Round::begun(None, i, false)), found);
                    }
                    if let Some(round) = rounds.get_mut(thread) {
                        round.sent.push(*opaque);
                        if *code == RequestCode::QUERY_CONSUMER_OFFSET {
                            round.reading.push(*opaque);
                        }
                    }
                }
                // The answer comes on a network thread while the round
                // waits for it.
                Kind::ConsumerResponse {
                    code,
                    opaque,
                    status,
                    ..
                } => {
                    if let Some(round) = rounds.values_mut().find(|r| r.sent.contains(opaque)) {
                        round.excused |= !goes_on(*status);
                        if *code == RequestCode::QUERY_CONSUMER_OFFSET {
                            round.reading.retain(|o| o != opaque);
                            round.read += usize::from(goes_on(*status));
                            round.owes |= goes_on(*status);
                        }
                    }
                }
                Kind::ConsumerFault { code, peer, .. } => {
                    if let Some(round) = rounds.get_mut(thread) {
                        round.excused = true;
                        if *code == RequestCode::QUERY_CONSUMER_OFFSET {
                            round.failed.push(peer);
                        }
                    }
                }
                Kind::QueuesChanged {
                    topic,
                    divided,
                    table,
                } => {
                    let round = rounds.get_mut(thread);
                    let round = match round {
                        Some(r) if r.topic.map_or(true, |t| t == topic) => {
                            r.reported = true;
                            Some(&*r)
                        }
                        Some(r) => {
                            at(
                                found,
                                i,
                                format!(
                                    "{p}'s queue change of {topic} comes in its round of {}: \
                                     a round reports before the next one begins",
                                    r.topic.unwrap_or_default()
                                ),
                            );
                            None
                        }
                        None => None,
                    };
                    let mut set: Vec<&String> = divided.iter().collect();
                    set.sort();
                    if allocates && last.get(topic.as_str()) != Some(&set) {
                        at(
                            found,
                            i,
                            format!(
                                "{p}'s queues of {topic} are not what its last allocation of \
                                 the topic gave"
                            ),
                        );
                    }
                    let Some(table) = table else {
                        // The allocation is the table when the round read
                        // every new queue's offset, nothing failed, and no
                        // removal can wait (not orderly).
                        let exact = round.is_some_and(|r| {
                            let new = tables.get(topic.as_str()).map_or(
                                Some(divided.len()),
                                |&(before, exact)| {
                                    exact.then(|| {
                                        divided.iter().filter(|q| !before.contains(q)).count()
                                    })
                                },
                            );
                            !orderly && !r.excused && r.reading.is_empty() && new == Some(r.read)
                        });
                        tables.insert(topic, (divided, exact));
                        continue;
                    };
                    // A round adds only what it allocated; a queue it did
                    // not allocate stays only until its removal succeeds.
                    let before = tables.insert(topic, (table, true)).map_or(&[][..], |t| t.0);
                    // A queue whose offset read failed is not added.
                    let failed = round.map_or(&[][..], |r| r.failed.as_slice());
                    let added_all = |broker: &&&str| {
                        divided
                            .iter()
                            .filter(|q| q.split(':').next() == Some(**broker))
                            .all(|q| table.contains(q) || before.contains(q))
                    };
                    if let Some(broker) = failed.iter().find(added_all) {
                        at(
                            found,
                            i,
                            format!(
                                "{p}'s table of {topic} took every new queue of {broker}, \
                                 though an offset read there failed in its round"
                            ),
                        );
                    }
                    if let Some(q) = table
                        .iter()
                        .find(|q| !divided.contains(q) && !before.contains(q))
                    {
                        at(
                            found,
                            i,
                            format!(
                                "{p}'s table of {topic} holds {q}, which its round did not \
                                 allocate and its table did not hold"
                            ),
                        );
                    }
                }
                // A shutdown waits for the rebalance thread's round
                // (`MQClientInstance.shutdown` joins it) before `destroy`
                // drops the table: the round ends there. A process started
                // again starts with an empty table.
                Kind::ConsumerLife { state, .. } => match state {
                    ConsumerState::Stopped => {
                        for round in std::mem::take(&mut rounds).into_values() {
                            owed(Some(round), found);
                        }
                    }
                    ConsumerState::Starting => tables.clear(),
                    _ => {}
                },
                _ => {}
            }
        }
    }
}

fn listings(events: &[Event], found: &mut Vec<Contradiction>) {
    let ids: BTreeMap<&str, &str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Kind::ConsumerLife { client, .. } => Some((e.p.as_str(), client.as_str())),
            _ => None,
        })
        .collect();
    let unregistered = |broker: &str, client: &str| {
        format!("{broker} lists {client} once more with no registration of it")
    };
    // The stamps of each client's heartbeats, by broker: as the consumer
    // sent them and as the broker received them.
    let mut heartbeats: BTreeMap<(&str, &str), Vec<u64>> = BTreeMap::new();
    // Per broker and client: the heartbeats it has received and not yet
    // answered (their opaque ids).
    let mut handling: BTreeMap<(&str, &str), Vec<i64>> = BTreeMap::new();
    // Per broker and client: how often it is listed, and since when a new
    // listing needs a new heartbeat.
    let mut listed: BTreeMap<(&str, &str), (usize, u64)> = BTreeMap::new();
    // Per broker and client: registrations no listing has shown yet.
    let mut registered: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    // Per broker and client: listings that showed it before its
    // registration, each with the heartbeat being handled that owes it.
    let mut owed: BTreeMap<(&str, &str), Vec<(usize, i64)>> = BTreeMap::new();
    let mut stopping: Vec<&str> = Vec::new();
    // Per broker: its last listing (none since it began to stop).
    let mut last: BTreeMap<&str, &[String]> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        match &e.kind {
            Kind::ConsumerRequest { code, peer, .. } if *code == RequestCode::HEART_BEAT => {
                if let Some(&id) = ids.get(e.p.as_str()) {
                    heartbeats.entry((peer, id)).or_default().push(e.t);
                }
            }
            Kind::BrokerRequest {
                broker,
                code,
                client: Some(client),
                opaque,
                ..
            } if *code == RequestCode::HEART_BEAT => {
                // Sent before a removal, it registers again if the broker
                // handles it after.
                heartbeats.entry((broker, client)).or_default().push(e.t);
                handling.entry((broker, client)).or_default().push(*opaque);
            }
            Kind::BrokerResponse {
                broker,
                code,
                client: Some(client),
                opaque,
                ..
            } if *code == RequestCode::HEART_BEAT => {
                let key = (broker.as_str(), client.as_str());
                handling.entry(key).or_default().retain(|o| o != opaque);
                let debts = owed.entry(key).or_default();
                for &(line, _) in debts.iter().filter(|(_, o)| o == opaque) {
                    at(found, line, unregistered(broker, client));
                }
                debts.retain(|(_, o)| o != opaque);
            }
            Kind::BrokerLife {
                broker,
                state: ServerState::Stopping,
                ..
            } => {
                stopping.push(broker);
                last.remove(broker.as_str());
                for ((b, _), entry) in listed.iter_mut() {
                    if b == broker {
                        *entry = (0, e.t);
                    }
                }
                registered.retain(|(b, _), _| b != broker);
                // A registration still on its way is lost with the table.
                owed.retain(|(b, _), _| b != broker);
            }
            Kind::BrokerLife {
                broker,
                state: ServerState::Starting | ServerState::Started,
                ..
            } => stopping.retain(|b| b != broker),
            // A stopping broker's unregistrations are its table's loss.
            Kind::Member {
                broker,
                kind,
                client,
                members,
                ..
            } if !stopping.contains(&broker.as_str()) => {
                if let (GroupEvent::ClientRegister, Some(client)) = (kind, client) {
                    let key = (broker.as_str(), client.as_str());
                    let debts = owed.entry(key).or_default();
                    if debts.is_empty() {
                        *registered.entry(key).or_default() += 1;
                    } else {
                        debts.remove(0);
                    }
                }
                let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
                for m in members {
                    *counts.entry(m).or_default() += 1;
                }
                // The expiry scan reports a channel before it removes it:
                // the table is the one the removal leaves, and a listing
                // with the client again needs a heartbeat after this one.
                if let (GroupEvent::ClientUnregister, Some(gone)) = (kind, client) {
                    let before = last.get(broker.as_str()).copied();
                    if expired_entry(members, gone, before).is_some() {
                        counts.entry(gone.as_str()).and_modify(|n| *n -= 1);
                    }
                }
                last.insert(broker, members);
                let known: Vec<&str> = listed
                    .keys()
                    .filter(|(b, _)| b == broker)
                    .map(|&(_, c)| c)
                    .collect();
                for client in known {
                    counts.entry(client).or_insert(0);
                }
                for (client, n) in counts {
                    let key = (broker.as_str(), client);
                    let (was, since) = listed.get(&key).copied().unwrap_or((0, 0));
                    if n > was {
                        // Each channel joins the table by its own
                        // registration: one already recorded (its snapshot
                        // may lag it: the listing after it shows it), or one
                        // a heartbeat being handled is about to record.
                        let unclaimed = registered.entry(key).or_default();
                        let claimed = (n - was).min(*unclaimed);
                        *unclaimed -= claimed;
                        let debts = owed.entry(key).or_default();
                        let free: Vec<i64> = handling
                            .get(&key)
                            .into_iter()
                            .flatten()
                            .filter(|o| !debts.iter().any(|(_, d)| d == *o))
                            .copied()
                            .collect();
                        let mut free = free.into_iter();
                        for _ in claimed..n - was {
                            match free.next() {
                                Some(opaque) => debts.push((i, opaque)),
                                None => at(found, i, unregistered(broker, client)),
                            }
                        }
                        let sent = heartbeats
                            .get(&key)
                            .is_some_and(|ts| ts.iter().any(|&t| t > since && t <= e.t));
                        if !sent {
                            at(
                                found,
                                i,
                                format!(
                                    "{broker} lists {client} with no heartbeat of it since {}",
                                    if since == 0 {
                                        "the run began".to_owned()
                                    } else {
                                        "it last dropped it".to_owned()
                                    }
                                ),
                            );
                        }
                    }
                    let since = if n < was { e.t } else { since };
                    listed.insert(key, (n, since));
                }
            }
            _ => {}
        }
    }
    // A registration owed at the end of the trace never came.
    for ((broker, client), debts) in owed {
        for (line, _) in debts {
            at(found, line, unregistered(broker, client));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse;

    const RUN: &str = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","model":["--scenario","healthy"],"orderly":false,"rocketmq":"5.3.3","scenario":"healthy","schema":1}"#;

    fn problems(lines: &[&str]) -> Vec<String> {
        let text = std::iter::once(RUN)
            .chain(lines.iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        contradictions(&parse(&text).expect("a trace"))
            .into_iter()
            .map(|c| format!("line {}: {}", c.line, c.problem))
            .collect()
    }

    #[test]
    fn a_process_numbers_its_events_and_stamps_them_in_that_order() {
        let ready = r#"{"t":2,"p":"c1","seq":1,"ev":"c.life","client":"x@c1","state":"ready"}"#;
        assert_eq!(problems(&[ready]), Vec::<String>::new());
        let gap = r#"{"t":3,"p":"c1","seq":3,"ev":"c.notify","peer":"broker-a"}"#;
        assert_eq!(
            problems(&[ready, gap]),
            ["line 3: c1's event numbered 3 where 2 is due: one of its events is missing"]
        );
        let early = r#"{"t":3,"p":"c1","seq":1,"ev":"c.life","client":"x@c1","state":"ready"}"#;
        let late = r#"{"t":5000003,"p":"c1","seq":2,"ev":"c.notify","peer":"broker-a"}"#;
        // Its second event stamped 5 ms before its first.
        let swapped = late.replace(r#""seq":2"#, r#""seq":0"#);
        assert!(problems(&[early, &swapped])
            .iter()
            .any(|p| p.contains("stamped 5.0 ms before")));
    }

    /// A round's table holds what it allocated, and a queue dropped
    /// before it only until its removal: any other queue is none the
    /// process can have.
    #[test]
    fn a_table_holds_only_what_its_round_allocated_or_held_before() {
        let alloc = |seq: u32, result: &str| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.alloc","cid":"x@c1","cid_all":["x@c1"],"mq_all":["broker-a:0","broker-a:1"],"result":[{result}],"topic":"T"}}"#
            )
        };
        let changed = |seq: u32, divided: &str, table: &str| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.mqchanged","topic":"T","divided":[{divided}],"table":[{table}]}}"#
            )
        };
        let (a0, a1, both) = (
            r#""broker-a:0""#,
            r#""broker-a:1""#,
            r#""broker-a:0","broker-a:1""#,
        );
        // The lock of a1 refused, then a1 added; then a0 dropped while its
        // batch runs, and removed at the next round.
        let fine = [
            alloc(1, both),
            changed(2, both, a0),
            alloc(3, both),
            changed(4, both, both),
            alloc(5, a1),
            changed(6, a1, a1),
        ];
        // Of the tables only: these consumers never started.
        let of_tables = |lines: &[String]| {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            problems(&lines)
                .into_iter()
                .filter(|p| p.contains("table"))
                .collect::<Vec<_>>()
        };
        assert_eq!(of_tables(&fine), Vec::<String>::new());
        assert_eq!(
            of_tables(&[alloc(1, a0), changed(2, a0, both)]),
            ["line 3: c1's table of T holds broker-a:1, which its round did not allocate and its table did not hold"]
        );
        // A round reports before its thread begins another topic's.
        let retry = r#"{"t":2,"p":"c1","seq":2,"ev":"c.alloc","cid":"x@c1","cid_all":["x@c1"],"mq_all":["broker-a:0"],"result":[],"topic":"%RETRY%g"}"#;
        assert_eq!(
            of_tables(&[alloc(1, a0), retry.to_owned(), changed(3, a0, a0)]),
            Vec::<String>::new(),
        );
        let problems_of = |lines: &[String]| {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            problems(&lines)
                .into_iter()
                .filter(|p| p.contains("round of"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            problems_of(&[alloc(1, a0), retry.to_owned(), changed(3, a0, a0)]),
            ["line 4: c1's queue change of T comes in its round of %RETRY%g: a round reports before the next one begins"]
        );
        // An offset read of the round failed: a new queue of that broker
        // stays out of the table.
        let failed = |seq: u32| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.fault","code":14,"peer":"broker-a","action":"fail"}}"#
            )
        };
        assert_eq!(
            of_tables(&[alloc(1, both), failed(2), changed(3, both, a0)]),
            Vec::<String>::new()
        );
        assert_eq!(
            of_tables(&[alloc(1, both), failed(2), changed(3, both, both)]),
            ["line 4: c1's table of T took every new queue of broker-a, though an offset read there failed in its round"]
        );
    }

    #[test]
    fn an_answer_needs_its_request_and_a_listing_its_heartbeat() {
        let answer = r#"{"t":2,"p":"c1","seq":1,"ev":"c.resp","code":34,"opaque":7,"peer":"broker-a","status":0}"#;
        assert_eq!(
            problems(&[answer]),
            ["line 2: an answer to broker-a (code 34, opaque 7) that nothing asked"]
        );
        let up =
            r#"{"t":2,"p":"cluster","seq":1,"ev":"b.life","broker":"broker-a","state":"started"}"#;
        let listing = r#"{"t":3,"p":"cluster","seq":2,"ev":"b.member","broker":"broker-a","kind":"CLIENT_REGISTER","client":"x@ghost","members":["x@ghost"]}"#;
        assert_eq!(
            problems(&[up, listing]),
            ["line 3: broker-a lists x@ghost with no heartbeat of it since the run began"]
        );
    }

    /// `lines` numbered in their order, each process from 1 (the
    /// orchestrator from 2, after the run).
    fn numbered(lines: &[&str]) -> Vec<String> {
        let mut next: BTreeMap<String, u64> = BTreeMap::from([("orchestrator".to_owned(), 2)]);
        lines
            .iter()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
                let p = v["p"].as_str().expect("p").to_owned();
                let seq = next.entry(p).or_insert(1);
                v["seq"] = (*seq).into();
                *seq += 1;
                v.to_string()
            })
            .collect()
    }

    /// A broker registers heartbeats on several threads: the listing of
    /// one may show a channel another has just put in the table before
    /// that one records its registration, which then comes before its
    /// heartbeat is answered (a CI run of a healthy join).
    #[test]
    fn a_registration_may_follow_a_listing_while_its_heartbeat_is_handled() {
        let up = r#"{"t":2,"p":"cluster","ev":"b.life","broker":"broker-a","state":"started"}"#;
        let lives = [
            r#"{"t":3,"p":"c1","ev":"c.life","client":"x@c1","state":"ready"}"#,
            r#"{"t":4,"p":"c2","ev":"c.life","client":"x@c2","state":"ready"}"#,
            r#"{"t":5,"p":"orchestrator","ev":"env","action":"start","consumer":"c1"}"#,
            r#"{"t":6,"p":"orchestrator","ev":"env","action":"start","consumer":"c2"}"#,
            r#"{"t":7,"p":"c1","ev":"c.life","client":"x@c1","state":"starting"}"#,
            r#"{"t":8,"p":"c2","ev":"c.life","client":"x@c2","state":"starting"}"#,
            r#"{"t":9,"p":"c1","ev":"c.req","code":34,"opaque":1,"peer":"broker-a"}"#,
            r#"{"t":10,"p":"c2","ev":"c.req","code":34,"opaque":1,"peer":"broker-a"}"#,
        ];
        let received = |c: &str, t: u64| {
            format!(
                r#"{{"t":{t},"p":"cluster","ev":"b.req","broker":"broker-a","code":34,"client":"x@{c}","addr":"/127.0.0.1:1","opaque":1}}"#
            )
        };
        let registered = |c: &str, t: u64| {
            format!(
                r#"{{"t":{t},"p":"cluster","ev":"b.member","broker":"broker-a","kind":"CLIENT_REGISTER","client":"x@{c}","members":["x@c1","x@c2"]}}"#
            )
        };
        let answered = |c: &str, t: u64| {
            format!(
                r#"{{"t":{t},"p":"cluster","ev":"b.resp","broker":"broker-a","code":34,"client":"x@{c}","opaque":1,"status":0}}"#
            )
        };
        let run = |tail: &[String]| {
            let all: Vec<&str> = std::iter::once(up)
                .chain(lives)
                .chain(tail.iter().map(String::as_str))
                .collect();
            let all = numbered(&all);
            problems(&all.iter().map(String::as_str).collect::<Vec<_>>())
        };
        let c1_first = [
            received("c1", 11),
            received("c2", 12),
            registered("c1", 13),
            registered("c2", 14),
            answered("c1", 15),
            answered("c2", 16),
        ];
        assert_eq!(run(&c1_first), Vec::<String>::new());
        // Its registration missing: owed until the answer, then refused.
        let never = [
            c1_first[0].clone(),
            c1_first[1].clone(),
            c1_first[2].clone(),
            c1_first[4].clone(),
            c1_first[5].clone(),
        ];
        assert_eq!(
            run(&never),
            ["line 13: broker-a lists x@c2 once more with no registration of it"]
        );
        // Its heartbeat not yet received: refused at once.
        let unasked = [
            received("c1", 11),
            registered("c1", 12),
            received("c2", 13),
            registered("c2", 14),
            answered("c1", 15),
            answered("c2", 16),
        ];
        assert_eq!(
            run(&unasked),
            ["line 12: broker-a lists x@c2 once more with no registration of it"]
        );
    }

    /// A round that reads a new queue's offset adds the queue, and a push
    /// consumer's round that drops one removes it: either changes the
    /// table, and Java calls `messageQueueChanged` before the thread's next
    /// round, unless a call of the round failed. A dropped queue change was
    /// accepted before (`harms-kill`, line 113).
    #[test]
    fn a_round_that_changes_its_table_reports_it() {
        let alloc = |seq: u32, result: &str| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.alloc","cid":"x@c1","cid_all":["x@c1"],"mq_all":["broker-a:0"],"result":[{result}],"topic":"T"}}"#
            )
        };
        let read = |seq: u32, status: &str| {
            [
                format!(
                    r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.req","code":14,"opaque":{seq},"peer":"broker-a"}}"#
                ),
                format!(
                    r#"{{"t":{},"p":"c1","seq":{},"ev":"c.resp","code":14,"opaque":{seq},"peer":"broker-a"{status}}}"#,
                    seq + 1,
                    seq + 1
                ),
            ]
        };
        let changed = |seq: u32, queues: &str| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.mqchanged","topic":"T","divided":[{queues}],"table":[{queues}]}}"#
            )
        };
        let a0 = r#""broker-a:0""#;
        let unreported = |lines: Vec<String>| {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            problems(&lines)
                .into_iter()
                .filter(|p| p.contains("ends with no queue change"))
                .collect::<Vec<_>>()
        };
        let round = |status: &str, report: bool| {
            let mut lines = vec![alloc(1, a0)];
            lines.extend(read(2, status));
            lines.extend(report.then(|| changed(4, a0)));
            lines.push(alloc(5, a0));
            lines
        };
        assert_eq!(
            unreported(round(r#","status":22"#, true)),
            Vec::<String>::new()
        );
        assert_eq!(
            unreported(round(r#","status":22"#, false)),
            ["line 2: c1's allocation of T changes its table, but its round ends with no queue change and no failed call"]
        );
        // A read that fails, or gets no answer, adds nothing.
        assert_eq!(
            unreported(round(r#","status":1"#, false)),
            Vec::<String>::new()
        );
        assert_eq!(unreported(round("", false)), Vec::<String>::new());
        // A read that cannot connect is not traced: the allocation alone
        // proves nothing; nor does a round the trace ends in.
        assert_eq!(
            unreported(vec![alloc(1, a0), alloc(2, a0)]),
            Vec::<String>::new()
        );
        assert_eq!(
            unreported(round(r#","status":0"#, false)[..3].to_vec()),
            Vec::<String>::new()
        );
        // A removal from the table the trace showed.
        let mut removal = round(r#","status":0"#, true);
        removal.pop();
        removal.extend([alloc(5, ""), alloc(6, "")]);
        assert_eq!(
            unreported(removal),
            ["line 6: c1's allocation of T changes its table, but its round ends with no queue change and no failed call"]
        );
        // A queue change recorded before the harness traced the table is
        // the table when its round read each new queue's offset.
        let untabled = |seq: u32| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.mqchanged","topic":"T","divided":[{a0}]}}"#
            )
        };
        let mut read_all = vec![alloc(1, a0)];
        read_all.extend(read(2, r#","status":22"#));
        read_all.extend([untabled(4), alloc(5, ""), alloc(6, "")]);
        assert_eq!(
            unreported(read_all),
            ["line 6: c1's allocation of T changes its table, but its round ends with no queue change and no failed call"]
        );
        let unread = vec![alloc(1, a0), untabled(2), alloc(3, ""), alloc(4, "")];
        assert_eq!(unreported(unread), Vec::<String>::new());
        // A round of the broker's assignment (`QUERY_ASSIGNMENT`, 400) names
        // no topic; reading an offset, it adds a queue all the same
        // (`pop-kill`, line 279 dropped was accepted).
        let query = |seq: u32| {
            format!(
                r#"{{"t":{seq},"p":"c1","seq":{seq},"ev":"c.req","code":400,"opaque":{seq},"peer":"broker-a"}}"#
            )
        };
        let mut assigned = vec![query(1)];
        assigned.extend(read(2, r#","status":22"#));
        assigned.push(query(4));
        assert_eq!(
            unreported(assigned),
            ["line 2: c1's round read a new queue's offset, so added it, but ends with no queue change and no failed call"]
        );
        // A shutdown waits for the round: it reports before `stopped`.
        let mut shutdown = round(r#","status":22"#, false);
        shutdown.pop();
        shutdown.push(
            r#"{"t":9,"p":"c1","seq":4,"ev":"c.life","client":"x@c1","state":"stopped"}"#.into(),
        );
        assert_eq!(unreported(shutdown).len(), 1);
    }

    /// The orchestrator waits for each command's acknowledgement before the
    /// next: one lost shows as a gap in their numbers.
    #[test]
    fn the_acknowledgements_come_one_by_one() {
        let ack = |p: &str, id: &str, cmd: &str| {
            format!(r#"{{"t":5,"p":"{p}","ev":"ack","cmd":"{cmd}","id":"{id}"}}"#)
        };
        let run = |acks: &[String]| {
            let lines = numbered(&acks.iter().map(String::as_str).collect::<Vec<_>>());
            problems(&lines.iter().map(String::as_str).collect::<Vec<_>>())
                .into_iter()
                .filter(|p| p.contains("acknowledge"))
                .collect::<Vec<_>>()
        };
        let produced = ack("cluster", "1", "produce");
        let again = ack("cluster", "2", "produce");
        let drained = ack("cluster", "drain", "exit");
        assert_eq!(
            run(&[produced.clone(), again.clone(), drained]),
            Vec::<String>::new()
        );
        assert_eq!(
            run(std::slice::from_ref(&again)),
            ["line 2: cluster acknowledges command 2 (produce) where command 1's acknowledgement was due: the orchestrator waits for each before it sends the next"]
        );
        assert_eq!(
            run(&[produced.clone(), produced.clone()]).len(),
            1,
            "an acknowledgement repeated"
        );
        // The end says how many were sent: the last one is due too.
        let end = |sent: u64| {
            format!(r#"{{"t":6,"p":"orchestrator","ev":"end","settled":true,"commands":{sent}}}"#)
        };
        assert_eq!(
            run(&[produced.clone(), again.clone(), end(2)]),
            Vec::<String>::new()
        );
        assert_eq!(
            run(&[produced.clone(), end(2)]),
            ["line 3: the run ends having sent 2 commands, each acknowledged before it went on, but command 2's acknowledgement is not in the trace"]
        );
        let legacy = r#"{"t":6,"p":"orchestrator","ev":"end","settled":true}"#.to_owned();
        assert_eq!(run(&[produced, legacy]), Vec::<String>::new());
    }

    /// The end names each process's last event: a last event dropped, or
    /// one added after it, contradicts it.
    #[test]
    fn the_end_names_each_processs_last_event() {
        let request = |t: u64| {
            format!(
                r#"{{"t":{t},"p":"cluster","ev":"b.life","broker":"broker-a","state":"started"}}"#
            )
        };
        let end = |last: u64| {
            format!(
                r#"{{"t":9,"p":"orchestrator","ev":"end","settled":true,"last_seq":{{"orchestrator":2,"cluster":{last}}}}}"#
            )
        };
        let run = |lines: &[String]| {
            let lines = numbered(&lines.iter().map(String::as_str).collect::<Vec<_>>());
            problems(&lines.iter().map(String::as_str).collect::<Vec<_>>())
                .into_iter()
                .filter(|p| p.contains("the run ends with") || p.contains("no process of"))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(&[request(3), request(4), end(2)]), Vec::<String>::new());
        assert_eq!(
            run(&[request(3), end(2)]),
            ["line 3: the run ends with cluster's event 2 its last in the trace, but its last one here is 1: its last events are missing"]
        );
        assert_eq!(
            run(&[request(3), request(4), request(5), end(2)]),
            ["line 5: the run ends with cluster's event 2 its last in the trace, but its last one here is 3: the events after it are none of the run's"]
        );
        let ghost = r#"{"t":5,"p":"c9","ev":"c.life","client":"x@c9","state":"ready"}"#;
        assert_eq!(
            run(&[request(3), ghost.to_owned(), request(4), end(2)]),
            ["line 3: c9 is no process of the run: its end names each process's last event"]
        );
    }

    /// The expiry scan reports a channel before it removes it
    /// (`scanNotActiveChannel`), so its listing still shows the client; a
    /// heartbeat after that report registers the client again, though the
    /// first listing without it comes later (`--random 7`, line 1,489).
    #[test]
    fn a_client_expired_lists_again_after_a_heartbeat_since_the_scan() {
        let lines = |hb: u64, handled: u64| {
            let mut lines = vec![
                r#"{"t":2,"p":"cluster","ev":"b.life","broker":"broker-a","state":"started"}"#.to_owned(),
                r#"{"t":3,"p":"c1","ev":"c.life","client":"x@c1","state":"ready"}"#.to_owned(),
                r#"{"t":3,"p":"orchestrator","ev":"env","action":"start","consumer":"c1"}"#.to_owned(),
                r#"{"t":3,"p":"c1","ev":"c.life","client":"x@c1","state":"starting"}"#.to_owned(),
                r#"{"t":4,"p":"c1","ev":"c.req","code":34,"opaque":1,"peer":"broker-a"}"#.to_owned(),
                r#"{"t":5,"p":"cluster","ev":"b.req","broker":"broker-a","code":34,"client":"x@c1","addr":"/127.0.0.1:1","opaque":1}"#.to_owned(),
                r#"{"t":6,"p":"cluster","ev":"b.member","broker":"broker-a","kind":"CLIENT_REGISTER","client":"x@c1","members":["x@c1"]}"#.to_owned(),
                r#"{"t":7,"p":"cluster","ev":"b.resp","broker":"broker-a","code":34,"client":"x@c1","opaque":1,"status":0}"#.to_owned(),
                r#"{"t":8,"p":"c1","ev":"c.resp","code":34,"opaque":1,"peer":"broker-a","status":0}"#.to_owned(),
                // The scan's report, still listing it.
                r#"{"t":20,"p":"cluster","ev":"b.member","broker":"broker-a","kind":"CLIENT_UNREGISTER","client":"x@c1","members":["x@c1"]}"#.to_owned(),
                r#"{"t":30,"p":"cluster","ev":"b.member","broker":"broker-a","kind":"REGISTER","members":[]}"#.to_owned(),
                format!(r#"{{"t":{hb},"p":"c1","ev":"c.req","code":34,"opaque":2,"peer":"broker-a"}}"#),
                format!(r#"{{"t":{handled},"p":"cluster","ev":"b.req","broker":"broker-a","code":34,"client":"x@c1","addr":"/127.0.0.1:2","opaque":2}}"#),
                r#"{"t":41,"p":"cluster","ev":"b.member","broker":"broker-a","kind":"CLIENT_REGISTER","client":"x@c1","members":["x@c1"]}"#.to_owned(),
                r#"{"t":42,"p":"cluster","ev":"b.resp","broker":"broker-a","code":34,"client":"x@c1","opaque":2,"status":0}"#.to_owned(),
                r#"{"t":43,"p":"c1","ev":"c.resp","code":34,"opaque":2,"peer":"broker-a","status":0}"#.to_owned(),
            ];
            lines.sort_by_key(|l| {
                serde_json::from_str::<serde_json::Value>(l).expect("json")["t"].as_u64()
            });
            let lines = numbered(&lines.iter().map(String::as_str).collect::<Vec<_>>());
            problems(&lines.iter().map(String::as_str).collect::<Vec<_>>())
        };
        // Sent and handled after the report, before the first listing
        // without it.
        assert_eq!(lines(22, 25), Vec::<String>::new());
        // Sent before the report, handled after it.
        assert_eq!(lines(15, 40), Vec::<String>::new());
        // Handled before the report: the removal came after it.
        assert_eq!(
            lines(10, 11),
            ["line 15: broker-a lists x@c1 with no heartbeat of it since it last dropped it"]
        );
    }

    /// `start()` opens the broker's port and registers heartbeats before it
    /// returns: a listing between `starting` and `started` is the table's.
    #[test]
    fn a_broker_lists_members_from_its_start_on() {
        let starting =
            r#"{"t":2,"p":"cluster","seq":1,"ev":"b.life","broker":"broker-a","state":"starting"}"#;
        let ready = r#"{"t":3,"p":"c1","seq":1,"ev":"c.life","client":"x@c1","state":"ready"}"#;
        let start =
            r#"{"t":4,"p":"orchestrator","seq":2,"ev":"env","action":"start","consumer":"c1"}"#;
        let begun = r#"{"t":5,"p":"c1","seq":2,"ev":"c.life","client":"x@c1","state":"starting"}"#;
        let beat =
            r#"{"t":6,"p":"c1","seq":3,"ev":"c.req","code":34,"opaque":1,"peer":"broker-a"}"#;
        let listing = r#"{"t":7,"p":"cluster","seq":2,"ev":"b.member","broker":"broker-a","kind":"CLIENT_REGISTER","client":"x@c1","members":["x@c1"]}"#;
        let started =
            r#"{"t":8,"p":"cluster","seq":3,"ev":"b.life","broker":"broker-a","state":"started"}"#;
        assert_eq!(
            problems(&[starting, ready, start, begun, beat, listing, started]),
            Vec::<String>::new()
        );
        let unstarted = listing.replace(r#""seq":2"#, r#""seq":1"#);
        let late = started.replace(r#""seq":3"#, r#""seq":2"#);
        assert_eq!(
            problems(&[ready, start, begun, beat, &unstarted, &late]),
            ["line 6: broker-a lists members while it is down"]
        );
        // A harness that records one broker's `starting` records every
        // one's (`--random 18`, its line 4 dropped was accepted).
        let b_started =
            r#"{"t":9,"p":"cluster","seq":3,"ev":"b.life","broker":"broker-b","state":"started"}"#;
        assert_eq!(
            problems(&[starting, &late, b_started]),
            ["line 4: broker-b is started after nothing: a broker goes starting, started, stopping, stopped"]
        );
        let alone = b_started.replace(r#""seq":3"#, r#""seq":1"#);
        assert_eq!(problems(&[&alone]), Vec::<String>::new());
    }

    #[test]
    fn the_cluster_is_ready_once_every_broker_has_started() {
        let starting =
            r#"{"t":2,"p":"cluster","seq":1,"ev":"b.life","broker":"broker-a","state":"starting"}"#;
        let started =
            r#"{"t":3,"p":"cluster","seq":2,"ev":"b.life","broker":"broker-a","state":"started"}"#;
        let ready = r#"{"t":4,"p":"cluster","seq":3,"ev":"ready"}"#;
        assert_eq!(problems(&[starting, started, ready]), Vec::<String>::new());
        let early = ready.replace(r#""seq":3"#, r#""seq":2"#);
        assert_eq!(
            problems(&[starting, &early]),
            [
                "line 3: the cluster is ready while broker-a is starting: it is ready once every \
              broker has started"
            ]
        );
    }
}
