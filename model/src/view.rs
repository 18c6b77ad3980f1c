//! What a state and a path look like, as data: the one description that
//! every picture of the model renders, the explorer's SVG (`explorer.rs`,
//! a layer above) and the HTML report of `rebalance check --html`.
//!
//! - [`StateView`]: the ownership picture of one state (queues of the
//!   current route against consumers, each queue owned once, twice or by
//!   nobody) and titled panels of facts (the name server, each broker's
//!   member table, what each consumer last used, the messages in flight).
//!   Panels are plain title and lines, so a new fact about a state is a new
//!   panel, and renderers show whatever panels there are.
//! - [`PathView`]: the numbered steps of a path in the trace's words, each
//!   with its state, its explorer path and, for a lasso, whether it lies in
//!   the cycle; and the [`Sequence`] of messages between processes.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use crate::config::{members_of, Allocator, Config, Effect, LockTiming, NetworkKind, QueueSet};
use crate::guarantees::Group;
use crate::protocol::message::NO_OFFSET;
use crate::protocol::{BrokerState, ConsumerState, Peer, Phase, PopStatus, SendBack};
use crate::search::{encode_path, replay};
use crate::shell::{Action, Envelope, RebalanceModel, SystemState};
use crate::trace::{
    consumer_name, cycle_marker, describe_action, describe_broker, describe_consumer,
    describe_message, describe_name_servers, describe_route, describe_step, phase_word, topic_list,
};

/// How a queue of the current route is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Holding {
    /// By exactly one live consumer.
    Once,
    /// By two or more live consumers: duplicate consumption.
    Twice,
    /// By no live consumer: consumption paused.
    Nobody,
}

impl Holding {
    /// Every way a queue can be held, in the order pictures list them.
    pub const ALL: [Holding; 3] = [Holding::Once, Holding::Twice, Holding::Nobody];

    fn of(owners: usize) -> Self {
        match owners {
            0 => Holding::Nobody,
            1 => Holding::Once,
            _ => Holding::Twice,
        }
    }

    /// In words: `owned once`, `owned twice`, `owned by nobody`.
    pub fn word(self) -> &'static str {
        match self {
            Holding::Once => "owned once",
            Holding::Twice => "owned twice",
            Holding::Nobody => "owned by nobody",
        }
    }

    /// The words as one token, for CSS classes and element ids:
    /// `owned-once`, `owned-twice`, `owned-by-nobody`.
    pub fn token(self) -> &'static str {
        match self {
            Holding::Once => "owned-once",
            Holding::Twice => "owned-twice",
            Holding::Nobody => "owned-by-nobody",
        }
    }

    /// Its colour in every picture: green, red, grey.
    pub fn colour(self) -> &'static str {
        match self {
            Holding::Once => "#2e7d32",
            Holding::Twice => "#d32f2f",
            Holding::Nobody => "#9e9e9e",
        }
    }
}

/// One queue of the current route: a column of the ownership picture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueColumn {
    /// Its short name (`a0`, `t2.b1`).
    pub label: String,
    /// How it is held.
    pub holding: Holding,
}

/// One consumer: a row of the ownership picture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConsumerRow {
    /// Its name, with its client id when that differs.
    pub name: String,
    /// Its phase in words when it is not running (`crashed`, `left`, `not
    /// started`); such a consumer owns nothing.
    pub not_running: Option<&'static str>,
    /// For each queue column, whether it owns that queue.
    pub owns: Vec<bool>,
}

/// Who owns which queue of the current route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ownership {
    /// The route version in force (steps of the operators' script).
    pub route: u8,
    /// The queues of the route in force, of every topic.
    pub queues: Vec<QueueColumn>,
    /// Every consumer, running or not.
    pub consumers: Vec<ConsumerRow>,
}

impl Ownership {
    /// Who owns what in `state`.
    pub fn of(model: &RebalanceModel, state: &SystemState) -> Self {
        let group = Group::of(model, state);
        let cfg = group.cfg;
        let route = group.true_route();
        let current: QueueSet =
            (0..cfg.topic_names.len()).fold(0, |set, t| set | cfg.route_queues(route, t));
        let queues: Vec<usize> = members_of(current).collect();
        let running = |c: &ConsumerState| c.phase == Phase::Running;
        let columns = queues
            .iter()
            .map(|&q| QueueColumn {
                label: cfg.queues[q].label.clone(),
                holding: Holding::of(
                    group
                        .consumers()
                        .filter(|c| running(c) && c.owned & (1 << q) != 0)
                        .count(),
                ),
            })
            .collect();
        let consumers = group
            .consumers()
            .enumerate()
            .map(|(i, c)| ConsumerRow {
                name: consumer_name(cfg, i),
                not_running: (!running(c)).then(|| phase_word(c.phase)),
                owns: queues
                    .iter()
                    .map(|&q| running(c) && c.owned & (1 << q) != 0)
                    .collect(),
            })
            .collect();
        Self {
            route: route.version,
            queues: columns,
            consumers,
        }
    }

