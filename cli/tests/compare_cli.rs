//! `rebalance compare` as a user runs it: the table, the JSON, the picture,
//! and bad input refused before any measuring.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const REBALANCE: &str = env!("CARGO_BIN_EXE_rebalance");

/// A comparison small enough for a test.
const SMALL: &[&str] = &[
    "--consumers",
    "2,3",
    "--queues",
    "16",
    "--trials",
    "1",
    "--no-timing",
];

fn compare(args: &[&str]) -> Output {
    Command::new(REBALANCE)
        .arg("compare")
        .args(args)
        .output()
        .expect("rebalance runs")
}

#[test]
fn the_table_has_a_row_per_strategy_and_names_the_skipped() {
    let out = compare(SMALL);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for row in ["| AVG |", "| STICKY |", "| STICKY-2 |"] {
        assert!(text.contains(row), "{row}: {text}");
    }
    assert!(text.contains("Not compared:"), "{text}");
    assert!(text.contains("- CONFIG: "), "{text}");
}

#[test]
fn json_has_the_documented_fields_and_the_picture_is_written() {
    let picture = std::env::temp_dir().join(format!("compare-{}.svg", std::process::id()));
    let mut args = SMALL.to_vec();
    let path = picture.to_string_lossy().into_owned();
    args.extend(["--json", "--svg", &path]);
    let out = compare(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    for field in ["options", "skipped", "summaries", "cells"] {
        assert!(!json[field].is_null(), "{field}");
    }
    let summary = &json["summaries"][0];
    for field in ["strategy", "join", "leave", "grow", "max_balance"] {
        assert!(!summary[field].is_null(), "{field}");
    }
    let svg = std::fs::read_to_string(&picture).expect("the picture");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let _ = std::fs::remove_file(&picture);
    let cell = &json["cells"][0];
    for field in ["paused", "duplicates"] {
        assert!(cell[field].as_f64().is_some(), "{field}");
    }
    assert_eq!(json["options"]["harm"]["pull_batch"], 32);
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for args in [
        &["--consumers", "1"][..],
        &["--queues", "0"],
        &["--trials", "0"],
        &["--slack", "0"],
        &["--time-at", "10"],
        &["--strategies", "NOPE"],
        &["--rate", "-1"],
        &["--harms-svg", "/no/such/dir/dup.svg"],
    ] {
        let out = compare(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

/// An unwritable `--svg` path is refused before measuring: here the
/// measuring would take hours, so a late refusal shows as a timeout.
#[test]
fn an_unwritable_picture_path_fails_at_once() {
    let mut child = Command::new(REBALANCE)
        .args([
            "compare",
            "--trials",
            "100000",
            "--svg",
            "/no/such/dir/moved.svg",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rebalance runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("compare measured before checking --svg");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
}
