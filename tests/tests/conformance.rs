//! Every case produced by the Java client must come out identical.

use rocketmq_rebalance::conformance::Case;

const CASES: &str = include_str!("../data/allocate-java.jsonl");

#[test]
fn every_java_case_passes() {
    let mut failures = Vec::new();
    let mut calls = 0;
    for (line, text) in CASES.lines().enumerate() {
        let case: Case =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        let ours = case
            .run()
            .unwrap_or_else(|e| panic!("line {}: {e}", line + 1));
        for (expected, actual) in case.results.iter().zip(&ours) {
            calls += 1;
            if !expected.agrees_with(actual) {
                failures.push(format!(
                    "line {} {} sort={} current={:?}: expected {:?}/{:?}, got {:?}/{:?}",
                    line + 1,
                    case.strategy,
                    case.sort,
                    expected.current,
                    expected.queues,
                    expected.error,
                    actual.queues,
                    actual.error
                ));
            }
        }
    }
    assert_eq!(calls, 22_739, "the vector file holds 22,739 calls");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
