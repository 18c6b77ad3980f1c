//! Real runs, recorded once (`cluster/tests/traces/`, `cluster/tests/findings/`), judged
//! again without Java: the observer and the verdicts on traces RocketMQ
//! produced, so that a change to either is tested on real behaviour.

use std::path::Path;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_cluster::harms;
use rocketmq_rebalance_cluster::observe::Observer;
use rocketmq_rebalance_cluster::outcome::{compare, Outcome};
use rocketmq_rebalance_cluster::script::{scenario_path, Script};
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_model::{check_strategy, CheckOptions, Scenario, Status};

/// The script, the trace's events and the observer that folded them.
fn fold(script: &Path, trace_file: &str) -> (Script, Vec<trace::Event>, Observer) {
    let script = Script::load(script).expect("it parses");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(trace_file);
    let text = std::fs::read_to_string(&path).expect("the trace reads");
    let events = trace::parse(&text).expect("a trace of this schema");
    let mut observer = Observer::for_script(&script);
    for e in &events {
        observer.apply(e);
    }
    (script, events, observer)
}

fn judge(script: &str, orderly: bool, trace_file: &str) -> Outcome {
    let (script, _, observer) = fold(
        &scenario_path(script, orderly).expect("a script"),
        trace_file,
    );
    Outcome::judge(&observer, observer.settled(2), script.orderly)
}

#[test]
fn a_subscription_table_that_flaps_never_lets_the_group_rest_and_agrees_with_the_model() {
    let (script, _, observer) = fold(
        &scenario_path("subscription-flap", false).expect("a script"),
        "tests/traces/subscription-flap.ndjson",
    );
    let o = Outcome::judge(&observer, observer.settled(2), false);
    assert_eq!(
        o.first_at_rest_s, None,
        "every flip is a change still to come"
    );
    assert_eq!(status(&o, "converged when quiescent"), Status::Unknown);
    assert_eq!(status(&o, "transient orphaned queue"), Status::Found);
    assert_eq!(
        (o.sent, o.never_delivered),
        (12, 12),
        "pulls fail while the table lacks TopicTest"
    );
    let report = check_strategy(
        strategy_from_name("AVG").expect("AVG").into(),
        Scenario::SubscriptionFlap,
        None,
        &CheckOptions::default(),
    )
    .expect("a valid configuration");
    assert!(!script.rests);
    assert!(
        compare(&report, &o, &script).is_empty(),
        "{:?}",
        compare(&report, &o, &script)
    );
    // A script that says the model's group rests calls the same run a mismatch.
    let rests = Script {
        rests: true,
        ..script
    };
    assert!(!compare(&report, &o, &rests).is_empty());
}

#[test]
fn a_kill_under_load_hands_its_queues_over_within_a_second() {
    let path = rocketmq_rebalance_cluster::script::harms_path("kill").expect("the kill script");
    let (_, events, observer) = fold(&path, "tests/traces/harms-kill.ndjson");
    let h = harms::measure(&events, &observer, Script::TOPIC);
    let moved: Vec<(&str, &str, &str)> = h
        .hand_overs
        .iter()
        .map(|o| (o.queue.as_str(), o.from.as_str(), o.to.as_str()))
        .collect();
    assert_eq!(
        moved,
        [
            ("broker-a:0", "c1", "c2"),
            ("broker-a:1", "c1", "c2"),
            ("broker-b:0", "c2", "c3")
        ]
    );
    for o in &h.hand_overs {
        assert_eq!(o.after.as_deref(), Some("kill c1"));
        let pause = o.pause_s.expect("the new owner delivered");
        assert!((0.0..1.5).contains(&pause), "{o:?}");
    }
    // The killed consumer's last batch ends with it: nobody consumed a queue
    // at once with a dead process.
    assert!(h.consumed_by_two.is_empty(), "{:?}", h.consumed_by_two);
    let backlog = h.backlog.expect("a load ran");
    assert!(backlog.peak > backlog.steady, "{backlog:?}");
}

fn status(outcome: &Outcome, property: &str) -> Status {
    outcome
        .status(property)
        .unwrap_or_else(|| panic!("no {property}"))
}

#[test]
fn healthy_converges() {
    let o = judge("healthy", false, "tests/traces/healthy.ndjson");
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
        "tests/traces/duplicate-client-id.ndjson",
    );
    assert_eq!(status(&o, "no queue stays double-owned"), Status::Violated);
    assert_eq!(status(&o, "converged when quiescent"), Status::Violated);
    assert_eq!(status(&o, "member lists agree at rest"), Status::Holds);
    assert!(o.never_delivered > 0, "the orphaned queue's messages stay");
}

#[test]
fn a_zombie_consumes_a_queue_its_successor_owns() {
    let o = judge(
        "zombie-consumer",
        false,
        "tests/traces/zombie-consumer.ndjson",
    );
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
        "tests/traces/broker-restart-orderly.ndjson",
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
        "tests/findings/broker-restart-orderly-query-before-heartbeat.ndjson",
    );
    assert_eq!(status(&o, "transient orphaned queue"), Status::Found);
    let orphan = o
        .properties
        .iter()
        .find(|p| p.name == "transient orphaned queue")
        .expect("judged");
    assert!(orphan.detail.contains("a0"), "{}", orphan.detail);
}

/// `rebalance cluster --random 15`: three consumers start, settle, and
/// `c3` shuts down. During the start `c3`'s first rounds saw a list
/// without itself, so the group settled before it was balanced, and `c3`
/// then took `b1` while `c2` still held it. The model starts from the
/// balanced group, which never has that moment; counted from the first
/// settling, the run "found" a transient double ownership the model says
/// a leave never has. Counted from the model's initial state it finds
/// none, as the model.
#[test]
fn a_leave_counts_its_hazards_from_the_balanced_group_not_from_its_cold_start() {
    let script = rocketmq_rebalance_cluster::random::random_script(15).expect("seed 15");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/traces/random-15-leave.ndjson");
    let text = std::fs::read_to_string(&path).expect("the trace reads");
    let mut observer = Observer::for_script(&script);
    for e in &trace::parse(&text).expect("a trace of this schema") {
        observer.apply(e);
    }
    let o = Outcome::judge(&observer, observer.settled(2), script.orderly);
    assert_eq!(status(&o, "transient double ownership"), Status::NotFound);
    assert_eq!(status(&o, "no queue stays double-owned"), Status::Holds);
    assert_eq!(status(&o, "converged when quiescent"), Status::Holds);
}
