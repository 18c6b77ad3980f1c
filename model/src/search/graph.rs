//! The reachable state graph of any Stateright [`Model`], built breadth-first
//! and stored compactly, for the checks Stateright does not do itself:
//! liveness under fairness ([`super::fair_cycle`]) and shortest
//! counterexamples.
//!
//! States are not kept: each is known by a 64-bit fingerprint, its BFS parent
//! and which of the parent's successors it is, and its outgoing edges. Any
//! state is rebuilt by replaying successor positions from an initial state;
//! [`explorer_indices`] turns them into the path format of Stateright's
//! Explorer (`init/action/action/...`, indices among all actions, no-ops
//! included).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::{Duration, Instant};

use stateright::Model;

use super::pages::{Pages, Strings};

/// A state's index in the graph.
pub type StateId = u32;

/// Where exploration stops early.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many unique states.
    pub max_states: Option<usize>,
    /// Stop after this much time.
    pub timeout: Option<Duration>,
    /// Stop as soon as a state fails the predicate: enough to find the
    /// shortest path to one (see `shortest_path_to_bad`).
    pub stop_at_bad: bool,
    /// Threads that expand states (0 and 1: the caller's alone). The graph
    /// is the same with any number.
    pub threads: usize,
}

/// Why an exploration did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `max_states` was reached.
    StateLimit,
    /// `timeout` passed.
    Timeout,
    /// Some states lie outside `Model::within_boundary` (a bounded model,
    /// or a run asked to stop) and were not expanded.
    Boundary,
    /// A state has more actions than an edge's action index can name.
    TooManyActions,
    /// More fairness classes than an edge's class index can name.
    TooManyClasses,
    /// More edges than 4 GiB of the graph's encoding hold.
    TooLarge,
}

/// Serialised as its description.
impl serde::Serialize for Cutoff {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for Cutoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cutoff::StateLimit => "state limit reached",
            Cutoff::Timeout => "timeout",
            Cutoff::Boundary => "states outside the model's boundary",
            Cutoff::TooManyActions => "a state with more than 65,535 actions",
            Cutoff::TooManyClasses => "more than 65,535 fairness classes",
            Cutoff::TooLarge => "more than 4 GiB of edges",
        })
    }
}

/// One transition: the state's `successor`th action that changes it leads
/// to `target`. No-op actions are not edges; see [`Graph::noops`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The state reached.
    pub target: StateId,
    /// The edge's position among the state's edges, which are in action
    /// order ([`explorer_indices`] finds the action's index).
    pub successor: u32,
    /// The action's fairness class, if it is under fairness.
    pub class: Option<u64>,
}

/// The reachable state graph.
#[derive(Debug, PartialEq, Eq)]
pub struct Graph {
    /// BFS parent ([`NO_PARENT`] for initial states, whose own index is
    /// kept in `init_index`).
    parent: Pages<StateId>,
    /// Which of its parent's successors each state is, kept only when
    /// edges are not ([`Limits::stop_at_bad`]): otherwise it is the first
    /// edge of the parent that leads to the state.
    parent_successor: Pages<u16>,
    init_index: Vec<u32>,
    /// Edges and no-ops of state `s`: the string of `edges` that starts at
    /// `offsets[s]` (each kept whole in one page, see [`Strings`]),
    /// variable-length integers ([`write_varint`]): the
    /// number of edges; per edge, in action order, its target's distance
    /// from `s` (zigzag: most targets lie near their source in BFS order)
    /// and its class index plus one (0: under no fairness); then each
    /// no-op action's class index. Class indices point into `class_table`,
    /// the first classes met (the most frequent) getting the shortest
    /// codes. An edge's successor position is its place in the list, so it
    /// is not stored.
    offsets: Pages<u32>,
    edges: Strings,
    edge_count: usize,
    /// The distinct fairness classes, each stored once.
    class_table: Vec<u64>,
    /// Which goals each state meets, one bit each ([`Classify::goals`]);
    /// bit 0 is [`Classify::good`].
    goals: Pages<u8>,
    /// The first state discovered (so one with fewest steps) that fails the
    /// predicate.
    first_bad: Option<StateId>,
    /// The first state discovered with each bit of
    /// [`Classify::discoveries`].
    first_discovery: [Option<StateId>; 64],
    /// Some state was outside the boundary and not expanded.
    pruned: bool,
    /// Set when exploration stopped early: the graph is then partial.
    pub cutoff: Option<Cutoff>,
}

/// A 64-bit hash that is the same in every run (fixed keys, unlike a
/// randomly keyed hasher), so that graphs and fairness classes are
/// reproducible. aHash, as Stateright's own fingerprints.
pub fn fingerprint<T: Hash>(value: &T) -> u64 {
    ahash::RandomState::with_seeds(0x5EED, 0xFA1E, 0xC0DE, 0xBEEF).hash_one(value)
}

/// Keys that are already fingerprints need no second hash (the graph's
/// and the safety search's seen sets, 64- or 128-bit).
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64 ^ (n >> 64) as u64;
    }
}

/// The bit that marks a fairness class as strong: an action enabled
/// infinitely often must be taken infinitely often (the fairness of a random
/// choice made again and again). Classes without it are weak: an action
/// enabled continuously must be taken.
pub const STRONG: u64 = 1 << 63;

/// Edges of one state as (target, class index), decoded from the graph's
/// bytes ([`Graph::raw_edges`]).
#[derive(Clone, Debug)]
pub(crate) struct RawEdges<'g> {
    bytes: &'g [u8],
    source: StateId,
    at: usize,
    left: usize,
}

