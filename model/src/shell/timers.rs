//! The timers an actor has armed, as one word.

use crate::protocol::Timer;

/// A set of [`Timer`]s, one bit per [`Timer::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TimerSet(u64);

const _: () = assert!(Timer::COUNT <= u64::BITS);

impl TimerSet {
    /// Arms `timer` (arming an armed timer changes nothing).
    pub fn arm(&mut self, timer: Timer) {
        self.0 |= 1 << timer.index();
    }

    /// Disarms `timer`.
    pub fn disarm(&mut self, timer: Timer) {
        self.0 &= !(1 << timer.index());
    }

    /// Whether `timer` is armed.
    pub fn contains(self, timer: Timer) -> bool {
        self.0 & 1 << timer.index() != 0
    }

    /// The armed timers in `Ord` order.
    pub fn iter(self) -> impl Iterator<Item = Timer> {
        crate::config::members_of(self.0).filter_map(|i| Timer::from_index(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timer_has_its_own_bit_in_order() {
        let all: Vec<Timer> = (0..Timer::COUNT).filter_map(Timer::from_index).collect();
        assert_eq!(all.len(), Timer::COUNT as usize);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        for t in &all {
            assert_eq!(Timer::from_index(t.index()), Some(*t));
        }
        let mut set = TimerSet::default();
        set.arm(Timer::Tick);
        set.arm(Timer::Join);
        set.arm(Timer::Rebalance { broker: 7 });
        set.arm(Timer::Tick);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [Timer::Join, Timer::Rebalance { broker: 7 }, Timer::Tick]
        );
        set.disarm(Timer::Join);
        assert!(!set.contains(Timer::Join));
        assert_eq!(Timer::from_index(Timer::COUNT), None);
    }
}
