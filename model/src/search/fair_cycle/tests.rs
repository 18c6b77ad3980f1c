//! The fair-cycle search's tests, on small graphs written out by hand.

use stateright::Model;

use super::*;
use crate::search::budget::Limits;
use crate::search::graph::Classify;
use crate::search::packed::tests::Whole;

/// Checks "eventually always good" under weak and strong fairness on a
/// complete graph. Returns the violation whose cycle is reached in fewest
/// steps, as a lasso.
fn find_fair_bad_cycle(graph: &Graph) -> Option<Lasso> {
    find_fair_cycle_missing(graph, 0, 1)
}

/// Strongly connected components, in reverse topological order (Tarjan,
/// without recursion so that deep graphs cannot overflow the stack).
fn strongly_connected_components(graph: &Graph) -> Vec<Vec<StateId>> {
    let all: Vec<StateId> = (0..graph.len() as StateId).collect();
    let label: Vec<AtomicU32> = (0..graph.len()).map(|_| AtomicU32::new(0)).collect();
    let mut components = Vec::new();
    Tarjan::new(graph.len()).components(graph, &all, &label, 0, |states| {
        components.push(states.to_vec())
    });
    components
}

/// A tiny hand-made model: states are numbers, actions are
/// `(name, from, to)` triples of a fixed table; `name` is the fairness
/// class (`None`: environment).
struct Table {
    edges: Vec<(Option<&'static str>, u8, u8)>,
    good: Vec<u8>,
}

impl Whole for Table {}

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
    search(table, &ByName)
}

/// The fair bad cycle of `graph`, the same whether its components are
/// judged on the searching thread or on another alongside it.
fn fair_bad_cycle(graph: &Graph) -> Option<Lasso> {
    let lasso = find_fair_bad_cycle(graph);
    assert_eq!(fair_cycle_search(graph, 0, 0), lasso);
    lasso
}

/// The fair bad cycle of `table` under `classify`, checked when found.
fn search(table: Table, classify: &(impl Classify<Table> + Sync)) -> Option<Lasso> {
    let graph = Graph::explore(&table, classify, Limits::default());
    let lasso = fair_bad_cycle(&graph);
    if let Some(lasso) = &lasso {
        assert_fair_lasso(&graph, lasso);
    }
    lasso
}

/// Checks that `lasso` is what it claims: its prefix leads from the
/// initial state to its cycle, the cycle returns where it began and
/// passes a bad state, and it is fair: every weak class enabled in all
/// its states, and every strong class enabled in any, is taken on it.
fn assert_fair_lasso(graph: &Graph, lasso: &Lasso) {
    let step = |at: StateId, n: u32| graph.edge(at, n as usize).expect("a step");
    let mut at: StateId = 0;
    for &n in &lasso.prefix[1..] {
        at = step(at, n).target;
    }
    let entry = at;
    let mut on_cycle = vec![entry];
    let mut taken: BTreeSet<u64> = graph.noops(entry).collect();
    for &n in &lasso.cycle {
        let edge = step(at, n);
        taken.extend(edge.class);
        at = edge.target;
        taken.extend(graph.noops(at));
        on_cycle.push(at);
    }
    assert_eq!(at, entry, "the cycle returns to its start: {lasso:?}");
    assert!(
        on_cycle.iter().any(|&s| graph.goals(s) & 1 == 0),
        "a bad state on the cycle: {lasso:?}"
    );
    let strong = on_cycle
        .iter()
        .flat_map(|&s| enabled(graph, s))
        .filter(|&c| is_strong(c));
    for class in enabled_throughout(graph, &on_cycle)
        .into_iter()
        .chain(strong)
    {
        assert!(taken.contains(&class), "{class:x} untaken: {lasso:?}");
    }
}

#[test]
fn the_lasso_takes_each_class_on_its_own_edge() {
    // Both states enable `p` and `r`, listed in the same order (either
    // one first): a lasso must take each, not just the first edge it
    // meets.
    for (first, second) in [("p", "r"), ("r", "p")] {
        let lasso = check(Table {
            edges: vec![
                (Some("tick"), 0, 1),
                (Some(first), 1, 2),
                (Some(second), 1, 2),
                (Some(first), 2, 1),
                (Some(second), 2, 1),
            ],
            good: vec![],
        });
        assert!(lasso.is_some());
    }
}

