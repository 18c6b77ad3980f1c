//! `rebalance check --html FILE`: the self-contained report.
//!
//! - In headless Chromium, from `file://`: the duplicate-client-id report
//!   steps to its last state by URL fragment and by key presses and shows
//!   the double-owned queue; no page logs anything to the console. Saves a
//!   screenshot to `target/report-duplicate-client-id.png` (the one in
//!   `docs/explorer.md`).
//! - The file references nothing outside itself.
//! - Its facts are those of the JSON and the text report of the same run.
//! - Every scenario's report renders, quickly; a lasso marks its cycle.
//!
//! The browser parts need Debian's `chromium` (`.ci/run` installs it);
//! without it they are skipped with a message, except under CI (`CI` set),
//! where they fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use rocketmq_rebalance_model::configuration::Scenario;
use serde_json::Value;

const REBALANCE: &str = env!("CARGO_BIN_EXE_rebalance");
const DOUBLE_OWNED: &str = "no queue stays double-owned";

fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Runs `rebalance check ARGS --html FILE --json`: the exit code, the JSON
/// report, stderr and the page.
fn check_with_html(args: &[&str], file: &Path) -> (i32, Value, String, String) {
    let output = Command::new(REBALANCE)
        .arg("check")
        .args(args)
        .args(["--json", "--html"])
        .arg(file)
        .output()
        .expect("rebalance runs");
    let json = serde_json::from_slice(&output.stdout).expect("stdout is one JSON object");
    let html = std::fs::read_to_string(file).expect("the report was written");
    (
        output.status.code().expect("an exit code"),
        json,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        html,
    )
}

fn property<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no property {name}"))
}

/// The number of the last step of a property's path.
fn last_step(property: &Value) -> usize {
    property["path"].as_array().expect("a path").len() - 1
}

/// An element id as the page makes it from a property name.
fn slug(name: &str) -> String {
    name.replace(' ', "-")
}

/// The text of an HTML fragment: tags dropped, entities decoded.
fn text(fragment: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in fragment.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text a reader sees: the page without its style and script.
fn visible_text(html: &str) -> String {
    let mut rest = html.to_string();
    for (open, close) in [("<style>", "</style>"), ("<script>", "</script>")] {
        while let (Some(start), Some(end)) = (rest.find(open), rest.find(close)) {
            rest.replace_range(start..end + close.len(), "");
        }
    }
    text(&rest)
}

/// Every fragment between `start` and the next `end` (both excluded).
fn between<'a>(html: &'a str, start: &str, end: &str) -> Vec<&'a str> {
    html.split(start)
        .skip(1)
        .map(|rest| rest.split(end).next().unwrap_or(rest))
        .collect()
}

/// The start tag of the element with id `id`.
fn start_tag<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!(r#"id="{id}""#))
        .unwrap_or_else(|| panic!("no element {id}"));
    let open = html[..at].rfind('<').expect("a tag");
    let close = at + html[at..].find('>').expect("a tag end");
    &html[open..=close]
}

