//! Messages and offsets, when messages are modelled: the consumer pulls
//! batches of its queues, its application consumes them, and it reads,
//! persists and commits each queue's offset (`ProcessQueue`,
//! `ConsumeMessageConcurrentlyService`, `RemoteBrokerOffsetStore`).

use super::ConsumerState;
use crate::config::{
    members_of, Call, Commit, Config, ConsumeFrom, Fault, QueueSet, Variant, MAX_BROKERS,
};
use crate::protocol::message::{Message, Output, Peer, Step, Timer, NO_OFFSET};
use crate::protocol::process_queue::{ProcessQueue, SendBack};

impl ConsumerState {
    /// `ConsumeMessageConcurrentlyService` on a pulled batch: the next
    /// messages of an owned, started queue whose broker it reaches (at most
    /// `pullBatchSize`), when no batch runs and, with synchronous commit,
    /// the last one is acknowledged. Orderly
    /// (`ConsumeMessageOrderlyService.ConsumeRequest`), only under a lock it
    /// trusts; otherwise it locks the queue again (`lockOneMQ`). With pull
    /// requests it asks the broker (`PULL_MESSAGE`, carrying its offset in
    /// memory when above 0) and the answer starts the batch
    /// ([`ConsumerState::pulled`]).
    pub(super) fn pull(&self, cfg: &Config, me: usize, q: usize) -> Step<Self> {
        if cfg.pops() {
            return self.pop(cfg, me, q);
        }
        let pq = &self.queues[q];
        // A log that grows during the run may have more than its broker
        // answered last: it is asked until it is full.
        let end = cfg.log_capacity(q);
        let pullable = self.owned & 1 << q != 0
            && !pq.reading_offset
            && !pq.pulling
            && !pq.running()
            && !pq.awaiting_ack
            && pq.cursor < end
            && self.target_set(cfg, me) & 1 << cfg.broker_of(q) != 0
            // Stalled, its pulls wait for the round that finds them expired.
            && !self.faults.contains(Fault::StallPulls);
        if !pullable {
            return None;
        }
        if !self.may_consume(cfg, q) {
            return self.lock_one(cfg, me, q);
        }
        let mut next = *self;
        let mut outputs = vec![Output::Arm(Timer::Pull { queue: q as u8 })];
        if cfg.pulls_by_request(q) {
            let broker = cfg.broker_of(q);
            outputs.push(Output::Send(
                Peer::Broker(broker),
                Message::PullMessage {
                    queue: q as u8,
                    offset: pq.cursor,
                    commit: if pq.cursor > 0
                        && progress_reported(cfg)
                        && self.unreported & 1 << q == 0
                    {
                        pq.cursor
                    } else {
                        NO_OFFSET
                    },
                    generation: pq.generation,
                    epoch: self.epoch(broker),
                },
            ));
            next.queues[q].pulling = true;
        } else {
            let to = (pq.cursor + cfg.sizes.pull_batch as u8).min(end);
            next.queues[q] = pq.consuming(pq.cursor, to);
        }
        Some((next, outputs))
    }

    /// The broker's answer to a pull: applied to the process queue that
    /// asked, which starts consuming `[from, to)` if it still holds the
    /// queue (orderly, under a lock it trusts); an answer to a process
    /// queue dropped meanwhile is discarded (`PullCallback` finds it
    /// dropped), and one to a queue dropped and added again goes to a
    /// process queue of another generation, which ignores it.
    pub(super) fn pulled(
        &self,
        cfg: &Config,
        q: usize,
        from: u8,
        to: u8,
        generation: bool,
    ) -> Step<Self> {
        let pq = self.queues[q];
        if !pq.pulling || pq.generation != generation {
            return None;
        }
        let mut next = *self;
        next.queues[q].pulling = false;
        if self.owned & 1 << q != 0 && self.may_consume(cfg, q) {
            next.queues[q] = next.queues[q].consuming(from, to);
        }
        Some((next, Vec::new()))
    }

