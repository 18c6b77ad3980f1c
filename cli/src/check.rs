//! `rebalance check`: model-checks the rebalance protocol for a scenario.

use clap::Args;
use rocketmq_rebalance_model::{
    check_model, checked_model, default_memory, report::FingerprintBits, serve_check, CheckOptions,
    Progress, Search, Workers,
};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::distribution::{self, LocalProcesses, Placement};
use crate::input::bad_input;
use crate::render::html::html_report;
use crate::render::report_text::{summary, write_report};
use rocketmq_rebalance_flags::ModelArgs;

/// Flags of `rebalance check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Checker threads, which also build the liveness graph and, from two,
    /// search it on two (default: available cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Breadth-first search, the exhaustive search and the default (the
    /// project's own, with sleep sets; `--dfs`, Stateright's depth-first
    /// search, was replaced by it).
    #[arg(long, group = "search")]
    bfs: bool,
    /// Take every enabled action, without sleep sets: the same states and
    /// verdicts, more states generated (to compare the reduction with).
    #[arg(long)]
    no_reduction: bool,
    /// Bits of the safety search's fingerprints, 64 or 128: 128 costs 8
    /// bytes more a state and makes a collision (two states taken for one)
    /// negligible past billions of states. Every report gives the
    /// estimated probability that a collision hid a state.
    #[arg(long, value_name = "BITS", default_value_t = 64)]
    fingerprint_bits: u32,
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
    /// Stop once this process's resident memory reaches GB gigabytes (the
    /// run is then incomplete, exit 3) rather than be killed for want of
    /// memory. Default: nine tenths of the machine's memory (Linux's
    /// MemTotal; none where it cannot be read). Read every 50 ms by each
    /// searching thread; the distributed search (--workers, --hosts,
    /// --local-processes) does not watch it.
    #[arg(long, value_name = "GB")]
    memory: Option<f64>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Also check liveness under fairness (weak for deliveries and timers,
    /// strong for the random pick of a broker to ask and for the orderly
    /// clock's ticks): every fair execution reaches a converged state and
    /// stays there. Models the periodic
    /// rebalance (so the state space is larger) and reports the
    /// property "converges and stays converged" with expectation
    /// `eventually`; a violation is a lasso (steps to a cycle, then the
    /// cycle). An exhaustive run then explores once: the liveness graph,
    /// built breadth-first, also decides the safety properties (shortest
    /// counterexamples and examples; `max_depth` is the breadth-first
    /// depth).
    #[arg(long)]
    liveness: bool,
    /// With messages: also check the property "no stall past the bound",
    /// violated when a queue with a message waits more than K ticks of the
    /// orderly clock (without it, K steps of its owner) while a live
    /// consumer owns it; the counterexample is the longest stall
    /// (`harms.max_stall_ticks`).
    #[arg(long, value_name = "K")]
    max_stall: Option<usize>,
    /// Where `rebalance explore` (run with the same model flags) serves: each
    /// counterexample is printed with the URL that opens its path there.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:3000")]
    explorer_url: String,
    /// Also write the report as one self-contained HTML page to FILE (no
    /// network access needed: open it from disk, a CI artifact or a static
    /// host): the verdicts, and every counterexample and example step by
    /// step with each state's ownership picture and views, the sequence
    /// diagram and a lasso's cycle marked. An unwritable FILE is refused
    /// before the check runs; writing it never changes the exit status.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Run the safety search on timely dataflow with N worker threads in
    /// this process (and in each process of --hosts): every worker owns
    /// the states whose fingerprints hash to it. The same states, verdicts
    /// and counterexamples as the default search.
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Run the safety search across processes, on one machine or several:
    /// FILE lists one `host:port` a line, the same file for every process,
    /// each started with its own --process. The first process prints the
    /// report and sets the exit status; the others print nothing and exit
    /// 0 once the search ends (2 for bad input, 3 when they cannot
    /// connect).
    #[arg(long, value_name = "FILE", requires = "process")]
    hosts: Option<PathBuf>,
    /// This process's line in --hosts, from 0.
    #[arg(long, value_name = "I", requires = "hosts")]
    process: Option<usize>,
    /// Start N processes of this check on loopback (this one the first,
    /// on free ports it picks): --hosts on one machine, for tests and
    /// demonstrations.
    #[arg(long, value_name = "N", conflicts_with = "hosts")]
    local_processes: Option<usize>,
}

