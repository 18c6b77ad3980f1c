//! The kind of network a run has: how messages travel between two actors
//! (the messages in flight are the shell's `Network`).

use std::fmt;
use std::str::FromStr;

/// Network semantics of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkKind {
    /// FIFO per (sender, receiver): RocketMQ remoting runs over one TCP
    /// connection per client and broker, so this is the faithful default.
    Ordered,
    /// Any in-flight message may overtake another; each is delivered once.
    Unordered,
    /// Unordered, and any message may be delivered again at any time.
    Duplicating,
}

impl NetworkKind {
    /// Every kind, in documentation order.
    pub const ALL: &'static [NetworkKind] = &[Self::Ordered, Self::Unordered, Self::Duplicating];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ordered => "ordered",
            Self::Unordered => "unordered",
            Self::Duplicating => "duplicating",
        }
    }
}

/// A network name that is not one of [`NetworkKind::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownNetwork(pub String);

impl fmt::Display for UnknownNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = NetworkKind::ALL.iter().map(|n| n.name()).collect();
        write!(
            f,
            "unknown network '{}', expected one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownNetwork {}

impl FromStr for NetworkKind {
    type Err = UnknownNetwork;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|n| n.name() == s)
            .ok_or_else(|| UnknownNetwork(s.to_string()))
    }
}

impl fmt::Display for NetworkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
