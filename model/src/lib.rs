//! A model-checked specification of Apache RocketMQ's consumer-group
//! rebalance, in [Stateright](https://docs.rs/stateright).
//!
//! # The protocol in one page
//!
//! In clustering mode every consumer of a group decides on its own which
//! queues of a topic it consumes; there is no leader.
//!
//! - The **name server** holds each topic's route: which brokers host it and
//!   how many read queues each has. Consumers poll it every 30 s and turn the
//!   route into a list of queues.
//! - Each **broker** keeps its own table of the group's members, learnt from
//!   the heartbeats it receives (every 30 s, and at once when a consumer
//!   starts or its share changes). A heartbeat from a new member makes the
//!   broker send `NOTIFY_CONSUMER_IDS_CHANGED` to every member; a graceful
//!   shutdown (`UNREGISTER_CLIENT`) does too; a consumer that falls silent is
//!   removed after 120 s without a word to anyone. Brokers share nothing.
//! - Each **consumer** rebalances when notified and every 20 s: for each
//!   topic it asks one broker, picked at random, for the member list, sorts
//!   that list and its cached queue list, runs the allocation strategy for
//!   itself, drops the queues it no longer gets and starts on the new ones.
//!
//! Consumers agree only when they allocate from the same lists. While their
//! views differ a queue can be consumed by two of them or by nobody.
//!
//! # The model
//!
//! Each process is a sans-IO state machine (`src/protocol/`); the shell
//! (`src/shell/`) runs them over a simulated network, and consumers
//! allocate with the production code of [`rocketmq_rebalance`], so what is
//! checked is what ships. A run is configured ([`Config`]) by a
//! [`Scenario`], [`Sizes`] and budgets of faults (each fault is defined
//! once, in [`Fault::spec`](configuration::Fault::spec), and `docs/contributing.md` is the recipe for
//! adding one). The guarantees below are checked on every reachable state;
//! [`check()`] runs them, and liveness under fairness when asked, into a
//! [`Report`]. The searches Stateright does not do itself (shortest
//! counterexamples, fair cycles) are model-agnostic; the report describes
//! states and paths in RocketMQ's words, and [`view`] as data that the
//! explorer and the HTML report draw. `docs/spec.md` is the full
//! specification; its architecture table names every source file.
//!
//! # The API
//!
//! The modules that hold the code are private: what the crate exposes is
//! the API, all that the command line (`cli/`), the real-cluster runs
//! (`cluster/`) and the examples use, so that code moves between modules
//! without breaking them. A caller starts at the root and finds the rest
//! grouped by what it is for:
//!
//! - Checking, at the root: [`check_strategy`], [`check()`],
//!   [`check_model`] with [`checked_model`] (for a caller that keeps the
//!   model to replay the report's paths), [`build_model`],
//!   [`CheckOptions`], [`Search`], [`Progress`].
//! - The report, in [`report`]: [`Report`],
//!   [`PropertyReport`](report::PropertyReport),
//!   [`Status`](report::Status), [`Expectation`](report::Expectation),
//!   [`Stopped`](report::Stopped), [`LivenessStats`](report::LivenessStats),
//!   [`Harms`](report::Harms), and the names of the properties (the
//!   table below).
//! - The configuration, in [`configuration`]: [`Config`],
//!   [`Scenario`],
//!   [`Sizes`] and [`Size`](configuration::Size),
//!   [`NetworkKind`],
//!   [`ProtocolOptions`](configuration::ProtocolOptions) (with
//!   [`LockTiming`](configuration::LockTiming) and the protocol's
//!   choices), each consumer's client
//!   ([`ClientChoices`](configuration::ClientChoices), ...), the faults
//!   ([`Fault`](configuration::Fault), described by its
//!   [`FaultSpec`](configuration::FaultSpec)), the protocol variants
//!   ([`Variant`](configuration::Variant), and their catalogue in
//!   [`variants`]), and a typed error for each
//!   ([`ConfigError`], ...).
//! - Trace validation, in [`validation`]: [`conform`](validation::conform) decides whether the
//!   [`Observation`](validation::Observation)s of a real run are a
//!   behaviour of the model, within its [`Bounds`](validation::Bounds),
//!   and says why not ([`Conformance`](validation::Conformance),
//!   [`Verdict`](validation::Verdict)).
//! - The model as Stateright sees it: [`RebalanceModel`], whose states are
//!   [`SystemState`] and steps [`Action`] (their fields are the model's
//!   internals); a state and a path as data ([`view`]), and a path's
//!   message sequence drawn ([`sequence_svg`]).
//!
//! The model's own tests reach further, into the machines, the shell and
//! the searches, through a module hidden from these docs (`internals`),
//! which is not the API and changes with any commit.
//!
//! # The properties
//!
//! Every property the checker reports, under its name in the report (each
//! name a constant in [`report`], and a contract): `always` must hold
//! in every state, `sometimes` must be reached by some state (proving the
//! model reaches the hazard), `eventually` must hold on every fair run
//! (`--liveness`). A property of a part of the model that is not modelled
//! is not checked, nor reported.
//!
//! | property | expectation (part) | promise |
//! |---|---|---|
//! | `no queue stays double-owned` ([`NO_DOUBLE_OWNERSHIP`](report::NO_DOUBLE_OWNERSHIP)) | always (push) | at rest, no queue is consumed by two live consumers |
//! | `converged when quiescent` ([`CONVERGED_WHEN_QUIESCENT`](report::CONVERGED_WHEN_QUIESCENT)) | always | at rest, the group agrees and every queue has exactly one owner (with POP, each live consumer consumes what its broker assigns it, and every queue is consumed) |
//! | `member lists agree at rest` ([`AGREE_AT_REST`](report::AGREE_AT_REST)) | always | when messages stop, no broker a consumer may ask contradicts the member list it used |
//! | `every call answered or failed` ([`EVERY_CALL_ENDS`](report::EVERY_CALL_ENDS)) | always | no consumer waits for an answer that can no longer come: each call it waits on, its answer or its failure is still on its way |
//! | `transient double ownership` ([`TRANSIENT_DOUBLE`](report::TRANSIENT_DOUBLE)) | sometimes (push) | some state has a queue consumed by two live consumers |
//! | `transient orphaned queue` ([`TRANSIENT_ORPHAN`](report::TRANSIENT_ORPHAN)) | sometimes (push) | some state has a queue of the route in force consumed by nobody, after a subscriber rebalanced |
//! | `full convergence` ([`FULL_CONVERGENCE`](report::FULL_CONVERGENCE)) | sometimes | some state is at rest and converged, every consumer started |
//! | `converges and stays converged` ([`CONVERGES`](report::CONVERGES)) | eventually | every fair run ends converged, for ever |
//! | `no message skipped` ([`NO_MESSAGE_SKIPPED`](report::NO_MESSAGE_SKIPPED)) | always (`--messages`) | every message below its queue's committed offset was delivered at least once (with POP, every acknowledged message) |
//! | `duplicate delivery` ([`DUPLICATE_DELIVERY`](report::DUPLICATE_DELIVERY)) | sometimes (`--messages`) | some message is delivered twice |
//! | `paused queue` ([`PAUSED_QUEUE`](report::PAUSED_QUEUE)) | sometimes (`--messages`) | some queue with a message waiting is consumed by nobody, after a subscriber rebalanced |
//! | `no stall past the bound` ([`NO_LONG_STALL`](report::NO_LONG_STALL)) | always (`--messages`, with `--max-stall K`) | no queue with a message waits more than K (ticks of the orderly clock, else steps of its owner) while a live consumer owns it; decided on the harms' graph |
//! | `every message consumed` ([`EVERY_MESSAGE_CONSUMED`](report::EVERY_MESSAGE_CONSUMED)) | eventually (`--messages`) | every fair run delivers every message of every topic a live consumer subscribes to |
//! | `no message consumed before an earlier one` ([`IN_ORDER`](report::IN_ORDER)) | always (`--consumption pop --orderly`) | in every state, a running batch of a queue starts after every earlier message of the queue was delivered |
//! | `queue blocked by an abandoned pop` ([`BLOCKED_BY_ABANDONED_POP`](report::BLOCKED_BY_ABANDONED_POP)) | sometimes (`--consumption pop --orderly`) | some queue's pop is refused while the handle that blocks it is one nobody will run, acknowledge or re-enter: the queue waits out its invisible time, though a consumer pops it |
//! | `no queue consumed by two at once` ([`NO_CONCURRENT_CONSUMPTION`](report::NO_CONCURRENT_CONSUMPTION)) | always (`--orderly`) | in every state, no queue has a batch running at two live consumers |
//! | `no message consumed by two at once` ([`NO_MESSAGE_RUN_TWICE`](report::NO_MESSAGE_RUN_TWICE)) | always (`--consumption pop`) | in every state, no message is in batches running at two consumers |
//! | `one live lock per queue` ([`ONE_LIVE_LOCK`](report::ONE_LIVE_LOCK)) | always (`--orderly`) | no two live consumers trust a lock of one queue at once |
//! | `every queue consumed again` ([`EVERY_QUEUE_CONSUMED_AGAIN`](report::EVERY_QUEUE_CONSUMED_AGAIN)) | eventually (`--orderly`) | every fair run ends with every subscribed queue held, under a trusted lock, by the consumer it is allocated to |
//!
//! # Check your own strategy
//!
//! ```no_run
//! use rocketmq_rebalance_model::{check_strategy, CheckOptions, configuration::Scenario};
//! let strategy = rocketmq_rebalance::strategy_from_name("AVG").unwrap();
//! let options = CheckOptions { liveness: true, ..CheckOptions::default() };
//! let report = check_strategy(strategy.into(), Scenario::Healthy, None, &options).unwrap();
//! assert!(report.guarantees_hold(), "{report:#?}");
//! ```
#![forbid(unsafe_code)]