impl Iterator for RawEdges<'_> {
    type Item = (StateId, u16);

    fn next(&mut self) -> Option<(StateId, u16)> {
        self.left = self.left.checked_sub(1)?;
        let (distance, at) = read_varint(self.bytes, self.at);
        let (class, at) = read_varint(self.bytes, at);
        self.at = at;
        let target = i64::from(self.source) + unzigzag(distance);
        Some((target as StateId, (class as u16).wrapping_sub(1)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for RawEdges<'_> {}

/// Appends `value` in LEB128: seven bits a byte, low bits first, the high
/// bit set on every byte but the last.
fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The LEB128 integer at `bytes[at..]` and where the next one begins. The
/// graph only reads what it wrote, so a truncated integer is not expected;
/// it reads as what it has.
fn read_varint(bytes: &[u8], mut at: usize) -> (u64, usize) {
    let mut value = 0u64;
    let mut shift = 0;
    while let Some(&byte) = bytes.get(at) {
        at += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 || shift >= 63 {
            break;
        }
        shift += 7;
    }
    (value, at)
}

/// A signed distance as an unsigned integer that is small when the
/// distance is: 0, -1, 1, -2, ... become 0, 1, 2, 3, ...
fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}

/// The fingerprint map: fingerprints are already hashes.
type Ids = HashMap<u64, StateId, BuildHasherDefault<PassThrough>>;

/// Every recorded state's id by fingerprint, in shards, one per thread, so
/// that the threads add a round's new ids side by side.
struct Known {
    shards: Vec<Ids>,
}

impl Known {
    fn new(shards: usize) -> Self {
        Self {
            shards: (0..shards).map(|_| Ids::default()).collect(),
        }
    }

    /// The shard of a fingerprint: from bits that neither a map's bucket
    /// index (the low bits) nor its tag (the top seven) uses.
    fn shard(shards: usize, print: u64) -> usize {
        (print >> 32 & 0xffff) as usize % shards
    }

    fn get(&self, print: u64) -> Option<StateId> {
        let shard = &self.shards[Self::shard(self.shards.len(), print)];
        shard.get(&print).copied()
    }

    /// Adds the ids of `recent`, sharded as these, each shard on a thread
    /// of its own (the caller's for the first).
    fn add(&mut self, recent: &mut [Ids]) {
        let mut pairs = self.shards.iter_mut().zip(recent);
        let Some((first, first_new)) = pairs.next() else {
            return;
        };
        std::thread::scope(|scope| {
            for (shard, new) in pairs {
                scope.spawn(move || shard.extend(new.drain()));
            }
            first.extend(first_new.drain());
        });
    }
}

/// States a thread expands between two merges: small enough that the
/// successors held meanwhile take little memory, large enough that
/// starting the threads costs nothing measurable.
const CHUNK: usize = 2048;

/// A successor that was not in the graph when its chunk began, with what
/// the graph records of it.
struct Fresh<S> {
    fingerprint: u64,
    goals: u8,
    discoveries: u64,
    /// Within the model's boundary, so to be expanded.
    inside: bool,
    state: S,
}

impl<S: Hash> Fresh<S> {
    fn of<M, C>(model: &M, classify: &C, fingerprint: u64, state: S) -> Self
    where
        M: Model<State = S>,
        C: Classify<M>,
    {
        Fresh {
            fingerprint,
            goals: classify.goals(model, &state),
            discoveries: classify.discoveries(model, &state),
            inside: model.within_boundary(&state),
            state,
        }
    }
}

/// Where an action leads.
#[derive(Clone, Copy)]
enum Next {
    /// Nowhere: it changes nothing.
    Unchanged,
    /// To a state the graph already has.
    Known(StateId),
    /// To one of the expansion's fresh states (by its index there): one
    /// the graph did not have when the chunk began. Another thread's share
    /// of the chunk may reach it first.
    Fresh(u32),
}

/// One thread's share of a chunk: the states to expand, then, once
/// expanded, their ids, each one's action count (`None`: more than an
/// edge's successor position can name), every action's class and where it
/// leads, in order, and the fresh states reached.
struct Expansion<S> {
    sources: Vec<(StateId, S)>,
    ids: Vec<StateId>,
    counts: Vec<Option<u16>>,
    outcomes: Vec<(Option<u64>, Next)>,
    fresh: Vec<Fresh<S>>,
    /// The fresh states' fingerprints and indices: a state reached twice in
    /// one share is kept once.
    fresh_index: Ids,
    /// The ids the fresh states got, in index order.
    fresh_ids: Vec<StateId>,
}

impl<S> Default for Expansion<S> {
    fn default() -> Self {
        Self {
            sources: Vec::new(),
            ids: Vec::new(),
            counts: Vec::new(),
            outcomes: Vec::new(),
            fresh: Vec::new(),
            fresh_index: Ids::default(),
            fresh_ids: Vec::new(),
        }
    }
}

/// Every action of every state of `expansion.sources`: its class and where
/// it leads, judged against the states of `ids`. Each state is dropped
/// once expanded, so that its successors reuse its memory.
fn expand<M, C>(
    model: &M,
    classify: &C,
    ids: &Known,
    stop_at_bad: bool,
    expansion: &mut Expansion<M::State>,
) where
    M: Model,
    M::State: Hash,
    M::Action: Clone,
    C: Classify<M>,
{
    expansion.ids.clear();
    expansion.counts.clear();
    expansion.outcomes.clear();
    expansion.fresh.clear();
    expansion.fresh_index.clear();
    expansion.fresh_ids.clear();
    let mut actions = Vec::new();
    for (id, state) in expansion.sources.drain(..) {
        expansion.ids.push(id);
        let state = &state;
        actions.clear();
        model.actions(state, &mut actions);
        let Ok(count) = u16::try_from(actions.len()) else {
            expansion.counts.push(None);
            continue;
        };
        expansion.counts.push(Some(count));
        for action in &actions {
            // A search for one bad state needs no classes.
            let class = if stop_at_bad {
                None
            } else {
                classify.class(model, state, action)
            };
            let next = match model.next_state(state, action.clone()) {
                None => Next::Unchanged,
                Some(next) => {
                    let print = fingerprint(&next);
                    if let Some(known) = ids.get(print) {
                        Next::Known(known)
                    } else if let Some(&index) = expansion.fresh_index.get(&print) {
                        Next::Fresh(index)
                    } else {
                        let index = expansion.fresh.len() as u32;
                        expansion.fresh_index.insert(print, index);
                        expansion
                            .fresh
                            .push(Fresh::of(model, classify, print, next));
                        Next::Fresh(index)
                    }
                }
            };
            expansion.outcomes.push((class, next));
        }
    }
}

/// Whether a search for one bad state has found one.
fn found_bad(limits: Limits, graph: &Graph) -> bool {
    limits.stop_at_bad && graph.first_bad.is_some()
}

/// What the thread that writes the graph keeps besides it: states get ids,
/// edges and classes here, in the order one thread expanding alone would
/// give them.
struct Recorder<'o, S> {
    limits: Limits,
    started: Instant,
    /// Each fairness class's index in the graph's class table.
    class_ids: HashMap<u64, u16, BuildHasherDefault<PassThrough>>,
    /// Ids given since the expanding threads' map was last brought up to
    /// date, sharded as it is.
    recent: Vec<Ids>,
    /// States to expand, in id order.
    frontier: VecDeque<(StateId, S)>,
    /// States below this id have their edges recorded.
    expanded: StateId,
    /// The edges and no-op classes of the state being recorded.
    edges: Vec<(StateId, u16)>,
    noops: Vec<u16>,
    /// Their encoding, before it is stored.
    encoded: Vec<u8>,
    observe: &'o mut dyn FnMut(&Graph, StateId, &S),
}

impl<S> Recorder<'_, S> {
    /// The next chunk of the frontier, shared out among the buffers.
    fn share_out(&mut self, buffers: &mut [Expansion<S>]) {
        let share = self
            .frontier
            .len()
            .min(CHUNK * buffers.len())
            .div_ceil(buffers.len());
        for buffer in buffers {
            let take = share.min(self.frontier.len());
            buffer.sources.extend(self.frontier.drain(..take));
        }
    }

    /// The class's index in the graph's table; `None` once the classes
    /// outnumber an index.
    fn intern(&mut self, graph: &mut Graph, class: Option<u64>) -> Option<u16> {
        let Some(class) = class else {
            return Some(NO_CLASS);
        };
        if let Some(&id) = self.class_ids.get(&class) {
            return Some(id);
        }
        if graph.class_table.len() >= usize::from(NO_CLASS) {
            return None;
        }
        let id = graph.class_table.len() as u16;
        graph.class_table.push(class);
        self.class_ids.insert(class, id);
        Some(id)
    }

    /// The id of a state reached from `parent`, which gets the next one if
    /// neither `ids` nor the ids given since have it.
    fn visit(
        &mut self,
        graph: &mut Graph,
        ids: &Known,
        fresh: Fresh<S>,
        parent: (StateId, u16),
    ) -> StateId {
        if let Some(known) = ids.get(fresh.fingerprint) {
            return known;
        }
        let id = graph.parent.len() as StateId;
        let shard = Known::shard(self.recent.len(), fresh.fingerprint);
        match self.recent[shard].entry(fresh.fingerprint) {
            Entry::Occupied(known) => return *known.get(),
            Entry::Vacant(new) => new.insert(id),
        };
        graph.parent.push(parent.0);
        if self.limits.stop_at_bad {
            graph.parent_successor.push(parent.1);
        }
        if fresh.goals & 1 == 0 && graph.first_bad.is_none() {
            graph.first_bad = Some(id);
        }
        graph.goals.push(fresh.goals);
        let mut discoveries = fresh.discoveries;
        while discoveries != 0 {
            let bit = discoveries.trailing_zeros() as usize;
            graph.first_discovery[bit].get_or_insert(id);
            discoveries &= discoveries - 1;
        }
        (self.observe)(graph, id, &fresh.state);
        if fresh.inside {
            self.frontier.push_back((id, fresh.state));
        } else {
            graph.pruned = true;
        }
        id
    }

    /// Records a chunk's expansion, buffer by buffer: ids for the fresh
    /// states where each is first reached, then every state's edges.
    /// Once the graph is cut off, outcomes are only drained.
    fn record(&mut self, graph: &mut Graph, ids: &Known, buffers: &mut [Expansion<S>]) {
        let limits = self.limits;
        for buffer in buffers {
            let mut outcomes = buffer.outcomes.iter().copied();
            let mut fresh = buffer.fresh.drain(..);
            let fresh_ids = &mut buffer.fresh_ids;
            for (&count, &id) in buffer.counts.iter().zip(&buffer.ids) {
                // States outside the boundary were never queued: give them
                // no edges.
                while self.expanded < id {
                    graph.end_state();
                    self.expanded += 1;
                }
                self.expanded += 1;
                if graph.cutoff.is_none() {
                    if limits
                        .max_states
                        .is_some_and(|max| graph.parent.len() >= max)
                    {
                        graph.cutoff = Some(Cutoff::StateLimit);
                    } else if limits.timeout.is_some_and(|t| self.started.elapsed() >= t) {
                        graph.cutoff = Some(Cutoff::Timeout);
                    }
                }
                let mut skip = graph.cutoff.is_some() || found_bad(limits, graph);
                if !skip && count.is_none() {
                    graph.cutoff = Some(Cutoff::TooManyActions);
                }
                let mut successor: u16 = 0;
                for (class, next) in outcomes.by_ref().take(count.map_or(0, usize::from)) {
                    // Each fresh state is visited where it is first
                    // reached, as one thread would.
                    let first_reached = match next {
                        Next::Fresh(index) if index as usize == fresh_ids.len() => fresh.next(),
                        _ => None,
                    };
                    if skip {
                        if first_reached.is_some() {
                            fresh_ids.push(NO_PARENT);
                        }
                        continue;
                    }
                    // A search for one bad state needs parents only.
                    let interned = if limits.stop_at_bad {
                        Some(NO_CLASS)
                    } else {
                        self.intern(graph, class)
                    };
                    let Some(interned) = interned else {
                        graph.cutoff = Some(Cutoff::TooManyClasses);
                        skip = true;
                        continue;
                    };
                    let target = match (next, first_reached) {
                        (Next::Known(target), _) => target,
                        (Next::Fresh(_), Some(fresh)) => {
                            let target = self.visit(graph, ids, fresh, (id, successor));
                            fresh_ids.push(target);
                            target
                        }
                        (Next::Fresh(index), None) => fresh_ids[index as usize],
                        (Next::Unchanged, _) => {
                            if class.is_some() && !limits.stop_at_bad {
                                self.noops.push(interned);
                            }
                            continue;
                        }
                    };
                    successor += 1;
                    if !limits.stop_at_bad {
                        self.edges.push((target, interned));
                    }
                }
                graph.end_state_with(id, &self.edges, &self.noops, &mut self.encoded);
                self.edges.clear();
                self.noops.clear();
            }
            buffer.ids.clear();
        }
    }
}

