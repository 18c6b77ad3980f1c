//! The model as Stateright's Explorer shows it, drawn from the views of
//! [`crate::view`]:
//!
//! - an ownership picture of every state: queues against consumers, a queue
//!   owned once, owned twice (red) or by nobody (grey), crashed and departed
//!   consumers marked, then the state's panels (each broker's member table,
//!   what each consumer last used, the messages in flight), so that a
//!   disagreement shows its cause;
//! - a sequence diagram of the path in RocketMQ's words, which the HTML
//!   report of `rebalance check --html` shows too.

use std::fmt::Write;

use stateright::Path;

use crate::shell::{Action, RebalanceModel, SystemState};
use crate::view::{Event, Holding, Sequence, StateView};

/// An SVG fragment (no `<svg>` element around it) and the room it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Svg {
    /// The elements.
    pub body: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Text as SVG text or attribute value, escaped as the HTML report
/// escapes all its text (`maud`'s escaper: `&`, `<`, `>` and `"`), so that
/// the diagrams the report embeds follow its one rule.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Writing to a `String` cannot fail.
    let _ = maud::Escaper::new(&mut out).write_str(text);
    out
}

/// Pixels that `chars` characters of 13-pixel text take, at most.
fn text_width(chars: usize) -> u32 {
    chars as u32 * 8
}

