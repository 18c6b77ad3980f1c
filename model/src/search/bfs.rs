//! The safety search: breadth-first over any Stateright [`Model`], level by
//! level, with sleep sets (Godefroid) to take fewer transitions, and
//! fingerprints of 64 or 128 bits.
//!
//! **Sleep sets** prune transitions, never states. When a state `s` is
//! expanded, its actions are taken in order; the successor `s·a` inherits a
//! *sleep set*: the actions taken at `s` before `a`, and those asleep at
//! `s`, that are independent of `a` (see [`Reduction`]). An action asleep at
//! a state is not taken there: the state it leads to is reached by the
//! other order of the same two steps. Every reachable state is still
//! visited, and so every state property keeps its verdict.
//!
//! With state matching, a state reached again with a sleep set that is not
//! a superset of the stored one would have to be expanded again for the
//! difference. Breadth-first, level by level, that never happens after the
//! state is expanded: every arrival at a state of depth `d` by a path of
//! `d` steps is made while level `d - 1` is expanded, before the state is,
//! and the state's sleep set becomes the intersection of theirs (so its one
//! expansion takes the union of what each arrival asks). A later arrival
//! comes by a longer path; no path through it reaches any state in its
//! fewest steps, and each state's fewest steps are all the argument needs
//! (every prefix of a shortest path is a shortest path, so the sleep-set
//! exploration of the shortest paths alone reaches every state at its
//! depth). Such arrivals are ignored, which also keeps every state at its
//! breadth-first depth: counterexamples stay shortest. `docs/spec.md`
//! ("Sleep sets") has the argument in full; the tests compare the
//! reduced and unreduced state counts on every scenario.
//!
//! **Memory**: the seen set keeps, per state, its fingerprint, its parent's
//! fingerprint and the index of the action from it (so any state's path is
//! rebuilt, and replayed as Explorer action indices), and its depth; one
//! level of whole states is kept, with their sleep sets.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stateright::{Expectation, Model};

use super::budget::{Cutoff, Limits};
use super::fingerprint::{PassThrough, Print};

/// Which actions of a model commute: the relation sleep sets rely on.
pub trait Reduction<M: Model> {
    /// Whether `a` and `b` are independent: in every state where both are
    /// enabled (each changes the state), taking one leaves the other
    /// enabled, and both orders lead to the same state. It must not depend
    /// on the state, and is only asked of two different actions.
    fn independent(&self, model: &M, a: &M::Action, b: &M::Action) -> bool;
}

/// How a search runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Its threads, and where it stops early: once `max_states` unique
    /// states are known, or after `timeout`.
    pub limits: Limits,
    /// Take sleep sets into account (off: every enabled action is taken).
    pub reduction: bool,
    /// How often the progress callback runs.
    pub progress_every: Duration,
}

/// Counters of a running or finished search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// States generated: the initial ones and one per transition taken,
    /// repeats included.
    pub generated: usize,
    /// Distinct states.
    pub unique: usize,
    /// The deepest level expanded, the initial states' being 1.
    pub max_depth: usize,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Its counters at the end.
    pub counts: Counts,
    /// Why it ended before every reachable state was expanded, if it did:
    /// [`Cutoff::StateLimit`], [`Cutoff::Timeout`] or
    /// [`Cutoff::EveryPropertyDecided`].
    pub cutoff: Option<Cutoff>,
    /// Per property (in the model's order): the Explorer action indices
    /// of its discovery (a counterexample of an `always` property, an
    /// example of a `sometimes` one), found with the fewest steps.
    pub discoveries: Vec<Option<Vec<u32>>>,
}

/// The seen set's record of a state.
#[derive(Clone, Copy)]
struct Seen<F> {
    /// The fingerprint of the state it was first reached from (its own for
    /// an initial state).
    parent: F,
    /// The index of the action taken there, among all the parent's actions
    /// (an initial state's index among the initial states).
    action: u16,
    /// Its breadth-first depth, the initial states' being 1.
    depth: u16,
    /// While it waits in the next level: its place there.
    slot: u32,
}

/// A state waiting to be expanded, with the actions asleep at it.
struct Node<S, A, F> {
    state: S,
    print: F,
    sleep: Vec<A>,
}

/// One shard of the seen set, with the next level's states that hash to it.
struct Shard<S, A, F> {
    seen: HashMap<F, Seen<F>, BuildHasherDefault<PassThrough>>,
    next: Vec<Node<S, A, F>>,
}

