//! Switches for the parts of RocketMQ the model can leave out. Each is off
//! by default, and off it leaves the model exactly as it was without it.

use std::fmt;
use std::str::FromStr;

/// Who computes a consumer's share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assignment {
    /// Each consumer allocates for itself (`clientRebalance=true`, the
    /// default).
    #[default]
    Client,
    /// The broker a consumer asks allocates for it with its own member list
    /// and route (`QUERY_ASSIGNMENT`, `clientRebalance=false`).
    Server,
}

impl Assignment {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Client => "client",
            Self::Server => "server",
        }
    }
}

/// An assignment mode name that is neither `client` nor `server`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAssignment(pub String);

impl fmt::Display for UnknownAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown assignment '{}', expected one of: client, server",
            self.0
        )
    }
}

impl std::error::Error for UnknownAssignment {}

impl FromStr for Assignment {
    type Err = UnknownAssignment;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "client" => Ok(Self::Client),
            "server" => Ok(Self::Server),
            _ => Err(UnknownAssignment(s.to_string())),
        }
    }
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// The parts of the protocol a run models beyond membership and routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ProtocolOptions {
    /// Each broker keeps one subscription table per group, replaced by every
    /// member's heartbeat (`ConsumerGroupInfo.updateSubscription`); a
    /// heartbeat that changes its topics notifies the group, and a pull of a
    /// topic the table lacks fails. Consumers heartbeat periodically.
    pub subscription_table: bool,
    /// Every consumer also subscribes to the group's retry topic
    /// `%RETRY%<group>`, one queue per broker.
    pub retry_topic: bool,
    /// Brokers send `NOTIFY_CONSUMER_IDS_CHANGED`
    /// (`notifyConsumerIdsChangedEnable`, on by default); off, the group
    /// relies on the periodic tick alone.
    pub notify: bool,
    /// Who computes a consumer's share.
    pub assignment: Assignment,
}

impl Default for ProtocolOptions {
    /// RocketMQ's defaults, with the optional parts left out.
    fn default() -> Self {
        Self {
            subscription_table: false,
            retry_topic: false,
            notify: true,
            assignment: Assignment::Client,
        }
    }
}
