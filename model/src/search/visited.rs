//! The safety search's two tables of fingerprints.
//!
//! [`Visited`] holds every state of the levels expanded and the one being
//! expanded: a flat, preallocated open-addressing table of fingerprints (8
//! bytes a slot at 64 bits), read by every thread without a lock during a
//! level and written only between levels, when it grows by rehashing.
//!
//! [`Arrivals`] holds the next level while it is being found: per state its
//! fingerprint, the least step to it (parent and action, one word, merged
//! with an atomic minimum) and its sleep set (a bit set over its actions,
//! merged with an atomic and), claimed by compare-and-swap. A state whose
//! probe window is full goes to a locked map; the window only fills, so a
//! state is in one place or the other.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::fingerprint::Print;
use super::joined;

/// The fingerprints of the states known.
pub struct Visited<F> {
    /// Fingerprints by slot; `F::default()` marks an empty slot, so the
    /// state whose fingerprint it is is known by `default_in`.
    slots: Vec<F>,
    default_in: bool,
    len: usize,
}

/// The most a table is filled when it is made or grown.
const LOAD: f64 = 0.8;

/// The most a table fills before it grows. Linear probing over 8-byte
/// slots, eight to a cache line, stays within a few lines up to here; a
/// table doubled a little past 0.8 would hold both copies, and half its
/// slots empty, for the rest of the search (five consumers end at 0.81 of
/// 2^26 slots: 512 MiB instead of 1 GiB, and 1.5 GiB while it doubled).
const GROW_AT: f64 = 0.9;

impl<F: Print> Visited<F> {
    /// An empty set with room for `room` fingerprints.
    pub fn new(room: usize) -> Self {
        Visited {
            slots: vec![F::default(); capacity_for(room)],
            default_in: false,
            len: 0,
        }
    }

    /// Whether `print` is in.
    pub fn contains(&self, print: F) -> bool {
        if print == F::default() {
            return self.default_in;
        }
        let mask = self.slots.len() - 1;
        let mut at = print.slot() as usize & mask;
        loop {
            let held = self.slots[at];
            if held == print {
                return true;
            }
            if held == F::default() {
                return false;
            }
            at = (at + 1) & mask;
        }
    }

    /// Whether adding `more` fingerprints grows the table: it then holds
    /// two copies for a moment.
    pub fn grows_with(&self, more: usize) -> bool {
        (self.len + more) as f64 > self.slots.len() as f64 * GROW_AT
    }

    /// Adds the fingerprints `print` gives of the items of `runs`, not in
    /// yet and distinct, growing first if they would fill the table past
    /// [`GROW_AT`]; `threads` threads place them.
    pub fn extend<T: Sync>(
        &mut self,
        runs: &[Vec<T>],
        print: impl Fn(&T) -> F + Sync,
        threads: usize,
    ) {
        let added: usize = runs.iter().map(Vec::len).sum();
        let wanted = self.len + added;
        if self.grows_with(added) {
            let old = std::mem::replace(&mut self.slots, vec![F::default(); capacity_for(wanted)]);
            self.place_all(&[old], |p| *p, threads);
        }
        self.default_in |= runs.iter().flatten().any(|t| print(t) == F::default());
        self.place_all(runs, print, threads);
        self.len = wanted;
    }

    /// Places the fingerprints of `runs` but the empty mark. Each of
    /// `threads` threads takes those whose home slot is in its share of the
    /// table and probes within it; one that would probe past the share's
    /// end is placed afterwards, by the caller's thread. Linear probing
    /// with no removal finds a fingerprint wherever the run of full slots
    /// from its home put it, so the order of placing does not matter.
    fn place_all<T: Sync>(
        &mut self,
        runs: &[Vec<T>],
        print: impl Fn(&T) -> F + Sync,
        threads: usize,
    ) {
        let mask = self.slots.len() - 1;
        let share = self.slots.len().div_ceil(threads.max(1));
        let print = &print;
        let left: Vec<F> = std::thread::scope(|scope| {
            let placing: Vec<_> = self
                .slots
                .chunks_mut(share)
                .enumerate()
                .map(|(thread, slots)| {
                    let prints = runs.iter().flatten().map(print);
                    scope.spawn(move || place_in_share(slots, thread * share, mask, prints))
                })
                .collect();
            placing.into_iter().flat_map(joined).collect()
        });
        for print in left {
            self.place(print);
        }
    }

    fn place(&mut self, print: F) {
        let mask = self.slots.len() - 1;
        let mut at = print.slot() as usize & mask;
        while self.slots[at] != F::default() {
            at = (at + 1) & mask;
        }
        self.slots[at] = print;
    }

