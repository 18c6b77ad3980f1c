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
//! one under the other, without it). Text from the model is escaped.

use std::collections::HashSet;
use std::fmt::Write;

use rocketmq_rebalance_model::check::{PropertyReport, Report};
use rocketmq_rebalance_model::explorer::sequence_svg;
use rocketmq_rebalance_model::view::{Holding, PathView, StateView};
use rocketmq_rebalance_model::RebalanceModel;

use super::report_text::{
    explorer_link, explorer_note, run_lines, status_word, summary, trace_heading, trace_kind,
};

/// The page of `report`, whose paths are replayed on `model` (the model
/// the check explored); explorer URLs point at `explorer_url`.
pub fn html_report(report: &Report, model: &RebalanceModel, explorer_url: &str) -> String {
    let summary = summary(&model.cfg);
    let outcome = match report.exit_code() {
        0 => "passed",
        1 => "failed",
        _ => "incomplete",
    };
    let mut page = String::with_capacity(64 * 1024);
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rebalance check {outcome}: {}</title>
<style>{}</style>
</head>
<body>
<header>
<h1>rebalance check: <span class="outcome {outcome}">{outcome}</span></h1>
<p class="summary">{}</p>
"#,
        escape(&model.cfg.scenario.to_string()),
        style(),
        escape(&summary)
    );
    for line in run_lines(report) {
        let _ = writeln!(page, r#"<p class="run">{}</p>"#, escape(&line));
    }
    let traced = traced(report);
    page.push_str(
        r#"<table class="properties">
<thead><tr><th>verdict</th><th>expectation</th><th>property</th><th></th></tr></thead>
<tbody>
"#,
    );
    for p in &report.properties {
        let link = traced
            .iter()
            .find(|t| t.property.name == p.name)
            .map(|t| format!(r##"<a href="#{}">{}</a>"##, t.id, t.kind))
            .unwrap_or_default();
        let _ = writeln!(
            page,
            r#"<tr class="property" data-status="{}"><td class="status">{}</td><td>{}</td><td class="name">{}</td><td>{link}</td></tr>"#,
            json_word(&p.status),
            status_word(p.status),
            p.expectation,
            escape(&p.name)
        );
    }
    page.push_str(
        r#"</tbody>
</table>
<p class="keys">Each trace shows one state at a time, the last one first: click a step, or press <kbd>→</kbd> or <kbd>j</kbd> for the next step, <kbd>←</kbd> or <kbd>k</kbd> for the previous one, <kbd>Home</kbd> and <kbd>End</kbd> for the first and the last, in the trace you last clicked. Every step has its own link (<code>#…-step-N</code>) to paste into an issue.</p>
</header>
<main>
"#,
    );
    let note = explorer_note(report);
    for t in &traced {
        write_trace(&mut page, model, (explorer_url, note), t);
    }
    let _ = write!(
        page,
        "</main>\n<script>{}</script>\n</body>\n</html>\n",
        SCRIPT
    );
    page
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
fn write_trace(page: &mut String, model: &RebalanceModel, explorer: (&str, &str), t: &Traced) {
    let p = t.property;
    let view = p
        .path
        .as_ref()
        .and_then(|indices| PathView::replay(model, indices, p.cycle_start));
    let _ = write!(
        page,
        r#"<section class="trace" id="{}" data-last="{}"{}>
<h2>{}</h2>
"#,
        t.id,
        view.as_ref().map_or(0, PathView::last),
        p.cycle_start
            .map(|start| format!(r#" data-cycle-start="{start}""#))
            .unwrap_or_default(),
        escape(trace_heading(t.kind, p).trim_end_matches(':'))
    );
    if let Some(view) = &view {
        if let Some(marker) = view.cycle_marker() {
            let _ = writeln!(page, r#"<p class="cycle-note">{}</p>"#, escape(&marker));
        }
        page.push_str("<div class=\"walk\">\n");
        write_steps(page, view, &t.id);
        write_states(page, view, &t.id, explorer);
        page.push_str("</div>\n");
        let sequence = sequence_svg(&view.sequence, view.cycle_start);
        let _ = writeln!(
            page,
            r#"<figure class="sequence"><figcaption>sequence (the current step in bold)</figcaption><div class="scroll"><svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" role="img" aria-label="message sequence chart">{}</svg></div></figure>"#,
            sequence.body,
            w = sequence.width,
            h = sequence.height
        );
    }
    let _ = write!(
        page,
        "<details class=\"text-trace\"{}><summary>the trace as text</summary><pre>",
        if view.is_none() { " open" } else { "" }
    );
    let (explorer_url, note) = explorer;
    if let Some(path) = &p.explorer_path {
        let _ = writeln!(
            page,
            "explorer: {}  {}",
            escape(&explorer_link(explorer_url, path)),
            escape(note)
        );
    }
    for line in p.trace.iter().flatten() {
        let _ = writeln!(page, "{}", escape(line));
    }
    page.push_str("</pre></details>\n</section>\n");
}

/// The list of steps, each a link to its state, with the trace's line and
/// its change lines; the cycle's steps marked and preceded by the trace's
/// marker.
fn write_steps(page: &mut String, view: &PathView, id: &str) {
    page.push_str("<ul class=\"steps\">\n");
    for step in &view.steps {
        let in_cycle = view.in_cycle(step.number);
        if in_cycle && !view.in_cycle(step.number - 1) {
            write_cycle_marker(page, view);
        }
        let _ = write!(
            page,
            r##"<li class="step{}" data-step="{n}"><a href="#{id}-step-{n}"><span class="line">{n}. {}</span></a>"##,
            if in_cycle { " cycle" } else { "" },
            escape(step.action.as_deref().unwrap_or("initial state")),
            n = step.number,
        );
        for change in &step.changes {
            let _ = write!(page, r#"<span class="change">{}</span>"#, escape(change));
        }
        page.push_str("</li>\n");
    }
    // A lasso whose last state stays for ever: the marker closes the list,
    // as it precedes the final state in the trace.
    if view.cycle_start == Some(view.last()) {
        write_cycle_marker(page, view);
    }
    page.push_str("</ul>\n");
}

/// Every state of the path, each with links to its neighbours and the
/// explorer URL that opens it.
fn write_states(page: &mut String, view: &PathView, id: &str, (explorer_url, note): (&str, &str)) {
    let last = view.last();
    page.push_str("<div class=\"states\">\n");
    for step in &view.steps {
        let n = step.number;
        let _ = write!(
            page,
            r#"<div class="state" id="{id}-step-{n}" data-step="{n}">
<p class="where">{}{}</p>
<p class="nav">"#,
            match &step.action {
                Some(action) => format!("step {n} of {last}: {}", escape(action)),
                None => format!("initial state (step 0 of {last})"),
            },
            if view.in_cycle(n) {
                r#" <span class="in-cycle">in the cycle</span>"#
            } else {
                ""
            },
        );
        if n > 0 {
            let _ = write!(
                page,
                r##"<a href="#{id}-step-{}" rel="prev">← step {}</a> "##,
                n - 1,
                n - 1
            );
        }
        if n < last {
            let _ = write!(
                page,
                r##"<a href="#{id}-step-{}" rel="next">step {} →</a>"##,
                n + 1,
                n + 1
            );
        }
        page.push_str("</p>\n");
        write_state(page, &step.state);
        let _ = write!(
            page,
            "<p class=\"explorer\">explorer: <code>{}</code> {}</p>\n</div>\n",
            escape(&explorer_link(explorer_url, &step.explorer_path)),
            escape(note)
        );
    }
    page.push_str("</div>\n");
}

fn write_cycle_marker(page: &mut String, view: &PathView) {
    if let Some(marker) = view.cycle_marker() {
        let _ = writeln!(page, r#"<li class="cycle-marker">{}</li>"#, escape(&marker));
    }
}

/// The ownership table, the queues held twice and by nobody, and every
/// panel, whatever panels the view has.
fn write_state(page: &mut String, state: &StateView) {
    let ownership = &state.ownership;
    let _ = write!(
        page,
        "<table class=\"ownership\">\n<caption>{}</caption>\n<tr><th></th>",
        escape(&ownership.title())
    );
    for queue in &ownership.queues {
        let _ = write!(
            page,
            r#"<th class="queue {}">{}</th>"#,
            queue.holding.token(),
            escape(&queue.label)
        );
    }
    page.push_str("</tr>\n");
    for row in &ownership.consumers {
        match row.not_running {
            None => {
                let _ = write!(page, "<tr><th>{}</th>", escape(&row.name));
            }
            Some(phase) => {
                let _ = write!(
                    page,
                    r#"<tr class="not-running"><th>{} ({})</th>"#,
                    escape(&row.name),
                    escape(phase)
                );
            }
        }
        for (queue, &owned) in ownership.queues.iter().zip(&row.owns) {
            if owned {
                let _ = write!(
                    page,
                    r#"<td class="owned {}" title="{} owns {}, {}">●</td>"#,
                    queue.holding.token(),
                    escape(&row.name),
                    escape(&queue.label),
                    queue.holding.word()
                );
            } else {
                page.push_str("<td></td>");
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str(r#"<tr class="held"><th>held</th>"#);
    for queue in &ownership.queues {
        let count = match queue.holding {
            Holding::Once => "1",
            Holding::Twice => "2+",
            Holding::Nobody => "0",
        };
        let _ = write!(
            page,
            r#"<td class="{}" title="{}">{count}</td>"#,
            queue.holding.token(),
            queue.holding.word()
        );
    }
    page.push_str("</tr>\n</table>\n");
    for holding in [Holding::Twice, Holding::Nobody] {
        let labels = ownership.held(holding);
        if !labels.is_empty() {
            let _ = writeln!(
                page,
                r#"<p class="held-list {}">{}: {}</p>"#,
                holding.token(),
                holding.word(),
                escape(&labels.join(" "))
            );
        }
    }
    page.push_str("<div class=\"panels\">\n");
    for panel in &state.panels {
        let _ = write!(
            page,
            "<div class=\"panel\"><h3>{}</h3><ul>",
            escape(&panel.title)
        );
        for line in &panel.lines {
            let _ = write!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul></div>\n");
    }
    page.push_str("</div>\n");
}

/// Text as HTML text or attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

/// The page's style; the colours of holdings come from the model's view,
/// as in the explorer's picture.
fn style() -> String {
    let mut css = String::from(STYLE);
    for holding in Holding::ALL {
        let (token, colour) = (holding.token(), holding.colour());
        let _ = write!(
            css,
            "td.owned.{token},.held td.{token}{{background:{colour};color:#fff}}th.queue.{token},.held-list.{token}{{color:{colour}}}"
        );
    }
    css
}

const STYLE: &str = r#"
:root{color-scheme:light}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1500px;padding:0 1.5em 3em;color:#212121;background:#fff}
h1{font-size:1.5em;margin:.8em 0 .3em}
h2{font-size:1.2em;margin:0 0 .5em}
h3{font-size:1em;margin:.6em 0 .2em}
.outcome{padding:0 .4em;border-radius:4px;color:#fff}
.outcome.passed{background:#2e7d32}.outcome.failed{background:#d32f2f}.outcome.incomplete{background:#ef6c00}
.summary,.run{margin:.2em 0;font-family:ui-monospace,monospace;font-size:13px}
table.properties{border-collapse:collapse;margin:.8em 0}
table.properties td,table.properties th{padding:.15em .8em .15em 0;text-align:left}
tr[data-status=violated] .status,tr[data-status=not-found] .status{color:#d32f2f;font-weight:bold}
tr[data-status=unknown] .status{color:#ef6c00}
.keys{color:#555;font-size:13px}
kbd{border:1px solid #bbb;border-radius:3px;padding:0 .3em;font-size:12px}
section.trace{border-top:2px solid #e0e0e0;padding-top:1em;margin-top:1.5em}
.cycle-note{color:#e65100}
.walk{display:grid;grid-template-columns:minmax(16em,2fr) 3fr;gap:1.5em;align-items:start}
.steps{list-style:none;margin:0;padding:0;font-family:ui-monospace,monospace;font-size:13px}
.steps li{padding:.15em .4em;border-left:4px solid transparent}
.steps li.cycle{border-left-color:#ef6c00;background:#fff3e0}
.steps li.current{background:#e3f2fd;border-left-color:#1565c0}
.steps li.cycle-marker{color:#e65100;font-weight:bold;border-left-color:#ef6c00}
.steps a{color:inherit;text-decoration:none;display:block}
.steps a:hover .line{text-decoration:underline}
.steps .change{display:block;padding-left:2em;color:#555}
.states{position:sticky;top:0;max-height:100vh;overflow:auto}
.state{border:1px solid #e0e0e0;border-radius:4px;padding:.5em .8em;margin-bottom:1em}
.js .state{display:none}
.js .state.current{display:block}
.where{font-weight:bold;margin:.2em 0}
.in-cycle{color:#fff;background:#ef6c00;border-radius:3px;padding:0 .3em;font-weight:normal}
.nav a{margin-right:1em}
table.ownership{border-collapse:collapse;margin:.5em 0}
table.ownership caption{text-align:left;font-weight:bold;padding-bottom:.3em;white-space:nowrap}
table.ownership th{text-align:left;padding-right:.8em;font-weight:normal;white-space:nowrap}
table.ownership th.queue{text-align:center;padding:0 .2em;font-size:12px}
table.ownership td{width:1.7em;height:1.7em;border:1px solid #bbb;text-align:center;font-size:12px}
table.ownership tr.not-running th{color:#9e9e9e;text-decoration:line-through}
.held-list{margin:.2em 0;font-weight:bold}
.panels{font-family:ui-monospace,monospace;font-size:12.5px}
.panels ul{margin:0;padding-left:1.2em}
.explorer{font-size:12px;color:#555}
.explorer code{word-break:break-all}
figure.sequence{margin:1em 0}
figure.sequence .scroll{overflow:auto;max-height:80vh;border:1px solid #e0e0e0}
svg g.step.current text{font-weight:bold}
svg g.step.current line{stroke-width:3}
details.text-trace pre{font-size:12.5px;overflow:auto}
@media (max-width:900px){.walk{grid-template-columns:1fr}.states{position:static;max-height:none}}
"#;

/// Steps through each trace: one state shown at a time (the `current`
/// class on its step, state and diagram row), moved by the step links,
/// the URL fragment (`#id-step-N`) and the keys. Marks the page with
/// `data-script="ok"` when it ran, or the error when it failed.
const SCRIPT: &str = r##"
(function () {
  "use strict";
  var root = document.documentElement;
  window.addEventListener("error", function (event) {
    root.setAttribute("data-script", "error: " + event.message);
  });
  root.classList.add("js");
  var traces = Array.prototype.slice.call(document.querySelectorAll("section.trace"));
  var active = traces[0] || null;
  function number(element, name) { return Number(element.getAttribute(name)); }
  function show(trace, step) {
    step = Math.max(0, Math.min(number(trace, "data-last"), step));
    trace.setAttribute("data-current", String(step));
    var marked = trace.querySelectorAll("[data-step]");
    for (var i = 0; i < marked.length; i++) {
      marked[i].classList.toggle("current", number(marked[i], "data-step") === step);
    }
    return step;
  }
  function go(trace, step) {
    step = show(trace, step);
    active = trace;
    try {
      history.replaceState(null, "", "#" + trace.id + "-step-" + step);
    } catch (ignored) {
      // Some viewers forbid history changes: the page still moves.
    }
  }
  // The fragment names a trace or one of its states; the browser scrolls
  // to it on load, and a later change may target a state hidden until now.
  function follow(scroll) {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    var trace = target && target.closest("section.trace");
    if (!trace) { return; }
    active = trace;
    if (target.classList.contains("state")) {
      show(trace, number(target, "data-step"));
      if (scroll) { trace.scrollIntoView(); }
    }
  }
  traces.forEach(function (trace) {
    show(trace, number(trace, "data-last"));
    trace.addEventListener("click", function (event) {
      active = trace;
      var link = event.target.closest("a[href^='#']");
      var target = link && document.getElementById(link.getAttribute("href").slice(1));
      if (target && target.classList.contains("state")) {
        event.preventDefault();
        go(trace, number(target, "data-step"));
      }
    });
  });
  follow(false);
  window.addEventListener("hashchange", function () { follow(true); });
  var moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
  document.addEventListener("keydown", function (event) {
    if (!active || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var current = number(active, "data-current");
    var step;
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      step = current + moves[event.key];
    } else if (event.key === "Home") {
      step = 0;
    } else if (event.key === "End") {
      step = number(active, "data-last");
    } else {
      return;
    }
    event.preventDefault();
    go(active, step);
  });
  root.setAttribute("data-script", "ok");
})();
"##;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rocketmq_rebalance_model::check::{Expectation, Status, Stopped};
    use rocketmq_rebalance_model::{build_model, Config, NetworkKind, Scenario};

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
            shard: None,
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
}
