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
//! **Memory**: states are kept packed ([`Packing`]: a record of its
//! parts' ids, a few 32-bit lanes), each where the thread that found it
//! wrote it, in chunks reused from level to level ([`level`](super::level)),
//! with its rank in its level and its sleep set (a bit set over the
//! state's actions) beside it, so that a level is its records and the few
//! sleep sets that name actions by value. Every state known
//! is an entry of [`Visited`] (a fingerprint, 8 bytes at 64 bits); the
//! next level's are gathered in [`Arrivals`], where arrivals merge without
//! a lock; a level's arrivals are put in fingerprint order before it is
//! expanded, so that a state's id is its place in the search and the least
//! parent is the least fingerprint. Each state's parent id and action
//! index, 8 bytes, are appended to a log in a scratch file
//! ([`parents`](super::parents)) from which any state's path is rebuilt.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stateright::{Expectation, Model};

use super::budget::{Cutoff, Limits};
use super::fingerprint::Print;
use super::intern::Interner;
use super::joined;
use super::level::{Pool, Shelf, Writer, Written};
use super::packed::{Codec, Packing};
use super::parents::Parents;
use super::visited::{Arrival, Arrivals, Arrived, Visited};

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

/// States a thread expands between two looks at the counts and limits.
const BATCH: usize = 512;

/// Why a model cannot be searched here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// An `eventually` property: Stateright decides it on the paths that
    /// end in a terminal state, which a search by levels does not follow.
    Eventually,
    /// More than 64 properties (one bit each while searching).
    TooManyProperties,
    /// More than 65,535 initial states or levels, or actions in a state,
    /// or more than 2^32 states in a level.
    TooLarge,
}

/// Searches every state reachable from `model`'s initial states within
/// `Model::within_boundary`, breadth-first, checking its `always` and
/// `sometimes` properties, with the sleep sets of `reduction` when
/// `options.reduction` is set; calls `progress` about every
/// `options.progress_every`. The log of parents is a file in the
/// temporary directory (`TMPDIR`); a search that cannot write it ends
/// with [`Cutoff::ScratchFailed`].
pub fn search<M, R, F>(
    model: &M,
    reduction: &R,
    options: Options,
    progress: &mut dyn FnMut(Counts),
) -> Result<Outcome, Unsupported>
where
    M: Packing + Sync,
    M::State: Hash + Send + Sync,
    M::Action: Clone + PartialEq + Send + Sync,
    R: Reduction<M> + Sync,
    F: Print,
{
    let properties = model.properties();
    supported(&properties)?;
    let started = Instant::now();
    let width = model.parts();
    let mut interner = Interner::new(1 << 12);
    let mut visited = Visited::<F>::new(1 << 16);
    let Ok(mut parents) = Parents::new(&std::env::temp_dir()) else {
        return Ok(Outcome {
            counts: Counts::default(),
            cutoff: Some(Cutoff::ScratchFailed),
            discoveries: vec![None; properties.len()],
        });
    };
    let pool = Pool::new(width);
    let mut level = initial_level(model, &interner, &pool, &mut parents, &mut visited)?;
    let run = Run {
        model,
        reduction,
        options,
        started,
        properties: &properties,
        undecided: AtomicU64::new(if properties.len() == 64 {
            u64::MAX
        } else {
            (1u64 << properties.len()) - 1
        }),
        this_level: AtomicU64::new(0),
        finishing: AtomicBool::new(false),
        found: Mutex::new(vec![None; properties.len()]),
        generated: AtomicUsize::new(model.init_states().len()),
        unique: AtomicUsize::new(level.len),
        stop: AtomicBool::new(false),
        ended: Mutex::new(None),
        too_large: AtomicBool::new(false),
        prints: PhantomData,
    };
    let (mut depth, mut max_depth) = (1, 0);
    let mut last_progress = Instant::now();
    let mut previous_len = level.len;
    let mut arrivals = Arrivals::new(0);
    while level.len > 0 && !run.stop.load(Ordering::Relaxed) {
        max_depth = depth;
        interner.settle();
        // Room for a level a little larger than the last one grew by.
        let growth = (level.len as f64 / previous_len.max(1) as f64).clamp(1.0, 4.0);
        arrivals.make_room((level.len as f64 * growth * 1.1) as usize);
        let mut past = Past::default();
        previous_len = level.len;
        let cursor = AtomicUsize::new(0);
        let threads = options.limits.workers();
        let outs: Vec<Written> = std::thread::scope(|scope| {
            let (interner, visited, past, pool) = (&interner, &visited, &past, &pool);
            let (run, level, cursor, arrivals) = (&run, &level, &cursor, &arrivals);
            let workers: Vec<_> = (1..threads)
                .map(|thread| {
                    scope.spawn(move || {
                        let tables = Tables {
                            interner,
                            visited,
                            arrivals,
                            past,
                            pool,
                        };
                        let writer = Writer::new(pool, thread as u64);
                        run.work(level, cursor, tables, writer, &mut || {})
                    })
                })
                .collect();
            let counts = || run.counts(depth);
            let tables = Tables {
                interner,
                visited,
                arrivals,
                past,
                pool,
            };
            let writer = Writer::new(pool, 0);
            let mut outs = vec![run.work(level, cursor, tables, writer, &mut || {
                if last_progress.elapsed() >= options.progress_every {
                    last_progress = Instant::now();
                    progress(counts());
                }
            })];
            outs.extend(workers.into_iter().map(joined));
            outs
        });
        if run.too_large.load(Ordering::Relaxed) {
            return Err(Unsupported::TooLarge);
        }
        run.this_level.store(0, Ordering::Relaxed);
        if run.finishing.load(Ordering::Relaxed) {
            run.end(Cutoff::EveryPropertyDecided);
        }
        let past = past.get_mut().expect("not poisoned");
        let ids = (level.offset, level.offset + level.len as u64);
        let arrived = arrivals.drain_sorted(threads);
        if visited.grows_with(arrived.iter().map(Vec::len).sum()) {
            // The arrivals' table is made again for the next level: it
            // need not be held while the visited table is in two copies.
            arrivals = Arrivals::new(0);
        }
        let tables = (&mut parents, &mut visited);
        level = next_level(ids, &arrived, past, outs, width, tables, threads)?;
        run.unique.store(visited.len(), Ordering::Relaxed);
        if level.len > 0 {
            depth += 1;
        }
        if parents.failed() {
            run.end(Cutoff::ScratchFailed);
        }
    }
    let counts = run.counts(max_depth);
    let found = std::mem::take(&mut *run.found.lock().expect("not poisoned"));
    let discoveries = found
        .into_iter()
        .map(|id| id.map(|id| path_to(&mut parents, id)))
        .collect();
    if parents.failed() {
        run.end(Cutoff::ScratchFailed);
    }
    let cutoff = *run.ended.lock().expect("not poisoned");
    Ok(Outcome {
        counts,
        cutoff,
        discoveries,
    })
}

