//! The reachable state graph of any Stateright [`Model`](stateright::Model),
//! stored compactly, for the checks Stateright does not do itself:
//! liveness under fairness ([`super::fair_cycle`]) and shortest
//! counterexamples. Its exploration, breadth-first on several threads, is
//! [`explore`].
//!
//! States are not kept: each is known by its BFS parent and which of the
//! parent's successors it is, and its outgoing edges (its fingerprint only
//! while the graph is built). Any state is rebuilt by replaying successor
//! positions from an initial state;
//! [`explorer_indices`](super::explorer_indices) turns them into the path
//! format of Stateright's Explorer.

mod explore;
mod known;
#[cfg(test)]
mod tests;

pub use explore::{shortest_path_to_bad, Classify, Predicate};

use super::budget::Cutoff;
use super::pages::{Pages, Strings};

/// A state's index in the graph.
pub type StateId = u32;

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
    /// edges are not ([`Graph::explore_paths`]): otherwise it is the first
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
    /// The bytes of the fingerprint table the build kept beside the graph.
    known_bytes: usize,
    /// Set when exploration stopped early: the graph is then partial.
    pub cutoff: Option<Cutoff>,
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

/// The parent of an initial state.
const NO_PARENT: StateId = StateId::MAX;

/// The class index of an action under no fairness.
pub(crate) const NO_CLASS: u16 = u16::MAX;

impl Graph {
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
            + self.known_bytes;
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
