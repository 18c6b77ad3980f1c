//! `rebalance check`: model-checks the rebalance protocol for a scenario.

use clap::Args;
use rocketmq_rebalance::{strategy_from_name, STRATEGY_NAMES};
use rocketmq_rebalance_model::check::PropertyReport;
use rocketmq_rebalance_model::{
    build_model, check, CheckOptions, Config, NetworkKind, Progress, Report, Scenario, Search,
    Status,
};
use stateright::Model;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Flags of `rebalance check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Situation to check: healthy, inconsistent-subscription,
    /// duplicate-client-id, crash, route-change, partial-partition,
    /// graceful-shutdown.
    #[arg(long, default_value = "healthy", value_parser = parse_scenario)]
    scenario: Scenario,
    /// Consumers in the group (scenario default: 3).
    #[arg(long)]
    consumers: Option<usize>,
    /// Brokers, each hosting every topic (default 2).
    #[arg(long)]
    brokers: Option<usize>,
    /// Topics (default 1; inconsistent-subscription: 2).
    #[arg(long)]
    topics: Option<usize>,
    /// Read queues per topic per broker (default 2; route-change and
    /// graceful-shutdown: 3).
    #[arg(long)]
    queues: Option<usize>,
    /// Allocation strategy, any name of the allocation crate (AVG,
    /// AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG, MACHINE_ROOM,
    /// MACHINE_ROOM_NEARBY[-X], STICKY[-k]).
    #[arg(long, default_value = "AVG", value_parser = parse_strategy)]
    strategy: String,
    /// Network semantics: ordered (per connection, as TCP), unordered,
    /// duplicating.
    #[arg(long, default_value = "ordered", value_parser = parse_network)]
    network: NetworkKind,
    /// Consumers (the last ones) that join during the run; the others start
    /// registered and balanced (default 1, a scale-out; crash, route-change
    /// and graceful-shutdown: 0; --joins equal to --consumers: a cold start).
    #[arg(long)]
    joins: Option<usize>,
    /// Consumers (the first ones) that may crash (crash: 1).
    #[arg(long)]
    crashes: Option<usize>,
    /// Consumers (the last ones) that may shut down gracefully
    /// (graceful-shutdown: 1).
    #[arg(long)]
    leaves: Option<usize>,
    /// Route changes, each adding one queue (route-change: 1).
    #[arg(long)]
    route_changes: Option<usize>,
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
    /// Instead of checking, serve Stateright's explorer on ADDR (such as
    /// localhost:3000) to step through the model; append a printed explorer
    /// path to its URL (http://ADDR/#/steps/0/3/...). Runs until killed.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["json", "bfs", "simulate"])]
    explore: Option<String>,
}

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    s.parse()
}

fn parse_network(s: &str) -> Result<NetworkKind, String> {
    s.parse()
}

/// Any name the allocation crate knows, including variants such as
/// `STICKY-2` or `MACHINE_ROOM_NEARBY-CONSISTENT_HASH`.
fn parse_strategy(s: &str) -> Result<String, String> {
    match strategy_from_name(s) {
        Ok(_) => Ok(s.to_string()),
        Err(_) => Err(format!(
            "unknown strategy '{s}', expected one of: {}",
            STRATEGY_NAMES.join(", ")
        )),
    }
}

/// Runs `rebalance check`: exit 0 when complete and every property holds,
/// 1 when a property fails, 2 on bad input, 3 when incomplete.
pub fn run(args: CheckArgs) -> ExitCode {
    let config = match build_config(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let summary = format!(
        "scenario {}, strategy {}, network {}, consumers {}, brokers {}, topics {}, queues per broker {}, joins {}, crashes {}, leaves {}, route changes {}",
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
    if let Some(addr) = &args.explore {
        return explore(config, addr, options.threads);
    }
    eprintln!("checking {summary}");
    let report = check(build_model(config), &options, print_progress);
    let mut stdout = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_string(&report)
            .map_err(std::io::Error::other)
            .and_then(|json| writeln!(stdout, "{json}"))
    } else {
        write_text(&mut stdout, &summary, &report)
    };
    if let Err(e) = written {
        eprintln!("error: cannot write the report: {e}");
    }
    ExitCode::from(report.exit_code())
}

fn explore(config: Config, addr: &str, threads: usize) -> ExitCode {
    // Stateright panics when it cannot bind, so try the address first.
    if let Err(e) = std::net::TcpListener::bind(addr) {
        eprintln!("error: cannot serve the explorer on {addr}: {e}");
        return ExitCode::from(2);
    }
    eprintln!("explorer on http://{addr}/ (Ctrl-C to stop)");
    build_model(config).checker().threads(threads).serve(addr);
    ExitCode::SUCCESS
}

fn build_config(args: &CheckArgs) -> Result<Config, String> {
    if args.threads.is_some_and(|t| t == 0 || t > 1024) {
        return Err("--threads must be 1..=1024".into());
    }
    if args.max_states == Some(0) || args.timeout == Some(0) {
        return Err("--max-states and --timeout must be positive".into());
    }
    let mut sizes = args.scenario.default_sizes();
    let set = |target: &mut usize, value: Option<usize>| {
        if let Some(v) = value {
            *target = v;
        }
    };
    set(&mut sizes.consumers, args.consumers);
    set(&mut sizes.brokers, args.brokers);
    set(&mut sizes.topics, args.topics);
    set(&mut sizes.queues, args.queues);
    set(&mut sizes.crashes, args.crashes);
    set(&mut sizes.leaves, args.leaves);
    set(&mut sizes.route_changes, args.route_changes);
    if args.joins.is_some() {
        sizes.joins = args.joins;
    }
    let strategy = strategy_from_name(&args.strategy).map_err(|e| e.to_string())?;
    Config::new(args.scenario, sizes, args.network, Arc::from(strategy)).map_err(|e| e.to_string())
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

fn write_text(out: &mut impl Write, summary: &str, report: &Report) -> std::io::Result<()> {
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
        write_trace(out, "counterexample", p)?;
    }
    Ok(())
}

fn write_trace(out: &mut impl Write, kind: &str, p: &PropertyReport) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{kind} to \"{}\" (explorer: {}):",
        p.name,
        p.explorer_path.as_deref().unwrap_or("-")
    )?;
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
