//! The graph's exploration: breadth-first from the initial states, a chunk
//! of the frontier at a time expanded on every thread while the calling
//! thread records the chunk before, in the order one thread would, so that
//! the graph is the same on any number of threads. The states still to
//! expand are kept packed ([`Packing`]): a few bytes a part's id each, not
//! a state's every vector.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hash};
use std::time::Instant;

use stateright::Model;

use super::known::{Ids, Known};
use super::{Graph, StateId, NO_CLASS, NO_PARENT};
use crate::search::budget::{Cutoff, Limits};
use crate::search::explorer_path::explorer_indices;
use crate::search::fingerprint::{fingerprint, PassThrough};
use crate::search::intern::Interner;
use crate::search::joined;
use crate::search::packed::{Codec, Packing};
use crate::search::pages::{Pages, Strings};

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

/// The states to expand, in id order: each one's id and record
/// ([`Packing::parts`] lanes).
#[derive(Default)]
struct Frontier {
    ids: VecDeque<StateId>,
    lanes: VecDeque<u32>,
}

/// One thread's share of a chunk: the states to expand (their ids and
/// records), then, once expanded, their ids, each one's action count
/// (`None`: more than an edge's successor position can name), every
/// action's class and where it leads, in order, and the fresh states
/// reached, each with its record.
struct Expansion<S> {
    source_ids: Vec<StateId>,
    source_lanes: Vec<u32>,
    ids: Vec<StateId>,
    counts: Vec<Option<u16>>,
    outcomes: Vec<(Option<u64>, Next)>,
    fresh: Vec<Fresh<S>>,
    fresh_lanes: Vec<u32>,
    /// A state the interner could not give ids to, or a record it did not
    /// give: the graph is cut off.
    unpacked: bool,
    /// The fresh states' fingerprints and indices: a state reached twice in
    /// one share is kept once.
    fresh_index: Ids,
    /// The ids the fresh states got, in index order.
    fresh_ids: Vec<StateId>,
}

impl<S> Default for Expansion<S> {
    fn default() -> Self {
        Self {
            source_ids: Vec::new(),
            source_lanes: Vec::new(),
            ids: Vec::new(),
            counts: Vec::new(),
            outcomes: Vec::new(),
            fresh: Vec::new(),
            fresh_lanes: Vec::new(),
            unpacked: false,
            fresh_index: Ids::default(),
            fresh_ids: Vec::new(),
        }
    }
}

