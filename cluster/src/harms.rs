//! The harms users fear, measured on a real run: how long a queue that
//! changes owner goes unconsumed, how many of its messages the new owner
//! delivers again, and how far the backlog rises after a change.
//!
//! A **hand-over** is an ownership span of a queue (from the observer),
//! begun once messages are being sent (a harm needs messages), whose
//! previous span, in order of start, is another consumer's. The old
//! owner lets go when its span ends, or earlier when its process is paused
//! (a paused process consumes nothing, though it still owns its queues) or
//! begins a graceful shutdown (which stops its consumption first, then
//! persists its offsets and unregisters, and only then releases its
//! queues).
//! Its **pause** runs from that moment to the new owner's first delivery
//! of the queue: negative when the new owner began before the old one let
//! go (the two consumed the queue at once), absent when the new owner
//! delivered nothing of it. Its **duplicates** are the messages of the
//! queue the new owner delivered during its span that the old owner had
//! delivered before. The **backlog** is the messages sent and not yet
//! delivered once; its steady value is its highest between the first
//! message sent and the first change of the group after it, its peak the
//! highest after that change. A queue **consumed by two** at once is a
//! window from the first moment two consumers each ran a batch of it to the
//! last such moment.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::observe::{Observer, Span};
use crate::trace::{stop_ends, ConsumerState, Env, Event, Kind};

/// One queue changing owner.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HandOver {
    /// The queue (`broker-a:0`).
    pub queue: String,
    /// The old owner.
    pub from: String,
    /// The new owner.
    pub to: String,
    /// The last change of the group before it (`shutdown c1`), if any.
    pub after: Option<String>,
    /// When the old owner let go, seconds from the start of the trace;
    /// absent if it never did.
    pub released_s: Option<f64>,
    /// Seconds from the old owner letting go to the new owner's first
    /// delivery of the queue.
    pub pause_s: Option<f64>,
    /// Messages the new owner delivered that the old one had delivered.
    pub duplicates: usize,
}

/// A figure over the hand-overs that have it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// How many hand-overs have it.
    pub count: usize,
    /// Their median (the lower middle one).
    pub median: f64,
    /// Their mean.
    pub mean: f64,
    /// Their highest.
    pub max: f64,
}

impl Figures {
    fn of(mut values: Vec<f64>) -> Option<Figures> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(Figures {
            count: values.len(),
            median: values[(values.len() - 1) / 2],
            mean: values.iter().sum::<f64>() / values.len() as f64,
            max: values[values.len() - 1],
        })
    }
}

/// The backlog before and after the group's first change under load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Backlog {
    /// The change (`kill c2`).
    pub change: String,
    /// The highest backlog from the first message sent to the change.
    pub steady: u64,
    /// The highest backlog after the change.
    pub peak: u64,
    /// Seconds from the change to that peak.
    pub peak_after_s: f64,
}

/// A window in which two consumers ran batches of one queue at once.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    /// The queue.
    pub queue: String,
    /// The two consumers, sorted.
    pub consumers: [String; 2],
    /// Its first moment, seconds from the start of the trace.
    pub from_s: f64,
    /// Its last moment.
    pub until_s: f64,
    /// Its length in seconds.
    pub seconds: f64,
}

/// The harms of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Harms {
    /// Every hand-over, in order of the new owner's start.
    pub hand_overs: Vec<HandOver>,
    /// Pauses, in seconds, of the hand-overs whose new owner delivered.
    pub pause_s: Option<Figures>,
    /// Duplicates of each hand-over.
    pub duplicates_per_hand_over: Option<Figures>,
    /// The backlog around the first change under load.
    pub backlog: Option<Backlog>,
    /// Each queue two consumers consumed at once, and for how long.
    pub consumed_by_two: Vec<Overlap>,
}

/// A delivery to one consumer of one queue: when it began, and its offsets.
type Delivery = (u64, Vec<i64>);

/// A change of the group, as the orchestrator recorded it (`kill c1`).
fn change(e: &Event) -> Option<String> {
    match &e.kind {
        Kind::Env { action } => Some(format!("{} {}", action.word(), action.subject())),
        _ => None,
    }
}

