//! `rebalance allocate` as a user runs it: the table, the JSON, conformance
//! cases from a file or stdin, exit statuses and bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const REBALANCE: &str = env!("CARGO_BIN_EXE_rebalance");

fn allocate(args: &[&str]) -> Output {
    Command::new(REBALANCE)
        .arg("allocate")
        .args(args)
        .output()
        .expect("rebalance runs")
}

fn allocate_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(REBALANCE)
        .arg("allocate")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rebalance runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("cases written");
    child.wait_with_output().expect("rebalance ends")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SHIPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/data/allocate-java.jsonl"
);

/// One AVG case over two queues and two consumers, with `expected` as the
/// first consumer's answer.
fn case(expected: &str) -> String {
    format!(
        r#"{{"strategy":"AVG","sort":true,"queues":[{{"topic":"T","broker":"broker-a","queue_id":0}},{{"topic":"T","broker":"broker-a","queue_id":1}}],"consumers":["c1","c2"],"results":[{{"current":"c1","queues":{expected}}}]}}"#
    )
}

#[test]
fn the_table_lists_every_consumer_with_its_queues() {
    let out = allocate(&["--strategy", "AVG", "--queues", "8", "--consumers", "3"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.starts_with("AVG · topic TopicTest · 2 broker(s) × 8 queues = 16 · 3 consumers"));
    let rows: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].contains("broker-a:0-5"), "{text}");
}

#[test]
fn json_has_the_documented_fields() {
    let out = allocate(&[
        "--strategy",
        "CONSISTENT_HASH",
        "--virtual-nodes",
        "4",
        "--queues",
        "4",
        "--brokers",
        "2",
        "--consumers",
        "3",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["strategy"], "CONSISTENT_HASH");
    assert_eq!(json["topic"], "TopicTest");
    assert_eq!(json["brokers"], 2);
    assert_eq!(json["queues_per_broker"], 4);
    let shares = json["shares"].as_array().expect("shares");
    assert_eq!(shares.len(), 3);
    let total: usize = shares
        .iter()
        .map(|s| s["queues"].as_array().expect("queues").len())
        .sum();
    assert_eq!(total, 8, "every queue goes to someone");
    assert!(shares[0]["consumer"].is_string());
}

#[test]
fn the_shipped_cases_pass() {
    let out = allocate(&["--cases", SHIPPED, "--check"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert_eq!(text.lines().last(), Some("2500 passed, 0 failed"), "{text}");
}

#[test]
fn a_wrong_expectation_fails_with_exit_1() {
    let out = allocate_with_stdin(&["--cases", "-", "--check"], &(case("[1]") + "\n"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(text.starts_with("FAIL line 1 (AVG, sort=true)"), "{text}");
    assert_eq!(text.lines().last(), Some("0 passed, 1 failed"));
}

#[test]
fn cases_from_stdin_come_back_with_this_crates_results() {
    let out = allocate_with_stdin(&["--cases", "-"], &(case("[]") + "\n"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one case");
    assert_eq!(json["results"][0]["queues"], serde_json::json!([0]));
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let no_such_file = ["--cases", "/no/such/cases.jsonl"];
    let unknown_strategy = ["--strategy", "NOPE"];
    let misplaced = ["--strategy", "AVG", "--virtual-nodes", "3"];
    let rooms_elsewhere = ["--strategy", "STICKY", "--consumer-idcs", "hz"];
    for args in [
        &no_such_file[..],
        &unknown_strategy,
        &misplaced,
        &rooms_elsewhere,
        &["--check"],
        &["--queues", "lots"],
    ] {
        let out = allocate(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    for (input, says) in [
        ("{not json\n".to_string(), "line 1:"),
        (case("[0]").replace("\"AVG\"", "\"NOPE\"") + "\n", "line 1:"),
        (
            case("[0]").replace("\"sort\"", "\"virtual_nodes\":3,\"sort\"") + "\n",
            "virtual_nodes does not apply to strategy AVG",
        ),
    ] {
        let out = allocate_with_stdin(&["--cases", "-", "--check"], &input);
        assert_eq!(out.status.code(), Some(2), "{input}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{input}: {stderr}");
    }
}
