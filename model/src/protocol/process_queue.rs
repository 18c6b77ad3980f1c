//! What a consumer holds of one queue while it consumes it, with messages
//! modelled: RocketMQ's `ProcessQueue` and the queue's entry in the
//! consumer's offset table (`RemoteBrokerOffsetStore`).

use crate::config::MAX_MESSAGE_QUEUES;

/// One queue's consumption.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ProcessQueue {
    /// Waiting for the queue's offset from the broker
    /// (`computePullFromWhereWithException`): not consuming yet.
    pub reading_offset: bool,
    /// The next offset to pull.
    pub cursor: u8,
    /// The batch the application is consuming, `[from, to)`; none when
    /// equal. A dropped queue's running batch still finishes.
    pub from: u8,
    /// End of the running batch.
    pub to: u8,
    /// With synchronous commit, the last batch's offset is not yet
    /// acknowledged: the next pull waits.
    pub awaiting_ack: bool,
    /// Orderly: the broker granted its lock (`ProcessQueue.locked`).
    pub locked: bool,
    /// Orderly: no longer allocated to it, but still in its table, and
    /// still locked, until it is unlocked (`ProcessQueue.dropped`).
    pub dropped: bool,
    /// Orderly: ticks of the consumer's clock since its lock was last
    /// granted (`lastLockTimestamp`), saturating one past the longest
    /// duration it is compared with.
    pub lock_age: u8,
    /// Orderly: ticks since the running batch started.
    pub batch_age: u8,
    /// Orderly: ticks since it was dropped, when its pulls stopped
    /// (`lastPullTimestamp`), saturating at the pull expiry.
    pub idle_age: u8,
    /// What becomes of its batch after its listener failed, consuming
    /// concurrently: while it is sent back, or waits to be consumed again,
    /// the batch is still held, so the offset stays at its start.
    pub send_back: SendBack,
    /// With pull requests: a `PULL_MESSAGE` is in flight.
    pub pulling: bool,
    /// With pull requests: which process queue of the queue this is, the
    /// parity of how many came before it. An answer carries the one that
    /// asked, so an answer to a queue dropped and added again meanwhile is
    /// told apart and discarded.
    pub generation: bool,
    /// With POP, the handle its running batch was popped under (which pop
    /// of its messages it is, modulo 4): its acknowledgement names it.
    pub attempt: u8,
    /// With POP, its running batch outlasted its invisible time: its
    /// result settles nothing (the remoting client drops it,
    /// `isPopTimeout`; the proxy refuses the gRPC client's acknowledgement
    /// of the expired handle).
    pub pop_timed_out: bool,
    /// With a FIFO group's POP, the handle of its last pop, whose answer
    /// was lost as its receive timed out: its next pop carries that pop's
    /// attempt id, and re-enters the queue the lost pop blocks.
    pub reenters: Option<u8>,
}

impl ProcessQueue {
    /// Whether it is as [`Default`] makes it: every field 0, or-ed
    /// together rather than compared one by one (no branch).
    pub fn idle(&self) -> bool {
        let bytes = u8::from(self.reading_offset)
            | self.cursor
            | self.from
            | self.to
            | u8::from(self.awaiting_ack)
            | u8::from(self.locked)
            | u8::from(self.dropped)
            | self.lock_age
            | self.batch_age
            | self.idle_age
            | u8::from(self.pulling)
            | u8::from(self.generation)
            | self.attempt
            | u8::from(self.pop_timed_out)
            | self.reenters.map_or(0, |h| 4 | h);
        bytes == 0 && self.send_back == SendBack::No
    }

    /// A queue just allocated: its offset is to be read.
    pub fn reading() -> Self {
        Self {
            reading_offset: true,
            ..Self::default()
        }
    }

