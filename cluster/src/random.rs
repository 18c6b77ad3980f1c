//! Randomised runs for trace validation: a seed picks what happens to a
//! running group (a join, a graceful leave, a kill, a pause past the
//! brokers' expiry, or a broker's restart with a downtime), whether it
//! happens at rest or while the group is still rebalancing its start, how
//! many messages flow, the timers, and a fault of the environment the
//! first consumer may meet (a lost notification, a failed query, or where
//! messages flow a batch its listener fails or an offset persist a broker
//! loses); the script it makes carries the model flags of that
//! configuration, so that the run is validated against the model
//! (`conformance`).
//!
//! Each pick is one the model's budgets give to the same consumer (a join
//! is the last consumer's, a leave the last running one's, a kill and a
//! pause the first's), so the model of the flags is the run's.

use rocketmq_rebalance::SplitMix64;
use serde_json::{json, Value};

use crate::script::Script;

/// A seed's stream of picks, the same on every machine.
struct Picks(SplitMix64);

impl Picks {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn one_of<'a, T>(&mut self, options: &'a [T]) -> &'a T {
        &options[(self.next() % options.len() as u64) as usize]
    }
}

/// What happens to the running group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    Join,
    Leave,
    Kill,
    Pause,
}

const CHANGES: [Change; 4] = [Change::Join, Change::Leave, Change::Kill, Change::Pause];

/// What a seed's run does: a change of its group, or, in its place, a
/// restart of `broker-a` with a downtime (stopped for that long, calls to
/// it refused, then started on the same store) of a group of two. With
/// three consumers the model of a restart that stops first is too large to
/// check before a run (`healthy --consumers 3 --joins 0 --queues 2
/// --broker-restarts 1 --restart-stops` past 200 s and 7.5 GB); with two,
/// 4,397,301 states in about 10 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Happening {
    Change(Change),
    Restart { downtime_ms: u64 },
}

/// The downtimes a restart picks from: shorter than a heartbeat's
/// interval, between it and the brokers' expiry (6 s here), and past the
/// expiry.
const DOWNTIMES_MS: [u64; 3] = [1000, 3000, 8000];

/// A fault the first consumer may meet, made by a harness rule that fires
/// once: its budget flag, the rule, the words for it, whether the model
/// needs messages for it, and the event that shows it fired where the run
/// must wait for it.
struct FaultPick {
    flag: &'static str,
    rule: fn() -> Value,
    what: &'static str,
    messages: bool,
    /// A rule with one is installed just before the change and the run
    /// waits for it to fire: its call comes on a timer, not with the
    /// change.
    fired: Option<fn() -> Value>,
}

/// The faults a seed picks from, after none: those of the membership
/// layer, which is the model of a randomised run.
const FAULTS: [Option<FaultPick>; 3] = [
    None,
    Some(FaultPick {
        flag: "--lost-notifications",
        rule: || {
            json!({"consumer": "c1", "id": "fault", "at": "client", "action": "drop",
                   "code": 40, "count": 1})
        },
        what: "c1 loses a notification",
        messages: false,
        fired: None,
    }),
    Some(FaultPick {
        flag: "--failed-queries",
        rule: || {
            json!({"consumer": "c1", "id": "fault", "at": "client", "action": "fail",
                   "code": 38, "count": 1})
        },
        what: "c1's member query fails once",
        messages: false,
        fired: None,
    }),
];