#[test]
fn a_lasso_takes_every_class_however_many() {
    // Thirty classes, each enabled in both states and taken both ways:
    // more rounds than a bound by the component's size would allow.
    const NAMES: [&str; 30] = [
        "c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12", "c13",
        "c14", "c15", "c16", "c17", "c18", "c19", "c20", "c21", "c22", "c23", "c24", "c25", "c26",
        "c27", "c28", "c29",
    ];
    let mut edges = vec![(Some("tick"), 0, 1)];
    for name in NAMES {
        edges.extend([(Some(name), 1, 2), (Some(name), 2, 1)]);
    }
    assert!(check(Table {
        edges,
        good: vec![],
    })
    .is_some());
}

#[test]
fn a_class_taken_nowhere_inside_is_escaped_through_a_state_that_disables_it() {
    // `leave` is enabled in 1 and 2 and leads out of {1, 2, 3}: the
    // fair cycle must pass 3, where it is disabled.
    let lasso = check(Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("leave"), 1, 4),
            (Some("a"), 1, 2),
            (Some("leave"), 2, 4),
            (Some("b"), 2, 1),
            (Some("c"), 2, 3),
            (Some("d"), 3, 1),
        ],
        good: vec![4],
    })
    .expect("{1, 2, 3} is bad and fair");
    assert_eq!(lasso.cycle.len(), 3, "1 -a-> 2 -c-> 3 -d-> 1: {lasso:?}");
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

/// [`ByName`], with a second goal every state meets.
struct SecondGoalMet;
impl Classify<Table> for SecondGoalMet {
    fn class(
        &self,
        model: &Table,
        state: &u8,
        action: &(Option<&'static str>, u8, u8),
    ) -> Option<u64> {
        ByName.class(model, state, action)
    }
    fn good(&self, model: &Table, state: &u8) -> bool {
        ByName.good(model, state)
    }
    fn goals(&self, model: &Table, state: &u8) -> u8 {
        0b10 | u8::from(self.good(model, state))
    }
}

#[test]
fn each_goal_is_checked_on_its_own_bit() {
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
        ],
        good: vec![],
    };
    let graph = Graph::explore(&table, &SecondGoalMet, Limits::default());
    assert!(find_fair_cycle_missing(&graph, 0, 1).is_some());
    assert_eq!(find_fair_cycle_missing(&graph, 1, 1), None);
    assert_eq!(fair_cycle_search(&graph, 1, 0), None);
}

#[test]
fn the_lasso_takes_a_weak_class_enabled_all_along_its_cycle() {
    // 1 <-> 2 is a cycle, but `leave` is enabled in both and never
    // taken on it: the fair lasso must go through 3 too.
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
            (Some("leave"), 1, 3),
            (Some("leave"), 2, 3),
            (Some("back"), 3, 1),
        ],
        good: vec![],
    };
    let graph = Graph::explore(&table, &ByName, Limits::default());
    let lasso = fair_bad_cycle(&graph).expect("every state is bad");
    // Walk the lasso's steps (successor positions) from initial state 0.
    let mut at: StateId = 0;
    let mut visited = Vec::new();
    for &step in lasso.prefix[1..].iter().chain(&lasso.cycle) {
        at = graph
            .edge(at, step as usize)
            .expect("a step of the graph")
            .target;
        visited.push(at);
    }
    assert!(visited.contains(&3), "{lasso:?}");
}

#[test]
fn the_lasso_reached_in_fewest_steps_is_reported() {
    // Two fair bad cycles: 5 <-> 6 three steps away, found first, and
    // 1 <-> 2 one step away.
    let lasso = check(Table {
        edges: vec![
            (Some("far"), 0, 3),
            (Some("near"), 0, 1),
            (Some("on"), 3, 4),
            (Some("on"), 4, 5),
            (Some("flip"), 5, 6),
            (Some("flop"), 6, 5),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
        ],
        good: vec![],
    })
    .expect("both cycles are fair");
    assert_eq!(
        lasso.prefix,
        [0, 1],
        "the second successor of 0, then the cycle"
    );
}

