//! The timers and faults an actor has armed, as one word.

use crate::config::{Dense, Fault};
use crate::protocol::Timer;

/// The [`Timer`]s and [`Fault`]s an actor has armed, one 128-bit word: a bit per
/// [`Timer`] index, then a bit per [`Fault`] index.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct TimerSet(u128);

const _: () = assert!(Timer::COUNT + Fault::COUNT <= u128::BITS);

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

    /// Arms `fault`.
    pub fn arm_fault(&mut self, fault: Fault) {
        self.0 |= 1 << (Timer::COUNT + fault.index());
    }

    /// Disarms `fault`.
    pub fn disarm_fault(&mut self, fault: Fault) {
        self.0 &= !(1 << (Timer::COUNT + fault.index()));
    }

    /// Whether `fault` is armed.
    pub fn contains_fault(self, fault: Fault) -> bool {
        self.0 & 1 << (Timer::COUNT + fault.index()) != 0
    }

    /// Disarms everything.
    pub fn clear(&mut self) {
        self.0 = 0;
    }

    /// The armed timers in `Ord` order.
    pub fn iter(self) -> impl Iterator<Item = Timer> {
        let timers = self.0 & ((1 << Timer::COUNT) - 1);
        bits_of(timers).filter_map(Timer::from_index)
    }

    /// The armed faults in `Ord` order.
    pub fn faults(self) -> impl Iterator<Item = Fault> {
        bits_of(self.0 >> Timer::COUNT).filter_map(Fault::from_index)
    }
}

/// The indices of the bits set in `word`, lowest first.
fn bits_of(mut word: u128) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let i = word.trailing_zeros();
            word &= word - 1;
            i
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timer_has_its_own_bit_in_order() {
        let all: Vec<Timer> = Timer::all().collect();
        assert_eq!(all.len(), Timer::COUNT as usize);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        for (i, t) in all.iter().enumerate() {
            assert_eq!(t.index(), i as u32);
            assert_eq!(Timer::from_index(t.index()), Some(*t));
        }
        let mut set = TimerSet::default();
        for &t in &all {
            set.arm(t);
        }
        for f in Fault::all() {
            set.arm_fault(f);
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), all);
        assert_eq!(
            set.faults().collect::<Vec<_>>(),
            Fault::all().collect::<Vec<_>>()
        );
        let mut set = TimerSet::default();
        set.arm(Timer::PeriodicRebalance);
        set.arm_fault(Fault::Join);
        set.arm(Timer::Rebalance { broker: 7 });
        set.arm(Timer::PeriodicRebalance);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [Timer::Rebalance { broker: 7 }, Timer::PeriodicRebalance]
        );
        assert_eq!(set.faults().collect::<Vec<_>>(), [Fault::Join]);
        set.disarm_fault(Fault::Join);
        assert!(!set.contains_fault(Fault::Join));
        assert!(set.contains(Timer::PeriodicRebalance));
        assert_eq!(Timer::from_index(Timer::COUNT), None);
    }
}