/// A level's `len` states in fingerprint order, the first of them with id
/// `offset`: each one's record on the level's shelf, with its rank and its
/// sleep set (a bit per action index).
struct Level<A> {
    offset: u64,
    len: usize,
    /// By rank, the actions asleep past the bits of those with some.
    past: HashMap<usize, Vec<A>>,
    records: Shelf,
}

/// The parent's id of an initial state in the log of parents.
const NO_PARENT: u64 = (1 << 48) - 1;

/// The initial states, each once (with the least index of equal ones),
/// with nothing asleep; their parents logged, their fingerprints visited.
fn initial_level<M: Packing, F: Print>(
    model: &M,
    interner: &Interner<M::Part>,
    pool: &Pool,
    parents: &mut Parents,
    visited: &mut Visited<F>,
) -> Result<Level<M::Action>, Unsupported>
where
    M::State: Hash,
{
    let mut codec = Codec::new(model, interner);
    let mut writer = Writer::new(pool, 0);
    let mut initial = Vec::new();
    for (index, state) in model.init_states().into_iter().enumerate() {
        let index = u16::try_from(index).map_err(|_| Unsupported::TooLarge)?;
        let (record, lanes) = writer.push();
        codec
            .encode(&state, lanes)
            .map_err(|_| Unsupported::TooLarge)?;
        initial.push(Arrived {
            print: F::of(&state),
            step: u64::from(index),
            sleep: 0,
            record,
        });
    }
    initial.sort_by_key(|a| (a.print, a.step));
    initial.dedup_by_key(|a| a.print);
    let mut records = Shelf::new(model.parts(), vec![writer.written()]);
    for (rank, a) in initial.iter().enumerate() {
        // Fewer than 2^16 initial states.
        records.rank(a.record, rank as u32, 0);
        parents.push(NO_PARENT << 16 | a.step);
    }
    let len = initial.len();
    visited.extend(&[initial], |a| a.print, 1);
    Ok(Level {
        offset: 0,
        len,
        past: HashMap::new(),
        records,
    })
}

