//! `rebalance cluster`: runs a scenario on a real RocketMQ cluster on
//! loopback and sets its outcome beside the model's verdicts.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use rocketmq_rebalance_cluster::harms::{self, Figures, Harms};
use rocketmq_rebalance_cluster::outcome::{compare, Mismatch, Outcome};
use rocketmq_rebalance_cluster::random::random_script;
use rocketmq_rebalance_cluster::run::{prepare, run, RunOptions, RunResult};
use rocketmq_rebalance_cluster::script::{self, Script};
use rocketmq_rebalance_cluster::trace::short_queue;
use rocketmq_rebalance_cluster::translate::{same_sizes, validate, Validation};
use rocketmq_rebalance_model::{
    check_model, checked_model, Bounds, CheckOptions, FingerprintBits, Report, Search, Verdict,
};
use serde_json::json;

use crate::input::{bad_input, EXIT_FAILED};
use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_properties::compare::HarmParameters;

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
    /// still starts, the messages and the timers; the run is validated
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
    let path = match (&args.script, &args.scenario, &args.harms, args.random) {
        (Some(path), ..) => Ok(path.clone()),
        (None, Some(name), ..) => script::scenario_path(name, args.orderly),
        (None, None, Some(change), _) => script::harms_path(change),
        (None, None, None, Some(seed)) => Ok(PathBuf::from(format!("--random {seed}"))),
        (None, None, None, None) => {
            Err("--scenario, --script, --harms or --random is required".to_owned())
        }
    };
    let path = match path {
        Ok(path) => path,
        Err(e) => return bad_input(e),
    };
    let loaded = match args.random {
        Some(seed) => random_script(seed).map_err(|e| format!("--random {seed}: {e}")),
        None => Script::load(&path).map_err(|e| e.to_string()),
    };
    let script = match loaded {
        Ok(s) if args.default_timers => s.with_default_timers(),
        Ok(s) => s,
        Err(e) => return bad_input(e),
    };
    let model = match ModelArgs::config_from(&script.model) {
        Ok(config) => config,
        Err(e) => return bad_input(format!("{}: its model flags: {e}", path.display())),
    };
    // Trace validation needs the model at the run's own sizes.
    let conform_flags = script.conform.as_ref().unwrap_or(&script.model);
    let sized = ModelArgs::config_from(conform_flags).and_then(|cfg| {
        let topics = vec![script.queues; script.topics().len()];
        same_sizes(
            script.brokers - script.late_brokers,
            &topics,
            script.consumers.len(),
            &cfg,
        )
    });
    if let Err(e) = sized {
        return bad_input(format!(
            "{}: its conform flags ({}): {e}",
            path.display(),
            conform_flags.join(" ")
        ));
    }
    let run_dir = args.run_dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "rebalance-cluster-{}-{}",
            script.scenario,
            std::process::id()
        ))
    });
    let opts = RunOptions {
        rocketmq: args.rocketmq.clone(),
        restart_downtime_ms: (args.restart_downtime * 1000.0) as u64,
        run_dir: run_dir.clone(),
    };
    // Java, Maven and the version are checked, and the harness built, before
    // anything else runs.
    let harness = match prepare(&opts) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let options = CheckOptions {
        search: Search::Bfs,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        max_states: None,
        timeout: Some(Duration::from_secs(600)),
        progress_every: Duration::from_secs(3600),
        liveness: false,
        reduction: true,
        fingerprint_bits: FingerprintBits::B64,
        workers: None,
    };
    eprintln!("model: rebalance check {}", script.model.join(" "));
    let report = check_model(checked_model(model, &options), &options, |_| {});
    eprintln!(
        "real cluster: RocketMQ {}, run directory {}",
        args.rocketmq,
        run_dir.display()
    );
    let result = match run(&script, &harness, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let trace_text: String = result
        .events
        .iter()
        .filter_map(|e| serde_json::to_string(e).ok())
        .map(|l| l + "\n")
        .collect();
    let mut traces = vec![run_dir.join("trace.ndjson")];
    traces.extend(args.trace.clone());
    for t in &traces {
        if let Err(e) = std::fs::write(t, &trace_text) {
            return bad_input(format!("cannot write the trace {}: {e}", t.display()));
        }
    }
    let outcome = Outcome::judge(&result.observer, result.settled, script.orderly);
    let mismatches = compare(&report, &outcome, &script);
    let harms = harms::measure(&result.events, &result.observer, Script::TOPIC);
    let conformance = conformance(&script, &result, &trace_text);
    let judged = Judged {
        conformance: &conformance,
        default_timers: args.default_timers,
        harms: &harms,
        script: &script,
        result: &result,
        report: &report,
        outcome: &outcome,
        mismatches: &mismatches,
        trace: traces.last(),
    };
    if args.json {
        println!("{}", judged.json());
    } else {
        judged.print();
    }
    if mismatches.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// Trace validation of the run (`rebalance conform`) against the model at
/// its own sizes, as JSON: the verdict, what was explained, the first event
/// not explained, the allocations checked.
fn conformance(script: &Script, result: &RunResult, trace_text: &str) -> serde_json::Value {
    let flags = script.conform.as_ref().unwrap_or(&script.model);
    let validated = ModelArgs::config_from(flags)
        .and_then(|cfg| validate(&result.events, cfg, Bounds::default()));
    match validated {
        Ok(Validation {
            translation,
            conformance: c,
            ..
        }) => {
            let unexplained = c
                .unexplained
                .and_then(|i| translation.observations.get(i))
                .map(|o| {
                    json!({"line": o.line, "change": o.what.to_string(),
                           "event": trace_text.lines().nth(o.line - 1)})
                });
            json!({
                "verdict": c.verdict,
                "conforms": c.verdict == Verdict::Conforms
                    && translation.allocation_mismatches.is_empty(),
                "model": flags,
                "observations": c.observations,
                "explained": c.explained,
                "unexplained": unexplained,
                "allocations": translation.allocations,
                "allocation_mismatches": translation.allocation_mismatches,
            })
        }
        Err(e) => {
            json!({"verdict": "not_validated", "conforms": false, "model": flags, "error": e})
        }
    }
}

/// A run and its verdicts, beside the model's.
struct Judged<'a> {
    conformance: &'a serde_json::Value,
    default_timers: bool,
    harms: &'a Harms,
    script: &'a Script,
    result: &'a RunResult,
    report: &'a Report,
    outcome: &'a Outcome,
    mismatches: &'a [Mismatch],
    trace: Option<&'a PathBuf>,
}

