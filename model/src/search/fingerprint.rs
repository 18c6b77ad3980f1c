//! Fingerprints: the hashes that stand for states in every search's seen
//! set, the same in every run (fixed keys), 64 or 128 bits ([`Print`]),
//! and the estimate of how likely two distinct states shared one.

use std::fmt::Debug;
use std::hash::{Hash, Hasher};

/// A 64-bit hash that is the same in every run (fixed keys, unlike a
/// randomly keyed hasher), so that graphs and fairness classes are
/// reproducible. aHash, as Stateright's own fingerprints.
pub fn fingerprint<T: Hash>(value: &T) -> u64 {
    ahash::RandomState::with_seeds(0x5EED, 0xFA1E, 0xC0DE, 0xBEEF).hash_one(value)
}

/// Keys that are already fingerprints need no second hash (the graph's
/// and the safety search's seen sets, 64- or 128-bit).
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64 ^ (n >> 64) as u64;
    }
}

/// A fingerprint: a hash of a state, the same in every run, that stands for
/// it in the seen set. Two states with the same fingerprint are taken for
/// one; [`collision_probability`] says how likely that hid a state.
pub trait Print: Copy + Ord + Default + Hash + Send + Sync + Debug + 'static {
    /// Whether the high word of [`Print::halves`] is used.
    const WIDE: bool;
    /// The fingerprint of `value`.
    fn of<T: Hash>(value: &T) -> Self;
    /// Bits that pick the seen set's shard: neither those a map's bucket
    /// index takes (the low ones) nor its tag (the top seven).
    fn shard_bits(self) -> usize;
    /// Bits that pick a table's slot: spread over every bit, from all of
    /// a 64-bit fingerprint, from the second hash of a 128-bit one.
    fn slot(self) -> u64;
    /// The fingerprint as two words, low and high (0 at 64 bits).
    fn halves(self) -> (u64, u64);
    /// The fingerprint of [`Print::halves`].
    fn from_halves(low: u64, high: u64) -> Self;
    /// Its 64 most significant bits, which order fingerprints first.
    fn top(self) -> u64;
}

/// A 64-bit mix whose every output bit depends on every input bit (the
/// finaliser of SplitMix64).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Print for u64 {
    const WIDE: bool = false;

    fn of<T: Hash>(value: &T) -> Self {
        fingerprint(value)
    }

    fn shard_bits(self) -> usize {
        (self >> 32 & 0xffff) as usize
    }

    fn slot(self) -> u64 {
        mix(self)
    }

    fn halves(self) -> (u64, u64) {
        (self, 0)
    }

    fn from_halves(low: u64, _: u64) -> Self {
        low
    }

    fn top(self) -> u64 {
        self
    }
}

impl Print for u128 {
    const WIDE: bool = true;

    /// Two 64-bit hashes with independent keys: aHash gives 64 bits a call.
    fn of<T: Hash>(value: &T) -> Self {
        let high = ahash::RandomState::with_seeds(0xB16B, 0x00B5, 0x7E57, 0xF00D).hash_one(value);
        u128::from(fingerprint(value)) | u128::from(high) << 64
    }

    fn shard_bits(self) -> usize {
        (self >> 32 & 0xffff) as usize
    }

    fn slot(self) -> u64 {
        (self >> 64) as u64
    }

    fn halves(self) -> (u64, u64) {
        (self as u64, (self >> 64) as u64)
    }

    fn from_halves(low: u64, high: u64) -> Self {
        u128::from(low) | u128::from(high) << 64
    }

    fn top(self) -> u64 {
        (self >> 64) as u64
    }
}

/// The probability that two of `states` distinct states got the same
/// `bits`-bit fingerprint, so that the second was taken for the first and
/// never explored: the birthday bound n(n-1)/2 over 2^bits, the estimate
/// TLC prints as "calculated (optimistic)" (fingerprints taken as uniformly
/// distributed). At most 1.
pub fn collision_probability(states: usize, bits: u32) -> f64 {
    let n = states as f64;
    (n * (n - 1.0) / 2.0 / 2f64.powi(bits as i32)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collision_estimate_is_the_birthday_bound() {
        assert_eq!(collision_probability(0, 64), 0.0);
        assert_eq!(collision_probability(1, 64), 0.0);
        let p = collision_probability(1 << 20, 64);
        assert!((p / 2f64.powi(-25) - 1.0).abs() < 1e-5, "{p}");
        assert!(collision_probability(usize::MAX, 64) <= 1.0);
        assert!(collision_probability(1 << 30, 128) < 1e-20);
    }

    #[test]
    fn wide_fingerprints_differ_from_narrow_ones_in_their_high_bits() {
        let narrow = <u64 as Print>::of(&(1u8, 2u8));
        let wide = <u128 as Print>::of(&(1u8, 2u8));
        assert_eq!(wide as u64, narrow);
        assert_ne!((wide >> 64) as u64, narrow);
    }
}
