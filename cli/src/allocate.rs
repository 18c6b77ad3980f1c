//! `rebalance allocate`: one strategy on a generated group, or on conformance
//! cases.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rocketmq_rebalance::conformance::{CallResult, Case};
use rocketmq_rebalance::strategy::ParameterError;
use rocketmq_rebalance::{rebalance_allocate_group, workload, MessageQueue, StrategySpec};
use serde::Serialize;

use crate::input::{bad_input, EXIT_FAILED};

#[derive(Debug, Args)]
pub struct AllocateArgs {
    /// Read conformance cases (JSON lines) from FILE, `-` for stdin, and
    /// write each case back with `results` filled in by this crate.
    #[arg(long, value_name = "FILE")]
    cases: Option<PathBuf>,

    /// With --cases: compare with the expected results instead, print the
    /// failures and end with `N passed, M failed` (cases); exit 1 if M > 0.
    #[arg(long, requires = "cases")]
    check: bool,

    /// Strategy name: AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG,
    /// MACHINE_ROOM, MACHINE_ROOM_NEARBY[-INNER], STICKY[-SLACK].
    #[arg(long, default_value = "AVG", conflicts_with = "cases")]
    strategy: StrategySpec,

    /// Queues per broker.
    #[arg(long, default_value_t = 8, conflicts_with = "cases")]
    queues: usize,

    /// Number of brokers (named broker-a, broker-b, ...).
    #[arg(long, default_value_t = 2, conflicts_with = "cases")]
    brokers: usize,

    /// Number of consumers (ids 10.0.0.0@10000, 10.0.0.1@10001, ...).
    #[arg(long, default_value_t = 3, conflicts_with = "cases")]
    consumers: usize,

    /// Topic name.
    #[arg(long, default_value = "TopicTest", conflicts_with = "cases")]
    topic: String,

    /// CONSISTENT_HASH (also inside MACHINE_ROOM_NEARBY): virtual nodes per
    /// consumer [default: 10]. Refused for other strategies.
    #[arg(long, conflicts_with = "cases")]
    virtual_nodes: Option<usize>,

    /// MACHINE_ROOM: the consumers' machine rooms, comma-separated. Refused
    /// for other strategies.
    #[arg(long, value_delimiter = ',', conflicts_with = "cases")]
    consumer_idcs: Option<Vec<String>>,

    /// Print the assignment as JSON instead of a table.
    #[arg(long, conflicts_with = "cases")]
    json: bool,
}

pub fn run(args: AllocateArgs) -> ExitCode {
    match &args.cases {
        Some(path) => run_cases(path, args.check),
        None => run_table(&args),
    }
}

/// The strategy with the parameters the flags give it.
fn strategy_spec(args: &AllocateArgs) -> Result<StrategySpec, ParameterError> {
    let mut spec = args.strategy.clone();
    if let Some(nodes) = args.virtual_nodes {
        spec = spec.with_virtual_nodes(nodes)?;
    }
    if let Some(rooms) = &args.consumer_idcs {
        spec = spec.with_consumer_rooms(rooms.iter().cloned())?;
    }
    Ok(spec)
}

/// A parameter error in the flags' terms.
fn describe(error: &ParameterError) -> String {
    let flag = match error.parameter {
        "virtual_nodes" => "--virtual-nodes",
        "consumer_idcs" => "--consumer-idcs",
        other => other,
    };
    format!("{flag} does not apply to strategy {}", error.strategy)
}

#[derive(Serialize)]
struct Share<'a> {
    consumer: &'a str,
    queues: &'a [MessageQueue],
}

#[derive(Serialize)]
struct Assignment<'a> {
    strategy: &'a str,
    topic: &'a str,
    brokers: usize,
    queues_per_broker: usize,
    shares: Vec<Share<'a>>,
}

fn run_table(args: &AllocateArgs) -> ExitCode {
    let strategy = match strategy_spec(args) {
        Ok(spec) => spec.build(),
        Err(error) => return bad_input(describe(&error)),
    };
    let queues = workload::queues(&args.topic, args.brokers, args.queues);
    let consumers = workload::client_ids(args.consumers);
    let shares = match rebalance_allocate_group(strategy.as_ref(), "group", &queues, &consumers) {
        Ok(shares) => shares,
        Err(error) => return bad_input(format!("the strategy refuses this group: {error}")),
    };
    let assignment = Assignment {
        strategy: strategy.name(),
        topic: &args.topic,
        brokers: args.brokers,
        queues_per_broker: args.queues,
        shares: shares
            .iter()
            .map(|(consumer, queues)| Share { consumer, queues })
            .collect(),
    };
    let mut out = io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer(&mut out, &assignment)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        write_table(&mut out, &assignment, queues.len())
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => write_failed(error),
    }
}

