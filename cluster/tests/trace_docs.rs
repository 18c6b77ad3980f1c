//! The documents that describe the trace, kept true to its one vocabulary
//! (`cluster/src/trace.rs`):
//!
//! - `docs/cluster.md`'s schema table has a row for every event kind, with
//!   exactly that kind's fields, the `env` row every action, and its list
//!   of request codes is the codes the trace names;
//! - `docs/spec.md`'s tables of trace validation name only event kinds of
//!   the schema (with states and member-table changes those kinds have),
//!   actions the orchestrator takes, and request codes by their numbers;
//! - `docs/cluster.md`'s layout names every source file of the crate.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rocketmq_rebalance_cluster::trace::{
    ConsumerState, Env, GroupEvent, Kind, RequestCode, ServerState, SCHEMA,
};

fn doc(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The part of `text` from the heading `heading` to the next heading of
/// its level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let body = &text[start + heading.len() + 2..];
    let level = heading.split(' ').next().unwrap_or("##");
    body.find(&format!("\n{level} "))
        .map_or(body, |end| &body[..end])
}

/// The words between backticks, in order.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// `text` without its parenthesised parts.
fn outside_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// A row's cells.
fn cells(row: &str) -> Vec<&str> {
    row.trim_matches('|').split(" | ").map(str::trim).collect()
}

/// A table's cells: its header's, then each row's.
type Table<'a> = (Vec<&'a str>, Vec<Vec<&'a str>>);

/// The markdown tables of `text`.
fn tables(text: &str) -> Vec<Table<'_>> {
    let mut tables = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with('|') {
            continue;
        }
        let mut body = Vec::new();
        while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
            if !row.starts_with("|---") {
                body.push(cells(row));
            }
        }
        tables.push((cells(line), body));
    }
    tables
}

fn schema_section(cluster_md: &str) -> &str {
    section(cluster_md, &format!("## Trace schema (version {SCHEMA})"))
}

#[test]
fn the_schema_table_has_every_kind_with_its_fields() {
    let cluster_md = doc("cluster.md");
    let schema = Kind::schema();
    let mut documented: Vec<&str> = Vec::new();
    let (_, body) = &tables(schema_section(&cluster_md))[0];
    for cells in body {
        let [kinds, _from, fields] = cells[..] else {
            panic!("a row of three cells: {cells:?}");
        };
        let kinds = quoted(kinds);
        let listed: BTreeSet<String> = quoted(&outside_parentheses(fields))
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut actual: BTreeSet<String> = BTreeSet::new();
        for kind in &kinds {
            let (_, keys) = schema
                .iter()
                .find(|(word, _)| word == kind)
                .unwrap_or_else(|| panic!("docs/cluster.md: `{kind}` is no event kind"));
            actual.extend(keys.iter().map(|k| k.to_string()));
        }
        assert_eq!(listed, actual, "docs/cluster.md: the fields of {kinds:?}");
        documented.extend(kinds);
    }
    let all: Vec<&str> = schema.iter().map(|(word, _)| *word).collect();
    let missing: Vec<&&str> = all.iter().filter(|k| !documented.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "docs/cluster.md: no row for {missing:?}"
    );
    let mut once = documented.clone();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), documented.len(), "a kind with two rows");
}