/// The parent of an initial state.
const NO_PARENT: StateId = StateId::MAX;

/// The class index of an action under no fairness.
pub(crate) const NO_CLASS: u16 = u16::MAX;

/// How a model's actions map to fairness classes, and which states are good.
pub trait Classify<M: Model> {
    /// The fairness class of `action` in `state` (with [`STRONG`] set for
    /// strong fairness), or `None` when the action is not under fairness (the
    /// environment: crashes, joins, losses).
    fn class(&self, model: &M, state: &M::State, action: &M::Action) -> Option<u64>;
    /// The predicate recorded per state (for liveness: converged).
    fn good(&self, model: &M, state: &M::State) -> bool;
    /// Every goal the state meets, one bit each, for checks of several
    /// "eventually always" properties on one graph; bit 0 must be
    /// [`Classify::good`], which is all there is unless overridden.
    fn goals(&self, model: &M, state: &M::State) -> u8 {
        u8::from(self.good(model, state))
    }
    /// Properties the state is a discovery of, one bit each (a
    /// counterexample of an `always` property, an example of a `sometimes`
    /// one): the graph keeps the first state found with each bit
    /// ([`Graph::first_discovery`]), so that one exploration also checks
    /// safety. None unless overridden.
    fn discoveries(&self, _model: &M, _state: &M::State) -> u64 {
        0
    }
}

