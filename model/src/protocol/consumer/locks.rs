//! Orderly consumption's locks: a queue enters the consumer's table only
//! once its broker locks it for the consumer, is consumed only under a
//! lock the consumer's clock still trusts, is renewed periodically, and
//! leaves the table only once unlocked (`ConsumeMessageOrderlyService`,
//! `RebalanceImpl.lock`, `RebalancePushImpl.tryRemoveOrderMessageQueue`).
//! The clock that times them ticks here too ([`ConsumerState::elapse`]).
//! Without orderly consumption every hook is a no-op.

use super::{ConsumerState, Phase};
use crate::config::{members_of, Config, Fault, LockTiming, QueueSet, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, Timer};
use crate::protocol::process_queue::ProcessQueue;

impl ConsumerState {
    /// Consuming orderly, a running group at start holds the locks of its
    /// queues, just granted.
    pub(super) fn hold_locks(&mut self, cfg: &Config) {
        if cfg.orderly().is_some() {
            for q in members_of(self.owned) {
                self.queues[q].locked = true;
            }
        }
    }

    /// Orderly, `ConsumeMessageOrderlyService.shutdown` unlocks the queues
    /// of its table first (`unlockAll`, a synchronous call), one call per
    /// broker it reaches. A queue already dropped, waiting in the table for
    /// its batch, is left out (`buildProcessQueueTableByBrokerName` skips
    /// dropped process queues): its lock stays the broker's until the
    /// lease ends.
    pub(super) fn unlock_all(&self, cfg: &Config, me: usize) -> Vec<Output> {
        if cfg.orderly().is_none() {
            return Vec::new();
        }
        self.by_broker(cfg, me, self.table() & !self.dropped())
            .map(|(broker, queues)| {
                let epoch = self.epoch(broker);
                Output::Send(Peer::Broker(broker), Message::UnlockBatch { queues, epoch })
            })
            .collect()
    }

    /// Whether a pull may consume queue `q`: consuming orderly
    /// (`ConsumeMessageOrderlyService.ConsumeRequest`), only under a lock it
    /// trusts.
    pub(crate) fn may_consume(&self, cfg: &Config, q: usize) -> bool {
        cfg.orderly()
            .map_or(true, |timing| self.queues[q].lock_trusted(timing.validity))
    }

    /// `lockOneMQ`: a pull without a lock it trusts locks its queue again
    /// instead, unless a lock call for it is in flight. Before 4.9.5 a
    /// queue never marked locked only waited for the renewal to mark it
    /// (`pullMessage` put its request off 3 s at a time).
    pub(super) fn lock_one(&self, cfg: &Config, me: usize, q: usize) -> Step<Self> {
        if self.locking & 1 << q != 0
            || self.faults.contains(Fault::FailLocks)
            || (!self.queues[q].locked && cfg.has(Variant::LockedAtNextRenewal))
        {
            return None;
        }
        let mut next = *self;
        let mut outputs = vec![Output::Arm(Timer::Pull { queue: q as u8 })];
        next.ask_locks(cfg, me, 1 << q, &mut outputs);
        Some((next, outputs))
    }

    /// `updateProcessQueueTableInRebalance` consuming orderly, after the
    /// dropped queues' offsets are persisted: a dropped queue stays in the
    /// table until it is unlocked, and a new one enters it only once
    /// locked.
    pub(super) fn hand_over_locked(
        &mut self,
        cfg: &Config,
        me: usize,
        before: QueueSet,
        timing: &LockTiming,
        outputs: &mut Vec<Output>,
    ) {
        for q in members_of(before & !self.owned) {
            self.queues[q].dropped = true;
        }
        // A queue allocated again while still dropped stays dropped: the
        // table has it, so it is not added, until its pulls have stopped for
        // the pull expiry; then it is removed and added afresh.
        let dropped = u64::from(self.dropped());
        let stuck = self.owned & dropped;
        let expired = members_of(stuck)
            .filter(|&q| self.queues[q].idle_age >= timing.pull_expiry)
            .fold(0, |set, q| set | 1 << q);
        let mut added = self.owned & !before & !dropped;
        self.owned &= !dropped & !added;
        let mut waiting = false;
        for q in members_of(dropped & !stuck | expired) {
            // `removeUnnecessaryMessageQueue` persists at every try.
            if before & 1 << q == 0 {
                if let Some((broker, msg)) = self.offset_update(cfg, me, q) {
                    outputs.push(Output::SendPeriodic(broker, msg));
                }
            }
            if !self.try_remove(cfg, me, q, timing, outputs) {
                waiting = true;
            } else if expired & 1 << q != 0 {
                added |= 1 << q;
            }
        }
        if waiting {
            let now = *self;
            outputs.extend(now.retry_later(self, cfg, me));
        }
        let added = added as u8;
        let asked = if self.faults.contains(Fault::FailLocks) {
            0
        } else {
            self.ask_locks(cfg, me, added, outputs)
        };
        self.adding |= asked;
        if added & !asked != 0 {
            // `lock` failed: the round is not balanced (`rebalanceLater`).
            self.due |= self.topics;
        }
    }