// Every module but `view` is private: the API is what this file re-exports,
// so that moving code between modules breaks no user (as ripgrep's
// `globset` does).
// `config` comes first, as its `dense_enum!` is used by the modules after it.
#[macro_use]
mod config;
mod check;
mod conform;
mod explorer;
mod guarantees;
mod model;
mod protocol;
mod search;
mod shell;
mod trace;
pub mod view;

// The API: what a caller starts from at the root, and the rest grouped
// by what it is for.
pub use check::{check, check_model, checked_model, serve_check, CheckOptions, Progress, Search};
pub use explorer::{sequence_svg, Svg};
pub use model::build_model;
pub use search::budget::default_memory;
pub use search::dataflow::Workers;
pub use search::Cutoff;
pub use shell::{Action, RebalanceModel, SystemState};

/// What a run is: the scenario, the sizes and budgets, the network, the
/// protocol's options and variants, each consumer's client, the faults,
/// and a typed error for each thing a configuration can get wrong.
pub mod configuration {
    pub use crate::config::{
        shown_id, Allocator, Call, CallSet, Client, ClientChoice, ClientChoices, ClientKind,
        Commit, Config, ConfigError, ConsumeFrom, Consumption, Dense, DenseIter, Effect, Fault,
        FaultSpec, Layer, LockTiming, NetworkKind, Pick, PopClient, ProtocolOptions, Release,
        Scenario, Size, Sizes, Target, UnknownAllocator, UnknownCommit, UnknownConsumeFrom,
        UnknownConsumption, UnknownNetwork, UnknownPopClient, UnknownRelease, UnknownScenario,
        UnknownVariant, Variant, VariantKind, VariantSet,
    };
}

