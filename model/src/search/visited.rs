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

    /// Adds `prints`, not in yet and distinct, growing first if they would
    /// fill the table past [`GROW_AT`].
    pub fn extend(&mut self, prints: impl ExactSizeIterator<Item = F>) {
        let wanted = self.len + prints.len();
        if self.grows_with(prints.len()) {
            let old = std::mem::replace(&mut self.slots, vec![F::default(); capacity_for(wanted)]);
            for print in old.into_iter().filter(|p| *p != F::default()) {
                self.place(print);
            }
        }
        for print in prints {
            if print == F::default() {
                self.default_in = true;
            } else {
                self.place(print);
            }
        }
        self.len = wanted;
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

    /// Every state that arrived, in no particular order; the table is
    /// emptied.
    pub fn drain(&mut self) -> Vec<Arrived<F>> {
        let mut out: Vec<Arrived<F>> = self
            .overflow
            .get_mut()
            .expect("not poisoned")
            .drain()
            .map(|(_, a)| a)
            .collect();
        let highs = self.highs.iter_mut().map(|h| std::mem::take(h.get_mut()));
        let mut highs = highs.chain(std::iter::repeat(0));
        for slot in self.slots.iter_mut() {
            let low = std::mem::take(slot.low.get_mut());
            let high = highs.next().unwrap_or(0);
            if low != 0 {
                out.push(Arrived {
                    print: F::from_halves(low, high),
                    step: std::mem::take(slot.step.get_mut()),
                    sleep: std::mem::take(slot.sleep.get_mut()),
                    record: std::mem::take(slot.record.get_mut()) - 1,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_visited_set_grows_and_knows_what_it_holds() {
        let mut seen = Visited::<u64>::new(1);
        let prints: Vec<u64> = (0..1_000u64).map(|i| i * 0x9E37_79B9).collect();
        seen.extend(prints[..10].iter().copied());
        seen.extend(prints[10..].iter().copied());
        assert_eq!(seen.len(), 1_000);
        assert!(prints.iter().all(|&p| seen.contains(p)), "0 among them");
        assert!(!seen.contains(1));
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
        let mut arrived = arrivals.drain();
        arrived.sort_by_key(|a| a.print);
        assert_eq!(arrived.len(), 500);
        for (state, a) in arrived.iter().enumerate() {
            assert_eq!(a.print, state as u64 * 7);
            assert_eq!(a.step, Arrivals::<u64>::step(0, state as u16));
            assert_eq!(a.sleep, 0, "each thread wakes one action");
            assert_eq!(a.record, state as u64);
        }
        assert!(arrivals.drain().is_empty());
    }
}
