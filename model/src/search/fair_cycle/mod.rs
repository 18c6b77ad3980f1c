//! Liveness under fairness: does every fair execution reach a good
//! (converged) state and stay there?
//!
//! Stateright checks `eventually` only on paths that end in a terminal state,
//! so a violation inside a cycle goes unseen. This check works on the whole
//! reachable graph ([`Graph`]) instead. An execution violates "eventually
//! always good" exactly when it visits a bad state infinitely often; in a
//! finite graph such an execution ends up cycling inside one strongly
//! connected component (SCC).
//!
//! Two kinds of fairness classes (see [`STRONG`]):
//!
//! - **weak** (an action enabled continuously is eventually taken): a class
//!   enabled in *every* state of a cycle must be taken on it;
//! - **strong** (an action enabled infinitely often is taken infinitely
//!   often): a class enabled in *some* state of a cycle must be taken on it.
//!   This is the fairness of a random choice made again and again: each
//!   option is taken with probability 1.
//!
//! An SCC can host a fair execution that never settles iff
//!
//! - it contains a bad state,
//! - it can be cycled in (an edge inside it), or its single state can be
//!   stayed in,
//! - every strong class enabled in one of its states is taken inside it (an
//!   edge of that class between two of its states, or an action of that
//!   class that changes nothing in one of its states), and
//! - every weak class enabled in all of its states is taken inside it.
//!
//! When a strong class is enabled somewhere in an SCC but never taken inside
//! it, no fair execution can visit the states where it is enabled infinitely
//! often: they are removed, and the SCCs of what is left are examined the
//! same way (the classic algorithm for strong fairness). Otherwise the
//! condition is exact: a cycle through every state and edge of the SCC is
//! fair when it holds, and no cycle inside the SCC is fair when a weak class
//! enabled everywhere is never taken. Actions without a class (the
//! environment: crashes, joins, losses) are never required; since they spend
//! a finite budget they cannot lie on a cycle anyway.
//!
//! A violation comes back as a lasso: a shortest path to the SCC, then a cycle
//! inside it through a bad state and through what makes it fair.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::mpsc;

use crate::search::explorer_path::explorer_indices;
use crate::search::graph::{Graph, StateId, NO_CLASS, STRONG};
use crate::search::scc::{path_within, Tarjan};

/// A fair execution that never settles: `prefix` leads from an initial state
/// to the cycle's first state, `cycle` leads from there back to it. Steps
/// are successor positions, the graph's unit, until
/// [`Lasso::in_explorer_indices`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lasso {
    /// The initial state's index, then one step each.
    pub prefix: Vec<u32>,
    /// The cycle's steps, starting at the prefix's last state. Empty when
    /// the execution stays in that state for ever.
    pub cycle: Vec<u32>,
}

impl Lasso {
    /// Prefix then one turn of the cycle.
    pub fn path(&self) -> Vec<u32> {
        self.prefix.iter().chain(&self.cycle).copied().collect()
    }

    /// The same lasso with every step an Explorer action index.
    pub fn in_explorer_indices<M>(&self, model: &M) -> Lasso
    where
        M: stateright::Model,
        M::Action: Clone,
    {
        let mut indices = explorer_indices(model, &self.path());
        let cycle = indices.split_off(self.prefix.len().min(indices.len()));
        Lasso {
            prefix: indices,
            cycle,
        }
    }
}

/// The indices of the fairness classes enabled at `state`: those of its
/// edges and of its no-op actions, repeats possible.
fn enabled_indices(graph: &Graph, state: StateId) -> impl Iterator<Item = usize> + '_ {
    graph
        .raw_edges(state)
        .map(|(_, c)| c)
        .chain(graph.noop_class_indices(state))
        .filter(|&c| c != NO_CLASS)
        .map(usize::from)
}

/// The fairness classes enabled at `state`.
fn enabled(graph: &Graph, state: StateId) -> BTreeSet<u64> {
    enabled_indices(graph, state)
        .map(|c| graph.class_at(c as u16))
        .collect()
}

/// The fairness classes enabled in every one of `states`.
fn enabled_throughout(graph: &Graph, states: &[StateId]) -> BTreeSet<u64> {
    let mut states = states.iter();
    let Some(&first) = states.next() else {
        return BTreeSet::new();
    };
    let mut always = enabled(graph, first);
    for &s in states {
        let here = enabled(graph, s);
        always.retain(|class| here.contains(class));
    }
    always
}

/// Whether a fairness class is strong (see [`STRONG`]).
fn is_strong(class: u64) -> bool {
    class & STRONG != 0
}