/// A reader that went away (`| head`) is no error; anything else is.
fn write_failed(error: io::Error) -> ExitCode {
    if error.kind() == io::ErrorKind::BrokenPipe {
        ExitCode::SUCCESS
    } else {
        bad_input(format!("cannot write: {error}"))
    }
}

fn write_table(out: &mut impl Write, a: &Assignment<'_>, total: usize) -> io::Result<()> {
    writeln!(
        out,
        "{} · topic {} · {} broker(s) × {} queues = {} · {} consumers",
        a.strategy,
        a.topic,
        a.brokers,
        a.queues_per_broker,
        total,
        a.shares.len()
    )?;
    let width = a
        .shares
        .iter()
        .map(|s| s.consumer.len())
        .max()
        .unwrap_or(8)
        .max(8);
    writeln!(out, "{:width$}  {:>5}  queues", "consumer", "count")?;
    for share in &a.shares {
        writeln!(
            out,
            "{:width$}  {:>5}  {}",
            share.consumer,
            share.queues.len(),
            compact_queues(share.queues)
        )?;
    }
    Ok(())
}

/// `broker-a:0-2,5 broker-b:1`: each broker's queue ids, runs collapsed.
fn compact_queues(queues: &[MessageQueue]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < queues.len() {
        let broker = &queues[i].broker_name;
        let mut ids = Vec::new();
        while i < queues.len() && &queues[i].broker_name == broker {
            ids.push(queues[i].queue_id);
            i += 1;
        }
        parts.push(format!("{broker}:{}", runs(&ids)));
    }
    parts.join(" ")
}

fn runs(ids: &[i32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j].wrapping_add(1) {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ids[i], ids[j])
        } else {
            ids[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn run_cases(path: &PathBuf, check: bool) -> ExitCode {
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        match File::open(path) {
            Ok(file) => Box::new(BufReader::new(file)),
            Err(error) => return bad_input(format!("cannot read {}: {error}", path.display())),
        }
    };
    let mut out = io::stdout().lock();
    let (mut passed, mut failed, mut calls) = (0usize, 0usize, 0usize);
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        let line = match line {
            Ok(line) => line,
            Err(error) => return bad_input(format!("line {number}: {error}")),
        };
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = match serde_json::from_str(&line) {
            Ok(case) => case,
            Err(error) => return bad_input(format!("line {number}: {error}")),
        };
        let ours = match case.run() {
            Ok(ours) => ours,
            Err(error) => return bad_input(format!("line {number}: {error}")),
        };
        calls += ours.len();
        let written = if check {
            let failures = describe_failures(number, &case, &ours);
            if failures.is_empty() {
                passed += 1;
            } else {
                failed += 1;
            }
            failures.iter().try_for_each(|f| writeln!(out, "{f}"))
        } else {
            let filled = Case {
                results: ours,
                ..case
            };
            serde_json::to_writer(&mut out, &filled)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
        };
        if let Err(error) = written {
            return write_failed(error);
        }
    }
    if !check {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(out, "{calls} allocate calls");
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

fn describe_failures(number: usize, case: &Case, ours: &[CallResult]) -> Vec<String> {
    let mut failures: Vec<String> = case
        .results
        .iter()
        .zip(ours)
        .filter(|(expected, actual)| !expected.agrees_with(actual))
        .map(|(expected, actual)| {
            format!(
                "FAIL line {number} ({}, sort={}) current {:?}: expected {}, got {}",
                case.strategy,
                case.sort,
                expected.current,
                outcome(expected),
                outcome(actual)
            )
        })
        .collect();
    if case.results.len() != ours.len() {
        failures.push(format!("FAIL line {number}: result count differs"));
    }
    failures
}

fn outcome(result: &CallResult) -> String {
    match (&result.error, &result.queues) {
        (Some(error), _) => format!("error {error:?}"),
        (None, Some(queues)) => format!("{queues:?}"),
        (None, None) => "[]".to_string(),
    }
}
