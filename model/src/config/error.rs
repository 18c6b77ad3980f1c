//! Why a configuration cannot be built: one kind per problem, so that a
//! program can say which of its inputs is wrong in its own terms.

use std::fmt;

use super::{Scenario, Size};

/// A configuration the model cannot check.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A size outside the range the compact state holds.
    OutOfRange {
        /// Which size.
        size: Size,
        /// The smallest value allowed.
        min: usize,
        /// The largest value allowed.
        max: usize,
    },
    /// A per-consumer budget larger than the group.
    ExceedsConsumers {
        /// Which budget.
        size: Size,
    },
    /// More queues in all (topics × brokers × queues, plus route changes)
    /// than a queue set holds.
    TooManyQueues {
        /// Queues the configuration needs.
        queues: usize,
        /// Queues a queue set holds.
        max: usize,
    },
    /// With messages modelled, more queues in all than their per-queue
    /// state holds.
    TooManyMessageQueues {
        /// Queues the configuration needs.
        queues: usize,
        /// Queues the message layer holds.
        max: usize,
    },
    /// Two parts of the model that are not modelled together.
    NotTogether {
        /// One part.
        first: &'static str,
        /// The other.
        second: &'static str,
    },
    /// Server-side assignment with a strategy brokers do not offer
    /// (`QueryAssignmentProcessor` knows only `AVG` and `AVG_BY_CIRCLE`).
    UnsupportedServerStrategy {
        /// The strategy's name.
        strategy: String,
    },
    /// Orderly consumption with server-side assignment: RocketMQ never
    /// combines them (an orderly consumer's `clientRebalance()` is always
    /// true, so it allocates on the client whatever the group's setting).
    OrderlyOnServer,
    /// A part of orderly consumption asked for without `orderly`.
    OrderlyOnly {
        /// The number that needs it.
        size: Size,
    },
    /// A fault of POP consumption asked for without it.
    PopOnly {
        /// The number that needs it.
        size: Size,
    },
    /// A fault of a FIFO group of POP consumers asked for without one.
    FifoOnly {
        /// The number that needs it.
        size: Size,
    },
    /// POP consumption without a part it needs.
    PopNeeds {
        /// What it needs, in the flags' words.
        needs: &'static str,
    },
    /// A fault of the message layer asked for without messages.
    MessagesOnly {
        /// The number that needs it.
        size: Size,
    },
    /// A scenario about orderly consumption without it.
    ScenarioNeedsOrderly {
        /// The scenario.
        scenario: Scenario,
    },
    /// A consumer's client or client id that cannot be used.
    Clients {
        /// Why, in the flags' words.
        reason: String,
    },
    /// A restart's stopped phase with no broker that restarts.
    StopsWithoutRestarts,
    /// A restart downtime without the stopped phase it lasts.
    DowntimeWithoutStops,
    /// A protocol variant without the part of the model it changes.
    VariantNeeds {
        /// The variant's name.
        variant: &'static str,
        /// What it needs, in the flags' words.
        needs: &'static str,
    },
    /// Two protocol variants that cannot go together.
    VariantsExclude {
        /// One variant's name.
        first: &'static str,
        /// The other's.
        second: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// A rounds' topic order that does not name each topic once.
    RoundOrder {
        /// The order given, as topic indices.
        order: Vec<u8>,
    },
    /// The scenario needs more of one size to show what it shows.
    ScenarioNeeds {
        /// The scenario.
        scenario: Scenario,
        /// The size it needs more of.
        size: Size,
        /// The least it needs.
        min: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { size, min, max } => write!(f, "{size} must be {min}..={max}"),
            Self::ExceedsConsumers { size } => write!(f, "{size} cannot exceed consumers"),
            Self::TooManyQueues { queues, max } => write!(
                f,
                "{queues} queues in all (topics x brokers x queues, plus route changes); at most {max}"
            ),
            Self::TooManyMessageQueues { queues, max } => write!(
                f,
                "{queues} queues in all with messages modelled; at most {max}"
            ),
            Self::NotTogether { first, second } => {
                write!(f, "{first} and {second} are not modelled together")
            }
            Self::UnsupportedServerStrategy { strategy } => write!(
                f,
                "server-side assignment supports AVG and AVG_BY_CIRCLE only, not {strategy}"
            ),
            Self::OrderlyOnServer => f.write_str(
                "orderly consumers always rebalance on the client in RocketMQ \
                 (clientRebalance() is true for orderly consumption), so server-side \
                 assignment and orderly consumption are never combined",
            ),
            Self::ScenarioNeeds {
                scenario,
                size,
                min,
            } => write!(f, "{scenario} needs {min} or more {size}"),
            Self::OrderlyOnly { size } => {
                write!(f, "{size} is modelled with orderly consumption only")
            }
            Self::PopOnly { size } => {
                write!(f, "{size} is modelled with POP consumption (--consumption pop) only")
            }
            Self::FifoOnly { size } => write!(
                f,
                "{size} is modelled with a FIFO group of POP consumers (--consumption pop --orderly) only"
            ),
            Self::PopNeeds { needs } => write!(f, "POP consumption needs {needs}"),
            Self::MessagesOnly { size } => {
                write!(f, "{size} is modelled with messages only")
            }
            Self::Clients { reason } => f.write_str(reason),
            Self::VariantNeeds { variant, needs } => {
                write!(f, "the variant {variant} needs {needs}")
            }
            Self::VariantsExclude {
                first,
                second,
                reason,
            } => write!(f, "the variants {first} and {second} cannot go together: {reason}"),
            Self::StopsWithoutRestarts => f.write_str(
                "a restart's stopped phase needs a broker that restarts \
                 (broker restarts, disk losses or broker crashes)",
            ),
            Self::DowntimeWithoutStops => {
                f.write_str("a restart downtime needs the restart's stopped phase")
            }
            Self::RoundOrder { order } => write!(
                f,
                "a round's topic order must name each topic once, not {order:?}"
            ),
            Self::ScenarioNeedsOrderly { scenario } => {
                write!(f, "{scenario} needs orderly consumption")
            }
        }
    }
}

impl std::error::Error for ConfigError {}