/// The level the arrivals at a level make (its states' ids from
/// `parent_offset`, the arrivals' from `offset`), in fingerprint order as
/// `arrived`'s runs are, its records where the threads wrote them (`outs`,
/// by thread); each state's parent logged, its fingerprint visited (by
/// `threads` threads).
fn next_level<F: Print, A>(
    (parent_offset, offset): (u64, u64),
    arrived: &[Vec<Arrived<F>>],
    past: &mut HashMap<F, Vec<A>>,
    outs: Vec<Written>,
    width: usize,
    (parents, visited): (&mut Parents, &mut Visited<F>),
    threads: usize,
) -> Result<Level<A>, Unsupported> {
    let mut records = Shelf::new(width, outs);
    let mut next_past = HashMap::new();
    for (rank, a) in arrived.iter().flatten().enumerate() {
        let ranked = u32::try_from(rank).map_err(|_| Unsupported::TooLarge)?;
        records.rank(a.record, ranked, a.sleep);
        if a.sleep & PAST != 0 {
            if let Some(actions) = past.remove(&a.print) {
                next_past.insert(rank, actions);
            }
        }
        let parent = parent_offset + (a.step >> 16);
        parents.push(parent << 16 | (a.step & 0xFFFF));
    }
    visited.extend(arrived, |a| a.print, threads);
    Ok(Level {
        offset,
        len: arrived.iter().map(Vec::len).sum(),
        past: next_past,
        records,
    })
}

/// The Explorer action indices of the path by which state `id` was first
/// reached, from the log of parents.
fn path_to(parents: &mut Parents, mut id: u64) -> Vec<u32> {
    let mut indices = Vec::new();
    while let Some(entry) = parents.get(id) {
        indices.push((entry & 0xFFFF) as u32);
        if entry >> 16 == NO_PARENT {
            break;
        }
        id = entry >> 16;
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

/// The tables a level's threads share.
struct Tables<'t, M: Packing, F> {
    interner: &'t Interner<M::Part>,
    visited: &'t Visited<F>,
    arrivals: &'t Arrivals<F>,
    /// The actions asleep past the bits ([`PAST`]) at the next level's
    /// states that have some.
    past: &'t Past<F, M::Action>,
    /// Where the chunks of records expanded go.
    pool: &'t Pool,
}

/// Sleep sets' actions past their bits, by state.
type Past<F, A> = Mutex<HashMap<F, Vec<A>>>;

/// What one thread's expansions reuse.
struct Work<'t, M: Packing, F> {
    tables: Tables<'t, M, F>,
    codec: Codec<'t, M>,
    actions: Vec<M::Action>,
    /// Actions taken past the bits of a sleep set.
    taken_past: Vec<M::Action>,
    /// A successor's sleep set past the bits, among its parent's actions.
    sleep_past: Vec<M::Action>,
    /// A successor's actions, to place its sleep set among them, and its
    /// sleep set past the bits there.
    next_actions: Vec<M::Action>,
    placed_past: Vec<M::Action>,
    /// The records of the states this thread found first.
    out: Writer<'t>,
    /// States found first since the counts were last brought up to date.
    new: usize,
}

/// A search under way: what its threads share.
struct Run<'a, M: Model, R, F> {
    model: &'a M,
    reduction: &'a R,
    options: Options,
    started: Instant,
    properties: &'a [stateright::Property<M>],
    /// One bit per property still without a discovery.
    undecided: AtomicU64,
    /// One bit per property first discovered in the level being expanded:
    /// it is judged on the rest of the level too.
    this_level: AtomicU64,
    /// Set once every property is decided: the rest of the level is
    /// judged, not expanded.
    finishing: AtomicBool,
    /// Each property's discovery: of the states of the first level that
    /// has one, the one with the least id (the least fingerprint), so that
    /// every run reports the same.
    found: Mutex<Vec<Option<u64>>>,
    generated: AtomicUsize,
    unique: AtomicUsize,
    /// Set when the search is to end before its level does.
    stop: AtomicBool,
    ended: Mutex<Option<Cutoff>>,
    /// A state had more actions than an action index names, or a part
    /// more ids than a lane holds.
    too_large: AtomicBool,
    /// The fingerprints the run's tables hold.
    prints: PhantomData<F>,
}

