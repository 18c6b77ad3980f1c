//! `rebalance cluster` on a real RocketMQ cluster on loopback: the CI
//! subset of scenarios, each judged beside the model, and the exit
//! statuses of bad input and of a cluster that cannot start.
//!
//! The real-cluster tests need Java 17 and Maven (the harness fetches
//! RocketMQ from Maven Central on first use). Without them they say so and
//! pass, unless `REBALANCE_CLUSTER_TESTS=1` (set by `.ci/run`), which makes
//! their absence a failure. They run one at a time: each starts four JVMs.
//! CI runs a subset (about four minutes); the full suite is
//! `REBALANCE_RANDOM_RUNS=20 cargo test --release -p rocketmq-rebalance-cli
//! --test cluster_cli -- --include-ignored`.

use std::process::{Command, Output};
use std::sync::Mutex;

static ONE_CLUSTER_AT_A_TIME: Mutex<()> = Mutex::new(());

fn rebalance(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .arg("cluster")
        .args(args)
        .output()
        .expect("rebalance runs")
}

fn has(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether real clusters can run here; panics if CI requires them and they cannot.
fn java_and_maven() -> bool {
    let here = has("java", "-version") && has("mvn", "-v");
    if !here {
        assert!(
            std::env::var("REBALANCE_CLUSTER_TESTS").as_deref() != Ok("1"),
            "REBALANCE_CLUSTER_TESTS=1 but java or mvn is missing"
        );
        eprintln!("skipped: the real-cluster tests need java and mvn on the PATH");
    }
    here
}

/// Runs a scenario on a real cluster and returns its JSON report.
fn real(scenario: &[&str]) -> serde_json::Value {
    let _one = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut args = vec!["--json"];
    args.extend(scenario);
    let out = rebalance(&args);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON report: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(
        out.status.code(),
        Some(0),
        "the real outcome does not match the model: {report:#}"
    );
    assert_eq!(report["matches_model"], true);
    // The JSON fields docs/cluster.md documents are a contract.
    for field in [
        "scenario",
        "orderly",
        "grpc",
        "fifo",
        "rocketmq_version",
        "seconds",
        "settled",
        "timed_out",
        "properties",
        "messages_sent",
        "duplicates",
        "never_delivered",
        "ownership",
        "default_timers",
        "harms",
        "matches_model",
        "mismatches",
        "not_compared",
        "conformance",
        "trace",
    ] {
        assert!(report.get(field).is_some(), "no {field} in {report:#}");
    }
    numbering_orders_stamps(&report);
    assert_eq!(report["rocketmq_version"], "5.3.3");
    // Trace validation: the run is a behaviour of the model at its sizes,
    // and every allocation in it is the crate's.
    let conformance = &report["conformance"];
    assert_eq!(
        conformance["conforms"], true,
        "the trace is not a behaviour of the model: {conformance:#}"
    );
    // From a cold start, every observation explained; the run ended at
    // rest, its trace says so last, and the model's run came to rest too.
    assert_eq!(conformance["start"], "cold", "{conformance:#}");
    assert_eq!(conformance["end"], "at_rest", "{conformance:#}");
    let text = std::fs::read_to_string(report["trace"].as_str().unwrap()).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["ev"], &last["settled"]),
        (&"end".into(), &true.into())
    );
    assert_eq!(
        conformance["explained"], conformance["observations"],
        "{conformance:#}"
    );
    report
}

/// The harness stamps and numbers an event at once: in every process of
/// the run, the later number has the later stamp (no slack).
fn numbering_orders_stamps(report: &serde_json::Value) {
    let path = report["trace"].as_str().expect("the trace's path");
    let text = std::fs::read_to_string(path).expect("the trace reads");
    let mut last: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    let mut events: Vec<(String, u64, u64)> = text
        .lines()
        .map(|l| {
            let e: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let field = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{k} in {l}"));
            (
                e["p"].as_str().unwrap_or_default().to_owned(),
                field("seq"),
                field("t"),
            )
        })
        .collect();
    events.sort();
    for (process, seq, t) in events {
        if let Some(&(before, stamped)) = last.get(&process) {
            assert!(
                t >= stamped,
                "{path}: {process}'s event {seq} is stamped before its event {before}"
            );
        }
        last.insert(process, (seq, t));
    }
}

