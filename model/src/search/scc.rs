//! Strongly connected components of a labelled part of the state graph
//! (Tarjan's algorithm) and shortest paths inside one: what the liveness
//! search ([`super::fair_cycle`]) and the stall measure
//! ([`super::longest`]) both walk.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::search::graph::{Graph, RawEdges, StateId};

const UNSEEN: u32 = u32::MAX;

/// Tarjan's algorithm on the subgraph of states that carry one label. Its
/// arrays span the whole graph and are left clean after each use, so that
/// one finder serves every subgraph the strong-fairness search examines.
/// It keeps one word a state and one bit: a state's low link, and whether
/// it is on the stack. A state's own index lives only in its frame of the
/// walk, since a state on the stack may lower its caller's low link by its
/// own low link as well as by its index: the components found are the
/// same, in the same order.
pub(crate) struct Tarjan {
    low: Vec<u32>,
    on_stack: Vec<u64>,
}

impl Tarjan {
    pub(crate) fn new(states: usize) -> Self {
        Self {
            low: vec![UNSEEN; states],
            on_stack: vec![0; states.div_ceil(64)],
        }
    }

    /// Hands `found` each SCC of the states labelled `set` reachable from
    /// `roots` (all so labelled) through states so labelled, as soon as it
    /// is complete (judged on this thread, its states' edges are still in
    /// the cache). The
    /// component's states may be relabelled from then on: the search has
    /// left them, and skips them whatever their label.
    pub(crate) fn components(
        &mut self,
        graph: &Graph,
        roots: &[StateId],
        label: &[AtomicU32],
        set: u32,
        mut found: impl FnMut(&[StateId]),
    ) {
        let mut visited: Vec<StateId> = Vec::new();
        let mut stack: Vec<StateId> = Vec::new();
        let mut component: Vec<StateId> = Vec::new();
        let mut next_index = 0u32;
        // (state, its index, its edges not yet followed)
        let mut calls: Vec<(StateId, u32, RawEdges<'_>)> = Vec::new();
        for &root in roots {
            if self.low[root as usize] != UNSEEN {
                continue;
            }
            calls.push((root, UNSEEN, graph.raw_edges(root)));
            while let Some(&mut (v, ref mut vindex, ref mut edges)) = calls.last_mut() {
                let vi = v as usize;
                // Only unseen states are called: this is the first visit.
                if *vindex == UNSEEN {
                    *vindex = next_index;
                    self.low[vi] = next_index;
                    next_index += 1;
                    visited.push(v);
                    stack.push(v);
                    self.set_on_stack(v, true);
                }
                let vindex = *vindex;
                if let Some((target, _)) = edges.next() {
                    let w = target as usize;
                    if label[w].load(Relaxed) != set {
                        continue;
                    }
                    if self.low[w] == UNSEEN {
                        calls.push((target, UNSEEN, graph.raw_edges(target)));
                    } else if self.is_on_stack(target) {
                        self.low[vi] = self.low[vi].min(self.low[w]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(parent, _, _)) = calls.last() {
                    let p = parent as usize;
                    self.low[p] = self.low[p].min(self.low[vi]);
                }
                if self.low[vi] == vindex {
                    component.clear();
                    while let Some(w) = stack.pop() {
                        self.set_on_stack(w, false);
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    found(&component);
                }
            }
        }
        for v in visited {
            self.low[v as usize] = UNSEEN;
        }
    }

    fn is_on_stack(&self, s: StateId) -> bool {
        self.on_stack[s as usize / 64] & 1 << (s % 64) != 0
    }

    fn set_on_stack(&mut self, s: StateId, on: bool) {
        let word = &mut self.on_stack[s as usize / 64];
        if on {
            *word |= 1 << (s % 64);
        } else {
            *word &= !(1 << (s % 64));
        }
    }
}

/// The shortest path from `from` to `to` through states for which `inside`
/// holds: (successor position, state reached) per step.
pub(crate) fn path_within(
    graph: &Graph,
    from: StateId,
    to: StateId,
    inside: &dyn Fn(StateId) -> bool,
) -> Vec<(u32, StateId)> {
    if from == to {
        return Vec::new();
    }
    let mut came_from: std::collections::HashMap<StateId, (StateId, u32)> =
        std::collections::HashMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(s) = queue.pop_front() {
        for edge in graph.edges(s) {
            let t = edge.target;
            if t == from || !inside(t) || came_from.contains_key(&t) {
                continue;
            }
            came_from.insert(t, (s, edge.successor));
            if t == to {
                let mut steps = Vec::new();
                let mut at = to;
                while at != from {
                    let (prev, action) = came_from[&at];
                    steps.push((action, at));
                    at = prev;
                }
                steps.reverse();
                return steps;
            }
            queue.push_back(t);
        }
    }
    Vec::new()
}
