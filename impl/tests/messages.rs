//! The text of every failure: Java's exception messages for allocation
//! errors, and this crate's own for names and parameters it refuses.

use rocketmq_rebalance::conformance::CaseError;
use rocketmq_rebalance::strategy::StrategySpec;
use rocketmq_rebalance::{AllocateError, MessageQueue, UnknownStrategy};

#[test]
fn allocation_errors_read_as_javas_exception_messages() {
    let queue = MessageQueue::new("T", "hz-broker-a", 3);
    let cases = [
        (AllocateError::EmptyCurrentId, "currentCID is empty"),
        (AllocateError::EmptyQueues, "mqAll is null or mqAll empty"),
        (
            AllocateError::EmptyConsumers,
            "cidAll is null or cidAll empty",
        ),
        (
            AllocateError::NoBrokerMachineRoom(queue),
            "Machine room is null for mq MessageQueue [topic=T, brokerName=hz-broker-a, queueId=3]",
        ),
        (
            AllocateError::NoConsumerMachineRoom("-c1".into()),
            "Machine room is null for consumer id -c1",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn a_go_ring_without_points_reads_as_gos_panic() {
    assert_eq!(
        AllocateError::NoVirtualNodes.to_string(),
        "runtime error: integer divide by zero"
    );
}

#[test]
fn an_unknown_strategy_name_lists_the_known_ones() {
    assert_eq!(
        UnknownStrategy("avg".into()).to_string(),
        "unknown strategy \"avg\"; known: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG, \
         MACHINE_ROOM, MACHINE_ROOM_NEARBY, STICKY"
    );
}

#[test]
fn a_case_error_reads_as_the_error_it_wraps() {
    let unknown = CaseError::from(UnknownStrategy("NOPE".into()));
    assert_eq!(
        unknown,
        CaseError::UnknownStrategy(UnknownStrategy("NOPE".into()))
    );
    assert_eq!(
        unknown.to_string(),
        UnknownStrategy("NOPE".into()).to_string()
    );
    let refused = StrategySpec::Averagely.with_virtual_nodes(3).unwrap_err();
    let parameter = CaseError::from(refused.clone());
    assert_eq!(parameter, CaseError::Parameter(refused));
    assert_eq!(
        parameter.to_string(),
        "virtual_nodes does not apply to strategy AVG"
    );
}

#[test]
fn a_refused_parameter_names_the_parameter_and_the_strategy() {
    let error = StrategySpec::ConsistentHash { virtual_nodes: 10 }
        .with_consumer_rooms(["hz"])
        .unwrap_err();
    assert_eq!(error.parameter, "consumer_idcs");
    assert_eq!(error.strategy, "CONSISTENT_HASH");
    assert_eq!(
        error.to_string(),
        "consumer_idcs does not apply to strategy CONSISTENT_HASH"
    );
}