fn status<'a>(report: &'a serde_json::Value, property: &str) -> (&'a str, &'a str) {
    let p = report["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == property))
        .unwrap_or_else(|| panic!("no property {property} in {report:#}"));
    (
        p["status"].as_str().unwrap_or_default(),
        p["model_status"].as_str().unwrap_or("-"),
    )
}

#[test]
fn healthy_join_converges_on_a_real_cluster() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "healthy"]);
    assert_eq!(status(&r, "converged when quiescent"), ("holds", "holds"));
    assert_eq!(status(&r, "no message skipped").0, "holds");
}

/// Beyond CI's subset (its recorded runs are judged on every run by
/// `cluster/tests/recorded_traces.rs`).
#[test]
#[ignore = "the full real-cluster suite: -- --include-ignored"]
fn duplicate_client_id_owns_one_block_twice_for_ever() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "duplicate-client-id"]);
    assert_eq!(
        status(&r, "no queue stays double-owned"),
        ("violated", "violated")
    );
    assert_eq!(
        status(&r, "converged when quiescent"),
        ("violated", "violated")
    );
}

/// Beyond CI's subset (its recorded runs are judged on every run by
/// `cluster/tests/recorded_traces.rs`).
#[test]
#[ignore = "the full real-cluster suite: -- --include-ignored"]
fn zombie_consumer_consumes_a_queue_its_successor_owns() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "zombie-consumer"]);
    assert_eq!(status(&r, "transient double ownership"), ("found", "found"));
    assert_eq!(status(&r, "no queue consumed by two at once").0, "violated");
    assert_eq!(status(&r, "converged when quiescent"), ("holds", "holds"));
}

/// Beyond CI's subset (its recorded runs are judged on every run by
/// `cluster/tests/recorded_traces.rs`; CI's real orderly lock finding is the
/// failover's): its model, 13 million states checked and measured for
/// harms, takes most of two minutes beside the run.
#[test]
#[ignore = "the full real-cluster suite: -- --include-ignored"]
fn orderly_broker_restart_grants_a_lock_its_holder_still_trusts() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "broker-restart", "--orderly"]);
    assert_eq!(
        status(&r, "no queue consumed by two at once"),
        ("violated", "violated")
    );
    assert_eq!(
        status(&r, "one live lock per queue"),
        ("violated", "violated")
    );
}

/// A master that fails over to its slave (RocketMQ's slave acting as
/// master): the slave has no lock table, so a joiner is granted a queue
/// whose holder still runs a batch under its lock.
#[test]
fn an_orderly_failover_grants_a_lock_its_holder_still_trusts() {
    if !java_and_maven() {
        return;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cluster/scenarios/failover-orderly.json"
    );
    let r = real(&["--script", script]);
    for property in [
        "no queue consumed by two at once",
        "one live lock per queue",
    ] {
        assert_eq!(status(&r, property), ("violated", "violated"), "{property}");
    }
}

#[test]
fn a_join_under_load_hands_one_queue_over_with_a_measured_pause() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--harms", "join"]);
    let harms = &r["harms"];
    let hand_overs = harms["hand_overs"].as_array().expect("hand_overs");
    // AVG over six queues: c4 joining c1 c2 c3 takes b2 from c3.
    let b2 = hand_overs
        .iter()
        .find(|h| h["queue"] == "broker-b:2" && h["from"] == "c3" && h["to"] == "c4")
        .unwrap_or_else(|| panic!("b2 not handed from c3 to c4: {harms:#}"));
    assert!(b2["pause_s"].as_f64().is_some(), "{b2:#}");
    assert!(harms["backlog"]["peak"].as_u64().is_some(), "{harms:#}");
    assert_eq!(harms["compare_estimate"]["rate"], 10.0);
    assert!(harms["model"]["max_duplicates_per_handover"]["value"].is_u64());
    assert_eq!(r["never_delivered"], 0);
}

