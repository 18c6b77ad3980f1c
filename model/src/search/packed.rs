//! States packed: a model whose states are a fixed number of parts
//! ([`Packing`]) is stored as its parts' ids, one 32-bit lane a part, each
//! distinct part kept once ([`Interner`]). A record has a fixed size, so a
//! level of states is a flat buffer of lanes, with no allocation per
//! state; the round trip is exact, and two states have equal records
//! exactly when they are equal (the interner gives equal parts one id).

use std::hash::Hash;

use stateright::Model;

use super::intern::{Full, Interner};

/// A model whose states split into a fixed number of parts.
pub trait Packing: Model {
    /// What a state is made of (its machines' states, its messages in
    /// flight, ...): few distinct values each, many combinations.
    type Part: Hash + Eq + Clone + Send + Sync;
    /// The parts of every state: fixed for the model.
    fn parts(&self) -> usize;
    /// Part `at` of `state`, or `None` past the last.
    fn part(&self, state: &Self::State, at: usize) -> Option<Self::Part>;
    /// Whether part `at` of `state` is `part`: what comparing
    /// [`Packing::part`] with it says, without making the part (most
    /// parts of a successor are its parent's).
    fn is_part(&self, state: &Self::State, at: usize, part: &Self::Part) -> bool;
    /// The state made of `parts` (as [`Packing::part`] gave them, in
    /// order), or `None` when they make none.
    fn join(&self, parts: &[&Self::Part]) -> Option<Self::State>;
}

/// Encodes and decodes one thread's states, through the interner every
/// thread shares.
pub struct Codec<'a, M: Packing> {
    model: &'a M,
    interner: &'a Interner<M::Part>,
    /// The parts of the state decoded last, and their ids: its
    /// successors, encoded next, share most of them.
    found: Vec<&'a M::Part>,
    found_ids: Vec<u32>,
}

impl<'a, M: Packing> Codec<'a, M> {
    /// A codec of `model`'s states through `interner`.
    pub fn new(model: &'a M, interner: &'a Interner<M::Part>) -> Self {
        Codec {
            model,
            interner,
            found: Vec::with_capacity(model.parts()),
            found_ids: Vec::with_capacity(model.parts()),
        }
    }

    /// `state` as the ids of its parts, into `record` (`parts()` lanes);
    /// `Err` when the interner is full, or the model has fewer parts
    /// than it says.
    pub fn encode(&mut self, state: &M::State, record: &mut [u32]) -> Result<(), Full> {
        for (at, lane) in record.iter_mut().enumerate() {
            // A part equal to the last decoded state's has its id.
            *lane = match self.found.get(at) {
                Some(&known) if self.model.is_part(state, at, known) => self.found_ids[at],
                _ => self.interner.id(&self.model.part(state, at).ok_or(Full)?)?,
            };
        }
        Ok(())
    }

    /// The state whose record is `record`, if the interner gave its ids.
    pub fn decode(&mut self, record: &[u32]) -> Option<M::State> {
        self.found.clear();
        self.found_ids.clear();
        for &id in record {
            self.found.push(self.interner.value(id)?);
            self.found_ids.push(id);
        }
        self.model.join(&self.found)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::search::bfs::tests::Grid;

    /// The grid's state is its two counters, a part each.
    impl Packing for Grid {
        type Part = u8;
        fn parts(&self) -> usize {
            2
        }
        fn part(&self, &(x, y): &(u8, u8), at: usize) -> Option<u8> {
            [x, y].get(at).copied()
        }
        fn is_part(&self, state: &(u8, u8), at: usize, part: &u8) -> bool {
            self.part(state, at).as_ref() == Some(part)
        }
        fn join(&self, parts: &[&u8]) -> Option<(u8, u8)> {
            match parts {
                [x, y] => Some((**x, **y)),
                _ => None,
            }
        }
    }

    #[test]
    fn a_record_decodes_to_its_state() {
        let interner = Interner::new(4);
        let mut codec = Codec::new(&Grid, &interner);
        let mut a = [0; 2];
        let mut b = [0; 2];
        codec.encode(&(3, 5), &mut a).expect("room");
        codec.encode(&(5, 3), &mut b).expect("room");
        assert_ne!(a, b);
        assert_eq!(codec.decode(&a), Some((3, 5)));
        assert_eq!(codec.decode(&b), Some((5, 3)));
        assert_eq!(codec.decode(&[a[0]]), None, "too few parts");
        assert_eq!(codec.decode(&[a[0], 99]), None, "an id never given");
    }
}
