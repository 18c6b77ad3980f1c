//! Real runs, recorded once (`cluster/tests/traces/`,
//! `cluster/tests/findings/`), judged again without Java exactly as
//! `rebalance cluster` judges a run: the script and its model flags, the
//! model's check, the verdicts, their comparison with the model's, the
//! harms and the trace's validation, through the cluster crate's pipeline
//! with the recorded trace in place of the run. A change to the observer,
//! the verdicts, the comparison or the validator is tested here on real
//! behaviour.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rocketmq_rebalance_cluster::outcome::{compare, why_not_compared};
use rocketmq_rebalance_cluster::pipeline::{Checked, Judged, Plan, Source};
use rocketmq_rebalance_cluster::run::RunResult;
use rocketmq_rebalance_cluster::script::Script;
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_cluster::translate::{trace_end, Start};
use rocketmq_rebalance_model::report::Status;
use rocketmq_rebalance_model::validation::{End, Observed};

fn scenario(name: &str, orderly: bool) -> Source {
    Source::Scenario {
        name: name.into(),
        orderly,
    }
}

/// The checked plan of `source`, each checked once for every test that
/// judges a run of it (the orderly broker restart's check takes most of a
/// minute), for its verdicts: the model's harms, which only the program's
/// report shows, judge nothing.
fn checked(source: &Source) -> Arc<Checked> {
    type Cache = Mutex<BTreeMap<String, Arc<OnceLock<Arc<Checked>>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let slot = CACHE
        .get_or_init(Cache::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(format!("{source:?}"))
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let plan = Plan::load(source, false).expect("the script and its model flags");
        Arc::new(plan.check_verdicts())
    })
    .clone()
}

/// The recorded run `file` of `source`'s script, judged as the program
/// judges a run; its trace is validated against the model at its sizes,
/// and every allocation in it is the crate's.
fn judged(source: Source, file: &str) -> Judged {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).expect("the trace reads");
    let events = trace::parse(&text).expect("a trace of this schema");
    let checked = checked(&source);
    let judged = checked.judge(RunResult::recorded(&checked.script, events), Some(path));
    let validation = judged
        .conformance
        .validation
        .as_ref()
        .unwrap_or_else(|e| panic!("{file}: not validated: {e}"));
    assert!(
        judged.conformance.conforms(),
        "{file}: {:#?}",
        validation.conformance
    );
    // A POP group's consumers allocate nothing: the broker assigns.
    assert!(
        judged.outcome.pop || validation.translation.allocations > 0,
        "{file}"
    );
    // From a cold start: every observation is checked, none is a warm-up.
    let c = &validation.conformance;
    assert_eq!(validation.start, Start::Cold, "{file}");
    assert_eq!((c.warm_up, c.explained), (0, c.observations), "{file}");
    // A run the harness ended at rest ends at rest in the model too.
    let end = if judged.result.settled {
        End::AtRest
    } else {
        End::Open
    };
    assert_eq!(validation.end, end, "{file}");
    // Every property of the model's report is compared, or passed over
    // for a reason of its own.
    for p in &judged.report.properties {
        let compared = judged.outcome.status(&p.name).is_some();
        let passed_over = judged.not_compared.iter().any(|n| n.property == p.name);
        assert!(compared != passed_over, "{file}: {}", p.name);
    }
    for n in &judged.not_compared {
        assert!(
            why_not_compared(
                &n.property,
                judged.outcome.pop,
                judged.outcome.grpc,
                judged.outcome.fifo
            )
            .is_some(),
            "{file}: {}",
            n.property
        );
    }
    judged
}

/// The observations one run of the model explains: all of them.
fn explained(judged: &Judged) -> usize {
    judged
        .conformance
        .validation
        .as_ref()
        .map_or(0, |v| v.conformance.explained)
}

fn status(judged: &Judged, property: &str) -> Status {
    judged
        .outcome
        .status(property)
        .unwrap_or_else(|| panic!("no {property}"))
}

/// The properties on which the run and the model disagree.
fn mismatches(judged: &Judged) -> Vec<&str> {
    judged
        .mismatches
        .iter()
        .map(|m| m.property.as_str())
        .collect()
}

/// The POP runs (`cluster/scenarios/pop-*.json`): the remoting client
/// without its own rebalance, the group's mode POP on the broker, every
/// consumer assigned every queue. Each matches the model and conforms.
fn pop(name: &str) -> Judged {
    let j = judged(
        scenario(name, false),
        &format!("tests/traces/{name}.ndjson"),
    );
    assert!(j.outcome.pop && j.outcome.settled, "{name}");
    assert!(j.matches_model(), "{name}: {:?}", mismatches(&j));
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert_eq!(status(&j, "no message skipped"), Status::Holds);
    // No queue is anyone's: push's ownership properties are passed over.
    assert!(j.outcome.status("no queue stays double-owned").is_none());
    assert!(j.harms.hand_overs.is_empty(), "{name}");
    j
}