impl Graph {
    /// Explores every state reachable from `model`'s initial states,
    /// breadth-first, within `limits` and `Model::within_boundary`.
    pub fn explore<M, C>(model: &M, classify: &C, limits: Limits) -> Graph
    where
        M: Model + Sync,
        M::State: Hash + Send + Sync,
        M::Action: Clone,
        C: Classify<M> + Sync,
    {
        Self::explore_observing(model, classify, limits, &mut |_, _, _| {})
    }

    /// [`Graph::explore`], handing every new state and its id to `observe`
    /// (for measures over the whole reachable space, and progress), in id
    /// order, with the graph as it stands.
    ///
    /// With `limits.threads` above 1 the states are expanded (their
    /// actions, successors, fingerprints, classes and goals worked out) by
    /// that many threads, a chunk of the frontier at a time, while the
    /// calling thread records the chunk expanded before (ids, edges and
    /// everything else) in the order one thread would have, so the graph
    /// is the same whatever the number of threads.
    pub fn explore_observing<M, C>(
        model: &M,
        classify: &C,
        limits: Limits,
        observe: &mut dyn FnMut(&Graph, StateId, &M::State),
    ) -> Graph
    where
        M: Model + Sync,
        M::State: Hash + Send + Sync,
        M::Action: Clone,
        C: Classify<M> + Sync,
    {
        let started = Instant::now();
        let mut graph = Graph {
            parent: Pages::default(),
            parent_successor: Pages::default(),
            init_index: Vec::new(),
            offsets: Pages::default(),
            edges: Strings::default(),
            edge_count: 0,
            class_table: Vec::new(),
            goals: Pages::default(),
            first_bad: None,
            first_discovery: [None; 64],
            pruned: false,
            cutoff: None,
        };
        let threads = limits.threads.max(1);
        let mut recorder = Recorder {
            limits,
            started,
            class_ids: HashMap::default(),
            recent: (0..threads).map(|_| Ids::default()).collect(),
            frontier: VecDeque::new(),
            expanded: 0,
            edges: Vec::new(),
            noops: Vec::new(),
            encoded: Vec::new(),
            observe,
        };
        let mut ids = Known::new(threads);
        for (index, state) in model.init_states().into_iter().enumerate() {
            let before = graph.parent.len();
            let fresh = Fresh::of(model, classify, fingerprint(&state), state);
            let id = recorder.visit(&mut graph, &ids, fresh, (NO_PARENT, 0));
            if id as usize == before {
                graph.init_index.push(index as u32);
            }
        }
        ids.add(&mut recorder.recent);
        // Buffers kept from chunk to chunk (large allocations made afresh
        // each time cost more than the expansion), one per thread for the
        // chunk being expanded and one per thread for the chunk expanded
        // before it, whose outcomes are recorded meanwhile.
        let buffers =
            || -> Vec<Expansion<M::State>> { (0..threads).map(|_| Expansion::default()).collect() };
        let mut expanding = buffers();
        let mut expanded = buffers();
        loop {
            let recorded_all = expanded.iter().all(|buffer| buffer.ids.is_empty());
            if graph.cutoff.is_some()
                || found_bad(limits, &graph)
                || (recorder.frontier.is_empty() && recorded_all)
            {
                break;
            }
            if threads == 1 {
                recorder.record(&mut graph, &ids, &mut expanded);
                ids.add(&mut recorder.recent);
                recorder.share_out(&mut expanding);
                expand(model, classify, &ids, limits.stop_at_bad, &mut expanding[0]);
            } else {
                // The next chunk is expanded while the last one is
                // recorded. The ids given meanwhile are kept apart, so the
                // workers read a map nobody writes; a state they take for
                // new may then be one just recorded, which recording sees.
                recorder.share_out(&mut expanding);
                std::thread::scope(|scope| {
                    let ids = &ids;
                    let workers: Vec<_> = expanding
                        .iter_mut()
                        .map(|buffer| {
                            scope.spawn(move || {
                                expand(model, classify, ids, limits.stop_at_bad, buffer)
                            })
                        })
                        .collect();
                    recorder.record(&mut graph, ids, &mut expanded);
                    for worker in workers {
                        // A worker panics only if the model does: pass it on.
                        if let Err(panic) = worker.join() {
                            std::panic::resume_unwind(panic);
                        }
                    }
                });
                ids.add(&mut recorder.recent);
            }
            std::mem::swap(&mut expanding, &mut expanded);
        }
        // Whatever is left unexpanded (cut off, or outside the boundary)
        // has no edges.
        for _ in recorder.expanded as usize..graph.parent.len() {
            graph.end_state();
        }
        if graph.pruned {
            graph.cutoff.get_or_insert(Cutoff::Boundary);
        }
        graph.shrink();
        graph
    }

    /// The number of states.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether the graph has no state.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The number of edges.
    pub fn edge_count(&self) -> usize {
        self.edge_count
    }

    /// States generated, repeats included, as Stateright counts them: the
    /// initial states and one per edge.
    pub fn generated(&self) -> usize {
        self.init_index.len() + self.edge_count
    }

    /// The most steps to any state, counting its initial state: the
    /// length of the last state's shortest path (ids follow BFS order).
    /// Parents only, so that it can be asked while the graph is built.
    pub fn depth(&self) -> usize {
        self.parent
            .len()
            .checked_sub(1)
            .map_or(0, |last| self.depth_of(last as StateId))
    }

    /// The steps to `state`, counting its initial state: the length of
    /// [`Graph::path_to`], without building it.
    pub fn depth_of(&self, state: StateId) -> usize {
        let mut at = state as usize;
        let mut depth = 1;
        while self.parent[at] != NO_PARENT {
            at = self.parent[at] as usize;
            depth += 1;
        }
        depth
    }

    /// Gives back what the vectors reserved while growing: the graph is
    /// held, unchanged, for the whole fair-cycle search.
    fn shrink(&mut self) {
        self.parent.shrink_to_fit();
        self.parent_successor.shrink_to_fit();
        self.init_index.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.edges.shrink_to_fit();
        self.class_table.shrink_to_fit();
        self.goals.shrink_to_fit();
    }

    /// Closes the edge and no-op lists of the next state, not expanded: it
    /// has neither.
    fn end_state(&mut self) {
        self.push_string(&[0]);
    }

    /// Records the edges (target, class index) and no-op class indices of
    /// `state`, the state just expanded, encoded in `scratch`.
    fn end_state_with(
        &mut self,
        state: StateId,
        edges: &[(StateId, u16)],
        noops: &[u16],
        scratch: &mut Vec<u8>,
    ) {
        debug_assert_eq!(state as usize, self.offsets.len());
        scratch.clear();
        write_varint(scratch, edges.len() as u64);
        for &(target, class) in edges {
            let distance = i64::from(target) - i64::from(state);
            write_varint(scratch, zigzag(distance));
            write_varint(scratch, u64::from(class.wrapping_add(1)));
        }
        for &class in noops {
            write_varint(scratch, u64::from(class));
        }
        self.edge_count += edges.len();
        self.push_string(scratch);
    }