/// Checks "eventually always goal `goal`" of [`Classify::goals`] (a bit
/// index) under weak and strong fairness on a complete graph: the fair
/// execution that misses it infinitely often whose cycle is reached in
/// fewest steps, as a lasso. With two `threads` or more, components are
/// judged on a second thread while Tarjan's algorithm finds the next ones;
/// the lasso is the same.
///
/// [`Classify::goals`]: crate::search::Classify::goals
pub fn find_fair_cycle_missing(graph: &Graph, goal: u8, threads: usize) -> Option<Lasso> {
    let alongside_from = if threads < 2 {
        usize::MAX
    } else {
        JUDGE_ALONGSIDE_FROM
    };
    fair_cycle_search(graph, goal, alongside_from)
}

/// [`find_fair_cycle_missing`], judging alongside Tarjan's algorithm the
/// components of subgraphs of `alongside_from` states or more.
fn fair_cycle_search(graph: &Graph, goal: u8, alongside_from: usize) -> Option<Lasso> {
    let mut tarjan = Tarjan::new(graph.len());
    // Which subgraph each state is examined in: the whole graph at first,
    // then what is left of an SCC once states are removed from it. Only the
    // judge writes labels, and only of components Tarjan's algorithm has
    // completed, whose states it skips whatever their label: so it may read
    // them while the judge writes.
    let label: Vec<AtomicU32> = (0..graph.len()).map(|_| AtomicU32::new(0)).collect();
    let mut sets: Vec<(u32, Vec<StateId>)> = vec![(0, (0..graph.len() as StateId).collect())];
    let mut search = Search {
        graph,
        goal,
        judge: ComponentJudge::new(graph),
        label: &label,
        next_label: 1,
        split: Vec::new(),
        best: None,
    };
    while let Some((set, roots)) = sets.pop() {
        if roots.len() < alongside_from {
            tarjan.components(graph, &roots, &label, set, |states| {
                search.judge_component(states)
            });
        } else {
            judge_alongside(&mut tarjan, &mut search, &roots, set);
        }
        sets.append(&mut search.split);
    }
    search.best
}

/// Subgraphs smaller than this are searched on one thread: a second one
/// would cost more to start than it saves.
const JUDGE_ALONGSIDE_FROM: usize = 1 << 16;

/// States of completed components a batch carries to the judging thread.
const BATCH: usize = 1 << 14;

/// Searches the states labelled `set` reachable from `roots`, Tarjan's
/// algorithm on this thread and `search` on another, fed the components in
/// the order they are found.
fn judge_alongside(tarjan: &mut Tarjan, search: &mut Search<'_>, roots: &[StateId], set: u32) {
    let graph = search.graph;
    let label = search.label;
    let (send, receive) = mpsc::sync_channel::<Components>(4);
    let (give_back, given_back) = mpsc::channel::<Components>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for mut batch in receive {
                for states in batch.iter() {
                    search.judge_component(states);
                }
                batch.clear();
                // Refused only once this pass is over.
                let _ = give_back.send(batch);
            }
        });
        let mut batch = Components::default();
        tarjan.components(graph, roots, label, set, |states| {
            batch.push(states);
            if batch.states.len() >= BATCH {
                let next = given_back.try_recv().unwrap_or_default();
                // Refused only if the judge panicked, which the scope
                // passes on.
                let _ = send.send(std::mem::replace(&mut batch, next));
            }
        });
        let _ = send.send(batch);
        // The judge stops once the last batch is in.
        drop(send);
    });
}

/// Components one after another in one vector: most are single states, and
/// a vector each would cost an allocation each.
#[derive(Default)]
struct Components {
    states: Vec<StateId>,
    /// Where each component ends in `states`.
    ends: Vec<usize>,
}

impl Components {
    fn push(&mut self, states: &[StateId]) {
        self.states.extend_from_slice(states);
        self.ends.push(self.states.len());
    }

    fn iter(&self) -> impl Iterator<Item = &[StateId]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.states[start..end])
    }

    fn clear(&mut self) {
        self.states.clear();
        self.ends.clear();
    }
}

/// The search for a fair cycle missing `goal`, judging one component after
/// another in the order Tarjan's algorithm completes them.
struct Search<'g> {
    graph: &'g Graph,
    goal: u8,
    judge: ComponentJudge<'g>,
    label: &'g [AtomicU32],
    next_label: u32,
    /// What is left of components once states are removed from them, with
    /// their labels: searched again after the current pass.
    split: Vec<(u32, Vec<StateId>)>,
    /// The nearest fair cycle missing the goal so far.
    best: Option<Lasso>,
}

