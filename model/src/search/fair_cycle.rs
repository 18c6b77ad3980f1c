//! Liveness under weak fairness: does every fair execution reach a good
//! (converged) state and stay there?
//!
//! Stateright checks `eventually` only on paths that end in a terminal state,
//! so a violation inside a cycle goes unseen. This check works on the whole
//! reachable graph ([`Graph`]) instead. An execution violates "eventually
//! always good" exactly when it visits a bad state infinitely often; in a
//! finite graph such an execution ends up cycling inside one strongly
//! connected component (SCC). An SCC can host a *fair* such execution iff
//!
//! - it contains a bad state,
//! - it can be cycled in (an edge inside it), or its single state can be
//!   stayed in, and
//! - every fairness class enabled in *all* of its states is taken inside it
//!   (an edge of that class between two of its states, or an action of that
//!   class that changes nothing in one of its states).
//!
//! The condition is exact for weak fairness: a cycle through every state and
//! edge of the SCC is fair when the condition holds, and no cycle inside it is
//! fair otherwise (a class enabled everywhere and never taken stays so on any
//! sub-cycle). Actions without a class (the environment: crashes, joins,
//! losses) are never required; since they spend a finite budget they cannot
//! lie on a cycle anyway.
//!
//! A violation comes back as a lasso: a shortest path to the SCC, then a cycle
//! inside it through a bad state and through what makes it fair.

use std::collections::{BTreeSet, HashSet, VecDeque};

use crate::search::graph::{Graph, StateId};

/// A fair execution that never settles: `prefix` leads from an initial state
/// to the cycle's first state, `cycle` leads from there back to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lasso {
    /// Explorer action indices: the initial state's index, then one per step.
    pub prefix: Vec<u32>,
    /// Action indices of the cycle, starting at the prefix's last state.
    /// Empty when the execution stays in that state for ever.
    pub cycle: Vec<u32>,
}

impl Lasso {
    /// Prefix then one turn of the cycle, as Explorer action indices.
    pub fn explorer_path(&self) -> Vec<u32> {
        self.prefix.iter().chain(&self.cycle).copied().collect()
    }
}

