//! POP on the broker: `PopMessageProcessor` hands out messages under
//! handles, `AckMessageProcessor` acknowledges them, and
//! `PopReviveService` puts a message whose handle expired unacknowledged
//! into the group's pop retry topic, from which it is popped again.
//!
//! The checkpoints and acknowledgements live in the broker's revive topic,
//! in its commit log, so a restart keeps them: the table is on disk.

use super::BrokerState;
use crate::config::Config;
use crate::protocol::message::{Message, Output, Peer, Step};

/// Where a message is in its POP life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PopStatus {
    /// Never popped: in its queue, at or after the group's pop offset.
    Waiting,
    /// Popped, invisible to the others until acknowledged or until its
    /// invisible time passes.
    Invisible,
    /// Acknowledged: done with.
    Acked,
    /// Its handle expired unacknowledged: revived into the group's pop
    /// retry topic, to be popped again (in a FIFO group, popped again at
    /// its place in the queue).
    Revived,
}

/// What a broker knows of each message's POP life, four bits a message by
/// queue index and offset ([`crate::config::POP_SLOTS`] of them): its
/// [`PopStatus`] and which pop of it the current handle is (modulo 4), so
/// that an acknowledgement or an expiry of an older handle changes
/// nothing.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct PopTable(u128);

impl PopTable {
    /// The table as one word.
    pub fn bits(self) -> u128 {
        self.0
    }

    fn shift(cfg: &Config, queue: usize, offset: usize) -> u32 {
        (4 * (queue * cfg.sizes.messages + offset)) as u32
    }

    fn entry(self, cfg: &Config, queue: usize, offset: usize) -> u8 {
        (self.0 >> Self::shift(cfg, queue, offset) & 0xF) as u8
    }

    fn set(&mut self, cfg: &Config, queue: usize, offset: usize, status: PopStatus, attempt: u8) {
        let shift = Self::shift(cfg, queue, offset);
        let code = match status {
            PopStatus::Waiting => 0,
            PopStatus::Invisible => 1,
            PopStatus::Acked => 2,
            PopStatus::Revived => 3,
        };
        let entry = u128::from(code | (attempt & 0b11) << 2);
        self.0 = self.0 & !(0xF << shift) | entry << shift;
    }

    /// Message `offset` of `queue`: where it is, and its handle's attempt.
    pub fn status(self, cfg: &Config, queue: usize, offset: usize) -> (PopStatus, u8) {
        let entry = self.entry(cfg, queue, offset);
        let status = match entry & 0b11 {
            0 => PopStatus::Waiting,
            1 => PopStatus::Invisible,
            2 => PopStatus::Acked,
            _ => PopStatus::Revived,
        };
        (status, entry >> 2)
    }

    /// Each message of `[from, to)` of `queue` whose handle is still
    /// `attempt` and whose status is one of `was` becomes `status`.
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &mut self,
        cfg: &Config,
        queue: usize,
        from: u8,
        to: u8,
        attempt: u8,
        was: &[PopStatus],
        status: PopStatus,
    ) {
        for offset in usize::from(from)..usize::from(to) {
            let (now, handle) = self.status(cfg, queue, offset);
            if handle == attempt && was.contains(&now) {
                self.set(cfg, queue, offset, status, attempt);
            }
        }
    }

    /// The table after a crash that lost a FIFO group's order info of its
    /// queues' last pops (`consumerOrderInfo.json` is persisted every
    /// 10 s and at a clean shutdown): no queue is blocked, each message
    /// still invisible is visible again at its place, and its handle's
    /// acknowledgement still counts until the queue is popped again
    /// (`commitAndNext` commits an acknowledgement it has no order info
    /// for).
    pub fn order_info_lost(self, cfg: &Config) -> Self {
        let mut table = self;
        for queue in 0..cfg.queues.len() {
            for offset in 0..cfg.sizes.messages {
                if let (PopStatus::Invisible, attempt) = self.status(cfg, queue, offset) {
                    table.set(cfg, queue, offset, PopStatus::Revived, attempt);
                }
            }
        }
        table
    }
}