#[test]
fn states_left_by_a_strong_class_are_searched_again() {
    // `pick!` is enabled in 3 and never taken inside {1, 2, 3}: no fair
    // run stays where it is enabled, but 1 <-> 2 never enables it.
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
            (Some("on"), 2, 3),
            (Some("off"), 3, 1),
            (Some("pick!"), 3, 4),
        ],
        good: vec![4],
    };
    let graph = Graph::explore(&table, &ByNameStrong, Limits::default());
    let lasso = fair_bad_cycle(&graph).expect("1 <-> 2 is fair");
    assert_eq!(lasso.cycle.len(), 2, "{lasso:?}");
}

#[test]
fn a_weak_class_enabled_throughout_and_taken_is_fair() {
    // `flip` is enabled in both states of the cycle and taken on it.
    let lasso = check(Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("flip"), 1, 2),
            (Some("flip"), 2, 1),
        ],
        good: vec![],
    });
    assert!(lasso.is_some());
}

#[test]
fn the_cycle_goes_through_a_bad_state() {
    // The entry 1 is good, 1 <-> 3 goes through good states only, and
    // 2 is the bad one.
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("a"), 1, 3),
            (Some("a"), 3, 1),
            (Some("b"), 1, 2),
            (Some("b"), 2, 1),
        ],
        good: vec![1, 3],
    };
    let graph = Graph::explore(&table, &ByName, Limits::default());
    let lasso = fair_bad_cycle(&graph).expect("2 is bad and the component fair");
    let mut at: StateId = 0;
    let mut bad_on_cycle = false;
    for (n, &step) in lasso.prefix[1..].iter().chain(&lasso.cycle).enumerate() {
        at = graph.edge(at, step as usize).expect("a step").target;
        bad_on_cycle |= n + 1 >= lasso.prefix.len() && graph.goals(at) & 1 == 0;
    }
    assert!(bad_on_cycle, "{lasso:?}");
}

#[test]
fn components_come_in_reverse_topological_order() {
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
            (Some("settle"), 2, 3),
        ],
        good: vec![3],
    };
    let graph = Graph::explore(&table, &ByName, Limits::default());
    let mut components = strongly_connected_components(&graph);
    for component in &mut components {
        component.sort_unstable();
    }
    // Breadth-first, state n gets id n.
    assert_eq!(components, [vec![3], vec![1, 2], vec![0]]);
}

#[test]
fn a_lasso_in_explorer_indices_counts_the_no_ops() {
    // In 1 a no-op comes first (`wait`: 1 -> 1), so `flip` is the
    // state's first successor but its second action.
    let table = Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("wait"), 1, 1),
            (Some("flip"), 1, 2),
            (Some("flop"), 2, 1),
            (Some("settle"), 2, 3),
        ],
        good: vec![3],
    };
    let graph = Graph::explore(&table, &ByName, Limits::default());
    let lasso = fair_bad_cycle(&graph).expect("the 1-2 cycle is fair");
    assert_eq!(
        (lasso.prefix.clone(), lasso.cycle.clone()),
        (vec![0, 0], vec![0, 0])
    );
    let explorer = lasso.in_explorer_indices(&table);
    assert_eq!(explorer.prefix, [0, 0]);
    assert_eq!(explorer.cycle, [1, 0], "flip is action 1 of state 1");
    let states: Vec<u8> = crate::search::replay(&table, &explorer.path())
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(states, [0, 1, 2, 1]);
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

/// One state and one action that leads back to it: a step, not a no-op
/// (the table's models cannot make one).
struct Spin;
impl Whole for Spin {}

impl Model for Spin {
    type State = u8;
    type Action = ();
    fn init_states(&self) -> Vec<u8> {
        vec![0]
    }
    fn actions(&self, _: &u8, actions: &mut Vec<()>) {
        actions.push(());
    }
    fn next_state(&self, state: &u8, _: ()) -> Option<u8> {
        Some(*state)
    }
}

struct SpinIsFair;
impl Classify<Spin> for SpinIsFair {
    fn class(&self, _: &Spin, _: &u8, _: &()) -> Option<u64> {
        Some(1)
    }
    fn good(&self, _: &Spin, _: &u8) -> bool {
        false
    }
}

