//! The search over (model state, position in the trace): each node a model
//! state and the observations it has explained. It is exhaustive within its
//! bounds, so its answer is exact whatever the order it goes in; it expands
//! first the nodes that have explained the most (then those with the fewest
//! silent steps, then the oldest), so that a trace that conforms is decided
//! as soon as one run reaches its end instead of after every shorter run.
//! A node keeps its state only until it is expanded, packed (its parts'
//! ids, as the safety search keeps its levels: a few lanes a state instead
//! of the state with its every vector): the run that explained the most is
//! replayed from the actions along its path.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use stateright::Model;

use super::observation::{
    changes, has, impossible, initial_observables, unheld, Observation, Observed, Shown,
};
use crate::check::{Expectation, PropertyReport, Report, Status, Stopped};
use crate::config::Config;
use crate::guarantees::Group;
use crate::protocol::{Peer, Phase, Timer};
use crate::search::intern::Interner;
use crate::search::packed::{Codec, Packing};
use crate::search::{collision_probability, encode_path, fingerprint, replay};
use crate::shell::{Action, RebalanceModel, SystemState};
use crate::trace::{describe_action, describe_state};

/// How far the search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Steps the trace cannot see (a heartbeat that changes nothing seen,
    /// a message on its way) taken in a row between two observations.
    pub silent_steps: usize,
    /// Observations of different actors within this many nanoseconds of
    /// each other may be explained in either order. The default, 1 ms, is
    /// what the harness's clock leaves uncertain: every process of a run
    /// stamps its events from the machine's one monotonic clock, and of
    /// the recorded runs' 5,439 requests and answers between two processes
    /// none is stamped before its cause and the closest follows it by
    /// 0.23 ms; every recorded trace conforms with no window at all.
    pub concurrency_ns: u64,
    /// Nodes (state, position) the search may visit in all.
    pub max_nodes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            silent_steps: 12,
            concurrency_ns: 1_000_000,
            max_nodes: 5_000_000,
        }
    }
}

/// What a trace cannot see of the model's steps, beyond the steps that
/// change nothing observed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unseen {
    /// Actors no longer observed at the end (a broker stopped for good):
    /// a run to rest may change them.
    pub at_end: Vec<String>,
    /// The trace does not show the lock calls brokers take (it names their
    /// queues without their topics): the model's are silent.
    pub lock_calls: bool,
    /// Client ids whose lock calls the trace does not show: the model's
    /// calls of these clients are silent.
    pub lock_calls_of: Vec<String>,
    /// The trace shows no broker's member table (a FIFO group's gRPC
    /// clients, which no broker lists): the model's are silent.
    pub members: bool,
}

impl Unseen {
    /// `action` where the trace sees the calls it makes brokers take, else
    /// none: [`changes`] then shows no lock call of it.
    fn calls_of<'a>(&self, cfg: &Config, action: &'a Action) -> Option<&'a Action> {
        let caller = match action {
            Action::Deliver(env) => match env.src {
                Peer::Consumer(c) => cfg.consumers.get(usize::from(c)),
                _ => None,
            },
            _ => None,
        };
        let hidden =
            self.lock_calls || caller.is_some_and(|c| self.lock_calls_of.contains(&c.client_id));
        (!hidden).then_some(action)
    }

    /// `changes` but those the trace cannot see.
    fn shown(&self, mut changes: Vec<Observed>) -> Vec<Observed> {
        if self.members {
            changes.retain(|c| !matches!(c, Observed::Members { .. }));
        }
        changes
    }
}

/// How a trace ends, which the run of the model that explains it must
/// match too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// The run ended with the group at rest (every running consumer has
    /// rebalanced twice since the last change, and no broker lists an
    /// entry that will expire): the model's run must come to rest too,
    /// quiescent after silent steps only. Nothing it still had to do may
    /// be assumed not to have happened yet, since the trace shows that its
    /// effect never came.
    AtRest,
    /// The trace stops where it stops (cut short, or a wait timed out):
    /// a step still to come may not have happened yet.
    #[default]
    Open,
}

/// The answer of [`conform`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Some run of the model explains every observation.
    Conforms,
    /// No run of the model explains the observation at `unexplained`, and
    /// no bound cut the search short.
    Mismatch,
    /// No run explained the whole trace within the bounds, and a bound cut
    /// some run short: a larger bound might explain it.
    BoundHit,
}