    /// The picture's title: `ownership (route version 0)`.
    pub fn title(&self) -> String {
        format!("ownership (route version {})", self.route)
    }

    /// The labels of the queues held that way, in route order.
    pub fn held(&self, holding: Holding) -> Vec<&str> {
        self.queues
            .iter()
            .filter(|q| q.holding == holding)
            .map(|q| q.label.as_str())
            .collect()
    }
}

/// A titled list of facts about a state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Panel {
    /// What the lines are about (`brokers`, `consumers`).
    pub title: String,
    /// One fact a line, in RocketMQ's words.
    pub lines: Vec<String>,
}

/// Everything a picture shows of one state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateView {
    /// Queues against consumers.
    pub ownership: Ownership,
    /// The facts below the picture, one panel per kind of process or
    /// resource.
    pub panels: Vec<Panel>,
}

impl StateView {
    /// The view of `state`.
    pub fn of(model: &RebalanceModel, state: &SystemState) -> Self {
        let cfg = &*model.cfg;
        let group = Group::of(model, state);
        let mut routes = describe_name_servers(cfg, group.name_server());
        routes.extend((0..cfg.topic_names.len()).map(|t| {
            format!(
                "{}: queues {}",
                cfg.topic_names[t],
                cfg.queue_labels(cfg.route_queues(group.true_route(), t))
            )
        }));
        let brokers = group
            .brokers()
            .enumerate()
            .map(|(b, broker)| {
                let mut line = describe_broker(cfg, b, broker);
                let memory = &broker.memory;
                if memory.closed != 0 {
                    line += &format!(", closed connections {}", names(cfg, memory.closed));
                }
                if cfg.protocol.subscription_table {
                    line += &format!(
                        ", subscription table {}",
                        topic_list(cfg, memory.subscription)
                    );
                }
                if cfg.protocol.assignment == Allocator::Server {
                    line += &format!(", its route {}", describe_route(cfg, memory.route));
                }
                line
            })
            .collect();
        let consumers = group
            .consumers()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "{}; {}",
                    describe_consumer(cfg, i, c),
                    consumer_details(cfg, i, c)
                )
            })
            .collect();
        let mut in_flight: Vec<String> = state
            .network
            .iter()
            .map(|env| describe_action(model, None, &Action::Deliver(*env)))
            .collect();
        if in_flight.is_empty() {
            in_flight.push("nothing".into());
        }
        let panel = |title: &str, lines| Panel {
            title: title.into(),
            lines,
        };
        let mut panels = vec![
            panel("name server", routes),
            panel("brokers", brokers),
            panel("consumers", consumers),
            panel("messages in flight", in_flight),
        ];
        if cfg.messages() {
            panels.push(panel("offsets and deliveries", offsets(&group)));
        }
        if let Some(timing) = cfg.orderly() {
            panels.push(panel("locks and clock (in ticks)", locks(&group, timing)));
        }
        Self {
            ownership: Ownership::of(model, state),
            panels,
        }
    }
}

/// Consumers by name (not client id): `[c1 c3]`.
fn names(cfg: &Config, set: u16) -> String {
    let names: Vec<&str> = members_of(u64::from(set))
        .map(|i| cfg.consumers[i].name.as_str())
        .collect();
    format!("[{}]", names.join(" "))
}