    /// The fingerprints held.
    pub fn len(&self) -> usize {
        self.len
    }
}

/// Fingerprints whose home slots are fetched together: a table far larger
/// than the caches misses on nearly every one, and independent loads
/// overlap.
const FETCH: usize = 16;

/// Places those of `prints` (the empty mark aside) whose home slot (under
/// `mask`) is in `slots`, the share of the table from slot `base`; returns
/// those whose run of full slots reaches the share's end.
fn place_in_share<F: Print>(
    slots: &mut [F],
    base: usize,
    mask: usize,
    prints: impl Iterator<Item = F>,
) -> Vec<F> {
    let mut left = Vec::new();
    let mut homes = [(0usize, F::default()); FETCH];
    let mut fetched = 0;
    let mut place = |slots: &mut [F], homes: &[(usize, F)]| {
        // Touch every home first: one miss's wait covers the others'.
        let touched = homes
            .iter()
            .fold(F::default(), |m, &(at, _)| m.max(slots[at]));
        std::hint::black_box(touched);
        for &(home, print) in homes {
            match slots[home..].iter().position(|s| *s == F::default()) {
                Some(free) => slots[home + free] = print,
                None => left.push(print),
            }
        }
    };
    for print in prints {
        let home = (print.slot() as usize & mask).wrapping_sub(base);
        if print == F::default() || home >= slots.len() {
            continue;
        }
        homes[fetched] = (home, print);
        fetched += 1;
        if fetched == FETCH {
            place(slots, &homes);
            fetched = 0;
        }
    }
    place(slots, &homes[..fetched]);
    left
}

/// Slots, a power of two, for `room` entries within the load.
fn capacity_for(room: usize) -> usize {
    ((room as f64 / LOAD) as usize + 1)
        .max(64)
        .next_power_of_two()
}

/// Slots probed before an arrival goes to the locked map.
const WINDOW: usize = 64;

/// One state of the next level: 32 bytes, and the high word of a wide
/// fingerprint beside it ([`Arrivals`]).
#[derive(Default)]
struct Slot {
    /// The low word of its fingerprint; 0: empty.
    low: AtomicU64,
    /// The least step to it: [`Arrivals::step`].
    step: AtomicU64,
    sleep: AtomicU64,
    /// Where its record is, plus one; 0 until the first arrival has
    /// written its entry.
    record: AtomicU64,
}

/// A state of the next level, as its arrivals left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrived<F> {
    /// Its fingerprint.
    pub print: F,
    /// The least step to it ([`Arrivals::step`]).
    pub step: u64,
    /// The actions asleep on every arrival, a bit per action index.
    pub sleep: u64,
    /// Where its record is (the first arrival's choice).
    pub record: u64,
}

/// The next level's states as they arrive. The table has any length (a
/// fingerprint's home slot is its slot bits scaled to the length), so that
/// it is sized to the level, not to the next power of two.
pub struct Arrivals<F> {
    slots: Box<[Slot]>,
    /// The high words of the slots' fingerprints, when they are wide
    /// ([`Print::WIDE`]); empty otherwise.
    highs: Box<[AtomicU64]>,
    overflow: Mutex<HashMap<F, Arrived<F>>>,
}

/// What an arrival found.
pub enum Arrival {
    /// The state was not there: it is now, with this arrival's step, the
    /// sleep set and record that `first` gave.
    First,
    /// It was: the step is merged, and the sleep set with what `later`
    /// gave, if it was called. The sleep set held before.
    Again {
        /// The sleep set before this arrival.
        before: u64,
        /// The sleep set this arrival brought, if `later` was called.
        brought: Option<u64>,
    },
}

/// Slots a table has for `room` states: four fifths full when they come.
fn slots_for(room: usize) -> usize {
    (room.saturating_mul(5) / 4).max(64)
}

impl<F: Print> Arrivals<F> {
    /// Room for about `room` states.
    pub fn new(room: usize) -> Self {
        let len = slots_for(room);
        Arrivals {
            slots: (0..len).map(|_| Slot::default()).collect(),
            highs: (0..if F::WIDE { len } else { 0 })
                .map(|_| AtomicU64::new(0))
                .collect(),
            overflow: Mutex::new(HashMap::new()),
        }
    }

    /// Room for about `room` states, keeping the table when it has that
    /// and not much more (a fresh one costs the pages' zeroing again, a
    /// table far too large its scan at every level's end).
    pub fn make_room(&mut self, room: usize) {
        let wanted = slots_for(room);
        if self.slots.len() < wanted || self.slots.len() > wanted * 4 {
            *self = Arrivals::new(room);
        }
    }

