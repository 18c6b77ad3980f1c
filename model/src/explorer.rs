//! The model as Stateright's Explorer shows it, with views of the
//! rebalance itself:
//!
//! - an ownership picture of every state: queues against consumers, a queue
//!   owned once, owned twice (red) or by nobody (grey), crashed and departed
//!   consumers marked;
//! - what each consumer last used (route version, member list, subscription)
//!   and each broker's member table, so that a disagreement shows its cause;
//! - a sequence diagram of the path in RocketMQ's words.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;

use stateright::Path;

use crate::config::{members_of, Config, NetworkKind, QueueSet};
use crate::properties::Group;
use crate::protocol::consumer::subscribed;
use crate::protocol::Phase;
use crate::shell::{Action, Envelope, RebalanceModel, SystemState};
use crate::trace::{describe_action, describe_message, describe_route, phase_word};

/// How a queue of the current route is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// By exactly one live consumer.
    Once,
    /// By two or more live consumers: duplicate consumption.
    Twice,
    /// By no live consumer: consumption paused.
    Nobody,
}

impl Holding {
    fn of(owners: usize) -> Self {
        match owners {
            0 => Holding::Nobody,
            1 => Holding::Once,
            _ => Holding::Twice,
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Holding::Once => "#2e7d32",
            Holding::Twice => "#d32f2f",
            Holding::Nobody => "#9e9e9e",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Holding::Once => "owned once",
            Holding::Twice => "owned twice",
            Holding::Nobody => "owned by nobody",
        }
    }
}

/// The queues of the current route of every topic, with how each is held.
pub fn holdings(model: &RebalanceModel, state: &SystemState) -> Vec<(usize, Holding)> {
    let group = Group::of(model, state);
    let cfg = group.cfg;
    let route = group.true_route();
    let current: QueueSet =
        (0..cfg.topic_names.len()).fold(0, |set, t| set | cfg.route_queues(route, t));
    members_of(current)
        .map(|q| {
            let owners = group
                .consumers()
                .filter(|c| c.phase == Phase::Running && c.owned & (1 << q) != 0)
                .count();
            (q, Holding::of(owners))
        })
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The ownership picture and the views of one state, as an SVG of the given
/// width; returns the SVG body and its height.
fn ownership_svg(model: &RebalanceModel, state: &SystemState) -> (String, u32) {
    let group = Group::of(model, state);
    let cfg: &Config = group.cfg;
    let queues = holdings(model, state);
    let (cell, left, top) = (28u32, 190u32, 40u32);
    // A light card under the picture: Stateright's page is dark.
    let mut svg =
        String::from(r##"<rect x="0" y="0" width="100%" height="{HEIGHT}" fill="#fafafa"/>"##);
    let _ = write!(
        svg,
        r#"<text x="6" y="16" font-weight="bold">ownership (route version {})</text>"#,
        group.name_server().version
    );
    for (column, (q, holding)) in queues.iter().enumerate() {
        let x = left + column as u32 * cell;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" class="queue {}" fill="{}">{}</text>"#,
            x + cell / 2,
            top - 6,
            holding.word().replace(' ', "-"),
            holding.colour(),
            escape(&cfg.queues[*q].label)
        );
    }
    let mut y = top;
    for (i, consumer) in group.consumers().enumerate() {
        let spec = &cfg.consumers[i];
        let running = consumer.phase == Phase::Running;
        let status = match consumer.phase {
            Phase::Running => String::new(),
            phase => format!(" ({})", phase_word(phase)),
        };
        let name = if spec.client_id == spec.name {
            spec.name.clone()
        } else {
            format!("{} id {}", spec.name, spec.client_id)
        };
        let _ = write!(
            svg,
            r#"<text x="6" y="{}" font-size="13" fill="{}"{}>{}{}</text>"#,
            y + 19,
            if running { "#000" } else { "#9e9e9e" },
            if running {
                ""
            } else {
                r#" text-decoration="line-through""#
            },
            escape(&name),
            status
        );
        for (column, (q, holding)) in queues.iter().enumerate() {
            let x = left + column as u32 * cell;
            let owned = running && consumer.owned & (1 << q) != 0;
            let fill = if owned { holding.colour() } else { "#fff" };
            let _ = write!(
                svg,
                r##"<rect x="{x}" y="{y}" width="{w}" height="{w}" fill="{fill}" stroke="#bbb"/>"##,
                w = cell - 4
            );
        }
        y += cell;
    }
    // The queues' own row: how each is held.
    let _ = write!(
        svg,
        r#"<text x="6" y="{}" font-size="13">held</text>"#,
        y + 19
    );
    for (column, (_, holding)) in queues.iter().enumerate() {
        let x = left + column as u32 * cell;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{y}" width="{w}" height="{w}" fill="{}" class="holding {}"><title>{}</title></rect>"#,
            holding.colour(),
            holding.word().replace(' ', "-"),
            holding.word(),
            w = cell - 4
        );
    }
    y += cell + 8;
    let twice: Vec<&str> = queues
        .iter()
        .filter(|(_, h)| *h == Holding::Twice)
        .map(|(q, _)| cfg.queues[*q].label.as_str())
        .collect();
    let nobody: Vec<&str> = queues
        .iter()
        .filter(|(_, h)| *h == Holding::Nobody)
        .map(|(q, _)| cfg.queues[*q].label.as_str())
        .collect();
    for (holding, labels) in [(Holding::Twice, &twice), (Holding::Nobody, &nobody)] {
        if !labels.is_empty() {
            y += 18;
            let _ = write!(
                svg,
                r#"<text x="6" y="{y}" font-size="13" fill="{}" id="{}">{}: {}</text>"#,
                holding.colour(),
                holding.word().replace(' ', "-"),
                holding.word(),
                escape(&labels.join(" "))
            );
        }
    }
    // Views: what each consumer last used, and each broker's table.
    y += 30;
    let _ = write!(
        svg,
        r#"<text x="6" y="{y}" font-weight="bold">views</text>"#
    );
    for line in views(model, state) {
        y += 18;
        let _ = write!(
            svg,
            r#"<text x="6" y="{y}" font-size="13" font-family="monospace">{}</text>"#,
            escape(&line)
        );
    }
    let height = y + 20;
    (svg.replacen("{HEIGHT}", &height.to_string(), 1), height)
}

