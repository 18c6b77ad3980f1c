//! Ghost state for the properties only: how many times each message was
//! handed to application code. No process sees it.

use crate::config::{MAX_MESSAGES, MAX_MESSAGE_QUEUES};

/// Delivery counts, two bits a message (saturating at 3: "three or more").
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Deliveries(u128);

/// Offsets a queue's counts take room for.
const SLOTS: usize = 8;

const _: () = assert!(MAX_MESSAGES <= SLOTS && 2 * SLOTS * MAX_MESSAGE_QUEUES <= 128);

impl Deliveries {
    fn shift(queue: usize, offset: usize) -> u32 {
        (2 * (queue * SLOTS + offset)) as u32
    }

    /// How many times message `offset` of `queue` was delivered (3: three or
    /// more).
    pub fn count(self, queue: usize, offset: usize) -> u8 {
        (self.0 >> Self::shift(queue, offset) & 0b11) as u8
    }

    /// Messages `[from, to)` of `queue` were delivered once more.
    pub fn deliver(&mut self, queue: usize, from: u8, to: u8) {
        for offset in usize::from(from)..usize::from(to) {
            let count = self.count(queue, offset);
            if count < 3 {
                self.0 += 1 << Self::shift(queue, offset);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_per_message_and_saturate_at_three() {
        let mut d = Deliveries::default();
        d.deliver(2, 1, 3);
        assert_eq!((d.count(2, 0), d.count(2, 1), d.count(2, 2)), (0, 1, 1));
        for _ in 0..5 {
            d.deliver(7, 5, 6);
        }
        assert_eq!(d.count(7, 5), 3);
        assert_eq!(d.count(7, 4), 0);
        assert_eq!(d.count(2, 1), 1);
        // Queue and offset are not interchangeable.
        d.deliver(1, 2, 3);
        assert_eq!((d.count(1, 2), d.count(2, 1)), (1, 1));
    }
}