/// A POP group (`cluster/scenarios/pop-*.json`): the group's mode POP on
/// the broker, consumers without their own rebalance. A consumer that
/// shuts down while its batch runs never acknowledges it, and the message
/// comes back to the other consumer after its invisible time.
#[test]
fn a_pop_consumer_leaving_mid_batch_has_its_message_consumed_again() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "pop-leave"]);
    assert_eq!(status(&r, "duplicate delivery"), ("found", "found"));
    assert_eq!(
        status(&r, "no message consumed by two at once"),
        ("holds", "holds")
    );
    assert_eq!(r["never_delivered"], 0);
}

/// A concurrent POP group of gRPC clients through the proxy
/// (`cluster/scenarios/grpc-pop-leave.json`): the consumer that shuts down
/// while its listener runs a message waits for it and acknowledges it, so
/// the message never comes back, where `pop-leave`'s remoting consumer
/// drops it. Its trace is validated as every run's.
#[test]
fn a_grpc_pop_consumer_leaving_mid_message_acknowledges_it() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "grpc-pop-leave"]);
    assert_eq!(status(&r, "duplicate delivery"), ("not-found", "not-found"));
    assert_eq!(r["grpc"], true);
    assert_eq!(r["duplicates"], 0);
    assert_eq!(r["never_delivered"], 0);
}

/// A FIFO group (`cluster/scenarios/fifo-kill.json`): gRPC consumers
/// through the proxy. A consumer killed while its listener runs the
/// queue's first message leaves the queue blocked for the message's
/// invisible time, though the other consumer receives; then the other
/// consumes both messages in order. Its trace is validated as every run's.
#[test]
fn a_fifo_consumer_killed_mid_message_blocks_its_queue_for_the_invisible_time() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "fifo-kill"]);
    assert_eq!(
        status(&r, "queue blocked by an abandoned pop"),
        ("found", "found")
    );
    assert_eq!(
        status(&r, "no message consumed before an earlier one"),
        ("holds", "holds")
    );
    assert_eq!(r["duplicates"], 0);
    assert_eq!(r["never_delivered"], 0);
}

/// A FIFO group's acknowledgement failed once at the broker
/// (`cluster/scenarios/fifo-ack-retry.json`): the gRPC client sends it
/// again and it counts, so the queue's first message is not consumed again.
#[test]
fn a_fifo_acknowledgement_failed_once_is_sent_again() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "fifo-ack-retry"]);
    assert_eq!(status(&r, "duplicate delivery"), ("not-found", "not-found"));
    assert_eq!(
        status(&r, "queue blocked by an abandoned pop"),
        ("not-found", "not-found")
    );
    assert_eq!((&r["grpc"], &r["fifo"]), (&true.into(), &true.into()));
    assert_eq!(r["never_delivered"], 0);
}

/// A FIFO group's broker crash (`cluster/scenarios/fifo-broker-crash.json`):
/// the broker starts again without the order info of the queue's last pop,
/// so the message a consumer still runs goes to the other one long before
/// its invisible time, and both run it at once: the model's counterexample
/// of `no queue consumed by two at once`, on RocketMQ.
#[test]
fn a_fifo_broker_crash_gives_a_running_message_to_the_other_consumer() {
    if !java_and_maven() {
        return;
    }
    let r = real(&["--scenario", "fifo-broker-crash"]);
    for property in [
        "no queue consumed by two at once",
        "no message consumed by two at once",
    ] {
        assert_eq!(status(&r, property), ("violated", "violated"), "{property}");
    }
    assert_eq!(
        status(&r, "no message consumed before an earlier one"),
        ("holds", "holds")
    );
    assert_eq!(r["duplicates"], 1);
    assert_eq!(r["never_delivered"], 0);
}

