//! A strategy as a name and its parameters describe it: parsed once, built
//! once, and able to say whether it is usable without configuration.

use std::fmt;
use std::str::FromStr;

use super::{
    AllocateStrategy, Averagely, AveragelyByCircle, ByConfig, ByMachineRoom, ConsistentHash,
    MachineRoomNearby, PrefixResolver, Sticky,
};
use crate::{MessageQueue, UnknownStrategy};

/// One allocation strategy with its parameters.
///
/// Every program of this project that names a strategy (the `allocate`
/// command, the conformance cases, the model's `--strategy`, the
/// comparison) goes through this type, so a name means the same everywhere.
///
/// ```
/// use rocketmq_rebalance::strategy::StrategySpec;
///
/// let spec: StrategySpec = "CONSISTENT_HASH".parse()?;
/// assert_eq!(spec, StrategySpec::ConsistentHash { virtual_nodes: 10 });
/// let spec = spec.with_virtual_nodes(4)?;
/// assert_eq!(spec.build().name(), "CONSISTENT_HASH");
///
/// let nearby: StrategySpec = "MACHINE_ROOM_NEARBY-STICKY-3".parse()?;
/// assert_eq!(nearby.name(), "MACHINE_ROOM_NEARBY-STICKY-3");
/// assert!(nearby.configuration_needed().is_some());
/// assert!("STICKY".parse::<StrategySpec>()?.configuration_needed().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategySpec {
    /// `AVG`: [`Averagely`].
    Averagely,
    /// `AVG_BY_CIRCLE`: [`AveragelyByCircle`].
    AveragelyByCircle,
    /// `CONSISTENT_HASH`: [`ConsistentHash`] with MD5.
    ConsistentHash {
        /// Points on the ring per consumer (Java's `virtualNodeCnt`).
        virtual_nodes: usize,
    },
    /// `CONFIG`: [`ByConfig`].
    ByConfig {
        /// The queues every consumer takes.
        queues: Vec<MessageQueue>,
    },
    /// `MACHINE_ROOM`: [`ByMachineRoom`].
    ByMachineRoom {
        /// The consumers' machine rooms (Java's `consumeridcs`).
        consumer_rooms: Vec<String>,
    },
    /// `MACHINE_ROOM_NEARBY[-INNER]`: [`MachineRoomNearby`] over `inner`,
    /// rooms read before the first `-` of broker names and client ids.
    MachineRoomNearby {
        /// The strategy used within and across rooms.
        inner: Box<StrategySpec>,
    },
    /// `STICKY` or `STICKY-k`: [`Sticky`] with a load window of `slack`.
    Sticky {
        /// Largest share minus smallest at most this (1: exact balance).
        slack: usize,
    },
}

/// A parameter given to a strategy that does not take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParameterError {
    /// The parameter, as the conformance format spells it
    /// (`virtual_nodes`, `consumer_idcs`).
    pub parameter: &'static str,
    /// The strategy it was given to.
    pub strategy: String,
}

impl fmt::Display for ParameterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} does not apply to strategy {}",
            self.parameter, self.strategy
        )
    }
}

impl std::error::Error for ParameterError {}

const NEARBY: &str = "MACHINE_ROOM_NEARBY";

impl StrategySpec {
    /// The stable name, which [`FromStr`] reads back (parameters other
    /// than a sticky window are not part of it).
    pub fn name(&self) -> String {
        match self {
            Self::Averagely => "AVG".into(),
            Self::AveragelyByCircle => "AVG_BY_CIRCLE".into(),
            Self::ConsistentHash { .. } => "CONSISTENT_HASH".into(),
            Self::ByConfig { .. } => "CONFIG".into(),
            Self::ByMachineRoom { .. } => "MACHINE_ROOM".into(),
            Self::MachineRoomNearby { inner } => format!("{NEARBY}-{}", inner.name()),
            Self::Sticky { slack } => Sticky::with_slack(*slack).name().to_string(),
        }
    }

    /// The strategy, ready to allocate.
    pub fn build(&self) -> Box<dyn AllocateStrategy> {
        match self {
            Self::Averagely => Box::new(Averagely),
            Self::AveragelyByCircle => Box::new(AveragelyByCircle),
            Self::ConsistentHash { virtual_nodes } => Box::new(ConsistentHash::new(*virtual_nodes)),
            Self::ByConfig { queues } => Box::new(ByConfig::new(queues.clone())),
            Self::ByMachineRoom { consumer_rooms } => {
                Box::new(ByMachineRoom::new(consumer_rooms.iter().cloned()))
            }
            Self::MachineRoomNearby { inner } => Box::new(MachineRoomNearby::new(
                inner.build(),
                PrefixResolver::new('-'),
            )),
            Self::Sticky { slack } => Box::new(Sticky::with_slack(*slack)),
        }
    }

    /// Sets the ring's virtual nodes of `CONSISTENT_HASH` (also when it is
    /// the inner strategy of `MACHINE_ROOM_NEARBY`).
    pub fn with_virtual_nodes(self, virtual_nodes: usize) -> Result<Self, ParameterError> {
        match self {
            Self::ConsistentHash { .. } => Ok(Self::ConsistentHash { virtual_nodes }),
            Self::MachineRoomNearby { inner } => Ok(Self::MachineRoomNearby {
                inner: Box::new(inner.with_virtual_nodes(virtual_nodes)?),
            }),
            other => Err(other.refuses("virtual_nodes")),
        }
    }