/// What the trace's consumer line leaves out: the cached route, the
/// subscription, the brokers it cannot reach, the rebalance it is in the
/// middle of and the faults armed for it.
fn consumer_details(cfg: &Config, i: usize, c: &ConsumerState) -> String {
    let topics: Vec<&str> = c
        .subscribed()
        .map(|t| cfg.topic_names[t].as_str())
        .collect();
    let mut details = vec![
        format!("route {}", describe_route(cfg, c.route)),
        format!("subscribes {}", topics.join(",")),
    ];
    let unreachable: Vec<&str> = (0..cfg.broker_names.len())
        .filter(|b| cfg.consumers[i].unreachable & (1 << b) != 0)
        .map(|b| cfg.broker_names[b].as_str())
        .collect();
    if !unreachable.is_empty() {
        details.push(format!("cannot reach {}", unreachable.join(",")));
    }
    if c.phase == Phase::Running {
        if let Some(query) = c.querying {
            details.push(format!(
                "waiting for the member list of {} from {}",
                cfg.topic_names[usize::from(query.topic)],
                cfg.broker_names[usize::from(query.broker)]
            ));
        }
        if c.due != 0 {
            let due: Vec<&str> = members_of(u64::from(c.due))
                .map(|t| cfg.topic_names[t].as_str())
                .collect();
            details.push(format!("rebalance due for {}", due.join(",")));
        }
    }
    // Every fault scheduled for it, in the words of its definition.
    details.extend(c.faults.iter().filter_map(|f| match f.spec().effect {
        Effect::Scheduled(words) => Some(words.to_string()),
        Effect::Now => None,
    }));
    let reconnected: Vec<String> = (0..cfg.broker_names.len() as u8)
        .filter(|&b| c.epoch(b) > 0)
        .map(|b| format!("{} #{}", cfg.broker_names[usize::from(b)], c.epoch(b) + 1))
        .collect();
    if !reconnected.is_empty() {
        details.push(format!("connections {}", reconnected.join(", ")));
    }
    details.join(", ")
}

/// Orderly consumption, one line per queue: who the broker's lock table
/// says holds it and until when, then each consumer's side of it; and a
/// line per running consumer for its clock.
fn locks(group: &Group, timing: &LockTiming) -> Vec<String> {
    let cfg = group.cfg;
    let brokers: Vec<&BrokerState> = group.brokers().collect();
    let mut lines: Vec<String> = (0..cfg.queues.len())
        .map(|q| {
            let b = usize::from(cfg.broker_of(q));
            let table = brokers[b].memory.locks;
            let broker = match table.holder(q) {
                Some(key) => format!(
                    "{} lock held by {} for {} more tick(s)",
                    cfg.broker_names[b],
                    cfg.consumers[usize::from(key)].client_id,
                    timing.lease + 1 - table.age(q)
                ),
                None => format!("{} lock free", cfg.broker_names[b]),
            };
            let sides: Vec<String> = group
                .consumers()
                .enumerate()
                .filter(|(_, c)| c.phase == Phase::Running)
                .filter_map(|(i, c)| {
                    let pq = c.queues[q];
                    let name = &cfg.consumers[i].name;
                    if c.adding & 1 << q != 0 {
                        return Some(format!("{name} asking for it"));
                    }
                    if c.table() & 1 << q == 0 {
                        return None;
                    }
                    let trust = if pq.lock_trusted(timing.validity) {
                        format!(
                            "trusts its lock {} more tick(s)",
                            timing.validity + 1 - pq.lock_age
                        )
                    } else if pq.locked {
                        "its lock expired by its clock".into()
                    } else {
                        "not locked".into()
                    };
                    let dropped = if pq.dropped {
                        ", dropped, waiting to unlock"
                    } else {
                        ""
                    };
                    let batch = if pq.running() {
                        format!(", batch running {} tick(s)", pq.batch_age)
                    } else {
                        String::new()
                    };
                    Some(format!("{name} {trust}{dropped}{batch}"))
                })
                .collect();
            format!("{}: {broker}; {}", cfg.queues[q].label, sides.join(", "))
        })
        .collect();
    lines.extend(
        group
            .consumers()
            .enumerate()
            .filter(|(_, c)| c.phase == Phase::Running)
            .map(|(i, c)| {
                let slow = if c.lag > 0 {
                    format!(", its clock {} tick(s) behind", c.lag)
                } else {
                    String::new()
                };
                format!(
                    "{}: lockAll in {} tick(s){slow}",
                    cfg.consumers[i].name,
                    timing.renew - c.renew_age
                )
            }),
    );
    lines
}