#[test]
fn the_cycle_keeps_to_the_states_a_fair_run_can_stay_in() {
    // `pick!` is enabled in 3 and leads out: a fair run cannot stay
    // where 3 is visited infinitely often. The cycle back from 2 to 1
    // must go the long way, through 4 and 5, not through 3.
    let lasso = check_strong(Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("a"), 1, 2),
            (Some("b"), 2, 4),
            (Some("e"), 2, 3),
            (Some("c"), 4, 5),
            (Some("d"), 5, 1),
            (Some("f"), 3, 1),
            (Some("pick!"), 3, 9),
        ],
        good: vec![9],
    })
    .expect("1 -> 2 -> 4 -> 5 -> 1 is fair");
    assert_eq!(lasso.cycle.len(), 4, "{lasso:?}");
}

#[test]
fn a_bad_state_with_a_step_back_to_itself_is_a_cycle() {
    let graph = Graph::explore(&Spin, &SpinIsFair, Limits::default());
    let lasso = fair_bad_cycle(&graph).expect("spinning is fair");
    assert_eq!((lasso.prefix, lasso.cycle), (vec![0], vec![0]));
}

#[test]
fn a_bad_state_is_stayed_in_only_if_each_fair_class_is_one_of_its_no_ops() {
    // In 1, `c` both changes nothing and leads to 2: staying takes it.
    let stuck = |leave: &'static str, strong: bool| {
        let table = Table {
            edges: vec![(Some("a"), 0, 1), (Some("c"), 1, 1), (Some(leave), 1, 2)],
            good: vec![2],
        };
        if strong {
            check_strong(table)
        } else {
            check(table)
        }
    };
    assert!(stuck("c", false).is_some());
    assert!(stuck("d", false).is_none(), "`d` must be taken, and leaves");
    assert!(stuck("d!", true).is_none(), "so must a strong `d!`");
    assert!(stuck("c", true).is_some());
}

/// Strong classes: a name ending in `!`.
struct ByNameStrong;
impl Classify<Table> for ByNameStrong {
    fn class(
        &self,
        model: &Table,
        state: &u8,
        action: &(Option<&'static str>, u8, u8),
    ) -> Option<u64> {
        let class = ByName.class(model, state, action)?;
        Some(match action.0 {
            Some(name) if name.ends_with('!') => class | crate::search::graph::STRONG,
            _ => class & !crate::search::graph::STRONG,
        })
    }
    fn good(&self, model: &Table, state: &u8) -> bool {
        model.good.contains(state)
    }
}

fn check_strong(table: Table) -> Option<Lasso> {
    search(table, &ByNameStrong)
}

/// A random pick between two brokers, made again at every round: from 1
/// the consumer asks broker a (back to 2, still unconverged) or broker b
/// (to 3, converged). Asking a for ever is fair under weak fairness
/// (asking b is enabled in 1 only, not all along the cycle) but not
/// under strong fairness, which is what a random pick gives.
fn random_pick(ask_b: &'static str, ask_a: &'static str) -> Table {
    Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some(ask_a), 1, 2),
            (Some("answer"), 2, 1),
            (Some(ask_b), 1, 3),
        ],
        good: vec![3],
    }
}

#[test]
fn weak_fairness_lets_a_random_pick_avoid_one_option_for_ever() {
    let lasso = check(random_pick("ask b", "ask a")).expect("unfair to b, yet weakly fair");
    assert!(!lasso.cycle.is_empty());
}

#[test]
fn strong_fairness_makes_a_random_pick_take_every_option() {
    assert_eq!(check_strong(random_pick("ask b!", "ask a!")), None);
}

#[test]
fn strong_fairness_still_finds_a_cycle_that_takes_every_option() {
    // Both picks lead back into the unconverged cycle: asking every
    // broker does not help, as in a partial partition.
    let lasso = check_strong(Table {
        edges: vec![
            (Some("tick"), 0, 1),
            (Some("ask a!"), 1, 2),
            (Some("answer"), 2, 1),
            (Some("ask b!"), 1, 4),
            (Some("answer"), 4, 1),
            (Some("settle"), 4, 3),
        ],
        good: vec![3],
    });
    // `settle` is weak and enabled in 4 only: the cycle 1-2-1-4-1 is fair.
    let lasso = lasso.expect("a fair cycle through both picks");
    assert!(lasso.cycle.len() >= 4, "{lasso:?}");
}

#[test]
fn a_good_cycle_is_fine() {
    let lasso = check(Table {
        edges: vec![(Some("a"), 0, 1), (Some("b"), 1, 2), (Some("c"), 2, 1)],
        good: vec![1, 2],
    });
    assert_eq!(lasso, None);
}