    /// Calls in flight to `broker` that will get no answer (its connection
    /// closed, it refused the connection, or the route dropped it): each
    /// fails at once for its caller, with Java's own retry. A pull is tried
    /// again later (`executePullRequestLater`, 3 s); an offset read leaves
    /// its queue out of the table until the next round
    /// (`computePullFromWhereWithException` fails, the queue is not added
    /// and the round is not balanced); a synchronous commit stops waiting
    /// (its offset stays in memory for the next persist); a send-back to
    /// the queue's broker goes through the client's producer instead, and
    /// a send through the producer that fails leaves the batch to be
    /// consumed again from memory.
    pub(super) fn requests_lost(&mut self, cfg: &Config, me: usize, broker: u8) -> Vec<Output> {
        let fails = |call| cfg.protocol.calls_fail.contains(call);
        let mut outputs = Vec::new();
        for q in 0..cfg.queues.len() {
            let pq = self.queues[q];
            if cfg.broker_of(q) == broker {
                if (cfg.pulls_by_request(q) || cfg.pops()) && fails(Call::Pull) {
                    // A failure other than a timeout: the gRPC client's
                    // next pop has a new attempt id.
                    self.queues[q].pulling = false;
                    self.queues[q].reenters = None;
                }
                if pq.reading_offset && fails(Call::OffsetRead) {
                    outputs.extend(self.offset_read_failed(cfg, me, q));
                }
                if pq.awaiting_ack && fails(Call::Commit) {
                    self.queues[q].awaiting_ack = false;
                }
                if pq.send_back == SendBack::ToBroker && fails(Call::SendBack) {
                    outputs.extend(self.send_by_producer(cfg, me, q, broker));
                }
            }
            if pq.send_back == SendBack::ByProducer(broker) && fails(Call::SendBack) {
                self.queues[q] = pq.again_from_memory();
            }
        }
        outputs
    }

    /// Its pulls stall over 120 s: recorded for its next round, which finds
    /// every queue's pulls expired, and owed, as its periodic rebalance
    /// (every 20 s) runs again once the stall is over.
    pub(super) fn stall_pulls(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut next = Self {
            faults: self.faults.with(Fault::StallPulls),
            ..*self
        };
        let outputs = self.retry_later(&mut next, cfg, me);
        (next, outputs)
    }

    /// `computePullFromWhereWithException` fails (its call failed, or the
    /// environment made it fail): queue `q` is not added, and the round,
    /// not balanced, runs again.
    fn offset_read_failed(&mut self, cfg: &Config, me: usize, q: usize) -> Vec<Output> {
        let before = *self;
        self.owned &= !(1 << q);
        // A queue whose offset is being read has pulled nothing and awaits
        // no acknowledgement: only a running batch is kept.
        self.queues[q].reading_offset = false;
        self.due |= 1 << cfg.queues[q].topic;
        let mut outputs = before.retry_later(self, cfg, me);
        outputs.extend(self.schedule(cfg, me));
        outputs
    }

    /// `sendMessageBackAsNormalMessage`: the batch of queue `q`, whose
    /// send-back to `failed` (its broker) failed, is sent to the group's
    /// retry topic by the client's internal producer, which picks a broker
    /// of the retry topic's route (every broker the group heartbeats) in
    /// turn: the first one it reaches after `failed`, `failed` itself on
    /// its next connection when it is the only one. It reaches none: the
    /// batch is consumed again from memory.
    fn send_by_producer(&mut self, cfg: &Config, me: usize, q: usize, failed: u8) -> Vec<Output> {
        let pq = self.queues[q];
        let targets = self.target_set(cfg, me);
        let next_broker = (1..=MAX_BROKERS as u8)
            .map(|i| (failed + i) % MAX_BROKERS as u8)
            .find(|&b| targets & 1 << b != 0);
        let Some(broker) = next_broker else {
            self.queues[q] = pq.again_from_memory();
            return Vec::new();
        };
        self.queues[q].send_back = SendBack::ByProducer(broker);
        vec![Output::Send(
            Peer::Broker(broker),
            Message::SendMessageBack {
                queue: q as u8,
                from: pq.from,
                to: pq.to,
                epoch: self.epoch(broker),
            },
        )]
    }