/// What [`conform`] found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Conformance {
    /// The answer.
    pub verdict: Verdict,
    /// Observations in all.
    pub observations: usize,
    /// The first observations, up to the model's initial state (a running
    /// group starts registered and balanced), which the search starts
    /// after.
    pub warm_up: usize,
    /// The most observations one run of the model explained.
    pub explained: usize,
    /// Nodes visited.
    pub nodes: usize,
    /// Unless it conforms: the first observation no run explained (an
    /// index into the observations), or their number when every one was
    /// explained and no such run came to rest as the trace does
    /// ([`End::AtRest`]).
    pub unexplained: Option<usize>,
    /// Unless it conforms: a state of the model in which it could not be
    /// explained, one line per actor.
    pub state: Vec<String>,
    /// The steps the model had in that state.
    pub enabled: Vec<String>,
    /// The steps of the run that explained the most, in RocketMQ's words,
    /// each observed one followed by the observation it explains.
    pub explanation: Vec<String>,
    /// The model's path to that state, as indices into each state's
    /// actions (`explorer_indices` turns them into the explorer's).
    #[serde(skip)]
    pub path: Vec<u32>,
    /// Whether a bound (silent steps or nodes) cut a run short.
    pub bound_hit: bool,
}

/// One node: its state and the tables the trace has shown by then, packed
/// (until it is expanded), the observations explained so far (`next`, the
/// first unexplained, and `ahead`, those after it already explained, as
/// bits from `next + 1`), and the silent steps taken since the last.
struct Node {
    state: Option<Packed>,
    next: usize,
    ahead: u64,
    silent: usize,
    parent: Option<usize>,
    /// The action index in the parent state (none where the node only
    /// explains checks its parent's state has), and what it explained.
    via: Option<(Option<u32>, Vec<usize>)>,
}

/// The observable values a run of observations has reached: the latest
/// value of each key (a broker's members, a consumer's life, its queues of
/// a topic), without those at their start value.
fn fold<'a>(observed: impl IntoIterator<Item = &'a Observed>) -> HashMap<String, &'a Observed> {
    let mut values = HashMap::new();
    for o in observed {
        let key = match o {
            Observed::Members { broker, .. } => format!("members {broker}"),
            Observed::Owns {
                consumer, topic, ..
            } => format!("owns {consumer} {topic}"),
            Observed::Started { consumer }
            | Observed::ShutDown { consumer }
            | Observed::Died { consumer } => format!("life {consumer}"),
            // A fault, a call or a batch is an event, no value of the state.
            Observed::Faulted { .. }
            | Observed::FailedOver { .. }
            | Observed::Locked { .. }
            | Observed::Consumes { .. } => continue,
        };
        values.insert(key, o);
    }
    values.retain(|_, o| match o {
        Observed::Members { clients, .. } => !clients.is_empty(),
        Observed::Owns { queues, .. } => !queues.is_empty(),
        _ => true,
    });
    values
}

/// The first position after which the observations have shown the model's
/// initial state (0 for a cold start), if they ever do.
fn warm_up(initial: &[Observed], observations: &[Observation]) -> Option<usize> {
    let target = fold(initial);
    if target.is_empty() {
        return Some(0);
    }
    (1..=observations.len()).find(|&n| fold(observations[..n].iter().map(|o| &o.what)) == target)
}

