//! Real runs, recorded once (`cluster/traces/`, `cluster/findings/`), judged
//! again without Java: the observer and the verdicts on traces RocketMQ
//! produced, so that a change to either is tested on real behaviour.

use std::path::Path;

use rocketmq_rebalance_cluster::observe::Observer;
use rocketmq_rebalance_cluster::outcome::Outcome;
use rocketmq_rebalance_cluster::script::{scenario_path, Script};
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_model::Status;

fn judge(script: &str, orderly: bool, trace_file: &str) -> Outcome {
    let script =
        Script::load(&scenario_path(script, orderly).expect("a script")).expect("it parses");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(trace_file);
    let text = std::fs::read_to_string(&path).expect("the trace reads");
    let events = trace::parse(&text).expect("a trace of this schema");
    let mut observer = Observer::for_script(&script);
    for e in &events {
        observer.apply(e);
    }
    Outcome::judge(&observer, observer.settled(2), script.orderly)
}

fn status(outcome: &Outcome, property: &str) -> Status {
    outcome
        .status(property)
        .unwrap_or_else(|| panic!("no {property}"))
}

#[test]
fn healthy_converges() {
    let o = judge("healthy", false, "traces/healthy.ndjson");
    assert!(o.settled);
    assert_eq!(status(&o, "converged when quiescent"), Status::Holds);
    assert_eq!(status(&o, "no queue stays double-owned"), Status::Holds);
    assert_eq!(status(&o, "no message skipped"), Status::Holds);
    assert_eq!(o.sent, 40);
    assert_eq!(status(&o, "member lists agree at rest"), Status::Holds);
}

#[test]
fn duplicate_client_id_leaves_a_block_double_owned_and_one_orphaned() {
    let o = judge(
        "duplicate-client-id",
        false,
        "traces/duplicate-client-id.ndjson",
    );
    assert_eq!(status(&o, "no queue stays double-owned"), Status::Violated);
    assert_eq!(status(&o, "converged when quiescent"), Status::Violated);
    assert_eq!(status(&o, "member lists agree at rest"), Status::Holds);
    assert!(o.never_delivered > 0, "the orphaned queue's messages stay");
}

#[test]
fn a_zombie_consumes_a_queue_its_successor_owns() {
    let o = judge("zombie-consumer", false, "traces/zombie-consumer.ndjson");
    assert_eq!(status(&o, "transient double ownership"), Status::Found);
    assert_eq!(
        status(&o, "no queue consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&o, "converged when quiescent"), Status::Holds);
    assert!(o.duplicates > 0);
    assert_eq!(status(&o, "member lists agree at rest"), Status::Holds);
}

#[test]
fn a_restarted_broker_grants_a_lock_its_holder_still_trusts() {
    let o = judge(
        "broker-restart",
        true,
        "traces/broker-restart-orderly.ndjson",
    );
    assert_eq!(
        status(&o, "no queue consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&o, "one live lock per queue"), Status::Violated);
    assert_eq!(status(&o, "converged when quiescent"), Status::Holds);
    assert_eq!(status(&o, "member lists agree at rest"), Status::Holds);
}

#[test]
fn a_query_that_overtakes_its_heartbeat_orphans_a_queue() {
    let o = judge(
        "broker-restart",
        true,
        "findings/broker-restart-orderly-query-before-heartbeat.ndjson",
    );
    assert_eq!(status(&o, "transient orphaned queue"), Status::Found);
    let orphan = o
        .properties
        .iter()
        .find(|p| p.name == "transient orphaned queue")
        .expect("judged");
    assert!(orphan.detail.contains("a0"), "{}", orphan.detail);
}
