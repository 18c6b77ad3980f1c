//! The few pieces of Java's `String` semantics that allocation results depend on.
//!
//! RocketMQ sorts client ids and message queues with `String.compareTo`, which
//! compares UTF-16 code units, and parses machine rooms with `String.split`,
//! which drops trailing empty parts. Rust's `str` ordering and `split` differ
//! from both, so every strategy goes through these functions instead.

use std::cmp::Ordering;

/// Compares two strings as Java's `String.compareTo` does: by UTF-16 code
/// units, then by length.
///
/// This differs from Rust's `str` ordering (UTF-8 bytes, that is code points)
/// only when a supplementary character (an emoji, say) meets a character in
/// `U+E000..=U+FFFF`: UTF-16 encodes the former with a surrogate
/// (`0xD800..=0xDBFF`), which sorts before the latter.
///
/// ```
/// use std::cmp::Ordering;
/// use rocketmq_rebalance::java::compare_utf16;
///
/// // U+FF01 (fullwidth '!') sorts after U+1F600 in Java, before it in Rust.
/// assert_eq!(compare_utf16("a\u{FF01}", "a\u{1F600}"), Ordering::Greater);
/// assert_eq!("a\u{FF01}".cmp("a\u{1F600}"), Ordering::Less);
/// ```
pub fn compare_utf16(a: &str, b: &str) -> Ordering {
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    let common = a_bytes
        .iter()
        .zip(b_bytes)
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a_bytes.len().min(b_bytes.len()));
    // Back up to the start of the character the difference lies in; both
    // strings agree up to there, so the boundary is the same in both.
    let start = (0..=common)
        .rev()
        .find(|&i| a.is_char_boundary(i))
        .unwrap_or(0);
    match (a[start..].chars().next(), b[start..].chars().next()) {
        (Some(x), Some(y)) => utf16_lead(x).cmp(&utf16_lead(y)).then(x.cmp(&y)),
        (x, y) => x.is_some().cmp(&y.is_some()),
    }
}

/// The first UTF-16 code unit of `c`: the character itself in the BMP, its
/// high surrogate above it.
fn utf16_lead(c: char) -> u32 {
    let c = u32::from(c);
    if c < 0x1_0000 {
        c
    } else {
        0xD800 + ((c - 0x1_0000) >> 10)
    }
}

/// Splits `s` around `separator` as Java's `s.split(separator)` does for a
/// one-character, non-special separator: a string without the separator is
/// its own single part (even when empty), and trailing empty parts are
/// dropped.
///
/// ```
/// use rocketmq_rebalance::java::split;
///
/// assert_eq!(split("hz@broker-a", '@'), ["hz", "broker-a"]);
/// assert_eq!(split("hz@", '@'), ["hz"]);
/// assert_eq!(split("@b", '@'), ["", "b"]);
/// assert!(split("@@", '@').is_empty());
/// assert_eq!(split("", '@'), [""]);
/// ```
pub fn split(s: &str, separator: char) -> Vec<&str> {
    if !s.contains(separator) {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split(separator).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java_order(a: &str, b: &str) -> Ordering {
        a.encode_utf16().cmp(b.encode_utf16())
    }

    #[test]
    fn compare_matches_utf16_units() {
        let samples = [
            "",
            "a",
            "ab",
            "b",
            "é",
            "中",
            "\u{FF01}",
            "\u{1F600}",
            "\u{1F601}",
            "\u{E000}",
            "\u{D7FF}",
            "a\u{1F600}b",
            "a\u{FF01}",
            "Topic0",
            "Topic0！",
            "Topic0😀",
            "Topic0Z",
            "\u{10000}",
            "\u{10FFFF}",
            "\u{FFFF}",
        ];
        for a in samples {
            for b in samples {
                assert_eq!(compare_utf16(a, b), java_order(a, b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn split_matches_java() {
        assert_eq!(split("a@b@c", '@'), ["a", "b", "c"]);
        assert_eq!(split("x@y@", '@'), ["x", "y"]);
        assert_eq!(split("x@@", '@'), ["x"]);
        assert_eq!(split("@y@", '@'), ["", "y"]);
        assert_eq!(split("a@@b", '@'), ["a", "", "b"]);
        assert!(split("@", '@').is_empty());
        assert_eq!(split("abc", '@'), ["abc"]);
    }
}