/// Decides whether the observations are a behaviour of `model`: whether
/// some run from its initial state makes exactly these changes, in this
/// order up to the concurrency window, with at most `bounds.silent_steps`
/// unseen steps between two of them, and ends as the trace does (`end`);
/// what the trace cannot see is `unseen`.
pub fn conform(
    model: &RebalanceModel,
    observations: &[Observation],
    bounds: Bounds,
    end: End,
    unseen: &Unseen,
) -> Conformance {
    let cfg = &*model.cfg;
    let initial = model.initial_state();
    let (initial_seen, initial_shown) = initial_observables(cfg, &initial);
    let start = warm_up(&initial_seen, observations);
    let mut result = Conformance {
        verdict: Verdict::Mismatch,
        observations: observations.len(),
        warm_up: start.unwrap_or(0),
        explained: 0,
        nodes: 0,
        unexplained: None,
        state: Vec::new(),
        enabled: Vec::new(),
        explanation: Vec::new(),
        path: Vec::new(),
        bound_hit: false,
    };
    // An observation no state has is a mismatch whatever the search would
    // find before it: decided at once, and not a bound hit.
    let never = observations
        .iter()
        .enumerate()
        .find_map(|(i, o)| impossible(cfg, &o.what).map(|why| (i, o, why)));
    if let Some((i, _, why)) = never {
        let why = format!("no state of the model has it ({why})");
        return decided(result, model, &initial, observations, i, &why);
    }
    let Some(start) = start else {
        // The trace never shows the group the model starts with.
        result.unexplained = Some(observations.len().saturating_sub(1));
        result.state = describe_state(model, &initial);
        result.explanation = initial_seen
            .iter()
            .map(|o| format!("the model starts with: {o}"))
            .collect();
        return result;
    };
    // So is a batch no table shown around it has: the tables shown are
    // the observations'.
    if let Some((i, why)) = unheld(
        cfg,
        &initial_shown,
        observations,
        start,
        bounds.concurrency_ns,
    ) {
        let why = format!("no run of the model has it ({why})");
        return decided(result, model, &initial, observations, i, &why);
    }
    // Parts are few: a state's parts take a few thousand values where its
    // combinations take millions.
    let interner = Interner::new(1 << 16);
    let mut records = Records::new(model, &interner);
    let Some(first) = records.put(&initial, &initial_shown) else {
        result.bound_hit = true;
        result.verdict = Verdict::BoundHit;
        return result;
    };
    let mut nodes = vec![Node {
        state: Some(first),
        next: start,
        ahead: 0,
        silent: 0,
        parent: None,
        via: None,
    }];
    let mut seen: HashMap<(u64, usize, u64), usize> = HashMap::new();
    seen.insert((key_of(&initial, &initial_shown), start, 0), 0);
    // Most explained first, then fewest silent steps, then oldest.
    let priority = |node: &Node, index: usize| {
        let explained = node.next + node.ahead.count_ones() as usize;
        (explained, Reverse(node.silent), Reverse(index))
    };
    let mut queue = BinaryHeap::from([priority(&nodes[0], 0)]);
    let mut best = 0usize;
    let mut actions = Vec::new();
    while let Some((_, _, Reverse(n))) = queue.pop() {
        let (next, ahead, silent) = (nodes[n].next, nodes[n].ahead, nodes[n].silent);
        if next == observations.len() {
            best = n;
            // A run to rest is looked for where the last observation was
            // explained; the search's own silent steps from there, checked
            // at each state, decide where it finds none.
            let rest = match (end, &nodes[n].state) {
                (End::Open, _) => Some(Vec::new()),
                (End::AtRest, Some(packed)) if silent == 0 => {
                    let state = records.state(*packed);
                    to_rest(model, &state, records.shown(*packed), unseen)
                }
                (End::AtRest, Some(packed)) => {
                    at_rest(model, &records.state(*packed)).then(Vec::new)
                }
                (End::AtRest, None) => None,
            };
            if let Some(steps) = rest {
                // The run to rest is the end of the run reported.
                for index in steps {
                    nodes.push(Node {
                        state: None,
                        next,
                        ahead,
                        silent: 0,
                        parent: Some(best),
                        via: Some((Some(index), Vec::new())),
                    });
                    best = nodes.len() - 1;
                }
                result.verdict = Verdict::Conforms;
                break;
            }
        }
        if next > nodes[best].next {
            best = n;
        }
        let Some(packed) = nodes[n].state.take() else {
            continue;
        };
        let state = records.state(packed);
        let shown = records.shown(packed).clone();
        // A check the state has is explained at once: it changes nothing,
        // so explaining it later could explain no more.
        if let Some((next2, ahead2, checked)) =
            check(cfg, observations, next, ahead, &state, &shown, bounds)
        {
            let key = (key_of(&state, &shown), next2, ahead2);
            if seen.contains_key(&key) {
                continue;
            }
            if nodes.len() >= bounds.max_nodes {
                result.bound_hit = true;
                break;
            }
            seen.insert(key, nodes.len());
            let node = Node {
                state: Some(packed),
                next: next2,
                ahead: ahead2,
                silent: 0,
                parent: Some(n),
                via: Some((None, checked)),
            };
            queue.push(priority(&node, nodes.len()));
            nodes.push(node);
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for (index, &action) in actions.iter().enumerate() {
            let Some(after) = model.next_state(&state, action) else {
                continue;
            };
            let mut shown2 = shown.clone();
            let calls = unseen.calls_of(cfg, &action);
            let seen_changes = unseen.shown(changes(cfg, &state, calls, &after, &mut shown2));
            let past_end = next == observations.len();
            let (next2, ahead2, silent2, explained) = if seen_changes.is_empty()
                || (past_end && unobserved(&seen_changes, &unseen.at_end))
            {
                (next, ahead, silent + 1, Vec::new())
            } else if past_end {
                // Past the end: a change the trace does not show.
                continue;
            } else {
                match explain(observations, next, ahead, &seen_changes, bounds) {
                    Some((next2, ahead2, explained)) => (next2, ahead2, 0, explained),
                    None => continue,
                }
            };
            let key = (key_of(&after, &shown2), next2, ahead2);
            if let Some(&old) = seen.get(&key) {
                // Reached again with no fewer silent steps: nothing new.
                if nodes[old].silent <= silent2 {
                    continue;
                }
            }
            // Only a silent step to somewhere new is cut by the bound.
            if silent2 > bounds.silent_steps {
                result.bound_hit = true;
                continue;
            }
            if nodes.len() >= bounds.max_nodes {
                result.bound_hit = true;
                queue.clear();
                break;
            }
            let Some(packed) = records.put(&after, &shown2) else {
                result.bound_hit = true;
                queue.clear();
                break;
            };
            seen.insert(key, nodes.len());
            let node = Node {
                state: Some(packed),
                next: next2,
                ahead: ahead2,
                silent: silent2,
                parent: Some(n),
                via: Some((Some(index as u32), explained)),
            };
            queue.push(priority(&node, nodes.len()));
            nodes.push(node);
        }
    }
    result.nodes = nodes.len();
    if result.verdict != Verdict::Conforms && result.bound_hit {
        result.verdict = Verdict::BoundHit;
    }
    let node = &nodes[best];
    result.explained = node.next - start + node.ahead.count_ones() as usize;
    // The warm-up, then the run that explained the most, from its start.
    result.explanation = observations[..start]
        .iter()
        .map(|o| {
            format!(
                "line {}: {} (warm-up, up to the model's initial state)",
                o.line, o.what
            )
        })
        .collect();
    let mut chain = Vec::new();
    let mut at = Some(best);
    while let Some(i) = at {
        chain.push(i);
        at = nodes[i].parent;
    }
    chain.reverse();
    // Replayed from the initial state: expanded nodes keep no state.
    let steps: Vec<&(Option<u32>, Vec<usize>)> = chain[1..]
        .iter()
        .filter_map(|&i| nodes[i].via.as_ref())
        .collect();
    result.path = steps.iter().filter_map(|(index, _)| *index).collect();
    let indices: Vec<u32> = std::iter::once(0)
        .chain(result.path.iter().copied())
        .collect();
    let mut replayed = replay(model, &indices);
    let state = replayed.pop().map_or(initial, |(state, _)| state);
    let mut taken = replayed.iter();
    for (index, explained) in &steps {
        let step = index.and_then(|_| taken.next());
        if let Some((before, Some(action))) = step {
            result
                .explanation
                .push(describe_action(model, Some(before), action));
        }
        for &o in explained {
            let obs = &observations[o];
            result
                .explanation
                .push(format!("   = line {}: {}", obs.line, obs.what));
        }
    }
    if result.verdict != Verdict::Conforms {
        result.unexplained = Some(node.next);
        if let Some(o) = observations.get(node.next).filter(|o| o.what.is_check()) {
            result.explanation.push(format!(
                "line {}: {}: no state of a run that explains what comes before it has it",
                o.line, o.what
            ));
        }
        result.state = describe_state(model, &state);
        actions.clear();
        model.actions(&state, &mut actions);
        result.enabled = actions
            .iter()
            .map(|a| describe_action(model, Some(&state), a))
            .collect();
    }
    result
}

/// `result` as a mismatch at observation `i`, decided before any search
/// for the reason `why`.
fn decided(
    mut result: Conformance,
    model: &RebalanceModel,
    initial: &SystemState,
    observations: &[Observation],
    i: usize,
    why: &str,
) -> Conformance {
    let o = &observations[i];
    result.unexplained = Some(i);
    result.state = describe_state(model, initial);
    result.explanation = vec![format!("line {}: {}: {why}", o.line, o.what)];
    result
}

/// A node's state and tables shown, as [`Records`] keeps them: the state's
/// record and the tables' id.
#[derive(Clone, Copy)]
struct Packed {
    record: u32,
    shown: u32,
}

/// The nodes' states, packed: each a record of `width` lanes, the ids of
/// its parts; and the tables shown, each distinct one kept once.
struct Records<'m> {
    codec: Codec<'m, RebalanceModel>,
    lanes: Vec<u32>,
    width: usize,
    shown: Interner<Shown>,
}

