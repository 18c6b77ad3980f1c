//! The safety search of [`bfs`](super::bfs) on timely dataflow: the same
//! breadth-first levels, sleep sets and discoveries, over worker threads of
//! one process or processes on several machines.
//!
//! **Ownership.** Every fingerprint has one owner, the worker its hash bits
//! pick; the owner's seen set is the only record of it. A worker that
//! expands a state sends each successor's fingerprint, the step that
//! reached it and its sleep set to the successor's owner, and keeps the
//! successor itself. The owner, once it has every arrival of the level,
//! records the new fingerprints and grants each to the worker of its least
//! arrival (the least parent and action, as `bfs` picks), with the
//! intersection of the arrivals' sleep sets. Only the granted worker keeps
//! the state for the next level: a state never travels, only fingerprints
//! and the actions asleep at them.
//!
//! **Levels are timestamps.** The level expanded at time `t` sends its
//! arrivals at `t`; the grants come back through the loop at `t + 1`, when
//! timely's progress tracking says that no worker can send more at `t`.
//! Every worker also tells every other, at each level's end, what it found
//! (discoveries, states generated, new states owned, a timeout), so every
//! worker takes the same decision at the next level: go on, or stop
//! because every property is decided, the state limit or the time is
//! reached, or no state is new. When no worker sends, the dataflow is
//! complete; a second one rebuilds each discovery's path from the owners'
//! parents.
//!
//! **The same result as `bfs`.** Each level holds exactly the states of
//! one breadth-first depth, each with the least parent and the
//! intersection of its arrivals' sleep sets, as `bfs` computes them with
//! its threads: the same states, paths and counts, whatever the number of
//! workers. A run that ends early (every property decided, a limit) ends at
//! a level's end here, so it may count more states than `bfs`, which stops
//! within the level.

mod cluster;

pub use cluster::Workers;

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hash};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use stateright::Model;
use timely::communication::Pull;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::channels::Message;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::generic::InputHandleCore;
use timely::dataflow::operators::{Capability, Concat, ConnectLoop, Feedback, ToStream};
use timely::progress::frontier::MutableAntichain;
use timely::WorkerConfig;

use super::bfs::{
    discovers, expand, supported, Counts, Options, Outcome, Reduction, Scratch, Unsupported,
};
use super::budget::Cutoff;
use super::fingerprint::{PassThrough, Print};

/// Why a distributed search could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failed {
    /// The model cannot be searched by levels ([`Unsupported`]).
    Unsupported(Unsupported),
    /// The workers could not be started or connected (timely's message).
    Communication(String),
}

/// A message towards an owner, or a note to every worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Up<A, F> {
    /// A successor reached in the level, to its owner: the least step to
    /// it among this worker's, and the actions asleep at it.
    Arrival {
        print: F,
        parent: F,
        action: u16,
        sleep: Vec<A>,
        from: u32,
    },
    /// Passed on by the addressee's owner side to its expanding side.
    Note { to: u32, note: Note<F> },
}

/// From an owner to the worker that expands: a state it keeps, or a note.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Down<A, F> {
    /// The state of `print` is new: expand it, with `sleep` asleep.
    Grant { to: u32, print: F, sleep: Vec<A> },
    /// A note of the level that ended.
    Note { to: u32, note: Note<F> },
}

/// What every worker tells every other at the end of a level.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum Note<F> {
    /// A state of the level is a discovery of property `bit`.
    Found { bit: u8, print: F },
    /// Transitions taken in the level.
    Generated(u64),
    /// New states owned, of the next level.
    New(u64),
    /// This worker ran out of time.
    TimedOut,
}

/// A discovery's path being rebuilt, from owner to owner.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Back<F> {
    bit: u8,
    /// The state whose step is to be added next; done at depth 1.
    print: F,
    /// Action indices, last step first.
    path: Vec<u16>,
    done: bool,
}

