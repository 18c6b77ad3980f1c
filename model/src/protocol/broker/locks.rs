//! The broker's lock table (`RebalanceLockManager`), orderly consumption
//! only, and the calls that take and release its locks.

use super::BrokerState;
use crate::config::{members_of, Config};
use crate::protocol::message::{Message, Output, Peer};

/// A broker's lock table (`RebalanceLockManager.mqLockTable`), orderly
/// consumption only: per queue index, the client id that holds the lock and
/// the ticks since it last locked or renewed it, one byte a queue. A lock
/// unrenewed past the lease is expired; it is removed then, as whoever asks
/// next gets it, the old holder included, as if there were none.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct LockTable(u64);

impl LockTable {
    /// The table as one word, a byte a queue.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The lock key ([`Config::lock_key`]) holding queue `q`'s lock, if any.
    pub fn holder(self, q: usize) -> Option<u8> {
        let byte = (self.0 >> (8 * q)) as u8;
        (byte & 0xF).checked_sub(1)
    }

    /// Ticks since queue `q`'s lock was last granted or renewed.
    pub fn age(self, q: usize) -> u8 {
        (self.0 >> (8 * q + 4)) as u8 & 0xF
    }

    pub(super) fn set(&mut self, q: usize, holder: Option<u8>, age: u8) {
        let byte = holder.map_or(0, |key| u64::from(key + 1) | u64::from(age) << 4);
        self.0 = self.0 & !(0xFF << (8 * q)) | byte << (8 * q);
    }

    /// `tryLockBatch` for `key`: each queue that is free or already its own
    /// is (re)locked; the queues locked for it.
    pub(super) fn try_lock(&mut self, key: u8, queues: u8) -> u8 {
        let mut granted = 0;
        for q in members_of(u64::from(queues)) {
            if self.holder(q).map_or(true, |holder| holder == key) {
                self.set(q, Some(key), 0);
                granted |= 1 << q;
            }
        }
        granted
    }

    /// `unlockBatch` for `key`: its own locks among `queues` are released;
    /// another's are left alone.
    pub(super) fn unlock(&mut self, key: u8, queues: u8) {
        for q in members_of(u64::from(queues)) {
            if self.holder(q) == Some(key) {
                self.set(q, None, 0);
            }
        }
    }

    /// The queues whose locks lapse at the next tick of the broker's clock:
    /// held and unrenewed for the whole lease.
    pub fn lapsing(self, lease: u8) -> u8 {
        (0..8)
            .filter(|&q| self.holder(q).is_some() && self.age(q) >= lease)
            .fold(0, |set, q| set | 1 << q)
    }

    /// One tick of the broker's clock: every lock ages, and those past the
    /// lease expire.
    pub(super) fn elapse(&mut self, lease: u8) {
        let lapsing = self.lapsing(lease);
        for q in 0..8 {
            if let Some(key) = self.holder(q) {
                let kept = lapsing & 1 << q == 0;
                self.set(q, kept.then_some(key), self.age(q) + 1);
            }
        }
    }
}

impl BrokerState {
    /// `AdminBrokerProcessor.lockBatchMQ`: the queues free or already its
    /// own are locked for consumer `c`; none during a start's grace.
    pub(super) fn lock_batch(
        &self,
        cfg: &Config,
        from: Peer,
        c: u8,
        queues: u8,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        let granted = if self.memory.grace > 0 {
            0
        } else {
            next.memory
                .locks
                .try_lock(cfg.lock_key(usize::from(c)), queues)
        };
        let answer = Message::Locked {
            asked: queues,
            granted,
            epoch,
        };
        (next, vec![Output::Send(from, answer)])
    }

    /// `AdminBrokerProcessor.unlockBatchMQ`: consumer `c`'s own locks among
    /// `queues` are released.
    pub(super) fn unlock_batch(&self, cfg: &Config, c: u8, queues: u8) -> (Self, Vec<Output>) {
        let mut next = *self;
        next.memory
            .locks
            .unlock(cfg.lock_key(usize::from(c)), queues);
        (next, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_table_keeps_each_queue_apart() {
        let mut table = LockTable::default();
        assert_eq!(table.try_lock(2, 0b101), 0b101, "free queues are granted");
        assert_eq!(
            (table.holder(0), table.holder(1), table.holder(2)),
            (Some(2), None, Some(2))
        );
        assert_eq!(table.try_lock(5, 0b110), 0b010, "queue 2 is another's");
        assert_eq!(table.holder(1), Some(5));
        table.elapse(2);
        table.elapse(2);
        assert_eq!((table.age(0), table.age(1), table.age(2)), (2, 2, 2));
        assert_eq!(table.try_lock(2, 0b100), 0b100, "its own lock is renewed");
        assert_eq!((table.age(2), table.holder(2)), (0, Some(2)));
        table.elapse(2);
        assert_eq!(table.holder(0), None, "unrenewed past the lease: expired");
        assert_eq!(table.holder(1), None);
        assert_eq!((table.holder(2), table.age(2)), (Some(2), 1));
        table.unlock(5, 0b100);
        assert_eq!(table.holder(2), Some(2), "another's lock is left alone");
        table.unlock(2, 0b100);
        assert_eq!(table, LockTable::default());
        // The last queue and the largest key and age fit their byte.
        table.set(7, Some(14), 15);
        assert_eq!(
            (table.holder(7), table.age(7), table.holder(6)),
            (Some(14), 15, None)
        );
    }
}