/// The faults a seed whose messages flow picks from where it picked none
/// above and its change is a kill or a leave: those of the message layer,
/// for which the model has messages too: one a queue (deliveries are not
/// observed, so their number does not matter), and the run one queue a
/// broker. With two, or with a join or a pause, the check with messages
/// takes minutes (`healthy --consumers 3 --joins 0 --kills 1 --queues 2
/// --messages 1 --lost-persists 1` 113 s and 2.3 GB; `healthy --consumers
/// 4 --joins 1 --messages 1 --consume-failures 1` past 120 s), too long
/// for a run. Picked after, so that a seed's earlier picks are those it
/// made before these existed; a seed that picked a failing listener when
/// it could also pick none picks it still.
const MESSAGE_FAULTS: [FaultPick; 2] = [
    // `c1` persists its queues' offsets, one-way, every second from ten
    // seconds after its start (`MQClientInstance`'s scheduled task), so
    // the broker's rule meets one of them while `c1` still runs.
    FaultPick {
        flag: "--lost-persists",
        rule: || {
            json!({"id": "fault", "at": "broker", "action": "fail", "code": 15,
                   "client": "127.0.0.1@c1", "count": 1})
        },
        what: "a broker loses an offset persist of c1's",
        messages: true,
        fired: Some(|| json!({"ev": "b.fault", "code": 15, "client": "127.0.0.1@c1"})),
    },
    FaultPick {
        flag: "--consume-failures",
        rule: || json!({"consumer": "c1", "id": "fault", "at": "listener", "action": "fail", "count": 1}),
        what: "c1's listener fails a batch once",
        messages: true,
        fired: None,
    },
];