impl BrokerState {
    /// `POP_MESSAGE` of `queue`: a batch ([`batch`], or for a FIFO group
    /// [`fifo_batch`], which a retry of a lost pop `reenters`, and which a
    /// proxy that lost the group's config asks for without the block),
    /// each of its messages made invisible under a new handle. (RocketMQ
    /// reads the retry topic first one pop in five: which comes first
    /// changes what is delivered when, not what is delivered twice.)
    pub(super) fn pop(
        &self,
        cfg: &Config,
        from: Peer,
        queue: u8,
        generation: bool,
        reenters: Option<u8>,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let q = usize::from(queue);
        let table = self.disk.pop;
        let end = usize::from(self.log_end(cfg, q));
        let (first, last) = if cfg.protocol.fifo {
            // A proxy that lost the group's config asks for a concurrent
            // pop: no block, from the committed offset (a FIFO pop leaves
            // no checkpoint offset ahead of it).
            let gate = if self.proxy_lost_group {
                Gate::Open
            } else {
                Gate::Block { reenters }
            };
            fifo_batch(cfg, table, q, end, gate)
        } else {
            batch(cfg, table, q, end)
        };
        let mut next = *self;
        // The messages of one pop share its handle, a new one: fresh
        // messages were never popped, a revived one is popped alone, and a
        // FIFO batch is the messages of an expired handle and fresh ones.
        let attempt = (first..last)
            .map(|o| (table.status(cfg, q, o).1 + 1) & 0b11)
            .max()
            .unwrap_or(0);
        for offset in first..last {
            next.disk
                .pop
                .set(cfg, q, offset, PopStatus::Invisible, attempt);
        }
        let answer = Message::PopResult {
            queue,
            from: first as u8,
            to: last as u8,
            attempt,
            generation,
            epoch,
        };
        (next, vec![Output::Send(from, answer)])
    }

    /// `ACK_MESSAGE`: the messages still invisible under the handle are
    /// done with; an older handle's acknowledgement changes nothing. In a
    /// FIFO group so are the handle's messages visible again at their
    /// place, until the queue is popped again: `commitAndNext` refuses an
    /// acknowledgement only when its pop time is not that of the queue's
    /// last pop. (An acknowledgement sent once the handle's invisible time
    /// has passed is not sent at all: the proxy refuses it. One sent
    /// before a crash lost the order info still counts.)
    pub(super) fn ack(&self, cfg: &Config, queue: u8, from: u8, to: u8, attempt: u8) -> Step<Self> {
        let was: &[PopStatus] = if cfg.protocol.fifo {
            &[PopStatus::Invisible, PopStatus::Revived]
        } else {
            &[PopStatus::Invisible]
        };
        self.settled(cfg, queue, from, to, attempt, was, PopStatus::Acked)
    }

    /// `PopReviveService`: the handle's invisible time passed with no
    /// acknowledgement, so its messages still invisible under it are put
    /// into the group's pop retry topic.
    pub(super) fn revive(
        &self,
        cfg: &Config,
        queue: u8,
        from: u8,
        to: u8,
        attempt: u8,
    ) -> Step<Self> {
        let was = [PopStatus::Invisible];
        self.settled(cfg, queue, from, to, attempt, &was, PopStatus::Revived)
    }

    #[allow(clippy::too_many_arguments)]
    fn settled(
        &self,
        cfg: &Config,
        queue: u8,
        from: u8,
        to: u8,
        attempt: u8,
        was: &[PopStatus],
        status: PopStatus,
    ) -> Step<Self> {
        let mut next = *self;
        next.disk
            .pop
            .settle(cfg, usize::from(queue), from, to, attempt, was, status);
        (next != *self).then_some((next, Vec::new()))
    }
}

/// A pop of queue `q` (`PopMessageProcessor`): the next waiting messages
/// (at most `pullBatchSize`, from the pop offset on), or else one message
/// revived into the retry topic; nothing when neither is there.
fn batch(cfg: &Config, table: PopTable, q: usize, end: usize) -> (usize, usize) {
    let status = |o| table.status(cfg, q, o).0;
    let with = |wanted| (0..end).find(|&o| status(o) == wanted);
    match (with(PopStatus::Waiting), with(PopStatus::Revived)) {
        (Some(first), _) => {
            let run = (first..end)
                .take(cfg.sizes.pull_batch)
                .take_while(|&o| status(o) == PopStatus::Waiting)
                .count();
            (first, first + run)
        }
        (None, Some(revived)) => (revived, revived + 1),
        (None, None) => (0, 0),
    }
}