    /// `RebalancePushImpl.tryRemoveOrderMessageQueue`: a dropped queue is
    /// unlocked (one-way) and leaves the table when no batch runs, or
    /// without waiting for it once `unlock_delay` has passed since its last
    /// lock. Otherwise it stays, to be tried again at the next round.
    pub(super) fn try_remove(
        &mut self,
        cfg: &Config,
        me: usize,
        q: usize,
        timing: &LockTiming,
        outputs: &mut Vec<Output>,
    ) -> bool {
        let pq = self.queues[q];
        // The Go client removes a dropped queue at once, its batch left to
        // run, and never unlocks it: the broker's lease frees it.
        let go = cfg.has(Variant::GoOrderlyDrop);
        let forced = pq.lock_age > timing.unlock_delay || go;
        if pq.running() && !forced {
            return false;
        }
        // The batch, if any, goes on.
        self.queues[q] = ProcessQueue::with_batch_of(ProcessQueue::default(), pq);
        let broker = cfg.broker_of(q);
        if self.faults.contains(Fault::LoseUnlock) {
            self.faults.remove(Fault::LoseUnlock);
        } else if !go && self.target_set(cfg, me) & 1 << broker != 0 {
            let unlock = Message::UnlockBatch {
                queues: 1 << q,
                epoch: self.epoch(broker),
            };
            outputs.push(Output::Send(Peer::Broker(broker), unlock));
        }
        true
    }

    /// `lockBatchMQ` for `queues`, one call per broker it can reach; the
    /// queues asked for, now in flight.
    pub(super) fn ask_locks(
        &mut self,
        cfg: &Config,
        me: usize,
        queues: u8,
        outputs: &mut Vec<Output>,
    ) -> u8 {
        let mut asked = 0;
        for (broker, of_broker) in self.by_broker(cfg, me, queues) {
            let epoch = self.epoch(broker);
            let lock = Message::LockBatch {
                queues: of_broker,
                epoch,
            };
            outputs.push(Output::Send(Peer::Broker(broker), lock));
            asked |= of_broker;
        }
        self.locking |= asked;
        asked
    }

