//! What a consumer holds of one queue while it consumes it, with messages
//! modelled: RocketMQ's `ProcessQueue` and the queue's entry in the
//! consumer's offset table (`RemoteBrokerOffsetStore`).

use crate::config::MAX_MESSAGE_QUEUES;

/// One queue's consumption.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
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
}

impl ProcessQueue {
    /// A queue just allocated: its offset is to be read.
    pub fn reading() -> Self {
        Self {
            reading_offset: true,
            ..Self::default()
        }
    }

    /// A queue consumed from `offset` on.
    pub fn from_offset(offset: u8) -> Self {
        Self {
            cursor: offset,
            ..Self::default()
        }
    }

    /// A batch is being consumed.
    pub fn running(&self) -> bool {
        self.from < self.to
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

    /// Packed in a word, for the state's fingerprint.
    pub fn packed(&self) -> u32 {
        u32::from(self.reading_offset)
            | u32::from(self.cursor) << 1
            | u32::from(self.from) << 9
            | u32::from(self.to) << 17
            | u32::from(self.awaiting_ack) << 25
    }
}

/// Every queue's consumption by one consumer, by queue index.
pub type ProcessQueues = [ProcessQueue; MAX_MESSAGE_QUEUES];