    /// The application finishes the running batch: its messages were
    /// delivered. The queue's offset moves on unless it was dropped
    /// meanwhile (`processConsumeResult` checks `isDropped`); with
    /// synchronous commit it is committed before the next pull.
    ///
    /// A batch that fails (a consume failure) was delivered too, and
    /// `processConsumeResult` keeps its offset: orderly
    /// (`SUSPEND_CURRENT_QUEUE_A_MOMENT`) it is consumed again later;
    /// concurrently (`RECONSUME_LATER`) it is sent back to the queue's
    /// broker (`sendMessageBack`), and consumed again later if the broker
    /// cannot be reached. A dropped queue's result is not processed.
    pub(super) fn done(&self, cfg: &Config, me: usize, q: usize) -> Step<Self> {
        let pq = self.queues[q];
        if !pq.running() || pq.sending_back() {
            return None;
        }
        let mut next = *self;
        let mut outputs = vec![
            Output::Delivered {
                queue: q as u8,
                from: pq.from,
                to: pq.to,
            },
            Output::Arm(Timer::Done { queue: q as u8 }),
        ];
        let owned = self.owned & 1 << q != 0;
        if cfg.pops() {
            let failed = self.faults.contains(Fault::FailConsume);
            next.faults.remove(Fault::FailConsume);
            outputs.extend(next.acknowledge(cfg, me, q, failed));
            return Some((next, outputs));
        }
        if self.faults.contains(Fault::FailConsume) {
            next.faults.remove(Fault::FailConsume);
            // A dropped queue's result is not looked at: its batch ends as
            // a consumed one would.
            if owned || pq.dropped {
                outputs.extend(next.failed(cfg, me, q));
                return Some((next, outputs));
            }
        }
        outputs.extend(next.finish(cfg, q));
        Some((next, outputs))
    }

    /// `processConsumeResult` of a batch whose listener failed: orderly,
    /// the batch is consumed again later; concurrently, it is sent back to
    /// the queue's broker (`consumerSendMessageBack`) if the consumer
    /// reaches it, else through its producer at once (the broker's address
    /// is not found, which fails the call).
    fn failed(&mut self, cfg: &Config, me: usize, q: usize) -> Vec<Output> {
        let pq = self.queues[q];
        let broker = cfg.broker_of(q);
        if cfg.orderly().is_some() {
            self.queues[q] = pq.again();
            return Vec::new();
        }
        if self.target_set(cfg, me) & 1 << broker == 0 {
            return self.send_by_producer(cfg, me, q, broker);
        }
        self.queues[q].send_back = SendBack::ToBroker;
        vec![Output::Send(
            Peer::Broker(broker),
            Message::SendMessageBack {
                queue: q as u8,
                from: pq.from,
                to: pq.to,
                epoch: self.epoch(broker),
            },
        )]
    }

    /// A broker stored the batch sent back in the retry topic: the batch is
    /// done with, as if consumed. The answer counts from the broker the
    /// batch was sent to.
    pub(super) fn sent_back(&self, cfg: &Config, q: usize, broker: u8) -> Step<Self> {
        let sent_to = match self.queues[q].send_back {
            SendBack::ToBroker => cfg.broker_of(q),
            SendBack::ByProducer(b) => b,
            SendBack::No | SendBack::Later => return None,
        };
        (sent_to == broker).then(|| {
            let mut next = *self;
            let outputs = next.finish(cfg, q);
            // rocketmq-rust up to v0.7.0 removed the batch from its process
            // queue only when a send-back failed: the queue's offset stays
            // at it while the consumer holds the queue.
            if cfg.has(Variant::RustSendbackOffsetStuck) && self.owned & 1 << q != 0 {
                next.unreported |= 1 << q;
            }
            (next, outputs)
        })
    }

