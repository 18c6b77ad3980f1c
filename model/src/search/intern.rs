//! Interning: each distinct value gets a small id, the same for every
//! thread, so that a state made of a few parts is stored as their ids (the
//! compression SPIN calls COLLAPSE: the parts of a model's states take few
//! distinct values, their combinations many).
//!
//! Looking a value up and adding one take no lock: an open-addressing table
//! of words (a hash tag and the id) claimed by compare-and-swap, the values
//! in pages that are written once. A value whose probe window is full goes
//! to a locked map instead; the window of a value only fills, so a value is
//! either in its window or in the map, never in both. Between levels, with
//! no other thread at work, [`Interner::settle`] rebuilds the table larger
//! and empties the map.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Slots probed before a value goes to the locked map.
const WINDOW: usize = 32;

/// Values a page holds.
const PAGE_SHIFT: u32 = 14;
const PAGE: usize = 1 << PAGE_SHIFT;
/// Pages: 2^16 of 2^14 values, a billion values in all.
const PAGES: usize = 1 << 16;

/// A page of values, each written once.
type Page<T> = Box<[OnceLock<T>]>;

/// Values by id, written once each, read by every thread.
struct Values<T> {
    pages: Box<[OnceLock<Page<T>>]>,
}

impl<T> Values<T> {
    fn new() -> Self {
        Values {
            pages: (0..PAGES).map(|_| OnceLock::new()).collect(),
        }
    }

    fn get(&self, id: u32) -> Option<&T> {
        let page = self.pages.get(id as usize >> PAGE_SHIFT)?.get()?;
        page[id as usize & (PAGE - 1)].get()
    }

    /// Stores `value` as `id`'s; whether there was room.
    fn set(&self, id: u32, value: T) -> bool {
        let Some(page) = self.pages.get(id as usize >> PAGE_SHIFT) else {
            return false;
        };
        let page = page.get_or_init(|| (0..PAGE).map(|_| OnceLock::new()).collect());
        page[id as usize & (PAGE - 1)].set(value).is_ok()
    }
}

/// The ids of distinct values.
pub struct Interner<T> {
    /// Per slot 0 (empty), or a tag of the value's hash above its id plus
    /// one.
    slots: Box<[AtomicU64]>,
    values: Values<T>,
    /// Ids handed out, some of them lost to a race (see [`Interner::id`]).
    next: AtomicU32,
    /// Values whose probe window was full.
    overflow: Mutex<HashMap<T, u32>>,
}

/// The hash that places values: fixed keys, the same in every run.
fn hash<T: Hash>(value: &T) -> u64 {
    ahash::RandomState::with_seeds(0x1D5, 0x7AB1E, 0xC011, 0xA95E).hash_one(value)
}

/// Why a value got no id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

impl<T: Hash + Eq + Clone> Interner<T> {
    /// An interner with room for about `expected` values before it needs
    /// [`Interner::settle`].
    pub fn new(expected: usize) -> Self {
        Interner {
            slots: empty_slots(expected),
            values: Values::new(),
            next: AtomicU32::new(0),
            overflow: Mutex::new(HashMap::new()),
        }
    }

    /// The value of `id`, if it was handed out.
    pub fn value(&self, id: u32) -> Option<&T> {
        self.values.get(id)
    }

