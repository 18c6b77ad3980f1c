//! POP consumption on the consumer (`DefaultMQPushConsumerImpl.popMessage`,
//! `ConsumeMessagePopConcurrentlyService`): it pops the queues its
//! assignment gives it (every queue), consumes each batch and
//! acknowledges it. A batch it does not acknowledge (its queue dropped,
//! its listener failed or too slow, the process gone, the ack lost)
//! keeps its messages invisible until their invisible time passes, when
//! the broker revives them: the consumer sends the broker the marker of
//! that moment ([`Message::InvisibleTimeExpired`]).

use super::{ConsumerState, Phase};
use crate::config::{Config, Fault, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, Timer};
use crate::protocol::process_queue::ProcessQueue;

impl ConsumerState {
    /// `popMessage` of queue `q` it was assigned, when no pop of it is in
    /// flight and no batch of it runs.
    pub(super) fn pop(&self, cfg: &Config, me: usize, q: usize) -> Step<Self> {
        let pq = &self.queues[q];
        let broker = cfg.broker_of(q);
        let poppable = self.owned & 1 << q != 0
            && !pq.pulling
            && !pq.running()
            && self.target_set(cfg, me) & 1 << broker != 0;
        if !poppable {
            return None;
        }
        let mut next = *self;
        next.queues[q].pulling = true;
        let pop = Message::PopMessage {
            queue: q as u8,
            generation: pq.generation,
            epoch: self.epoch(broker),
            reenters: pq.reenters,
        };
        let outputs = vec![
            Output::Arm(Timer::Pull { queue: q as u8 }),
            Output::Send(Peer::Broker(broker), pop),
        ];
        Some((next, outputs))
    }

    /// The broker's answer to a pop: a batch for the process queue that
    /// asked, if it still holds the queue. A batch nobody consumes (the
    /// queue dropped or added again meanwhile, the connection it was asked
    /// on closed, the process gone, the answer lost) stays invisible until
    /// its invisible time passes. An answer lost on the way
    /// ([`Fault::LosePopAnswer`]) is a receive that timed out: the process
    /// queue pops again, a FIFO group's gRPC client with the same attempt
    /// id (`ProcessQueueImpl` keeps it on `DEADLINE_EXCEEDED`), unless it
    /// predates attempt ids ([`Variant::FifoPopWithoutAttemptId`]). Any
    /// other answer ends the attempt: the next pop has a new id.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn popped(
        &self,
        cfg: &Config,
        broker: u8,
        q: usize,
        from: u8,
        to: u8,
        attempt: u8,
        generation: bool,
        epoch: u8,
    ) -> Step<Self> {
        let asked = self.asked(broker, q, generation, epoch);
        let mut next = *self;
        let mut outputs = Vec::new();
        if asked {
            next.queues[q].pulling = false;
            next.queues[q].reenters = None;
        }
        if self.loses_answer(asked, from, to) {
            next.faults.remove(Fault::LosePopAnswer);
            let same_attempt = cfg.protocol.fifo && !cfg.has(Variant::FifoPopWithoutAttemptId);
            next.queues[q].reenters = same_attempt.then_some(attempt);
            outputs.push(expiry(cfg, q, [from, to, attempt], false));
        } else if asked && self.owned & 1 << q != 0 {
            next.queues[q] = ProcessQueue {
                attempt,
                ..next.queues[q].consuming(from, to)
            };
        } else if from < to {
            outputs.push(expiry(cfg, q, [from, to, attempt], false));
        }
        (next != *self || !outputs.is_empty()).then_some((next, outputs))
    }

    /// Whether the answer `[from, to)` to a pop it `asked` for is lost on
    /// the way ([`Fault::LosePopAnswer`]): only one that brings messages.
    pub fn loses_answer(&self, asked: bool, from: u8, to: u8) -> bool {
        asked && from < to && self.faults.contains(Fault::LosePopAnswer)
    }

    /// Whether an answer to a pop of queue `q` of `broker`, for process
    /// queue `generation` on connection `epoch`, is one it waits for.
    pub fn asked(&self, broker: u8, q: usize, generation: bool, epoch: u8) -> bool {
        let pq = &self.queues[q];
        self.phase == Phase::Running
            && pq.pulling
            && pq.generation == generation
            && self.epoch(broker) == epoch
    }

    /// `processConsumeResult` of queue `q`'s batch, consumed: acknowledged
    /// (`ackAsync`), unless it outlasted its invisible time or its queue
    /// was dropped meanwhile (the result is then not processed), its
    /// listener failed (`changePopInvisibleTime` hides it for a while: it
    /// comes back as an expiry would bring it) or the environment loses
    /// the acknowledgement.
    pub(super) fn acknowledge(
        &mut self,
        cfg: &Config,
        me: usize,
        q: usize,
        failed: bool,
    ) -> Vec<Output> {
        let pq = self.queues[q];
        self.queues[q] = pq.finished();
        if pq.pop_timed_out {
            return Vec::new();
        }
        let broker = cfg.broker_of(q);
        let unacknowledged =
            failed || self.owned & 1 << q == 0 || self.target_set(cfg, me) & 1 << broker == 0;
        if unacknowledged {
            return vec![expiry(cfg, q, [pq.from, pq.to, pq.attempt], false)];
        }
        if self.faults.contains(Fault::LoseAck) {
            self.faults.remove(Fault::LoseAck);
            return vec![expiry(cfg, q, [pq.from, pq.to, pq.attempt], false)];
        }
        let ack = Message::AckMessage {
            queue: q as u8,
            from: pq.from,
            to: pq.to,
            attempt: pq.attempt,
            epoch: self.epoch(broker),
        };
        vec![Output::Send(Peer::Broker(broker), ack)]
    }

    /// Queue `q` newly assigned: a process queue of the next generation,
    /// which pops with no offset to read (a running batch of an earlier
    /// hold goes on).
    pub(super) fn start_popping(&mut self, q: usize) {
        let fresh = ProcessQueue::with_batch_of(ProcessQueue::default(), self.queues[q]);
        self.queues[q] = ProcessQueue {
            generation: !fresh.generation,
            ..fresh
        };
    }

    /// Every batch it is running outlasts its invisible time: the broker
    /// revives their messages while they run. Their results settle
    /// nothing: the remoting client drops them (`isPopTimeout`), and the
    /// proxy answers the gRPC client's acknowledgement of an expired handle
    /// `INVALID_RECEIPT_HANDLE` without asking the broker. Nothing happens
    /// when none runs.
    pub(super) fn slow_batches(&self, cfg: &Config) -> Step<Self> {
        let outputs = self.handles_expire(cfg, true);
        let mut next = *self;
        for pq in next.queues.iter_mut().filter(|pq| pq.running()) {
            pq.pop_timed_out = true;
        }
        (!outputs.is_empty()).then_some((next, outputs))
    }

    /// The expiry of the handle of every batch it is running: for a
    /// process that dies (the moment to come), or a batch too slow (the
    /// moment `passed` already).
    pub(super) fn handles_expire(&self, cfg: &Config, passed: bool) -> Vec<Output> {
        if !cfg.pops() {
            return Vec::new();
        }
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, pq)| pq.running())
            .map(|(q, pq)| expiry(cfg, q, [pq.from, pq.to, pq.attempt], passed))
            .collect()
    }
}