/// Strongly connected components, in reverse topological order (Tarjan,
/// without recursion so that deep graphs cannot overflow the stack).
pub fn strongly_connected_components(graph: &Graph) -> Vec<Vec<StateId>> {
    const UNSEEN: u32 = u32::MAX;
    let n = graph.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<StateId> = Vec::new();
    let mut components = Vec::new();
    let mut next_index = 0u32;
    // (state, position in its edge list)
    let mut calls: Vec<(StateId, usize)> = Vec::new();
    for root in 0..n as StateId {
        if index[root as usize] != UNSEEN {
            continue;
        }
        calls.push((root, 0));
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            let vi = v as usize;
            if *at == 0 && index[vi] == UNSEEN {
                index[vi] = next_index;
                low[vi] = next_index;
                next_index += 1;
                stack.push(v);
                on_stack[vi] = true;
            }
            let edges = graph.edges(v);
            if let Some(edge) = edges.get(*at) {
                *at += 1;
                let w = edge.target as usize;
                if index[w] == UNSEEN {
                    calls.push((edge.target, 0));
                } else if on_stack[w] {
                    low[vi] = low[vi].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                let p = parent as usize;
                low[p] = low[p].min(low[vi]);
            }
            if low[vi] == index[vi] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// The fairness classes enabled at `state`: those of its edges and of its
/// no-op actions.
fn enabled(graph: &Graph, state: StateId) -> BTreeSet<u64> {
    graph
        .edges(state)
        .iter()
        .filter_map(|e| e.class)
        .chain(graph.info(state).noops.iter().copied())
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

/// Checks "eventually always good" under weak fairness on a complete graph.
/// Returns the first violation found, as a lasso.
pub fn find_fair_bad_cycle(graph: &Graph) -> Option<Lasso> {
    let components = strongly_connected_components(graph);
    let mut component_of = vec![0usize; graph.len()];
    for (c, states) in components.iter().enumerate() {
        for &s in states {
            component_of[s as usize] = c;
        }
    }
    // Prefer the violation reached first (fewest steps to enter).
    let mut best: Option<(usize, Lasso)> = None;
    for (c, states) in components.iter().enumerate() {
        if states.iter().all(|&s| graph.info(s).good) {
            continue;
        }
        let inside = |s: StateId| component_of[s as usize] == c;
        let has_cycle = states
            .iter()
            .any(|&s| graph.edges(s).iter().any(|e| inside(e.target)));
        let mut taken: HashSet<u64> = HashSet::new();
        for &s in states {
            taken.extend(graph.info(s).noops.iter().copied());
            taken.extend(
                graph
                    .edges(s)
                    .iter()
                    .filter(|e| inside(e.target))
                    .filter_map(|e| e.class),
            );
        }
        let fair = enabled_throughout(graph, states)
            .iter()
            .all(|class| taken.contains(class));
        if !fair || (!has_cycle && states.len() > 1) {
            continue;
        }
        let lasso = build_lasso(graph, states, &inside, has_cycle);
        let entry_steps = lasso.prefix.len();
        if best
            .as_ref()
            .map_or(true, |(steps, _)| entry_steps < *steps)
        {
            best = Some((entry_steps, lasso));
        }
    }
    best.map(|(_, lasso)| lasso)
}

/// A lasso into the fair component `states`: the shortest prefix to one of
/// its states, then a cycle through a bad state and through every class
/// enabled all along the cycle (taken, or left by visiting a state where it is
/// disabled).
fn build_lasso(
    graph: &Graph,
    states: &[StateId],
    inside: &dyn Fn(StateId) -> bool,
    has_cycle: bool,
) -> Lasso {
    // BFS ids grow with depth, so the smallest id is reached in fewest steps.
    let entry = states.iter().copied().min().unwrap_or(0);
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
        .filter(|&s| !graph.info(s).good)
        .min()
        .unwrap_or(entry);
    let mut cycle_states = vec![entry];
    let mut cycle_actions: Vec<u32> = Vec::new();
    let mut at = entry;
    let go =
        |to: StateId, at: &mut StateId, states_out: &mut Vec<StateId>, actions: &mut Vec<u32>| {
            for (action, state) in path_within(graph, *at, to, inside) {
                actions.push(action);
                states_out.push(state);
            }
            *at = to;
        };
    go(bad, &mut at, &mut cycle_states, &mut cycle_actions);
    // Until every class enabled in all visited states is taken on the cycle,
    // take one more (or visit a state where it is disabled).
    for _ in 0..states.len() * 4 + 16 {
        let taken: HashSet<u64> = cycle_states
            .iter()
            .zip(&cycle_actions)
            .filter_map(|(&s, &a)| {
                graph
                    .edges(s)
                    .iter()
                    .find(|e| e.action == a)
                    .and_then(|e| e.class)
            })
            .chain(
                cycle_states
                    .iter()
                    .flat_map(|&s| graph.info(s).noops.iter().copied()),
            )
            .collect();
        let Some(missing) = enabled_throughout(graph, &cycle_states)
            .into_iter()
            .find(|class| !taken.contains(class))
        else {
            break;
        };
        // An edge inside the component that takes the class, else a state
        // where it is disabled.
        let taking = states.iter().find_map(|&s| {
            graph
                .edges(s)
                .iter()
                .find(|e| e.class == Some(missing) && inside(e.target))
                .map(|e| (s, *e))
        });
        match taking {
            Some((from, edge)) => {
                go(from, &mut at, &mut cycle_states, &mut cycle_actions);
                cycle_actions.push(edge.action);
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
                go(disabled, &mut at, &mut cycle_states, &mut cycle_actions);
            }
        }
    }
    go(entry, &mut at, &mut cycle_states, &mut cycle_actions);
    if cycle_actions.is_empty() {
        // The entry is the bad state and everything is taken in place: go
        // round the shortest cycle through it.
        if let Some(edge) = graph.edges(entry).iter().find(|e| inside(e.target)) {
            cycle_actions.push(edge.action);
            cycle_actions.extend(
                path_within(graph, edge.target, entry, inside)
                    .into_iter()
                    .map(|(a, _)| a),
            );
        }
    }
    Lasso {
        prefix,
        cycle: cycle_actions,
    }
}

/// The shortest path from `from` to `to` through states for which `inside`
/// holds: (action index, state reached) per step.
fn path_within(
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
            came_from.insert(t, (s, edge.action));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::graph::{Classify, Limits};
    use stateright::Model;

    /// A tiny hand-made model: states are numbers, actions are
    /// `(name, from, to)` triples of a fixed table; `name` is the fairness
    /// class (`None`: environment).
    struct Table {
        edges: Vec<(Option<&'static str>, u8, u8)>,
        good: Vec<u8>,
    }

    impl Model for Table {
        type State = u8;
        type Action = (Option<&'static str>, u8, u8);
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, state: &u8, actions: &mut Vec<Self::Action>) {
            actions.extend(self.edges.iter().filter(|e| e.1 == *state).copied());
        }
        fn next_state(&self, state: &u8, action: Self::Action) -> Option<u8> {
            (action.2 != *state).then_some(action.2)
        }
    }

    struct ByName;
    impl Classify<Table> for ByName {
        fn class(&self, _: &Table, _: &u8, action: &(Option<&'static str>, u8, u8)) -> Option<u64> {
            action
                .0
                .map(|name| name.bytes().fold(7u64, |h, b| h * 31 + u64::from(b)))
        }
        fn good(&self, model: &Table, state: &u8) -> bool {
            model.good.contains(state)
        }
    }

    fn check(table: Table) -> Option<Lasso> {
        let graph = Graph::explore(&table, &ByName, Limits::default());
        find_fair_bad_cycle(&graph)
    }

    #[test]
    fn a_fair_cycle_through_a_bad_state_is_found() {
        // 0 -> 1 -> 2 -> 1 ..., with 3 (good) reachable from 2 only by an
        // action that is disabled in 1: a fair execution may loop for ever.
        let lasso = check(Table {
            edges: vec![
                (Some("tick"), 0, 1),
                (Some("flip"), 1, 2),
                (Some("flop"), 2, 1),
                (Some("settle"), 2, 3),
            ],
            good: vec![3],
        });
        let lasso = lasso.expect("the 1-2 cycle is fair: settle is disabled in 1");
        assert_eq!(lasso.prefix, [0, 0]);
        assert!(!lasso.cycle.is_empty());
    }

    #[test]
    fn an_unfair_cycle_is_not_reported() {
        // The loop 1 <-> 2 never takes `settle`, which is enabled in both.
        let lasso = check(Table {
            edges: vec![
                (Some("tick"), 0, 1),
                (Some("flip"), 1, 2),
                (Some("flop"), 2, 1),
                (Some("settle"), 1, 3),
                (Some("settle"), 2, 3),
            ],
            good: vec![3],
        });
        assert_eq!(lasso, None);
    }

    #[test]
    fn a_model_that_converges_passes() {
        let lasso = check(Table {
            edges: vec![
                (Some("a"), 0, 1),
                (None, 0, 2),
                (Some("b"), 2, 1),
                (Some("c"), 1, 1),
            ],
            good: vec![1],
        });
        assert_eq!(lasso, None);
    }

    #[test]
    fn a_bad_state_where_only_the_environment_can_act_is_a_violation() {
        // In 1 only an environment action leads on: staying is fair.
        let lasso = check(Table {
            edges: vec![(Some("a"), 0, 1), (None, 1, 2)],
            good: vec![2],
        })
        .expect("stuck in 1");
        assert_eq!(lasso.prefix, [0, 0]);
        assert!(lasso.cycle.is_empty());
    }

    #[test]
    fn a_good_cycle_is_fine() {
        let lasso = check(Table {
            edges: vec![(Some("a"), 0, 1), (Some("b"), 1, 2), (Some("c"), 2, 1)],
            good: vec![1, 2],
        });
        assert_eq!(lasso, None);
    }
}