    /// Stores the next state's string of edges and no-ops.
    fn push_string(&mut self, bytes: &[u8]) {
        let start = self.edges.push(bytes).unwrap_or_else(|| {
            // Positions would wrap: keep the graph consistent and partial,
            // this state's string empty.
            self.cutoff.get_or_insert(Cutoff::TooLarge);
            self.edges.end()
        });
        self.offsets.push(start);
    }

    /// The bytes this graph holds per state at its peak: parents, edges,
    /// no-ops, goals, classes, and the fingerprint map used while it is
    /// built.
    pub fn bytes_per_state(&self) -> usize {
        let bytes = self.parent.capacity() * 4
            + self.parent_successor.capacity() * 2
            + self.init_index.capacity() * 4
            + self.offsets.capacity() * 4
            + self.edges.capacity()
            + self.class_table.capacity() * 8
            + self.goals.capacity()
            // The fingerprint map: key, value and hashbrown's control byte.
            + self.len() * 13;
        bytes / self.len().max(1)
    }

    /// The outgoing edges of `state`, in action order.
    pub fn edges(&self, state: StateId) -> impl ExactSizeIterator<Item = Edge> + Clone + '_ {
        self.raw_edges(state)
            .enumerate()
            .map(move |(successor, (target, class))| Edge {
                target,
                successor: successor as u32,
                class: self.class(class),
            })
    }

    /// The `n`th outgoing edge of `state`.
    pub fn edge(&self, state: StateId, n: usize) -> Option<Edge> {
        self.edges(state).nth(n)
    }

    /// The bytes of `state`'s edges and no-ops, and where its edges begin
    /// there, past their count.
    fn bytes(&self, state: StateId) -> (&[u8], usize, usize) {
        let s = state as usize;
        let bytes = self.edges.get(self.offsets[s], self.offsets.get(s + 1));
        let (count, at) = read_varint(bytes, 0);
        (bytes, count as usize, at)
    }

    /// `state`'s edges as (target, class index or [`NO_CLASS`]), in order.
    pub(crate) fn raw_edges(&self, state: StateId) -> RawEdges<'_> {
        let (bytes, left, at) = self.bytes(state);
        RawEdges {
            bytes,
            source: state,
            at,
            left,
        }
    }

    fn class(&self, index: u16) -> Option<u64> {
        (index != NO_CLASS).then(|| self.class_table[index as usize])
    }

    /// The number of distinct fairness classes: class indices run below it.
    pub(crate) fn class_count(&self) -> usize {
        self.class_table.len()
    }

    /// The fairness class of index `index` (below [`Graph::class_count`]).
    pub(crate) fn class_at(&self, index: u16) -> u64 {
        self.class_table[usize::from(index)]
    }

    /// The class indices of `state`'s no-op actions under fairness.
    pub(crate) fn noop_class_indices(&self, state: StateId) -> impl Iterator<Item = u16> + '_ {
        let (bytes, count, mut at) = self.bytes(state);
        for _ in 0..count * 2 {
            at = read_varint(bytes, at).1;
        }
        std::iter::from_fn(move || {
            (at < bytes.len()).then(|| {
                let (class, next) = read_varint(bytes, at);
                at = next;
                class as u16
            })
        })
    }

    /// The goals `state` meets, one bit each ([`Classify::goals`]).
    pub fn goals(&self, state: StateId) -> u8 {
        self.goals[state as usize]
    }

    /// Fairness classes of the actions enabled at `state` that change
    /// nothing (Stateright drops them; for fairness they are taken in
    /// place).
    pub fn noops(&self, state: StateId) -> impl Iterator<Item = u64> + '_ {
        self.noop_class_indices(state)
            .map(|c| self.class_table[usize::from(c)])
    }

    /// The shortest path to `state`: the initial state's index, then one
    /// successor position per step ([`explorer_indices`] makes it an
    /// Explorer path).
    pub fn path_to(&self, state: StateId) -> Vec<u32> {
        let mut steps = Vec::new();
        let mut at = state;
        while self.parent[at as usize] != NO_PARENT {
            let parent = self.parent[at as usize];
            let successor = match self.parent_successor.get(at as usize) {
                Some(successor) => u32::from(successor),
                None => self
                    .raw_edges(parent)
                    .position(|(target, _)| target == at)
                    .map_or(0, |p| p as u32),
            };
            steps.push(successor);
            at = parent;
        }
        let init = self.init_position(at);
        steps.push(init);
        steps.reverse();
        steps
    }

    fn init_position(&self, state: StateId) -> u32 {
        // Initial states are the first ids, in init_states order (duplicates
        // skipped).
        self.init_index[state as usize]
    }

    /// The first state in BFS order that fails `good`: a counterexample of
    /// `always good` with the fewest steps.
    pub fn first_bad(&self) -> Option<StateId> {
        self.first_bad
    }

    /// The first state in BFS order with bit `bit` of
    /// [`Classify::discoveries`] (so one with the fewest steps), if any.
    pub fn first_discovery(&self, bit: u8) -> Option<StateId> {
        self.first_discovery
            .get(usize::from(bit))
            .copied()
            .flatten()
    }
}

/// The shortest path (Explorer action indices) to a state that fails
/// `classify.good`, by breadth-first search that stops at the first one.
/// Stateright's own BFS does not promise shortest counterexamples; this does.
pub fn shortest_path_to_bad<M, C>(model: &M, classify: &C, limits: Limits) -> Option<Vec<u32>>
where
    M: Model + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone,
    C: Classify<M> + Sync,
{
    let graph = Graph::explore(
        model,
        classify,
        Limits {
            stop_at_bad: true,
            ..limits
        },
    );
    graph
        .first_bad()
        .map(|state| explorer_indices(model, &graph.path_to(state)))
}

/// Explorer action indices for a path of successor positions (the unit of
/// [`Graph::path_to`] and of edges): the initial state's index unchanged,
/// then for each step the index, among all the state's actions, of the
/// action that is that successor. A position past the last successor ends
/// the path there.
pub fn explorer_indices<M>(model: &M, successors: &[u32]) -> Vec<u32>
where
    M: Model,
    M::Action: Clone,
{
    let Some((&init, steps)) = successors.split_first() else {
        return Vec::new();
    };
    let Some(mut state) = model.init_states().into_iter().nth(init as usize) else {
        return Vec::new();
    };
    let mut indices = vec![init];
    let mut actions = Vec::new();
    for &wanted in steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let found = actions
            .iter()
            .enumerate()
            .filter_map(|(index, action)| Some((index, model.next_state(&state, action.clone())?)))
            .nth(wanted as usize);
        let Some((index, next)) = found else {
            break;
        };
        indices.push(index as u32);
        state = next;
    }
    indices
}

