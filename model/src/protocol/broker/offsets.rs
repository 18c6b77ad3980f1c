//! What a broker stores and serves with messages: the group's offsets
//! (`ConsumerOffsetManager`, `ConsumerManageProcessor`), pulls
//! (`PullMessageProcessor`) and send-backs to the retry topic.

use super::BrokerState;
use crate::config::{Config, Variant};
use crate::protocol::message::{Message, Output, Peer, Step, NO_OFFSET};

/// `offsets` with queue `queue`'s offset set to `offset`.
pub(super) fn with_offset(offsets: u32, queue: usize, offset: u8) -> u32 {
    let shift = 4 * queue as u32;
    offsets & !(0xF << shift) | u32::from(offset & 0xF) << shift
}

impl BrokerState {
    /// The committed offset of queue `queue`, [`NO_OFFSET`] when none.
    pub fn offset(&self, queue: usize) -> u8 {
        (self.disk.offsets >> (4 * queue) & 0xF) as u8
    }

    /// `ConsumerManageProcessor.queryConsumerOffset`: the stored offset of
    /// `queue`, and whether its first message is still in memory.
    pub(super) fn query_offset(
        &self,
        cfg: &Config,
        from: Peer,
        queue: u8,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let answer = Message::Offset {
            queue,
            stored: self.offset(usize::from(queue)),
            // 5.0.x says nothing of memory: "not found" is all.
            in_memory: !self.disk.evicted && !cfg.has(Variant::OffsetNotFoundIsNotFound),
            epoch,
        };
        (*self, vec![Output::Send(from, answer)])
    }

    /// `ConsumerOffsetManager.commitOffset`: the last write wins, a smaller
    /// offset over a larger one included (RocketMQ only logs a warning).
    pub(super) fn store_offset(
        &self,
        queue: usize,
        offset: u8,
        outputs: Vec<Output>,
    ) -> Step<Self> {
        let mut next = *self;
        next.disk.offsets = with_offset(self.disk.offsets, queue, offset);
        (next != *self || !outputs.is_empty()).then_some((next, outputs))
    }

    /// `PullMessageProcessor.processRequest`: the offset the pull carries,
    /// if any, is committed (`tryCommitOffset`), and the next messages of
    /// the log from the offset asked for are the answer (at most
    /// `pullBatchSize`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pull_message(
        &self,
        cfg: &Config,
        from: Peer,
        queue: u8,
        offset: u8,
        commit: u8,
        generation: bool,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        if commit != NO_OFFSET {
            next.disk.offsets = with_offset(self.disk.offsets, usize::from(queue), commit);
        }
        let end = self.log_end(cfg, usize::from(queue));
        let answer = Message::PullResult {
            queue,
            from: offset,
            to: (offset + cfg.sizes.pull_batch as u8).min(end),
            generation,
            epoch,
        };
        (next, vec![Output::Send(from, answer)])
    }

    /// The end of queue `q`'s log: the messages it was written with and,
    /// on its queue of the retry topic, those sent back since.
    pub(super) fn log_end(&self, cfg: &Config, q: usize) -> u8 {
        let appended = if cfg.is_retry_queue(q) {
            self.disk.retried.len()
        } else {
            0
        };
        (cfg.sizes.messages + appended) as u8
    }

    /// `SendMessageProcessor.consumerSendMsgBack`, or the client producer's
    /// send to the retry topic: the batch `[first, to)` of queue `queue`
    /// is appended to its queue of the group's retry topic
    /// (`retryQueueNums` is 1), each message as the one it is a copy of (a
    /// copy of its own retry queue's sent back again is still a copy of
    /// the first; a copy of another broker's is recorded as that copy,
    /// whose origin that broker's log holds). A run that does not model
    /// the retry topic stores it where nobody in the run reads.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_back(
        &self,
        cfg: &Config,
        me: usize,
        from: Peer,
        queue: u8,
        first: u8,
        to: u8,
        epoch: u8,
    ) -> (Self, Vec<Output>) {
        let mut next = *self;
        let q = usize::from(queue);
        if cfg.retry_log_grows() {
            for offset in usize::from(first)..usize::from(to) {
                let own_retry = cfg.retry_queue_of(me);
                let origin = match offset.checked_sub(cfg.sizes.messages) {
                    Some(copy) if own_retry == Some(q) => self.disk.retried.origin(copy),
                    _ => (q, offset),
                };
                next.disk.retried.push(origin.0, origin.1);
            }
        }
        let answer = Message::SentBack { queue, epoch };
        (next, vec![Output::Send(from, answer)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_four_bits_a_queue() {
        let offsets = with_offset(with_offset(0, 0, 3), 2, 9);
        assert_eq!(offsets, 0x903);
        assert_eq!(with_offset(offsets, 2, 1), 0x103, "replaced, not merged");
        assert_eq!(with_offset(0, 7, 15), 0xF000_0000);
    }
}
