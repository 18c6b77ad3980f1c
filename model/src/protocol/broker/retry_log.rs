//! What a broker has appended to its queue of the group's retry topic.

use crate::config::MAX_MESSAGES;

/// What a broker has appended to its queue of the group's retry topic
/// during the run, after the messages its log was written with: each
/// message sent back, as the message it is a copy of (queue index and
/// offset; RocketMQ keeps the origin in the copy's properties, and
/// `resetRetryAndNamespace` hands the listener the original topic). A
/// length and six bits an entry.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RetryLog(u64);

impl RetryLog {
    /// The most entries: a log holds at most [`MAX_MESSAGES`], one written
    /// before the run at least.
    const CAPACITY: usize = MAX_MESSAGES - 1;

    /// The log as one word.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// How many messages were appended.
    pub fn len(self) -> usize {
        (self.0 & 0x7) as usize
    }

    /// Whether nothing was appended.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The message entry `i` is a copy of: its queue index and offset.
    pub fn origin(self, i: usize) -> (usize, usize) {
        let entry = (self.0 >> (3 + 6 * i)) as usize & 0x3F;
        (entry & 0x7, entry >> 3)
    }

    /// Appends a copy of message `offset` of `queue`. A full log (only the
    /// duplicating network sends one batch back twice) stays as it is.
    pub(super) fn push(&mut self, queue: usize, offset: usize) {
        let len = self.len();
        if len < Self::CAPACITY {
            let entry = (queue | offset << 3) as u64;
            self.0 = (self.0 & !0x7 | (len + 1) as u64) | entry << (3 + 6 * len);
        }
    }
}
