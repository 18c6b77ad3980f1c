//! `rebalance check --liveness`: the property's JSON shape, the lasso of
//! partial-partition, and an incomplete run that never passes.

use std::process::Command;

const REBALANCE: &str = env!("CARGO_BIN_EXE_rebalance");

fn run(args: &[&str]) -> (i32, serde_json::Value) {
    let output = Command::new(REBALANCE)
        .arg("check")
        .args(args)
        .arg("--json")
        .output()
        .expect("rebalance runs");
    let json = serde_json::from_slice(&output.stdout).expect("one JSON object");
    (output.status.code().expect("an exit code"), json)
}

fn liveness(report: &serde_json::Value) -> &serde_json::Value {
    report["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["expectation"] == "eventually")
        .expect("the liveness property")
}

#[test]
fn partial_partition_gives_a_lasso() {
    let (code, report) = run(&["--liveness", "--scenario", "partial-partition"]);
    assert_eq!(code, 1);
    let property = liveness(&report);
    assert_eq!(property["status"], "violated");
    let trace: Vec<&str> = property["trace"]
        .as_array()
        .expect("a trace")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(trace.iter().any(|l| l.contains("repeat for ever")));
    assert!(trace.iter().any(|l| l.contains("asks broker-b")));
    assert!(report["liveness"]["states"].as_u64().unwrap() > 0);
}

#[test]
fn a_cut_liveness_run_is_incomplete_never_a_pass() {
    let (code, report) = run(&["--liveness", "--max-states", "2000"]);
    assert_eq!(code, 3);
    assert_eq!(report["complete"], false);
    assert_eq!(liveness(&report)["status"], "unknown");
}
