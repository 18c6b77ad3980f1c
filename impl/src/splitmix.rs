//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", 2014): a 64-bit state that advances by a fixed odd step,
//! and an output function that spreads the state's bits over all 64. The
//! sticky strategy hashes with its output function; the comparison of
//! strategies, the randomised real-cluster runs and the tests draw their
//! inputs from its stream, so that a seed gives the same draws on every
//! machine.

/// A seeded stream of 64-bit values, the same on every machine.
///
/// ```
/// use rocketmq_rebalance::SplitMix64;
///
/// let mut draws = SplitMix64::new(0);
/// assert_eq!(draws.next_u64(), 0xE220_A839_7B1D_CDAF);
/// // The first value of a stream is the output function of seed + step.
/// assert_eq!(SplitMix64::new(7).next_u64(), SplitMix64::mix(7u64.wrapping_add(SplitMix64::GAMMA)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The step of the state: 2^64 divided by the golden ratio, odd.
    pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The stream of `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        Self::mix(self.state)
    }

    /// The output function (a finalizer of MurmurHash3's kind): every bit
    /// of `z` affects every bit of the result.
    pub fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_gives_the_reference_sequence() {
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut draws = SplitMix64::new(1);
        assert_eq!(draws.next_u64(), 0x910A_2DEC_8902_5CC1);
        assert_eq!(draws.next_u64(), 0xBEEB_8DA1_658E_EC67);
    }
}