    /// Sets the consumers' machine rooms of `MACHINE_ROOM`.
    pub fn with_consumer_rooms<I, S>(self, rooms: I) -> Result<Self, ParameterError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        match self {
            Self::ByMachineRoom { .. } => Ok(Self::ByMachineRoom {
                consumer_rooms: rooms.into_iter().map(Into::into).collect(),
            }),
            other => Err(other.refuses("consumer_idcs")),
        }
    }

    fn refuses(&self, parameter: &'static str) -> ParameterError {
        ParameterError {
            parameter,
            strategy: self.name(),
        }
    }

    /// Why this strategy allocates nothing sensible to a group that has not
    /// been set up for it, or `None` when it works on any queues and client
    /// ids.
    pub fn configuration_needed(&self) -> Option<&'static str> {
        match self {
            Self::ByConfig { .. } => Some(
                "allocates a configured queue list, whatever the topic's queues and the group are",
            ),
            Self::ByMachineRoom { consumer_rooms } if consumer_rooms.is_empty() => {
                Some("needs the consumers' machine rooms; with none configured nobody gets anything")
            }
            Self::MachineRoomNearby { .. } => Some(
                "needs machine rooms in broker names and client ids; without them it is its inner strategy",
            ),
            _ => None,
        }
    }
}

impl FromStr for StrategySpec {
    type Err = UnknownStrategy;

    /// Any name of [`STRATEGY_NAMES`](super::STRATEGY_NAMES), `STICKY-k`
    /// for `k >= 2`, or `MACHINE_ROOM_NEARBY-X` for another name `X`; each
    /// with its default parameters.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownStrategy(name.to_string());
        Ok(match name {
            "AVG" => Self::Averagely,
            "AVG_BY_CIRCLE" => Self::AveragelyByCircle,
            "CONSISTENT_HASH" => Self::ConsistentHash {
                virtual_nodes: ConsistentHash::DEFAULT_VIRTUAL_NODES,
            },
            "CONFIG" => Self::ByConfig { queues: Vec::new() },
            "MACHINE_ROOM" => Self::ByMachineRoom {
                consumer_rooms: Vec::new(),
            },
            NEARBY => Self::MachineRoomNearby {
                inner: Box::new(Self::Averagely),
            },
            _ => {
                if let Some(sticky) = Sticky::from_name(name) {
                    return Ok(Self::Sticky {
                        slack: sticky.slack(),
                    });
                }
                let inner = name
                    .strip_prefix(NEARBY)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .filter(|inner| !inner.starts_with(NEARBY))
                    .ok_or_else(unknown)?;
                Self::MachineRoomNearby {
                    inner: Box::new(inner.parse().map_err(|_| unknown())?),
                }
            }
        })
    }
}

/// Serialised as its [name](StrategySpec::name).
impl serde::Serialize for StrategySpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::STRATEGY_NAMES;

    #[test]
    fn every_name_reads_back_and_builds_a_strategy_of_that_name() {
        let names = STRATEGY_NAMES.iter().map(|n| n.to_string()).chain(
            [
                "STICKY-2",
                "STICKY-17",
                "MACHINE_ROOM_NEARBY-CONSISTENT_HASH",
            ]
            .map(String::from),
        );
        for name in names {
            let spec: StrategySpec = name.parse().unwrap();
            let canonical = if name == NEARBY {
                "MACHINE_ROOM_NEARBY-AVG".to_string()
            } else {
                name.clone()
            };
            assert_eq!(spec.name(), canonical);
            assert_eq!(spec.build().name(), canonical);
            assert_eq!(spec.name().parse::<StrategySpec>().unwrap(), spec);
        }
    }

    #[test]
    fn unknown_names_are_refused() {
        for name in [
            "",
            "avg",
            "STICKY-1",
            "STICKY-04",
            "MACHINE_ROOM_NEARBY-",
            "MACHINE_ROOM_NEARBY-MACHINE_ROOM_NEARBY",
            "MACHINE_ROOM_NEARBY-NOPE",
            "MACHINE_ROOM_NEARBYX",
        ] {
            assert_eq!(
                name.parse::<StrategySpec>(),
                Err(UnknownStrategy(name.to_string())),
                "{name}"
            );
        }
    }

    #[test]
    fn parameters_go_only_where_they_apply() {
        let hash: StrategySpec = "MACHINE_ROOM_NEARBY-CONSISTENT_HASH".parse().unwrap();
        assert_eq!(
            hash.with_virtual_nodes(3),
            Ok(StrategySpec::MachineRoomNearby {
                inner: Box::new(StrategySpec::ConsistentHash { virtual_nodes: 3 })
            })
        );
        let err = StrategySpec::Averagely.with_virtual_nodes(3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "virtual_nodes does not apply to strategy AVG"
        );
        let rooms = StrategySpec::ByMachineRoom {
            consumer_rooms: Vec::new(),
        };
        assert!(rooms.configuration_needed().is_some());
        let rooms = rooms.with_consumer_rooms(["hz"]).unwrap();
        assert_eq!(rooms.configuration_needed(), None);
        assert!(StrategySpec::Averagely.with_consumer_rooms(["hz"]).is_err());
    }
}