    /// `queues` by the broker that holds them, for each broker it reaches
    /// that holds any: a batch call's queues.
    fn by_broker<'a>(
        &'a self,
        cfg: &'a Config,
        me: usize,
        queues: u8,
    ) -> impl Iterator<Item = (u8, u8)> + 'a {
        self.targets(cfg, me).filter_map(move |broker| {
            let of_broker = queues & cfg.broker_queues(usize::from(broker)) as u8;
            (of_broker != 0).then_some((broker, of_broker))
        })
    }

    /// A broker's answer to a lock call: a new queue enters the table
    /// (its offset is read next) or, refused, waits for the next round
    /// (`rebalanceLater`); a queue in the table is locked again, or no
    /// longer (`lockAll`).
    pub(super) fn lock_answered(
        &self,
        cfg: &Config,
        me: usize,
        asked: u8,
        granted: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        let mut outputs = Vec::new();
        let answered = asked & self.locking;
        next.locking &= !answered;
        next.adding &= !answered;
        for q in members_of(u64::from(answered)) {
            let ok = granted & 1 << q != 0;
            if self.adding & 1 << q != 0 {
                if ok {
                    next.owned |= 1 << q;
                    outputs.push(next.read_offset(cfg, q));
                    // Before 4.9.5 the lock was taken before the process
                    // queue was in the table: it learns of it at the next
                    // renewal.
                    next.queues[q].locked = !cfg.has(Variant::LockedAtNextRenewal);
                } else if cfg.has(Variant::GoOrderlyDrop) {
                    // Go skips the queue and leaves it to the next
                    // periodic round: no `rebalanceLater`.
                    let mut later = next;
                    outputs.extend(self.retry_later(&mut later, cfg, me));
                    next = later;
                } else {
                    next.due |= next.topics;
                }
            } else if self.table() & 1 << q != 0 {
                let pq = &mut next.queues[q];
                pq.locked = ok;
                if ok {
                    pq.lock_age = 0;
                }
            }
        }
        outputs.extend(next.schedule(cfg, me));
        (next, outputs)
    }

    /// `lockMQPeriodically`, when its clock says the renewal is due: every
    /// queue of its table that is not dropped is locked again.
    pub(super) fn lock_all(&self, cfg: &Config, me: usize) -> Step<Self> {
        let timing = cfg.orderly()?;
        if self.renew_age < timing.renew {
            return None;
        }
        let mut next = Self {
            renew_age: 0,
            ..*self
        };
        let mut outputs = vec![Output::Arm(Timer::LockAll)];
        if !self.faults.contains(Fault::FailLocks) {
            let queues = self.owned as u8 & !self.locking;
            next.ask_locks(cfg, me, queues, &mut outputs);
        }
        Some((next, outputs))
    }

    /// Lock calls in flight to `broker` that will get no answer (its
    /// connection closed or dropped): new queues wait for the next round.
    pub(super) fn lock_calls_lost(&mut self, cfg: &Config, broker: u8) {
        let lost = self.locking & cfg.broker_queues(usize::from(broker)) as u8;
        self.locking &= !lost;
        if self.adding & lost != 0 {
            self.adding &= !lost;
            self.due |= self.topics;
        }
    }

    /// One tick of real time, orderly consumption only: its wall clock
    /// advances (unless `own_clock` is false: it is stepped back by the
    /// tick, and stands still), and with it the age of its locks
    /// (`lastLockTimestamp`, wall-clock time). The renewal is timed by the
    /// monotonic clock (`lockMQPeriodically` on a scheduled executor), which
    /// no wall-clock step moves, and running batches age in real time.
    pub(super) fn aged(&self, cfg: &Config, own_clock: bool) -> Self {
        let Some(timing) = cfg.orderly() else {
            return *self;
        };
        let mut next = *self;
        // A consumer that has left still runs the batches it had.
        for pq in next.queues.iter_mut().filter(|pq| pq.running()) {
            pq.batch_age = (pq.batch_age + 1).min(timing.batch);
        }
        if self.phase != Phase::Running {
            return next;
        }
        let table = self.table();
        next.renew_age = (self.renew_age + 1).min(timing.renew);
        if own_clock {
            let cap = timing.validity.max(timing.unlock_delay) + 1;
            for q in members_of(u64::from(table)) {
                next.queues[q].lock_age = (self.queues[q].lock_age + 1).min(cap);
            }
        } else {
            next.lag += 1;
        }
        for pq in next.queues.iter_mut() {
            if pq.dropped {
                pq.idle_age = (pq.idle_age + 1).min(timing.pull_expiry);
            }
        }
        next
    }

    /// A timed step is due, which time may not pass: its lock renewal, or
    /// the end of a batch that has run as long as a batch runs.
    pub fn deadline(&self, cfg: &Config) -> bool {
        cfg.orderly().is_some_and(|timing| {
            (self.phase == Phase::Running && self.renew_age >= timing.renew)
                || self
                    .queues
                    .iter()
                    .any(|pq| pq.running() && pq.batch_age >= timing.batch)
        })
    }

    /// Orderly: queues dropped but not yet unlocked.
    pub fn dropped(&self) -> u8 {
        (0..self.queues.len())
            .filter(|&q| self.queues[q].dropped)
            .fold(0, |set, q| set | 1 << q)
    }
}

/// Whether the consumer repeats its retries without being woken for each:
/// consuming orderly, it retries a dropped queue's unlock at every round
/// until it succeeds, so one wake-up on its way is enough, and with the
/// periodic rebalance the renewal and the clock repeat the work.
pub(super) fn retries_repeat(cfg: &Config) -> bool {
    cfg.orderly().is_some()
}
