//! The graph's ids by fingerprint while it is built.
//!
//! An open-addressing table of 12-byte slots (the fingerprint and the id),
//! cut into segments by the fingerprint's top byte, each grown on its own:
//! a general-purpose map of the same pairs takes 16-byte entries, is half
//! empty after each doubling, and holds both copies of the whole table
//! while it doubles, the build's largest moment. Here a growth copies one
//! segment, a 256th of the table.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::StateId;
use crate::search::fingerprint::PassThrough;

/// Ids by fingerprint in a general-purpose map, for the few given since
/// the table was last brought up to date: fingerprints are already
/// hashes.
pub(super) type Ids = HashMap<u64, StateId, BuildHasherDefault<PassThrough>>;

/// Segments: a growth copies one, so the table never holds a second copy
/// of more than this share of itself.
const SEGMENTS: usize = 256;

/// The least slots a segment has.
const LEAST: usize = 8;

/// One fingerprint and its id, aligned to 4 bytes so that a slot takes 12.
#[derive(Clone, Copy, Default)]
struct Slot {
    print: [u32; 2],
    /// The state's id plus one; 0: an empty slot. Ids stay below 2^31:
    /// each edge takes at least two bytes of the graph's encoding, which
    /// stops at 4 GiB ([`Cutoff::TooLarge`](crate::search::budget::Cutoff::TooLarge)).
    entry: u32,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 12);

impl Slot {
    fn print(&self) -> u64 {
        u64::from(self.print[0]) | u64::from(self.print[1]) << 32
    }
}

#[derive(Default)]
struct Segment {
    slots: Vec<Slot>,
    len: usize,
}

impl Segment {
    /// The slot `print` is looked for from: its low half scaled to the
    /// segment's length, which need not be a power of two.
    fn home(&self, print: u64) -> usize {
        (((print & 0xffff_ffff) * self.slots.len() as u64) >> 32) as usize
    }

    fn get(&self, print: u64) -> Option<StateId> {
        if self.slots.is_empty() {
            return None;
        }
        let mut at = self.home(print);
        loop {
            let slot = &self.slots[at];
            if slot.entry == 0 {
                return None;
            }
            if slot.print() == print {
                return Some(slot.entry - 1);
            }
            at += 1;
            if at == self.slots.len() {
                at = 0;
            }
        }
    }

    /// Adds `print`, not in yet, with its id; grows first when the slots
    /// would be more than [`FULL`] full.
    fn add(&mut self, print: u64, id: StateId) {
        if (self.len + 1) as f64 > self.slots.len() as f64 * FULL {
            let room = (self.slots.len() * GROWTH_PERCENT / 100).max(LEAST);
            let old = std::mem::replace(&mut self.slots, vec![Slot::default(); room]);
            for slot in old.iter().filter(|s| s.entry != 0) {
                self.place(*slot);
            }
        }
        self.place(Slot {
            print: [print as u32, (print >> 32) as u32],
            entry: id + 1,
        });
        self.len += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mut at = self.home(slot.print());
        while self.slots[at].entry != 0 {
            at += 1;
            if at == self.slots.len() {
                at = 0;
            }
        }
        self.slots[at] = slot;
    }
}

/// The most a segment fills: linear probing looks at about a dozen slots,
/// one or two cache lines, for a fingerprint not in at this load.
const FULL: f64 = 0.8;

/// A segment's slots after a growth, as a share of before: from 0.8 full
/// to 0.53, so about two thirds full on average, 18 bytes a state.
const GROWTH_PERCENT: usize = 150;

/// Every recorded state's id by fingerprint.
pub(super) struct Known {
    segments: Vec<Segment>,
}

impl Known {
    pub(super) fn new() -> Self {
        Known {
            segments: (0..SEGMENTS).map(|_| Segment::default()).collect(),
        }
    }

    fn segment_of(print: u64) -> usize {
        (print >> 56) as usize % SEGMENTS
    }

    /// The bytes the table holds.
    pub(super) fn bytes(&self) -> usize {
        self.segments
            .iter()
            .map(|s| s.slots.capacity() * std::mem::size_of::<Slot>())
            .sum()
    }

    pub(super) fn get(&self, print: u64) -> Option<StateId> {
        self.segments[Self::segment_of(print)].get(print)
    }

    /// Moves the pairs of `recent` (fingerprints not in yet) in, on
    /// `threads` threads, each filling its own run of segments (the
    /// caller's thread the first).
    pub(super) fn add(&mut self, recent: &mut Ids, threads: usize) {
        let share = SEGMENTS.div_ceil(threads.max(1));
        let recent_pairs = &*recent;
        let fill = |first: usize, segments: &mut [Segment]| {
            for (&print, &id) in recent_pairs {
                if let Some(segment) = Self::segment_of(print)
                    .checked_sub(first)
                    .and_then(|at| segments.get_mut(at))
                {
                    segment.add(print, id);
                }
            }
        };
        let mut runs = self.segments.chunks_mut(share).enumerate();
        if let Some((_, first)) = runs.next() {
            std::thread::scope(|scope| {
                for (run, segments) in runs {
                    scope.spawn(move || fill(run * share, segments));
                }
                fill(0, first);
            });
        }
        recent.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_grows_and_finds_every_id_on_any_number_of_threads() {
        let prints: Vec<u64> = (0..20_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for threads in [1, 2, 3] {
            let mut known = Known::new();
            for (round, chunk) in prints.chunks(1_000).enumerate() {
                let mut pairs: Ids = chunk
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (p, (round * 1_000 + i) as StateId))
                    .collect();
                known.add(&mut pairs, threads);
            }
            for (id, &print) in prints.iter().enumerate() {
                assert_eq!(known.get(print), Some(id as StateId), "0 among them");
            }
            assert_eq!(known.get(1), None);
            let held: usize = known.segments.iter().map(|s| s.len).sum();
            assert_eq!(held, prints.len());
            assert!(known
                .segments
                .iter()
                .all(|s| s.len as f64 <= s.slots.len() as f64 * FULL));
        }
    }

    #[test]
    fn fingerprints_that_share_a_home_wrap_past_the_segments_end() {
        // Fingerprints of segment 0 whose home is the last of its 8 slots.
        let prints: Vec<u64> = (0..6u64).map(|i| 0xffff_ffff - i).collect();
        let mut known = Known::new();
        let mut pairs: Ids = (0..).zip(&prints).map(|(id, &p)| (p, id)).collect();
        known.add(&mut pairs, 1);
        assert_eq!(known.segments[0].slots.len(), LEAST);
        assert!((0..).zip(&prints).all(|(id, &p)| known.get(p) == Some(id)));
        assert_eq!(known.get(0xffff_fff0), None);
    }
}