impl Search<'_> {
    fn judge_component(&mut self, states: &[StateId]) {
        let graph = self.graph;
        let label = self.label;
        let goal = self.goal;
        let good = |s: StateId| graph.goals(s) & (1 << goal) != 0;
        if states.iter().all(|&s| good(s)) {
            return;
        }
        // Most components are one bad state without a loop, judged here
        // as the judge would: a run stays in it for ever fairly only if
        // every class fairness could demand there is one of its no-ops
        // (taken by staying).
        if let [s] = *states {
            if !graph.raw_edges(s).any(|(t, _)| t == s) {
                let stays = graph.raw_edges(s).all(|(_, c)| {
                    c == NO_CLASS || graph.noop_class_indices(s).any(|noop| noop == c)
                });
                if stays {
                    consider(&mut self.best, graph, s, || {
                        build_lasso(graph, states, s, &|_| false, &good, false)
                    });
                }
                return;
            }
        }
        // The component gets a label of its own, so that `inside` and a
        // further split see only it.
        let own = self.next_label;
        self.next_label += 1;
        for &s in states {
            label[s as usize].store(own, Relaxed);
        }
        let inside = |s: StateId| label[s as usize].load(Relaxed) == own;
        // Always so for a component of several states; a single state
        // without a loop can still be stayed in.
        let has_cycle = states
            .iter()
            .any(|&s| graph.raw_edges(s).any(|(t, _)| inside(t)));
        match self.judge.judge(states, &inside) {
            Verdict::Unfair => {}
            Verdict::Shrink(rest) => {
                // No fair run visits the other states infinitely often.
                let split = self.next_label;
                self.next_label += 1;
                for &s in &rest {
                    label[s as usize].store(split, Relaxed);
                }
                if !rest.is_empty() {
                    self.split.push((split, rest));
                }
            }
            Verdict::Fair => {
                // BFS ids grow with depth, so the smallest id is reached in
                // fewest steps.
                let entry = states.iter().copied().min().unwrap_or(0);
                consider(&mut self.best, graph, entry, || {
                    build_lasso(graph, states, entry, &inside, &good, has_cycle)
                });
            }
        }
    }
}

/// Keeps the lasso `build` makes, entering its cycle at `entry`, if it is
/// reached in fewer steps than `best`'s: built only then, since most fair
/// components are not the nearest.
fn consider(
    best: &mut Option<Lasso>,
    graph: &Graph,
    entry: StateId,
    build: impl FnOnce() -> Lasso,
) {
    if best
        .as_ref()
        .map_or(true, |kept| graph.depth_of(entry) < kept.prefix.len())
    {
        *best = Some(build());
    }
}

/// What a component's fairness classes say of it.
enum Verdict {
    /// A cycle through all of it is fair.
    Fair,
    /// No cycle inside it is fair: a weak class enabled in all of its
    /// states is never taken inside it.
    Unfair,
    /// A strong class enabled somewhere in it is never taken inside it:
    /// only these states, where no such class is enabled, can be visited
    /// infinitely often by a fair run.
    Shrink(Vec<StateId>),
}

/// Judges components on class indices, with arrays over every class
/// stamped per component (or per state) so that nothing is cleared or
/// allocated per component.
struct ComponentJudge<'g> {
    graph: &'g Graph,
    strong: Vec<bool>,
    /// `taken[c] == stamp`: class `c` is taken inside the component.
    taken: Vec<u64>,
    /// `untaken_strong[c] == stamp`: strong, enabled and never taken.
    untaken_strong: Vec<u64>,
    /// `seen[c] == state_stamp`: already counted for the current state.
    seen: Vec<u64>,
    /// States of the component where class `c` is enabled, valid when
    /// `counted[c] == stamp`.
    enabled_in: Vec<u32>,
    counted: Vec<u64>,
    /// The classes counted in the current component.
    enabled: Vec<u16>,
    stamp: u64,
    state_stamp: u64,
}

impl<'g> ComponentJudge<'g> {
    fn new(graph: &'g Graph) -> Self {
        let classes = graph.class_count();
        Self {
            graph,
            strong: (0..classes)
                .map(|c| is_strong(graph.class_at(c as u16)))
                .collect(),
            taken: vec![0; classes],
            untaken_strong: vec![0; classes],
            seen: vec![0; classes],
            enabled_in: vec![0; classes],
            counted: vec![0; classes],
            enabled: Vec::new(),
            stamp: 0,
            state_stamp: 0,
        }
    }

