//! The guarantees checked on every reachable state, named after what they
//! promise ([`PROPERTIES`]), and the notions they rest on ([`group`]).

pub mod group;

pub use group::Group;

use stateright::Expectation;

use crate::config::Layer;
use crate::protocol::Phase;
use crate::shell::{RebalanceModel, SystemState};

/// One property of the model.
pub struct ModelProperty {
    /// The guarantee, as reported.
    pub name: &'static str,
    /// The part of the model it speaks of.
    pub layer: Layer,
    /// Always (a counterexample is a failure) or sometimes (an example is
    /// required, proving the model reaches the hazard).
    pub expectation: Expectation,
    /// The predicate on one state.
    pub condition: fn(&RebalanceModel, &SystemState) -> bool,
}

/// Name of the safety property: at rest, no queue is consumed twice.
pub const NO_DOUBLE_OWNERSHIP: &str = "no queue stays double-owned";
/// Name of the convergence property: at rest, the group agrees.
pub const CONVERGED_WHEN_QUIESCENT: &str = "converged when quiescent";
/// Name of the agreement property: at rest, every broker a consumer may ask
/// lists what it last used, so its periodic rebalance has nothing to do.
pub const AGREE_AT_REST: &str = "member lists agree at rest";
/// Name of the guarantee that no state waits for an answer that can no
/// longer come: every call a consumer waits on is still on its way, or its
/// answer is, or the failure that ends it (its connection closed, or
/// refused).
pub const EVERY_CALL_ENDS: &str = "every call answered or failed";
/// Name of the example of transient double ownership.
pub const TRANSIENT_DOUBLE: &str = "transient double ownership";
/// Name of the example of a transient orphaned queue.
pub const TRANSIENT_ORPHAN: &str = "transient orphaned queue";
/// Name of the example of full convergence.
pub const FULL_CONVERGENCE: &str = "full convergence";
/// Name of the liveness property (checked by the fair-cycle search, not by
/// Stateright: the liveness check runs it).
pub const CONVERGES: &str = "converges and stays converged";
/// Name of the safety property of offsets: no message below a committed
/// offset was left undelivered.
pub const NO_MESSAGE_SKIPPED: &str = "no message skipped";
/// Name of the example of a message delivered twice.
pub const DUPLICATE_DELIVERY: &str = "duplicate delivery";
/// Name of the example of a queue with messages waiting that nobody
/// consumes.
pub const PAUSED_QUEUE: &str = "paused queue";
/// Name of the bound on stalls (`--max-stall K`, checked with the harms):
/// no queue with a message waits longer than K, in the stall's unit, while
/// a live consumer owns it.
pub const NO_LONG_STALL: &str = "no stall past the bound";
/// Name of the liveness property of messages (the liveness check runs it).
pub const EVERY_MESSAGE_CONSUMED: &str = "every message consumed";
/// Name of orderly consumption's promise: never two batches of one queue at
/// once, in any state.
pub const NO_CONCURRENT_CONSUMPTION: &str = "no queue consumed by two at once";
/// Name of POP's promise: a message's handle is one consumer's until it
/// expires, so no two batches run one message at once.
pub const NO_MESSAGE_RUN_TWICE: &str = "no message consumed by two at once";
/// Name of a FIFO group's promise: a batch of a queue starts only once
/// every earlier message of the queue was delivered.
pub const IN_ORDER: &str = "no message consumed before an earlier one";
/// Name of the example of a FIFO queue that waits for the invisible time
/// of a pop nobody will consume, while a consumer pops it.
pub const BLOCKED_BY_ABANDONED_POP: &str = "queue blocked by an abandoned pop";
/// Name of the lock promise: no two live consumers trust a lock of one
/// queue at once.
pub const ONE_LIVE_LOCK: &str = "one live lock per queue";
/// Name of orderly consumption's liveness property (the liveness check runs
/// it).
pub const EVERY_QUEUE_CONSUMED_AGAIN: &str = "every queue consumed again";

/// The `eventually` properties, which the liveness check's fair-cycle
/// search decides (`--liveness`), in report order: property `i` is the
/// check's goal bit `i`, checked when its part of the model is modelled.
pub const LIVENESS: &[(&str, Layer)] = &[
    (CONVERGES, Layer::Rebalance),
    (EVERY_MESSAGE_CONSUMED, Layer::Messages),
    (EVERY_QUEUE_CONSUMED_AGAIN, Layer::Orderly),
];

/// The properties the harms measure decides after an exhaustive check,
/// when asked (`--max-stall K` bounds the longest stall).
pub const MEASURED: &[(&str, Layer)] = &[(NO_LONG_STALL, Layer::Messages)];

/// The properties `model` checks: those of the parts it models.
pub fn checked(model: &RebalanceModel) -> impl Iterator<Item = &'static ModelProperty> + '_ {
    PROPERTIES
        .iter()
        .filter(|p| p.layer.modelled_with(&model.cfg.sizes, &model.cfg.protocol))
}