/// A state predicate as a [`Classify`]: states where `condition` equals
/// `holds_when` are good. No action is under fairness.
pub struct Predicate<M: Model> {
    /// The predicate, as Stateright's properties take it.
    pub condition: fn(&M, &M::State) -> bool,
    /// The value of `condition` that makes a state good: `true` for an
    /// `always` property, `false` for a `sometimes` one (whose examples are
    /// what the search looks for).
    pub holds_when: bool,
}

impl<M: Model> Classify<M> for Predicate<M> {
    fn class(&self, _: &M, _: &M::State, _: &M::Action) -> Option<u64> {
        None
    }

    fn good(&self, model: &M, state: &M::State) -> bool {
        (self.condition)(model, state) == self.holds_when
    }
}

/// Stateright's [`Path`](stateright::Path) along Explorer action indices,
/// for the trace printers.
pub fn path_of<M>(model: &M, indices: &[u32]) -> Option<stateright::Path<M::State, M::Action>>
where
    M: Model,
    M::State: Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    let steps = replay(model, indices);
    let (init, _) = steps.first()?;
    let actions: Vec<M::Action> = steps.iter().filter_map(|(_, a)| a.clone()).collect();
    stateright::Path::from_actions(model, init.clone(), actions.iter())
}

/// Rebuilds the states and actions along Explorer action indices.
pub fn replay<M>(model: &M, indices: &[u32]) -> Vec<(M::State, Option<M::Action>)>
where
    M: Model,
    M::State: Clone,
    M::Action: Clone,
{
    let mut out = Vec::new();
    let Some((&init, steps)) = indices.split_first() else {
        return out;
    };
    let Some(mut state) = model.init_states().into_iter().nth(init as usize) else {
        return out;
    };
    let mut actions = Vec::new();
    for &index in steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let Some(action) = actions.get(index as usize).cloned() else {
            break;
        };
        let next = model
            .next_state(&state, action.clone())
            .unwrap_or_else(|| state.clone());
        out.push((state, Some(action)));
        state = next;
    }
    out.push((state, None));
    out
}

/// The Explorer action indices of a Stateright path (what `Path::encode`
/// prints), or `None` when a step is not one of the model's actions.
pub fn indices_of<M>(model: &M, path: &stateright::Path<M::State, M::Action>) -> Option<Vec<u32>>
where
    M: Model,
    M::State: Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    let steps = path.clone().into_vec();
    let (init, _) = steps.first()?;
    let mut indices = vec![model.init_states().iter().position(|s| s == init)? as u32];
    let mut actions = Vec::new();
    for (state, action) in &steps {
        let Some(action) = action else { continue };
        actions.clear();
        model.actions(state, &mut actions);
        indices.push(actions.iter().position(|a| a == action)? as u32);
    }
    Some(indices)
}

