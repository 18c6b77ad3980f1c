//! `rebalance conform`: whether a real cluster's trace is a behaviour of
//! the model.

use clap::Args;
use rocketmq_rebalance_cluster::trace;
use rocketmq_rebalance_cluster::translate::causality::Contradiction;
use rocketmq_rebalance_cluster::translate::RuleFired;
use rocketmq_rebalance_cluster::translate::{
    trace_end, validate, AllocationMismatch, Start, Translation, Validation,
};
use rocketmq_rebalance_model::validation::{
    Bounds, Conformance, End, Observation, Observed, Verdict,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::input::{bad_input, EXIT_FAILED};
use crate::render::html::html_report;
use rocketmq_rebalance_flags::ModelArgs;

/// Flags of `rebalance conform`.
#[derive(Args, Debug)]
pub struct ConformArgs {
    /// The NDJSON trace a `rebalance cluster` run wrote (its
    /// `trace.ndjson`).
    trace: PathBuf,
    /// Check against the model flags the trace's run records (its `run`
    /// event: the script's `conform` flags, the model at the run's own
    /// sizes, else its `model` flags), instead of the flags given.
    #[arg(long)]
    trace_model: bool,
    #[command(flatten)]
    model: ModelArgs,
    /// Start the model's runs from the scenario's group, registered and
    /// balanced, and leave unchecked the observations up to the first point
    /// where the trace shows that group (the warm-up). By default every
    /// consumer of the model joins during the run (a cold start), so that
    /// every observation is explained from the first start on.
    #[arg(long)]
    from_settled: bool,
    /// Unseen steps the model may take in a row between two observations.
    #[arg(long, default_value_t = Bounds::default().silent_steps)]
    silent_steps: usize,
    /// Milliseconds within which observations of different actors may be
    /// explained in either order.
    #[arg(long, default_value_t = Bounds::default().concurrency_ns / 1_000_000)]
    concurrency_ms: u64,
    /// Nodes (model state, position in the trace) the search may visit.
    #[arg(long, default_value_t = Bounds::default().max_nodes)]
    max_nodes: usize,
    /// Append each distinct allocation the trace shows to FILE, as a
    /// client-level conformance case (one JSON line, the format of
    /// `tests/data/rebalance-java.jsonl`) with the real consumer's result.
    #[arg(long, value_name = "FILE")]
    cases: Option<PathBuf>,
    /// Also write the answer as the self-contained HTML page `check
    /// --html` writes: the run of the model that explained the most, step
    /// by step with its states, each observed step followed by the
    /// observation it explains.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Where `rebalance explore` (run with the same model flags) serves, for
    /// the page's links.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:3000")]
    explorer_url: String,
    /// Print one JSON object on stdout instead of text (with `start`;
    /// `end`, `at_rest` when the trace's `end` event says its run ended at
    /// rest, so that the model's run must come to rest too, else `open`;
    /// `contradictions`, each line where the trace contradicts itself;
    /// `rules_fired`, each translator rule that read events otherwise than
    /// as they stand, with their lines; `observations_by_kind`).
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Output<'a> {
    trace: String,
    model: &'a [String],
    start: Start,
    end: End,
    #[serde(flatten)]
    conformance: &'a Conformance,
    unexplained_event: Option<String>,
    allocations: usize,
    allocation_mismatches: &'a [AllocationMismatch],
    contradictions: &'a [Contradiction],
    rules_fired: &'a [RuleFired],
    observations_by_kind: BTreeMap<&'static str, usize>,
    conforms: bool,
}

/// The kinds of observation, those not observed yet among them (0):
/// offsets. A delivery is a batch's start, checked against the state it
/// falls in.
const KINDS: [&str; 7] = [
    "membership",
    "queues",
    "life",
    "delivery",
    "offset",
    "lock",
    "fault",
];

/// How many observations of each kind the trace gave.
fn by_kind(observations: &[Observation]) -> BTreeMap<&'static str, usize> {
    let mut counts: BTreeMap<&'static str, usize> = KINDS.iter().map(|k| (*k, 0)).collect();
    for o in observations {
        let kind = match o.what {
            Observed::Members { .. } => "membership",
            Observed::Owns { .. } => "queues",
            Observed::Started { .. } | Observed::ShutDown { .. } | Observed::Died { .. } => "life",
            Observed::Faulted { .. } | Observed::FailedOver { .. } => "fault",
            Observed::Locked { .. } => "lock",
            Observed::Consumes { .. } => "delivery",
        };
        *counts.entry(kind).or_default() += 1;
    }
    counts
}