/// The owner's record of a state.
#[derive(Clone, Copy)]
struct Seen<F> {
    parent: F,
    action: u16,
    depth: u16,
}

/// A map keyed by fingerprints, which are hashes already.
type ByPrint<F, V> = HashMap<F, V, BuildHasherDefault<PassThrough>>;

type SeenSet<F> = ByPrint<F, Seen<F>>;

/// The arrivals at a state merged: the least step to it, and what is
/// asleep on every arrival.
struct Arrival<A, F> {
    parent: F,
    action: u16,
    sleep: Vec<A>,
    /// The worker that keeps the state reached by the least step.
    from: u32,
}

impl<A: PartialEq, F: Print> Arrival<A, F> {
    /// Adds another arrival at the same state.
    fn merge(&mut self, other: Arrival<A, F>) {
        self.sleep.retain(|a| other.sleep.contains(a));
        // The least parent, whatever the workers' order: the same paths
        // on every run, and those of `bfs`.
        if (other.parent, other.action) < (self.parent, self.action) {
            (self.parent, self.action, self.from) = (other.parent, other.action, other.from);
        }
    }
}

/// Adds `arrival` at `print` to `arrivals`; whether it is the first.
fn arrive<A: PartialEq, F: Print>(
    arrivals: &mut ByPrint<F, Arrival<A, F>>,
    print: F,
    arrival: Arrival<A, F>,
) -> bool {
    match arrivals.entry(print) {
        Entry::Vacant(vacant) => {
            vacant.insert(arrival);
            true
        }
        Entry::Occupied(mut known) => {
            known.get_mut().merge(arrival);
            false
        }
    }
}

/// What every worker knows the same of the search after each level.
#[derive(Clone, Debug)]
struct Global<F> {
    undecided: u64,
    found: Vec<Option<F>>,
    generated: u64,
    unique: u64,
    max_depth: usize,
    ended: Option<Cutoff>,
}

fn owner<F: Print>(print: F, peers: usize) -> u64 {
    (print.shard_bits() % peers) as u64
}

/// A model whose search can be split among workers: its states are kept
/// by the threads that expand them, and its actions (in sleep sets) cross
/// the network.
pub trait Exchanged:
    Model<
        State: Hash + Send + Sync + Serialize + DeserializeOwned,
        Action: Clone + PartialEq + Send + Sync + Serialize + DeserializeOwned + 'static,
    > + Send
    + Sync
    + 'static
{
}

impl<M> Exchanged for M where
    M: Model<
            State: Hash + Send + Sync + Serialize + DeserializeOwned,
            Action: Clone + PartialEq + Send + Sync + Serialize + DeserializeOwned + 'static,
        > + Send
        + Sync
        + 'static
{
}

/// [`bfs::search`](super::bfs::search) on the `workers`: the same
/// arguments and outcome. Every process of a cluster calls it; the first
/// (and a single process) gets the outcome, the others `None`.
pub fn search<M, R, F>(
    model: Arc<M>,
    reduction: Arc<R>,
    options: Options,
    workers: &Workers,
    progress: &mut dyn FnMut(Counts),
) -> Result<Option<Outcome>, Failed>
where
    M: Exchanged,
    R: Reduction<M> + Send + Sync + 'static,
    F: Print + Serialize + DeserializeOwned,
{
    supported(&model.properties()).map_err(Failed::Unsupported)?;
    let (sender, receiver) = mpsc::channel::<Counts>();
    let sender = Mutex::new(sender);
    let started = Instant::now();
    let (builders, others) = workers.builders().map_err(Failed::Communication)?;
    let guards =
        timely::execute::execute_from(builders, others, WorkerConfig::default(), move |worker| {
            let report = worker.index() == 0;
            let sender = report.then(|| sender.lock().expect("not poisoned").clone());
            run_worker::<M, R, F>(worker, &model, &reduction, options, started, sender)
        })
        .map_err(Failed::Communication)?;
    for counts in receiver {
        progress(counts);
    }
    let mut outcome = None;
    for result in guards.join() {
        match result.map_err(Failed::Communication)? {
            Ok(Some(found)) => outcome = Some(found),
            Ok(None) => {}
            Err(unsupported) => return Err(Failed::Unsupported(unsupported)),
        }
    }
    Ok(outcome)
}

