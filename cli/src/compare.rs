//! `rebalance compare`: every strategy against the same joins, leaves and
//! queue growth; a table, JSON, or an SVG picture. The measuring lives in
//! the properties crate (`rocketmq_rebalance_properties::compare`), the
//! pictures in [`crate::render`].

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rocketmq_rebalance::StrategySpec;
use rocketmq_rebalance_properties::compare::{
    compare, validate, CompareError, HarmParameters, Options,
};

use crate::input::bad_input;
use crate::render::compare_svg::{svg, Metric};
use crate::render::compare_table::markdown;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Group sizes before the change, comma-separated (each at least 2).
    #[arg(long, value_delimiter = ',', default_values_t = Options::default().consumers)]
    consumers: Vec<usize>,

    /// Queue counts before growth, comma-separated (each at least 1).
    #[arg(long, value_delimiter = ',', default_values_t = Options::default().queues)]
    queues: Vec<usize>,

    /// Random groups per (consumers, queues) pair.
    #[arg(long, default_value_t = Options::default().trials)]
    trials: usize,

    /// Seed of the random client ids, topics and views.
    #[arg(long, default_value_t = Options::default().seed)]
    seed: u64,

    /// Strategies to compare, comma-separated (default: every one that makes
    /// sense without configuration).
    #[arg(long, value_delimiter = ',')]
    strategies: Option<Vec<StrategySpec>>,

    /// Extra STICKY rows with these load windows (STICKY-k), comma-separated;
    /// `--slack ''` or `--slack none` for none.
    #[arg(long, default_value = "2,3,4,6", value_parser = parse_slacks)]
    slack: Slacks,

    /// Time one whole-group call at QUEUESxCONSUMERS.
    #[arg(long, value_name = "QxN", default_value = "100000x10000", value_parser = parse_size)]
    time_at: (usize, usize),

    /// Do not time the strategies.
    #[arg(long)]
    no_timing: bool,

    /// Print the whole report as JSON instead of a table.
    #[arg(long)]
    json: bool,

    /// Also write an SVG picture of queues moved on a join against group
    /// size (at the largest queue count) to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,

    /// Also write an SVG picture of the messages expected to be delivered
    /// again on a join against group size to FILE.
    #[arg(long, value_name = "FILE")]
    harms_svg: Option<PathBuf>,

    /// Messages a second each queue receives (for the harms).
    #[arg(long, default_value_t = HarmParameters::default().rate)]
    rate: f64,

    /// Seconds between two offset persists (persistConsumerOffsetInterval).
    #[arg(long, default_value_t = HarmParameters::default().persist_interval)]
    persist_interval: f64,

    /// Messages a pull fetches (pullBatchSize).
    #[arg(long, default_value_t = HarmParameters::default().pull_batch)]
    pull_batch: usize,
}

/// The `--slack` list as one value, so that an empty list can be given.
#[derive(Debug, Clone)]
struct Slacks(Vec<usize>);

fn parse_slacks(text: &str) -> Result<Slacks, String> {
    if text.trim().is_empty() || text.trim() == "none" {
        return Ok(Slacks(Vec::new()));
    }
    text.split(',')
        .map(|k| {
            k.trim()
                .parse()
                .map_err(|_| format!("expected load windows such as 2,3,4, got {text:?}"))
        })
        .collect::<Result<_, _>>()
        .map(Slacks)
}

fn parse_size(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("expected QUEUESxCONSUMERS such as 100000x10000, got {text:?}");
    let (q, c) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        q.trim().parse().map_err(|_| bad())?,
        c.trim().parse().map_err(|_| bad())?,
    ))
}

/// A comparison error in the flags' terms.
fn describe(error: &CompareError) -> String {
    let flag = match error {
        CompareError::GroupTooSmall => "--consumers",
        CompareError::NoQueues => "--queues",
        CompareError::NoTrials => "--trials",
        CompareError::ZeroSlack => "--slack",
        CompareError::EmptyTiming => "--time-at",
        CompareError::BadHarmParameter => "--rate, --persist-interval",
        _ => return error.to_string(),
    };
    format!("{flag}: {error}")
}

/// Runs `rebalance compare`: exit 0, or 2 on bad input (found before any
/// measuring, an unwritable `--svg` path included).
pub fn run(args: CompareArgs) -> ExitCode {
    let options = Options {
        consumers: args.consumers,
        queues: args.queues,
        trials: args.trials,
        seed: args.seed,
        strategies: args.strategies,
        slacks: args.slack.0,
        timing: (!args.no_timing).then_some(args.time_at),
        harm: HarmParameters {
            rate: args.rate,
            persist_interval: args.persist_interval,
            pull_batch: args.pull_batch,
        },
    };
    if let Err(error) = validate(&options) {
        return bad_input(describe(&error));
    }
    // The picture files are opened before any measuring, so that a path
    // that cannot be written is refused at once.
    let mut pictures = Vec::new();
    for (path, metric) in [
        (&args.svg, Metric::Moved),
        (&args.harms_svg, Metric::Duplicates),
    ] {
        if let Some(path) = path {
            match File::create(path) {
                Ok(file) => pictures.push((path, file, metric)),
                Err(e) => return bad_input(format!("cannot write {}: {e}", path.display())),
            }
        }
    }
    let report = match compare(&options) {
        Ok(report) => report,
        Err(error) => return bad_input(describe(&error)),
    };
    for (path, file, metric) in &mut pictures {
        if let Err(e) = file.write_all(svg(&report, *metric).as_bytes()) {
            return bad_input(format!("cannot write {}: {e}", path.display()));
        }
    }
    let text = if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => text + "\n",
            Err(e) => return bad_input(format!("cannot encode the report: {e}")),
        }
    } else {
        markdown(&report)
    };
    if let Err(e) = std::io::stdout().lock().write_all(text.as_bytes()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return bad_input(format!("cannot write: {e}"));
        }
    }
    ExitCode::SUCCESS
}
