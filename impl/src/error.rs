//! The ways an allocation fails, where the Java client throws.

use std::fmt;

use crate::MessageQueue;

/// Why an allocation failed. Each variant but one is a case where the Java
/// client throws `IllegalArgumentException`, and `Display` gives Java's
/// message; [`NoVirtualNodes`](Self::NoVirtualNodes) is where the Go
/// client panics, with Go's message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocateError {
    /// The calling consumer's id is empty.
    EmptyCurrentId,
    /// The topic has no queues.
    EmptyQueues,
    /// The group has no consumers.
    EmptyConsumers,
    /// The machine-room resolver found no room for this queue's broker.
    NoBrokerMachineRoom(MessageQueue),
    /// The machine-room resolver found no room for this consumer.
    NoConsumerMachineRoom(String),
    /// The Go client's consistent hash
    /// ([`GoConsistentHash`](crate::strategy::GoConsistentHash)) with zero
    /// virtual nodes: its ring divides by the count when an id is added,
    /// and the Go call panics (Java's ring is empty and gives nothing).
    NoVirtualNodes,
    /// A strategy from outside this crate (behind [`AllocateStrategy`](crate::AllocateStrategy))
    /// failed, with its own message.
    Other(String),
}

impl fmt::Display for AllocateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocateError::EmptyCurrentId => f.write_str("currentCID is empty"),
            AllocateError::EmptyQueues => f.write_str("mqAll is null or mqAll empty"),
            AllocateError::EmptyConsumers => f.write_str("cidAll is null or cidAll empty"),
            AllocateError::NoBrokerMachineRoom(queue) => {
                write!(f, "Machine room is null for mq {queue}")
            }
            AllocateError::NoConsumerMachineRoom(id) => {
                write!(f, "Machine room is null for consumer id {id}")
            }
            AllocateError::NoVirtualNodes => f.write_str("runtime error: integer divide by zero"),
            AllocateError::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for AllocateError {}

/// A strategy name that [`strategy_from_name`](crate::strategy_from_name)
/// does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown strategy {:?}; known: {}",
            self.0,
            crate::STRATEGY_NAMES.join(", ")
        )
    }
}

impl std::error::Error for UnknownStrategy {}