/// A batch of `topic`'s: its consumer's start or end of it, with its queue
/// and offsets. A POP batch is none: its queue is the assignment's, every
/// consumer's, and hands nothing over.
fn batch<'a>(e: &'a Event, topic: &str) -> Option<(bool, &'a str, &'a [i64])> {
    match &e.kind {
        Kind::ConsumeBegin {
            topic: t,
            queue,
            offsets,
            msgs: None,
        } if t == topic => Some((true, queue, offsets)),
        Kind::ConsumeEnd {
            topic: t,
            queue,
            offsets,
            msgs: None,
        }
        | Kind::ConsumeInterrupted {
            topic: t,
            queue,
            offsets,
            msgs: None,
        } if t == topic => Some((false, queue, offsets)),
        _ => None,
    }
}

fn sent(e: &Event, topic: &str) -> bool {
    matches!(&e.kind, Kind::Sent { topic: t, .. } if t == topic)
}

/// Measures the harms of a run of `topic` from its merged trace (sorted by
/// time) and the observer that folded it.
pub fn measure(events: &[Event], observer: &Observer, topic: &str) -> Harms {
    let t0 = observer.span.map_or(0, |(a, _)| a);
    let secs = |t: u64| t.saturating_sub(t0) as f64 / 1e9;
    let mut delivered: BTreeMap<(&str, &str), Vec<Delivery>> = BTreeMap::new();
    // When each consumer stopped consuming while still owning its queues.
    let mut stopped: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in events {
        if let Some((true, q, offsets)) = batch(e, topic) {
            delivered
                .entry((e.p.as_str(), q))
                .or_default()
                .push((e.t, offsets.to_vec()));
        }
        // A batch its listener stopped unconsumed was no delivery.
        if let Kind::ConsumeInterrupted {
            topic: t,
            queue,
            offsets,
            msgs: None,
        } = &e.kind
        {
            if t == topic {
                if let Some(mine) = delivered.get_mut(&(e.p.as_str(), queue.as_str())) {
                    if let Some(i) = mine.iter().rposition(|(_, o)| o == offsets) {
                        mine.remove(i);
                    }
                }
            }
        }
        if let Kind::Env {
            action: Env::Stop { consumer } | Env::Shutdown { consumer },
        } = &e.kind
        {
            stopped.entry(consumer).or_default().push(e.t);
        }
    }
    let released = |span: &Span| {
        let pause = stopped
            .get(span.consumer.as_str())
            .into_iter()
            .flatten()
            .copied()
            .find(|&t| t >= span.from && span.until.map_or(true, |u| t < u));
        pause.or(span.until)
    };
    let changes: Vec<(u64, String)> = events
        .iter()
        .filter_map(|e| change(e).map(|c| (e.t, c)))
        .collect();
    let last_change_before = |t: u64| {
        changes
            .iter()
            .take_while(|(at, _)| *at <= t)
            .last()
            .map(|(_, c)| c.clone())
    };
    let load = events.iter().find(|e| sent(e, topic)).map(|e| e.t);
    let mut hand_overs = Vec::new();
    // A POP group's queues are every consumer's: none is handed over.
    let owners = if observer.pop {
        None
    } else {
        Some(&observer.ownership)
    };
    for (queue, spans) in owners.into_iter().flatten() {
        let mut spans: Vec<&Span> = spans.iter().collect();
        spans.sort_by_key(|s| s.from);
        for pair in spans.windows(2) {
            let (old, new) = (pair[0], pair[1]);
            if old.consumer == new.consumer || load.map_or(true, |t| new.from < t) {
                continue;
            }
            let within = |t: u64| t >= new.from && new.until.map_or(true, |u| t <= u);
            let mine = delivered
                .get(&(new.consumer.as_str(), queue.as_str()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let theirs = delivered
                .get(&(old.consumer.as_str(), queue.as_str()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let first = mine.iter().map(|(t, _)| *t).find(|&t| within(t));
            let released_at = released(old);
            let mut again: BTreeSet<i64> = BTreeSet::new();
            for (t, batch) in mine.iter().filter(|(t, _)| within(*t)) {
                let before: BTreeSet<i64> = theirs
                    .iter()
                    .filter(|(u, _)| u < t)
                    .flat_map(|(_, b)| b.iter().copied())
                    .collect();
                again.extend(batch.iter().filter(|o| before.contains(o)));
            }
            hand_overs.push(HandOver {
                queue: queue.clone(),
                from: old.consumer.clone(),
                to: new.consumer.clone(),
                after: last_change_before(released_at.unwrap_or(new.from).min(new.from)),
                released_s: released_at.map(secs),
                pause_s: first
                    .zip(released_at)
                    .map(|(f, r)| (f as f64 - r as f64) / 1e9),
                duplicates: again.len(),
            });
        }
    }
    hand_overs.sort_by(|a, b| {
        let start = |h: &HandOver| h.released_s.unwrap_or(f64::INFINITY);
        start(a).total_cmp(&start(b)).then(a.queue.cmp(&b.queue))
    });
    Harms {
        pause_s: Figures::of(hand_overs.iter().filter_map(|h| h.pause_s).collect()),
        duplicates_per_hand_over: Figures::of(
            hand_overs.iter().map(|h| h.duplicates as f64).collect(),
        ),
        backlog: backlog(events, topic, load, &changes),
        consumed_by_two: overlaps(events, topic)
            .into_iter()
            .map(|((queue, consumers), (from, until))| Overlap {
                queue,
                consumers,
                from_s: secs(from),
                until_s: secs(until),
                seconds: until.saturating_sub(from) as f64 / 1e9,
            })
            .collect(),
        hand_overs,
    }
}

/// A batch: from its begin to its end (its consumer's death if it died
/// first, the end of the trace if neither came), by its consumer. A paused
/// consumer's batch stays open: it resumes and finishes it. A stop that
/// nothing continues or kills is a death there (a dead host), as the
/// translator reads it: the frozen process runs nothing after it.
struct Batch<'a> {
    consumer: &'a str,
    begin: u64,
    end: u64,
}

/// For each queue and pair of consumers that ran batches of it at once,
/// the first and last moment they did.
fn overlaps(events: &[Event], topic: &str) -> BTreeMap<(String, [String; 2]), (u64, u64)> {
    let last = events.last().map_or(0, |e| e.t);
    let deaths: Vec<(&str, u64)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.kind {
            Kind::Env {
                action: Env::Kill { consumer },
            } => Some((consumer.as_str(), e.t)),
            Kind::Env {
                action: Env::Stop { consumer },
            } if stop_ends(events, i, consumer).is_none() => Some((consumer.as_str(), e.t)),
            Kind::ConsumerLife {
                state: ConsumerState::Stopped,
                ..
            } => Some((e.p.as_str(), e.t)),
            _ => None,
        })
        .collect();
    let death = |consumer: &str, after: u64| {
        deaths
            .iter()
            .filter(|(c, t)| *c == consumer && *t >= after)
            .map(|(_, t)| *t)
            .min()
            .unwrap_or(last)
    };
    let mut batches: BTreeMap<&str, Vec<Batch>> = BTreeMap::new();
    // Open batches by (consumer, queue, offsets), oldest first.
    let mut open: BTreeMap<(&str, &str, Vec<i64>), Vec<usize>> = BTreeMap::new();
    for e in events {
        let Some((begins, queue, offsets)) = batch(e, topic) else {
            continue;
        };
        let key = (e.p.as_str(), queue, offsets.to_vec());
        let list = batches.entry(queue).or_default();
        if begins {
            open.entry(key).or_default().push(list.len());
            list.push(Batch {
                consumer: &e.p,
                begin: e.t,
                end: death(&e.p, e.t),
            });
        } else if let Some(i) = open
            .get_mut(&key)
            .filter(|v| !v.is_empty())
            .map(|v| v.remove(0))
        {
            list[i].end = list[i].end.min(e.t);
        }
    }
    let mut windows: BTreeMap<(String, [String; 2]), (u64, u64)> = BTreeMap::new();
    for (queue, list) in batches {
        // In order of begin: each batch meets the earlier ones still running.
        for (i, b) in list.iter().enumerate() {
            for a in list[..i]
                .iter()
                .filter(|a| a.consumer != b.consumer && a.end > b.begin)
            {
                let mut pair = [a.consumer.to_owned(), b.consumer.to_owned()];
                pair.sort();
                let (from, until) = (b.begin, a.end.min(b.end));
                let w = windows
                    .entry((queue.to_owned(), pair))
                    .or_insert((from, until));
                *w = (w.0.min(from), w.1.max(until));
            }
        }
    }
    windows
}

/// The backlog around the first change after the first message sent.
fn backlog(
    events: &[Event],
    topic: &str,
    load: Option<u64>,
    changes: &[(u64, String)],
) -> Option<Backlog> {
    let first_sent = load?;
    let (at, change) = changes.iter().find(|(t, _)| *t > first_sent)?;
    let (mut count, mut once) = (0u64, BTreeSet::new());
    let (mut steady, mut peak, mut peak_t) = (0u64, 0u64, *at);
    for e in events {
        if sent(e, topic) {
            count += 1;
        } else if let Some((true, q, offsets)) = batch(e, topic) {
            once.extend(offsets.iter().map(|&o| (q.to_owned(), o)));
        } else {
            continue;
        }
        let now = count.saturating_sub(once.len() as u64);
        if e.t <= *at {
            steady = steady.max(now);
        } else if now > peak {
            (peak, peak_t) = (now, e.t);
        }
    }
    Some(Backlog {
        change: change.clone(),
        steady,
        peak,
        peak_after_s: peak_t.saturating_sub(*at) as f64 / 1e9,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An event at `t` seconds, read as the trace has it.
    fn event(t: u64, p: &str, ev: &str, fields: serde_json::Value) -> Event {
        let mut line = fields;
        line["t"] = json!(t * 1_000_000_000);
        line["p"] = json!(p);
        line["seq"] = json!(t);
        line["ev"] = json!(ev);
        Event::from_json(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn alloc(t: u64, p: &str, result: &[&str]) -> Event {
        event(
            t,
            p,
            "c.alloc",
            json!({"topic": "T", "cid": format!("127.0.0.1@{p}"), "mq_all": ["broker-a:0", "broker-a:1"],
                   "cid_all": ["127.0.0.1@c1", "127.0.0.1@c2"], "result": result}),
        )
    }

    fn batch(t: u64, p: &str, q: &str, offsets: &[i64]) -> Event {
        event(
            t,
            p,
            "c.consume.begin",
            json!({"topic": "T", "queue": q, "offsets": offsets}),
        )
    }

    fn sent(t: u64, q: &str, offset: i64) -> Event {
        event(
            t,
            "cluster",
            "p.sent",
            json!({"topic": "T", "queue": q, "offset": offset, "msg": "m"}),
        )
    }

    fn measured(events: &[Event]) -> Harms {
        let mut obs = Observer::new(
            "T",
            &["broker-a".to_owned()],
            2,
            &[
                ("c1".into(), "127.0.0.1@c1".into()),
                ("c2".into(), "127.0.0.1@c2".into()),
            ],
            30_000,
            false,
        );
        let started: Vec<Event> = ["c1", "c2"]
            .iter()
            .map(|c| {
                let client = format!("127.0.0.1@{c}");
                event(
                    0,
                    c,
                    "c.life",
                    json!({"state": "starting", "client": client}),
                )
            })
            .collect();
        let events: Vec<Event> = started.into_iter().chain(events.iter().cloned()).collect();
        for e in &events {
            obs.apply(e);
        }
        measure(&events, &obs, "T")
    }

    #[test]
    fn a_join_hands_a_queue_over_with_its_pause_and_duplicates() {
        let events = [
            alloc(1, "c1", &["broker-a:0", "broker-a:1"]),
            sent(2, "broker-a:1", 0),
            sent(2, "broker-a:1", 1),
            batch(3, "c1", "broker-a:1", &[0]),
            batch(4, "c1", "broker-a:1", &[1]),
            event(
                5,
                "orchestrator",
                "env",
                json!({"action": "start", "consumer": "c2"}),
            ),
            sent(5, "broker-a:1", 2),
            alloc(6, "c2", &["broker-a:1"]),
            alloc(7, "c1", &["broker-a:0"]),
            // c2 read the offset c1 persisted before 1: it delivers 1 again.
            batch(9, "c2", "broker-a:1", &[1]),
            batch(10, "c2", "broker-a:1", &[2]),
        ];
        let harms = measured(&events);
        assert_eq!(
            harms.hand_overs,
            [HandOver {
                queue: "broker-a:1".into(),
                from: "c1".into(),
                to: "c2".into(),
                after: Some("start c2".into()),
                released_s: Some(7.0),
                pause_s: Some(2.0),
                duplicates: 1,
            }]
        );
        assert_eq!(harms.pause_s.as_ref().map(|f| f.max), Some(2.0));
        let backlog = harms.backlog.expect("messages were sent before the join");
        assert_eq!((backlog.steady, backlog.peak), (2, 1));
        assert_eq!(backlog.change, "start c2");
    }

    #[test]
    fn a_batch_stopped_unconsumed_is_delivered_again_by_nobody() {
        let events = [
            alloc(1, "c1", &["broker-a:0", "broker-a:1"]),
            sent(2, "broker-a:1", 0),
            batch(3, "c1", "broker-a:1", &[0]),
            event(
                4,
                "c1",
                "c.consume.interrupted",
                json!({"topic": "T", "queue": "broker-a:1", "offsets": [0]}),
            ),
            event(
                5,
                "orchestrator",
                "env",
                json!({"action": "start", "consumer": "c2"}),
            ),
            alloc(6, "c2", &["broker-a:1"]),
            alloc(7, "c1", &["broker-a:0"]),
            batch(8, "c2", "broker-a:1", &[0]),
        ];
        let harms = measured(&events);
        let duplicates: Vec<usize> = harms.hand_overs.iter().map(|h| h.duplicates).collect();
        assert_eq!(duplicates, [0], "{:#?}", harms.hand_overs);
    }

    #[test]
    fn a_paused_owner_lets_go_when_it_stops() {
        let events = [
            alloc(1, "c1", &["broker-a:0", "broker-a:1"]),
            sent(1, "broker-a:0", 0),
            event(
                2,
                "orchestrator",
                "env",
                json!({"action": "stop", "consumer": "c1"}),
            ),
            alloc(5, "c2", &["broker-a:0", "broker-a:1"]),
            batch(6, "c2", "broker-a:0", &[0]),
            // c1 lets go of a1 only when it resumes and allocates again.
            alloc(8, "c1", &["broker-a:0"]),
        ];
        let harms = measured(&events);
        let a0 = &harms.hand_overs[0];
        assert_eq!(
            (a0.queue.as_str(), a0.released_s, a0.pause_s),
            ("broker-a:0", Some(2.0), Some(4.0))
        );
        assert_eq!(a0.after.as_deref(), Some("stop c1"));
        let a1 = &harms.hand_overs[1];
        assert_eq!(
            (a1.queue.as_str(), a1.pause_s),
            ("broker-a:1", None),
            "c2 delivered nothing of a1"
        );
        assert_eq!(harms.pause_s.map(|f| f.count), Some(1));
        let backlog = harms.backlog.expect("a message was sent before the pause");
        assert_eq!((backlog.steady, backlog.peak), (1, 0));
    }

    #[test]
    fn a_queue_that_moves_before_any_message_is_sent_is_no_harm() {
        let events = [
            alloc(1, "c1", &["broker-a:0", "broker-a:1"]),
            alloc(2, "c2", &["broker-a:1"]),
            alloc(3, "c1", &["broker-a:0"]),
            sent(4, "broker-a:1", 0),
        ];
        assert!(measured(&events).hand_overs.is_empty());
    }

    #[test]
    fn two_consumers_running_batches_of_one_queue_make_one_window() {
        let end = |t: u64, p: &str, q: &str, offsets: &[i64]| {
            event(
                t,
                p,
                "c.consume.end",
                json!({"topic": "T", "queue": q, "offsets": offsets}),
            )
        };
        let events = [
            batch(1, "c1", "broker-a:0", &[0]),
            batch(2, "c2", "broker-a:0", &[0]),
            end(3, "c2", "broker-a:0", &[0]),
            batch(4, "c2", "broker-a:0", &[1]),
            end(6, "c1", "broker-a:0", &[0]),
            end(7, "c2", "broker-a:0", &[1]),
            // Alone again, then a batch of another queue.
            batch(8, "c2", "broker-a:0", &[2]),
            batch(8, "c1", "broker-a:1", &[0]),
            // A killed consumer's open batch ends with it.
            event(
                9,
                "orchestrator",
                "env",
                json!({"action": "kill", "consumer": "c1"}),
            ),
            batch(10, "c2", "broker-a:1", &[0]),
        ];
        let harms = measured(&events);
        assert_eq!(
            harms.consumed_by_two.len(),
            1,
            "{:?}",
            harms.consumed_by_two
        );
        let w = &harms.consumed_by_two[0];
        assert_eq!(
            (w.queue.as_str(), &w.consumers),
            ("broker-a:0", &["c1".to_owned(), "c2".to_owned()])
        );
        assert_eq!((w.from_s, w.until_s, w.seconds), (2.0, 6.0, 4.0));
    }

    /// A stop that nothing continues is a dead host: its open batch ends
    /// there (`grpc-pop-crash`), where a paused consumer's, continued
    /// later, runs on.
    #[test]
    fn a_batch_frozen_for_good_ends_at_the_stop() {
        let env = |t: u64, action: &str, c: &str| {
            event(
                t,
                "orchestrator",
                "env",
                json!({"action": action, "consumer": c}),
            )
        };
        let frozen = [
            batch(1, "c1", "broker-a:0", &[0]),
            env(2, "stop", "c1"),
            batch(3, "c2", "broker-a:0", &[0]),
            batch(5, "c2", "broker-a:1", &[0]),
        ];
        assert!(measured(&frozen).consumed_by_two.is_empty());
        let paused = [
            batch(1, "c1", "broker-a:0", &[0]),
            env(2, "stop", "c1"),
            batch(3, "c2", "broker-a:0", &[0]),
            env(4, "cont", "c1"),
            batch(5, "c2", "broker-a:1", &[0]),
        ];
        let harms = measured(&paused);
        assert_eq!(
            harms.consumed_by_two.len(),
            1,
            "{:?}",
            harms.consumed_by_two
        );
        assert_eq!(harms.consumed_by_two[0].from_s, 3.0);
    }

    #[test]
    fn figures_take_the_lower_middle_the_mean_and_the_highest() {
        let f = Figures::of(vec![10.0, 1.0, 3.0, 2.0]).expect("four values");
        assert_eq!((f.count, f.median, f.mean, f.max), (4, 2.0, 4.0, 10.0));
        assert_eq!(Figures::of(vec![5.0]).map(|f| f.median), Some(5.0));
        assert!(Figures::of(Vec::new()).is_none());
    }

    #[test]
    fn a_shutdown_releases_at_its_start_and_other_topics_do_not_count() {
        let other_sent = event(
            1,
            "cluster",
            "p.sent",
            json!({"topic": "U", "queue": "broker-a:1", "offset": 9, "msg": "m"}),
        );
        let other_batch = event(
            2,
            "c2",
            "c.consume.begin",
            json!({"topic": "U", "queue": "broker-a:1", "offsets": [9]}),
        );
        let events = [
            alloc(1, "c1", &["broker-a:0", "broker-a:1"]),
            sent(1, "broker-a:1", 0),
            other_sent,
            batch(2, "c1", "broker-a:1", &[0]),
            // c2 never subscribed to U: its batch there meets nothing.
            other_batch,
            event(
                3,
                "orchestrator",
                "env",
                json!({"action": "shutdown", "consumer": "c1"}),
            ),
            // The shutdown stops c1's consumption; its open batch ends when it stops.
            event(
                5,
                "c1",
                "c.life",
                json!({"state": "stopped", "client": "127.0.0.1@c1"}),
            ),
            alloc(6, "c2", &["broker-a:0", "broker-a:1"]),
            batch(7, "c2", "broker-a:1", &[0]),
        ];
        let harms = measured(&events);
        let a1 = harms
            .hand_overs
            .iter()
            .find(|h| h.queue == "broker-a:1")
            .expect("a1 handed over");
        assert_eq!(
            (a1.released_s, a1.pause_s, a1.duplicates),
            (Some(3.0), Some(4.0), 1)
        );
        assert_eq!(a1.after.as_deref(), Some("shutdown c1"));
        assert!(
            harms.consumed_by_two.is_empty(),
            "{:?}",
            harms.consumed_by_two
        );
        let backlog = harms.backlog.expect("a message was sent");
        assert_eq!(
            (backlog.steady, backlog.peak),
            (1, 0),
            "U's message is not TopicTest's backlog"
        );
    }

    #[test]
    fn a_queue_taken_back_by_its_owner_is_no_hand_over() {
        let events = [
            alloc(1, "c1", &["broker-a:0"]),
            alloc(2, "c1", &[]),
            alloc(3, "c1", &["broker-a:0"]),
        ];
        assert!(measured(&events).hand_overs.is_empty());
    }
}