/// With messages, one line per queue: the broker's committed offset, what
/// each consumer holding it is doing with it, and how many times each
/// message reached application code.
fn offsets(group: &Group) -> Vec<String> {
    let cfg = group.cfg;
    (0..cfg.queues.len())
        .map(|q| {
            let broker = &group.brokers().nth(usize::from(cfg.broker_of(q)));
            let stored = broker.map_or(NO_OFFSET, |b| b.offset(q));
            let committed = if cfg.pops() {
                let table = broker.map(|b| b.disk.pop).unwrap_or_default();
                let lives: Vec<String> = (0..cfg.sizes.messages)
                    .map(|o| match table.status(cfg, q, o) {
                        (PopStatus::Waiting, _) => "waiting".to_string(),
                        (PopStatus::Invisible, h) => format!("invisible (handle {h})"),
                        (PopStatus::Acked, _) => "acked".to_string(),
                        (PopStatus::Revived, _) => "revived".to_string(),
                    })
                    .collect();
                format!("messages {}", lives.join(", "))
            } else if stored == NO_OFFSET {
                "no offset".to_string()
            } else {
                format!("committed {stored}")
            };
            let holders: Vec<String> = group
                .consumers()
                .enumerate()
                .filter(|(_, c)| c.phase == Phase::Running)
                .filter_map(|(i, c)| {
                    let pq = c.queues[q];
                    let owned = c.owned & 1 << q != 0;
                    let doing = if pq.sending_back() {
                        format!("sending [{}, {}) back", pq.from, pq.to)
                    } else if pq.send_back == SendBack::Later {
                        format!("to consume [{}, {}) again", pq.from, pq.to)
                    } else if pq.running() {
                        let dropped = if owned { "" } else { ", dropped" };
                        let handle = if cfg.pops() {
                            format!(" under handle {}", pq.attempt)
                        } else {
                            String::new()
                        };
                        format!("consuming [{}, {}){handle}{dropped}", pq.from, pq.to)
                    } else if !owned {
                        return None;
                    } else if cfg.pops() {
                        (if pq.pulling { "popping" } else { "idle" }).into()
                    } else if pq.reading_offset {
                        "reading its offset".into()
                    } else if pq.awaiting_ack {
                        format!("at {}, commit not acknowledged", pq.cursor)
                    } else {
                        format!("at {}", pq.cursor)
                    };
                    Some(format!("{} {doing}", cfg.consumers[i].name))
                })
                .collect();
            let counts: Vec<String> = (0..cfg.sizes.messages)
                .map(|o| group.deliveries(q, o).to_string())
                .collect();
            format!(
                "{}: {committed}; {}; delivered [{}]",
                cfg.queues[q].label,
                if holders.is_empty() {
                    "nobody".to_string()
                } else {
                    holders.join(", ")
                },
                counts.join(" ")
            )
        })
        .collect()
}

/// One event of a sequence diagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Event {
    /// A message delivered at this step, sent at step `sent` (0: before
    /// the first step).
    Message {
        /// The step that sent it.
        sent: usize,
        /// Its sender's column.
        from: usize,
        /// Its receiver's column.
        to: usize,
        /// What it says.
        label: String,
    },
    /// A timer of the actor in column `at` fired.
    Timer {
        /// The actor's column.
        at: usize,
        /// What the actor did.
        label: String,
    },
    /// The clock ticked (orderly consumption): one tick passed for every
    /// process.
    Clock {
        /// The time since the path began, and whose clock stood still.
        label: String,
    },
}

/// The message sequence of a path: one column per process, one event per
/// step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sequence {
    /// The processes' names, in actor order (name server, brokers,
    /// consumers).
    pub actors: Vec<String>,
    /// The events, one per step: the event of step `n` is `events[n - 1]`.
    pub events: Vec<Event>,
}

impl Sequence {
    /// The sequence of the states and actions of a path (as
    /// [`replay`] and Stateright's `Path::into_vec` give them), with each
    /// delivered message matched to the step that sent it.
    pub fn of(model: &RebalanceModel, steps: &[(SystemState, Option<Action>)]) -> Self {
        let mut sent_at: BTreeMap<Envelope, VecDeque<usize>> = BTreeMap::new();
        if let Some((first, _)) = steps.first() {
            for env in first.network.iter() {
                sent_at.entry(*env).or_default().push_back(0);
            }
        }
        let mut events = Vec::new();
        let mut ticks = 0;
        for (index, pair) in steps.windows(2).enumerate() {
            let ((before, action), (after, _)) = (&pair[0], &pair[1]);
            let Some(action) = action else { continue };
            let step = index + 1;
            match action {
                Action::Deliver(env) => {
                    let sent = sent_at
                        .get_mut(env)
                        .and_then(VecDeque::pop_front)
                        .unwrap_or(0);
                    events.push(Event::Message {
                        sent,
                        from: model.index_of(env.src),
                        to: model.index_of(env.dst),
                        label: describe_message(&model.cfg, &env.msg),
                    });
                }
                Action::Timeout(peer, _) | Action::Fault(peer, _) => {
                    let full = describe_action(model, Some(before), action);
                    let label = full
                        .split_once(": ")
                        .map_or(full.clone(), |(_, what)| what.to_string());
                    events.push(Event::Timer {
                        at: model.index_of(*peer),
                        label,
                    });
                }
                Action::Elapse { lagging } => {
                    ticks += 1;
                    let slow = lagging.map_or(String::new(), |c| {
                        format!(
                            ", {}'s clock stands still",
                            model.peer_name(Peer::Consumer(c))
                        )
                    });
                    events.push(Event::Clock {
                        label: format!("t = {ticks}{slow}"),
                    });
                }
            }
            for env in newly_sent(model, before, after, action) {
                sent_at.entry(env).or_default().push_back(step);
            }
        }
        Self {
            actors: model
                .peers()
                .map(|p| model.peer_name(p).to_string())
                .collect(),
            events,
        }
    }
}

