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
    /// A part borrowed from a state: compared with the parts stored
    /// without being made (most parts of a successor are its parent's).
    type Lane<'s>
    where
        Self: 's;
    /// The parts of every state: fixed for the model.
    fn parts(&self) -> usize;
    /// Calls `visit` with each of the `parts()` parts of `state`, in order.
    fn lanes<'s>(&self, state: &'s Self::State, visit: &mut dyn FnMut(Self::Lane<'s>));
    /// Whether `lane` is `part`.
    fn is(lane: &Self::Lane<'_>, part: &Self::Part) -> bool;
    /// `lane` as a part of its own.
    fn own(lane: &Self::Lane<'_>) -> Self::Part;
    /// The state made of `parts` (as [`Packing::lanes`] gave them, in
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
    /// `Err` when the interner is full, or the model gives another number
    /// of parts than it says.
    pub fn encode(&mut self, state: &M::State, record: &mut [u32]) -> Result<(), Full> {
        let (found, found_ids, interner) = (&self.found, &self.found_ids, self.interner);
        let (mut at, mut result) = (0, Ok(()));
        self.model.lanes(state, &mut |lane| {
            let Some(id) = record.get_mut(at) else {
                result = Err(Full);
                return;
            };
            // A part equal to the last decoded state's has its id.
            match found.get(at) {
                Some(&known) if M::is(&lane, known) => *id = found_ids[at],
                _ => match interner.id(&M::own(&lane)) {
                    Ok(new) => *id = new,
                    Err(full) => result = Err(full),
                },
            }
            at += 1;
        });
        if at != record.len() {
            return Err(Full);
        }
        result
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
        type Lane<'s> = u8;
        fn parts(&self) -> usize {
            2
        }
        fn lanes(&self, &(x, y): &(u8, u8), visit: &mut dyn FnMut(u8)) {
            visit(x);
            visit(y);
        }
        fn is(lane: &u8, part: &u8) -> bool {
            lane == part
        }
        fn own(lane: &u8) -> u8 {
            *lane
        }
        fn join(&self, parts: &[&u8]) -> Option<(u8, u8)> {
            match parts {
                [x, y] => Some((**x, **y)),
                _ => None,
            }
        }
    }

    /// A test model packed as one part, its whole state: enough for the
    /// searches' tests, whose states are small.
    pub(crate) trait Whole: Model {}

    impl<M: Whole> Packing for M
    where
        M::State: Hash + Eq + Clone + Send + Sync,
    {
        type Part = M::State;
        type Lane<'s>
            = &'s M::State
        where
            M: 's;
        fn parts(&self) -> usize {
            1
        }
        fn lanes<'s>(&self, state: &'s M::State, visit: &mut dyn FnMut(&'s M::State)) {
            visit(state);
        }
        fn is(lane: &&M::State, part: &M::State) -> bool {
            *lane == part
        }
        fn own(lane: &&M::State) -> M::State {
            (*lane).clone()
        }
        fn join(&self, parts: &[&M::State]) -> Option<M::State> {
            match parts {
                [whole] => Some((*whole).clone()),
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
