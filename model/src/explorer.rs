//! The model as Stateright's Explorer shows it: the same states and actions
//! as [`RebalanceModel`] (so explorer paths and `check`'s paths are the same
//! action indices), with views of the rebalance itself:
//!
//! - an ownership picture of every state: queues against consumers, a queue
//!   owned once, owned twice (red) or by nobody (grey), crashed and departed
//!   consumers marked;
//! - what each consumer last used (route version, member list, subscription)
//!   and each broker's member table, so that a disagreement shows its cause;
//! - readable action names, and Stateright's message sequence diagram.

use std::fmt::Write;

use stateright::{Model, Path, Property};

use crate::actor::RebalanceModel;
use crate::config::{members_of, Config, QueueSet};
use crate::consumer::{subscribed, Phase};
use crate::properties::{Group, SystemState, PROPERTIES};
use crate::trace::{describe_action, describe_state, Action};

/// [`RebalanceModel`] with the explorer's views.
pub struct ExplorerModel {
    /// The checked model.
    pub inner: RebalanceModel,
}

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
    let route = group.name_server().route;
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
        group.name_server().route
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
            Phase::Idle => " (not started)".into(),
            Phase::Left => " (left)".into(),
            Phase::Crashed => " (crashed)".into(),
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
            "{}: {:?}, route v{}, subscribes {}, last used {}{}",
            spec.name,
            consumer.phase,
            consumer.route,
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

/// Adapts property `I` of [`PROPERTIES`] to the explorer model (properties
/// are plain function pointers, so one instance per index).
fn property_condition<const I: usize>(model: &ExplorerModel, state: &SystemState) -> bool {
    (PROPERTIES[I].condition)(&model.inner, state)
}

impl Model for ExplorerModel {
    type State = SystemState;
    type Action = Action;

    fn init_states(&self) -> Vec<SystemState> {
        self.inner.init_states()
    }

    fn actions(&self, state: &SystemState, actions: &mut Vec<Action>) {
        self.inner.actions(state, actions)
    }

    fn next_state(&self, state: &SystemState, action: Action) -> Option<SystemState> {
        self.inner.next_state(state, action)
    }

    fn format_action(&self, action: &Action) -> String {
        describe_action(&self.inner.cfg, None, action)
    }

    fn format_step(&self, last_state: &SystemState, action: Action) -> Option<String> {
        let label = describe_action(&self.inner.cfg, Some(last_state), &action);
        self.inner
            .next_state(last_state, action)
            .map(|next| format!("{label}\n{}", describe_state(&self.inner, &next).join("\n")))
    }

    fn as_svg(&self, path: Path<SystemState, Action>) -> Option<String> {
        let (picture, height) = ownership_svg(&self.inner, path.last_state());
        let sequence = self.inner.as_svg(path).unwrap_or_default();
        // Nest Stateright's sequence diagram (an <svg> element of its own)
        // below the picture.
        let sequence_height = sequence
            .split("height='")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .and_then(|h| h.parse::<u32>().ok())
            .unwrap_or(400);
        let nested = sequence.replacen("<svg ", &format!("<svg y='{height}' "), 1);
        Some(format!(
            r#"<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="900" height="{}" font-family="sans-serif">{picture}{nested}</svg>"#,
            height + sequence_height
        ))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        const CONDITIONS: [fn(&ExplorerModel, &SystemState) -> bool; 6] = [
            property_condition::<0>,
            property_condition::<1>,
            property_condition::<2>,
            property_condition::<3>,
            property_condition::<4>,
            property_condition::<5>,
        ];
        const _: () = assert!(PROPERTIES.len() == CONDITIONS.len());
        PROPERTIES
            .iter()
            .zip(CONDITIONS)
            .map(|(p, condition)| match p.expectation {
                stateright::Expectation::Always => Property::always(p.name, condition),
                stateright::Expectation::Sometimes => Property::sometimes(p.name, condition),
                stateright::Expectation::Eventually => Property::eventually(p.name, condition),
            })
            .collect()
    }

    fn within_boundary(&self, state: &SystemState) -> bool {
        Model::within_boundary(&self.inner, state)
    }
}
