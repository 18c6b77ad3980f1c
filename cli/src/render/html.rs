//! The HTML report of `rebalance check --html FILE`: one self-contained
//! page, its style and script inline and nothing fetched, so that it opens
//! from a file, a CI artifact or a static host.
//!
//! It holds the text report's facts in the text report's words (the
//! configuration, how the run ended, every verdict) and each counterexample
//! and example step by step: the steps in the trace's words, for each the
//! ownership picture, the panels of [`StateView`] and the explorer URL; the
//! sequence diagram of the explorer; a lasso's cycle marked. Every state is
//! rendered into the page, one shown at a time by the script (all of them,
//! one under the other, without it).
//!
//! The page is a [`maud`] template: every piece of text from the model is
//! escaped by the template itself (`&`, `<`, `>` and `"`), so no text can
//! become markup or leave an attribute. The only markup taken as it is:
//! the style (`report.css`) and the script (`report.js`), beside this file
//! and included at build time, and the sequence diagram, which the model
//! draws with the same escaper.

use std::collections::HashSet;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use rocketmq_rebalance_model::view::{Holding, PathView, StateView};
use rocketmq_rebalance_model::{
    report::{PropertyReport, Report},
    sequence_svg, RebalanceModel,
};

use super::report_text::{
    explorer_link, explorer_note, run_lines, status_word, summary, trace_heading, trace_kind,
};

/// The page's style, apart from the colours of holdings (see [`style`]).
const STYLE: &str = include_str!("report.css");

/// Steps through each trace: one state shown at a time (the `current`
/// class on its step, state and diagram row), moved by the step links,
/// the URL fragment (`#id-step-N`) and the keys. Marks the page with
/// `data-script="ok"` when it ran, or the error when it failed.
const SCRIPT: &str = include_str!("report.js");

/// A line break between elements, as the page's source reads best.
const NL: PreEscaped<&str> = PreEscaped("\n");

/// The page of `report`, whose paths are replayed on `model` (the model
/// the check explored); explorer URLs point at `explorer_url`.
pub fn html_report(report: &Report, model: &RebalanceModel, explorer_url: &str) -> String {
    let outcome = match report.exit_code() {
        0 => "passed",
        1 => "failed",
        _ => "incomplete",
    };
    let traced = traced(report);
    let note = explorer_note(report);
    let page = html! {
        (DOCTYPE) (NL)
        html lang="en" {
            (NL)
            head {
                (NL)
                meta charset="utf-8"; (NL)
                meta name="viewport" content="width=device-width, initial-scale=1"; (NL)
                title { "rebalance check " (outcome) ": " (model.cfg.scenario.to_string()) } (NL)
                style { (NL) (PreEscaped(style())) } (NL)
            }
            (NL)
            body {
                (NL)
                header {
                    (NL)
                    h1 { "rebalance check: " span class={ "outcome " (outcome) } { (outcome) } } (NL)
                    p class="summary" { (summary(&model.cfg)) } (NL)
                    @for line in run_lines(report) {
                        p class="run" { (line) } (NL)
                    }
                    (properties(report, &traced))
                    p class="keys" {
                        "Each trace shows one state at a time, the last one first: click a step, or press "
                        kbd { "→" } " or " kbd { "j" } " for the next step, "
                        kbd { "←" } " or " kbd { "k" } " for the previous one, "
                        kbd { "Home" } " and " kbd { "End" }
                        " for the first and the last, in the trace you last clicked. Every step has its own link ("
                        code { "#…-step-N" } ") to paste into an issue."
                    }
                    (NL)
                }
                (NL)
                main {
                    (NL)
                    @for t in &traced {
                        (trace(model, (explorer_url, note), t))
                    }
                }
                (NL)
                script { (NL) (PreEscaped(SCRIPT)) } (NL)
            }
            (NL)
        }
        (NL)
    };
    page.into_string()
}

/// The table of verdicts, each traced property linked to its section.
fn properties(report: &Report, traced: &[Traced]) -> Markup {
    html! {
        table class="properties" {
            (NL)
            thead { tr { th { "verdict" } th { "expectation" } th { "property" } th {} } } (NL)
            tbody {
                (NL)
                @for p in &report.properties {
                    tr class="property" data-status=(json_word(&p.status)) {
                        td class="status" { (status_word(p.status)) }
                        td { (p.expectation) }
                        td class="name" { (p.name) }
                        td {
                            @if let Some(t) = traced.iter().find(|t| t.property.name == p.name) {
                                a href={ "#" (t.id) } { (t.kind) }
                            }
                        }
                    }
                    (NL)
                }
            }
            (NL)
        }
        (NL)
    }
}