#[test]
fn a_pop_join_duplicates_nothing() {
    let j = pop("pop-join");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(j.outcome.sent, 10);
}

/// The leaver's batch ends after its shutdown dropped its process queue:
/// never acknowledged, the message comes back to the other consumer.
#[test]
fn a_pop_leave_mid_batch_is_consumed_twice() {
    let j = pop("pop-leave");
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert_eq!(
        status(&j, "no message consumed by two at once"),
        Status::Holds
    );
}

/// A killed consumer's unconsumed batch comes back, consumed once.
#[test]
fn a_pop_kill_mid_batch_is_consumed_once() {
    let j = pop("pop-kill");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
}

/// A consumer stopped for good with its pop waiting at the broker: what the
/// broker gives it comes back to the other one, late, once.
#[test]
fn a_pop_crash_delays_what_the_dead_consumer_popped() {
    let j = pop("pop-crash");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(j.outcome.sent, 4);
}

/// A batch that outlasts its invisible time runs beside the same
/// message's batch in the consumer that popped it again.
#[test]
fn a_pop_slow_batch_runs_one_message_in_two_consumers_at_once() {
    let j = pop("pop-slow-batch");
    assert_eq!(
        status(&j, "no message consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
}

/// A FIFO group's consumer killed while its listener runs the queue's
/// first message: the other consumer, running since before, is refused
/// the queue until the message's invisible time has passed, then consumes
/// both messages in order, each once.
#[test]
fn a_fifo_kill_blocks_the_queue_for_the_invisible_time() {
    let j = pop("fifo-kill");
    assert!(j.outcome.fifo);
    assert_eq!(
        status(&j, "queue blocked by an abandoned pop"),
        Status::Found
    );
    assert_eq!(
        status(&j, "no message consumed before an earlier one"),
        Status::Holds
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(j.outcome.sent, 2);
}

/// A recorded run of a concurrent POP group of gRPC clients: no message
/// delivered twice, none run by two at once.
fn grpc_pop(name: &str) -> Judged {
    let j = pop(name);
    assert!(j.outcome.grpc && !j.outcome.fifo, "{name}");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound, "{name}");
    assert_eq!(
        status(&j, "no message consumed by two at once"),
        Status::Holds,
        "{name}"
    );
    j
}

/// How many batches `who` began in the run.
fn begins(j: &Judged, who: &str) -> usize {
    j.result
        .events
        .iter()
        .filter(|e| e.p == who && e.ev() == "c.consume.begin")
        .count()
}

/// A concurrent POP group of gRPC clients: one that shuts down while its
/// listener runs a message, in a leave or a rolling upgrade, waits for it
/// and acknowledges it (the remoting client's `pop-leave` and
/// `pop-rolling-upgrade` drop it, and it comes back), so the other
/// consumer gets nothing in the 30 s it is watched; one killed while its
/// listener holds a message leaves it to come back, 7.5 s after its
/// receive (5 s invisible), well within that watch.
#[test]
fn a_grpc_pop_leave_acknowledges_its_message_and_a_kill_leaves_it_to_come_back() {
    let leave = grpc_pop("grpc-pop-leave");
    let upgrade = grpc_pop("grpc-pop-rolling-upgrade");
    let kill = grpc_pop("grpc-pop-kill");
    let sent = |j: &Judged| j.outcome.sent;
    assert_eq!((sent(&leave), sent(&upgrade), sent(&kill)), (1, 2, 1));
    assert!(leave
        .outcome
        .status("no message consumed before an earlier one")
        .is_none());
    assert_eq!((begins(&leave, "c2"), begins(&leave, "c1")), (1, 0));
    assert_eq!((begins(&upgrade, "c1"), begins(&upgrade, "c2")), (2, 0));
    assert_eq!((begins(&kill, "c1"), begins(&kill, "c2")), (1, 1));
}

/// A concurrent POP group of gRPC clients, the join, the crash and the
/// broker restart: a consumer that joins while another's listener holds a
/// message is given every queue at once and takes nothing from it; a
/// consumer stopped for good (a dead host, its connection
/// open) while its listener holds a message leaves it to come back to the
/// other, 7.5 s after its receive (5 s invisible), and its frozen batch
/// runs no further, so no message is run by two at once; a consumer whose
/// listener holds a message across a broker restart acknowledges it after
/// the restart, through the proxy, and nobody gets it in the 40 s then
/// watched, past its 30 s invisible time. The model finds a duplicate
/// possible there: its acknowledgement on the connection the restart
/// closed is lost, where the gRPC client's goes to the proxy.
#[test]
fn a_grpc_pop_join_moves_nothing_a_crash_leaves_its_message_to_come_back_and_a_restart_loses_no_ack(
) {
    let join = grpc_pop("grpc-pop-join");
    let crash = grpc_pop("grpc-pop-crash");
    let restart = grpc_pop("grpc-pop-broker-restart");
    let sent = |j: &Judged| j.outcome.sent;
    assert_eq!((sent(&join), sent(&crash), sent(&restart)), (2, 1, 1));
    assert_eq!((begins(&crash, "c1"), begins(&crash, "c2")), (1, 1));
    assert_eq!(begins(&restart, "c1") + begins(&restart, "c2"), 1);
    let model = restart.report.property("duplicate delivery");
    assert_eq!(model.map(|p| p.status), Some(Status::Found));
}

/// A FIFO group's acknowledgement that the broker fails once: the gRPC
/// client sends it again a second later and it counts, so the queue's
/// second message follows the first long before the first's invisible
/// time (5 s), and the first is not consumed again. A fault of no model
/// step (the model's `--lost-acks` is an acknowledgement whose every retry
/// fails), so the model's run is the fault-free one.
#[test]
fn a_fifo_acknowledgement_failed_once_is_sent_again_and_counts() {
    let j = pop("fifo-ack-retry");
    assert!(j.outcome.fifo);
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(
        status(&j, "queue blocked by an abandoned pop"),
        Status::NotFound
    );
    let at = |ev: &str, field: &str, value: serde_json::Value| {
        j.result
            .events
            .iter()
            .find(|e| e.ev() == ev && e.fields().get(field) == Some(&value))
            .map(|e| e.t)
            .unwrap_or_else(|| panic!("no {ev} with {field} {value}"))
    };
    let first_ends = at("c.consume.end", "offsets", serde_json::json!([0]));
    let fault = at("b.fault", "code", serde_json::json!(200051));
    let second_begins = at("c.consume.begin", "offsets", serde_json::json!([1]));
    assert!(first_ends < fault && fault < second_begins);
    assert!(
        second_begins - first_ends < 5_000_000_000,
        "the second message waited for the first's invisible time"
    );
}

/// A FIFO group's join: the queue's messages are consumed in order, each
/// once.
#[test]
fn a_fifo_join_keeps_the_order_and_duplicates_nothing() {
    let j = pop("fifo-join");
    assert_eq!(
        status(&j, "no message consumed before an earlier one"),
        Status::Holds
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(
        status(&j, "queue blocked by an abandoned pop"),
        Status::NotFound
    );
    assert_eq!(j.outcome.sent, 5);
}

/// A FIFO group's consumer shuts down while its listener runs the queue's
/// first message: the gRPC client's shutdown waits for it and acknowledges
/// it, so the consumer that joined gets only the second message.
#[test]
fn a_fifo_leave_waits_for_its_message_and_duplicates_nothing() {
    let j = pop("fifo-leave");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(
        status(&j, "no message consumed before an earlier one"),
        Status::Holds
    );
    assert_eq!(j.outcome.sent, 2);
}

/// A FIFO group's broker crashes while a consumer runs the queue's
/// message: started again without the order info of the queue's last pop,
/// it gives the message to the other consumer, long before its invisible
/// time, and both run it at once.
#[test]
fn a_fifo_broker_crash_gives_a_running_message_to_the_other_consumer() {
    let j = pop("fifo-broker-crash");
    assert!(j.outcome.fifo);
    for property in [
        "no queue consumed by two at once",
        "no message consumed by two at once",
    ] {
        assert_eq!(status(&j, property), Status::Violated, "{property}");
    }
    assert_eq!(
        status(&j, "no message consumed before an earlier one"),
        Status::Holds
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert_eq!(j.outcome.sent, 1);
}

/// The old version's last batch, running at its shutdown, is consumed
/// again by the new one: push's rolling-upgrade duplicate, by another road.
#[test]
fn a_pop_rolling_upgrade_consumes_the_old_consumers_last_batch_again() {
    let j = pop("pop-rolling-upgrade");
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
}

/// Two consumers with one client id: the broker lists it twice and
/// assigns each every queue, so nothing is orphaned or consumed twice.
#[test]
fn a_pop_groups_shared_client_id_harms_nothing() {
    let j = pop("pop-duplicate-client-id");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(status(&j, "member lists agree at rest"), Status::Holds);
}

/// A broker restart between two rounds: the checkpoints and acks are in
/// the revive topic, on disk, and every message is consumed once here (the
/// model's duplicate needs an ack on the connection the restart closes).
#[test]
fn a_pop_broker_restart_keeps_its_acknowledgements() {
    let j = pop("pop-broker-restart");
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert_eq!(j.outcome.sent, 2);
}

#[test]
fn healthy_converges() {
    let j = judged(scenario("healthy", false), "tests/traces/healthy.ndjson");
    assert!(j.outcome.settled);
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert_eq!(status(&j, "no queue stays double-owned"), Status::Holds);
    assert_eq!(status(&j, "no message skipped"), Status::Holds);
    assert_eq!(j.outcome.sent, 40);
    assert_eq!(status(&j, "member lists agree at rest"), Status::Holds);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

#[test]
fn duplicate_client_id_leaves_a_block_double_owned_and_one_orphaned() {
    let j = judged(
        scenario("duplicate-client-id", false),
        "tests/traces/duplicate-client-id.ndjson",
    );
    assert_eq!(status(&j, "no queue stays double-owned"), Status::Violated);
    assert_eq!(status(&j, "converged when quiescent"), Status::Violated);
    assert_eq!(status(&j, "member lists agree at rest"), Status::Holds);
    assert!(
        j.outcome.never_delivered > 0,
        "the orphaned queue's messages stay"
    );
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// A recorded zombie run, judged, with the zombie's findings: its queue
/// consumed by two at once, and the group converged again.
fn zombie(file: &str) -> Judged {
    let j = judged(scenario("zombie-consumer", false), file);
    assert_eq!(status(&j, "transient double ownership"), Status::Found);
    assert_eq!(
        status(&j, "no queue consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert!(j.outcome.duplicates > 0);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
    j
}

#[test]
fn a_zombie_consumes_a_queue_its_successor_owns() {
    let j = zombie("tests/traces/zombie-consumer.ndjson");
    assert_eq!(status(&j, "member lists agree at rest"), Status::Holds);
}

/// A CI run of the zombie in which `c1`, resuming, reconnected to
/// broker-b on two channels at once: broker-b listed it twice until its
/// scan expired the silent one, and `c2`, third on `[c1 c1 c2]`, took
/// broker-b:1 alone meanwhile. The script's conform flags budget that
/// second channel; the findings are the zombie's.
#[test]
fn a_zombie_listed_twice_on_its_return_conforms_with_its_second_channel() {
    zombie("tests/traces/zombie-consumer-listed-twice.ndjson");
}

#[test]
fn a_restarted_broker_grants_a_lock_its_holder_still_trusts() {
    let j = judged(
        scenario("broker-restart", true),
        "tests/traces/broker-restart-orderly.ndjson",
    );
    assert_eq!(
        status(&j, "no queue consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&j, "one live lock per queue"), Status::Violated);
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert_eq!(status(&j, "member lists agree at rest"), Status::Holds);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// A finding of the real cluster, now a behaviour of the model: a
/// reconnecting consumer's query overtakes the heartbeat of its new channel
/// and it drops its queue, an orphan. The program reported it as a
/// mismatch that said the model was wrong; since the model's heartbeat
/// comes from the channel's activation, a step of its own, the two agree.
#[test]
fn a_query_that_overtakes_its_heartbeat_orphans_a_queue() {
    let j = judged(
        scenario("broker-restart", true),
        "tests/findings/broker-restart-orderly-query-before-heartbeat.ndjson",
    );
    assert_eq!(status(&j, "transient orphaned queue"), Status::Found);
    let orphan = j
        .outcome
        .properties
        .iter()
        .find(|p| p.name == "transient orphaned queue")
        .expect("judged");
    assert!(orphan.detail.contains("a0"), "{}", orphan.detail);
    assert_eq!(mismatches(&j), Vec::<&str>::new());
}

/// The orderly broker restart with a downtime of 3 s
/// (`--restart-downtime 3`): the broker refuses calls while it is down and
/// starts again after it. Validated against restarts that stop first
/// (`--restart-stops`, which the judge adds for a trace with a downtime),
/// it conforms from a cold start, to rest, and matches the model's
/// findings: the restarted broker's empty lock table lets c2 consume
/// while c1 still trusts its lock.
#[test]
fn a_restart_with_a_downtime_conforms_to_restarts_that_stop() {
    let j = judged(
        scenario("broker-restart", true),
        "tests/findings/broker-restart-orderly-downtime.ndjson",
    );
    let v = j.conformance.validation.as_ref().expect("validated");
    assert!(v.model.cfg.protocol.restart_stops);
    for property in [
        "no queue consumed by two at once",
        "one live lock per queue",
    ] {
        assert_eq!(status(&j, property), Status::Violated, "{property}");
    }
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// A script of this crate's scenarios by its file name.
fn script(name: &str) -> Source {
    Source::Script(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(format!("{name}.json")),
    )
}

/// The same overtaking without orderly consumption, driven by gates: c1's
/// query to the restarted broker waits for c2's registration there, its
/// heartbeat for the query's answer. c1 is answered `[c2]` and lets its
/// queue go; the model (one broker) finds the orphan on the same steps.
#[test]
fn a_query_driven_ahead_of_its_heartbeat_orphans_a_queue() {
    let j = judged(
        script("broker-restart-query-first"),
        "tests/findings/broker-restart-query-first.ndjson",
    );
    assert_eq!(status(&j, "transient orphaned queue"), Status::Found);
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// A FIFO group's clean broker restart (its order info kept), a finding
/// the real cluster showed first. A reload of the proxy's cached config of
/// the group during the outage (driven by the harness's
/// `proxy_forgets_group`) finds no broker and leaves the proxy without
/// it, and until the proxy reloads it it receives for the group's clients
/// as for a concurrent group's: the other consumer is given the message
/// the first still runs. The model's restart of the cluster's only broker
/// has the proxy lose the config until a reload: both sides run one
/// message at two consumers at once.
#[test]
fn a_clean_fifo_broker_restart_gives_a_running_message_to_the_other_consumer() {
    let j = judged(
        script("fifo-broker-restart"),
        "tests/findings/fifo-broker-restart.ndjson",
    );
    for property in [
        "no message consumed by two at once",
        "no queue consumed by two at once",
    ] {
        assert_eq!(status(&j, property), Status::Violated, "{property}");
    }
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// Its remedy, `proxy-keeps-group-config`: the same clean restart with a
/// proxy whose cache of the group's config is refreshed once an hour, so
/// that no reload can empty it during the run. The queue stays blocked
/// through the outage and after it: the other consumer gets nothing while
/// the first runs the message, on both sides.
#[test]
fn a_proxy_that_keeps_the_group_s_config_keeps_a_fifo_queue_blocked_across_a_restart() {
    let j = judged(
        script("fifo-broker-restart-config-kept"),
        "tests/traces/fifo-broker-restart-config-kept.ndjson",
    );
    for property in [
        "no message consumed by two at once",
        "no queue consumed by two at once",
    ] {
        assert_eq!(status(&j, property), Status::Holds, "{property}");
    }
    assert_eq!(j.outcome.duplicates, 0);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// The orderly broker restart with the remedy `lock-grace-after-start`,
/// made by a broker rule: from the restart until the paused holder's trust
/// in its lock has lapsed, every `LOCK_BATCH_MQ` fails. Nobody is granted
/// the queue while its holder may still consume it: both properties the
/// restart violates without the remedy hold, on both sides.
#[test]
#[ignore = "opt-in: the model with the variant is 11,355,810 states"]
fn a_restarted_broker_that_grants_no_lock_in_its_grace_consumes_nothing_twice() {
    let j = judged(
        script("broker-restart-orderly-lock-grace"),
        "tests/traces/broker-restart-orderly-lock-grace.ndjson",
    );
    for property in [
        "no queue consumed by two at once",
        "one live lock per queue",
    ] {
        assert_eq!(status(&j, property), Status::Holds, "{property}");
    }
    assert!(j.harms.hand_overs.iter().all(|h| h.duplicates == 0));
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// An orderly consumer shut down while its listener, which ignores the
/// interrupt (the default), runs a batch: it unlocks the queue and leaves
/// while the batch still runs, and the next owner consumes the queue
/// beside it. Both the model and RocketMQ violate "no queue consumed by
/// two at once".
#[test]
fn a_shutdown_beside_the_next_owner_consumes_a_queue_twice_at_once() {
    let j = judged(
        scenario("graceful-shutdown", true),
        "tests/findings/graceful-shutdown-orderly.ndjson",
    );
    assert_eq!(
        status(&j, "no queue consumed by two at once"),
        Status::Violated
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// An orderly consumer shut down while its listener runs a batch: the
/// listener that stops on its thread's interrupt ends the batch unconsumed
/// before the queue is unlocked, so the next owner consumes it alone and
/// the message is consumed once (`--interruptible c2`).
#[test]
fn a_shutdown_that_interrupts_its_listener_consumes_nothing_twice() {
    let j = judged(
        script("graceful-shutdown-orderly-interrupted"),
        "tests/traces/graceful-shutdown-orderly-interrupted.ndjson",
    );
    assert_eq!(
        status(&j, "no queue consumed by two at once"),
        Status::Holds
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::NotFound);
    assert!(j.harms.hand_overs.iter().all(|h| h.duplicates == 0));
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// Two runs of the orderly broker restart recorded for trace validation (a
/// stopping broker unregistering its channels one by one; a client listed
/// twice): both conform. In the first the restart's window closed before a
/// second lock was granted, so the model's counterexample to one live lock
/// was not replayed, and the program says so.
#[test]
fn the_orderly_restarts_recorded_for_validation_conform() {
    let closing = judged(
        scenario("broker-restart", true),
        "tests/traces/broker-restart-orderly-closing.ndjson",
    );
    assert_eq!(mismatches(&closing), ["one live lock per queue"]);
    assert!(closing.mismatches[0].wrong.starts_with("the replay"));
    let twice = judged(
        scenario("broker-restart", true),
        "tests/traces/broker-restart-orderly-listed-twice.ndjson",
    );
    assert!(twice.matches_model(), "{:?}", mismatches(&twice));
}

#[test]
fn a_subscription_table_that_flaps_never_lets_the_group_rest_and_agrees_with_the_model() {
    let j = judged(
        scenario("subscription-flap", false),
        "tests/traces/subscription-flap.ndjson",
    );
    assert_eq!(
        j.outcome.first_at_rest_s, None,
        "every flip is a change still to come"
    );
    assert_eq!(j.result.timed_out.as_deref(), Some("settled"));
    assert_eq!(status(&j, "converged when quiescent"), Status::Unknown);
    assert_eq!(status(&j, "transient orphaned queue"), Status::Found);
    assert_eq!(
        (j.outcome.sent, j.outcome.never_delivered),
        (12, 12),
        "pulls fail while the table lacks TopicTest"
    );
    assert_eq!(
        explained(&j),
        8,
        "the starts and listings: the table's flips are not observed"
    );
    assert!(!j.script.rests);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
    // A script that says the model's group rests calls the same run a mismatch.
    let rests = Script {
        rests: true,
        ..j.script.clone()
    };
    assert!(!compare(&j.report, &j.outcome, &rests).is_empty());
}

#[test]
fn a_kill_under_load_hands_its_queues_over_within_a_second() {
    let j = judged(
        Source::Harms("kill".into()),
        "tests/traces/harms-kill.ndjson",
    );
    let moved: Vec<(&str, &str, &str)> = j
        .harms
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
    for o in &j.harms.hand_overs {
        assert_eq!(o.after.as_deref(), Some("kill c1"));
        let pause = o.pause_s.expect("the new owner delivered");
        assert!((0.0..1.5).contains(&pause), "{o:?}");
    }
    // The killed consumer's last batch ends with it: nobody consumed a queue
    // at once with a dead process.
    assert!(
        j.harms.consumed_by_two.is_empty(),
        "{:?}",
        j.harms.consumed_by_two
    );
    let backlog = j.harms.backlog.as_ref().expect("a load ran");
    assert!(backlog.peak > backlog.steady, "{backlog:?}");
    let estimate = j
        .estimate
        .expect("a steady load: rebalance compare's estimate");
    assert_eq!(estimate.parameters.rate, 10.0);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
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
    let j = judged(Source::Random(15), "tests/traces/random-15-leave.ndjson");
    assert_eq!(status(&j, "transient double ownership"), Status::NotFound);
    assert_eq!(status(&j, "no queue stays double-owned"), Status::Holds);
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// `rebalance cluster --random 13`: `c1` and `c2` start, and `broker-a`
/// restarts with a downtime of 3 s while the group still settles. The
/// consumers polled the route without `broker-a` during the downtime and
/// let its queues go; `broker-a` was back and registered 5 s before their
/// next poll (every 5 s here). For those seconds every consumer had
/// rebalanced twice with its route, and the run was judged at rest with
/// `a0` owned by nobody: `converged when quiescent` violated, where the
/// model says it holds. The model is right: its group is not quiescent
/// while a consumer's route differs from its name server's, since the
/// next poll changes it. The run is at rest only once every route has the
/// brokers the name servers route. Validated against restarts that stop
/// first (`--restart-stops`), from the cold start to rest.
#[test]
fn a_restart_with_a_downtime_is_not_at_rest_until_the_routes_have_the_broker_again() {
    let j = judged(
        Source::Random(13),
        "tests/traces/random-13-restart-downtime.ndjson",
    );
    assert_eq!(status(&j, "converged when quiescent"), Status::Holds);
    let flags = &j.conformance.flags;
    assert!(flags.iter().any(|f| f == "--restart-stops"), "{flags:?}");
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// A CI run of random seed 3: `c3` shuts down as soon as it has started,
/// and its rebalance thread finishes a round after both brokers
/// unregistered it, changing its queues (line 339) before `stopped`. The
/// shutdown's `destroy` drops that table; the model's leave is one step,
/// and the translator says so where the rule fires.
#[test]
fn a_leave_whose_last_round_ends_during_the_shutdown_conforms() {
    let j = judged(
        Source::Random(3),
        "tests/traces/random-3-leave-last-round.ndjson",
    );
    let v = j.conformance.validation.as_ref().expect("validated");
    let rule = v
        .translation
        .rules_fired
        .iter()
        .find(|r| r.rule.contains("last rebalance round"))
        .expect("the rule fired");
    assert_eq!(rule.lines, [339]);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// The other recorded runs, each of its own script: a leave (the consumer
/// stops running before it unregisters), a broker losing its disk (a
/// consumer stopped, then killed, dies once), a broker leaving for good (no
/// longer observed), and four consumers starting together
/// (`tests/scripts/cold-start-four.json`, validated from its cold start).
#[test]
fn every_other_recorded_run_matches_the_model_and_conforms() {
    let runs = [
        (
            scenario("graceful-shutdown", false),
            "tests/traces/graceful-shutdown.ndjson",
        ),
        (
            scenario("broker-disk-loss", false),
            "tests/traces/broker-disk-loss.ndjson",
        ),
        (
            scenario("broker-scale-in", false),
            "tests/traces/broker-scale-in.ndjson",
        ),
        (
            Source::Script(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/cold-start-four.json"),
            ),
            "tests/traces/cold-start-four.ndjson",
        ),
    ];
    for (source, file) in runs {
        let j = judged(source, file);
        assert!(j.matches_model(), "{file}: {:?}", mismatches(&j));
    }
}

/// A run of one of `cluster/faults/`'s scripts, judged.
fn fault_run(name: &str, file: &str) -> Judged {
    let source = Source::Script(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("faults")
            .join(format!("{name}.json")),
    );
    judged(source, file)
}

/// The number of observations of faults the run's validation made.
fn faults_observed(judged: &Judged) -> usize {
    let v = judged.conformance.validation.as_ref().expect("validated");
    v.translation
        .observations
        .iter()
        .filter(|o| matches!(o.what, Observed::Faulted { .. }))
        .count()
}

/// A query the harness made fail is observed: the model's consumer meets
/// its pending failed query there, and the whole run is explained.
#[test]
fn a_failed_query_the_run_met_is_observed_and_explained() {
    let j = fault_run("failed-query", "tests/traces/fault-failed-query.ndjson");
    assert_eq!(faults_observed(&j), 1);
    assert_eq!(status(&j, "transient double ownership"), Status::Found);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// c1 loses the one broker's notification of c3's join: it keeps a queue
/// the join gave c2 until its periodic rebalance (`transient double
/// ownership`, as the model finds with one lost notification), and the
/// model's c1 meets its lost notification where the rule fired.
#[test]
fn a_lost_notification_leaves_a_queue_double_owned_until_the_periodic_rebalance() {
    let j = fault_run(
        "lost-notification",
        "tests/traces/fault-lost-notification.ndjson",
    );
    assert_eq!(faults_observed(&j), 1);
    assert_eq!(status(&j, "transient double ownership"), Status::Found);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
    assert_eq!(trace_end(&j.result.events), End::AtRest);
}

/// The broker loses the leaver's last persist, sent as it shuts down: the
/// model's shutdown may lose it as well, and the fault is observed with
/// the shutdown (a rule of the translator).
#[test]
fn a_persist_lost_at_shutdown_is_observed_with_the_shutdown() {
    let j = fault_run("lost-persist", "tests/traces/fault-lost-persist.ndjson");
    assert_eq!(faults_observed(&j), 1);
    let v = j.conformance.validation.as_ref().expect("validated");
    assert!(
        v.translation
            .rules_fired
            .iter()
            .any(|r| r.rule.contains("observed with its shutdown")),
        "{:?}",
        v.translation.rules_fired
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// `rebalance cluster --random 18`: `c1` is killed at rest, and before
/// that the broker loses one of its periodic offset persists (a rule the
/// seed picked, awaited before the kill): the model's `c1` meets its lost
/// persist in its periodic persist, and the whole run is explained.
#[test]
fn a_periodic_persist_a_random_run_lost_is_observed_and_explained() {
    let j = judged(
        Source::Random(18),
        "tests/traces/random-18-lost-persist.ndjson",
    );
    assert!(
        j.script.what.contains("loses an offset persist"),
        "{}",
        j.script.what
    );
    assert_eq!(faults_observed(&j), 1);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// `rebalance cluster --random 7`, the run of the full suite that ended
/// "bound hit": `broker-b`'s expiry scan reported `c1`'s channel, `c1`
/// (resumed from its pause) had a heartbeat read from that channel, which
/// registered it again after the scan's removal, and `c2`'s next heartbeat
/// listed that entry (line 1344) before its own event and before the
/// channel's close removed it (line 1348). The run's outcome matches the
/// model (its conformance is `conform_traces.rs`'s, on every run).
#[test]
#[ignore = "opt-in: the model at the run's sizes takes about a minute"]
fn a_heartbeat_read_from_an_expired_channel_is_a_run_that_matches_the_model() {
    let j = judged(
        Source::Random(7),
        "tests/traces/random-7-heartbeat-on-expired-channel.ndjson",
    );
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// The application fails one batch at c1's listener (`RECONSUME_LATER`):
/// the model's consumer meets its pending consume failure as that batch
/// ends, and the whole run is explained.
#[test]
fn a_batch_the_listener_failed_is_observed_and_explained() {
    let j = fault_run(
        "consume-failure",
        "tests/traces/fault-consume-failure.ndjson",
    );
    assert_eq!(faults_observed(&j), 1);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// c3's first offset read of its new queue fails: RocketMQ leaves the
/// queue out of the process-queue table and reports no change for that
/// round, though the round allocated it; the next round adds it. The trace
/// records the table (`c.mqchanged`'s `table`), the model shows a round's
/// table once its offset reads are over, and the run is explained with
/// the failed read.
#[test]
fn a_failed_offset_read_keeps_its_queue_out_of_the_table_until_the_next_round() {
    let j = fault_run(
        "failed-offset-read",
        "tests/traces/fault-failed-offset-read.ndjson",
    );
    assert_eq!(faults_observed(&j), 1);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
    assert_eq!(trace_end(&j.result.events), End::AtRest);
    // c3 allocated its queue in a round that reported nothing: the table
    // is what the trace shows, not the allocation.
    let c3 = |e: &&trace::Event| e.p == "c3";
    let allocated = j
        .result
        .events
        .iter()
        .filter(c3)
        .find_map(|e| match &e.kind {
            trace::Kind::Alloc {
                topic: Some(t),
                result,
                ..
            } if t == "TopicTest" && !result.is_empty() => Some(e.seq),
            _ => None,
        });
    let failed = j
        .result
        .events
        .iter()
        .filter(c3)
        .find_map(|e| match &e.kind {
            trace::Kind::ConsumerFault { .. } => Some(e.seq),
            _ => None,
        });
    let reported = j
        .result
        .events
        .iter()
        .filter(c3)
        .find_map(|e| match &e.kind {
            trace::Kind::QueuesChanged { topic, table, .. } if topic == "TopicTest" => {
                Some((e.seq, table.clone()))
            }
            _ => None,
        });
    let (allocated, failed, (reported, table)) = (
        allocated.expect("c3 allocates"),
        failed.expect("c3's read fails"),
        reported.expect("c3 reports its table"),
    );
    assert!(
        allocated < failed && failed < reported,
        "{allocated} {failed} {reported}"
    );
    assert_eq!(table.as_deref(), Some(&["broker-b:1".to_owned()][..]));
    let v = j.conformance.validation.as_ref().expect("validated");
    assert!(v
        .translation
        .rules_fired
        .iter()
        .all(|r| !r.rule.contains("read as its allocation")));
}

/// The orderly listener that fails a batch suspends its queue a moment and
/// consumes the batch again, keeping the queue and its lock: a duplicate,
/// never a second lock. The run's lock events name each queue's topic, so
/// the group's retry topic's `broker-b:0`, locked by the other consumer, is
/// not taken for a second lock of `TopicTest`'s; its trace ends with the
/// run's `end`, at rest.
#[test]
fn an_orderly_batch_the_listener_failed_is_consumed_again_under_the_same_lock() {
    let j = fault_run(
        "consume-failure-orderly",
        "tests/traces/fault-consume-failure-orderly.ndjson",
    );
    assert_eq!(faults_observed(&j), 1);
    assert!(j.matches_model(), "{:?}", mismatches(&j));
    assert_eq!(status(&j, "one live lock per queue"), Status::Holds);
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert_eq!(trace_end(&j.result.events), End::AtRest);
}

/// Whether the run's validation observed `broker`'s failover (and, since
/// the run conforms, the model's failover step explained it).
fn failed_over(judged: &Judged, broker: &str) -> bool {
    let v = judged.conformance.validation.as_ref().expect("validated");
    v.translation.observations.iter().any(|o| {
        o.what
            == Observed::FailedOver {
                broker: broker.into(),
            }
    })
}

/// broker-a's master fails while c1 runs a batch of a1 under its lock; its
/// slave, acting as master, has no lock table. c2 joins before c1 renews
/// its locks there, is granted a1 and consumes it beside c1's batch: both
/// orderly properties are violated, on RocketMQ 5.3.3 as in the model.
#[test]
fn a_failover_lets_a_joiner_consume_a_queue_its_holder_still_runs() {
    let j = judged(
        script("failover-orderly"),
        "tests/findings/failover-orderly.ndjson",
    );
    for property in [
        "no queue consumed by two at once",
        "one live lock per queue",
    ] {
        assert_eq!(status(&j, property), Status::Violated, "{property}");
    }
    assert!(failed_over(&j, "broker-a"));
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// The slave copies the offsets after c1's first commit; c1 commits two
/// more to the master, is killed, and the master fails before c2
/// rebalances. The slave serves the copy's offset, and c2 consumes the two
/// committed messages again: as the model's failover rolls committed
/// offsets back to the slave's last sync.
#[test]
fn a_failover_serves_the_offsets_of_the_slaves_last_copy() {
    let j = judged(
        script("failover-offsets"),
        "tests/findings/failover-offsets.ndjson",
    );
    assert_eq!(status(&j, "duplicate delivery"), Status::Found);
    assert_eq!(j.outcome.duplicates, 2);
    assert!(failed_over(&j, "broker-a"));
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}

/// The orderly failover with the remedy `lock-grace-after-start`, applied
/// by the slave that serves (a broker rule fails every `LOCK_BATCH_MQ`
/// from the failover until `c1`'s trust in its lock has lapsed): nobody is
/// granted `a1` while `c1` may still consume it, and both orderly
/// properties hold, as in the model with the variant.
#[test]
fn a_failed_over_broker_that_grants_no_lock_in_its_grace_consumes_nothing_twice() {
    let j = judged(
        script("failover-orderly-lock-grace"),
        "tests/findings/failover-orderly-lock-grace.ndjson",
    );
    for property in [
        "no queue consumed by two at once",
        "one live lock per queue",
    ] {
        assert_eq!(status(&j, property), Status::Holds, "{property}");
    }
    assert_eq!(j.outcome.duplicates, 0);
    assert!(failed_over(&j, "broker-a"));
    assert!(j.matches_model(), "{:?}", mismatches(&j));
}
