//! The client-level call, `rebalance_allocate`: both lists sorted as the Java
//! client's `RebalanceImpl.rebalanceByTopic` sorts them, then the strategy.
//! Every case the Java client answered must come out identical, and the sort
//! must follow Java's `String.compareTo` (UTF-16 code units) where it differs
//! from the UTF-8 byte order: a character outside the Basic Multilingual
//! Plane against one in `U+E000..=U+FFFF`.

use rocketmq_rebalance::conformance::Case;
use rocketmq_rebalance::strategy::{Averagely, AveragelyByCircle};
use rocketmq_rebalance::{rebalance_allocate, rebalance_allocate_group, MessageQueue, SortOrder};

const CASES: &str = include_str!("../data/rebalance-java.jsonl");

fn cases() -> impl Iterator<Item = (usize, Case)> {
    CASES.lines().enumerate().map(|(line, text)| {
        let case: Case =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        (line + 1, case)
    })
}

#[test]
fn every_java_client_case_passes() {
    let mut failures = Vec::new();
    let mut calls = 0;
    for (line, case) in cases() {
        assert!(case.sort, "line {line}: a client-level case sorts");
        let ours = case.run().unwrap_or_else(|e| panic!("line {line}: {e}"));
        for (expected, actual) in case.results.iter().zip(&ours) {
            calls += 1;
            if !expected.agrees_with(actual) {
                failures.push(format!(
                    "line {line} {} current={:?}: expected {:?}/{:?}, got {:?}/{:?}",
                    case.strategy,
                    expected.current,
                    expected.queues,
                    expected.error,
                    actual.queues,
                    actual.error
                ));
            }
        }
    }
    assert_eq!(calls, 5_771, "the vector file holds 5,771 calls");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What real consumers of a RocketMQ 5.3.3 cluster took, recorded by
/// `rebalance conform --cases` from the real runs of `cluster/tests/traces/`.
const REAL: &str = include_str!("../data/rebalance-real.jsonl");

#[test]
fn every_allocation_of_a_real_run_is_the_crates() {
    let mut calls = 0;
    for (line, text) in REAL.lines().enumerate() {
        let case: Case =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        let ours = case
            .run()
            .unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        for (expected, actual) in case.results.iter().zip(&ours) {
            calls += 1;
            assert!(
                expected.agrees_with(actual),
                "line {}: the real consumer took {:?}, the crate gives {:?}",
                line + 1,
                expected.queues,
                actual.queues
            );
        }
    }
    assert!(calls >= 40, "{calls} real calls");
}

/// `rebalance_allocate_group` computes every share in one pass; each listed
/// consumer's share must still be the one Java gave that consumer's call.
#[test]
fn group_shares_match_the_java_calls() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for (line, case) in cases() {
        let Ok(spec) = case.spec().unwrap_or_else(|e| panic!("line {line}: {e}")) else {
            continue; // a strategy Java cannot build: no shares to compare
        };
        let strategy = spec.build();
        let group =
            rebalance_allocate_group(strategy.as_ref(), "group", &case.queues, &case.consumers);
        // The client's queues are a set, so a queue's position is unique.
        let index = |q: &MessageQueue| case.queues.iter().position(|x| x == q);
        for expected in &case.results {
            if !case.consumers.contains(&expected.current) {
                continue; // the group has no share for a caller outside it
            }
            compared += 1;
            // Our share as indices into the case's queues, or the error.
            let ours = group.as_ref().map_err(ToString::to_string).map(|shares| {
                let (_, share) = shares
                    .iter()
                    .find(|(id, _)| *id == expected.current)
                    .expect("every listed consumer has a share");
                share.iter().map(index).collect::<Option<Vec<usize>>>()
            });
            let agrees = match &ours {
                Err(_) => expected.error.is_some(),
                Ok(queues) => expected.error.is_none() && *queues == expected.queues,
            };
            if !agrees {
                failures.push(format!(
                    "line {line} {} current={:?}: expected {:?}/{:?}, got {:?}",
                    case.strategy, expected.current, expected.queues, expected.error, ours
                ));
            }
        }
    }
    assert_eq!(
        compared, 5_649,
        "the vector file's calls by listed consumers"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn ids(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// The consumers in the order the client's sort leaves them.
fn sorted_ids(consumers: &[String]) -> Vec<String> {
    let queues = [MessageQueue::new("T", "broker-a", 0)];
    rebalance_allocate_group(&Averagely, "group", &queues, consumers)
        .expect("a valid group")
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

#[test]
fn an_id_above_the_surrogates_sorts_after_a_supplementary_one() {
    // U+FF01's UTF-8 bytes (EF BC 81) are below U+1F600's (F0 9F 98 80), but
    // its UTF-16 unit 0xFF01 is above U+1F600's high surrogate 0xD83D.
    let (fullwidth, emoji) = ("10.0.0.1@c\u{FF01}", "10.0.0.1@c\u{1F600}");
    assert!(
        fullwidth < emoji,
        "Rust's str order is the UTF-8 byte order"
    );
    let queues: Vec<_> = (0..2)
        .map(|i| MessageQueue::new("T", "broker-a", i))
        .collect();
    let shares =
        rebalance_allocate_group(&Averagely, "group", &queues, &ids(&[fullwidth, emoji])).unwrap();
    assert_eq!(
        shares,
        [
            (emoji.to_string(), vec![queues[0].clone()]),
            (fullwidth.to_string(), vec![queues[1].clone()]),
        ]
    );
}

#[test]
fn ids_sort_by_utf16_units_then_length() {
    let consumers = ids(&[
        "c\u{FF01}",
        "c",
        "c\u{1F600}x",
        "c\u{1F600}",
        "c\u{D7FF}",
        "cz",
        "c\u{FFFF}",
        "c\u{10FFFF}",
    ]);
    // A prefix first; the BMP below the surrogates, then the supplementary
    // characters (by their surrogates), then the BMP above the surrogates.
    let java = [
        "c",
        "cz",
        "c\u{D7FF}",
        "c\u{1F600}",
        "c\u{1F600}x",
        "c\u{10FFFF}",
        "c\u{FF01}",
        "c\u{FFFF}",
    ];
    assert_eq!(sorted_ids(&consumers), java);
    let mut utf8 = consumers.clone();
    utf8.sort();
    assert_ne!(utf8, java, "the UTF-8 byte order differs");
}

#[test]
fn a_duplicate_id_takes_the_share_of_its_first_position() {
    // Sorted: [U+1F600, U+FF01, U+FF01]; Java's indexOf finds position 1.
    let consumers = ids(&["c\u{FF01}", "c\u{1F600}", "c\u{FF01}"]);
    let queues: Vec<_> = (0..3)
        .map(|i| MessageQueue::new("T", "broker-a", i))
        .collect();
    let mine = rebalance_allocate(&Averagely, "group", "c\u{FF01}", &queues, &consumers).unwrap();
    assert_eq!(mine, [queues[1].clone()]);
    let shares = rebalance_allocate_group(&Averagely, "group", &queues, &consumers).unwrap();
    assert_eq!(
        shares[2],
        ("c\u{FF01}".to_string(), vec![queues[1].clone()])
    );
}

#[test]
fn queues_sort_by_utf16_topic_then_broker_then_id() {
    // Given in UTF-8 order, the reverse of Java's in topic and in broker.
    let queues = vec![
        MessageQueue::new("T\u{E000}", "b", 0),
        MessageQueue::new("T\u{10FFFF}", "broker\u{FFFD}", 1),
        MessageQueue::new("T\u{10FFFF}", "broker\u{FFFD}", 0),
        MessageQueue::new("T\u{10FFFF}", "broker\u{20000}", 7),
    ];
    let mine = rebalance_allocate(&AveragelyByCircle, "group", "c", &queues, &ids(&["c"])).unwrap();
    assert_eq!(
        mine,
        [&queues[3], &queues[2], &queues[1], &queues[0]].map(Clone::clone)
    );
}

const BYTE_CASES: &str = include_str!("../data/rebalance-bytes.jsonl");

/// The client-level call of a client that sorts by UTF-8 bytes (the Rust
/// and Go clients), `rebalance_allocate_in(SortOrder::Bytes, ..)`: every
/// case answered by the Java client's strategies on lists so sorted must
/// come out identical; and on the same lists Java's sort answers otherwise
/// for some calls, which is what a group mixing the clients meets.
#[test]
fn every_byte_sorting_client_case_passes_and_java_order_differs_there() {
    let mut failures = Vec::new();
    let (mut calls, mut java_differs) = (0, 0);
    for (line, text) in BYTE_CASES.lines().enumerate() {
        let case: Case = serde_json::from_str(text).unwrap_or_else(|e| panic!("line {line}: {e}"));
        assert!(case.sort, "line {line}: a client-level case sorts");
        assert_eq!(case.order, SortOrder::Bytes, "line {line}");
        let ours = case.run().unwrap_or_else(|e| panic!("line {line}: {e}"));
        let as_java = Case {
            order: SortOrder::Java,
            ..case.clone()
        }
        .run()
        .unwrap_or_else(|e| panic!("line {line}: {e}"));
        for ((expected, actual), java) in case.results.iter().zip(&ours).zip(&as_java) {
            calls += 1;
            if !expected.agrees_with(actual) {
                failures.push(format!(
                    "line {} {} current={:?}: expected {:?}/{:?}, got {:?}/{:?}",
                    line + 1,
                    case.strategy,
                    expected.current,
                    expected.queues,
                    expected.error,
                    actual.queues,
                    actual.error
                ));
            }
            if !expected.agrees_with(java) {
                java_differs += 1;
            }
        }
    }
    assert_eq!(calls, 5_913, "the vector file holds 5,913 calls");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        java_differs > 0,
        "Java's order gives every call the same answer"
    );
    println!("{java_differs} of {calls} calls answer otherwise in Java's order");
}
