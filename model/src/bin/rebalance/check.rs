//! `rebalance check`: model-checks the rebalance protocol for a scenario.

use clap::Args;
use rocketmq_rebalance_model::check::PropertyReport;
use rocketmq_rebalance_model::fairness::check_liveness;
use rocketmq_rebalance_model::graph::Limits;
use rocketmq_rebalance_model::{
    build_model, check, CheckOptions, Progress, Report, Search, Status,
};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::model_args::ModelArgs;
use crate::EXIT_BAD_INPUT;

/// Flags of `rebalance check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Checker threads (default: available cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Breadth-first search.
    #[arg(long, group = "search")]
    bfs: bool,
    /// Depth-first search (the default).
    #[arg(long, group = "search")]
    dfs: bool,
    /// Random walks from SEED; never complete, so never exit 0 (10 s unless
    /// --timeout or --max-states).
    #[arg(long, value_name = "SEED", group = "search")]
    simulate: Option<u64>,
    /// Stop after about this many states (the run is then incomplete).
    #[arg(long)]
    max_states: Option<usize>,
    /// Stop after SECS seconds (the run is then incomplete).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Also check liveness under weak fairness: every fair execution
    /// reaches a converged state and stays there. Models the periodic
    /// rebalance tick (so the state space is larger) and reports the
    /// property "converges and stays converged" with expectation
    /// `eventually`; a violation is a lasso (steps to a cycle, then the
    /// cycle).
    #[arg(long)]
    liveness: bool,
    /// Where `rebalance explore` (run with the same model flags) serves: each
    /// counterexample is printed with the URL that opens its path there.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:3000")]
    explorer_url: String,
}

fn bad_input(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// Runs `rebalance check`: exit 0 when complete and every property holds,
/// 1 when a property fails, 2 on bad input, 3 when incomplete.
pub fn run(args: CheckArgs) -> ExitCode {
    if args.threads.is_some_and(|t| t == 0 || t > 1024) {
        return bad_input("--threads must be 1..=1024");
    }
    if args.max_states == Some(0) || args.timeout == Some(0) {
        return bad_input("--max-states and --timeout must be positive");
    }
    let mut config = match args.model.build_config() {
        Ok(config) => config,
        Err(message) => return bad_input(message),
    };
    config.periodic_ticks = args.liveness;
    let summary = format!(
        "scenario {}, strategy {}, network {}, consumers {}, brokers {}, topics {}, queues per broker {}, joins {}, crashes {}, leaves {}, route changes {}, lost notifications {}, failed queries {}",
        config.scenario,
        config.strategy.name(),
        config.network,
        config.sizes.consumers,
        config.sizes.brokers,
        config.sizes.topics,
        config.sizes.queues,
        config.sizes.joins.unwrap_or(config.sizes.consumers),
        config.sizes.crashes,
        config.sizes.leaves,
        config.sizes.route_changes,
        config.sizes.lost_notifications,
        config.sizes.failed_queries,
    );
    let options = CheckOptions {
        search: match (args.bfs, args.simulate) {
            (true, _) => Search::Bfs,
            (_, Some(seed)) => Search::Simulate(seed),
            _ => Search::Dfs,
        },
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        max_states: args.max_states,
        // Simulation never ends by itself.
        timeout: args.timeout.map(Duration::from_secs).or_else(|| {
            (args.simulate.is_some() && args.max_states.is_none())
                .then_some(Duration::from_secs(10))
        }),
        progress_every: Duration::from_secs(3),
    };
    eprintln!("checking {summary}");
    let model = build_model(config);
    let started = Instant::now();
    let mut report = check(model.clone(), &options, print_progress);
    if args.liveness {
        eprintln!("checking liveness under weak fairness");
        let limits = Limits {
            max_states: options.max_states,
            timeout: options.timeout.map(|t| t.saturating_sub(started.elapsed())),
            stop_at_bad: false,
        };
        let (property, stats) = check_liveness(&model, limits);
        if let Some(cutoff) = &stats.cutoff {
            if report.complete {
                report.stopped = format!("liveness graph cut: {cutoff}");
            }
            report.complete = false;
        }
        report.properties.push(property);
        report.liveness = Some(stats);
    }
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_string(&report)
            .map_err(std::io::Error::other)
            .and_then(|json| writeln!(stdout, "{json}"))
    } else {
        write_text(&mut stdout, &summary, &report, &args.explorer_url)
    };
    if let Err(e) = written {
        eprintln!("error: cannot write the report: {e}");
    }
    ExitCode::from(report.exit_code())
}

fn print_progress(p: &Progress) {
    eprintln!(
        "  {:>12} states, {:>11} unique, {:>9.0} states/s, {:>9.0} unique/s, depth {}",
        p.states,
        p.unique_states,
        p.states as f64 / p.seconds.max(1e-9),
        p.unique_per_second(),
        p.max_depth
    );
}

fn write_text(
    out: &mut impl Write,
    summary: &str,
    report: &Report,
    explorer_url: &str,
) -> std::io::Result<()> {
    writeln!(out, "{summary}")?;
    if report.complete {
        writeln!(out, "complete: every reachable state visited")?;
    } else {
        writeln!(out, "INCOMPLETE: stopped by {}", report.stopped)?;
    }
    writeln!(
        out,
        "{} states, {} unique, max depth {}, {:.2} s, {:.0} unique states/s",
        report.states,
        report.unique_states,
        report.max_depth,
        report.seconds,
        report.unique_states_per_second
    )?;
    if let Some(l) = &report.liveness {
        writeln!(
            out,
            "liveness graph: {} states, {} transitions, {} bytes/state, {:.2} s",
            l.states, l.edges, l.bytes_per_state, l.seconds
        )?;
    }
    for p in &report.properties {
        writeln!(
            out,
            "  {:<10} {:<10} {}",
            status_word(p.status),
            p.expectation,
            p.name
        )?;
    }
    for p in report
        .properties
        .iter()
        .filter(|p| p.status == Status::Violated)
    {
        write_trace(out, "counterexample", p, explorer_url)?;
    }
    Ok(())
}

fn write_trace(
    out: &mut impl Write,
    kind: &str,
    p: &PropertyReport,
    explorer_url: &str,
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "{kind} to \"{}\":", p.name)?;
    if let Some(path) = &p.explorer_path {
        writeln!(
            out,
            "  explorer: {}/{path}  (rebalance explore with the same model flags)",
            explorer_url.trim_end_matches('/')
        )?;
    }
    for line in p.trace.iter().flatten() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Found => "found",
        Status::NotFound => "NOT FOUND",
        Status::Unknown => "unknown",
    }
}