impl<M, R, F> Run<'_, M, R, F>
where
    M: Packing + Sync,
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

    /// Expands chunks of `level`'s records until none is left or the
    /// search ends, calling `tick` after each batch; returns the records
    /// this thread found first, which `out` wrote.
    fn work<'t>(
        &'t self,
        level: &Level<M::Action>,
        cursor: &AtomicUsize,
        tables: Tables<'t, M, F>,
        out: Writer<'t>,
        tick: &mut dyn FnMut(),
    ) -> Written {
        let mut work = Work {
            codec: Codec::new(self.model, tables.interner),
            tables,
            actions: Vec::new(),
            taken_past: Vec::new(),
            sleep_past: Vec::new(),
            next_actions: Vec::new(),
            placed_past: Vec::new(),
            out,
            new: 0,
        };
        let mut item = cursor.fetch_add(1, Ordering::Relaxed);
        while let Some(taken) = level.records.take(item) {
            for start in (0..taken.len()).step_by(BATCH) {
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                let mut generated = 0;
                for at in start..taken.len().min(start + BATCH) {
                    let (Some((rank, sleep)), record) = taken.get(at) else {
                        continue;
                    };
                    let Some(state) = work.codec.decode(record) else {
                        continue;
                    };
                    if self.visit(&state, level.offset + rank as u64) {
                        let past = level.past.get(&rank).map_or(&[][..], Vec::as_slice);
                        let asleep = (sleep, past);
                        generated += self.expand(&state, rank as u64, asleep, &mut work);
                    }
                }
                self.generated.fetch_add(generated, Ordering::Relaxed);
                let unique = self.unique.fetch_add(work.new, Ordering::Relaxed) + work.new;
                work.new = 0;
                if let Some(cutoff) = self.options.limits.reached(unique, self.started) {
                    self.end(cutoff);
                }
                tick();
            }
            work.tables.pool.give(taken.chunk());
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            item = cursor.fetch_add(1, Ordering::Relaxed);
        }
        work.out.written()
    }

    /// Judges `state` (of id `id`) on the properties still undecided and
    /// those first discovered in this level; whether it is to be expanded
    /// (not once every property is decided).
    fn visit(&self, state: &M::State, id: u64) -> bool {
        let mut open =
            self.undecided.load(Ordering::Relaxed) | self.this_level.load(Ordering::Relaxed);
        while open != 0 {
            let bit = open.trailing_zeros() as usize;
            open &= open - 1;
            if discovers(self.model, &self.properties[bit], state) {
                let mut found = self.found.lock().expect("not poisoned");
                // The least id of the level: see `Run::found`.
                found[bit] = Some(found[bit].map_or(id, |f| f.min(id)));
                self.this_level.fetch_or(1 << bit, Ordering::Relaxed);
                let left = self.undecided.fetch_and(!(1 << bit), Ordering::Relaxed) & !(1 << bit);
                if left == 0 {
                    self.finishing.store(true, Ordering::Relaxed);
                }
            }
        }
        !self.finishing.load(Ordering::Relaxed)
    }

    /// Takes every action of `state` (the `rank`th of its level) that is
    /// not asleep there (`asleep`: a bit per action index, and the actions
    /// past the bits), and records each successor not known yet as an
    /// arrival at the next level; returns the transitions taken.
    fn expand(
        &self,
        state: &M::State,
        rank: u64,
        (asleep, asleep_past): (u64, &[M::Action]),
        work: &mut Work<'_, M, F>,
    ) -> usize {
        let reduce = self.options.reduction;
        work.actions.clear();
        self.model.actions(state, &mut work.actions);
        if work.actions.len() > usize::from(u16::MAX) {
            self.too_large.store(true, Ordering::Relaxed);
            self.stop.store(true, Ordering::Relaxed);
            return 0;
        }
        let mut generated = 0;
        // Actions taken so far: bits as `asleep`, and the actions past the
        // bits.
        let mut taken = 0u64;
        work.taken_past.clear();
        let actions = std::mem::take(&mut work.actions);
        for (index, action) in actions.iter().enumerate() {
            let bit = if index < BITS { 1u64 << index } else { 0 };
            if reduce && (asleep & bit != 0 || (bit == 0 && asleep_past.contains(action))) {
                continue;
            }
            let Some(next) = self.model.next_state(state, action.clone()) else {
                continue;
            };
            if !self.model.within_boundary(&next) {
                // Not explored, so it covers no other order: nothing
                // sleeps because of it.
                continue;
            }
            generated += 1;
            // The successor's sleep set, among this state's actions.
            let mut sleep = 0;
            work.sleep_past.clear();
            if reduce {
                let mut open = (asleep | taken) & !PAST;
                while open != 0 {
                    let b = open.trailing_zeros() as usize;
                    open &= open - 1;
                    if self.reduction.independent(self.model, &actions[b], action) {
                        sleep |= 1 << b;
                    }
                }
                work.sleep_past.extend(
                    asleep_past
                        .iter()
                        .chain(&work.taken_past)
                        .filter(|b| self.reduction.independent(self.model, b, action))
                        .cloned(),
                );
                if bit == 0 {
                    work.taken_past.push(action.clone());
                }
                taken |= bit;
            }
            let print = F::of(&next);
            if work.tables.visited.contains(print) {
                continue;
            }
            let step = Arrivals::<F>::step(rank, index as u16);
            let placing = RefCell::new((
                std::mem::take(&mut work.next_actions),
                std::mem::take(&mut work.placed_past),
            ));
            let place = || {
                let (next_actions, past) = &mut *placing.borrow_mut();
                let parent = (&actions[..], sleep, &work.sleep_past[..]);
                placed_among(self.model, parent, &next, next_actions, past)
            };
            let (out, codec) = (&mut work.out, &mut work.codec);
            let arrival = work.tables.arrivals.arrive(
                print,
                step,
                || {
                    let (record, lanes) = out.push();
                    if codec.encode(&next, lanes).is_err() {
                        self.too_large.store(true, Ordering::Relaxed);
                        self.stop.store(true, Ordering::Relaxed);
                    }
                    let placed = place();
                    if placed & PAST != 0 {
                        let past = placing.borrow().1.clone();
                        work.tables
                            .past
                            .lock()
                            .expect("not poisoned")
                            .insert(print, past);
                    }
                    (placed, record)
                },
                place,
            );
            let (next_actions, past) = placing.into_inner();
            match arrival {
                Arrival::First => work.new += 1,
                Arrival::Again {
                    before,
                    brought: Some(brought),
                } if before & brought & PAST != 0 => {
                    // Both hold actions past the bits: keep those in both.
                    let mut held = work.tables.past.lock().expect("not poisoned");
                    if let Some(held) = held.get_mut(&print) {
                        held.retain(|a| past.contains(a));
                    }
                }
                Arrival::Again { .. } => {}
            }
            (work.next_actions, work.placed_past) = (next_actions, past);
        }
        work.actions = actions;
        generated
    }
}