/// One worker's part: the search, then the discoveries' paths; the
/// outcome on worker 0.
fn run_worker<M, R, F>(
    worker: &mut timely::worker::Worker,
    model: &Arc<M>,
    reduction: &Arc<R>,
    options: Options,
    started: Instant,
    progress: Option<mpsc::Sender<Counts>>,
) -> Result<Option<Outcome>, Unsupported>
where
    M: Exchanged,
    R: Reduction<M> + Send + Sync + 'static,
    F: Print + Serialize + DeserializeOwned,
{
    let index = worker.index();
    let peers = worker.peers();
    let properties = model.properties().len();
    let seen: Rc<RefCell<SeenSet<F>>> = Rc::default();
    let global = Rc::new(RefCell::new(Global {
        undecided: if properties == 64 {
            u64::MAX
        } else {
            (1u64 << properties) - 1
        },
        found: vec![None; properties],
        generated: 0,
        unique: 0,
        max_depth: 0,
        ended: None,
    }));
    let too_large = Rc::new(RefCell::new(false));
    worker.dataflow::<u32, _, _>(|scope| {
        let (handle, grants) = scope.feedback::<Vec<Down<M::Action, F>>>(1);
        let mut expander = Expander {
            model: Arc::clone(model),
            reduction: Arc::clone(reduction),
            options,
            started,
            index: index as u32,
            peers,
            properties: model.properties(),
            global: Rc::clone(&global),
            kept: HashMap::default(),
            scratch: Scratch::default(),
            last_progress: Instant::now(),
            progress,
            too_large: Rc::clone(&too_large),
        };
        let arrivals = grants.unary_frontier(
            Exchange::new(|d: &Down<M::Action, F>| match d {
                Down::Grant { to, .. } | Down::Note { to, .. } => u64::from(*to),
            }),
            "Expand",
            move |initial, _| {
                let mut stash = Stash::starting_at(initial);
                move |(input, frontier), output| {
                    stash.take(input, output.output_index());
                    while let Some((cap, messages)) = stash.ready(frontier) {
                        let mut session = output.session(&cap);
                        for up in expander.level(*cap.time(), messages) {
                            session.give(up);
                        }
                    }
                }
            },
        );
        let seen_by_owner = Rc::clone(&seen);
        arrivals
            .unary_frontier(
                Exchange::new(move |u: &Up<M::Action, F>| match u {
                    Up::Arrival { print, .. } => owner(*print, peers),
                    Up::Note { to, .. } => u64::from(*to),
                }),
                "Own",
                move |_initial, _| {
                    let mut stash = Stash::default();
                    move |(input, frontier), output| {
                        stash.take(input, output.output_index());
                        while let Some((cap, messages)) = stash.ready(frontier) {
                            let mut seen = seen_by_owner.borrow_mut();
                            let mut session = output.session(&cap);
                            for down in own(&mut seen, *cap.time(), messages, peers) {
                                session.give(down);
                            }
                        }
                    }
                },
            )
            .connect_loop(handle);
    });
    while worker.has_dataflows() {
        worker.step_or_park(None);
    }
    if *too_large.borrow() {
        return Err(Unsupported::TooLarge);
    }
    let paths = trace_back(worker, &seen, &global.borrow().found, peers);
    if index != 0 {
        return Ok(None);
    }
    let global = global.borrow();
    let discoveries = (0..properties)
        .map(|bit| {
            paths
                .borrow()
                .get(&(bit as u8))
                .map(|p| p.iter().rev().map(|&a| u32::from(a)).collect())
        })
        .collect();
    let outcome = Outcome {
        counts: Counts {
            generated: global.generated as usize,
            unique: global.unique as usize,
            max_depth: global.max_depth,
        },
        cutoff: global.ended,
        discoveries,
    };
    Ok(Some(outcome))
}

