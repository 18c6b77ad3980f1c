//! The promises an allocation strategy makes about its answers, checked by
//! running it.

use rocketmq_rebalance::{rebalance_allocate_group, AllocateError, AllocateStrategy, MessageQueue};

/// Whether two runs of the whole-group call give the same answer.
pub fn is_deterministic(
    strategy: &dyn AllocateStrategy,
    queues: &[MessageQueue],
    consumers: &[String],
) -> bool {
    strategy.allocate_group("group", queues, consumers)
        == strategy.allocate_group("group", queues, consumers)
}

/// Whether the whole-group call equals one per-consumer call for each
/// consumer (both the answers and the first failure).
pub fn group_matches_per_consumer(
    strategy: &dyn AllocateStrategy,
    queues: &[MessageQueue],
    consumers: &[String],
) -> bool {
    let per_consumer: Result<Vec<Vec<&MessageQueue>>, AllocateError> = consumers
        .iter()
        .map(|c| strategy.allocate("group", c, queues, consumers))
        .collect();
    strategy.allocate_group("group", queues, consumers) == per_consumer
}

/// Whether the rebalance-level answer (after RocketMQ's sort) is the same for
/// both orders of the same lists.
pub fn is_order_independent(
    strategy: &dyn AllocateStrategy,
    queues: &[MessageQueue],
    consumers: &[String],
    queues_reordered: &[MessageQueue],
    consumers_reordered: &[String],
) -> bool {
    rebalance_allocate_group(strategy, "group", queues, consumers)
        == rebalance_allocate_group(strategy, "group", queues_reordered, consumers_reordered)
}
