//! `rebalance check` as a user runs it: exit statuses, text and JSON.

use std::process::{Command, Output};

fn rebalance(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .arg("check")
        .args(["--threads", "2"])
        .args(args)
        .output()
        .expect("rebalance runs")
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON object")
}

#[test]
fn default_check_is_complete_and_exits_0() {
    let out = rebalance(&["--consumers", "2"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("complete: every reachable state visited"),
        "{text}"
    );
    assert!(
        text.contains("holds      always     no queue stays double-owned"),
        "{text}"
    );
}

#[test]
fn json_report_has_the_documented_fields() {
    let out = rebalance(&["--consumers", "2", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = json(&out);
    assert_eq!(report["complete"], true);
    for field in ["states", "unique_states", "max_depth"] {
        assert!(report[field].as_u64().is_some_and(|n| n > 0), "{field}");
    }
    assert!(report["seconds"].as_f64().is_some());
    assert_eq!(report["fingerprint_bits"], 64);
    let p = report["collision_probability"]
        .as_f64()
        .expect("an estimate");
    assert!(p > 0.0 && p < 1e-10, "{p}");
    let properties = report["properties"].as_array().expect("a list");
    assert!(properties
        .iter()
        .any(|p| p["name"] == "converged when quiescent"
            && p["expectation"] == "always"
            && p["status"] == "holds"));
    assert!(properties.iter().any(|p| p["name"] == "full convergence"
        && p["expectation"] == "sometimes"
        && p["status"] == "found"
        && p["trace"].as_array().is_some_and(|t| !t.is_empty())));
}

#[test]
fn a_counterexample_exits_1_with_a_numbered_trace() {
    let out = rebalance(&["--scenario", "duplicate-client-id", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report = json(&out);
    let violated = report["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "no queue stays double-owned")
        .expect("reported");
    assert_eq!(violated["status"], "violated");
    let trace: Vec<&str> = violated["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(trace[0].starts_with("1. "), "{trace:?}");
    assert!(violated["explorer_path"]
        .as_str()
        .is_some_and(|p| p.starts_with("#/steps/")));

    let text = rebalance(&["--scenario", "duplicate-client-id"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("counterexample to \"no queue stays double-owned\""),
        "{text}"
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for args in [
        &["--scenario", "nope"][..],
        &["--strategy", "NOPE"],
        &["--network", "carrier-pigeon"],
        &["--consumers", "0"],
        &["--consumers", "many"],
        &["--queues", "40"],
        &["--bfs", "--simulate", "1"],
        &["--fingerprint-bits", "32"],
        &["--dfs"],
        &["--no-such-flag"],
        &["--shard", "0/2"],
        &["--lock-lease", "6"],
        &["--orderly", "--lock-lease", "9"],
        &["--memory", "0"],
        &["--memory", "-1"],
        &["--memory", "NaN"],
        &["--memory", "lots"],
    ] {
        let out = rebalance(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

/// A consume failure is a batch's: without messages there is none, and the
/// checker says which flag is missing.
#[test]
fn consume_failures_without_messages_are_refused() {
    let out = rebalance(&["--consume-failures", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("--consume-failures needs --messages"),
        "{text}"
    );
    let out = rebalance(&[
        "--scenario",
        "graceful-shutdown",
        "--messages",
        "1",
        "--leaves",
        "0",
        "--consume-failures",
        "1",
    ]);
    // Accepted with messages: checked (no example of a duplicate or a
    // double owner in this run, exit 1), not refused.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// `--max-stall K` bounds the stalls of messages: refused without them,
/// exit 1 with the longest stall as its counterexample when one is longer,
/// and the JSON harms give both waits and their unit.
#[test]
fn max_stall_needs_messages_and_fails_past_its_bound() {
    let out = rebalance(&["--max-stall", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-stall"));
    let out = rebalance(&[
        "--scenario",
        "broker-disk-loss",
        "--max-stall",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report = json(&out);
    let harms = &report["harms"];
    assert_eq!(harms["max_stall_ticks"]["value"], 2);
    assert_eq!(harms["max_lock_wait_ticks"]["value"], 0);
    assert_eq!(harms["stall_unit"], "owner steps");
    let bound = report["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "no stall past the bound"))
        .expect("reported");
    assert_eq!(bound["status"], "violated");
    assert_eq!(
        bound["explorer_path"],
        harms["max_stall_ticks"]["explorer_path"]
    );
}

/// RocketMQ's orderly consumers always allocate on the client, so the
/// checker refuses to model them with server-side assignment.
#[test]
fn orderly_with_server_side_assignment_is_refused() {
    let out = rebalance(&["--orderly", "--assignment", "server"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("always rebalance on the client"), "{text}");
}

/// Each consumer's client (`--clients`) and the client ids: bad values exit 2
/// saying what is wrong; a mixed group names its clients in the summary
/// and shows each member list in its client's order.
#[test]
fn bad_clients_exit_2_and_mixed_clients_are_named() {
    for (args, words) in [
        (
            &["--clients", "c1=python:AVG"][..],
            "unknown client 'python'",
        ),
        (&["--clients", "c1=java"], "expected CLIENT:STRATEGY"),
        (&["--clients", "c1=java:NOPE"], "unknown strategy"),
        (&["--clients", "c9=java:AVG"], "no consumer c9"),
        (&["--clients", "c1=java:AVG,c1=bytes:AVG"], "two clients"),
        (&["--client-ids", "a,b"], "2 client ids for 3 consumers"),
        (&["--client-ids", "a,,b"], "cannot be empty"),
    ] {
        let out = rebalance(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
    let out = rebalance(&["--scenario", "mixed-clients"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for words in [
        "clients c1 java:AVG c2 bytes:AVG",
        "members [\\u{e000} \u{10000}] in bytes order, owns [b0 b1]",
    ] {
        assert!(stdout.contains(words), "{words}: {stdout}");
    }
}

/// The orderly budgets need `--orderly`, and with it are accepted (and
/// named in the run's description).
#[test]
fn orderly_budgets_run_with_orderly() {
    let small = ["--consumers", "2", "--brokers", "1", "--queues", "1"];
    for budget in ["--lost-unlocks", "--failed-locks", "--clock-drift"] {
        let out = rebalance(&[&small[..], &[budget, "1"]].concat());
        assert_eq!(out.status.code(), Some(2), "{budget} alone: {out:?}");
        let out = rebalance(&[&small[..], &["--orderly", budget, "1"]].concat());
        // Verdicts (0 or 1), not bad input.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{budget}: {out:?}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("complete: every reachable state visited"));
        let words = budget.trim_start_matches("--").replace('-', " ");
        assert!(text.contains(&format!("{words} 1")), "{text}");
    }
}

#[test]
fn a_run_stopped_early_exits_3_and_says_why() {
    let out = rebalance(&["--joins", "3", "--max-states", "2000", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let report = json(&out);
    assert_eq!(report["complete"], false);
    assert_eq!(report["stopped"], "state limit");
    let out = rebalance(&["--simulate", "7", "--max-states", "2000"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("INCOMPLETE"));
}

/// A run past its memory budget stops and says so, in each search that
/// watches it, rather than being killed for want of memory.
#[test]
fn a_run_past_its_memory_budget_exits_3_and_says_so() {
    for (search, stopped) in [
        (&[][..], "memory budget (--memory)"),
        (
            &["--liveness"],
            "liveness graph cut: the memory budget reached",
        ),
    ] {
        let args = [search, &["--consumers", "4", "--memory", "0.01", "--json"]].concat();
        let out = rebalance(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        let report = json(&out);
        assert_eq!(report["complete"], false, "{args:?}");
        assert_eq!(report["stopped"], stopped, "{args:?}");
    }
}

#[test]
fn a_search_without_its_scratch_file_exits_3_and_says_so() {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(["check", "--consumers", "2", "--json"])
        .env("TMPDIR", "/nonexistent/rebalance-scratch")
        .output()
        .expect("rebalance runs");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let report = json(&out);
    assert_eq!(report["complete"], false);
    assert_eq!(
        report["stopped"],
        "the scratch file in the temporary directory (TMPDIR) could not be written"
    );
}

#[test]
fn sleep_sets_generate_fewer_states_for_the_same_ones() {
    let reduced = json(&rebalance(&["--json"]));
    let full = json(&rebalance(&["--json", "--no-reduction"]));
    assert_eq!(
        (reduced["reduction"].as_bool(), full["reduction"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(reduced["unique_states"], full["unique_states"]);
    assert_eq!(reduced["max_depth"], full["max_depth"]);
    let per_unique = |r: &serde_json::Value| r["generated_per_unique"].as_f64().expect("a ratio");
    assert!(per_unique(&reduced) < per_unique(&full), "{reduced} {full}");
    let verdicts = |r: &serde_json::Value| {
        r["properties"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|p| p["status"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(verdicts(&reduced), verdicts(&full));
}

#[test]
fn wide_fingerprints_are_reported() {
    let out = rebalance(&["--consumers", "2", "--fingerprint-bits", "128"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("128-bit fingerprints: probability that a collision hid a state"),
        "{text}"
    );
}

#[test]
fn bfs_finds_the_same_verdicts() {
    let out = rebalance(&["--consumers", "2", "--bfs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// The distributed search (timely dataflow) against the default one: the
/// same counts, verdicts and paths with two worker threads, two and four
/// processes on loopback, and two processes of two workers, on a model that
/// holds and on one that does not.
#[test]
fn two_workers_and_two_processes_find_what_one_search_finds() {
    for model in [
        &["--consumers", "3"][..],
        &["--scenario", "duplicate-client-id"],
    ] {
        let default = rebalance(&[model, &["--json"]].concat());
        let expected = json(&default);
        for placement in [
            &["--workers", "2"][..],
            &["--local-processes", "2"],
            &["--local-processes", "4"],
            &["--local-processes", "2", "--workers", "2"],
        ] {
            let out = rebalance(&[model, placement, &["--json"]].concat());
            assert_eq!(out.status.code(), default.status.code(), "{out:?}");
            let got = json(&out);
            for field in ["stopped", "unique_states", "max_depth", "properties"] {
                assert_eq!(
                    got[field], expected[field],
                    "{model:?} {placement:?}: {field}"
                );
            }
            if expected["stopped"] == "exhausted" {
                assert_eq!(got["states"], expected["states"], "{model:?} {placement:?}");
            }
        }
    }
}

#[test]
fn bad_placements_exit_2_with_a_message() {
    let hosts = std::env::temp_dir().join(format!("rebalance-test-hosts-{}", std::process::id()));
    std::fs::write(&hosts, "127.0.0.1:1\n127.0.0.1:2\n").expect("written");
    let hosts = hosts.to_str().expect("utf-8");
    for args in [
        &["--workers", "0"][..],
        &["--local-processes", "0"],
        &["--workers", "2", "--liveness"],
        &["--local-processes", "2", "--simulate", "1"],
        &["--hosts", "/nonexistent/hosts"],
        &["--hosts", "/nonexistent/hosts", "--process", "0"],
        &["--hosts", hosts, "--process", "2"],
        &["--hosts", hosts, "--process", "0", "--local-processes", "2"],
    ] {
        let out = rebalance(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    std::fs::remove_file(hosts).expect("removed");
}
