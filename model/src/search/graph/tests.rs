//! The graph's tests: its exploration, its store and its paths.

use std::time::Duration;

use stateright::Model;

use super::explore::Keep;
use super::*;
use crate::search::budget::{Cutoff, Limits};
use crate::search::packed::tests::Whole;
use crate::search::{encode_path, explorer_indices, indices_of, path_of, replay};

/// Counts up by 1 or by 3 from 0; 6 is bad. The shortest way there takes
/// two steps (3, 6), the first found depth-first may take six.
struct Counter;

impl Whole for Counter {}

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
        let stopped = Graph::explore_paths(&Counter, &SixIsBad, limits, &mut |_, _, _| {});
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

impl Whole for WithNoop {}

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

impl Whole for Fenced {}

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

impl Whole for Nothing {}

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
    // the fingerprint table 19 (12-byte slots, about two thirds full),
    // and the edges' bytes (2 an edge, plus each state's count and
    // no-op), every vector shrunk to its length.
    assert_eq!(graph.edge_count(), 60_000);
    assert_eq!(graph.bytes_per_state(), 35);
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

impl Whole for Idle {}

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

impl Whole for Classes {}

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

impl Whole for Crowded {}

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

impl Whole for Wide {}

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
    for (limits, keep) in [
        (Limits::default(), Keep::Edges),
        (Limits::default(), Keep::Paths),
        (
            Limits {
                max_states: Some(7_000),
                ..Limits::default()
            },
            Keep::Edges,
        ),
    ] {
        let explore =
            |limits| Graph::explore_keeping(&Wide, &Fours, limits, keep, &mut |_, _, _| {});
        let one = explore(limits);
        for threads in [2, 3] {
            let many = explore(Limits { threads, ..limits });
            assert_eq!(one, many, "{threads} threads, {limits:?}, {keep:?}");
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