/// Runs `rebalance conform`: 0 when the trace is a behaviour of the model,
/// every allocation in it is the crate's and it contradicts itself
/// nowhere; 1 when it is not (the first observation no run explains, an
/// allocation, a contradiction: these two decided before any bound); 2 on
/// bad input; 3 when a search bound was hit first and nothing else decided
/// it.
pub fn run(args: ConformArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.trace) {
        Ok(text) => text,
        Err(e) => return bad_input(format!("cannot read {}: {e}", args.trace.display())),
    };
    let events = match trace::parse(&text) {
        Ok(events) => events,
        Err(e) => return bad_input(format!("{}: {e}", args.trace.display())),
    };
    let flags: Vec<String> = if args.trace_model {
        trace::validation_flags(&events).unwrap_or_default()
    } else {
        Vec::new()
    };
    let config = if args.trace_model {
        ModelArgs::config_from(&flags)
    } else {
        args.model.build_config()
    };
    let config = match config {
        Ok(config) => config,
        Err(e) => return bad_input(e),
    };
    if args.silent_steps == 0 || args.max_nodes == 0 {
        return bad_input("--silent-steps and --max-nodes must be positive");
    }
    let bounds = Bounds {
        silent_steps: args.silent_steps,
        concurrency_ns: args.concurrency_ms * 1_000_000,
        max_nodes: args.max_nodes,
    };
    // Created now, so that a bad path is refused before the search.
    let html = match &args.html {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Some((path, file)),
            Err(e) => return bad_input(format!("cannot write --html {}: {e}", path.display())),
        },
        None => None,
    };
    let started = Instant::now();
    let start = if args.from_settled {
        Start::Settled
    } else {
        Start::Cold
    };
    let validation = match validate(&events, config, bounds, start, trace_end(&events)) {
        Ok(v) => v,
        Err(e) => return bad_input(format!("{}: {e}", args.trace.display())),
    };
    let conforms = validation.conforms();
    let Validation {
        start,
        end,
        translation,
        model,
        conformance: result,
    } = validation;
    let seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &args.cases {
        let lines: String = translation
            .cases
            .iter()
            .filter_map(|c| serde_json::to_string(c).ok())
            .map(|line| line + "\n")
            .collect();
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(lines.as_bytes()));
        if let Err(e) = appended {
            return bad_input(format!("cannot write --cases {}: {e}", path.display()));
        }
    }
    let unexplained_event = result
        .unexplained
        .and_then(|i| translation.observations.get(i))
        .and_then(|o| text.lines().nth(o.line - 1).map(str::to_owned));
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        let output = Output {
            trace: args.trace.display().to_string(),
            model: &flags,
            start,
            end,
            conformance: &result,
            unexplained_event,
            allocations: translation.allocations,
            allocation_mismatches: &translation.allocation_mismatches,
            contradictions: &translation.contradictions,
            rules_fired: &translation.rules_fired,
            observations_by_kind: by_kind(&translation.observations),
            conforms,
        };
        serde_json::to_string(&output)
            .map_err(std::io::Error::other)
            .and_then(|json| writeln!(out, "{json}"))
    } else {
        write_text(
            &mut out,
            (start, end),
            &result,
            &translation,
            unexplained_event.as_deref(),
        )
    };
    if let Err(e) = written {
        eprintln!("error: cannot write the report: {e}");
    }
    if let Some((path, mut file)) = html {
        let page = html_report(&result.report(&model, seconds), &model, &args.explorer_url);
        match file.write_all(page.as_bytes()) {
            Ok(()) => eprintln!("html report: {} ({} bytes)", path.display(), page.len()),
            Err(e) => eprintln!(
                "error: cannot write the HTML report {}: {e}",
                path.display()
            ),
        }
    }
    // What is certain comes first: a trace that contradicts itself, or an
    // allocation that is not the crate's, does not conform whatever a
    // larger bound would find.
    match result.verdict {
        _ if conforms => ExitCode::SUCCESS,
        Verdict::BoundHit if translation.refutes().is_none() => ExitCode::from(3),
        _ => ExitCode::from(EXIT_FAILED),
    }
}