/// The other POP scripts (their recorded runs are judged on every run by
/// `cluster/tests/recorded_traces.rs`).
#[test]
#[ignore = "the full real-cluster suite: -- --include-ignored"]
fn the_other_pop_scripts_match_the_model() {
    if !java_and_maven() {
        return;
    }
    for (scenario, property, verdicts) in [
        ("pop-join", "duplicate delivery", ("not-found", "not-found")),
        (
            "fifo-join",
            "no message consumed before an earlier one",
            ("holds", "holds"),
        ),
        (
            "fifo-leave",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        ("pop-kill", "duplicate delivery", ("not-found", "not-found")),
        (
            "grpc-pop-kill",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        (
            "grpc-pop-rolling-upgrade",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        (
            "pop-crash",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        (
            "grpc-pop-join",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        (
            "grpc-pop-crash",
            "no message consumed by two at once",
            ("holds", "holds"),
        ),
        (
            "pop-slow-batch",
            "no message consumed by two at once",
            ("violated", "violated"),
        ),
        (
            "pop-rolling-upgrade",
            "duplicate delivery",
            ("found", "found"),
        ),
        (
            "pop-duplicate-client-id",
            "duplicate delivery",
            ("not-found", "not-found"),
        ),
        (
            "fifo-broker-restart",
            "no queue consumed by two at once",
            ("violated", "violated"),
        ),
        (
            "fifo-broker-restart-config-kept",
            "no queue consumed by two at once",
            ("holds", "holds"),
        ),
        // Real, then model: the model's duplicate needs an acknowledgement
        // in flight on the connection the restart closes, which the script
        // does not drive.
        (
            "pop-broker-restart",
            "duplicate delivery",
            ("not-found", "found"),
        ),
        // The same, and the gRPC client's acknowledgement goes to the
        // proxy, which reaches the restarted broker: none is lost.
        (
            "grpc-pop-broker-restart",
            "duplicate delivery",
            ("not-found", "found"),
        ),
    ] {
        let r = real(&["--scenario", scenario]);
        assert_eq!(status(&r, property), verdicts, "{scenario}");
    }
}

/// Randomised runs, each validated against the model of its picks: the
/// seeds 1 to `REBALANCE_RANDOM_RUNS` (1 unless set; the full suite runs
/// `REBALANCE_RANDOM_RUNS=20`).
#[test]
fn randomised_runs_are_behaviours_of_the_model() {
    if !java_and_maven() {
        return;
    }
    let runs: u64 = std::env::var("REBALANCE_RANDOM_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    for seed in 1..=runs {
        let r = real(&["--random", &seed.to_string()]);
        assert_eq!(r["scenario"], format!("random-{seed}"));
    }
}

#[test]
fn bad_input_exits_2_before_starting_anything() {
    for args in [
        &["--scenario", "no-such-scenario"][..],
        &["--harms", "no-such-change"],
        &["--harms", "join", "--orderly"],
        &["--harms", "join", "--scenario", "healthy"],
        &["--scenario", "healthy", "--rocketmq", "4.9.0"],
        &["--scenario", "healthy", "--restart-downtime", "-1"],
        &["--script", "/nonexistent/script.json"],
        &["--random", "x"],
        &["--random", "1", "--scenario", "healthy"],
        &["--scenario", "healthy", "--variant", "no-such-variant"],
        // A variant with no setting RocketMQ takes and no script of its own.
        &["--scenario", "healthy", "--variant", "go-orderly-drop"],
    ] {
        let out = rebalance(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error:"),
            "{args:?}"
        );
    } // A script whose run fails a broker over while its model has no
      // failover to take.
    let dir = std::env::temp_dir().join(format!("rebalance-bad-failover-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let script = dir.join("no-failover.json");
    std::fs::write(
        &script,
        r#"{"scenario":"healthy","what":"w","model":["--brokers","1","--consumers","1"],
            "brokers":1,"failovers":1,"consumers":[{"name":"c1"}],
            "steps":[{"start":"c1"},{"fail_over":"broker-a"}]}"#,
    )
    .expect("the script writes");
    let out = rebalance(&["--script", script.to_str().expect("a UTF-8 path")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--failovers 1"));
    // A script whose model pops and whose consumers push, and one of an
    // orderly POP group (a FIFO group, the proxy's gRPC clients) whose
    // consumer subscribes to another topic.
    let script = dir.join("pop.json");
    std::fs::write(
        &script,
        r#"{"scenario":"healthy","what":"w",
            "model":["--brokers","1","--consumers","1","--messages","1","--consumption","pop"],
            "brokers":1,"consumers":[{"name":"c1"}],"steps":[{"start":"c1"}]}"#,
    )
    .expect("the script writes");
    let out = rebalance(&["--script", script.to_str().expect("a UTF-8 path")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("the two must agree"));
    std::fs::write(
        &script,
        r#"{"scenario":"healthy","what":"w","consumption":"pop","orderly":true,
            "model":["--brokers","1","--consumers","1","--messages","1","--consumption","pop",
                     "--orderly"],
            "brokers":1,"consumers":[{"name":"c1","topics":["TopicTest","Other"]}],
            "steps":[{"start":"c1"}]}"#,
    )
    .expect("the script writes");
    let out = rebalance(&["--script", script.to_str().expect("a UTF-8 path")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("scenario's topic only"));
    // A script of gRPC clients whose model's are the remoting client's, and
    // the reverse: the client must agree too.
    for (script_client, model_client) in [("grpc", "remoting"), ("remoting", "grpc")] {
        std::fs::write(
            &script,
            format!(
                r#"{{"scenario":"healthy","what":"w","consumption":"pop",
                    "pop_client":"{script_client}",
                    "model":["--brokers","1","--consumers","1","--messages","1",
                             "--consumption","pop","--pop-client","{model_client}"],
                    "brokers":1,"consumers":[{{"name":"c1"}}],"steps":[{{"start":"c1"}}]}}"#
            ),
        )
        .expect("the script writes");
        let out = rebalance(&["--script", script.to_str().expect("a UTF-8 path")]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("\"pop_client\", --pop-client"),
            "{out:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_java_it_says_so_and_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(["cluster", "--scenario", "healthy"])
        .env("PATH", "/nonexistent")
        .output()
        .expect("rebalance runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs Java 17 and Maven"));
}

#[test]
fn a_harness_that_does_not_build_exits_3_with_its_log() {
    if !java_and_maven() {
        return;
    }
    let empty =
        std::env::temp_dir().join(format!("rebalance-empty-harness-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("temp dir");
    let run_dir = empty.join("run");
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(["cluster", "--scenario", "healthy", "--run-dir"])
        .arg(&run_dir)
        .env("REBALANCE_HARNESS", &empty)
        .output()
        .expect("rebalance runs");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("log: ") && err.contains("build.log"), "{err}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn every_scenario_and_harm_script_parses_with_valid_model_flags() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cluster");
    let mut scripts = 0;
    let entries = ["scenarios", "harms"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("a scripts directory"));
    for entry in entries {
        let path = entry.expect("an entry").path();
        // Without Java on the PATH a good script gets as far as the Java check.
        let out = Command::new(env!("CARGO_BIN_EXE_rebalance"))
            .arg("cluster")
            .arg("--script")
            .arg(&path)
            .env("PATH", "/nonexistent")
            .output()
            .expect("rebalance runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("needs Java 17 and Maven"),
            "{}: {err}",
            path.display()
        );
        scripts += 1;
    }
    assert!(scripts >= 22);
    // The help names every harm script.
    let help = String::from_utf8_lossy(&rebalance(&["--help"]).stdout).into_owned();
    for entry in std::fs::read_dir(root.join("harms")).expect("the harms directory") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert!(help.contains(name), "--help does not name {name}");
    }
}