/// Messages stashed by level until the level is complete: until no worker
/// can send more at its time.
struct Stash<D> {
    levels: BTreeMap<u32, (Capability<u32>, Vec<D>)>,
}

impl<D> Default for Stash<D> {
    fn default() -> Self {
        Stash {
            levels: BTreeMap::new(),
        }
    }
}

impl<D> Stash<D> {
    /// A stash that holds `initial` for a level with no message yet.
    fn starting_at(initial: Capability<u32>) -> Self {
        let mut stash = Stash::default();
        stash.levels.insert(*initial.time(), (initial, Vec::new()));
        stash
    }

    /// Takes in what `input` holds.
    fn take<P>(&mut self, input: &mut InputHandleCore<u32, Vec<D>, P>, output: usize)
    where
        D: Clone,
        P: Pull<Message<u32, Vec<D>>>,
    {
        input.for_each_stamp(|cap, data| {
            if let Some(cap) = cap.retain_least(output) {
                let time = *cap.time();
                let level = self.levels.entry(time).or_insert_with(|| (cap, Vec::new()));
                for batch in data {
                    level.1.append(batch);
                }
            }
        });
    }

    /// The earliest level, if the input can send nothing more at it.
    fn ready(&mut self, frontier: &MutableAntichain<u32>) -> Option<(Capability<u32>, Vec<D>)> {
        let (&time, _) = self.levels.first_key_value()?;
        if frontier.frontier().less_equal(&time) {
            return None;
        }
        self.levels.remove(&time)
    }
}

/// The owner's side at the end of a level: records the new fingerprints,
/// grants each to its least arrival, tells every worker how many it owns
/// anew, and passes the notes on.
fn own<A: Clone + PartialEq, F: Print>(
    seen: &mut SeenSet<F>,
    time: u32,
    messages: Vec<Up<A, F>>,
    peers: usize,
) -> Vec<Down<A, F>> {
    let mut out = Vec::new();
    let mut arrived: ByPrint<F, Arrival<A, F>> = HashMap::default();
    for up in messages {
        match up {
            Up::Arrival {
                print,
                parent,
                action,
                sleep,
                from,
            } => {
                if !seen.contains_key(&print) {
                    let arrival = Arrival {
                        parent,
                        action,
                        sleep,
                        from,
                    };
                    arrive(&mut arrived, print, arrival);
                }
            }
            Up::Note { to, note } => out.push(Down::Note { to, note }),
        }
    }
    // Time `t` sends the successors of depth `t + 1` (the initial states
    // at time 0, with depth 1).
    let depth = u16::try_from(time + 1).unwrap_or(u16::MAX);
    let new = arrived.len() as u64;
    for (print, arrival) in arrived {
        let Arrival {
            parent,
            action,
            sleep,
            from,
        } = arrival;
        seen.insert(
            print,
            Seen {
                parent,
                action,
                depth,
            },
        );
        out.push(Down::Grant {
            to: from,
            print,
            sleep,
        });
    }
    out.extend((0..peers as u32).map(|to| Down::Note {
        to,
        note: Note::New(new),
    }));
    out
}

/// The expanding side of a worker.
struct Expander<M: Model, R, F> {
    model: Arc<M>,
    reduction: Arc<R>,
    options: Options,
    started: Instant,
    index: u32,
    peers: usize,
    properties: Vec<stateright::Property<M>>,
    global: Rc<RefCell<Global<F>>>,
    /// The successors this worker generated in the last level, until their
    /// owners say which of them it expands.
    kept: ByPrint<F, M::State>,
    scratch: Scratch<M::Action>,
    last_progress: Instant,
    progress: Option<mpsc::Sender<Counts>>,
    too_large: Rc<RefCell<bool>>,
}