    /// `base` with what outlives this process queue: its batch, if one
    /// runs (a batch goes on whatever becomes of its queue, its send-back
    /// included), and its generation.
    pub fn with_batch_of(base: Self, pq: Self) -> Self {
        Self {
            from: pq.from,
            to: pq.to,
            batch_age: pq.batch_age,
            send_back: pq.send_back,
            generation: pq.generation,
            attempt: pq.attempt,
            pop_timed_out: pq.pop_timed_out,
            ..base
        }
    }

    /// What of it outlives its consumer's shutdown: the batch its
    /// application is running, and nothing else. A batch that already
    /// failed is not run again: its send-back is a call of the process
    /// that stopped, and its consumption later a task of the executor the
    /// shutdown stopped (`submitConsumeRequestLater`).
    pub fn batch_alone(self) -> Option<Self> {
        (self.running() && self.send_back == SendBack::No).then(|| Self {
            from: self.from,
            to: self.to,
            batch_age: self.batch_age,
            attempt: self.attempt,
            pop_timed_out: self.pop_timed_out,
            ..Self::default()
        })
    }

    /// The batch `[from, to)` starts, and the next pull is from `to`.
    pub fn consuming(self, from: u8, to: u8) -> Self {
        Self {
            from,
            to,
            cursor: to,
            batch_age: 0,
            pop_timed_out: false,
            ..self
        }
    }

    /// Its batch has ended.
    pub fn finished(self) -> Self {
        Self {
            from: 0,
            to: 0,
            batch_age: 0,
            send_back: SendBack::No,
            pop_timed_out: false,
            ..self
        }
    }

    /// Its batch failed and is consumed again later
    /// (`submitConsumeRequestLater`; orderly, `makeMessageToConsumeAgain`):
    /// the batch ends and the next pull starts at it again, so the offset
    /// does not move past it.
    pub fn again(self) -> Self {
        Self {
            cursor: self.from,
            ..self.finished()
        }
    }

    /// Its failed batch, both send-backs having failed, is consumed again
    /// from memory (`submitConsumeRequestLater`): no pull, and the offset
    /// stays at its start until it is consumed.
    pub fn again_from_memory(self) -> Self {
        Self {
            batch_age: 0,
            send_back: SendBack::Later,
            ..self
        }
    }

    /// A batch is being consumed (its application runs it, or it waits to
    /// be run again).
    pub fn running(&self) -> bool {
        self.from < self.to
    }

    /// Its failed batch is being sent back: a call waits for its answer.
    pub fn sending_back(&self) -> bool {
        matches!(self.send_back, SendBack::ToBroker | SendBack::ByProducer(_))
    }

    /// The offset to commit: the lowest still in flight
    /// (`ProcessQueue.removeMessage` returns the first message still held).
    pub fn local_offset(&self) -> u8 {
        if self.running() {
            self.from
        } else {
            self.cursor
        }
    }

    /// Orderly: its lock is granted and, by the consumer's clock, still
    /// valid (`isLocked() && !isLockExpired()`).
    pub fn lock_trusted(&self, validity: u8) -> bool {
        self.locked && self.lock_age <= validity
    }
}

/// What becomes of a batch whose listener returned `RECONSUME_LATER`
/// (`ConsumeMessageConcurrentlyService.processConsumeResult`): each step
/// is tried when the one before it fails.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum SendBack {
    /// Nothing failed.
    #[default]
    No,
    /// `CONSUMER_SEND_MSG_BACK` to the queue's broker, a synchronous call,
    /// is in flight.
    ToBroker,
    /// That call failed: the client's internal producer sends a copy to the
    /// group's retry topic (`sendMessageBackAsNormalMessage`), through this
    /// broker, a synchronous send.
    ByProducer(u8),
    /// Both failed: the batch waits to be consumed again from memory, 5 s
    /// later (`submitConsumeRequestLater`).
    Later,
}

/// Every queue's consumption by one consumer, by queue index.
pub type ProcessQueues = [ProcessQueue; MAX_MESSAGE_QUEUES];