fn write_text(
    out: &mut impl Write,
    (start, end): (Start, End),
    result: &Conformance,
    translation: &Translation,
    unexplained_event: Option<&str>,
) -> std::io::Result<()> {
    let verdict = match result.verdict {
        _ if !translation.contradictions.is_empty() => {
            "does not conform: the trace contradicts itself"
        }
        _ if !translation.allocation_mismatches.is_empty() => {
            "does not conform: an allocation is not the crate's"
        }
        Verdict::Conforms => "conforms: a run of the model makes every observed change",
        Verdict::Mismatch => "does not conform: no run of the model explains an observation",
        Verdict::BoundHit => {
            "undecided: a search bound was hit (raise --silent-steps or --max-nodes)"
        }
    };
    writeln!(out, "{verdict}")?;
    for c in &translation.contradictions {
        writeln!(out, "  line {}: {}", c.line, c.problem)?;
    }
    let kinds: Vec<String> = by_kind(&translation.observations)
        .iter()
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    writeln!(out, "  observations by kind: {}", kinds.join(", "))?;
    for rule in &translation.rules_fired {
        let lines: Vec<String> = rule.lines.iter().map(usize::to_string).collect();
        writeln!(
            out,
            "  rule fired: {} (lines {})",
            rule.rule,
            lines.join(" ")
        )?;
    }
    match start {
        Start::Cold => writeln!(
            out,
            "  {} observations, from a cold start (every consumer joins), {} explained by one run, {} nodes searched",
            result.observations, result.explained, result.nodes
        )?,
        Start::Settled => writeln!(
            out,
            "  {} observations, from the settled group ({} of them the unchecked warm-up up to it), {} explained by one run, {} nodes searched",
            result.observations, result.warm_up, result.explained, result.nodes
        )?,
    }
    match end {
        End::AtRest => writeln!(
            out,
            "  the run ended at rest: the model's run must come to rest there, after steps the trace cannot see"
        )?,
        End::Open => writeln!(
            out,
            "  the trace's end is open (no `end` event says the run ended at rest): a step still to come may not have happened yet"
        )?,
    }
    writeln!(
        out,
        "  {} allocations checked against the crate, {} differ",
        translation.allocations,
        translation.allocation_mismatches.len()
    )?;
    for m in &translation.allocation_mismatches {
        writeln!(
            out,
            "  line {}: {} took [{}], the crate gives [{}]",
            m.line,
            m.consumer,
            m.real.join(" "),
            m.crate_result.join(" ")
        )?;
    }
    if result.verdict == Verdict::Conforms {
        return Ok(());
    }
    match result.unexplained.map(|i| translation.observations.get(i)) {
        Some(Some(o)) => writeln!(out, "first unexplained: line {}: {}", o.line, o.what)?,
        Some(None) => writeln!(
            out,
            "first unexplained: the end: every observation is explained, but no such run of the model comes to rest without a change the trace does not show"
        )?,
        None => {}
    }
    if let Some(event) = unexplained_event {
        writeln!(out, "  {event}")?;
    }
    writeln!(out, "the model's state there:")?;
    for line in &result.state {
        writeln!(out, "  {line}")?;
    }
    writeln!(out, "the steps it had:")?;
    for line in &result.enabled {
        writeln!(out, "  {line}")?;
    }
    writeln!(out, "the trace so far, as the model explains it:")?;
    for line in &result.explanation {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}