impl<M, R, F> Expander<M, R, F>
where
    M: Model,
    M::State: Hash,
    M::Action: Clone + PartialEq,
    R: Reduction<M>,
    F: Print,
{
    /// Level `time`: the notes of the last level decide whether to go on;
    /// if so, the granted states are judged and expanded. Returns the
    /// arrivals and notes to send.
    fn level(&mut self, time: u32, messages: Vec<Down<M::Action, F>>) -> Vec<Up<M::Action, F>> {
        if time == 0 {
            return self.initial();
        }
        let mut granted = Vec::new();
        let mut new = 0;
        let mut timed_out = false;
        let mut found: Vec<Option<F>> = vec![None; self.global.borrow().found.len()];
        {
            let mut global = self.global.borrow_mut();
            for down in messages {
                match down {
                    Down::Grant { print, sleep, .. } => granted.push((print, sleep)),
                    Down::Note { note, .. } => match note {
                        Note::Found { bit, print } => {
                            let least = &mut found[usize::from(bit)];
                            *least = Some(least.map_or(print, |f: F| f.min(print)));
                        }
                        Note::Generated(n) => global.generated += n,
                        Note::New(n) => new += n,
                        Note::TimedOut => timed_out = true,
                    },
                }
            }
            global.unique += new;
            let was_undecided = global.undecided;
            for (bit, least) in found.into_iter().enumerate() {
                if let Some(print) = least {
                    if global.undecided & 1 << bit != 0 {
                        global.found[bit] = Some(print);
                        global.undecided &= !(1 << bit);
                    }
                }
            }
            if was_undecided != 0 && global.undecided == 0 {
                global.ended = Some(Cutoff::EveryPropertyDecided);
            } else if timed_out {
                global.ended = Some(Cutoff::Timeout);
            } else if self.options.limits.states_reached(global.unique as usize) {
                global.ended = Some(Cutoff::StateLimit);
            }
            if let Some(sender) = &self.progress {
                if self.last_progress.elapsed() >= self.options.progress_every {
                    self.last_progress = Instant::now();
                    let _ = sender.send(Counts {
                        generated: global.generated as usize,
                        unique: global.unique as usize,
                        max_depth: global.max_depth,
                    });
                }
            }
            if global.ended.is_some() || new == 0 {
                self.kept.clear();
                self.progress = None;
                return Vec::new();
            }
            global.max_depth = time as usize;
        }
        let mut nodes = Vec::with_capacity(granted.len());
        for (print, sleep) in granted {
            if let Some(state) = self.kept.remove(&print) {
                nodes.push((print, state, sleep));
            }
        }
        self.kept.clear();
        // The same order on every run, whatever the messages' order.
        nodes.sort_by_key(|(print, _, _)| *print);
        let mut out = Vec::new();
        let mut arrivals = HashMap::default();
        let undecided = self.global.borrow().undecided;
        let mut generated = 0u64;
        for (print, state, sleep) in &nodes {
            self.judge(undecided, *print, state, &mut out);
            generated += self.expand(*print, state, sleep, &mut arrivals);
        }
        self.finish_level(arrivals, generated, out)
    }

    /// Time 0: worker 0 sends the initial states to their owners.
    fn initial(&mut self) -> Vec<Up<M::Action, F>> {
        let mut arrivals = HashMap::default();
        let mut generated = 0;
        if self.index == 0 {
            for (index, state) in self.model.init_states().into_iter().enumerate() {
                let Ok(index) = u16::try_from(index) else {
                    *self.too_large.borrow_mut() = true;
                    break;
                };
                generated += 1;
                let print = F::of(&state);
                let arrival = Arrival {
                    parent: print,
                    action: index,
                    sleep: Vec::new(),
                    from: self.index,
                };
                if arrive(&mut arrivals, print, arrival) {
                    self.kept.insert(print, state);
                }
            }
        }
        self.finish_level(arrivals, generated, Vec::new())
    }

    /// The level's arrivals and this worker's notes to every worker.
    fn finish_level(
        &mut self,
        arrivals: ByPrint<F, Arrival<M::Action, F>>,
        generated: u64,
        mut out: Vec<Up<M::Action, F>>,
    ) -> Vec<Up<M::Action, F>> {
        out.extend(arrivals.into_iter().map(|(print, arrival)| Up::Arrival {
            print,
            parent: arrival.parent,
            action: arrival.action,
            sleep: arrival.sleep,
            from: arrival.from,
        }));
        let timed_out = self.options.limits.timed_out(self.started);
        for to in 0..self.peers as u32 {
            out.push(Up::Note {
                to,
                note: Note::Generated(generated),
            });
            if timed_out {
                out.push(Up::Note {
                    to,
                    note: Note::TimedOut,
                });
            }
        }
        out
    }

    /// Notes `state` as a discovery of each undecided property it decides.
    fn judge(&self, undecided: u64, print: F, state: &M::State, out: &mut Vec<Up<M::Action, F>>) {
        let mut open = undecided;
        while open != 0 {
            let bit = open.trailing_zeros() as usize;
            open &= open - 1;
            if discovers(&*self.model, &self.properties[bit], state) {
                for to in 0..self.peers as u32 {
                    out.push(Up::Note {
                        to,
                        note: Note::Found {
                            bit: bit as u8,
                            print,
                        },
                    });
                }
            }
        }
    }

    /// Takes the actions of `state` not asleep there, as `bfs` does; keeps
    /// each successor and merges its arrival with this worker's others.
    fn expand(
        &mut self,
        print: F,
        state: &M::State,
        asleep: &[M::Action],
        arrivals: &mut ByPrint<F, Arrival<M::Action, F>>,
    ) -> u64 {
        let (kept, from) = (&mut self.kept, self.index);
        let taken = expand(
            &*self.model,
            &*self.reduction,
            self.options.reduction,
            (state, asleep),
            &mut self.scratch,
            |next, action, sleep| {
                let next_print = F::of(&next);
                let arrival = Arrival {
                    parent: print,
                    action,
                    sleep: sleep.to_vec(),
                    from,
                };
                if arrive(arrivals, next_print, arrival) {
                    kept.insert(next_print, next);
                }
            },
        );
        taken.map_or_else(
            || {
                *self.too_large.borrow_mut() = true;
                0
            },
            |n| n as u64,
        )
    }
}