    /// The verdict on the component `states` (`inside` tells its states).
    fn judge(&mut self, states: &[StateId], inside: &dyn Fn(StateId) -> bool) -> Verdict {
        let graph = self.graph;
        self.stamp += 1;
        let stamp = self.stamp;
        for &s in states {
            for c in graph.noop_class_indices(s) {
                self.taken[usize::from(c)] = stamp;
            }
            for (t, c) in graph.raw_edges(s) {
                if c != NO_CLASS && inside(t) {
                    self.taken[usize::from(c)] = stamp;
                }
            }
        }
        self.enabled.clear();
        let mut any_untaken = false;
        for &s in states {
            self.state_stamp += 1;
            for c in enabled_indices(graph, s) {
                if self.seen[c] == self.state_stamp {
                    continue;
                }
                self.seen[c] = self.state_stamp;
                if self.counted[c] != stamp {
                    self.counted[c] = stamp;
                    self.enabled_in[c] = 0;
                    self.enabled.push(c as u16);
                }
                self.enabled_in[c] += 1;
                if self.strong[c] && self.taken[c] != stamp {
                    self.untaken_strong[c] = stamp;
                    any_untaken = true;
                }
            }
        }
        if any_untaken {
            let untaken = &self.untaken_strong;
            return Verdict::Shrink(
                states
                    .iter()
                    .copied()
                    .filter(|&s| enabled_indices(graph, s).all(|c| untaken[c] != stamp))
                    .collect(),
            );
        }
        // Weak classes enabled throughout must be taken.
        let fair = self.enabled.iter().all(|&c| {
            let c = usize::from(c);
            self.strong[c] || self.taken[c] == stamp || self.enabled_in[c] as usize != states.len()
        });
        if fair {
            Verdict::Fair
        } else {
            Verdict::Unfair
        }
    }
}

/// A lasso into the fair component `states`: the shortest prefix to
/// `entry`, the state of it reached in fewest steps, then a cycle through a
/// bad state and through every class enabled all along the cycle (taken, or
/// left by visiting a state where it is disabled).
fn build_lasso(
    graph: &Graph,
    states: &[StateId],
    entry: StateId,
    inside: &dyn Fn(StateId) -> bool,
    good: &dyn Fn(StateId) -> bool,
    has_cycle: bool,
) -> Lasso {
    let prefix = graph.path_to(entry);
    if !has_cycle {
        return Lasso {
            prefix,
            cycle: Vec::new(),
        };
    }
    let bad = states
        .iter()
        .copied()
        .filter(|&s| !good(s))
        .min()
        .unwrap_or(entry);
    let mut cycle_states = vec![entry];
    let mut cycle_steps: Vec<u32> = Vec::new();
    let mut at = entry;
    let go =
        |to: StateId, at: &mut StateId, states_out: &mut Vec<StateId>, steps: &mut Vec<u32>| {
            for (step, state) in path_within(graph, *at, to, inside) {
                steps.push(step);
                states_out.push(state);
            }
            *at = to;
        };
    go(bad, &mut at, &mut cycle_states, &mut cycle_steps);
    // Until every class enabled in all visited states is taken on the cycle,
    // take one more (or visit a state where it is disabled). Each round
    // settles one class for good (taken, or no longer enabled throughout),
    // so there are at most as many rounds as classes, however few states.
    for _ in 0..graph.class_count() {
        let taken: HashSet<u64> = cycle_states
            .iter()
            .zip(&cycle_steps)
            .filter_map(|(&s, &a)| graph.edge(s, a as usize).and_then(|e| e.class))
            .chain(cycle_states.iter().flat_map(|&s| graph.noops(s)))
            .collect();
        // Weak classes enabled all along the cycle, strong ones enabled
        // anywhere on it, must be taken.
        let strong_on_cycle = cycle_states
            .iter()
            .flat_map(|&s| enabled(graph, s))
            .filter(|&c| is_strong(c));
        let Some(missing) = enabled_throughout(graph, &cycle_states)
            .into_iter()
            .chain(strong_on_cycle)
            .find(|class| !taken.contains(class))
        else {
            break;
        };
        // An edge inside the component that takes the class, else a state
        // where it is disabled.
        let taking = states.iter().find_map(|&s| {
            graph
                .edges(s)
                .find(|e| e.class == Some(missing) && inside(e.target))
                .map(|e| (s, e))
        });
        match taking {
            Some((from, edge)) => {
                go(from, &mut at, &mut cycle_states, &mut cycle_steps);
                cycle_steps.push(edge.successor);
                cycle_states.push(edge.target);
                at = edge.target;
            }
            None => {
                let Some(&disabled) = states
                    .iter()
                    .find(|&&s| !enabled(graph, s).contains(&missing))
                else {
                    break;
                };
                go(disabled, &mut at, &mut cycle_states, &mut cycle_steps);
            }
        }
    }
    go(entry, &mut at, &mut cycle_states, &mut cycle_steps);
    if cycle_steps.is_empty() {
        // The entry is the bad state and everything is taken in place: go
        // round the shortest cycle through it.
        if let Some(edge) = graph.edges(entry).find(|e| inside(e.target)) {
            cycle_steps.push(edge.successor);
            cycle_steps.extend(
                path_within(graph, edge.target, entry, inside)
                    .into_iter()
                    .map(|(a, _)| a),
            );
        }
    }
    Lasso {
        prefix,
        cycle: cycle_steps,
    }
}

#[cfg(test)]
mod tests;