/// Explorer's path text for action indices: `0/3/1`.
pub fn encode_path(indices: &[u32]) -> String {
    indices
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts up by 1 or by 3 from 0; 6 is bad. The shortest way there takes
    /// two steps (3, 6), the first found depth-first may take six.
    struct Counter;

    impl Model for Counter {
        type State = u8;
        type Action = u8;
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, state: &u8, actions: &mut Vec<u8>) {
            if *state < 9 {
                actions.extend([1, 3]);
            }
        }
        fn next_state(&self, state: &u8, step: u8) -> Option<u8> {
            Some(state + step)
        }
    }

    struct SixIsBad;

    impl Classify<Counter> for SixIsBad {
        fn class(&self, _: &Counter, _: &u8, _: &u8) -> Option<u64> {
            None
        }
        fn good(&self, _: &Counter, state: &u8) -> bool {
            *state != 6
        }
    }

    #[test]
    fn the_path_to_a_bad_state_is_shortest() {
        let path = shortest_path_to_bad(&Counter, &SixIsBad, Limits::default());
        assert_eq!(path, Some(vec![0, 1, 1]));
        let states: Vec<u8> = replay(&Counter, &[0, 1, 1])
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(states, [0, 3, 6]);
        assert_eq!(encode_path(&[0, 1, 1]), "0/1/1");
        let path = path_of(&Counter, &[0, 1, 1]).expect("a path of the model");
        assert_eq!(indices_of(&Counter, &path), Some(vec![0, 1, 1]));
    }

    #[test]
    fn a_search_for_a_bad_state_stops_at_the_chunk_that_finds_one() {
        for threads in [1, 2] {
            let limits = Limits {
                threads,
                ..Limits::default()
            };
            assert_eq!(Graph::explore(&Counter, &SixIsBad, limits).len(), 12);
            let stop_at_bad = Limits {
                stop_at_bad: true,
                ..limits
            };
            let stopped = Graph::explore(&Counter, &SixIsBad, stop_at_bad);
            // 0, then 1 and 3, whose successors 2, 4 and 6 include the bad
            // one: nothing past them is expanded.
            assert_eq!(stopped.len(), 6, "{threads} threads");
            let bad = stopped.first_bad().expect("6 is reachable");
            assert_eq!(stopped.path_to(bad).len(), 3);
        }
    }

    /// [`Counter`] with a no-op action before the others: the graph's steps
    /// (successor positions) and Explorer's (action indices) differ.
    struct WithNoop;

    impl Model for WithNoop {
        type State = u8;
        type Action = u8;
        fn init_states(&self) -> Vec<u8> {
            Counter.init_states()
        }
        fn actions(&self, state: &u8, actions: &mut Vec<u8>) {
            if *state < 9 {
                actions.extend([0, 1, 3]);
            }
        }
        fn next_state(&self, state: &u8, step: u8) -> Option<u8> {
            (step > 0).then(|| state + step)
        }
    }

    impl Classify<WithNoop> for SixIsBad {
        fn class(&self, _: &WithNoop, _: &u8, _: &u8) -> Option<u64> {
            None
        }
        fn good(&self, _: &WithNoop, state: &u8) -> bool {
            *state != 6
        }
    }

    #[test]
    fn successor_positions_become_explorer_action_indices() {
        let graph = Graph::explore(&WithNoop, &SixIsBad, Limits::default());
        let six = graph.first_bad().expect("6 is reachable");
        assert_eq!(graph.path_to(six), [0, 1, 1], "the second successor twice");
        let indices = explorer_indices(&WithNoop, &graph.path_to(six));
        assert_eq!(indices, [0, 2, 2], "the third action twice");
        let states: Vec<u8> = replay(&WithNoop, &indices)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(states, [0, 3, 6]);
        assert_eq!(
            shortest_path_to_bad(&WithNoop, &SixIsBad, Limits::default()),
            Some(indices)
        );
        assert_eq!(
            graph.edges(0).map(|e| e.successor).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(graph.edge(0, 1).map(|e| e.successor), Some(1));
        // A position past the last successor ends the path.
        assert_eq!(explorer_indices(&WithNoop, &[0, 5]), [0]);
        assert_eq!(explorer_indices(&WithNoop, &[]), Vec::<u32>::new());
        assert_eq!(explorer_indices(&WithNoop, &[3]), Vec::<u32>::new());
    }

    /// [`Counter`] with a boundary: states for which the function is false
    /// are outside, kept without edges.
    struct Fenced(fn(&u8) -> bool);

    impl Model for Fenced {
        type State = u8;
        type Action = u8;
        fn init_states(&self) -> Vec<u8> {
            Counter.init_states()
        }
        fn actions(&self, state: &u8, actions: &mut Vec<u8>) {
            Counter.actions(state, actions)
        }
        fn next_state(&self, state: &u8, step: u8) -> Option<u8> {
            Counter.next_state(state, step)
        }
        fn within_boundary(&self, state: &u8) -> bool {
            (self.0)(state)
        }
    }

    impl Classify<Fenced> for SixIsBad {
        fn class(&self, _: &Fenced, _: &u8, _: &u8) -> Option<u64> {
            None
        }
        fn good(&self, _: &Fenced, state: &u8) -> bool {
            *state != 6
        }
    }

    #[test]
    fn states_outside_the_boundary_make_the_graph_partial() {
        let graph = Graph::explore(&Fenced(|s| *s < 5), &SixIsBad, Limits::default());
        assert_eq!(graph.cutoff, Some(Cutoff::Boundary));
        // Ids in BFS order: 0, 1, 3, 2, 4, 6, 5, 7 (the state with id 5 is
        // 6). Those from 5 up are outside and keep no edges; the others
        // keep theirs, in place.
        let targets = |s: StateId| graph.edges(s).map(|e| e.target).collect::<Vec<_>>();
        assert_eq!(graph.len(), 8);
        assert_eq!(targets(0), [1, 2]);
        assert_eq!(targets(2), [4, 5], "3 leads to 4 and 6");
        assert_eq!(targets(3), [2, 6], "2 leads to 3 and 5");
        assert_eq!(targets(4), [6, 7], "4 leads to 5 and 7");
        for outside in [5, 6, 7] {
            assert_eq!(graph.edges(outside).len(), 0);
        }
    }

    #[test]
    fn a_state_outside_the_boundary_keeps_its_place_among_the_others() {
        // 1 is outside: a state without edges between states with edges.
        let graph = Graph::explore(&Fenced(|s| *s != 1), &SixIsBad, Limits::default());
        assert_eq!(graph.cutoff, Some(Cutoff::Boundary));
        // 0 leads to 1 (id 1, outside) and 3 (id 2), which leads to 4 and 6.
        let targets = |s: StateId| graph.edges(s).map(|e| e.target).collect::<Vec<_>>();
        assert_eq!(targets(0), [1, 2]);
        assert!(targets(1).is_empty());
        assert_eq!(targets(2), [3, 4]);
    }

    /// A model without an initial state.
    struct Nothing;

    impl Model for Nothing {
        type State = u8;
        type Action = u8;
        fn init_states(&self) -> Vec<u8> {
            Vec::new()
        }
        fn actions(&self, _: &u8, _: &mut Vec<u8>) {}
        fn next_state(&self, _: &u8, _: u8) -> Option<u8> {
            None
        }
    }

    impl Classify<Nothing> for SixIsBad {
        fn class(&self, _: &Nothing, _: &u8, _: &u8) -> Option<u64> {
            None
        }
        fn good(&self, _: &Nothing, _: &u8) -> bool {
            true
        }
    }

    #[test]
    fn a_model_without_states_makes_an_empty_graph() {
        let graph = Graph::explore(&Nothing, &SixIsBad, Limits::default());
        assert!(graph.is_empty());
        assert_eq!((graph.len(), graph.depth(), graph.cutoff), (0, 0, None));
        assert!(!Graph::explore(&Counter, &SixIsBad, Limits::default()).is_empty());
    }

    #[test]
    fn bytes_per_state_counts_what_the_graph_holds() {
        let graph = Graph::explore(&Wide, &Fours, Limits::default());
        // 20,007 states, 60,000 edges: parent 4 bytes, offset 4, goals 1,
        // the fingerprint map 13, and the edges' bytes (2 an edge, plus
        // each state's count and no-op), every vector shrunk to its length.
        assert_eq!(graph.edge_count(), 60_000);
        assert_eq!(graph.bytes_per_state(), 29);
    }

    #[test]
    fn every_state_s_edges_are_counted_exactly() {
        let graph = Graph::explore(&Wide, &Fours, Limits::default());
        for s in 0..graph.len() as StateId {
            let edges = graph.edges(s);
            assert_eq!(edges.len(), edges.count());
            assert_eq!(graph.raw_edges(s).len(), graph.raw_edges(s).count());
        }
    }

    #[test]
    fn a_search_without_discoveries_records_none() {
        let graph = Graph::explore(&Counter, &SixIsBad, Limits::default());
        assert!((0..64).all(|bit| graph.first_discovery(bit).is_none()));
    }

    /// From each state one action of the environment that changes nothing,
    /// and one step on.
    struct Idle;

    impl Model for Idle {
        type State = u8;
        type Action = bool;
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, state: &u8, actions: &mut Vec<bool>) {
            if *state < 3 {
                actions.extend([false, true]);
            }
        }
        fn next_state(&self, state: &u8, on: bool) -> Option<u8> {
            on.then(|| state + 1)
        }
    }

    struct OnIsFair;

    impl Classify<Idle> for OnIsFair {
        fn class(&self, _: &Idle, _: &u8, on: &bool) -> Option<u64> {
            on.then_some(1)
        }
        fn good(&self, _: &Idle, _: &u8) -> bool {
            true
        }
    }

    #[test]
    fn an_environment_no_op_is_no_fairness_class() {
        let graph = Graph::explore(&Idle, &OnIsFair, Limits::default());
        assert_eq!(graph.len(), 4);
        assert!((0..4).all(|s| graph.noops(s).count() == 0));
    }

    /// `classes` fairness classes, one per action, 256 actions a state.
    struct Classes(u32);

    impl Model for Classes {
        type State = u32;
        type Action = u32;
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, state: &u32, actions: &mut Vec<u32>) {
            actions.extend((state * 256..(state + 1) * 256).take_while(|&c| c < self.0));
        }
        fn next_state(&self, state: &u32, _: u32) -> Option<u32> {
            Some(state + 1)
        }
    }

    struct EachItsOwn;

    impl Classify<Classes> for EachItsOwn {
        fn class(&self, _: &Classes, _: &u32, action: &u32) -> Option<u64> {
            Some(u64::from(*action))
        }
        fn good(&self, _: &Classes, _: &u32) -> bool {
            true
        }
    }

    #[test]
    fn classes_beyond_an_index_cut_the_graph() {
        let most = usize::from(NO_CLASS);
        let fits = Graph::explore(&Classes(most as u32), &EachItsOwn, Limits::default());
        assert_eq!((fits.cutoff, fits.class_count()), (None, most));
        let over = Graph::explore(&Classes(most as u32 + 1), &EachItsOwn, Limits::default());
        assert_eq!(over.cutoff, Some(Cutoff::TooManyClasses));
        assert_eq!(over.class_count(), most);
        assert_eq!(
            over.cutoff.map(|c| c.to_string()).as_deref(),
            Some("more than 65,535 fairness classes")
        );
    }

    /// One state with more actions than an edge can name.
    struct Crowded;

    impl Model for Crowded {
        type State = u8;
        type Action = u32;
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, state: &u8, actions: &mut Vec<u32>) {
            if *state == 0 {
                actions.extend(0..=u32::from(u16::MAX));
            }
        }
        fn next_state(&self, _: &u8, _: u32) -> Option<u8> {
            Some(1)
        }
    }

    struct NoneBad;

    impl Classify<Crowded> for NoneBad {
        fn class(&self, _: &Crowded, _: &u8, _: &u32) -> Option<u64> {
            None
        }
        fn good(&self, _: &Crowded, _: &u8) -> bool {
            true
        }
    }

    #[test]
    fn a_state_with_too_many_actions_cuts_the_graph() {
        let graph = Graph::explore(&Crowded, &NoneBad, Limits::default());
        assert_eq!(graph.cutoff, Some(Cutoff::TooManyActions));
        assert_eq!(graph.edges(0).len(), 0);
    }

    /// [`Counter`] with a bad state at every multiple of 4, and a class
    /// per step size: large enough for many chunks.
    struct Wide;

    impl Model for Wide {
        type State = u16;
        type Action = u16;
        fn init_states(&self) -> Vec<u16> {
            vec![0, 1, 0]
        }
        fn actions(&self, state: &u16, actions: &mut Vec<u16>) {
            if *state < 20_000 {
                actions.extend([0, 1, 3, 7]);
            }
        }
        fn next_state(&self, state: &u16, step: u16) -> Option<u16> {
            (step > 0).then(|| state + step)
        }
    }

    struct Fours;

    impl Classify<Wide> for Fours {
        fn class(&self, _: &Wide, _: &u16, step: &u16) -> Option<u64> {
            (*step != 1).then_some(u64::from(*step))
        }
        fn good(&self, _: &Wide, state: &u16) -> bool {
            state % 4 != 0
        }
        fn discoveries(&self, _: &Wide, state: &u16) -> u64 {
            u64::from(state % 5 == 0) | u64::from(*state == 9_999) << 1
        }
    }

    #[test]
    fn the_graph_is_the_same_on_any_number_of_threads() {
        for limits in [
            Limits::default(),
            Limits {
                stop_at_bad: true,
                ..Limits::default()
            },
            Limits {
                max_states: Some(7_000),
                ..Limits::default()
            },
        ] {
            let one = Graph::explore(&Wide, &Fours, limits);
            for threads in [2, 3] {
                let many = Graph::explore(&Wide, &Fours, Limits { threads, ..limits });
                assert_eq!(one, many, "{threads} threads, {limits:?}");
            }
        }
        let graph = Graph::explore(&Wide, &Fours, Limits::default());
        assert_eq!(graph.len(), 20_007);
        assert_eq!(
            graph.generated(),
            2 + graph.edge_count(),
            "a repeated initial state"
        );
        assert_eq!(graph.first_discovery(0), Some(0));
        let nine = graph.first_discovery(1).expect("9,999 is reachable");
        assert_eq!(
            graph.path_to(nine).len(),
            1 + 9_999usize.div_ceil(7),
            "fewest steps"
        );
        assert_eq!(graph.first_discovery(2), None);
        assert_eq!(graph.first_discovery(64), None);
        // State 1 is the second initial state: its path names it so.
        assert_eq!(graph.path_to(1), [1]);
        assert_eq!(graph.path_to(0), [0]);
        let deepest = (0..graph.len() as StateId)
            .map(|s| graph.path_to(s).len())
            .max();
        assert_eq!(Some(graph.depth()), deepest);
        assert_eq!(graph.noops(0).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn edge_integers_round_trip_at_their_extremes() {
        let distances = [
            0,
            1,
            -1,
            63,
            -64,
            64,
            i64::from(u32::MAX),
            -i64::from(u32::MAX),
        ];
        let values = [
            0,
            1,
            0x7F,
            0x80,
            0x3FFF,
            0x4000,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut bytes = Vec::new();
        for (&d, &v) in distances.iter().zip(&values) {
            write_varint(&mut bytes, zigzag(d));
            write_varint(&mut bytes, v);
        }
        let mut at = 0;
        for (&d, &v) in distances.iter().zip(&values) {
            let (z, next) = read_varint(&bytes, at);
            let (value, next) = read_varint(&bytes, next);
            assert_eq!((unzigzag(z), value), (d, v));
            at = next;
        }
        assert_eq!(at, bytes.len());
        let mut small = Vec::new();
        write_varint(&mut small, zigzag(-64));
        assert_eq!(small.len(), 1, "small distances take one byte");
        assert_eq!(read_varint(&[], 0), (0, 0), "nothing reads as zero");
    }

    #[test]
    fn a_limit_makes_the_graph_partial() {
        let graph = Graph::explore(
            &Counter,
            &SixIsBad,
            Limits {
                max_states: Some(3),
                ..Limits::default()
            },
        );
        assert_eq!(graph.cutoff, Some(Cutoff::StateLimit));
        // The initial state's successors make three: the limit is met when
        // the next state is to be expanded, which is then left without
        // edges, as is everything after it.
        assert_eq!(graph.len(), 3);
        assert_eq!(graph.edges(0).len(), 2);
        assert_eq!(graph.edges(1).len() + graph.edges(2).len(), 0);
        let full = Graph::explore(&Counter, &SixIsBad, Limits::default());
        assert_eq!(full.cutoff, None);
        assert_eq!(full.len(), 12);
        let patient = Limits {
            timeout: Some(Duration::from_secs(3600)),
            max_states: Some(13),
            ..Limits::default()
        };
        assert_eq!(Graph::explore(&Counter, &SixIsBad, patient), full);
        let hasty = Limits {
            timeout: Some(Duration::ZERO),
            ..Limits::default()
        };
        let cut = Graph::explore(&Counter, &SixIsBad, hasty);
        assert_eq!((cut.cutoff, cut.len()), (Some(Cutoff::Timeout), 1));
    }
}