/// A property with a trace, as the page shows it.
struct Traced<'a> {
    property: &'a PropertyReport,
    /// `counterexample` or `example`.
    kind: &'static str,
    /// Its section's element id, from its name.
    id: String,
}

/// The properties with a trace: counterexamples first, then examples, each
/// in report order, with distinct ids.
fn traced(report: &Report) -> Vec<Traced<'_>> {
    let mut ids = HashSet::new();
    let mut traced = Vec::new();
    for wanted in ["counterexample", "example"] {
        for property in report.properties.iter().filter(|p| p.trace.is_some()) {
            let Some(kind) = trace_kind(property.status).filter(|k| *k == wanted) else {
                continue;
            };
            let mut id = slug(&property.name);
            while !ids.insert(id.clone()) {
                id.push('-');
            }
            traced.push(Traced { property, kind, id });
        }
    }
    traced
}

/// One counterexample or example: the steps on the left, the current state
/// on the right, the sequence diagram and the text trace below. Without a
/// path to replay (never from `rebalance check`), the text trace alone.
fn trace(model: &RebalanceModel, (explorer_url, note): (&str, &str), t: &Traced) -> Markup {
    let p = t.property;
    let view = p
        .path
        .as_ref()
        .and_then(|indices| PathView::replay(model, indices, p.cycle_start));
    html! {
        section class="trace" id=(t.id) data-last=(view.as_ref().map_or(0, PathView::last))
            data-cycle-start=[p.cycle_start] {
            (NL)
            h2 { (trace_heading(t.kind, p).trim_end_matches(':')) } (NL)
            @if let Some(view) = &view {
                @if let Some(marker) = view.cycle_marker() {
                    p class="cycle-note" { (marker) } (NL)
                }
                div class="walk" {
                    (NL)
                    (steps(view, &t.id))
                    (states(view, &t.id, (explorer_url, note)))
                }
                (NL)
                (sequence(view)) (NL)
            }
            details class="text-trace" open[view.is_none()] {
                summary { "the trace as text" }
                pre {
                    @if let Some(path) = &p.explorer_path {
                        "explorer: " (explorer_link(explorer_url, path)) "  " (note) "\n"
                    }
                    @for line in p.trace.iter().flatten() {
                        (line) "\n"
                    }
                }
            }
            (NL)
        }
        (NL)
    }
}

/// The sequence diagram of a path, as the explorer draws it.
fn sequence(view: &PathView) -> Markup {
    let sequence = sequence_svg(&view.sequence, view.cycle_start);
    let (w, h) = (sequence.width, sequence.height);
    html! {
        figure class="sequence" {
            figcaption { "sequence (the current step in bold)" }
            div class="scroll" {
                svg width=(w) height=(h) viewBox={ "0 0 " (w) " " (h) } font-family="sans-serif"
                    role="img" aria-label="message sequence chart" {
                    // Drawn by the model, its text escaped as here.
                    (PreEscaped(&sequence.body))
                }
            }
        }
    }
}

/// The list of steps, each a link to its state, with the trace's line and
/// its change lines; the cycle's steps marked and preceded by the trace's
/// marker.
fn steps(view: &PathView, id: &str) -> Markup {
    html! {
        ul class="steps" {
            (NL)
            @for step in &view.steps {
                @let in_cycle = view.in_cycle(step.number);
                @if in_cycle && !view.in_cycle(step.number - 1) {
                    (cycle_marker(view))
                }
                li class={ "step" @if in_cycle { " cycle" } } data-step=(step.number) {
                    a href={ "#" (id) "-step-" (step.number) } {
                        span class="line" {
                            (step.number) ". " (step.action.as_deref().unwrap_or("initial state"))
                        }
                    }
                    @for change in &step.changes {
                        span class="change" { (change) }
                    }
                }
                (NL)
            }
            // A lasso whose last state stays for ever: the marker closes the
            // list, as it precedes the final state in the trace.
            @if view.cycle_start == Some(view.last()) {
                (cycle_marker(view))
            }
        }
        (NL)
    }
}