/// The moment the `handle` (`[from, to)` of queue `q`, its attempt)
/// expires unacknowledged, sent to the queue's broker, whose revive
/// service then puts the messages into the retry topic; a moment that has
/// `passed` already, or one to come.
pub(super) fn expiry(cfg: &Config, q: usize, handle: [u8; 3], passed: bool) -> Output {
    let [from, to, attempt] = handle;
    let marker = Message::InvisibleTimeExpired {
        queue: q as u8,
        from,
        to,
        attempt,
        passed,
    };
    Output::Send(Peer::Broker(cfg.broker_of(q)), marker)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PopClient;
    use crate::protocol::broker::pop::tests::config_of;
    use crate::protocol::Machine;

    /// Consumer 0 of a group that runs from the start, with the queues it
    /// was given, and one of them.
    fn running() -> (Config, ConsumerState, usize) {
        running_of(false)
    }

    /// As [`running`], in a FIFO group or not.
    fn running_of(fifo: bool) -> (Config, ConsumerState, usize) {
        let mut cfg = config_of(fifo);
        cfg.consumers[0].faults.remove(crate::config::Fault::Join);
        let c = ConsumerState::start(&cfg, 0).0;
        let q = crate::config::members_of(c.owned).next().expect("a queue");
        (cfg, c, q)
    }

    #[test]
    fn a_pop_answered_to_a_queue_held_before_is_not_consumed_when_it_is_held_again() {
        let (cfg, c, q) = running();
        let broker = cfg.broker_of(q);
        let (asked, _) = c.pop(&cfg, 0, q).expect("it pops");
        let old = asked.queues[q].generation;
        // Given away and back while that pop is in flight, it pops again.
        let mut again = asked;
        again.queues[q] = ProcessQueue::with_batch_of(ProcessQueue::default(), asked.queues[q]);
        again.start_popping(q);
        let (again, _) = again.pop(&cfg, 0, q).expect("it pops again");
        let epoch = again.epoch(broker);
        let (next, out) = again
            .popped(&cfg, broker, q, 0, 2, 1, old, epoch)
            .expect("the answer is seen");
        assert!(
            !next.queues[q].running(),
            "the old answer's batch is not run"
        );
        assert_eq!(
            out,
            vec![expiry(&cfg, q, [0, 2, 1], false)],
            "it stays invisible"
        );
        // The answer to the pop of this holding is consumed.
        let (next, _) = again
            .popped(&cfg, broker, q, 0, 2, 1, !old, epoch)
            .expect("the answer is seen");
        assert!(next.queues[q].running());
    }

    #[test]
    fn a_queue_of_a_broker_it_cannot_reach_is_not_popped() {
        let (mut cfg, c, q) = running();
        assert!(c.pop(&cfg, 0, q).is_some());
        cfg.consumers[0].unreachable = 1 << cfg.broker_of(q);
        assert_eq!(c.pop(&cfg, 0, q), None);
    }

    #[test]
    fn a_batch_of_a_queue_dropped_while_it_ran_is_not_acknowledged() {
        let (cfg, c, q) = running();
        let mut ran = c;
        ran.queues[q] = ran.queues[q].consuming(0, 2);
        let mut kept = ran;
        let ack = kept.acknowledge(&cfg, 0, q, false);
        assert!(
            matches!(ack[..], [Output::Send(_, Message::AckMessage { .. })]),
            "{ack:?}"
        );
        let mut dropped = ran;
        dropped.owned &= !(1 << q);
        let out = dropped.acknowledge(&cfg, 0, q, false);
        assert_eq!(out, vec![expiry(&cfg, q, [0, 2, 0], false)]);
    }

    #[test]
    fn a_lost_pop_answer_is_retried_with_its_attempt_id_by_the_grpc_fifo_client_alone() {
        for (fifo, variant, reenters) in [
            (false, false, None),
            (true, false, Some(1)),
            (true, true, None),
        ] {
            let (mut cfg, c, q) = running_of(fifo);
            if variant {
                let set = crate::config::VariantSet::EMPTY.with(Variant::FifoPopWithoutAttemptId);
                cfg = cfg.with_variants(set).expect("a FIFO group");
            }
            let broker = cfg.broker_of(q);
            let (mut asked, _) = c.pop(&cfg, 0, q).expect("it pops");
            asked.faults.insert(Fault::LosePopAnswer);
            let epoch = asked.epoch(broker);
            let generation = asked.queues[q].generation;
            // An empty answer is not the one the fault loses.
            let (empty, _) = asked
                .popped(&cfg, broker, q, 0, 0, 0, generation, epoch)
                .expect("seen");
            assert!(empty.faults.contains(Fault::LosePopAnswer));
            let (lost, out) = asked
                .popped(&cfg, broker, q, 0, 2, 1, generation, epoch)
                .expect("seen");
            assert!(!lost.faults.contains(Fault::LosePopAnswer));
            assert!(!lost.queues[q].running() && !lost.queues[q].pulling);
            assert_eq!(
                lost.queues[q].reenters, reenters,
                "fifo {fifo}, variant {variant}"
            );
            assert_eq!(
                out,
                vec![expiry(&cfg, q, [0, 2, 1], false)],
                "it stays invisible"
            );
            let (retry, out) = lost.pop(&cfg, 0, q).expect("it pops again");
            assert!(
                out.iter().any(|o| matches!(o,
                    Output::Send(_, Message::PopMessage { reenters: r, .. }) if *r == reenters)),
                "{out:?}"
            );
            // Any answer, or a failure, ends the attempt.
            let (answered, _) = retry
                .popped(&cfg, broker, q, 0, 0, 0, generation, epoch)
                .expect("seen");
            assert_eq!(answered.queues[q].reenters, None);
            let mut failed = retry;
            failed.requests_lost(&cfg, 0, broker);
            assert_eq!(failed.queues[q].reenters, None);
        }
    }

    /// The gRPC client's shutdown (a FIFO group's, or `--pop-client
    /// grpc`) waits for its listener and acknowledges the batch; the
    /// remoting client's drops it, and its handle expires.
    #[test]
    fn a_grpc_shutdown_acknowledges_its_running_batch_and_a_remoting_one_does_not() {
        for (fifo, client) in [
            (false, PopClient::Remoting),
            (false, PopClient::Grpc),
            (true, PopClient::Grpc),
        ] {
            let (mut cfg, c, q) = running_of(fifo);
            cfg.protocol.pop_client = client;
            let grpc = client == PopClient::Grpc;
            let mut ran = c;
            ran.queues[q] = ran.queues[q].consuming(0, 2);
            let (left, out) = ran.shutdown(&cfg, 0);
            let acked = out
                .iter()
                .any(|o| matches!(o, Output::Send(_, Message::AckMessage { .. })));
            assert_eq!(acked, grpc, "fifo {fifo}, {client:?}: {out:?}");
            assert_eq!(left.queues[q].running(), !grpc, "fifo {fifo}, {client:?}");
        }
    }

    #[test]
    fn a_batch_past_its_invisible_time_settles_nothing_in_either_client() {
        for fifo in [false, true] {
            let (cfg, c, q) = running_of(fifo);
            let mut ran = c;
            ran.queues[q] = ran.queues[q].consuming(0, 2);
            let (mut slow, expired) = ran.slow_batches(&cfg).expect("a batch runs");
            assert_eq!(expired, vec![expiry(&cfg, q, [0, 2, 0], true)]);
            let ack = slow.acknowledge(&cfg, 0, q, false);
            assert_eq!(ack, Vec::new(), "fifo {fifo}");
            assert!(!slow.queues[q].running() && !slow.queues[q].pop_timed_out);
        }
    }
}
