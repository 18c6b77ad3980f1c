//! The merged NDJSON trace of one run: the events every process of the
//! cluster emits (schema in `docs/cluster.md`), and the orchestrator's own.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The trace schema's version, written in the `topology` event and in the
/// orchestrator's `run` event; a trace of another version is refused.
pub const SCHEMA: u64 = 1;

/// One event of the trace.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Event {
    /// CLOCK_MONOTONIC in nanoseconds (Java's `System.nanoTime()`), the
    /// same clock in every process of the host.
    pub t: u64,
    /// The process: `cluster`, a consumer's name, or `orchestrator`.
    pub p: String,
    /// The process's own sequence number.
    pub seq: u64,
    /// The emitting thread.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thr: String,
    /// The event's kind (`c.alloc`, `b.member`, `env`, ...).
    pub ev: String,
    /// The kind's own fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl Event {
    /// The string field `name`.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.fields.get(name).and_then(Value::as_str)
    }

    /// The integer field `name`.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.fields.get(name).and_then(Value::as_i64)
    }

    /// The string list field `name` (empty when absent).
    pub fn strings(&self, name: &str) -> Vec<String> {
        self.fields
            .get(name)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether every field of `pattern` (and `ev`, `p` if given) has the
    /// same JSON value in this event.
    pub fn matches(&self, pattern: &Map<String, Value>) -> bool {
        pattern.iter().all(|(k, v)| match k.as_str() {
            "ev" => v.as_str() == Some(self.ev.as_str()),
            "p" => v.as_str() == Some(self.p.as_str()),
            _ => self.fields.get(k) == Some(v),
        })
    }
}

/// Reads a trace: one event a line; a malformed line, or a trace with no
/// `run` event of this schema, is an error naming the line.
pub fn parse(text: &str) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: Event =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        events.push(event);
    }
    match events.iter().find(|e| e.ev == "run") {
        Some(run) if run.int("schema") == Some(SCHEMA as i64) => Ok(events),
        Some(run) => Err(format!(
            "trace schema {:?}, this program reads schema {SCHEMA}",
            run.fields.get("schema")
        )),
        None => Err("no `run` event: not a trace of `rebalance cluster`".into()),
    }
}

/// The model's short name of a queue: `broker-a:0` is `a0`.
pub fn short_queue(queue: &str) -> String {
    match queue.split_once(':') {
        Some((broker, id)) => format!("{}{id}", broker.strip_prefix("broker-").unwrap_or(broker)),
        None => queue.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_match_patterns() {
        let line = r#"{"t":5,"p":"c1","seq":1,"thr":"x","ev":"c.alloc","topic":"T","result":["broker-a:0"]}"#;
        let e: Event = serde_json::from_str(line).unwrap();
        assert_eq!(e.strings("result"), ["broker-a:0"]);
        let pattern: Map<String, Value> =
            serde_json::from_str(r#"{"ev":"c.alloc","p":"c1","topic":"T"}"#).unwrap();
        assert!(e.matches(&pattern));
        let other: Map<String, Value> =
            serde_json::from_str(r#"{"ev":"c.alloc","topic":"U"}"#).unwrap();
        assert!(!e.matches(&other));
        assert_eq!(short_queue("broker-b:1"), "b1");
    }

    #[test]
    fn a_trace_without_its_schema_is_refused() {
        assert!(parse("{\"t\":1,\"p\":\"c1\",\"seq\":1,\"ev\":\"x\"}").is_err());
        assert!(parse("not json").unwrap_err().starts_with("line 1"));
        let run = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","schema":99}"#;
        assert!(parse(run).unwrap_err().contains("schema"));
        let run = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","schema":1}"#;
        assert_eq!(parse(run).unwrap().len(), 1);
    }
}