/// A state of a trace, from its start tag to its explorer line.
fn state<'a>(html: &'a str, trace: &str, step: usize) -> &'a str {
    let id = format!(r#"id="{trace}-step-{step}""#);
    let at = html.find(&id).unwrap_or_else(|| panic!("no state {id}"));
    let rest = &html[at..];
    &rest[..rest.find(r#"class="explorer""#).expect("an explorer line")]
}

/// A trace's section.
fn section<'a>(html: &'a str, trace: &str) -> &'a str {
    let start = html
        .find(&format!(r#"<section class="trace" id="{trace}""#))
        .unwrap_or_else(|| panic!("no trace {trace}"));
    let rest = &html[start..];
    &rest[..rest.find("</section>").expect("the section ends")]
}

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The browser, or `None` after saying the test is skipped (never under
/// CI).
fn browser_or_skip() -> Option<PathBuf> {
    let browser = chromium();
    if browser.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is required under CI (apt-get install chromium)"
        );
        eprintln!("SKIPPED: no chromium; install Debian's chromium to run this test");
    }
    browser
}

/// Opens `url` headless, as `explorer_browser.rs` does, with the console
/// logged to stderr; each run with a profile of its own, as tests run in
/// parallel and a profile is locked by the browser using it.
fn run_chromium(browser: &Path, extra: &[&str], url: &str) -> Output {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let profile = scratch(&format!(
        "chromium-report-{}",
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("chromium runs")
}

/// The page's DOM after its script ran, asserting that the script finished
/// and that nothing was logged to the console (errors, failed loads).
fn dom_of(browser: &Path, file: &Path, fragment: &str) -> String {
    let url = format!("file://{}{fragment}", file.display());
    let output = run_chromium(browser, &["--dump-dom"], &url);
    let console: Vec<String> = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    assert!(console.is_empty(), "{url}: the console says {console:#?}");
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        dom.contains(r#"data-script="ok""#),
        "{url}: the page's script did not finish: {}",
        dom.lines().next().unwrap_or_default()
    );
    dom
}

/// The current state of a trace in a dumped DOM, checked to be the one
/// shown.
fn shown_state<'a>(dom: &'a str, trace: &str, step: usize) -> &'a str {
    let tag = start_tag(dom, trace);
    assert!(
        tag.contains(&format!(r#"data-current="{step}""#)),
        "{trace} is not at step {step}: {tag}"
    );
    let tag = start_tag(dom, &format!("{trace}-step-{step}"));
    assert!(tag.contains("state current"), "not shown: {tag}");
    state(dom, trace, step)
}

#[test]
fn chromium_steps_to_the_double_owned_queue_of_duplicate_client_id() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let file = scratch("report-duplicate-client-id.html");
    let (code, report, _, html) = check_with_html(&["--scenario", "duplicate-client-id"], &file);
    assert_eq!(code, 1);
    let trace = slug(DOUBLE_OWNED);
    let last = last_step(property(&report, DOUBLE_OWNED));

    // By URL fragment: the first state has no double ownership, the last
    // one names the queue owned twice.
    let dom = dom_of(&browser, &file, &format!("#{trace}-step-0"));
    assert!(!shown_state(&dom, &trace, 0).contains("owned twice: "));
    let dom = dom_of(&browser, &file, &format!("#{trace}-step-{last}"));
    let shown = shown_state(&dom, &trace, last);
    let twice = text(shown)
        .split("owned twice: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next().map(str::to_string))
        .expect("the last state names a queue owned twice");
    assert!(shown.contains(r#"class="owned owned-twice""#));
    assert!(
        shown.contains("owned by nobody: "),
        "the orphaned block too"
    );
    assert!(state(&html, &trace, last).contains(&format!("owned twice: {twice}")));

    // By key presses from the first state: past the end stops at the last
    // state; k goes back one, j forward one.
    let presses = std::iter::repeat("ArrowRight")
        .take(last + 3)
        .chain(["k", "j"]);
    let script: String = presses
        .map(|key| {
            format!(r#"document.dispatchEvent(new KeyboardEvent("keydown", {{ key: "{key}" }}));"#)
        })
        .collect();
    let keyed = scratch("report-duplicate-client-id-keys.html");
    std::fs::write(
        &keyed,
        html.replace("</body>", &format!("<script>{script}</script>\n</body>")),
    )
    .expect("a copy with key presses");
    let dom = dom_of(&browser, &keyed, &format!("#{trace}-step-0"));
    assert!(shown_state(&dom, &trace, last).contains(&format!("owned twice: {twice}")));

    let screenshot = scratch("../report-duplicate-client-id.png");
    run_chromium(
        &browser,
        &[
            "--window-size=1280,1000",
            &format!("--screenshot={}", screenshot.display()),
        ],
        &format!("file://{}", file.display()),
    );
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}

#[test]
fn the_report_references_nothing_outside_itself() {
    let file = scratch("report-self-contained.html");
    let (_, _, _, html) =
        check_with_html(&["--scenario", "partial-partition", "--liveness"], &file);
    let lower = html.to_ascii_lowercase();
    for element in [
        "<link", "<img", "<iframe", "<object", "<embed", "@import", " src=",
    ] {
        assert!(!lower.contains(element), "the page has {element}");
    }
    for href in between(&lower, "href=\"", "\"") {
        assert!(href.starts_with('#'), "a link out of the page: {href}");
    }
    for url in between(&lower, "url(", ")") {
        assert!(url.starts_with('#'), "a resource out of the page: {url}");
    }
    assert!(lower.contains("<style>") && lower.contains("<script>"));
}

/// Every fact of the JSON report of the same run, and of the text report,
/// is on the page in the same words.
#[test]
fn the_report_has_the_facts_of_the_json_and_the_text_report() {
    let args = ["--scenario", "partial-partition", "--liveness"];
    let file = scratch("report-facts.html");
    let (code, report, stderr, html) = check_with_html(&args, &file);
    assert_eq!(code, 1);

    let summary = stderr
        .lines()
        .find_map(|l| l.strip_prefix("checking "))
        .expect("the configuration on stderr");
    assert_eq!(between(&html, r#"<p class="summary">"#, "</p>"), [summary]);
    let run: Vec<String> = between(&html, r#"<p class="run">"#, "</p>")
        .into_iter()
        .map(text)
        .collect();
    assert_eq!(run[0], "complete: every reachable state visited");
    assert!(run[1].starts_with(&format!(
        "{} states, {} unique ({:.2} generated per unique, ",
        report["states"],
        report["unique_states"],
        report["generated_per_unique"].as_f64().expect("a ratio")
    )));
    assert!(run[1].contains(&format!("max depth {}, ", report["max_depth"])));
    assert!(run[2].starts_with(&format!(
        "{}-bit fingerprints: probability that a collision hid a state ",
        report["fingerprint_bits"]
    )));
    assert!(run[3].starts_with(&format!(
        "liveness graph: {} states, {} transitions, {} bytes/state, ",
        report["liveness"]["states"],
        report["liveness"]["edges"],
        report["liveness"]["bytes_per_state"]
    )));

    // The verdicts, in order: the JSON's status, and the text report's
    // line.
    let text_report = Command::new(REBALANCE)
        .arg("check")
        .args(args)
        .output()
        .expect("rebalance runs");
    let text_report = String::from_utf8_lossy(&text_report.stdout).into_owned();
    let rows = between(&html, r#"<tr class="property""#, "</tr>");
    let properties = report["properties"].as_array().expect("properties");
    assert_eq!(rows.len(), properties.len());
    for (row, p) in rows.iter().zip(properties) {
        assert!(row.starts_with(&format!(
            r#" data-status="{}""#,
            p["status"].as_str().unwrap()
        )));
        let cells: Vec<String> = between(row, "<td", "</td>")
            .into_iter()
            .map(|cell| text(&format!("<{cell}")))
            .collect();
        assert_eq!(cells[1], p["expectation"].as_str().unwrap());
        assert_eq!(cells[2], p["name"].as_str().unwrap());
        let line = format!("  {:<10} {:<10} {}", cells[0], cells[1], cells[2]);
        assert!(text_report.lines().any(|l| l == line), "{line}");
    }

    // Every trace, step by step.
    let mut traces = 0;
    for p in properties.iter().filter(|p| p["trace"].is_array()) {
        traces += 1;
        let name = p["name"].as_str().unwrap();
        let trace = slug(name);
        let section = section(&html, &trace);
        let kind = if p["status"] == "violated" {
            "counterexample"
        } else {
            "example"
        };
        assert_eq!(
            text(between(section, "<h2>", "</h2>")[0]),
            format!("{kind} to \"{name}\"")
        );
        let last = last_step(p);
        assert!(section.contains(&format!(r#"data-last="{last}""#)));
        let lines: Vec<&str> = p["trace"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        // The JSON's steps with their change lines, as the page lists them.
        let mut expected: Vec<(String, Vec<String>)> = Vec::new();
        let mut final_state = Vec::new();
        let mut in_final = false;
        for line in &lines {
            if *line == "final state:" {
                in_final = true;
            } else if in_final {
                final_state.push(line.trim_start().to_string());
            } else if let Some(change) = line.strip_prefix("   ") {
                expected
                    .last_mut()
                    .expect("a step first")
                    .1
                    .push(change.into());
            } else if line.starts_with("-- ") {
                let markers = between(section, r#"<li class="cycle-marker">"#, "</li>");
                assert_eq!(markers.len(), 1);
                assert_eq!(text(markers[0]), *line);
                let start = p["cycle_start"].as_u64().expect("a lasso's cycle") as usize;
                assert!(section.contains(&format!(r#"data-cycle-start="{start}""#)));
                let before_marker = &section[..section.find("cycle-marker").unwrap()];
                assert!(before_marker.contains(&format!(r#"data-step="{start}">"#)));
                assert!(!before_marker.contains(&format!(r#"data-step="{}">"#, start + 1)));
                let cycle_steps = section.matches(r#"<li class="step cycle""#).count();
                assert_eq!(cycle_steps, last - start);
            } else {
                expected.push((line.to_string(), Vec::new()));
            }
        }
        let listed: Vec<(String, Vec<String>)> = between(section, "<li class=\"step", "</li>")
            .into_iter()
            .skip(1)
            .map(|item| {
                let line = text(between(item, r#"<span class="line">"#, "</span>")[0]);
                let changes = between(item, r#"<span class="change">"#, "</span>")
                    .into_iter()
                    .map(text)
                    .collect();
                (line, changes)
            })
            .collect();
        assert_eq!(listed, expected, "{name}");
        let final_panels: Vec<String> = between(state(&html, &trace, last), "<li>", "</li>")
            .into_iter()
            .map(text)
            .collect();
        for line in &final_state {
            assert!(
                final_panels.iter().any(|l| l.starts_with(line.as_str())),
                "{name}: the last state lacks {line}"
            );
        }
        let explorer_path = p["explorer_path"].as_str().unwrap();
        let last_state = &html[html.find(&format!(r#"id="{trace}-step-{last}""#)).unwrap()..];
        let explorer = text(between(last_state, "<code>", "</code>")[0]);
        assert!(explorer.ends_with(explorer_path), "{explorer}");
        // The text trace, as `rebalance check` prints it.
        let pre = text(between(section, "<pre>", "</pre>")[0]);
        if kind == "counterexample" {
            let explorer_line = text_report
                .lines()
                .skip_while(|l| *l != format!("counterexample to \"{name}\":"))
                .nth(1)
                .expect("the text report's explorer line");
            assert_eq!(pre.lines().next(), explorer_line.strip_prefix("  "));
        }
        assert_eq!(pre.lines().skip(1).collect::<Vec<_>>(), lines);
    }
    assert_eq!(html.matches(r#"<section class="trace""#).count(), traces);
}

/// Every scenario's report renders in a few milliseconds, speaks RocketMQ
/// and not Rust, leaves the exit status alone and opens in Chromium
/// without a word on the console; the partial-partition lasso marks its
/// cycle.
#[test]
fn every_scenario_writes_a_report() {
    let browser = browser_or_skip();
    let runs = Scenario::ALL
        .iter()
        .map(|s| vec!["--scenario", s.name()])
        .chain([vec!["--scenario", "partial-partition", "--liveness"]]);
    for args in runs {
        let file = scratch(&format!("every-scenario-{}.html", args[1..].join("")));
        let (code, report, stderr, html) = check_with_html(&args, &file);
        let expected = if report["properties"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["status"] == "violated" || p["status"] == "not-found")
        {
            1
        } else {
            0
        };
        assert_eq!(code, expected, "{args:?}");
        let millis: f64 = stderr
            .lines()
            .find_map(|l| l.strip_prefix("html report: "))
            .and_then(|l| l.rsplit(", ").next())
            .and_then(|l| l.strip_suffix(" ms)"))
            .and_then(|ms| ms.parse().ok())
            .unwrap_or_else(|| panic!("{args:?}: no writing time in {stderr}"));
        assert!(millis < 500.0, "{args:?}: {millis} ms to write the report");
        assert!(html.ends_with("</html>\n"));
        let visible = visible_text(&html);
        for debug in [
            "Some(",
            "None",
            "Deliver(",
            "Timeout(",
            "Consumer(",
            " { ",
            "Envelope",
        ] {
            assert!(!visible.contains(debug), "{args:?}: {debug} on the page");
        }
        for p in report["properties"].as_array().unwrap() {
            if let Some(path) = p["path"].as_array() {
                let section = section(&html, &slug(p["name"].as_str().unwrap()));
                assert_eq!(section.matches(r#"<div class="state""#).count(), path.len());
                assert!(section.contains("<svg "), "the sequence diagram");
            }
        }
        if args.contains(&"--liveness") {
            let lasso = section(&html, "converges-and-stays-converged");
            assert!(lasso.contains("data-cycle-start="));
            assert!(lasso.contains(r#"<li class="cycle-marker">-- steps "#));
            assert!(lasso.contains(r#"<li class="step cycle""#));
            assert!(
                lasso.contains(r#"class="cycle""#),
                "the cycle's band in the diagram"
            );
            assert!(lasso.contains("in the cycle"));
        }
        if let Some(browser) = &browser {
            dom_of(browser, &file, "");
        }
    }
}

#[test]
fn an_unwritable_html_path_is_refused_before_the_check() {
    let output = Command::new(REBALANCE)
        .args(["check", "--scenario", "duplicate-client-id", "--html"])
        .arg(scratch("no-such-folder/report.html"))
        .output()
        .expect("rebalance runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write --html"), "{stderr}");
    assert!(!stderr.contains("checking"), "the check ran: {stderr}");
    assert!(output.stdout.is_empty());
}
