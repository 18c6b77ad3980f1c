//! `rebalance cluster`: runs a scenario on a real RocketMQ cluster on
//! loopback and sets its outcome beside the model's verdicts. The work is
//! the cluster crate's (`pipeline::run`); this module reads the flags and
//! prints the judged run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use rocketmq_rebalance_cluster::harms::Figures;
use rocketmq_rebalance_cluster::pipeline::{self, Judged, Request, Source, Stage};
use rocketmq_rebalance_cluster::trace::{short_queue, Event};
use rocketmq_rebalance_model::configuration::{Dense, Variant};
use serde_json::json;

use crate::input::{bad_input, EXIT_FAILED};

/// Flags of `rebalance cluster`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// The scenario to run, by `check`'s names: the script
    /// `cluster/scenarios/NAME.json` (`NAME-orderly.json` with --orderly).
    #[arg(long, required_unless_present_any = ["script", "harms", "random"])]
    scenario: Option<String>,
    /// The orderly variant of the scenario.
    #[arg(long)]
    orderly: bool,
    /// A script file instead of a named scenario.
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    script: Option<PathBuf>,
    /// Measure the harms of one change of a group under a steady load
    /// instead: the script `cluster/harms/CHANGE.json` (join, leave, crash,
    /// kill, rolling-upgrade, orderly-broker-restart). Every run reports its
    /// harms; these scripts are made for it.
    #[arg(long, value_name = "CHANGE", conflicts_with_all = ["scenario", "script", "orderly"])]
    harms: Option<String>,
    /// A randomised run for trace validation instead: the seed picks what
    /// happens to a running group of three (a join, a graceful leave, a
    /// kill, a pause past the brokers' expiry), whether at rest or while it
    /// still starts, the messages, the timers, and a fault the first
    /// consumer may meet once (none, a lost notification, a failed query,
    /// or with messages and a kill or a leave a batch its listener fails or
    /// an offset persist a broker loses); one in four seeds that picked no
    /// fault restarts broker-a with a downtime (1, 3 or 8 s) under a group
    /// of two instead of changing the group; the run and both models have
    /// two queues a broker, one where messages flow; the run is validated
    /// against the model of those picks (`conformance`).
    #[arg(long, value_name = "SEED", conflicts_with_all = ["scenario", "script", "orderly", "harms"])]
    random: Option<u64>,
    /// Run at RocketMQ's default timers: the script's scaled timers are
    /// dropped (its store settings stay) and every wait lasts at least
    /// 400 s.
    #[arg(long)]
    default_timers: bool,
    /// The RocketMQ version (5.3.3 or 5.5.0), from Maven Central.
    #[arg(long, default_value = "5.3.3")]
    rocketmq: String,
    /// A broker restart's downtime in seconds, where the script gives none
    /// (default 0: the broker starts again as soon as it has stopped).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    restart_downtime: f64,
    /// Also write the merged NDJSON trace to FILE (it is always written to
    /// the run directory).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The directory for the run's stores, logs and trace (default: a new
    /// one under the temporary directory).
    #[arg(long, value_name = "DIR")]
    run_dir: Option<PathBuf>,
    /// A protocol variant to replay (repeatable): the scenario's own
    /// script for it where it names one (a broker rule standing in for a
    /// broker-side change, `lock-grace-after-start` of the orderly broker
    /// restart), else the setting that makes RocketMQ behave so
    /// (`unique-instance-names`, `consume-from-first`,
    /// `listeners-stop-on-interrupt`); the model is checked with the
    /// variant too. Another variant exits 2.
    #[arg(
        long = "variant",
        value_name = "NAME",
        value_parser = PossibleValuesParser::new(Variant::all().map(Variant::name))
            .try_map(|name| name.parse::<Variant>()),
    )]
    variants: Vec<Variant>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `rebalance cluster`: exit 0 when the real outcome matches the