/// Rebuilds each discovery's path: a request travels from the owner of a
/// state to the owner of its parent, each adding its step, and ends at
/// worker 0. Returns, on worker 0, the action indices by property, last
/// step first.
fn trace_back<F: Print + Serialize + DeserializeOwned>(
    worker: &mut timely::worker::Worker,
    seen: &Rc<RefCell<SeenSet<F>>>,
    found: &[Option<F>],
    peers: usize,
) -> Rc<RefCell<BTreeMap<u8, Vec<u16>>>> {
    let paths: Rc<RefCell<BTreeMap<u8, Vec<u16>>>> = Rc::default();
    let requests: Vec<Back<F>> = if worker.index() == 0 {
        found
            .iter()
            .enumerate()
            .filter_map(|(bit, print)| {
                Some(Back {
                    bit: bit as u8,
                    print: (*print)?,
                    path: Vec::new(),
                    done: false,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let seen = Rc::clone(seen);
    let collected = Rc::clone(&paths);
    worker.dataflow::<u32, _, _>(|scope| {
        let (handle, back) = scope.feedback::<Vec<Back<F>>>(1);
        requests
            .to_stream(scope)
            .container::<Vec<_>>()
            .concat(back)
            .unary(
                Exchange::new(move |b: &Back<F>| if b.done { 0 } else { owner(b.print, peers) }),
                "Trace back",
                move |_, _| {
                    move |input, output| {
                        input.for_each_stamp(|cap, data| {
                            let mut session = output.session(&cap);
                            for batch in data {
                                for mut request in batch.drain(..) {
                                    if request.done {
                                        collected.borrow_mut().insert(request.bit, request.path);
                                        continue;
                                    }
                                    let Some(step) = seen.borrow().get(&request.print).copied()
                                    else {
                                        // Not owned here: a collision's casualty; no path.
                                        continue;
                                    };
                                    request.path.push(step.action);
                                    if step.depth <= 1 {
                                        request.done = true;
                                    } else {
                                        request.print = step.parent;
                                    }
                                    session.give(request);
                                }
                            }
                        });
                    }
                },
            )
            .connect_loop(handle);
    });
    while worker.has_dataflows() {
        worker.step_or_park(None);
    }
    paths
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::bfs::{
        self,
        tests::{Counters, Grid, Step},
    };
    use super::*;
    use crate::search::budget::Limits;

    fn options(reduction: bool) -> Options {
        Options {
            limits: Limits::default(),
            reduction,
            progress_every: Duration::from_secs(60),
        }
    }

    fn distributed(reduction: bool, workers: usize) -> Outcome {
        search::<_, _, u64>(
            Arc::new(Grid),
            Arc::new(Counters),
            options(reduction),
            &Workers::Threads(workers),
            &mut |_| {},
        )
        .expect("runs")
        .expect("worker 0's outcome")
    }

    #[test]
    fn any_number_of_workers_finds_what_the_one_process_search_finds() {
        for reduction in [false, true] {
            let one = bfs::search::<_, _, u64>(&Grid, &Counters, options(reduction), &mut |_| {})
                .expect("supported");
            for workers in [1, 2, 3] {
                let many = distributed(reduction, workers);
                assert_eq!(many.counts, one.counts, "{workers} workers");
                assert_eq!(many.cutoff, one.cutoff);
                assert_eq!(many.discoveries, one.discoveries);
            }
        }
    }

    #[test]
    fn a_run_ends_once_every_property_is_decided_and_at_its_state_limit() {
        struct Decided;
        impl Model for Decided {
            type State = (u8, u8);
            type Action = Step;
            fn init_states(&self) -> Vec<(u8, u8)> {
                Grid.init_states()
            }
            fn actions(&self, s: &(u8, u8), actions: &mut Vec<Step>) {
                Grid.actions(s, actions)
            }
            fn next_state(&self, s: &(u8, u8), step: Step) -> Option<(u8, u8)> {
                Grid.next_state(s, step)
            }
            fn properties(&self) -> Vec<stateright::Property<Self>> {
                vec![stateright::Property::sometimes(
                    "two steps",
                    |_, s: &(u8, u8)| s.0 + s.1 == 2,
                )]
            }
        }
        impl Reduction<Decided> for Counters {
            fn independent(&self, _: &Decided, a: &Step, b: &Step) -> bool {
                Reduction::<Grid>::independent(self, &Grid, a, b)
            }
        }
        let outcome = search::<_, _, u64>(
            Arc::new(Decided),
            Arc::new(Counters),
            options(true),
            &Workers::Threads(2),
            &mut |_| {},
        )
        .expect("runs")
        .expect("worker 0's outcome");
        assert_eq!(outcome.cutoff, Some(Cutoff::EveryPropertyDecided));
        assert_eq!(outcome.counts.max_depth, 3);
        let path = outcome.discoveries[0].as_ref().expect("found");
        assert_eq!(path.len(), 3);
        let limited = search::<_, _, u64>(
            Arc::new(Grid),
            Arc::new(Counters),
            Options {
                limits: Limits {
                    max_states: Some(10),
                    ..Limits::default()
                },
                ..options(true)
            },
            &Workers::Threads(2),
            &mut |_| {},
        )
        .expect("runs")
        .expect("worker 0's outcome");
        assert_eq!(limited.cutoff, Some(Cutoff::StateLimit));
        assert!(limited.counts.unique >= 10 && limited.counts.unique < 49);
    }
}