/// Every action of every state of `expansion`'s sources: its class and
/// where it leads, judged against the states of `ids`. Each state is
/// decoded from its record through `interner` when its turn comes, and
/// each fresh one encoded.
fn expand<M, C>(
    model: &M,
    classify: &C,
    ids: &Known,
    interner: &Interner<M::Part>,
    keep: Keep,
    expansion: &mut Expansion<M::State>,
) where
    M: Packing,
    M::State: Hash,
    M::Action: Clone,
    C: Classify<M>,
{
    expansion.ids.clear();
    expansion.counts.clear();
    expansion.outcomes.clear();
    expansion.fresh.clear();
    expansion.fresh_lanes.clear();
    expansion.fresh_index.clear();
    expansion.fresh_ids.clear();
    let mut codec = Codec::new(model, interner);
    let width = model.parts();
    let mut actions = Vec::new();
    for (&id, record) in expansion
        .source_ids
        .iter()
        .zip(expansion.source_lanes.chunks_exact(width))
    {
        expansion.ids.push(id);
        let Some(state) = codec.decode(record) else {
            expansion.unpacked = true;
            expansion.counts.push(Some(0));
            continue;
        };
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
            let class = if keep == Keep::Paths {
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
                        let at = expansion.fresh_lanes.len();
                        expansion.fresh_lanes.resize(at + width, 0);
                        if codec
                            .encode(&next, &mut expansion.fresh_lanes[at..])
                            .is_err()
                        {
                            expansion.unpacked = true;
                        }
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
    expansion.source_ids.clear();
    expansion.source_lanes.clear();
}

/// Whether a search for one bad state has found one.
fn found_bad(keep: Keep, graph: &Graph) -> bool {
    keep == Keep::Paths && graph.first_bad.is_some()
}

/// What the thread that writes the graph keeps besides it: states get ids,
/// edges and classes here, in the order one thread expanding alone would
/// give them.
struct Recorder<'o, S> {
    limits: Limits,
    keep: Keep,
    started: Instant,
    /// Each fairness class's index in the graph's class table.
    class_ids: HashMap<u64, u16, BuildHasherDefault<PassThrough>>,
    /// Ids given since the expanding threads' table was last brought up
    /// to date.
    recent: Ids,
    /// States to expand.
    frontier: Frontier,
    /// Lanes of a state's record.
    width: usize,
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
        let frontier = &mut self.frontier;
        let share = frontier
            .ids
            .len()
            .min(CHUNK * buffers.len())
            .div_ceil(buffers.len());
        for buffer in buffers {
            let take = share.min(frontier.ids.len());
            buffer.source_ids.extend(frontier.ids.drain(..take));
            buffer
                .source_lanes
                .extend(frontier.lanes.drain(..take * self.width));
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

    /// The id of a state reached from `parent` (whose record is `record`),
    /// which gets the next one if neither `ids` nor the ids given since
    /// have it.
    fn visit(
        &mut self,
        graph: &mut Graph,
        ids: &Known,
        fresh: Fresh<S>,
        record: &[u32],
        parent: (StateId, u16),
    ) -> StateId {
        if let Some(known) = ids.get(fresh.fingerprint) {
            return known;
        }
        let id = graph.parent.len() as StateId;
        match self.recent.entry(fresh.fingerprint) {
            Entry::Occupied(known) => return *known.get(),
            Entry::Vacant(new) => new.insert(id),
        };
        graph.parent.push(parent.0);
        if self.keep == Keep::Paths {
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
            self.frontier.ids.push_back(id);
            self.frontier.lanes.extend(record);
        } else {
            graph.pruned = true;
        }
        id
    }

    /// Records a chunk's expansion, buffer by buffer: ids for the fresh
    /// states where each is first reached, then every state's edges.
    /// Once the graph is cut off, outcomes are only drained.
    fn record(&mut self, graph: &mut Graph, ids: &Known, buffers: &mut [Expansion<S>]) {
        let (limits, keep) = (self.limits, self.keep);
        for buffer in buffers {
            if std::mem::take(&mut buffer.unpacked) {
                graph.cutoff.get_or_insert(Cutoff::TooManyParts);
            }
            let mut outcomes = buffer.outcomes.iter().copied();
            let mut fresh = buffer
                .fresh
                .drain(..)
                .zip(buffer.fresh_lanes.chunks_exact(self.width));
            let fresh_ids = &mut buffer.fresh_ids;
            // The time and the memory once a batch; the states' count,
            // which the cut state's place depends on, once a state.
            let clock = limits.time_or_memory_reached(self.started);
            for (&count, &id) in buffer.counts.iter().zip(&buffer.ids) {
                // States outside the boundary were never queued: give them
                // no edges.
                while self.expanded < id {
                    graph.end_state();
                    self.expanded += 1;
                }
                self.expanded += 1;
                if graph.cutoff.is_none() {
                    graph.cutoff = if limits.states_reached(graph.parent.len()) {
                        Some(Cutoff::StateLimit)
                    } else {
                        clock
                    };
                }
                let mut skip = graph.cutoff.is_some() || found_bad(keep, graph);
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
                    let interned = if keep == Keep::Paths {
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
                        (Next::Fresh(_), Some((fresh, record))) => {
                            let target = self.visit(graph, ids, fresh, record, (id, successor));
                            fresh_ids.push(target);
                            target
                        }
                        (Next::Fresh(index), None) => fresh_ids[index as usize],
                        (Next::Unchanged, _) => {
                            if class.is_some() && keep == Keep::Edges {
                                self.noops.push(interned);
                            }
                            continue;
                        }
                    };
                    successor += 1;
                    if keep == Keep::Edges {
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

/// How a model's actions map to fairness classes, and which states are good.
pub trait Classify<M: Model> {
    /// The fairness class of `action` in `state` (with [`STRONG`](super::STRONG) set for
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

/// What an exploration keeps of each state besides its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Its edges, their fairness classes and its no-ops: the whole graph.
    Edges,
    /// Which successor of its parent it is, and no edges: enough for
    /// shortest paths. The exploration stops at the chunk that finds the
    /// first bad state.
    Paths,
}

impl Graph {
    /// Explores every state reachable from `model`'s initial states,
    /// breadth-first, within `limits` and `Model::within_boundary`.
    pub fn explore<M, C>(model: &M, classify: &C, limits: Limits) -> Graph
    where
        M: Packing + Sync,
        M::State: Hash + Send + Sync,
        M::Action: Clone,
        C: Classify<M> + Sync,
    {
        Self::explore_observing(model, classify, limits, &mut |_, _, _| {})
    }

    /// [`Graph::explore`], handing every new state and its id to `observe`
    /// (for measures over the whole reachable space, and progress), in id
    /// order, with the graph as it stands.
    pub fn explore_observing<M, C>(
        model: &M,
        classify: &C,
        limits: Limits,
        observe: &mut dyn FnMut(&Graph, StateId, &M::State),
    ) -> Graph
    where
        M: Packing + Sync,
        M::State: Hash + Send + Sync,
        M::Action: Clone,
        C: Classify<M> + Sync,
    {
        Self::explore_keeping(model, classify, limits, Keep::Edges, observe)
    }

    /// The states' parents and paths only, no edges, handing every new
    /// state and its id to `observe` as [`Graph::explore_observing`] does;
    /// it stops at the chunk of the frontier that finds the first state
    /// that fails `classify.good` ([`Graph::first_bad`]).
    pub fn explore_paths<M, C>(
        model: &M,
        classify: &C,
        limits: Limits,
        observe: &mut dyn FnMut(&Graph, StateId, &M::State),
    ) -> Graph
    where
        M: Packing + Sync,
        M::State: Hash + Send + Sync,
        M::Action: Clone,
        C: Classify<M> + Sync,
    {
        Self::explore_keeping(model, classify, limits, Keep::Paths, observe)
    }

    /// The exploration, keeping `keep`.
    ///
    /// With `limits.threads` above 1 the states are expanded (their
    /// actions, successors, fingerprints, classes and goals worked out) by
    /// that many threads, a chunk of the frontier at a time, while the
    /// calling thread records the chunk expanded before (ids, edges and
    /// everything else) in the order one thread would have, so the graph
    /// is the same whatever the number of threads.
    pub(crate) fn explore_keeping<M, C>(
        model: &M,
        classify: &C,
        limits: Limits,
        keep: Keep,
        observe: &mut dyn FnMut(&Graph, StateId, &M::State),
    ) -> Graph
    where
        M: Packing + Sync,
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
            known_bytes: 0,
            cutoff: None,
        };
        let threads = limits.workers();
        let mut recorder = Recorder {
            limits,
            keep,
            started,
            class_ids: HashMap::default(),
            recent: Ids::default(),
            frontier: Frontier::default(),
            width: model.parts(),
            expanded: 0,
            edges: Vec::new(),
            noops: Vec::new(),
            encoded: Vec::new(),
            observe,
        };
        let mut ids = Known::new();
        let mut interner = Interner::new(1 << 12);
        let mut codec = Codec::new(model, &interner);
        let mut record = vec![0; recorder.width];
        for (index, state) in model.init_states().into_iter().enumerate() {
            let before = graph.parent.len();
            if codec.encode(&state, &mut record).is_err() {
                graph.cutoff.get_or_insert(Cutoff::TooManyParts);
            }
            let fresh = Fresh::of(model, classify, fingerprint(&state), state);
            let id = recorder.visit(&mut graph, &ids, fresh, &record, (NO_PARENT, 0));
            if id as usize == before {
                graph.init_index.push(index as u32);
            }
        }
        ids.add(&mut recorder.recent, threads);
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
                || found_bad(keep, &graph)
                || (recorder.frontier.ids.is_empty() && recorded_all)
            {
                break;
            }
            interner.settle();
            let interner = &interner;
            if threads == 1 {
                recorder.record(&mut graph, &ids, &mut expanded);
                ids.add(&mut recorder.recent, threads);
                recorder.share_out(&mut expanding);
                expand(model, classify, &ids, interner, keep, &mut expanding[0]);
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
                            scope
                                .spawn(move || expand(model, classify, ids, interner, keep, buffer))
                        })
                        .collect();
                    recorder.record(&mut graph, ids, &mut expanded);
                    workers.into_iter().for_each(joined);
                });
                ids.add(&mut recorder.recent, threads);
            }
            std::mem::swap(&mut expanding, &mut expanded);
        }
        graph.known_bytes = ids.bytes();
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
}

/// The shortest path (Explorer action indices) to a state that fails
/// `classify.good`, by breadth-first search that stops at the first one.
/// Stateright's own BFS does not promise shortest counterexamples; this does.
pub fn shortest_path_to_bad<M, C>(model: &M, classify: &C, limits: Limits) -> Option<Vec<u32>>
where
    M: Packing + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone,
    C: Classify<M> + Sync,
{
    let graph = Graph::explore_paths(model, classify, limits, &mut |_, _, _| {});
    graph
        .first_bad()
        .map(|state| explorer_indices(model, &graph.path_to(state)))
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
