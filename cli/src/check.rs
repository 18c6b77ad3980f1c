//! `rebalance check`: model-checks the rebalance protocol for a scenario.

use clap::Args;
use rocketmq_rebalance_model::{check, CheckOptions, Progress, Search};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use crate::input::bad_input;
use crate::model_args::ModelArgs;
use crate::render::report_text::{summary, write_report};

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

/// Runs `rebalance check`: exit 0 when complete and every property holds,
/// 1 when a property fails, 2 on bad input, 3 when incomplete.
pub fn run(args: CheckArgs) -> ExitCode {
    if args.threads.is_some_and(|t| t == 0 || t > 1024) {
        return bad_input("--threads must be 1..=1024");
    }
    if args.max_states == Some(0) || args.timeout == Some(0) {
        return bad_input("--max-states and --timeout must be positive");
    }
    let config = match args.model.build_config() {
        Ok(config) => config,
        Err(message) => return bad_input(message),
    };
    let summary = summary(&config);
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
        liveness: args.liveness,
    };
    eprintln!("checking {summary}");
    let report = check(config, &options, print_progress);
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_string(&report)
            .map_err(std::io::Error::other)
            .and_then(|json| writeln!(stdout, "{json}"))
    } else {
        write_report(&mut stdout, &summary, &report, &args.explorer_url)
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