/// Runs `rebalance check`: exit 0 when complete and every property holds,
/// 1 when a property fails, 2 on bad input, 3 when incomplete.
pub fn run(args: CheckArgs) -> ExitCode {
    if args.threads.is_some_and(|t| t == 0 || t > 1024) {
        return bad_input("--threads must be 1..=1024");
    }
    let fingerprint_bits = match args.fingerprint_bits {
        64 => FingerprintBits::B64,
        128 => FingerprintBits::B128,
        _ => return bad_input("--fingerprint-bits must be 64 or 128"),
    };
    if args.max_states == Some(0) || args.timeout == Some(0) {
        return bad_input("--max-states and --timeout must be positive");
    }
    let memory = match args.memory {
        None => default_memory(),
        Some(gb) if gb.is_finite() && gb > 0.0 && gb < 1e9 => Some((gb * 1e9) as u64),
        Some(_) => return bad_input("--memory must be a positive number of gigabytes"),
    };
    let distributed =
        args.workers.is_some() || args.hosts.is_some() || args.local_processes.is_some();
    if distributed && (args.liveness || args.simulate.is_some()) {
        return bad_input(
            "--workers, --hosts and --local-processes run the safety search: \
             not with --liveness (its graph is built in one process) or --simulate",
        );
    }
    let placement = Placement {
        workers: args.workers,
        hosts: args.hosts.as_deref(),
        process: args.process,
        local_processes: args.local_processes,
    };
    let (workers, local_hosts) = match distribution::workers(&placement) {
        Ok(Some((workers, local_hosts))) => (Some(workers), local_hosts),
        Ok(None) => (None, None),
        Err(message) => return bad_input(message),
    };
    let first_process = !matches!(&workers, Some(Workers::Cluster { process, .. }) if *process > 0);
    let config = match args.model.build_config() {
        Ok(config) => config,
        Err(message) => return bad_input(message),
    };
    if args.max_stall.is_some() && config.sizes.messages == 0 {
        return bad_input("--max-stall measures stalls of messages: it needs --messages N");
    }
    let summary = summary(&config);
    // Created now, so that a bad path is refused before a long check.
    let html = match args.html.as_ref().filter(|_| first_process) {
        Some(path) => match File::create(path) {
            Ok(file) => Some((path, file)),
            Err(e) => return bad_input(format!("cannot write --html {}: {e}", path.display())),
        },
        None => None,
    };
    let options = CheckOptions {
        search: match args.simulate {
            Some(seed) => Search::Simulate(seed),
            None => Search::Bfs,
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
        memory,
        progress_every: Duration::from_secs(3),
        liveness: args.liveness,
        reduction: !args.no_reduction,
        fingerprint_bits,
        workers: workers.clone(),
        max_stall: args.max_stall,
        harms: true,
    };
    let model = checked_model(config, &options);
    if let Some(Workers::Cluster { process, .. }) = &workers {
        if *process > 0 {
            return match serve_check(model, &options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(message) => {
                    eprintln!("error: process {process} of the distributed check: {message}");
                    ExitCode::from(3)
                }
            };
        }
    }
    let _local_processes = match (local_hosts, args.local_processes) {
        (Some(hosts), Some(n)) => match LocalProcesses::start(hosts, n) {
            Ok(started) => Some(started),
            Err(message) => {
                eprintln!("error: cannot start the local processes: {message}");
                return ExitCode::from(3);
            }
        },
        _ => None,
    };
    eprintln!("checking {summary}");
    let report = check_model(model.clone(), &options, print_progress);
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
    if let Some((path, mut file)) = html {
        let started = Instant::now();
        let page = html_report(&report, &model, &args.explorer_url);
        match file.write_all(page.as_bytes()) {
            Ok(()) => eprintln!(
                "html report: {} ({} bytes, {:.1} ms)",
                path.display(),
                page.len(),
                started.elapsed().as_secs_f64() * 1000.0
            ),
            Err(e) => eprintln!(
                "error: cannot write the HTML report {}: {e}",
                path.display()
            ),
        }
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
