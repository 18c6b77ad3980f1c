//! The longest stretch of a run that stays inside one part of the state
//! graph, counted in weighted steps: how long a condition can last (a queue
//! that waits while its owner runs, in ticks of a clock). A weighted cycle
//! inside the part makes the stretch unbounded; otherwise the part's
//! components, found sinks first, give each state the longest weighted
//! path that starts there and stays inside.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use crate::search::graph::{Edge, Graph, StateId};
use crate::search::scc::{path_within, Tarjan};

/// The longest stretch: where it starts, and its steps from there
/// (successor positions, the graph's unit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// Its weighted steps.
    pub weight: u32,
    /// A weighted cycle repeats it without end: `steps` go once round
    /// the cycle, and `weight` is one round's.
    pub repeats: bool,
    /// Its first state.
    pub start: StateId,
    /// Successor positions from `start`.
    pub steps: Vec<u32>,
}

impl Stretch {
    /// The path to it from an initial state and through it, in successor
    /// positions ([`Graph::path_to`]'s format).
    pub fn path(&self, graph: &Graph) -> Vec<u32> {
        let mut path = graph.path_to(self.start);
        path.extend(&self.steps);
        path
    }
}

/// No component yet.
const NONE: u32 = u32::MAX;

/// The longest stretch through the states for which `inside` holds, an
/// edge counting one when `weighs(source, edge)`; `None` when no state is
/// inside or no stretch weighs anything. A weighted cycle found is
/// returned at once, whatever else weighs more: it is without end. But
/// only a cycle a fair run can go round for ever counts: a component for
/// which `fair(members)` is false (a step enabled in every one of its
/// states is never taken inside it) is no run anyone sees, only the
/// scheduler leaving that step for later, and its steps inside weigh
/// nothing.
pub fn longest_stretch(
    graph: &Graph,
    inside: impl Fn(StateId) -> bool,
    weighs: impl Fn(StateId, &Edge) -> bool,
    fair: impl Fn(&[StateId]) -> bool,
) -> Option<Stretch> {
    let n = graph.len();
    let label: Vec<AtomicU32> = (0..n)
        .map(|s| AtomicU32::new(u32::from(inside(s as StateId))))
        .collect();
    let roots: Vec<StateId> = (0..n as StateId)
        .filter(|&s| label[s as usize].load(Relaxed) == 1)
        .collect();
    let mut component = vec![NONE; n];
    // Per component, in the order found: its weight and the edge that
    // leaves it along its longest stretch (source, successor, target).
    let mut weight: Vec<u32> = Vec::new();
    let mut exit: Vec<(StateId, u32, StateId)> = Vec::new();
    let mut cycle: Option<(StateId, Edge)> = None;
    Tarjan::new(n).components(graph, &roots, &label, 1, |members| {
        let id = weight.len() as u32;
        for &m in members {
            component[m as usize] = id;
        }
        let mut best = (0u32, (0, 0, 0));
        // Judged once, and only for a component with a weighted step.
        let mut fairness = None;
        for &m in members {
            for edge in graph.edges(m) {
                let t = edge.target as usize;
                if label[t].load(Relaxed) != 1 {
                    continue;
                }
                let w = u32::from(weighs(m, &edge));
                if component[t] == id {
                    if w == 1 && cycle.is_none() && *fairness.get_or_insert_with(|| fair(members)) {
                        cycle = Some((m, edge));
                    }
                } else if w + weight[component[t] as usize] > best.0 {
                    let reached = w + weight[component[t] as usize];
                    best = (reached, (m, edge.successor, edge.target));
                }
            }
        }
        weight.push(best.0);
        exit.push(best.1);
    });
    let component = &component;
    let within = |c: u32| move |s: StateId| component[s as usize] == c;
    if let Some((source, edge)) = cycle {
        let c = component[source as usize];
        let back = path_within(graph, edge.target, source, &within(c));
        let mut weight = 1;
        let mut at = edge.target;
        for &(step, next) in &back {
            let taken = graph.edge(at, step as usize);
            weight += u32::from(taken.is_some_and(|e| weighs(at, &e)));
            at = next;
        }
        let mut steps = vec![edge.successor];
        steps.extend(back.into_iter().map(|(step, _)| step));
        return Some(Stretch {
            weight,
            repeats: true,
            start: source,
            steps,
        });
    }
    // The earliest state (fewest steps to it) of the heaviest stretch.
    let start = roots
        .iter()
        .copied()
        .max_by_key(|&s| (weight[component[s as usize] as usize], std::cmp::Reverse(s)))?;
    let total = weight[component[start as usize] as usize];
    if total == 0 {
        return None;
    }
    let mut steps = Vec::new();
    let mut at = start;
    loop {
        let c = component[at as usize];
        if weight[c as usize] == 0 {
            break;
        }
        let (source, successor, target) = exit[c as usize];
        steps.extend(
            path_within(graph, at, source, &within(c))
                .into_iter()
                .map(|(step, _)| step),
        );
        steps.push(successor);
        at = target;
    }
    Some(Stretch {
        weight: total,
        repeats: false,
        start,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use stateright::Model;

    use super::*;
    use crate::search::budget::Limits;
    use crate::search::graph::Classify;
    use crate::search::packed::tests::Whole;

    /// States are numbers; an action `(from, to, weighs)` of a fixed table.
    struct Table(Vec<(u8, u8, bool)>);

    impl Whole for Table {}

    impl Model for Table {
        type State = u8;
        type Action = (u8, u8, bool);
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, state: &u8, actions: &mut Vec<Self::Action>) {
            actions.extend(self.0.iter().filter(|e| e.0 == *state).copied());
        }
        fn next_state(&self, _: &u8, action: Self::Action) -> Option<u8> {
            Some(action.1)
        }
    }

    /// A weighed action's class is 1.
    struct Weighs;
    impl Classify<Table> for Weighs {
        fn class(&self, _: &Table, _: &u8, action: &(u8, u8, bool)) -> Option<u64> {
            action.2.then_some(1)
        }
        fn good(&self, _: &Table, _: &u8) -> bool {
            true
        }
    }

    /// The stretch through the states `inside` of `table`, with the states
    /// its path visits.
    fn stretch(table: Table, inside: &[u8]) -> Option<(u32, bool, Vec<u8>)> {
        stretch_fair(table, inside, &[])
    }

    /// [`stretch`], where a component holding a state of `unfair` is not
    /// fair.
    fn stretch_fair(table: Table, inside: &[u8], unfair: &[u8]) -> Option<(u32, bool, Vec<u8>)> {
        let graph = Graph::explore(&table, &Weighs, Limits::default());
        let unfair: Vec<StateId> = (0..graph.len() as StateId)
            .filter(|&s| unfair.contains(&state_of(&table, &graph, s)))
            .collect();
        let stretch = longest_stretch(
            &graph,
            |s| inside.contains(&state_of(&table, &graph, s)),
            |_, e| e.class == Some(1),
            |members| !unfair.iter().any(|u| members.contains(u)),
        )?;
        let mut at = 0u8;
        let mut seen = Vec::new();
        for step in stretch.path(&graph).into_iter().skip(1) {
            let mut actions = Vec::new();
            table.actions(&at, &mut actions);
            at = actions[step as usize].1;
            seen.push(at);
        }
        Some((stretch.weight, stretch.repeats, seen))
    }

    /// The model state of graph state `s`, replayed.
    fn state_of(table: &Table, graph: &Graph, s: StateId) -> u8 {
        let mut at = 0u8;
        for step in graph.path_to(s).into_iter().skip(1) {
            let mut actions = Vec::new();
            table.actions(&at, &mut actions);
            at = actions[step as usize].1;
        }
        at
    }

    #[test]
    fn the_heaviest_way_through_wins_over_the_longest() {
        // 1 -> 2 -> 3 weighs 1 in three steps; 1 -> 4 -> 3 weighs 2.
        let table = Table(vec![
            (0, 1, false),
            (1, 2, false),
            (2, 5, false),
            (5, 3, true),
            (1, 4, true),
            (4, 3, true),
            (3, 6, true),
        ]);
        let (weight, repeats, seen) = stretch(table, &[1, 2, 3, 4, 5]).expect("a stretch");
        assert_eq!((weight, repeats), (2, false));
        assert_eq!(seen, vec![1, 4, 3], "it starts where the stretch does");
    }

    #[test]
    fn a_weighted_cycle_is_without_end_and_an_unweighted_one_is_not() {
        let cycle = |weighs| Table(vec![(0, 1, true), (1, 2, false), (2, 1, weighs)]);
        let (weight, repeats, seen) = stretch(cycle(true), &[1, 2]).expect("a stretch");
        assert_eq!((weight, repeats), (1, true));
        assert_eq!(
            seen,
            vec![1, 2, 1, 2],
            "to its weighted step, then once round"
        );
        assert_eq!(stretch(cycle(false), &[1, 2]), None, "nothing weighs");
        assert_eq!(stretch(cycle(true), &[]), None, "nothing is inside");
    }

    #[test]
    fn an_unfair_cycle_weighs_nothing() {
        // 1 <-> 2 weighs 1 round, but no fair run stays in it; 2 -> 3
        // weighs 1 on the way out.
        let table = Table(vec![
            (0, 1, false),
            (1, 2, true),
            (2, 1, false),
            (2, 3, true),
        ]);
        let (weight, repeats, seen) = stretch_fair(table, &[1, 2, 3], &[1]).expect("a stretch");
        assert_eq!((weight, repeats), (1, false));
        assert_eq!(seen, vec![1, 2, 3]);
    }
}
