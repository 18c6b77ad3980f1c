//! `JavaStr`, the key that makes sorted maps iterate in Java's order.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use rocketmq_rebalance::java::JavaStr;

#[test]
fn java_str_compares_by_utf16_units_with_every_operator() {
    // U+FF01 sorts after U+1F600 in Java (the emoji's high surrogate is
    // 0xD83D), before it in Rust.
    let (fullwidth, emoji) = (JavaStr("a\u{FF01}"), JavaStr("a\u{1F600}"));
    assert_eq!(fullwidth.cmp(&emoji), Ordering::Greater);
    assert_eq!(fullwidth.partial_cmp(&emoji), Some(Ordering::Greater));
    assert!(emoji < fullwidth);
    assert!(JavaStr("a") < JavaStr("ab"));
    assert_eq!(
        JavaStr("ab").partial_cmp(&JavaStr("ab")),
        Some(Ordering::Equal)
    );
    let sorted: Vec<&str> = ["a\u{FF01}", "b", "a\u{1F600}", "a"]
        .into_iter()
        .map(JavaStr)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(sorted, ["a", "a\u{1F600}", "a\u{FF01}", "b"]);
}