/// One line per broker (its member table) and per consumer (what its last
/// allocation used and what it subscribes to).
fn views(model: &RebalanceModel, state: &SystemState) -> Vec<String> {
    let group = Group::of(model, state);
    let cfg = group.cfg;
    let mut lines: Vec<String> = group
        .brokers()
        .enumerate()
        .map(|(b, broker)| {
            format!(
                "{}: member table {}",
                cfg.broker_names[b],
                cfg.member_labels(broker.members)
            )
        })
        .collect();
    for (i, consumer) in group.consumers().enumerate() {
        let spec = &cfg.consumers[i];
        let topics: Vec<&str> = subscribed(cfg, i)
            .map(|t| cfg.topic_names[t].as_str())
            .collect();
        let used: Vec<String> = subscribed(cfg, i)
            .map(|t| match consumer.views[t] {
                Some(members) => format!("{} {}", cfg.topic_names[t], cfg.member_labels(members)),
                None => format!("{} (not yet)", cfg.topic_names[t]),
            })
            .collect();
        let unreachable: Vec<&str> = (0..cfg.broker_names.len())
            .filter(|b| spec.unreachable & (1 << b) != 0)
            .map(|b| cfg.broker_names[b].as_str())
            .collect();
        lines.push(format!(
            "{}: {}, route {}, subscribes {}, last used {}{}",
            spec.name,
            phase_word(consumer.phase),
            describe_route(cfg, consumer.route),
            topics.join(","),
            used.join("; "),
            if unreachable.is_empty() {
                String::new()
            } else {
                format!(", cannot reach {}", unreachable.join(","))
            }
        ));
    }
    lines
}