impl<'m> Records<'m> {
    fn new(
        model: &'m RebalanceModel,
        parts: &'m Interner<<RebalanceModel as Packing>::Part>,
    ) -> Self {
        Records {
            codec: Codec::new(model, parts),
            lanes: Vec::new(),
            width: model.parts(),
            shown: Interner::new(1 << 12),
        }
    }

    /// Stores `state` and `shown`, or `None` when there is no more room (a
    /// bound: the interners' billion values, or four billion records).
    fn put(&mut self, state: &SystemState, shown: &Shown) -> Option<Packed> {
        let record = u32::try_from(self.lanes.len() / self.width).ok()?;
        let shown = self.shown.id(shown).ok()?;
        let start = self.lanes.len();
        self.lanes.resize(start + self.width, 0);
        if self.codec.encode(state, &mut self.lanes[start..]).is_err() {
            self.lanes.truncate(start);
            return None;
        }
        Some(Packed { record, shown })
    }

    /// The state stored as `packed`.
    fn state(&mut self, packed: Packed) -> SystemState {
        let start = packed.record as usize * self.width;
        self.codec
            .decode(&self.lanes[start..start + self.width])
            .expect("a record this search stored")
    }

    /// The tables shown stored as `packed`.
    fn shown(&self, packed: Packed) -> &Shown {
        self.shown
            .value(packed.shown)
            .expect("tables this search stored")
    }
}