/// What a check says: each property's verdict, under its name (the
/// crate's documentation has the table), how the run ended, the liveness
/// graph's figures and the harms.
pub mod report {
    pub use crate::check::harms::{Harm, Harms};
    pub use crate::check::{
        Expectation, FingerprintBits, LivenessStats, PropertyReport, Report, Status, Stopped,
    };
    pub use crate::guarantees::{
        AGREE_AT_REST, BLOCKED_BY_ABANDONED_POP, CONVERGED_WHEN_QUIESCENT, CONVERGES,
        DUPLICATE_DELIVERY, EVERY_CALL_ENDS, EVERY_MESSAGE_CONSUMED, EVERY_QUEUE_CONSUMED_AGAIN,
        FULL_CONVERGENCE, IN_ORDER, NO_CONCURRENT_CONSUMPTION, NO_DOUBLE_OWNERSHIP, NO_LONG_STALL,
        NO_MESSAGE_RUN_TWICE, NO_MESSAGE_SKIPPED, ONE_LIVE_LOCK, PAUSED_QUEUE, TRANSIENT_DOUBLE,
        TRANSIENT_ORPHAN,
    };
}

/// Trace validation: whether the observations of a real run are a
/// behaviour of the model, within its bounds, and why not.
pub mod validation {
    pub use crate::conform::{
        conform, fault_name, observable_fault, Bounds, Conformance, End, Observation, Observed,
        Unseen, Verdict, CONFORMS,
    };
}

/// The protocol variants' catalogue: each entry and its demonstration.
pub mod variants {
    pub use crate::config::{Demonstration, Entry, HarmFigures, Needs, Releases, Verdicts};
}

/// Not the API: what the model's own tests (`model/tests/`) reach into,
/// the machines, the shell's parts, the searches and the guarantees'
/// definitions. It may change with any commit.
#[doc(hidden)]
pub mod internals {
    pub use crate::check::liveness::{fairness, timer_fairness, Fairness, RebalanceFairness};
    pub use crate::config::Route;
    pub use crate::guarantees::{Group, LIVENESS, MEASURED, PROPERTIES};
    pub use crate::protocol::consumer::Query;
    pub use crate::protocol::message::NO_OFFSET;
    pub use crate::protocol::{
        BrokerState, ConsumerState, Input, Machine, Message, NameServerState, Output, Peer, Phase,
        ProcessQueue, SendBack, Timer,
    };
    pub use crate::search::intern::Interner;
    pub use crate::search::packed::Codec;
    pub use crate::search::{
        find_fair_cycle_missing, fingerprint, path_of, replay, Classify, Graph, Limits, Packing,
        STRONG,
    };
    pub use crate::shell::fingerprint::Part;
    pub use crate::shell::Envelope;
    pub use crate::trace::describe_path;
}

use check::Report;
use config::{Config, ConfigError, NetworkKind, Scenario, Sizes};
use rocketmq_rebalance::AllocateStrategy;
use std::sync::Arc;

/// Checks `scenario` (with its default sizes unless `sizes` is given) on
/// the ordered network with `strategy`, silently; liveness too when
/// `options.liveness` asks for it.
pub fn check_strategy(
    strategy: Arc<dyn AllocateStrategy>,
    scenario: Scenario,
    sizes: Option<Sizes>,
    options: &CheckOptions,
) -> Result<Report, ConfigError> {
    let sizes = sizes.unwrap_or_else(|| scenario.default_sizes());
    let cfg = Config::new(scenario, sizes, NetworkKind::Ordered, strategy)?;
    Ok(check(cfg, options, |_| {}))
}