    /// Queue `q`'s batch is done with: the offset moves past it, unless the
    /// queue was dropped meanwhile.
    /// A shutdown that waits for the batches its listeners run
    /// (`shutdown-awaits-batches`: `awaitTerminationMillisWhenShutdown`
    /// longer than any batch) lets each end as consumed, its offset moved
    /// past it, before it goes on. The wait is one step: while it lasts
    /// the consumer still holds its queues, its locks and its registration,
    /// so nothing another actor does in the meantime can differ from doing
    /// it before. A batch being sent back waits for its broker's answer,
    /// which the shutdown does not.
    ///
    /// The gRPC client (a FIFO group's, or `--pop-client grpc`) always
    /// waits: `PushConsumerImpl.shutDown` stops receiving, then awaits its
    /// consumption executor with no time limit, each message acknowledged
    /// as its listener returns, before it closes.
    pub(super) fn batches_awaited(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        let mut next = *self;
        let mut outputs = Vec::new();
        if !cfg.has(Variant::ShutdownAwaitsBatches) && !cfg.protocol.grpc_clients() {
            return (next, outputs);
        }
        for (q, pq) in self.queues.iter().enumerate() {
            if pq.running() && !pq.sending_back() {
                outputs.push(Output::Delivered {
                    queue: q as u8,
                    from: pq.from,
                    to: pq.to,
                });
                if cfg.pops() {
                    outputs.extend(next.acknowledge(cfg, me, q, false));
                } else {
                    outputs.extend(next.finish(cfg, q));
                }
            }
        }
        (next, outputs)
    }

    fn finish(&mut self, cfg: &Config, q: usize) -> Vec<Output> {
        let pq = self.queues[q];
        let mut outputs = Vec::new();
        let owned = self.owned & 1 << q != 0;
        // Go's `update` puts the queue's offset back in its table.
        if cfg.has(Variant::GoPersistWipesOffsets) {
            self.unreported &= !(1 << q);
        }
        // Orderly, a dropped queue stays in the table until unlocked.
        self.queues[q] = if owned || pq.dropped {
            pq.finished()
        } else {
            ProcessQueue::with_batch_of(ProcessQueue::default(), pq.finished())
        };
        if owned
            && !pq.reading_offset
            && cfg.protocol.commit == Commit::Sync
            && progress_reported(cfg)
        {
            let broker = cfg.broker_of(q);
            outputs.push(Output::Send(
                Peer::Broker(broker),
                Message::CommitOffset {
                    queue: q as u8,
                    offset: pq.cursor,
                    epoch: self.epoch(broker),
                },
            ));
            self.queues[q].awaiting_ack = true;
        }
        outputs
    }

    /// The Go client's drop (`go-persist-wipes-offsets`): its persist of the
    /// `removed` queues walks the whole offset table and deletes every
    /// other entry, so the `kept` queues' progress since the last persist
    /// is reported to no broker until their next batch ends. (Go persists
    /// one removed queue at a time, each erasing the next; here every
    /// removed queue's offset is sent.)
    /// A queue that leaves takes its unreported progress with it.
    pub(super) fn erase_offsets(&mut self, cfg: &Config, removed: QueueSet, kept: QueueSet) {
        if cfg.has(Variant::GoPersistWipesOffsets) && removed != 0 {
            self.unreported |= kept as u8;
        }
        self.unreported &= kept as u8;
    }

    /// `CommitAck`: the synchronous commit of queue `q`'s last batch is
    /// acknowledged, and its next pull may go.
    pub(super) fn commit_acknowledged(&self, q: usize) -> Step<Self> {
        self.queues[q].awaiting_ack.then(|| {
            let mut next = *self;
            next.queues[q].awaiting_ack = false;
            (next, Vec::new())
        })
    }

    /// `MQClientInstance.persistAllConsumerOffset`, every 5 s, one-way: the
    /// offset of every queue it consumes. One may be lost.
    pub(super) fn persist(&self, cfg: &Config, me: usize) -> (Self, Vec<Output>) {
        if self.faults.contains(Fault::LosePersist) {
            let next = Self {
                faults: self.faults.without(Fault::LosePersist),
                ..*self
            };
            return (next, vec![Output::Arm(Timer::Persist)]);
        }
        let mut outputs: Vec<Output> = self
            .offset_updates(cfg, me)
            .map(|(broker, msg)| Output::SendPeriodic(broker, msg))
            .collect();
        outputs.push(Output::Arm(Timer::Persist));
        (*self, outputs)
    }