/// A node's identity: its state's fingerprint and the tables shown, which
/// decide what its successors show.
fn key_of(state: &SystemState, shown: &Shown) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (fingerprint(state), shown).hash(&mut hasher);
    hasher.finish()
}

/// The longest run to rest [`to_rest`] tries: several times what a group
/// at rest needs (each consumer's messages on their way, a due rebalance
/// and a round of periodic work: at most 22 steps in the recorded runs),
/// so that a walk that wanders stops.
const REST_STEPS: usize = 100;

/// Whether `state` is at rest as the harness ends a run at rest: quiescent,
/// and no running consumer's table still holds a dropped queue. The
/// harness waits until every running consumer has rebalanced twice since
/// the last change, and each round tries a dropped queue's removal again,
/// so a removal that waited for its batch is done by then.
fn at_rest(model: &RebalanceModel, state: &SystemState) -> bool {
    Group::of(model, state).quiescent()
        && state
            .consumers
            .iter()
            .all(|c| c.phase != Phase::Running || c.dropped() == 0)
}

/// A run of the model from `state` to rest (quiescent) by steps the trace
/// cannot see, if one is found within [`REST_STEPS`]: the action index of
/// each. It is a witness, found greedily: a message on its way first, then
/// a timer that is due, then periodic work, each time to a state this run
/// has not been in; it may change the actors `unseen` at the end. Where it finds
/// none, the search goes on from `state` within its own bounds, which
/// decide.
fn to_rest(
    model: &RebalanceModel,
    state: &SystemState,
    shown: &Shown,
    unseen: &Unseen,
) -> Option<Vec<u32>> {
    let cfg = &*model.cfg;
    let mut state = state.clone();
    let mut been = std::collections::HashSet::from([fingerprint(&state)]);
    let mut steps = Vec::new();
    let mut actions = Vec::new();
    while steps.len() < REST_STEPS {
        if at_rest(model, &state) {
            return Some(steps);
        }
        actions.clear();
        model.actions(&state, &mut actions);
        let mut ranked: Vec<(u8, usize)> = actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| rest_rank(a).map(|r| (r, i)))
            .collect();
        ranked.sort_unstable();
        let (index, after) = ranked.into_iter().find_map(|(_, i)| {
            let after = model.next_state(&state, actions[i])?;
            // Only the unobserved actors change: the tables shown stay.
            let calls = unseen.calls_of(cfg, &actions[i]);
            let fresh = unobserved(
                &unseen.shown(changes(cfg, &state, calls, &after, &mut shown.clone())),
                &unseen.at_end,
            ) && been.insert(fingerprint(&after));
            fresh.then_some((i, after))
        })?;
        steps.push(index as u32);
        state = after;
    }
    None
}

