//! The conformance case format on its own: what a case means, what `run`
//! answers and when two answers agree.

use rocketmq_rebalance::conformance::{CallResult, Case, CaseError};
use rocketmq_rebalance::strategy::{ParameterError, StrategySpec};
use rocketmq_rebalance::{MessageQueue, UnknownStrategy};

fn case(strategy: &str, sort: bool, queues: Vec<MessageQueue>, consumers: &[&str]) -> Case {
    Case {
        strategy: strategy.into(),
        sort,
        order: Default::default(),
        virtual_nodes: None,
        consumer_idcs: None,
        queues,
        consumers: consumers.iter().map(|c| c.to_string()).collect(),
        results: consumers
            .iter()
            .map(|c| CallResult::expect_queues(*c, vec![]))
            .collect(),
    }
}

fn unsorted_queues() -> Vec<MessageQueue> {
    vec![
        MessageQueue::new("T", "broker-b", 0),
        MessageQueue::new("T", "broker-a", 1),
        MessageQueue::new("T", "broker-a", 0),
    ]
}

fn error(current: &str, message: &str) -> CallResult {
    CallResult {
        current: current.into(),
        queues: None,
        error: Some(message.into()),
    }
}

#[test]
fn expect_queues_is_a_call_without_error() {
    assert_eq!(
        CallResult::expect_queues("c1", vec![2, 0]),
        CallResult {
            current: "c1".into(),
            queues: Some(vec![2, 0]),
            error: None,
        }
    );
}

#[test]
fn answers_agree_on_the_same_queues_in_the_same_order_or_on_any_two_errors() {
    let queues = |q: Vec<usize>| CallResult::expect_queues("c1", q);
    assert!(queues(vec![0, 2]).agrees_with(&queues(vec![0, 2])));
    assert!(!queues(vec![0, 2]).agrees_with(&queues(vec![2, 0])));
    assert!(!queues(vec![0, 2]).agrees_with(&queues(vec![0])));
    // No `queues` field reads as no queues.
    let nothing = CallResult {
        current: "c1".into(),
        queues: None,
        error: None,
    };
    assert!(queues(vec![]).agrees_with(&nothing));
    assert!(!queues(vec![1]).agrees_with(&nothing));
    // Errors agree whatever their text; an error never agrees with queues.
    assert!(error("c1", "currentCID is empty").agrees_with(&error("c1", "other")));
    assert!(!error("c1", "mqAll is null or mqAll empty").agrees_with(&queues(vec![])));
    assert!(!queues(vec![]).agrees_with(&error("c1", "mqAll is null or mqAll empty")));
}

#[test]
fn a_sorted_case_answers_indices_into_the_unsorted_list() {
    let ours = case("AVG", true, unsorted_queues(), &["c2", "c1"])
        .run()
        .unwrap();
    // Sorted: a0 a1 b0 and c1 c2; c1 takes a0 a1, c2 takes b0.
    assert_eq!(ours[0], CallResult::expect_queues("c2", vec![0]));
    assert_eq!(ours[1], CallResult::expect_queues("c1", vec![2, 1]));
}

#[test]
fn an_unsorted_case_calls_the_strategy_on_the_lists_as_given() {
    let ours = case("AVG", false, unsorted_queues(), &["c2", "c1"])
        .run()
        .unwrap();
    assert_eq!(ours[0], CallResult::expect_queues("c2", vec![0, 1]));
    assert_eq!(ours[1], CallResult::expect_queues("c1", vec![2]));
}

#[test]
fn a_queue_listed_twice_is_reported_at_its_first_index() {
    let mut queues = unsorted_queues();
    queues.push(queues[0].clone());
    let ours = case("AVG", false, queues, &["c1"]).run().unwrap();
    assert_eq!(ours[0], CallResult::expect_queues("c1", vec![0, 1, 2, 0]));
}

#[test]
fn failures_are_reported_with_javas_message() {
    let mut empty_id = case("AVG_BY_CIRCLE", true, unsorted_queues(), &["c1"]);
    empty_id.results = vec![CallResult::expect_queues("", vec![])];
    assert_eq!(empty_id.run().unwrap(), [error("", "currentCID is empty")]);
}

#[test]
fn a_negative_virtual_node_count_fails_every_call_as_java_does() {
    let mut ring = case("CONSISTENT_HASH", true, unsorted_queues(), &["c1", "c2"]);
    ring.virtual_nodes = Some(-2);
    assert_eq!(ring.spec(), Ok(Err("illegal virtualNodeCnt :-2".into())));
    assert_eq!(
        ring.run().unwrap(),
        [
            error("c1", "illegal virtualNodeCnt :-2"),
            error("c2", "illegal virtualNodeCnt :-2")
        ]
    );
    // Zero is legal: an empty ring that gives nobody anything.
    ring.virtual_nodes = Some(0);
    assert_eq!(
        ring.spec(),
        Ok(Ok(StrategySpec::ConsistentHash { virtual_nodes: 0 }))
    );
    assert_eq!(
        ring.run().unwrap(),
        [
            CallResult::expect_queues("c1", vec![]),
            CallResult::expect_queues("c2", vec![])
        ]
    );
}

#[test]
fn parameters_reach_the_strategy_they_belong_to() {
    let mut rooms = case(
        "MACHINE_ROOM",
        true,
        vec![
            MessageQueue::new("T", "hz@broker-a", 0),
            MessageQueue::new("T", "sh@broker-b", 0),
        ],
        &["c1"],
    );
    rooms.consumer_idcs = Some(vec!["sh".into()]);
    assert_eq!(
        rooms.spec(),
        Ok(Ok(StrategySpec::ByMachineRoom {
            consumer_rooms: vec!["sh".into()]
        }))
    );
    assert_eq!(
        rooms.run().unwrap(),
        [CallResult::expect_queues("c1", vec![1])]
    );
}

#[test]
fn a_misplaced_parameter_or_an_unknown_name_makes_a_case_unreadable() {
    let mut avg = case("AVG", true, unsorted_queues(), &["c1"]);
    avg.virtual_nodes = Some(-1);
    let misplaced = CaseError::Parameter(ParameterError {
        parameter: "virtual_nodes",
        strategy: "AVG".into(),
    });
    assert_eq!(avg.spec(), Err(misplaced.clone()));
    assert_eq!(avg.run(), Err(misplaced));
    let unknown = case("avg", true, unsorted_queues(), &["c1"]);
    assert_eq!(
        unknown.run(),
        Err(CaseError::UnknownStrategy(UnknownStrategy("avg".into())))
    );
}