    /// The offset updates of every queue it consumes
    /// ([`ConsumerState::offset_update`]).
    pub(super) fn offset_updates<'a>(
        &'a self,
        cfg: &'a Config,
        me: usize,
    ) -> impl Iterator<Item = (Peer, Message)> + 'a {
        members_of(self.owned).filter_map(move |q| self.offset_update(cfg, me, q))
    }

    /// Whether its shutdown's `persistConsumerOffset` is lost: one-way,
    /// like the periodic persist, it is when the environment loses the next
    /// persist and there is an offset to send.
    pub fn loses_persist_on_shutdown(&self, cfg: &Config, me: usize) -> bool {
        self.faults.contains(Fault::LosePersist) && self.offset_updates(cfg, me).next().is_some()
    }

    /// The offset update of queue `q` it would send: the lowest offset still
    /// in flight, to the queue's broker if it talks to it; none for a queue
    /// whose offset it has not read yet.
    pub(super) fn offset_update(
        &self,
        cfg: &Config,
        me: usize,
        q: usize,
    ) -> Option<(Peer, Message)> {
        let pq = &self.queues[q];
        let broker = cfg.broker_of(q);
        (cfg.messages()
            && !cfg.pops()
            && !pq.reading_offset
            && self.unreported & 1 << q == 0
            && self.target_set(cfg, me) & 1 << broker != 0
            && progress_reported(cfg))
        .then(|| {
            let msg = Message::UpdateOffset {
                queue: q as u8,
                offset: pq.local_offset(),
                epoch: self.epoch(broker),
            };
            (Peer::Broker(broker), msg)
        })
    }

    /// The broker's answer to an offset read
    /// (`computePullFromWhereWithException`): the stored offset, else the
    /// `ConsumeFromWhere` rule. A read that fails leaves the queue out of
    /// this round.
    pub(super) fn offset_read(
        &self,
        cfg: &Config,
        me: usize,
        q: usize,
        stored: u8,
        in_memory: bool,
    ) -> Step<Self> {
        let pq = self.queues[q];
        if self.owned & 1 << q == 0 || !pq.reading_offset {
            return None;
        }
        let mut next = *self;
        let (stored, in_memory) = if self.faults.contains(Fault::FailOffsetRead) {
            next.faults.remove(Fault::FailOffsetRead);
            if !cfg.has(Variant::OffsetErrorAsNewGroup) {
                let outputs = next.offset_read_failed(cfg, me, q);
                return Some((next, outputs));
            }
            // RocketMQ 4.x read any broker error as no offset stored; no
            // answer came, so none said the first message is in memory.
            (NO_OFFSET, false)
        } else if stored == NO_OFFSET && !in_memory && cfg.has(Variant::GoOffsetNotFoundIsError) {
            // The Go client v2.1.1 took the broker's "not found" for an
            // error: the queue stays out of the table until the next
            // periodic round, which fails the same way, for ever.
            next.owned &= !(1 << q);
            next.queues[q].reading_offset = false;
            let outputs = self.retry_later(&mut next, cfg, me);
            return Some((next, outputs));
        } else {
            (stored, in_memory)
        };
        let start = match (stored, cfg.protocol.consume_from) {
            // `RebalancePushImpl` starts a retry topic's queue at 0,
            // whatever `ConsumeFromWhere` says.
            (NO_OFFSET, _) if cfg.is_retry_queue(q) => 0,
            (NO_OFFSET, ConsumeFrom::First) => 0,
            // The broker answers 0 while the first message is in memory;
            // otherwise the client starts at the queue's max offset.
            (NO_OFFSET, ConsumeFrom::Last) if in_memory => 0,
            (NO_OFFSET, ConsumeFrom::Last) => cfg.sizes.messages as u8,
            (offset, _) => offset,
        };
        next.queues[q] = ProcessQueue {
            reading_offset: false,
            cursor: start,
            ..pq
        };
        Some((next, Vec::new()))
    }

    /// `updateProcessQueueTableInRebalance` with messages: a dropped queue's
    /// offset is persisted (one-way, `removeUnnecessaryMessageQueue`) and its
    /// running batch, if any, finishes unrecorded; a new queue's offset is
    /// read from its broker before it is consumed. A queue of `expired`,
    /// still allocated but whose pulls have expired (`isPullExpired`), is
    /// dropped the same way and added afresh in the same round. Consuming
    /// orderly, the locks hand the queues over instead
    /// ([`ConsumerState::hand_over_locked`]).
    pub(super) fn hand_over(
        &mut self,
        cfg: &Config,
        me: usize,
        before: QueueSet,
        expired: QueueSet,
    ) -> Vec<Output> {
        if !cfg.messages() {
            return Vec::new();
        }
        let mut outputs = Vec::new();
        // Orderly, an expired queue's persist comes with its removal.
        let removed = before & !self.owned | if cfg.orderly().is_some() { 0 } else { expired };
        for q in members_of(removed) {
            if let Some((broker, msg)) = self.offset_update(cfg, me, q) {
                if self.faults.contains(Fault::LosePersist) {
                    self.faults.remove(Fault::LosePersist);
                } else {
                    outputs.push(Output::Send(broker, msg));
                }
            }
        }
        self.erase_offsets(cfg, removed, before & self.owned & !removed);
        if let Some(timing) = cfg.orderly() {
            // Dropped, its pulls stopped long enough: the rule of a queue
            // allocated again while still dropped removes and adds it.
            for q in members_of(expired) {
                self.queues[q].dropped = true;
                self.queues[q].idle_age = timing.pull_expiry;
            }
            self.hand_over_locked(cfg, me, before & !expired, timing, &mut outputs);
            return outputs;
        }
        for q in members_of(removed) {
            self.queues[q] = ProcessQueue::with_batch_of(ProcessQueue::default(), self.queues[q]);
        }
        for q in members_of(self.owned & !before | expired) {
            if cfg.pops() {
                self.start_popping(q);
            } else {
                outputs.push(self.read_offset(cfg, q));
            }
        }
        outputs
    }

    /// `truncateMessageQueueNotMyTopic`: every queue of its table outside
    /// `mine` (the queues of the topics it subscribes to) is marked dropped
    /// and removed, and nothing else: no persist (the next persist skips a
    /// queue it no longer holds, and its offset since the last one is
    /// lost) and, orderly, no unlock (the lock stays the broker's until its
    /// lease ends). A running batch goes on, unrecorded.
    pub(super) fn truncate_not_my_topic(&mut self, cfg: &Config, mine: QueueSet) {
        let truncated = (self.owned | u64::from(self.dropped())) & !mine;
        self.owned &= mine;
        if cfg.messages() {
            for q in members_of(truncated) {
                self.queues[q] =
                    ProcessQueue::with_batch_of(ProcessQueue::default(), self.queues[q]);
            }
        }
    }

    /// A queue starts being consumed: its offset is read from its broker
    /// first. A batch still running from an earlier hold goes on.
    pub(super) fn read_offset(&mut self, cfg: &Config, q: usize) -> Output {
        let fresh = ProcessQueue::with_batch_of(ProcessQueue::reading(), self.queues[q]);
        // A new generation, which only answers to pulls need.
        self.queues[q] = ProcessQueue {
            generation: fresh.generation ^ cfg.pulls_by_request(q),
            ..fresh
        };
        let broker = cfg.broker_of(q);
        Output::Send(
            Peer::Broker(broker),
            Message::QueryOffset {
                queue: q as u8,
                epoch: self.epoch(broker),
            },
        )
    }

    /// Queues in its process-queue table: those it consumes and, orderly,
    /// those dropped but not yet unlocked (bit set of queue indices).
    pub fn table(&self) -> u8 {
        self.owned as u8 | self.dropped()
    }
}

/// With messages, the pull and finish of every queue: armed for good, each
/// a step only when it can happen.
pub(super) fn consumption_timers(cfg: &Config) -> impl Iterator<Item = Timer> {
    let queues = if cfg.messages() { cfg.queues.len() } else { 0 };
    (0..queues as u8).flat_map(|queue| [Timer::Pull { queue }, Timer::Done { queue }])
}

/// Whether a consumer tells its broker how far it has consumed. rocketmq-rust
/// up to v0.7.0 moved an orderly queue's offset only for a dropped queue
/// (a condition inverted), so every commit and persist of a live one
/// carried the offset read when it was added: the broker's own, which the
/// model sends as nothing.
fn progress_reported(cfg: &Config) -> bool {
    cfg.orderly().is_none() || !cfg.has(Variant::RustOrderlyOffsetFrozen)
}