/// Whether the trace no longer sees any of `changes`: each is of an actor
/// in `unobserved` (none is, when there are none).
fn unobserved(changes: &[Observed], unobserved: &[String]) -> bool {
    changes
        .iter()
        .all(|c| unobserved.iter().any(|u| u == c.actor()))
}

/// How soon a run to rest takes `action`: a delivery first, then a timer
/// that is due, then periodic work; never a step of the environment (a
/// fault), which a run at rest does not take.
fn rest_rank(action: &Action) -> Option<u8> {
    match action {
        Action::Deliver(_) => Some(0),
        Action::Timeout(_, timer) => Some(match timer {
            Timer::Rebalance { .. }
            | Timer::Connect { .. }
            | Timer::ChannelActive { .. }
            | Timer::Start
            | Timer::Heal
            | Timer::Pull { .. }
            | Timer::Done { .. } => 1,
            Timer::PeriodicRebalance
            | Timer::Heartbeat
            | Timer::Persist
            | Timer::LockAll
            | Timer::SyncOffsets
            | Timer::ReloadGroupConfig => 2,
        }),
        Action::Elapse { .. } => Some(3),
        Action::Fault(..) => None,
    }
}

/// Matches a step's changes with observations not yet explained: each to
/// the first one equal to it that nothing orders after another one still
/// unexplained (an earlier observation of the same actor, or any more than
/// the concurrency window before it), the earliest such match first, so
/// that a step's changes match in whatever order the trace shows them (a
/// model's lock call of two queues is Java's two calls, in its set's
/// order). Gives the new position and the observations it explained.
fn explain(
    observations: &[Observation],
    next: usize,
    ahead: u64,
    step: &[Observed],
    bounds: Bounds,
) -> Option<(usize, u64, Vec<usize>)> {
    let window_start = observations[next].t;
    let mut taken = ahead;
    let mut explained = Vec::with_capacity(step.len());
    let mut left: Vec<&Observed> = step.iter().collect();
    // One machine's step makes all its changes at once, where the real
    // process makes them one after another: after the first, the step's
    // changes of the same actor are that actor's next observations
    // whenever they came.
    let mut actor = None;
    while !left.is_empty() {
        let done =
            |j: usize| explained.contains(&j) || (j > next && taken & (1 << (j - next - 1)) != 0);
        let matches = |change: &Observed| {
            (next..observations.len().min(next + 64)).find(|&i| {
                let o = &observations[i];
                let same_step = actor == Some(o.what.actor());
                if done(i)
                    || (i != next
                        && !same_step
                        && o.t.abs_diff(window_start) > bounds.concurrency_ns)
                {
                    return false;
                }
                // A check is no step of its actor: it orders nothing.
                let blocked = (next..i).any(|j| {
                    let before = &observations[j].what;
                    !done(j) && !before.is_check() && before.actor() == o.what.actor()
                });
                !blocked && o.what == *change
            })
        };
        let (k, found) = left
            .iter()
            .enumerate()
            .filter_map(|(k, change)| matches(change).map(|i| (k, i)))
            .min_by_key(|&(_, i)| i)?;
        left.swap_remove(k);
        actor.get_or_insert(observations[found].what.actor());
        explained.push(found);
        if found > next {
            taken |= 1 << (found - next - 1);
        }
    }
    let (next2, ahead2) = advance(next, taken, explained.contains(&next));
    Some((next2, ahead2, explained))
}