/// Actions a sleep set names by their index among the state's actions, one
/// bit each; the bit above them ([`PAST`]) says that it also holds actions
/// past them, or not among the state's actions at all (an action asleep
/// can be carried where it is not enabled), kept by value beside it.
const BITS: usize = 63;
const PAST: u64 = 1 << BITS;

/// A sleep set among a parent's actions (`parent`: its actions, the bits
/// of those asleep, and those asleep past the bits) as one among the
/// actions of its successor `next`, which are put in `next_actions`: the
/// bits, and the actions past them in `past`. Most actions keep their
/// index from a state to its successor or move by a few: each is looked
/// for outwards from its parent's index.
fn placed_among<M: Model>(
    model: &M,
    (actions, sleep, sleep_past): (&[M::Action], u64, &[M::Action]),
    next: &M::State,
    next_actions: &mut Vec<M::Action>,
    past: &mut Vec<M::Action>,
) -> u64
where
    M::Action: Clone + PartialEq,
{
    past.clear();
    if sleep == 0 && sleep_past.is_empty() {
        return 0;
    }
    next_actions.clear();
    model.actions(next, next_actions);
    let mut placed = 0;
    let mut place = |wanted: &M::Action, near: usize| {
        let found = (0..=near.max(next_actions.len())).find_map(|distance| {
            [near.checked_sub(distance), near.checked_add(distance)]
                .into_iter()
                .flatten()
                .find(|&at| next_actions.get(at) == Some(wanted))
        });
        match found.filter(|&at| at < BITS) {
            Some(at) => placed |= 1 << at,
            None => past.push(wanted.clone()),
        }
    };
    let mut open = sleep;
    while open != 0 {
        let b = open.trailing_zeros() as usize;
        open &= open - 1;
        place(&actions[b], b);
    }
    for wanted in sleep_past {
        place(wanted, BITS);
    }
    if !past.is_empty() {
        placed |= PAST;
    }
    placed
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