impl Judged<'_> {
    fn json(&self) -> serde_json::Value {
        let properties: Vec<_> = self
            .outcome
            .properties
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "expectation": p.expectation,
                    "status": p.status,
                    "model_status": self.report.property(p.name).map(|m| m.status),
                    "detail": p.detail,
                })
            })
            .collect();
        json!({
            "scenario": self.script.scenario,
            "orderly": self.script.orderly,
            "rocketmq_version": self.result.rocketmq_version,
            "seconds": self.result.seconds,
            "settled": self.outcome.settled,
            "timed_out": self.result.timed_out,
            "properties": properties,
            "messages_sent": self.outcome.sent,
            "duplicates": self.outcome.duplicates,
            "never_delivered": self.outcome.never_delivered,
            "ownership": self.outcome.ownership,
            "default_timers": self.default_timers,
            "harms": self.harms_json(),
            "matches_model": self.mismatches.is_empty(),
            "mismatches": self.mismatches,
            "conformance": self.conformance,
            "trace": self.trace,
        })
    }

    /// What `rebalance compare` expects a hand-over to deliver again at
    /// this run's load and persist interval.
    fn estimate(&self) -> Option<(HarmParameters, f64)> {
        let rate = self.script.stream_rate()?;
        let persist_ms = self
            .script
            .timers
            .client_config
            .get("persistConsumerOffsetInterval")
            .and_then(|v| v.as_f64());
        let parameters = HarmParameters {
            rate: f64::from(rate),
            persist_interval: persist_ms
                .map_or(HarmParameters::default().persist_interval, |ms| ms / 1000.0),
            ..HarmParameters::default()
        };
        Some((parameters, parameters.duplicates_per_handover()))
    }

    fn harms_json(&self) -> serde_json::Value {
        let mut harms = serde_json::to_value(self.harms).unwrap_or_default();
        if let Some(object) = harms.as_object_mut() {
            object.insert(
                "compare_estimate".into(),
                self.estimate().map_or(serde_json::Value::Null, |(p, d)| {
                    json!({"duplicates_per_hand_over": d, "rate": p.rate,
                           "persist_interval_s": p.persist_interval, "pull_batch": p.pull_batch})
                }),
            );
            object.insert(
                "model".into(),
                serde_json::to_value(&self.report.harms).unwrap_or_default(),
            );
        }
        harms
    }

    fn print_harms(&self) {
        let h = self.harms;
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
        if let Some((p, d)) = self.estimate() {
            println!(
                "    rebalance compare expects {d:.1} a hand-over at {} messages a second a queue, persist every {} s",
                p.rate, p.persist_interval
            );
        }
        if let Some(m) = &self.report.harms {
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

    fn print(&self) {
        println!(
            "scenario {}{} on RocketMQ {} ({:.0} s): {}",
            self.script.scenario,
            if self.script.orderly {
                " --orderly"
            } else {
                ""
            },
            self.result.rocketmq_version,
            self.result.seconds,
            self.script.what
        );
        if let Some(what) = &self.result.timed_out {
            println!("  the run ended when a wait timed out: {what}");
        }
        println!(
            "  {:<34} {:<10} {:<10} what the run showed",
            "property", "model", "real"
        );
        for p in &self.outcome.properties {
            let model = self
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
            self.outcome.sent, self.outcome.duplicates, self.outcome.never_delivered
        );
        println!("  ownership over time (seconds from the start):");
        for line in &self.outcome.ownership {
            println!("    {line}");
        }
        self.print_harms();
        if self.mismatches.is_empty() {
            println!("the real outcome matches the model");
        } else {
            for m in self.mismatches.iter() {
                println!(
                    "MISMATCH {}: model {}, real {}; wrong: {}",
                    m.property,
                    status_word(m.model),
                    status_word(m.real),
                    m.wrong
                );
            }
        }
        let c = self.conformance;
        println!(
            "trace validation (rebalance conform {}): {}, {} of {} observations explained by one run, {} allocations checked{}",
            c["model"].as_array().map_or(String::new(), |f| {
                f.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(" ")
            }),
            c["verdict"].as_str().unwrap_or_default(),
            c["explained"],
            c["observations"],
            c["allocations"],
            c["unexplained"]["change"]
                .as_str()
                .map_or(String::new(), |u| format!("; first unexplained: {u}"))
        );
        println!(
            "trace: {}",
            self.trace
                .map_or(String::new(), |t| t.display().to_string())
        );
    }
}

fn status_word(s: rocketmq_rebalance_model::Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