    /// The id of `value`, given now if it has none: the same for equal
    /// values whichever thread asks first.
    pub fn id(&self, value: &T) -> Result<u32, Full> {
        let h = hash(value);
        let tag = h >> 32 << 32;
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        // An id taken for this value whose slot another thread won.
        let mut reserved = None;
        for _ in 0..WINDOW.min(self.slots.len()) {
            let word = self.slots[at].load(Ordering::Acquire);
            if word == 0 {
                let id = match reserved {
                    Some(id) => id,
                    None => {
                        let id = self.reserve(value.clone())?;
                        reserved = Some(id);
                        id
                    }
                };
                let claim = tag | (u64::from(id) + 1);
                match self.slots[at].compare_exchange(0, claim, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => return Ok(id),
                    Err(won) => {
                        if let Some(id) = self.holds(won, tag, value) {
                            return Ok(id);
                        }
                    }
                }
            } else if let Some(id) = self.holds(word, tag, value) {
                return Ok(id);
            }
            at = (at + 1) & mask;
        }
        let mut overflow = self.overflow.lock().expect("not poisoned");
        if let Some(&id) = overflow.get(value) {
            return Ok(id);
        }
        let id = match reserved {
            Some(id) => id,
            None => self.reserve(value.clone())?,
        };
        overflow.insert(value.clone(), id);
        Ok(id)
    }

    /// The id in slot word `word` if it holds `value`.
    fn holds(&self, word: u64, tag: u64, value: &T) -> Option<u32> {
        if word >> 32 << 32 != tag {
            return None;
        }
        let id = (word as u32).wrapping_sub(1);
        (self.values.get(id) == Some(value)).then_some(id)
    }

    /// A new id holding `value`.
    fn reserve(&self, value: T) -> Result<u32, Full> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if id == u32::MAX || !self.values.set(id, value) {
            return Err(Full);
        }
        Ok(id)
    }

    /// Between levels: a table with room for four times the values known,
    /// the locked map's among them. Cheap while the ids handed out (at
    /// least the values known) leave room, so that it can be called often.
    pub fn settle(&mut self) {
        let overflow = self.overflow.get_mut().expect("not poisoned");
        let given = *self.next.get_mut() as usize;
        if overflow.is_empty() && given.saturating_mul(4) <= self.slots.len() {
            return;
        }
        let known = self
            .slots
            .iter_mut()
            .map(|s| *s.get_mut())
            .filter(|&w| w != 0)
            .count()
            + overflow.len();
        if overflow.is_empty() && known * 4 <= self.slots.len() {
            return;
        }
        let mut slots = empty_slots(known * 4);
        let mask = slots.len() - 1;
        let mut place = |id: u32, value: &T| {
            let h = hash(value);
            let mut at = h as usize & mask;
            while *slots[at].get_mut() != 0 {
                at = (at + 1) & mask;
            }
            *slots[at].get_mut() = h >> 32 << 32 | (u64::from(id) + 1);
        };
        for word in self.slots.iter_mut() {
            let word = *word.get_mut();
            if word != 0 {
                let id = (word as u32).wrapping_sub(1);
                if let Some(value) = self.values.get(id) {
                    place(id, value);
                }
            }
        }
        for (value, id) in overflow.drain() {
            place(id, &value);
        }
        self.slots = slots;
    }
}

/// A table of at least `room` empty slots, a power of two.
fn empty_slots(room: usize) -> Box<[AtomicU64]> {
    let len = room.max(64).next_power_of_two();
    (0..len).map(|_| AtomicU64::new(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_get_one_id_on_every_thread_and_past_a_full_window() {
        // Room for 64 slots: most of 1,000 values go to the locked map.
        let mut interner = Interner::<u32>::new(1);
        let ids: Vec<Vec<u32>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..3)
                .map(|_| {
                    scope.spawn(|| {
                        (0..1_000u32)
                            .map(|v| interner.id(&(v % 700)).expect("room"))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("ran"))
                .collect()
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]));
        for (v, &id) in ids[0].iter().enumerate() {
            assert_eq!(interner.value(id), Some(&(v as u32 % 700)));
        }
        let distinct: std::collections::BTreeSet<u32> = ids[0].iter().copied().collect();
        assert_eq!(distinct.len(), 700);
        interner.settle();
        assert!(interner
            .overflow
            .get_mut()
            .expect("not poisoned")
            .is_empty());
        for (v, &id) in ids[0].iter().enumerate() {
            assert_eq!(interner.id(&(v as u32 % 700)), Ok(id), "kept its id");
        }
    }
}