/// model's, 1 when it does not, 2 on bad input, 3 when the cluster could
/// not be started.
pub fn run_cluster(args: ClusterArgs) -> ExitCode {
    if !(0.0..=600.0).contains(&args.restart_downtime) {
        return bad_input("--restart-downtime must be 0..=600 seconds");
    }
    let source = match (&args.script, &args.scenario, &args.harms, args.random) {
        (Some(path), ..) => Source::Script(path.clone()),
        (None, Some(name), ..) => Source::Scenario {
            name: name.clone(),
            orderly: args.orderly,
        },
        (None, None, Some(change), _) => Source::Harms(change.clone()),
        (None, None, None, Some(seed)) => Source::Random(seed),
        (None, None, None, None) => {
            return bad_input("--scenario, --script, --harms or --random is required")
        }
    };
    let request = Request {
        source,
        default_timers: args.default_timers,
        rocketmq: args.rocketmq.clone(),
        restart_downtime_ms: (args.restart_downtime * 1000.0) as u64,
        run_dir: args.run_dir.clone(),
        trace: args.trace.clone(),
        variants: args.variants.clone(),
    };
    let progress = |stage: Stage<'_>| match stage {
        Stage::Checking { flags } => eprintln!("model: rebalance check {}", flags.join(" ")),
        Stage::Running { rocketmq, run_dir } => eprintln!(
            "real cluster: RocketMQ {rocketmq}, run directory {}",
            run_dir.display()
        ),
    };
    let judged = match pipeline::run(&request, progress) {
        Ok(judged) => judged,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    if args.json {
        println!("{}", json_of(&judged));
    } else {
        print(&judged);
    }
    if judged.matches_model() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// Trace validation of the run as JSON: the verdict, what was explained,
/// the first event not explained, the allocations checked.
fn conformance_json(judged: &Judged) -> serde_json::Value {
    let c = &judged.conformance;
    match &c.validation {
        Ok(v) => {
            let unexplained = judged.unexplained().map(|(o, event)| {
                json!({"line": o.line, "change": o.what.to_string(),
                       "event": event.map(Event::to_line)})
            });
            // Every observation explained, and no such run comes to rest.
            let at_end = v.conformance.unexplained == Some(v.conformance.observations);
            let unexplained = unexplained.or_else(|| {
                at_end.then(|| {
                    json!({"line": null, "event": null,
                           "change": "the end: the run ended at rest, and no run of the model comes to rest without a change the trace does not show"})
                })
            });
            json!({
                "verdict": v.conformance.verdict,
                "conforms": c.conforms(),
                "model": c.flags,
                "start": v.start,
                "end": v.end,
                "observations": v.conformance.observations,
                "explained": v.conformance.explained,
                "unexplained": unexplained,
                "allocations": v.translation.allocations,
                "allocation_mismatches": v.translation.allocation_mismatches,
                "contradictions": v.translation.contradictions,
            })
        }
        Err(e) => {
            json!({"verdict": "not_validated", "conforms": false, "model": c.flags, "error": e})
        }
    }
}

fn json_of(judged: &Judged) -> serde_json::Value {
    let properties: Vec<_> = judged
        .outcome
        .properties
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "expectation": p.expectation,
                "status": p.status,
                "model_status": judged.report.property(p.name).map(|m| m.status),
                "detail": p.detail,
            })
        })
        .collect();
    json!({
        "scenario": judged.script.scenario,
        "orderly": judged.script.orderly,
        "grpc": judged.outcome.grpc,
        "fifo": judged.outcome.fifo,
        "rocketmq_version": judged.result.rocketmq_version,
        "seconds": judged.result.seconds,
        "settled": judged.outcome.settled,
        "timed_out": judged.result.timed_out,
        "properties": properties,
        "messages_sent": judged.outcome.sent,
        "duplicates": judged.outcome.duplicates,
        "never_delivered": judged.outcome.never_delivered,
        "ownership": judged.outcome.ownership,
        "default_timers": judged.default_timers,
        "harms": harms_json(judged),
        "matches_model": judged.matches_model(),
        "mismatches": judged.mismatches,
        "not_compared": judged.not_compared,
        "conformance": conformance_json(judged),
        "trace": judged.trace,
    })
}

fn harms_json(judged: &Judged) -> serde_json::Value {
    let mut harms = serde_json::to_value(&judged.harms).unwrap_or_default();
    if let Some(object) = harms.as_object_mut() {
        object.insert(
            "compare_estimate".into(),
            judged.estimate.map_or(serde_json::Value::Null, |e| {
                let p = e.parameters;
                json!({"duplicates_per_hand_over": e.duplicates_per_hand_over, "rate": p.rate,
                       "persist_interval_s": p.persist_interval, "pull_batch": p.pull_batch})
            }),
        );
        object.insert(
            "model".into(),
            serde_json::to_value(&judged.report.harms).unwrap_or_default(),
        );
    }
    harms
}