/// Every state of the path, each with links to its neighbours and the
/// explorer URL that opens it.
fn states(view: &PathView, id: &str, (explorer_url, note): (&str, &str)) -> Markup {
    let last = view.last();
    html! {
        div class="states" {
            (NL)
            @for step in &view.steps {
                @let n = step.number;
                div class="state" id={ (id) "-step-" (n) } data-step=(n) {
                    (NL)
                    p class="where" {
                        @match &step.action {
                            Some(action) => { "step " (n) " of " (last) ": " (action) }
                            None => { "initial state (step 0 of " (last) ")" }
                        }
                        @if view.in_cycle(n) {
                            " " span class="in-cycle" { "in the cycle" }
                        }
                    }
                    (NL)
                    p class="nav" {
                        @if n > 0 {
                            a href={ "#" (id) "-step-" (n - 1) } rel="prev" { "← step " (n - 1) } " "
                        }
                        @if n < last {
                            a href={ "#" (id) "-step-" (n + 1) } rel="next" { "step " (n + 1) " →" }
                        }
                    }
                    (NL)
                    (state(&step.state))
                    p class="explorer" {
                        "explorer: " code { (explorer_link(explorer_url, &step.explorer_path)) } " " (note)
                    }
                    (NL)
                }
                (NL)
            }
        }
        (NL)
    }
}

fn cycle_marker(view: &PathView) -> Markup {
    html! {
        @if let Some(marker) = view.cycle_marker() {
            li class="cycle-marker" { (marker) } (NL)
        }
    }
}

/// The ownership table, the queues held twice and by nobody, and every
/// panel, whatever panels the view has.
fn state(state: &StateView) -> Markup {
    let ownership = &state.ownership;
    html! {
        table class="ownership" {
            (NL)
            caption { (ownership.title()) } (NL)
            tr {
                th {}
                @for queue in &ownership.queues {
                    th class={ "queue " (queue.holding.token()) } { (queue.label) }
                }
            }
            (NL)
            @for row in &ownership.consumers {
                tr class=[row.not_running.map(|_| "not-running")] {
                    th {
                        (row.name)
                        @if let Some(phase) = row.not_running { " (" (phase) ")" }
                    }
                    @for (queue, &owned) in ownership.queues.iter().zip(&row.owns) {
                        @if owned {
                            td class={ "owned " (queue.holding.token()) }
                                title={ (row.name) " owns " (queue.label) ", " (queue.holding.word()) } {
                                "●"
                            }
                        } @else {
                            td {}
                        }
                    }
                }
                (NL)
            }
            tr class="held" {
                th { "held" }
                @for queue in &ownership.queues {
                    td class=(queue.holding.token()) title=(queue.holding.word()) {
                        @match queue.holding {
                            Holding::Once => "1",
                            Holding::Twice => "2+",
                            Holding::Nobody => "0",
                        }
                    }
                }
            }
            (NL)
        }
        (NL)
        @for holding in [Holding::Twice, Holding::Nobody] {
            @let labels = ownership.held(holding);
            @if !labels.is_empty() {
                p class={ "held-list " (holding.token()) } {
                    (holding.word()) ": " (labels.join(" "))
                }
                (NL)
            }
        }
        div class="panels" {
            (NL)
            @for panel in &state.panels {
                div class="panel" {
                    h3 { (panel.title) }
                    ul {
                        @for line in &panel.lines {
                            li { (line) }
                        }
                    }
                }
                (NL)
            }
        }
        (NL)
    }
}

/// An element id from a property name: `no queue stays double-owned` gives
/// `no-queue-stays-double-owned`.
fn slug(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "property".into()
    } else {
        words.join("-")
    }
}

