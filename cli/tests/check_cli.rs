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
        &["--bfs", "--dfs"],
        &["--no-such-flag"],
    ] {
        let out = rebalance(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
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

#[test]
fn bfs_finds_the_same_verdicts() {
    let out = rebalance(&["--consumers", "2", "--bfs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