/// The ownership picture and the panels of one state.
pub fn state_svg(view: &StateView) -> Svg {
    let ownership = &view.ownership;
    let labels: Vec<String> = ownership
        .consumers
        .iter()
        .map(|c| match c.not_running {
            None => c.name.clone(),
            Some(phase) => format!("{} ({phase})", c.name),
        })
        .collect();
    let (cell, top) = (28u32, 40u32);
    let longest = labels.iter().map(String::len).max().unwrap_or(0);
    let left = text_width(longest).max(182) + 8;
    let mut width = left + ownership.queues.len() as u32 * cell;
    // A light card under the picture, as wide as whatever holds it:
    // Stateright's page is dark.
    let mut svg =
        String::from(r##"<rect x="0" y="0" width="100%" height="{HEIGHT}" fill="#fafafa"/>"##);
    let _ = write!(
        svg,
        r#"<text x="6" y="16" font-weight="bold">{}</text>"#,
        escape(&ownership.title())
    );
    for (column, queue) in ownership.queues.iter().enumerate() {
        let x = left + column as u32 * cell;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle" class="queue {}" fill="{}">{}</text>"#,
            x + cell / 2,
            top - 6,
            queue.holding.token(),
            queue.holding.colour(),
            escape(&queue.label)
        );
    }
    let mut y = top;
    for (row, label) in ownership.consumers.iter().zip(&labels) {
        let running = row.not_running.is_none();
        let _ = write!(
            svg,
            r#"<text x="6" y="{}" font-size="13" fill="{}"{}>{}</text>"#,
            y + 19,
            if running { "#000" } else { "#9e9e9e" },
            if running {
                ""
            } else {
                r#" text-decoration="line-through""#
            },
            escape(label),
        );
        for (column, (queue, &owned)) in ownership.queues.iter().zip(&row.owns).enumerate() {
            let x = left + column as u32 * cell;
            let fill = if owned {
                queue.holding.colour()
            } else {
                "#fff"
            };
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
    for (column, queue) in ownership.queues.iter().enumerate() {
        let x = left + column as u32 * cell;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{y}" width="{w}" height="{w}" fill="{}" class="holding {}"><title>{}</title></rect>"#,
            queue.holding.colour(),
            queue.holding.token(),
            queue.holding.word(),
            w = cell - 4
        );
    }
    y += cell + 8;
    for holding in [Holding::Twice, Holding::Nobody] {
        let labels = ownership.held(holding);
        if !labels.is_empty() {
            y += 18;
            let _ = write!(
                svg,
                r#"<text x="6" y="{y}" font-size="13" fill="{}" id="{}">{}: {}</text>"#,
                holding.colour(),
                holding.token(),
                holding.word(),
                escape(&labels.join(" "))
            );
        }
    }
    for panel in &view.panels {
        y += 30;
        let _ = write!(
            svg,
            r#"<text x="6" y="{y}" font-weight="bold">{}</text>"#,
            escape(&panel.title)
        );
        for line in &panel.lines {
            y += 18;
            width = width.max(text_width(line.len()) + 12);
            let _ = write!(
                svg,
                r#"<text x="6" y="{y}" font-size="13" font-family="monospace">{}</text>"#,
                escape(line)
            );
        }
    }
    let height = y + 20;
    Svg {
        body: svg.replacen("{HEIGHT}", &height.to_string(), 1),
        width,
        height,
    }
}

/// The explorer's picture of a path: the ownership picture and panels of
/// its last state, then the sequence diagram of the whole path.
pub fn path_svg(model: &RebalanceModel, path: &Path<SystemState, Action>) -> String {
    let picture = state_svg(&StateView::of(model, path.last_state()));
    let sequence = sequence_svg(&Sequence::of(model, &path.clone().into_vec()), None);
    format!(
        r#"<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif">{}<g transform="translate(0,{})">{}</g></svg>"#,
        picture.width.max(sequence.width),
        picture.height + sequence.height,
        picture.body,
        picture.height,
        sequence.body
    )
}

/// A message sequence chart in RocketMQ's words, as Stateright draws one:
/// one column per process, one row per step, each step's elements grouped
/// as `<g class="step" data-step="N">`. The steps after `cycle_start`, a
/// lasso's cycle, are drawn on a band.
pub fn sequence_svg(sequence: &Sequence, cycle_start: Option<usize>) -> Svg {
    const BLUE: &str = "#1565c0";
    const PURPLE: &str = "#6a1b9a";
    const GREEN: &str = "#2e7d32";
    let (column, row, top) = (110u32, 30u32, 40u32);
    let x = |c: usize| 60 + c as u32 * column;
    let y = |step: usize| top + step as u32 * row;
    let steps = sequence.events.len();
    let height = y(steps + 1);
    let width = x(sequence.actors.len().saturating_sub(1)) + 260;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<rect x="0" y="0" width="100%" height="{height}" fill="#ffffff"/><text x="6" y="16" font-weight="bold">sequence</text>"##
    );
    if let Some(start) = cycle_start.filter(|&s| s < steps) {
        let (from, to) = (y(start + 1) - row / 2 - 4, y(steps) + row / 2 - 4);
        let _ = write!(
            svg,
            r##"<rect x="0" y="{from}" width="{width}" height="{}" fill="#fff3e0" class="cycle"/><text x="4" y="{}" font-size="10" fill="#e65100">cycle</text>"##,
            to - from,
            from + 12
        );
    }
    for (c, name) in sequence.actors.iter().enumerate() {
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
    for (index, event) in sequence.events.iter().enumerate() {
        let step = index + 1;
        let _ = write!(svg, r#"<g class="step" data-step="{step}">"#);
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
                    r##"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{BLUE}"/>{}<text x="{}" y="{}" font-size="10" fill="{BLUE}" class="message">{}. {}</text>"##,
                    arrowhead((x1, y1), (x2, y2), BLUE),
                    (x1 + x2) / 2,
                    y2 - 4,
                    step,
                    escape(label)
                );
            }
            Event::Clock { label } => {
                let _ = write!(
                    svg,
                    r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{GREEN}" stroke-dasharray="4 3"/><text x="{3}" y="{4}" font-size="10" fill="{GREEN}" class="clock">{5}. {6}</text>"##,
                    x(0),
                    y(step),
                    x(sequence.actors.len().saturating_sub(1)),
                    x(sequence.actors.len().saturating_sub(1)) + 7,
                    y(step) + 4,
                    step,
                    escape(label)
                );
            }
            Event::Timer { at, label } => {
                let _ = write!(
                    svg,
                    r##"<circle cx="{0}" cy="{1}" r="4" fill="{PURPLE}"/><text x="{2}" y="{3}" font-size="10" fill="{PURPLE}" class="timer">{4}. {5}</text>"##,
                    x(*at),
                    y(step),
                    x(*at) + 7,
                    y(step) + 4,
                    step,
                    escape(label)
                );
            }
        }
        svg.push_str("</g>");
    }
    Svg {
        body: svg,
        width,
        height,
    }
}

/// A filled triangle at `to`, pointing away from `from`. Drawn rather than
/// a `<marker>`, whose id would repeat when a page holds several diagrams.
fn arrowhead(from: (u32, u32), to: (u32, u32), colour: &str) -> String {
    let (dx, dy) = (
        f64::from(to.0) - f64::from(from.0),
        f64::from(to.1) - f64::from(from.1),
    );
    let length = dx.hypot(dy).max(1.0);
    let (ux, uy) = (dx / length, dy / length);
    let (tip_x, tip_y) = (f64::from(to.0), f64::from(to.1));
    let (base_x, base_y) = (tip_x - 8.0 * ux, tip_y - 8.0 * uy);
    let (side_x, side_y) = (-uy * 4.0, ux * 4.0);
    format!(
        r#"<path d="M{tip_x:.1},{tip_y:.1} L{:.1},{:.1} L{:.1},{:.1} z" fill="{colour}"/>"#,
        base_x + side_x,
        base_y + side_y,
        base_x - side_x,
        base_y - side_y
    )
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn text_is_escaped_for_elements_and_attributes() {
        assert_eq!(
            escape(r#"<a href="x">&</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(escape("c1 (client id c2)"), "c1 (client id c2)");
    }
}