fn print_harms(judged: &Judged) {
    let h = &judged.harms;
    if h.hand_overs.is_empty() {
        return;
    }
    let figures = |f: &Option<Figures>, unit: &str| {
        f.as_ref().map_or("none".to_owned(), |f| {
            format!(
                "median {:.2}{unit}, mean {:.2}{unit}, max {:.2}{unit} (of {})",
                f.median, f.mean, f.max, f.count
            )
        })
    };
    println!("  harms, {} hand-overs:", h.hand_overs.len());
    println!("    pause per moved queue: {}", figures(&h.pause_s, " s"));
    println!(
        "    delivered again per hand-over: {}",
        figures(&h.duplicates_per_hand_over, "")
    );
    if let Some(e) = &judged.estimate {
        println!(
            "    rebalance compare expects {:.1} a hand-over at {} messages a second a queue, persist every {} s",
            e.duplicates_per_hand_over, e.parameters.rate, e.parameters.persist_interval
        );
    }
    if let Some(m) = &judged.report.harms {
        println!(
            "    the model: at most {} message(s) of one queue delivered twice, {} queue(s) paused at once",
            m.max_duplicates_per_handover.value, m.max_paused_queues.value
        );
    }
    if let Some(b) = &h.backlog {
        println!(
            "    backlog: {} before {}, peak {} ({:.1} s after it)",
            b.steady, b.change, b.peak, b.peak_after_s
        );
    }
    for o in &h.hand_overs {
        println!(
            "    {} {} -> {}{}: released {}, pause {}, {} again",
            short_queue(&o.queue),
            o.from,
            o.to,
            o.after
                .as_ref()
                .map_or(String::new(), |a| format!(" (after {a})")),
            o.released_s
                .map_or("never".to_owned(), |r| format!("at {r:.1} s")),
            o.pause_s.map_or("-".to_owned(), |p| format!("{p:.2} s")),
            o.duplicates
        );
    }
}

fn print(judged: &Judged) {
    let (script, result, outcome) = (&judged.script, &judged.result, &judged.outcome);
    println!(
        "scenario {}{} on RocketMQ {} ({:.0} s): {}",
        script.scenario,
        if script.orderly { " --orderly" } else { "" },
        result.rocketmq_version,
        result.seconds,
        script.what
    );
    if let Some(what) = &result.timed_out {
        println!("  the run ended when a wait timed out: {what}");
    }
    println!(
        "  {:<34} {:<10} {:<10} what the run showed",
        "property", "model", "real"
    );
    for p in &outcome.properties {
        let model = judged
            .report
            .property(p.name)
            .map_or("-".to_owned(), |m| status_word(m.status));
        println!(
            "  {:<34} {:<10} {:<10} {}",
            p.name,
            model,
            status_word(p.status),
            p.detail
        );
    }
    println!(
        "  messages: {} sent, {} delivered more than once, {} never delivered",
        outcome.sent, outcome.duplicates, outcome.never_delivered
    );
    println!("  ownership over time (seconds from the start):");
    for line in &outcome.ownership {
        println!("    {line}");
    }
    print_harms(judged);
    for n in &judged.not_compared {
        println!("  not compared: {}: {}", n.property, n.reason);
    }
    if judged.mismatches.is_empty() {
        println!("the real outcome matches the model");
    } else {
        for m in &judged.mismatches {
            println!(
                "MISMATCH {}: model {}, real {}; wrong: {}",
                m.property,
                status_word(m.model),
                status_word(m.real),
                m.wrong
            );
        }
    }
    let c = conformance_json(judged);
    match c["error"].as_str() {
        Some(error) => println!(
            "trace validation (rebalance conform {}): {}: {error}",
            judged.conformance.flags.join(" "),
            c["verdict"].as_str().unwrap_or_default(),
        ),
        None => println!(
            "trace validation (rebalance conform {}): {}, {} of {} observations explained by one run from a cold start{}, {} allocations checked{}",
            judged.conformance.flags.join(" "),
            c["verdict"].as_str().unwrap_or_default(),
            c["explained"],
            c["observations"],
            if c["end"] == "at_rest" {
                " that comes to rest as the run did"
            } else {
                ""
            },
            c["allocations"],
            c["unexplained"]["change"]
                .as_str()
                .map_or(String::new(), |u| format!("; first unexplained: {u}"))
        ),
    }
    println!(
        "trace: {}",
        judged
            .trace
            .as_ref()
            .map_or(String::new(), |t| t.display().to_string())
    );
}

fn status_word(s: rocketmq_rebalance_model::report::Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