/// The observations not yet explained that a step may explain now:
/// `next`, and those of the 63 after it within the concurrency window of
/// it (the bits of `ahead` the explained ones).
fn within_window(
    observations: &[Observation],
    next: usize,
    ahead: u64,
    bounds: Bounds,
) -> impl Iterator<Item = usize> + '_ {
    let window_start = observations.get(next).map_or(0, |o| o.t);
    (next..observations.len().min(next + 64)).filter(move |&i| {
        let done = i > next && ahead & (1 << (i - next - 1)) != 0;
        i == next || (!done && observations[i].t.abs_diff(window_start) <= bounds.concurrency_ns)
    })
}

/// The new position when the observations after `next` in `taken` are
/// explained, and `next` too if `next_explained`: past every explained one
/// after it.
fn advance(next: usize, taken: u64, next_explained: bool) -> (usize, u64) {
    let (mut next2, mut ahead2) = (next, taken);
    if next_explained {
        next2 += 1;
        while ahead2 & 1 != 0 {
            ahead2 >>= 1;
            next2 += 1;
        }
        ahead2 >>= 1;
    }
    (next2, ahead2)
}

/// The checks not yet explained that `state` has and that may be
/// explained in it: the observation at `next`, and those after it within
/// the concurrency window (a process's consuming threads run beside its
/// rebalance, so a batch's start is ordered by no event of its own
/// process). Gives the new position and the checks explained, if any was.
fn check(
    cfg: &Config,
    observations: &[Observation],
    next: usize,
    ahead: u64,
    state: &SystemState,
    shown: &Shown,
    bounds: Bounds,
) -> Option<(usize, u64, Vec<usize>)> {
    let mut taken = ahead;
    let mut explained = Vec::new();
    for i in within_window(observations, next, ahead, bounds) {
        let o = &observations[i].what;
        if o.is_check() && has(cfg, state, shown, o) {
            explained.push(i);
            if i > next {
                taken |= 1 << (i - next - 1);
            }
        }
    }
    if explained.is_empty() {
        return None;
    }
    let (next2, ahead2) = advance(next, taken, explained[0] == next);
    Some((next2, ahead2, explained))
}

/// The name of trace validation's one verdict in a [`Report`].
pub const CONFORMS: &str = "the real trace is a behaviour of the model";

impl Conformance {
    /// The answer as a check's report, for the pages `check` draws: one
    /// property, [`CONFORMS`], whose trace is the run that explained the
    /// most (a counterexample when it does not conform, an example when it
    /// does), replayable on `model`.
    pub fn report(&self, model: &RebalanceModel, seconds: f64) -> Report {
        let cfg = &*model.cfg;
        let status = match self.verdict {
            Verdict::Conforms => Status::Holds,
            Verdict::Mismatch => Status::Violated,
            Verdict::BoundHit => Status::Unknown,
        };
        let path: Vec<u32> = std::iter::once(0)
            .chain(self.path.iter().copied())
            .collect();
        let mut trace = self.explanation.clone();
        match self.unexplained {
            Some(i) if i == self.observations => trace.push(
                "-- the end: the run ended at rest, and no run of the model that explains every \
                 observation comes to rest without a change the trace does not show --"
                    .to_owned(),
            ),
            Some(i) => trace.push(format!(
                "-- observation {} of {}: no step of the model explains it --",
                i + 1,
                self.observations
            )),
            None => {}
        }
        Report {
            scenario: cfg.scenario,
            strategy: cfg.strategy.name().to_owned(),
            network: cfg.network,
            sizes: cfg.sizes,
            protocol: cfg.protocol,
            stopped: if self.bound_hit {
                Stopped::StateLimit
            } else {
                Stopped::Exhausted
            },
            states: self.nodes,
            unique_states: self.nodes,
            max_depth: self.path.len(),
            seconds,
            unique_states_per_second: self.nodes as f64 / seconds.max(1e-9),
            properties: vec![PropertyReport {
                name: CONFORMS.to_owned(),
                expectation: Expectation::Always,
                status,
                trace: Some(trace),
                explorer_path: Some(format!("#/steps/{}", encode_path(&path))),
                path: Some(path),
                cycle_start: None,
            }],
            liveness: None,
            harms: None,
            // Every node is expanded: there is no reduction here.
            generated_per_unique: 1.0,
            reduction: false,
            fingerprint_bits: 64,
            collision_probability: collision_probability(self.nodes, 64),
        }
    }
}