    /// The slot a fingerprint is looked for from.
    fn home(&self, print: F) -> usize {
        ((u128::from(print.slot()) * self.slots.len() as u128) >> 64) as usize
    }

    /// The high word of slot `at`'s fingerprint.
    fn high(&self, at: usize) -> &AtomicU64 {
        static NARROW: AtomicU64 = AtomicU64::new(0);
        self.highs.get(at).unwrap_or(&NARROW)
    }

    /// A step as one word ordered as the steps are: the parent's place
    /// in its level (whose states are in fingerprint order), then the
    /// action's index.
    pub fn step(parent: u64, action: u16) -> u64 {
        parent << 16 | u64::from(action)
    }

    /// Records an arrival at `print` by `step`. The first arrival's
    /// `first` gives the sleep set and where the state's record is; a
    /// later one's `later`, called only when the sleep set held is not
    /// empty, gives the sleep set to intersect it with.
    pub fn arrive(
        &self,
        print: F,
        step: u64,
        first: impl FnOnce() -> (u64, u64),
        later: impl FnOnce() -> u64,
    ) -> Arrival {
        let (low, high) = print.halves();
        let mut at = self.home(print);
        for _ in 0..if low == 0 { 0 } else { WINDOW } {
            let slot = &self.slots[at];
            let held = slot.low.load(Ordering::Acquire);
            let claimed = held == 0
                && slot
                    .low
                    .compare_exchange(0, low, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok();
            if claimed {
                let (sleep, record) = first();
                if F::WIDE {
                    self.high(at).store(high, Ordering::Relaxed);
                }
                slot.step.store(step, Ordering::Relaxed);
                slot.sleep.store(sleep, Ordering::Relaxed);
                slot.record.store(record + 1, Ordering::Release);
                return Arrival::First;
            }
            if slot.low.load(Ordering::Acquire) == low {
                // The first arrival may still be writing its entry.
                while slot.record.load(Ordering::Acquire) == 0 {
                    std::hint::spin_loop();
                }
                if !F::WIDE || self.high(at).load(Ordering::Relaxed) == high {
                    slot.step.fetch_min(step, Ordering::Relaxed);
                    let held = slot.sleep.load(Ordering::Relaxed);
                    if held == 0 {
                        return Arrival::Again {
                            before: 0,
                            brought: None,
                        };
                    }
                    let brought = later();
                    let before = slot.sleep.fetch_and(brought, Ordering::Relaxed);
                    return Arrival::Again {
                        before,
                        brought: Some(brought),
                    };
                }
            }
            at += 1;
            if at == self.slots.len() {
                at = 0;
            }
        }
        let mut overflow = self.overflow.lock().expect("not poisoned");
        match overflow.get_mut(&print) {
            Some(known) => {
                known.step = known.step.min(step);
                let before = known.sleep;
                let brought = (before != 0).then(later);
                known.sleep &= brought.unwrap_or(0);
                Arrival::Again { before, brought }
            }
            None => {
                let (sleep, record) = first();
                overflow.insert(
                    print,
                    Arrived {
                        print,
                        step,
                        sleep,
                        record,
                    },
                );
                Arrival::First
            }
        }
    }

    /// Every state that arrived, in fingerprint order, as `threads` runs
    /// (the first has the least fingerprints), each taken from the whole
    /// table and sorted by a thread of its own; the table is emptied.
    pub fn drain_sorted(&mut self, threads: usize) -> Vec<Vec<Arrived<F>>> {
        let runs = threads.max(1);
        let mut overflow = vec![Vec::new(); runs];
        for (_, a) in self.overflow.get_mut().expect("not poisoned").drain() {
            overflow[run_of(a.print, runs)].push(a);
        }
        let this = &*self;
        std::thread::scope(|scope| {
            let draining: Vec<_> = overflow
                .into_iter()
                .enumerate()
                .map(|(run, mut out)| {
                    scope.spawn(move || {
                        this.take_run(run, runs, &mut out);
                        out.sort_unstable_by_key(|a| a.print);
                        out
                    })
                })
                .collect();
            draining.into_iter().map(joined).collect()
        })
    }

    /// Moves the states of run `run` of `runs` into `out`, emptying their
    /// slots. Each run's thread reads every slot, but writes only its own
    /// run's.
    fn take_run(&self, run: usize, runs: usize, out: &mut Vec<Arrived<F>>) {
        // Room for a run much larger than its share (never more than the
        // table holds): pages not written are never touched.
        out.reserve((self.slots.len() / runs * 2).min(self.slots.len()));
        for (at, slot) in self.slots.iter().enumerate() {
            let low = slot.low.load(Ordering::Relaxed);
            if low == 0 {
                continue;
            }
            let print = F::from_halves(low, self.high(at).load(Ordering::Relaxed));
            if run_of(print, runs) != run {
                continue;
            }
            out.push(Arrived {
                print,
                step: slot.step.swap(0, Ordering::Relaxed),
                sleep: slot.sleep.swap(0, Ordering::Relaxed),
                record: slot.record.swap(0, Ordering::Relaxed) - 1,
            });
            // The high word stays: another run's thread that read the low
            // one before this store may read it still, and the next
            // arrival that claims the slot writes it.
            slot.low.store(0, Ordering::Relaxed);
        }
    }
}

/// Which of `runs` runs, in fingerprint order, `print` falls in.
fn run_of<F: Print>(print: F, runs: usize) -> usize {
    ((u128::from(print.top()) * runs as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_visited_set_grows_and_knows_what_it_holds() {
        let mut seen = Visited::<u64>::new(1);
        let prints: Vec<u64> = (0..1_000u64).map(|i| i * 0x9E37_79B9).collect();
        seen.extend(&[prints[..10].to_vec()], |p| *p, 1);
        seen.extend(
            &[prints[10..500].to_vec(), prints[500..].to_vec()],
            |p| *p,
            3,
        );
        assert_eq!(seen.len(), 1_000);
        assert!(prints.iter().all(|&p| seen.contains(p)), "0 among them");
        assert!(!seen.contains(1));
    }

    #[test]
    fn a_run_of_full_slots_that_crosses_a_share_is_placed_and_found() {
        // Fingerprints that all start at the last slot of the first of two
        // shares of 64 slots: one fits there, the others go on past it.
        let prints: Vec<u64> = (1..).filter(|&p| p.slot() & 63 == 31).take(5).collect();
        let mut seen = Visited::<u64>::new(1);
        assert_eq!(seen.slots.len(), 64);
        seen.extend(std::slice::from_ref(&prints), |p| *p, 2);
        assert!(prints.iter().all(|&p| seen.contains(p)));
        assert_eq!(seen.len(), 5);
        assert_eq!(&seen.slots[31..36], &prints[..], "one run, in order");
    }

    #[test]
    fn arrivals_come_out_sorted_in_as_many_runs_as_threads() {
        let mut arrivals = Arrivals::<u128>::new(1_000);
        let prints: Vec<u128> = (1..=1_000u128)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835))
            .collect();
        for (i, &print) in prints.iter().enumerate() {
            arrivals.arrive(print, i as u64, || (0, i as u64), || 0);
        }
        let runs = arrivals.drain_sorted(3);
        assert!(
            runs.iter().all(|run| run.len() > 200),
            "spread over the runs"
        );
        let arrived: Vec<u128> = runs.concat().iter().map(|a| a.print).collect();
        let mut sorted = prints.clone();
        sorted.sort_unstable();
        assert_eq!(arrived, sorted);
        assert!(arrivals.drain_sorted(2).iter().all(Vec::is_empty));
    }

    #[test]
    fn arrivals_keep_the_least_step_and_what_every_one_has_asleep() {
        // Room for 64 slots: many of 500 states go to the locked map.
        let mut arrivals = Arrivals::<u64>::new(1);
        std::thread::scope(|scope| {
            for thread in 0..3u64 {
                let arrivals = &arrivals;
                scope.spawn(move || {
                    for state in 0..500u64 {
                        let step = Arrivals::<u64>::step(thread, state as u16);
                        let sleep = 0b111 & !(1 << thread);
                        if let Arrival::Again {
                            brought: Some(brought),
                            ..
                        } = arrivals.arrive(state * 7, step, || (sleep, state), || sleep)
                        {
                            assert_eq!(brought, sleep);
                        }
                    }
                });
            }
        });
        let runs = arrivals.drain_sorted(2);
        assert_eq!(runs.len(), 2);
        let arrived = runs.concat();
        assert_eq!(arrived.len(), 500);
        for (state, a) in arrived.iter().enumerate() {
            assert_eq!(a.print, state as u64 * 7);
            assert_eq!(a.step, Arrivals::<u64>::step(0, state as u16));
            assert_eq!(a.sleep, 0, "each thread wakes one action");
            assert_eq!(a.record, state as u64);
        }
        assert!(arrivals.drain_sorted(3).iter().all(Vec::is_empty));
    }
}
