//! `rebalance conform`: its exit statuses (0 conforms, 1 it does not, 2 bad
//! input, 3 a bound hit), its JSON, and the cases it adds, on traces
//! recorded from real runs (`cluster/tests/traces/`), so that no Java is needed.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rebalance(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .arg("conform")
        .args(args)
        .output()
        .expect("rebalance runs")
}

fn recorded(name: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../cluster/tests/traces/").to_owned() + name
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rebalance-conform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_recorded_run_conforms_to_the_model_it_was_compared_with() {
    let out = rebalance(&[&recorded("healthy.ndjson"), "--trace-model", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"], "conforms");
    assert_eq!(report["conforms"], true);
    assert_eq!(report["model"][1], "healthy");
    assert!(report["explained"].as_u64().unwrap() > 0);
    assert!(report["allocations"].as_u64().unwrap() > 0);
}

/// By default every observation is checked, from the first start on; with
/// `--from-settled` the observations up to the scenario's settled group are
/// a warm-up, left unchecked, and the JSON and the text say which.
#[test]
fn a_cold_start_checks_every_observation_and_from_settled_skips_the_warm_up() {
    let trace = recorded("healthy.ndjson");
    let json = |more: &[&str]| -> serde_json::Value {
        let out = rebalance(&[&[trace.as_str(), "--trace-model", "--json"][..], more].concat());
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cold = json(&[]);
    assert_eq!(cold["start"], "cold");
    assert_eq!(cold["warm_up"], 0);
    assert_eq!(cold["explained"], cold["observations"]);
    let settled = json(&["--from-settled"]);
    assert_eq!(settled["start"], "settled");
    assert_eq!(settled["observations"], cold["observations"]);
    let warm_up = settled["warm_up"].as_u64().unwrap();
    assert!(warm_up > 0, "{settled}");
    assert_eq!(
        settled["explained"].as_u64().unwrap() + warm_up,
        settled["observations"].as_u64().unwrap()
    );
    let text = |more: &[&str]| {
        let out = rebalance(&[&[trace.as_str(), "--trace-model"][..], more].concat());
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(text(&[]).contains("from a cold start"));
    assert!(text(&["--from-settled"]).contains(&format!("{warm_up} of them the unchecked warm-up")));
}

#[test]
fn another_strategy_does_not_conform_and_the_report_names_the_event() {
    let out = rebalance(&[&recorded("healthy.ndjson"), "--strategy", "AVG_BY_CIRCLE"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for part in [
        "does not conform",
        "first unexplained: line ",
        "the model's state there:",
        "the steps it had:",
        "the trace so far, as the model explains it:",
        "the crate gives",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // The event itself, as the trace has it.
    assert!(text.contains("\"ev\":\"c.mqchanged\""), "{text}");
}

#[test]
fn the_html_page_shows_the_run_that_explained_the_most() {
    let page = scratch("conform.html");
    let out = rebalance(&[
        &recorded("healthy.ndjson"),
        "--strategy",
        "AVG_BY_CIRCLE",
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("the real trace is a behaviour of the model"));
    assert!(html.contains("VIOLATED"), "the verdict is on the page");
}

#[test]
fn a_search_bound_hit_first_exits_3() {
    let out = rebalance(&[
        &recorded("healthy.ndjson"),
        "--trace-model",
        "--max-nodes",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("a search bound was hit"));
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let malformed = scratch("malformed.ndjson");
    std::fs::write(&malformed, "{\"t\":1,\"p\":\"c1\"\n").unwrap();
    let other_schema = scratch("schema.ndjson");
    std::fs::write(
        &other_schema,
        "{\"t\":1,\"p\":\"orchestrator\",\"seq\":1,\"ev\":\"run\",\"schema\":99}\n",
    )
    .unwrap();
    let healthy = recorded("healthy.ndjson");
    let missing = scratch("missing.ndjson");
    for args in [
        vec![malformed.to_str().unwrap()],
        vec![other_schema.to_str().unwrap()],
        vec![missing.to_str().unwrap()],
        vec![healthy.as_str(), "--queues", "3"],
        vec![healthy.as_str(), "--silent-steps", "0"],
        vec![healthy.as_str(), "--scenario", "nope"],
        vec![healthy.as_str(), "--html", "/nonexistent/dir/page.html"],
    ] {
        let out = rebalance(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn the_cases_of_a_run_are_appended_in_the_conformance_format() {
    let file = scratch("cases.jsonl");
    let _ = std::fs::remove_file(&file);
    for _ in 0..2 {
        let out = rebalance(&[
            &recorded("healthy.ndjson"),
            "--trace-model",
            "--cases",
            file.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty() && lines.len() % 2 == 0, "appended twice");
    for line in lines {
        let case: rocketmq_rebalance::conformance::Case = serde_json::from_str(line).unwrap();
        assert!(case.sort);
        let ours = case.run().unwrap();
        assert!(case
            .results
            .iter()
            .zip(&ours)
            .all(|(e, a)| e.agrees_with(a)));
    }
}

/// `healthy.ndjson` with its line `line` (from 1) changed by `edit`.
fn tampered(name: &str, line: usize, edit: impl Fn(&str) -> String) -> PathBuf {
    let text = std::fs::read_to_string(recorded("healthy.ndjson")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { edit(l) } else { l.to_owned() })
        .collect();
    let path = scratch(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// What no state of the model can have is a mismatch at once, not a bound
/// hit: a queue change of a topic the model lacks (`c1`'s first, line
/// 105), even with a search too small to find anything.
#[test]
fn an_observation_no_model_state_has_is_a_mismatch_whatever_the_bound() {
    let trace = tampered("unknown-topic.ndjson", 105, |l| {
        l.replace("\"topic\":\"TopicTest\"", "\"topic\":\"NoSuchTopic\"")
    });
    let out = rebalance(&[
        trace.to_str().unwrap(),
        "--trace-model",
        "--max-nodes",
        "10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"], "mismatch", "{report}");
    assert!(
        report["unexplained_event"]
            .as_str()
            .is_some_and(|e| e.contains("NoSuchTopic")),
        "{report}"
    );
    assert!(
        report["explanation"][0]
            .as_str()
            .is_some_and(|e| e.contains("the model has no topic NoSuchTopic")),
        "{report}"
    );
}

/// An allocation that is not the crate's is certain: exit 1 even when the
/// search is cut short first. `c3`'s last allocation (line 726, which
/// changes none of its queues) is given another result.
#[test]
fn a_wrong_allocation_is_decided_before_the_bound() {
    let trace = tampered("wrong-allocation.ndjson", 726, |l| {
        l.replace("\"result\":[\"broker-b:1\"]", "\"result\":[\"broker-a:0\"]")
    });
    let out = rebalance(&[
        trace.to_str().unwrap(),
        "--trace-model",
        "--max-nodes",
        "10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["verdict"], "bound_hit",
        "the search alone is undecided"
    );
    assert_eq!(report["allocation_mismatches"][0]["line"], 726, "{report}");
}

/// A trace that contradicts itself (`c1`'s start stamped after its first
/// queue change, against its own numbering) does not conform, and the
/// report names the line.
#[test]
fn a_stamp_against_its_process_order_is_a_contradiction() {
    let trace = tampered("late-start.ndjson", 13, |l| {
        l.replace("\"t\":2841298467514", "\"t\":2842508619382")
    });
    let out = rebalance(&[trace.to_str().unwrap(), "--trace-model", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let contradictions = report["contradictions"].as_array().unwrap();
    assert!(
        contradictions.iter().any(|c| c["problem"]
            .as_str()
            .is_some_and(|p| p.contains("stamped") && p.contains("(line 13)"))),
        "{report}"
    );
    let text = rebalance(&[trace.to_str().unwrap(), "--trace-model"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("the trace contradicts itself"));
}

/// Malformed input is bad input naming the line and the field: a member
/// list or a queue set missing, null or a string, a topology of a schema
/// version this program does not read.
#[test]
fn a_malformed_field_exits_2_naming_the_line_and_the_field() {
    use serde_json::{json, Value};
    // Line 2 is the topology, line 25 the first member table, line 105
    // `c1`'s first queue change.
    let cases: [(&str, usize, &str, Option<Value>); 7] = [
        ("members missing", 25, "members", None),
        ("members null", 25, "members", Some(Value::Null)),
        (
            "members a string",
            25,
            "members",
            Some(json!("127.0.0.1@c1")),
        ),
        ("divided missing", 105, "divided", None),
        ("divided null", 105, "divided", Some(Value::Null)),
        (
            "divided a string",
            105,
            "divided",
            Some(json!("broker-a:0")),
        ),
        ("schema unknown", 2, "schema", Some(json!(7))),
    ];
    for (name, line, field, value) in cases {
        let trace = tampered(&format!("{name}.ndjson"), line, |l| {
            let mut event: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            assert!(event.contains_key(field), "{name}: {l}");
            match &value {
                Some(v) => event.insert(field.to_owned(), v.clone()),
                None => event.remove(field),
            };
            Value::Object(event).to_string()
        });
        let out = rebalance(&[trace.to_str().unwrap(), "--trace-model"]);
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("line {line}: ")) && err.contains(&format!("field `{field}`")),
            "{name}: {err}"
        );
    }
}

/// `--json` reports the observations by kind (those not observed yet at
/// 0; every batch's start a delivery) and each translator rule that fired with its lines: in this CI run
/// `c1` pauses and resumes, and a stopping broker's unregistrations are
/// its table's loss. (Its broker lists `c1` twice meanwhile, which the
/// model with a second channel explains.)
#[test]
fn the_json_reports_observations_by_kind_and_the_rules_fired() {
    let model = [
        "--scenario",
        "broker-restart",
        "--orderly",
        "--second-channels",
        "1",
    ];
    let trace = recorded("broker-restart-orderly-listed-twice.ndjson");
    let out = rebalance(&[&[trace.as_str(), "--json"][..], &model].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds = report["observations_by_kind"].as_object().unwrap();
    let keys: Vec<&str> = kinds.keys().map(String::as_str).collect();
    for kind in [
        "membership",
        "queues",
        "life",
        "delivery",
        "offset",
        "lock",
        "fault",
    ] {
        assert!(keys.contains(&kind), "{kind}: {report}");
    }
    let total: u64 = kinds.values().filter_map(|n| n.as_u64()).sum();
    assert_eq!(Some(total), report["observations"].as_u64());
    // Every batch's start is checked; offsets are not observed yet.
    let begins = std::fs::read_to_string(&trace)
        .unwrap()
        .matches("\"c.consume.begin\"")
        .count();
    assert!(begins > 0);
    assert_eq!(kinds["delivery"].as_u64(), Some(begins as u64), "{report}");
    assert_eq!(kinds["offset"], 0);
    let rules = report["rules_fired"].as_array().unwrap();
    let lines_of = |words: &str| -> Vec<u64> {
        rules
            .iter()
            .find(|r| r["rule"].as_str().is_some_and(|r| r.contains(words)))
            .map(|r| {
                r["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|l| l.as_u64())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(
        !lines_of("a stop followed by a continue").is_empty(),
        "{report}"
    );
    assert!(!lines_of("a stopping broker").is_empty(), "{report}");
    let text = rebalance(&[&[trace.as_str()][..], &model].concat());
    assert!(String::from_utf8_lossy(&text.stdout).contains("rule fired: a stopping broker"));
}

/// `healthy.ndjson` with the `end` event a run now writes last, saying it
/// ended at rest, and without the last event of each of `skips` in turn
/// (and the batches its process began and ended after it, which would
/// show what it held).
fn ended_at_rest(name: &str, skips: &[&dyn Fn(&serde_json::Value) -> bool]) -> String {
    let text = std::fs::read_to_string(recorded("healthy.ndjson")).unwrap();
    let mut events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for skip in skips {
        let Some(i) = events.iter().rposition(skip) else {
            continue;
        };
        let p = events[i]["p"].clone();
        let batch =
            |e: &serde_json::Value| e["ev"] == "c.consume.begin" || e["ev"] == "c.consume.end";
        let mut dropped = 0;
        let mut kept = events[..i].to_vec();
        for e in events.drain(i..) {
            if e["p"] != p {
                kept.push(e);
            } else if dropped == 0 || batch(&e) {
                dropped += 1;
            } else {
                let mut e = e;
                e["seq"] = (e["seq"].as_u64().unwrap() - dropped).into();
                kept.push(e);
            }
        }
        events = kept;
    }
    let t = events.iter().filter_map(|e| e["t"].as_u64()).max().unwrap() + 1;
    let seq = events
        .iter()
        .filter(|e| e["p"] == "orchestrator")
        .filter_map(|e| e["seq"].as_u64())
        .max()
        .unwrap()
        + 1;
    events.push(
        serde_json::json!({"t": t, "p": "orchestrator", "seq": seq, "ev": "end", "settled": true}),
    );
    let path = scratch(name);
    let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&path, lines).unwrap();
    path.display().to_string()
}

/// A trace whose `end` says the run ended at rest is validated so: the
/// model's run must come to rest too. Without its last queue change, the
/// trace contradicts itself (the round read its new queue's offset, so
/// changed its table; exit 1, the allocation's line named). Without that
/// read too, nothing in the trace proves the change, every observation is
/// explained, and still no run comes to rest (exit 3 within a small bound,
/// the end named). A trace with no `end` is open.
#[test]
fn a_trace_that_ends_at_rest_must_end_at_rest_in_the_model() {
    let whole = ended_at_rest("whole.ndjson", &[]);
    let out = rebalance(&[whole.as_str(), "--trace-model", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["end"], "at_rest");
    let out = rebalance(&[&recorded("healthy.ndjson"), "--trace-model", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["end"], "open");
    let last_change = |e: &serde_json::Value| e["ev"] == "c.mqchanged" && e["topic"] == "TopicTest";
    let dropped = ended_at_rest("dropped.ndjson", &[&last_change]);
    let out = rebalance(&[dropped.as_str(), "--trace-model", "--max-nodes", "200000"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("line 481: c3's allocation of TopicTest changes its table, but its round ends with no queue change"),
        "{text}"
    );
    // c3's last offset read is that round's: its request and answer, as
    // c3 and as broker-b record them.
    fn read(ev: &'static str) -> impl Fn(&serde_json::Value) -> bool {
        move |e| {
            e["ev"] == ev && e["code"] == 14 && (e["p"] == "c3" || e["client"] == "127.0.0.1@c3")
        }
    }
    let (answer, request) = (read("c.resp"), read("c.req"));
    let (sent, received) = (read("b.resp"), read("b.req"));
    let unproven = ended_at_rest(
        "unproven.ndjson",
        &[&last_change, &answer, &request, &sent, &received],
    );
    let out = rebalance(&[unproven.as_str(), "--trace-model", "--max-nodes", "200000"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the run ended at rest"), "{text}");
    assert!(text.contains("first unexplained: the end"), "{text}");
}