/// The messages `action` put on the network: what is in flight after it
/// and was not before (less what it consumed), counting copies.
fn newly_sent(
    model: &RebalanceModel,
    before: &SystemState,
    after: &SystemState,
    action: &Action,
) -> Vec<Envelope> {
    let mut remaining: Vec<Envelope> = before.network.iter().copied().collect();
    if let Action::Deliver(env) = action {
        if model.cfg.network != NetworkKind::Duplicating {
            if let Some(at) = remaining.iter().position(|e| e == env) {
                remaining.remove(at);
            }
        }
    }
    let mut fresh = Vec::new();
    for env in after.network.iter() {
        match remaining.iter().position(|e| e == env) {
            Some(at) => {
                remaining.remove(at);
            }
            None => fresh.push(*env),
        }
    }
    fresh
}

/// One state of a path and the step that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepView {
    /// Steps taken to reach it: 0 for the initial state.
    pub number: usize,
    /// The step, in the trace's words (`c1: rebalance, asks broker-b`);
    /// none for the initial state.
    pub action: Option<String>,
    /// A line for each consumer whose owned queues or member view the step
    /// changed, as the trace prints them.
    pub changes: Vec<String>,
    /// The path that opens this state in `rebalance explore`
    /// (`#/steps/0/...`).
    pub explorer_path: String,
    /// The state reached.
    pub state: StateView,
}

/// A path of the model, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathView {
    /// The initial state (number 0), then one entry per step.
    pub steps: Vec<StepView>,
    /// For a lasso, the step after which its cycle starts: the steps after
    /// it repeat for ever (when it is the last step, the last state stays
    /// for ever).
    pub cycle_start: Option<usize>,
    /// The messages between processes along the path.
    pub sequence: Sequence,
}

impl PathView {
    /// Rebuilds the path along Explorer action indices (the initial state's
    /// index, then one per step), as a check report gives them; `None`
    /// when they are not a path of `model`.
    pub fn replay(
        model: &RebalanceModel,
        indices: &[u32],
        cycle_start: Option<usize>,
    ) -> Option<Self> {
        let steps = replay(model, indices);
        if steps.len() != indices.len() || cycle_start.is_some_and(|s| s >= steps.len()) {
            return None;
        }
        let views = steps
            .iter()
            .enumerate()
            .map(|(number, (state, _))| {
                let (action, changes) = match number.checked_sub(1).map(|i| &steps[i]) {
                    Some((before, Some(action))) => {
                        let (action, changes) = describe_step(model, before, action, state);
                        (Some(action), changes)
                    }
                    _ => (None, Vec::new()),
                };
                StepView {
                    number,
                    action,
                    changes,
                    explorer_path: format!("#/steps/{}", encode_path(&indices[..=number])),
                    state: StateView::of(model, state),
                }
            })
            .collect();
        Some(Self {
            steps: views,
            cycle_start,
            sequence: Sequence::of(model, &steps),
        })
    }

    /// The number of the last step.
    pub fn last(&self) -> usize {
        self.steps.len().saturating_sub(1)
    }

    /// Whether step `number` is one of the lasso's cycle.
    pub fn in_cycle(&self, number: usize) -> bool {
        self.cycle_start.is_some_and(|start| number > start)
    }

    /// The trace's line that marks the cycle, for a lasso.
    pub fn cycle_marker(&self) -> Option<String> {
        self.cycle_start
            .map(|start| cycle_marker(start, self.last() - start))
    }
}