/// Whether a FIFO queue's pop is held back by the queue's last pop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    /// The broker's block (`ConsumerOrderInfoManager.checkBlock`), which a
    /// retry of the pop it holds `reenters`.
    Block {
        /// The attempt of the handle this pop's attempt id names.
        reenters: Option<u8>,
    },
    /// No block: the pop is asked for as a concurrent group's.
    Open,
}

/// A FIFO group's pop of queue `q`: behind the [`Gate`]'s block, nothing
/// while a message of the queue is invisible (its last pop's, neither
/// acknowledged nor expired), unless this pop carries that pop's attempt
/// id (it `reenters` the handle that pop was answered with); else
/// the messages from the first one not acknowledged on, in order (at most
/// `pullBatchSize`), whether never popped, expired or re-entered: an
/// expired message waits at its place, and a re-entering pop starts again
/// at the committed offset, the lost pop's first message.
fn fifo_batch(cfg: &Config, table: PopTable, q: usize, end: usize, gate: Gate) -> (usize, usize) {
    let status = |o| table.status(cfg, q, o).0;
    let blocks = |o| {
        let (status, handle) = table.status(cfg, q, o);
        match gate {
            Gate::Block { reenters } => status == PopStatus::Invisible && Some(handle) != reenters,
            Gate::Open => false,
        }
    };
    if (0..end).any(blocks) {
        return (0, 0);
    }
    let Some(first) = (0..end).find(|&o| status(o) != PopStatus::Acked) else {
        return (0, 0);
    };
    let run = (first..end)
        .take(cfg.sizes.pull_batch)
        .take_while(|&o| status(o) != PopStatus::Acked)
        .count();
    (first, first + run)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{Allocator, Consumption, NetworkKind, ProtocolOptions, Scenario, Variant};
    use crate::protocol::{Machine, Timer};
    use rocketmq_rebalance::strategy_from_name;

    fn config() -> Config {
        config_of(false)
    }

    /// A POP group at the model's smallest with two messages a queue and
    /// pops of two, FIFO or not: the brokers' tests' and the consumers'.
    pub(crate) fn config_of(fifo: bool) -> Config {
        config_with_brokers(fifo, None)
    }

    /// As [`config_of`], with `brokers` brokers if given.
    fn config_with_brokers(fifo: bool, brokers: Option<usize>) -> Config {
        let mut sizes = Scenario::Healthy.layered_sizes(2, false);
        sizes.pull_batch = 2;
        sizes.brokers = brokers.unwrap_or(sizes.brokers);
        let protocol = ProtocolOptions {
            consumption: Consumption::Pop,
            assignment: Allocator::Server,
            fifo,
            ..ProtocolOptions::default()
        };
        let avg = strategy_from_name("AVG").unwrap();
        Config::new_with(
            Scenario::Healthy,
            sizes,
            NetworkKind::Ordered,
            avg.into(),
            protocol,
        )
        .unwrap()
    }

    fn popped(outputs: &[Output]) -> (u8, u8, u8) {
        match outputs {
            [Output::Send(
                _,
                Message::PopResult {
                    from, to, attempt, ..
                },
            )] => (*from, *to, *attempt),
            other => panic!("not a pop result: {other:?}"),
        }
    }

    #[test]
    fn every_message_of_every_queue_has_an_entry_of_its_own() {
        let cfg = config_of(false);
        let messages: Vec<(usize, usize)> = (0..cfg.queues.len())
            .flat_map(|q| (0..cfg.sizes.messages).map(move |o| (q, o)))
            .collect();
        assert!(messages.len() >= 4, "two queues of two messages");
        let statuses = [PopStatus::Invisible, PopStatus::Acked, PopStatus::Revived];
        let mut table = PopTable::default();
        for (i, &(q, o)) in messages.iter().enumerate() {
            table.set(&cfg, q, o, statuses[i % 3], i as u8 % 4);
        }
        for (i, &(q, o)) in messages.iter().enumerate() {
            assert_eq!(table.status(&cfg, q, o), (statuses[i % 3], i as u8 % 4));
        }
    }

    #[test]
    fn a_handle_is_acked_or_revived_once_and_a_revived_message_is_popped_again() {
        let cfg = config();
        let broker = BrokerState::start(&cfg, 0).0;
        let c1 = Peer::Consumer(0);
        let (after, out) = broker.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 2, 1));
        // Nothing waits and nothing is revived: an empty answer.
        let (empty, out) = after.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!((popped(&out), empty), ((0, 0, 0), after));
        // An older handle's acknowledgement changes nothing.
        assert!(after.ack(&cfg, 0, 0, 2, 0).is_none());
        let (revived, _) = after.revive(&cfg, 0, 0, 2, 1).unwrap();
        assert!(revived.ack(&cfg, 0, 0, 2, 1).is_none());
        let (again, out) = revived.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 2));
        let (acked, _) = again.ack(&cfg, 0, 0, 1, 2).unwrap();
        assert_eq!(acked.disk.pop.status(&cfg, 0, 0), (PopStatus::Acked, 2));
        assert_eq!(acked.disk.pop.status(&cfg, 0, 1), (PopStatus::Revived, 1));
    }

    /// A FIFO group's broker, pops of one message, after consumer 0's
    /// pop of queue 0 took its first message under handle 1.
    fn fifo_popped_once() -> (Config, BrokerState) {
        fifo_popped_once_of(config_of(true))
    }

    fn fifo_popped_once_of(mut cfg: Config) -> (Config, BrokerState) {
        cfg.sizes.pull_batch = 1;
        let broker = BrokerState::start(&cfg, 0).0;
        let (first, out) = broker.pop(&cfg, Peer::Consumer(0), 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 1));
        (cfg, first)
    }

    #[test]
    fn a_fifo_queue_is_blocked_while_its_last_pop_is_invisible_and_popped_again_in_order() {
        let (cfg, first) = fifo_popped_once();
        let c1 = Peer::Consumer(0);
        // Blocked: message 1 waits until message 0 is settled.
        let (blocked, out) = first.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!((popped(&out), blocked), ((0, 0, 0), first));
        // Expired, message 0 is popped again before message 1.
        let (expired, _) = first.revive(&cfg, 0, 0, 1, 1).unwrap();
        let (again, out) = expired.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 2));
        let (acked, _) = again.ack(&cfg, 0, 0, 1, 2).unwrap();
        let (_, out) = acked.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!(popped(&out), (1, 2, 1));
    }

    #[test]
    fn a_fifo_handle_past_its_invisible_time_is_acknowledged_until_its_queue_is_popped_again() {
        let (cfg, first) = fifo_popped_once();
        let c1 = Peer::Consumer(0);
        let (expired, _) = first.revive(&cfg, 0, 0, 1, 1).unwrap();
        let (late, _) = expired.ack(&cfg, 0, 0, 1, 1).unwrap();
        assert_eq!(late.disk.pop.status(&cfg, 0, 0), (PopStatus::Acked, 1));
        let (again, out) = expired.pop(&cfg, c1, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 2));
        assert!(again.ack(&cfg, 0, 0, 1, 1).is_none());
    }

    #[test]
    fn a_retry_with_the_lost_pops_attempt_id_re_enters_its_block_and_no_other_pop_does() {
        let (cfg, first) = fifo_popped_once();
        let c1 = Peer::Consumer(0);
        // Another handle's retry is blocked like a new attempt.
        for other in [None, Some(0), Some(2)] {
            let (blocked, out) = first.pop(&cfg, c1, 0, false, other, 0);
            assert_eq!((popped(&out), blocked), ((0, 0, 0), first), "{other:?}");
        }
        // The lost pop's retry pops its message again, under a new handle,
        // so the lost handle's acknowledgement no longer counts.
        let (again, out) = first.pop(&cfg, c1, 0, false, Some(1), 0);
        assert_eq!(popped(&out), (0, 1, 2));
        assert!(again.ack(&cfg, 0, 0, 1, 1).is_none());
        assert!(again.ack(&cfg, 0, 0, 1, 2).is_some());
        // A non-FIFO group has no block: a retry pops what a new pop would.
        let cfg = config_of(false);
        let broker = BrokerState::start(&cfg, 0).0;
        let (popped_once, _) = broker.pop(&cfg, c1, 0, false, None, 0);
        let (_, out) = popped_once.pop(&cfg, c1, 0, false, Some(1), 0);
        assert_eq!(popped(&out), (0, 0, 0));
    }

    #[test]
    fn a_proxy_without_the_group_s_config_pops_a_blocked_fifo_queue_until_it_reloads() {
        let (mut cfg, first) = fifo_popped_once_of(config_with_brokers(true, Some(1)));
        assert_eq!(cfg.broker_names.len(), 1, "the cluster's only broker");
        let c2 = Peer::Consumer(1);
        let (restarted, out) = first.stop(&cfg, first.disk, false);
        assert!(restarted.proxy_lost_group);
        assert!(out.contains(&Output::Arm(Timer::ReloadGroupConfig)));
        // Popped as a concurrent group's: the running message again, under
        // a new handle, so the first handle's acknowledgement no longer
        // counts.
        let (again, out) = restarted.pop(&cfg, c2, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 2));
        assert!(again.ack(&cfg, 0, 0, 1, 1).is_none());
        // Reloaded, the proxy blocks the queue again.
        let (reloaded, _) = restarted
            .on_timer(&cfg, 0, &Timer::ReloadGroupConfig)
            .expect("the config is loaded again");
        assert!(!reloaded.proxy_lost_group);
        let (blocked, _) = reloaded.pop(&cfg, c2, 0, false, None, 0);
        assert_eq!(blocked, reloaded);
        assert!(reloaded
            .on_timer(&cfg, 0, &Timer::ReloadGroupConfig)
            .is_none());
        // Stopped, the broker cannot be asked: no reload yet.
        let (stopped, _) = first.stop(&cfg, first.disk, true);
        assert!(stopped
            .on_timer(&cfg, 0, &Timer::ReloadGroupConfig)
            .is_none());
        // The remedy: a proxy that keeps the config it loaded last.
        cfg.protocol.variants = cfg.protocol.variants.with(Variant::ProxyKeepsGroupConfig);
        let (kept, out) = first.stop(&cfg, first.disk, false);
        assert!(!kept.proxy_lost_group);
        assert!(!out.contains(&Output::Arm(Timer::ReloadGroupConfig)));
        // With another broker, the proxy's reload asks that one.
        let (cfg, first) = fifo_popped_once();
        assert!(cfg.broker_names.len() > 1);
        assert!(!first.stop(&cfg, first.disk, false).0.proxy_lost_group);
    }

    #[test]
    fn a_crash_unblocks_a_fifo_queue_and_its_handle_still_counts_until_it_is_popped_again() {
        let (cfg, first) = fifo_popped_once();
        let c2 = Peer::Consumer(1);
        let (blocked, _) = first.pop(&cfg, c2, 0, false, None, 0);
        assert_eq!(blocked, first, "blocked before the crash");
        let crashed = BrokerState {
            disk: first.disk.crashed(&cfg),
            ..first
        };
        assert_eq!(crashed.disk.pop.status(&cfg, 0, 0), (PopStatus::Revived, 1));
        assert_eq!(crashed.disk.pop.status(&cfg, 0, 1), (PopStatus::Waiting, 0));
        let (late, _) = crashed
            .ack(&cfg, 0, 0, 1, 1)
            .expect("no order info: it commits");
        assert_eq!(late.disk.pop.status(&cfg, 0, 0), (PopStatus::Acked, 1));
        let (again, out) = crashed.pop(&cfg, c2, 0, false, None, 0);
        assert_eq!(popped(&out), (0, 1, 2));
        assert!(
            again.ack(&cfg, 0, 0, 1, 1).is_none(),
            "popped again: its pop time differs"
        );
    }
}