/// Every property Stateright checks, in report order.
pub const PROPERTIES: &[ModelProperty] = &[
    ModelProperty {
        name: NO_DOUBLE_OWNERSHIP,
        layer: Layer::Ownership,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.quiescent() || !g.some_double_owned()
        },
    },
    ModelProperty {
        name: CONVERGED_WHEN_QUIESCENT,
        layer: Layer::Rebalance,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.quiescent() || g.converged()
        },
    },
    ModelProperty {
        name: AGREE_AT_REST,
        layer: Layer::Rebalance,
        expectation: Expectation::Always,
        condition: |model, state| {
            let g = Group::of(model, state);
            !g.settled() || g.periodic_work_is_no_op()
        },
    },
    ModelProperty {
        name: EVERY_CALL_ENDS,
        layer: Layer::Rebalance,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).every_call_ends(),
    },
    ModelProperty {
        name: TRANSIENT_DOUBLE,
        layer: Layer::Ownership,
        expectation: Expectation::Sometimes,
        // Evaluated on every state for the whole run, so an exact bit test
        // rather than the `properties` crate, which decides the guarantee.
        condition: |model, state| Group::of(model, state).held_twice() != 0,
    },
    ModelProperty {
        name: TRANSIENT_ORPHAN,
        layer: Layer::Ownership,
        expectation: Expectation::Sometimes,
        condition: |model, state| Group::of(model, state).has_orphan_after_rebalance(),
    },
    ModelProperty {
        name: FULL_CONVERGENCE,
        layer: Layer::Rebalance,
        expectation: Expectation::Sometimes,
        condition: |model, state| {
            let g = Group::of(model, state);
            g.live() != 0
                && g.consumers().all(|c| c.phase != Phase::Idle)
                && g.quiescent()
                && g.converged()
        },
    },
    ModelProperty {
        name: NO_MESSAGE_SKIPPED,
        layer: Layer::Messages,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).no_message_skipped(),
    },
    ModelProperty {
        name: DUPLICATE_DELIVERY,
        layer: Layer::Messages,
        expectation: Expectation::Sometimes,
        condition: |model, state| Group::of(model, state).max_deliveries() >= 2,
    },
    ModelProperty {
        name: PAUSED_QUEUE,
        layer: Layer::Messages,
        expectation: Expectation::Sometimes,
        condition: |model, state| Group::of(model, state).paused_queues() != 0,
    },
    ModelProperty {
        name: NO_MESSAGE_RUN_TWICE,
        layer: Layer::Pop,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).messages_run_twice() == 0,
    },
    ModelProperty {
        name: IN_ORDER,
        layer: Layer::Fifo,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).out_of_order() == 0,
    },
    ModelProperty {
        name: BLOCKED_BY_ABANDONED_POP,
        layer: Layer::Fifo,
        expectation: Expectation::Sometimes,
        condition: |model, state| Group::of(model, state).blocked_by_abandoned_pops() != 0,
    },
    ModelProperty {
        name: NO_CONCURRENT_CONSUMPTION,
        layer: Layer::Sequential,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).consumed_by_two() == 0,
    },
    ModelProperty {
        name: ONE_LIVE_LOCK,
        layer: Layer::Orderly,
        expectation: Expectation::Always,
        condition: |model, state| Group::of(model, state).trusted_twice() == 0,
    },
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{LIVENESS, MEASURED, PROPERTIES};

    /// The names declared here (`pub const NAME: &str = "name";`), read
    /// from the source so that a new one cannot be left out of the lists.
    fn declared() -> BTreeSet<&'static str> {
        include_str!("mod.rs")
            .lines()
            .filter(|line| line.starts_with("pub const ") && line.contains(": &str = \""))
            .map(|line| line.split('"').nth(1).expect("a quoted name"))
            .collect()
    }

    /// The first cell of each row of the crate doc's table of properties.
    fn crate_doc_rows() -> BTreeSet<&'static str> {
        let doc = include_str!("../lib.rs");
        let table = doc
            .split("//! # The properties")
            .nth(1)
            .expect("the crate doc has a section of properties");
        // The heading's own line first, then the section to the doc's end.
        table
            .lines()
            .skip(1)
            .take_while(|line| line.starts_with("//!"))
            .filter(|line| line.starts_with("//! | `"))
            .map(|line| line.split('`').nth(1).expect("a name in backticks"))
            .collect()
    }

    /// Every name is a property the report has (Stateright's or the
    /// liveness check's), and every one has a row in the crate doc's
    /// table, which lists nothing else: the table went stale silently
    /// before (4 rows of 14).
    #[test]
    fn the_crate_docs_table_lists_every_property_reported() {
        let reported: BTreeSet<&str> = PROPERTIES
            .iter()
            .map(|p| p.name)
            .chain(LIVENESS.iter().chain(MEASURED).map(|&(name, _)| name))
            .collect();
        assert_eq!(declared(), reported, "declared names against the report's");
        assert_eq!(
            crate_doc_rows(),
            reported,
            "src/lib.rs's table against the report's"
        );
    }
}