/// The explorer's picture of a path: the ownership picture and views of its
/// last state, then the sequence diagram of the whole path.
pub fn path_svg(model: &RebalanceModel, path: &Path<SystemState, Action>) -> String {
    let (picture, height) = ownership_svg(model, path.last_state());
    let (sequence, sequence_height) = sequence_svg(model, path);
    format!(
        r#"<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="900" height="{}" font-family="sans-serif">{picture}<g transform="translate(0,{height})">{sequence}</g></svg>"#,
        height + sequence_height
    )
}

/// One event of a sequence diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// The events of a path, one per step (numbered from 1), with each
/// delivered message matched to the step that sent it.
pub fn sequence(model: &RebalanceModel, path: &Path<SystemState, Action>) -> Vec<Event> {
    let steps = path.clone().into_vec();
    let mut sent_at: BTreeMap<Envelope, VecDeque<usize>> = BTreeMap::new();
    let mut events = Vec::new();
    for (index, pair) in steps.windows(2).enumerate() {
        let ((before, action), (after, _)) = (&pair[0], &pair[1]);
        let Some(action) = action else { continue };
        let step = index + 1;
        if index == 0 {
            for env in before.network.iter() {
                sent_at.entry(*env).or_default().push_back(0);
            }
        }
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
            Action::Timeout(peer, _) => {
                let full = describe_action(model, Some(before), action);
                let label = full
                    .split_once(": ")
                    .map_or(full.clone(), |(_, what)| what.to_string());
                events.push(Event::Timer {
                    at: model.index_of(*peer),
                    label,
                });
            }
        }
        for env in newly_sent(model, before, after, action) {
            sent_at.entry(env).or_default().push_back(step);
        }
    }
    events
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

/// Stateright-style message sequence chart of a path in RocketMQ's words:
/// one column per process, one row per step; returns the SVG body and its
/// height.
pub fn sequence_svg(model: &RebalanceModel, path: &Path<SystemState, Action>) -> (String, u32) {
    let names: Vec<&str> = model.peers().map(|p| model.peer_name(p)).collect();
    let events = sequence(model, path);
    let (column, row, top) = (110u32, 30u32, 40u32);
    let x = |c: usize| 60 + c as u32 * column;
    let y = |step: usize| top + step as u32 * row;
    let height = y(events.len() + 1);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<rect x="0" y="0" width="100%" height="{height}" fill="#ffffff"/><text x="6" y="16" font-weight="bold">sequence</text>"##
    );
    for (c, name) in names.iter().enumerate() {
        let _ = write!(
            svg,
            r##"<text x="{0}" y="{1}" font-size="12" text-anchor="middle">{2}</text><line x1="{0}" y1="{3}" x2="{0}" y2="{4}" stroke="#999"/>"##,
            x(c),
            top - 8,
            escape(name),
            top,
            height
        );
    }
    for (index, event) in events.iter().enumerate() {
        let step = index + 1;
        match event {
            Event::Message {
                sent,
                from,
                to,
                label,
            } => {
                let (x1, y1, x2, y2) = (x(*from), y(*sent), x(*to), y(step));
                let _ = write!(
                    svg,
                    r##"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#1565c0" marker-end="url(#arrow)"/><text x="{}" y="{}" font-size="10" fill="#1565c0" class="message">{}. {}</text>"##,
                    (x1 + x2) / 2,
                    y2 - 4,
                    step,
                    escape(label)
                );
            }
            Event::Timer { at, label } => {
                let _ = write!(
                    svg,
                    r##"<circle cx="{0}" cy="{1}" r="4" fill="#6a1b9a"/><text x="{2}" y="{3}" font-size="10" fill="#6a1b9a" class="timer">{4}. {5}</text>"##,
                    x(*at),
                    y(step),
                    x(*at) + 7,
                    y(step) + 4,
                    step,
                    escape(label)
                );
            }
        }
    }
    let defs = r##"<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#1565c0"/></marker></defs>"##;
    (format!("{defs}{svg}"), height)
}