/// The seen set's shards, each behind its lock.
type Shards<M, F> = [Mutex<Shard<<M as Model>::State, <M as Model>::Action, F>>];

/// Shards of the seen set: enough that two threads seldom wait on one.
const SHARDS: usize = 256;

/// States a thread takes from the level at a time.
const CHUNK: usize = 512;

/// Why a model cannot be searched here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// An `eventually` property: Stateright decides it on the paths that
    /// end in a terminal state, which a search by levels does not follow.
    Eventually,
    /// More than 64 properties (one bit each while searching).
    TooManyProperties,
    /// More than 65,535 initial states or levels, or actions in a state.
    TooLarge,
}

/// Searches every state reachable from `model`'s initial states within
/// `Model::within_boundary`, breadth-first, checking its `always` and
/// `sometimes` properties, with the sleep sets of `reduction` when
/// `options.reduction` is set; calls `progress` about every
/// `options.progress_every`.
pub fn search<M, R, F>(
    model: &M,
    reduction: &R,
    options: Options,
    progress: &mut dyn FnMut(Counts),
) -> Result<Outcome, Unsupported>
where
    M: Model + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone + PartialEq + Send + Sync,
    R: Reduction<M> + Sync,
    F: Print,
{
    let properties = model.properties();
    supported(&properties)?;
    let started = Instant::now();
    let shards: Box<Shards<M, F>> = (0..SHARDS)
        .map(|_| {
            Mutex::new(Shard {
                seen: HashMap::default(),
                next: Vec::new(),
            })
        })
        .collect();
    let run = Run {
        model,
        reduction,
        options,
        started,
        properties: &properties,
        shards: &shards,
        undecided: AtomicU64::new(if properties.len() == 64 {
            u64::MAX
        } else {
            (1u64 << properties.len()) - 1
        }),
        this_level: AtomicU64::new(0),
        finishing: AtomicBool::new(false),
        found: Mutex::new(vec![None; properties.len()]),
        generated: AtomicUsize::new(0),
        unique: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        ended: Mutex::new(None),
        too_large: AtomicBool::new(false),
    };
    for (index, state) in model.init_states().into_iter().enumerate() {
        let index = u16::try_from(index).map_err(|_| Unsupported::TooLarge)?;
        run.generated.fetch_add(1, Ordering::Relaxed);
        let print = F::of(&state);
        run.insert(state, print, &[], (print, index), 1);
    }
    let mut level = run.take_next_level();
    let mut depth: u16 = 1;
    let mut max_depth = 0;
    let mut last_progress = Instant::now();
    while !level.is_empty() && !run.stop.load(Ordering::Relaxed) {
        max_depth = usize::from(depth);
        let Some(child_depth) = depth.checked_add(1) else {
            return Err(Unsupported::TooLarge);
        };
        let cursor = AtomicUsize::new(0);
        let threads = options.limits.workers();
        std::thread::scope(|scope| {
            let (run, level, cursor) = (&run, &level, &cursor);
            let workers: Vec<_> = (1..threads)
                .map(|_| scope.spawn(move || run.work(level, cursor, child_depth, &mut || {})))
                .collect();
            let counts = || run.counts(max_depth);
            run.work(level, cursor, child_depth, &mut || {
                if last_progress.elapsed() >= options.progress_every {
                    last_progress = Instant::now();
                    progress(counts());
                }
            });
            for worker in workers {
                // A worker panics only if the model does: pass it on.
                if let Err(panic) = worker.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
        if run.too_large.load(Ordering::Relaxed) {
            return Err(Unsupported::TooLarge);
        }
        run.this_level.store(0, Ordering::Relaxed);
        if run.finishing.load(Ordering::Relaxed) {
            run.end(Cutoff::EveryPropertyDecided);
        }
        drop(level);
        level = run.take_next_level();
        depth = child_depth;
    }
    let counts = run.counts(max_depth);
    let cutoff = *run.ended.lock().expect("not poisoned");
    let found = run.found.into_inner().expect("not poisoned");
    let shards: Vec<_> = shards
        .into_vec()
        .into_iter()
        .map(|s| s.into_inner().expect("not poisoned").seen)
        .collect();
    let discoveries = found
        .into_iter()
        .map(|print| print.map(|print| path_to(&shards, print)))
        .collect();
    Ok(Outcome {
        counts,
        cutoff,
        discoveries,
    })
}

/// The Explorer action indices of the path by which the state of `print`
/// was first reached.
fn path_to<F: Print>(
    shards: &[HashMap<F, Seen<F>, BuildHasherDefault<PassThrough>>],
    mut print: F,
) -> Vec<u32> {
    let mut indices = Vec::new();
    loop {
        let seen = shards[print.shard_bits() % shards.len()][&print];
        indices.push(u32::from(seen.action));
        if seen.depth == 1 {
            break;
        }
        print = seen.parent;
    }
    indices.reverse();
    indices
}

/// Whether a search by levels can decide `properties`: `always` and
/// `sometimes` ones, at most 64 (one bit each).
pub(super) fn supported<M: Model>(
    properties: &[stateright::Property<M>],
) -> Result<(), Unsupported> {
    if properties
        .iter()
        .any(|p| p.expectation == Expectation::Eventually)
    {
        return Err(Unsupported::Eventually);
    }
    if properties.len() > 64 {
        return Err(Unsupported::TooManyProperties);
    }
    Ok(())
}

/// Whether `state` is a discovery of `property`: a counterexample of an
/// `always` one, an example of a `sometimes` one.
pub(super) fn discovers<M: Model>(
    model: &M,
    property: &stateright::Property<M>,
    state: &M::State,
) -> bool {
    let holds = (property.condition)(model, state);
    match property.expectation {
        Expectation::Always => !holds,
        Expectation::Sometimes => holds,
        Expectation::Eventually => false,
    }
}

/// Buffers that one thread's expansions reuse.
pub(super) struct Scratch<A> {
    actions: Vec<A>,
    taken: Vec<A>,
    sleep: Vec<A>,
}

impl<A> Default for Scratch<A> {
    fn default() -> Self {
        Scratch {
            actions: Vec::new(),
            taken: Vec::new(),
            sleep: Vec::new(),
        }
    }
}

/// Takes every action of `state` not in `asleep` (all of them unless
/// `reduce`), calling `reached` with each successor within the boundary,
/// the action's index among the state's actions and the successor's sleep
/// set; returns the transitions taken, or `None` when the state has more
/// actions than a `u16` names.
pub(super) fn expand<M, R>(
    model: &M,
    reduction: &R,
    reduce: bool,
    (state, asleep): (&M::State, &[M::Action]),
    scratch: &mut Scratch<M::Action>,
    mut reached: impl FnMut(M::State, u16, &[M::Action]),
) -> Option<usize>
where
    M: Model,
    M::Action: Clone + PartialEq,
    R: Reduction<M>,
{
    let Scratch {
        actions,
        taken,
        sleep,
    } = scratch;
    actions.clear();
    taken.clear();
    model.actions(state, actions);
    if actions.len() > usize::from(u16::MAX) {
        return None;
    }
    let mut generated = 0;
    for (index, action) in actions.iter().enumerate() {
        if reduce && asleep.contains(action) {
            continue;
        }
        let Some(next) = model.next_state(state, action.clone()) else {
            continue;
        };
        if !model.within_boundary(&next) {
            // Not explored, so it covers no other order: nothing
            // sleeps because of it.
            continue;
        }
        generated += 1;
        sleep.clear();
        if reduce {
            sleep.extend(
                asleep
                    .iter()
                    .chain(taken.iter())
                    .filter(|b| reduction.independent(model, b, action))
                    .cloned(),
            );
            taken.push(action.clone());
        }
        reached(next, index as u16, sleep);
    }
    Some(generated)
}

/// A search under way: what its threads share.
struct Run<'a, M: Model, R, F> {
    model: &'a M,
    reduction: &'a R,
    options: Options,
    started: Instant,
    properties: &'a [stateright::Property<M>],
    shards: &'a Shards<M, F>,
    /// One bit per property still without a discovery.
    undecided: AtomicU64,
    /// One bit per property first discovered in the level being expanded:
    /// it is judged on the rest of the level too.
    this_level: AtomicU64,
    /// Set once every property is decided: the rest of the level is
    /// judged, not expanded.
    finishing: AtomicBool,
    /// Each property's discovery: of the states of the first level that
    /// has one, the one with the least fingerprint, so that every run
    /// reports the same.
    found: Mutex<Vec<Option<F>>>,
    generated: AtomicUsize,
    unique: AtomicUsize,
    /// Set when the search is to end before its level does.
    stop: AtomicBool,
    ended: Mutex<Option<Cutoff>>,
    /// A state had more actions than a [`Seen`] can name.
    too_large: AtomicBool,
}

impl<M, R, F> Run<'_, M, R, F>
where
    M: Model + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone + PartialEq + Send + Sync,
    R: Reduction<M> + Sync,
    F: Print,
{
    fn counts(&self, max_depth: usize) -> Counts {
        Counts {
            generated: self.generated.load(Ordering::Relaxed),
            unique: self.unique.load(Ordering::Relaxed),
            max_depth,
        }
    }

    /// Ends the search for `why`, unless it ended already.
    fn end(&self, why: Cutoff) {
        self.ended.lock().expect("not poisoned").get_or_insert(why);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The states of the next level, gathered from the shards.
    fn take_next_level(&self) -> Vec<Node<M::State, M::Action, F>> {
        let mut level = Vec::new();
        for shard in self.shards {
            level.append(&mut shard.lock().expect("not poisoned").next);
        }
        level
    }

    /// Records `state`, reached from `parent` by its `action`th action at
    /// `depth`, with `sleep` asleep: a new state waits in the next level;
    /// one already waiting there keeps only what both sleep sets hold; one
    /// already expanded, or in this level, is reached by a longer path and
    /// left as it is.
    fn insert(
        &self,
        state: M::State,
        print: F,
        sleep: &[M::Action],
        (parent, action): (F, u16),
        depth: u16,
    ) {
        let mut shard = self.shards[print.shard_bits() % SHARDS]
            .lock()
            .expect("not poisoned");
        let Shard { seen, next } = &mut *shard;
        match seen.entry(print) {
            Entry::Vacant(vacant) => {
                vacant.insert(Seen {
                    parent,
                    action,
                    depth,
                    slot: next.len() as u32,
                });
                next.push(Node {
                    state,
                    print,
                    sleep: sleep.to_vec(),
                });
                drop(shard);
                let unique = self.unique.fetch_add(1, Ordering::Relaxed) + 1;
                if self.options.limits.states_reached(unique) {
                    self.end(Cutoff::StateLimit);
                }
            }
            Entry::Occupied(mut known) => {
                let known = known.get_mut();
                if known.depth == depth {
                    let waiting = &mut next[known.slot as usize].sleep;
                    waiting.retain(|a| sleep.contains(a));
                    // The least parent, whatever the threads' order: the
                    // same paths on every run.
                    if (parent, action) < (known.parent, known.action) {
                        (known.parent, known.action) = (parent, action);
                    }
                }
            }
        }
    }

    /// Expands chunks of `level` until none is left or the search ends,
    /// calling `tick` after each.
    fn work(
        &self,
        level: &[Node<M::State, M::Action, F>],
        cursor: &AtomicUsize,
        child_depth: u16,
        tick: &mut dyn FnMut(),
    ) {
        let mut scratch = Scratch::default();
        while !self.stop.load(Ordering::Relaxed) {
            let start = cursor.fetch_add(CHUNK, Ordering::Relaxed);
            let Some(chunk) = level.get(start..level.len().min(start + CHUNK)) else {
                break;
            };
            if chunk.is_empty() {
                break;
            }
            let mut generated = 0;
            for node in chunk {
                if self.visit(node) {
                    generated += self.expand(node, child_depth, &mut scratch);
                }
            }
            self.generated.fetch_add(generated, Ordering::Relaxed);
            if self.options.limits.timed_out(self.started) {
                self.end(Cutoff::Timeout);
            }
            tick();
        }
    }

    /// Judges `node`'s state on the properties still undecided and those
    /// first discovered in this level; whether it is to be expanded (not
    /// once every property is decided).
    fn visit(&self, node: &Node<M::State, M::Action, F>) -> bool {
        let mut open =
            self.undecided.load(Ordering::Relaxed) | self.this_level.load(Ordering::Relaxed);
        while open != 0 {
            let bit = open.trailing_zeros() as usize;
            open &= open - 1;
            if discovers(self.model, &self.properties[bit], &node.state) {
                let mut found = self.found.lock().expect("not poisoned");
                // The least fingerprint of the level: see `Run::found`.
                let least = found[bit].map_or(node.print, |f: F| f.min(node.print));
                found[bit] = Some(least);
                self.this_level.fetch_or(1 << bit, Ordering::Relaxed);
                let left = self.undecided.fetch_and(!(1 << bit), Ordering::Relaxed) & !(1 << bit);
                if left == 0 {
                    self.finishing.store(true, Ordering::Relaxed);
                }
            }
        }
        !self.finishing.load(Ordering::Relaxed)
    }

    /// Takes every action of `node` that is not asleep there; returns the
    /// transitions taken.
    fn expand(
        &self,
        node: &Node<M::State, M::Action, F>,
        child_depth: u16,
        scratch: &mut Scratch<M::Action>,
    ) -> usize {
        let taken = expand(
            self.model,
            self.reduction,
            self.options.reduction,
            (&node.state, &node.sleep),
            scratch,
            |next, index, sleep| {
                let print = F::of(&next);
                self.insert(next, print, sleep, (node.print, index), child_depth);
            },
        );
        taken.unwrap_or_else(|| {
            self.too_large.store(true, Ordering::Relaxed);
            self.stop.store(true, Ordering::Relaxed);
            0
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Two counters that count up to `N` each, independently, and a third
    /// action that resets both (dependent on everything): a grid of
    /// `(N + 1)²` states with diamonds everywhere (also `dataflow`'s).
    pub(crate) struct Grid;

    pub(crate) const N: u8 = 6;

    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
    pub(crate) enum Step {
        X,
        Y,
        Reset,
    }

    impl Model for Grid {
        type State = (u8, u8);
        type Action = Step;

        fn init_states(&self) -> Vec<(u8, u8)> {
            vec![(0, 0)]
        }

        fn actions(&self, _: &(u8, u8), actions: &mut Vec<Step>) {
            actions.extend([Step::X, Step::Y, Step::Reset]);
        }

        fn next_state(&self, &(x, y): &(u8, u8), step: Step) -> Option<(u8, u8)> {
            match step {
                Step::X => (x < N).then_some((x + 1, y)),
                Step::Y => (y < N).then_some((x, y + 1)),
                Step::Reset => ((x, y) != (0, 0)).then_some((0, 0)),
            }
        }

        fn properties(&self) -> Vec<stateright::Property<Self>> {
            vec![
                stateright::Property::always("not the far corner", |_, s| *s != (N, N)),
                stateright::Property::sometimes("off the grid", |_, s: &(u8, u8)| s.0 > N),
            ]
        }
    }

    pub(crate) struct Counters;

    impl Reduction<Grid> for Counters {
        fn independent(&self, _: &Grid, a: &Step, b: &Step) -> bool {
            matches!((a, b), (Step::X, Step::Y) | (Step::Y, Step::X))
        }
    }

    fn run(reduction: bool, threads: usize) -> Outcome {
        let options = Options {
            limits: Limits {
                threads,
                ..Limits::default()
            },
            reduction,
            progress_every: Duration::from_secs(60),
        };
        search::<_, _, u64>(&Grid, &Counters, options, &mut |_| {}).expect("supported")
    }

    #[test]
    fn sleep_sets_take_fewer_transitions_to_the_same_states_and_paths() {
        for threads in [1, 2] {
            let full = run(false, threads);
            let reduced = run(true, threads);
            assert_eq!(full.counts.unique, reduced.counts.unique);
            assert_eq!(full.counts.max_depth, reduced.counts.max_depth);
            assert!(reduced.counts.generated < full.counts.generated);
            assert_eq!(full.counts.unique, usize::from(N + 1).pow(2));
            assert_eq!((full.cutoff, reduced.cutoff), (None, None));
            assert_eq!(reduced.discoveries[1], None);
            // The far corner takes 2N steps.
            let corner = reduced.discoveries[0].as_ref().expect("found");
            assert_eq!(corner.len(), 1 + 2 * usize::from(N));
            let states = crate::search::replay(&Grid, corner);
            assert_eq!(states.last().map(|(s, _)| *s), Some((N, N)));
        }
    }

    #[test]
    fn every_run_reports_the_same_paths() {
        for reduction in [false, true] {
            let one = run(reduction, 1).discoveries;
            for _ in 0..3 {
                assert_eq!(run(reduction, 2).discoveries, one);
            }
        }
    }
}