/// The script of seed `seed`, or why it is not a valid script (a bug of
/// this generator: its tests run twenty seeds).
pub fn random_script(seed: u64) -> Result<Script, String> {
    let mut picks = Picks(SplitMix64::new(seed));
    let change = *picks.one_of(&CHANGES);
    let at_rest = picks.next() % 2 == 0;
    let messages = *picks.one_of(&[0u32, 2, 5]);
    let heartbeat = *picks.one_of(&[500u64, 1000, 2000]);
    let rebalance = *picks.one_of(&[1000u64, 2000, 3000]);
    let poll = *picks.one_of(&[1000u64, 2000, 5000]);
    // Picked last, so that the picks before it are those of every seed's
    // script before faults were picked.
    let fault = picks.one_of(&FAULTS).as_ref().or_else(|| {
        (messages > 0 && matches!(change, Change::Kill | Change::Leave))
            .then(|| picks.one_of(&MESSAGE_FAULTS))
    });
    // Picked after the faults, for the same reason, and only by a seed
    // that picked none: one in four of those restarts a broker instead.
    let happening = if fault.is_none() && picks.next() % 4 == 0 {
        Happening::Restart {
            downtime_ms: *picks.one_of(&DOWNTIMES_MS),
        }
    } else {
        Happening::Change(change)
    };
    let running = if matches!(happening, Happening::Restart { .. }) {
        2
    } else {
        3
    };
    let consumers = running + usize::from(happening == Happening::Change(Change::Join));
    // The run's queues a broker, which both models have (without messages
    // their number does not change the model's size, only who owns what).
    let queues = if fault.is_some_and(|f| f.messages) {
        1
    } else {
        2
    };
    // The model compared with (its check runs before the cluster, so it is
    // small): the group running and balanced when the change comes.
    let flags = |joins: usize| {
        let mut flags = vec![
            "--scenario".to_owned(),
            "healthy".to_owned(),
            "--consumers".to_owned(),
            consumers.to_string(),
            "--joins".to_owned(),
            joins.to_string(),
            "--queues".to_owned(),
            queues.to_string(),
        ];
        let budget: &[&str] = match happening {
            Happening::Change(Change::Join) => &[],
            Happening::Change(Change::Leave) => &["--leaves", "1"],
            Happening::Change(Change::Kill) => &["--kills", "1"],
            Happening::Change(Change::Pause) => &["--expiries", "1"],
            Happening::Restart { .. } => &["--broker-restarts", "1", "--restart-stops"],
        };
        flags.extend(budget.iter().map(|&f| f.to_owned()));
        if let Some(fault) = fault {
            if fault.messages {
                flags.extend(["--messages".to_owned(), "1".to_owned()]);
            }
            flags.extend([fault.flag.to_owned(), "1".to_owned()]);
        }
        flags
    };
    let model = flags(usize::from(happening == Happening::Change(Change::Join)));
    // Trace validation's model: the same at rest; otherwise a cold start,
    // every consumer joining, so that the run's start is validated too (the
    // search follows the trace, so its size does not matter).
    let mut conform = if at_rest {
        model.clone()
    } else {
        flags(consumers)
    };
    // A consumer resuming from a pause may reconnect on two channels at
    // once, and a broker then lists it twice until one expires.
    if happening == Happening::Change(Change::Pause) {
        conform.extend(["--second-channels".to_owned(), "1".to_owned()]);
    }
    let at_start = fault.filter(|f| f.fired.is_none());
    let before_change = fault.and_then(|f| f.fired.map(|fired| (f, fired)));
    let mut steps: Vec<Value> = at_start
        .map(|f| json!({"rule": (f.rule)()}))
        .into_iter()
        .collect();
    steps.extend((1..=running).map(|c| json!({"start": format!("c{c}")})));
    if at_rest {
        steps.push(json!({"await": {"for": "settled", "timeout_s": 120}}));
    }
    if messages > 0 {
        steps.push(json!({"produce": messages}));
    }
    let unregistered = |client: &str| -> Vec<Value> {
        ["broker-a", "broker-b"]
            .iter()
            .map(|b| {
                json!({"await": {"for": {"ev": "b.member", "kind": "CLIENT_UNREGISTER",
                                          "broker": b, "client": format!("127.0.0.1@{client}")},
                                 "timeout_s": 90}})
            })
            .collect()
    };
    if let Some((f, fired)) = before_change {
        steps.push(json!({"rule": (f.rule)()}));
        steps.push(json!({"await": {"for": fired(), "timeout_s": 60}}));
    }
    let what = match happening {
        Happening::Change(Change::Join) => {
            steps.push(json!({"start": "c4"}));
            "c4 joins c1 c2 c3".to_owned()
        }
        Happening::Change(Change::Leave) => {
            steps.push(json!({"shutdown": "c3"}));
            "c3 of three shuts down".to_owned()
        }
        Happening::Change(Change::Kill) => {
            steps.push(json!({"kill": "c1"}));
            "c1 of three is killed".to_owned()
        }
        Happening::Change(Change::Pause) => {
            steps.push(json!({"stop": "c1"}));
            steps.extend(unregistered("c1"));
            steps.push(json!({"cont": "c1"}));
            "c1 of three pauses past the brokers' expiry, then resumes".to_owned()
        }
        Happening::Restart { downtime_ms } => {
            steps.push(
                json!({"restart_broker": {"broker": "broker-a", "downtime_ms": downtime_ms}}),
            );
            format!("broker-a restarts with a downtime of {downtime_ms} ms under c1 c2")
        }
    };
    if messages > 0 {
        steps.push(json!({"await": {"for": "delivered", "timeout_s": 120}}));
    }
    steps.push(json!({"await": {"for": "settled", "timeout_s": 120}}));
    let script = json!({
        "scenario": format!("random-{seed}"),
        "what": format!(
            "seed {seed}: {what}, {}, {messages} messages a queue{}; heartbeat {heartbeat} ms, rebalance {rebalance} ms, route poll {poll} ms",
            if at_rest { "at rest" } else { "while the group still starts" },
            fault.map_or(String::new(), |f| format!(", {}", f.what))
        ),
        "model": model,
        "conform": conform,
        "from_settled": true,
        "queues": queues,
        "consumers": (1..=consumers).map(|c| json!({"name": format!("c{c}")})).collect::<Vec<_>>(),
        "timers": {
            "client_properties": {"rocketmq.client.rebalance.waitInterval": rebalance},
            "client_config": {"heartbeatBrokerInterval": heartbeat,
                              "pollNameServerInterval": poll,
                              "persistConsumerOffsetInterval": 1000},
            "broker_config": {"channelExpiredTimeout": 6000}
        },
        "steps": steps,
    });
    Script::parse(&script.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_script_and_the_seeds_cover_every_change() {
        let what = |s: u64| random_script(s).unwrap().what;
        assert_eq!(what(7), what(7));
        let seen: Vec<String> = (1..=20).map(|s| random_script(s).unwrap().what).collect();
        for needle in [
            "joins",
            "shuts down",
            "is killed",
            "pauses",
            "loses a notification",
            "query fails once",
            "fails a batch once",
            "loses an offset persist",
            "restarts with a downtime",
        ] {
            assert!(
                seen.iter().any(|w| w.contains(needle)),
                "{needle}: {seen:#?}"
            );
        }
    }

    #[test]
    fn the_model_flags_budget_the_change_for_the_consumer_it_happens_to() {
        for seed in 1..=20 {
            let s = random_script(seed).unwrap();
            let flags = s.conform.clone().unwrap_or_default().join(" ");
            let expected = if s.what.contains("joins") {
                "--consumers 4 --joins"
            } else if s.what.contains("restarts") {
                "--broker-restarts 1 --restart-stops"
            } else if s.what.contains("shuts down") {
                "--leaves 1"
            } else if s.what.contains("killed") {
                "--kills 1"
            } else {
                "--expiries 1"
            };
            assert!(flags.contains(expected), "{seed}: {flags}");
            assert_eq!(
                flags.contains("--second-channels 1"),
                s.what.contains("pauses"),
                "{seed}: {flags}"
            );
            // A fault is the first consumer's, which its budget of one
            // gives it, and its rule fires once.
            for (words, flag) in [
                ("loses a notification", "--lost-notifications 1"),
                ("query fails once", "--failed-queries 1"),
                ("fails a batch once", "--consume-failures 1"),
                ("loses an offset persist", "--lost-persists 1"),
            ] {
                assert_eq!(
                    flags.contains(flag),
                    s.what.contains(words),
                    "{seed}: {flags}"
                );
            }
            let rules = s.steps.iter().filter(|step| matches!(step, crate::script::Step::Rule { count: Some(1), consumer: Some(c), .. } if c == "c1")).count();
            assert_eq!(
                rules,
                usize::from(
                    flags.contains("--lost-notifications")
                        || flags.contains("--failed-queries")
                        || flags.contains("--consume-failures")
                ),
                "{seed}"
            );
            // The broker's rule meets c1's persists alone.
            let persists = s.steps.iter().filter(|step| matches!(step, crate::script::Step::Rule { count: Some(1), consumer: None, code: Some(15), client: Some(c), .. } if c == "127.0.0.1@c1")).count();
            assert_eq!(
                persists,
                usize::from(flags.contains("--lost-persists")),
                "{seed}"
            );
            // Both models have the run's queues; with a fault of the message
            // layer, messages and one queue a broker, and only with a kill
            // or a leave.
            let model = s.model.join(" ");
            let queues = format!("--queues {}", s.queues);
            assert!(
                model.contains(&queues) && flags.contains(&queues),
                "{seed}: {model}"
            );
            if s.what.contains("fails a batch once") || s.what.contains("loses an offset persist") {
                assert!(
                    flags.contains("--messages 1") && s.queues == 1,
                    "{seed}: {flags}"
                );
                assert!(s.what.contains("killed") || s.what.contains("shuts down"));
            }
            // A restart replaces the group's change: a group of two, and
            // one restart of broker-a with one of the downtimes.
            let restarts: Vec<_> = s
                .steps
                .iter()
                .filter_map(|step| match step {
                    crate::script::Step::RestartBroker {
                        broker,
                        downtime_ms,
                    } => Some((broker.as_str(), *downtime_ms)),
                    _ => None,
                })
                .collect();
            if s.what.contains("restarts") {
                assert_eq!(s.consumers.len(), 2, "{seed}");
                assert!(
                    matches!(restarts[..], [("broker-a", Some(ms))] if DOWNTIMES_MS.contains(&ms)),
                    "{seed}: {restarts:?}"
                );
                assert!(model.contains("--restart-stops"), "{seed}: {model}");
            } else {
                assert_eq!(restarts, [], "{seed}");
            }
            // Not at rest, every consumer joins: the model starts cold.
            if s.what.contains("still starts") {
                let consumers = s.consumers.len().to_string();
                assert!(
                    flags.contains(&format!("--joins {consumers}")),
                    "{seed}: {flags}"
                );
            }
        }
    }
}