/// A verdict spelled as in `--json` (`not-found`), for scripts that read
/// the page.
fn json_word(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The page's style: `report.css`, then the colours of holdings, which
/// come from the model's view, as in the explorer's picture.
fn style() -> String {
    let mut css = String::from(STYLE);
    for holding in Holding::ALL {
        let (token, colour) = (holding.token(), holding.colour());
        css.push_str(&format!(
            "td.owned.{token},.held td.{token}{{background:{colour};color:#fff}}th.queue.{token},.held-list.{token}{{color:{colour}}}"
        ));
    }
    css
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rocketmq_rebalance_model::{
        build_model,
        configuration::{Config, NetworkKind, Scenario},
        report::{Expectation, Status, Stopped},
    };

    use super::*;

    /// A report with one violated property whose trace has no path to
    /// replay, and words that would be markup if not escaped.
    fn report_without_path(model: &RebalanceModel) -> Report {
        let cfg = &model.cfg;
        Report {
            scenario: cfg.scenario,
            strategy: cfg.strategy.name().to_string(),
            network: cfg.network,
            sizes: cfg.sizes,
            protocol: cfg.protocol,
            stopped: Stopped::Simulation,
            states: 1,
            unique_states: 1,
            max_depth: 1,
            seconds: 0.0,
            unique_states_per_second: 0.0,
            generated_per_unique: 1.0,
            reduction: false,
            fingerprint_bits: 64,
            collision_probability: 0.0,
            properties: vec![PropertyReport {
                name: "a <b> & \"c\"".into(),
                expectation: Expectation::Always,
                status: Status::Violated,
                trace: Some(vec!["1. <script>alert(1)</script>".into()]),
                explorer_path: None,
                path: None,
                cycle_start: None,
            }],
            liveness: None,
            harms: None,
        }
    }

    #[test]
    fn a_trace_without_a_path_is_shown_as_text_and_every_word_is_escaped() {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").unwrap());
        let scenario = Scenario::Healthy;
        let cfg = Config::new(
            scenario,
            scenario.default_sizes(),
            NetworkKind::Ordered,
            avg,
        )
        .unwrap();
        let model = build_model(cfg);
        let page = html_report(&report_without_path(&model), &model, "http://x");
        assert!(page.contains(r#"<section class="trace" id="a-b-c" data-last="0">"#));
        assert!(page.contains("counterexample to &quot;a &lt;b&gt; &amp; &quot;c&quot;&quot;"));
        assert!(page.contains(
            "<details class=\"text-trace\" open><summary>the trace as text</summary><pre>1. &lt;script&gt;alert(1)&lt;/script&gt;\n</pre>"
        ));
        assert!(!page.contains("<script>alert"));
        assert!(!page.contains(r#"class="walk""#));
        assert!(page.contains(r#"<span class="outcome failed">failed</span>"#));
    }

    /// A state whose every name holds the characters that end an
    /// attribute or start markup.
    fn state_with_quotes() -> StateView {
        use rocketmq_rebalance_model::view::{ConsumerRow, Ownership, Panel, QueueColumn};
        StateView {
            ownership: Ownership {
                route: 0,
                queues: vec![QueueColumn {
                    label: r#"a"0'"#.into(),
                    holding: Holding::Twice,
                }],
                consumers: vec![ConsumerRow {
                    name: r#"c1" onclick="alert(1)"#.into(),
                    not_running: None,
                    owns: vec![true],
                }],
            },
            panels: vec![Panel {
                title: r#"<b>"brokers"</b>"#.into(),
                lines: vec![r#"broker-a: members ["c1"]"#.into()],
            }],
        }
    }

    #[test]
    fn quotes_are_escaped_in_attributes_and_text() {
        let page = state(&state_with_quotes()).into_string();
        assert!(
            page.contains(
                r#"<td class="owned owned-twice" title="c1&quot; onclick=&quot;alert(1) owns a&quot;0', owned twice">●</td>"#
            ),
            "{page}"
        );
        assert!(page.contains(r#"<th class="queue owned-twice">a&quot;0'</th>"#));
        assert!(page.contains("<h3>&lt;b&gt;&quot;brokers&quot;&lt;/b&gt;</h3>"));
        assert!(page.contains("<li>broker-a: members [&quot;c1&quot;]</li>"));
        assert!(!page.contains(r#"" onclick"#));
        assert!(!page.contains("<b>"));
    }

    #[test]
    fn a_property_name_with_quotes_stays_inside_its_elements() {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").unwrap());
        let scenario = Scenario::Healthy;
        let cfg = Config::new(
            scenario,
            scenario.default_sizes(),
            NetworkKind::Ordered,
            avg,
        )
        .unwrap();
        let model = build_model(cfg);
        let page = html_report(&report_without_path(&model), &model, "http://x");
        assert!(page.contains(r#"<td class="name">a &lt;b&gt; &amp; &quot;c&quot;</td>"#));
        assert!(page.contains(r##"<td><a href="#a-b-c">counterexample</a></td>"##));
        // Every attribute value is one quoted run without a raw quote.
        assert!(!page.contains(r#"&quot;c""#));
    }
}
