//! Enums numbered densely by their declaration, so that a set of them is
//! one word: `dense_enum!` declares the enum and
//! derives its [`Dense`] numbering, and [`DenseSet`] is a set of them.
//!
//! Nothing is numbered by hand: a variant's index is the number of values
//! of the variants declared before it, plus its field, so a new variant is
//! numbered, counted and iterated as soon as it is declared.

use std::fmt;
use std::marker::PhantomData;

/// An enum whose values are numbered `0..COUNT` in `Ord` order.
pub trait Dense: Copy + Ord + Sized + 'static {
    /// How many values there are: every [`Dense::index`] is below it.
    const COUNT: u32;

    /// The value's number: the order of the variants, and within a variant
    /// with a field, the field.
    fn index(self) -> u32;

    /// The value numbered `index`, if any.
    fn from_index(index: u32) -> Option<Self>;

    /// Every value, in `Ord` order.
    fn all() -> DenseIter<Self> {
        DenseIter {
            next: 0,
            of: PhantomData,
        }
    }
}

/// Every value of a [`Dense`] enum, in order ([`Dense::all`]).
#[derive(Clone, Debug)]
pub struct DenseIter<T> {
    next: u32,
    of: PhantomData<T>,
}

impl<T: Dense> Iterator for DenseIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        while self.next < T::COUNT {
            self.next += 1;
            if let Some(value) = T::from_index(self.next - 1) {
                return Some(value);
            }
        }
        None
    }
}

/// Declares an enum whose variants are units or carry one `u8` field
/// below a bound (`Rebalance { broker: u8 < MAX_BROKERS }`), and derives
/// its [`Dense`] numbering in declaration order. The enum also derives
/// `Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord` and
/// `serde::Serialize`, so that its `Ord` order is its numbering.
macro_rules! dense_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident $({
                    $(#[$fmeta:meta])*
                    $field:ident : u8 < $bound:expr
                })?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
        )]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant $({
                    $(#[$fmeta])*
                    $field: u8
                })?,
            )*
        }

        const _: () = {
            /// The variants without their fields, in declaration order.
            #[allow(dead_code)]
            #[derive(Clone, Copy)]
            enum Ordinal {
                $($variant,)*
            }

            /// How many values each variant has.
            const SIZES: &[u32] = &[$(dense_enum!(@size $($bound)?),)*];

            /// The index of each variant's first value.
            const fn offset(ordinal: usize) -> u32 {
                let mut sum = 0;
                let mut i = 0;
                while i < ordinal {
                    sum += SIZES[i];
                    i += 1;
                }
                sum
            }

            impl $crate::config::Dense for $name {
                const COUNT: u32 = offset(SIZES.len());

                fn index(self) -> u32 {
                    match self {
                        $(
                            $name::$variant $({ $field })? => {
                                offset(Ordinal::$variant as usize)
                                    $(+ u32::from($field))?
                            }
                        )*
                    }
                }

                fn from_index(index: u32) -> Option<Self> {
                    $(
                        let first = offset(Ordinal::$variant as usize);
                        let size = SIZES[Ordinal::$variant as usize];
                        if (first..first + size).contains(&index) {
                            #[allow(unused_variables)]
                            let within = index - first;
                            return Some(dense_enum!(
                                @make $name $variant within $($field)?
                            ));
                        }
                    )*
                    None
                }
            }
        };
    };
    (@size) => { 1 };
    (@size $bound:expr) => { $bound as u32 };
    (@make $name:ident $variant:ident $within:ident) => { $name::$variant };
    (@make $name:ident $variant:ident $within:ident $field:ident) => {
        $name::$variant { $field: $within as u8 }
    };
}

/// A set of values of a [`Dense`] enum of at most 64 values, one bit each,
/// iterated in `Ord` order. It serializes as its word.
pub struct DenseSet<T> {
    bits: u64,
    of: PhantomData<T>,
}

impl<T: Dense> DenseSet<T> {
    /// The empty set (usable in constants).
    pub const EMPTY: Self = Self {
        bits: 0,
        of: PhantomData,
    };

    /// The set whose word is `bits`.
    pub const fn from_bits(bits: u64) -> Self {
        Self {
            bits,
            of: PhantomData,
        }
    }

    /// The set as one word, bit [`Dense::index`] for each member.
    pub const fn bits(self) -> u64 {
        self.bits
    }

    /// Adds `value` (adding a member changes nothing).
    pub fn insert(&mut self, value: T) {
        self.bits |= 1 << value.index();
    }

    /// Removes `value`.
    pub fn remove(&mut self, value: T) {
        self.bits &= !(1 << value.index());
    }

    /// The set with `value` added.
    pub fn with(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// The set with `value` removed.
    pub fn without(mut self, value: T) -> Self {
        self.remove(value);
        self
    }

    /// Whether `value` is a member.
    pub fn contains(self, value: T) -> bool {
        self.bits & 1 << value.index() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.bits == 0
    }

    /// The members, in `Ord` order.
    pub fn iter(self) -> impl Iterator<Item = T> {
        super::members_of(self.bits).filter_map(|i| T::from_index(i as u32))
    }
}

impl<T: Dense> FromIterator<T> for DenseSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut set = Self::EMPTY;
        for value in values {
            set.insert(value);
        }
        set
    }
}

impl<T> Clone for DenseSet<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DenseSet<T> {}

impl<T> Default for DenseSet<T> {
    fn default() -> Self {
        Self {
            bits: 0,
            of: PhantomData,
        }
    }
}

impl<T> PartialEq for DenseSet<T> {
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}

impl<T> Eq for DenseSet<T> {}

impl<T> std::hash::Hash for DenseSet<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.bits);
    }
}

impl<T: Dense + fmt::Debug> fmt::Debug for DenseSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<T> serde::Serialize for DenseSet<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.bits)
    }
}

/// Only the word of a set deserializes: no bit at or above the enum's
/// [`Dense::COUNT`].
impl<'de, T: Dense> serde::Deserialize<'de> for DenseSet<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = u64::deserialize(d)?;
        if T::COUNT < u64::BITS && bits >> T::COUNT != 0 {
            return Err(serde::de::Error::custom("a bit beyond the enum's values"));
        }
        Ok(Self::from_bits(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    dense_enum! {
        /// A sample.
        enum Sample {
            /// First.
            A,
            /// With a field.
            B {
                /// The field.
                n: u8 < 3
            },
            /// Last.
            C,
        }
    }

    #[test]
    fn every_value_round_trips_in_order() {
        let all: Vec<Sample> = Sample::all().collect();
        assert_eq!(
            all,
            [
                Sample::A,
                Sample::B { n: 0 },
                Sample::B { n: 1 },
                Sample::B { n: 2 },
                Sample::C
            ]
        );
        assert_eq!(Sample::COUNT, 5);
        for (i, v) in all.iter().enumerate() {
            assert_eq!(v.index(), i as u32);
            assert_eq!(Sample::from_index(i as u32), Some(*v));
        }
        assert_eq!(Sample::from_index(5), None);
        let set: DenseSet<Sample> = [Sample::C, Sample::A, Sample::B { n: 2 }]
            .into_iter()
            .collect();
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [Sample::A, Sample::B { n: 2 }, Sample::C]
        );
        assert_eq!(set.without(Sample::A).bits(), 0b11000);
    }
}