#[test]
fn the_env_row_lists_every_action() {
    let cluster_md = doc("cluster.md");
    let (_, body) = &tables(schema_section(&cluster_md))[0];
    let row = body
        .iter()
        .find(|cells| quoted(cells[0]) == ["env"])
        .expect("an `env` row");
    let actions = row[2]
        .split_once("`action` (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| quoted(list))
        .expect("the actions in parentheses after `action`");
    let words: Vec<&str> = Env::schema().into_iter().map(|(w, _)| w).collect();
    assert_eq!(actions, words, "docs/cluster.md: the `env` row's actions");
}

#[test]
fn the_request_codes_are_the_ones_the_trace_names() {
    let cluster_md = doc("cluster.md");
    let text = schema_section(&cluster_md);
    // "34 `HEART_BEAT`": a number, then the code's name.
    let parts: Vec<&str> = text.split('`').collect();
    let listed: BTreeSet<(i64, String)> = (1..parts.len())
        .step_by(2)
        .filter(|&i| {
            !parts[i].is_empty() && parts[i].chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
        .filter_map(|i| {
            let number = parts[i - 1]
                .trim_end()
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()?;
            Some((number, parts[i].to_owned()))
        })
        .collect();
    let named: BTreeSet<(i64, String)> = RequestCode::NAMED
        .iter()
        .map(|(code, name)| (code.0, name.to_string()))
        .collect();
    assert_eq!(listed, named, "docs/cluster.md: the request codes");
}

/// The words a kind's state or kind field takes, for `c.life starting`.
fn words_of(kind: &str) -> Vec<&'static str> {
    match kind {
        "c.life" => ConsumerState::ALL.iter().map(|s| s.word()).collect(),
        "b.life" | "ns.life" => ServerState::ALL.iter().map(|s| s.word()).collect(),
        "b.member" => GroupEvent::ALL.iter().map(|s| s.word()).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn the_specs_tables_of_trace_validation_use_the_schemas_words() {
    let spec = doc("spec.md");
    let text = section(&spec, "## Trace validation (`rebalance conform`)");
    let kinds: Vec<&str> = Kind::schema().into_iter().map(|(w, _)| w).collect();
    let actions: Vec<&str> = Env::schema().into_iter().map(|(w, _)| w).collect();
    let mut checked = 0;
    let rows = tables(text).into_iter().flat_map(|(header, body)| {
        // The column of what the trace has.
        let column = header.iter().position(|h| h.contains("trace"));
        body.into_iter()
            .filter_map(move |cells| cells.get(column?).copied())
    });
    for trace in rows {
        for token in quoted(trace) {
            let mut words = token.split(' ');
            let first = words.next().unwrap_or_default();
            let dotted =
                first.contains('.') && first.chars().all(|c| c.is_ascii_lowercase() || c == '.');
            if dotted {
                assert!(
                    kinds.contains(&first),
                    "docs/spec.md: `{first}` is no event kind"
                );
                for word in words {
                    assert!(
                        words_of(first).contains(&word),
                        "docs/spec.md: `{token}`: `{first}` has no `{word}`"
                    );
                }
                checked += 1;
            }
        }
        // "`NAME` (N)": a request code and its number.
        let parts: Vec<&str> = trace.split('`').collect();
        for (name, rest) in (1..parts.len())
            .step_by(2)
            .map(|i| (parts[i], parts.get(i + 1)))
        {
            let rest = rest.copied().unwrap_or_default();
            let number = rest
                .strip_prefix(" (")
                .and_then(|r| r.split(')').next())
                .and_then(|n| n.parse::<i64>().ok());
            if let Some(n) = number {
                assert_eq!(
                    RequestCode(n).name(),
                    Some(name),
                    "docs/spec.md: `{name}` ({n}) is no request code the trace names"
                );
                checked += 1;
            }
        }
        // "the orchestrator's `kill`": one of its actions.
        for part in trace.split("orchestrator's ").skip(1) {
            let action = part
                .trim_start_matches("step (")
                .split('`')
                .nth(1)
                .unwrap_or_default();
            assert!(
                actions.contains(&action),
                "docs/spec.md: the orchestrator has no action `{action}`"
            );
            checked += 1;
        }
    }
    assert!(
        checked > 20,
        "{checked} words checked: the tables were not found"
    );
}

#[test]
fn the_layout_names_every_source_file() {
    let cluster_md = doc("cluster.md");
    let layout = section(&cluster_md, "## Layout");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).expect("cluster/src") {
        let path = entry.expect("an entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let named = layout
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|word| word == stem);
        if stem != "lib" && !named {
            missing.push(stem.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/cluster.md's layout does not name {missing:?}"
    );
}
