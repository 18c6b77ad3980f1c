//! `rebalance`: allocate, model-check and compare RocketMQ consumer-group
//! rebalancing.
//!
//! Exit status: 0 success; 1 a check failed (a conformance case, a model
//! property); 2 bad input (flags, case files); 3 a model check that stopped
//! before exploring everything, or a real cluster that could not be started
//! (`cluster`).

#![forbid(unsafe_code)]

use std::process::ExitCode;

/// mimalloc: faster than the C library's allocator for the checker's many
/// small states, from threads that allocate and free side by side.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

mod allocate;
mod check;
mod cluster;
mod compare;
mod conform;
mod distribution;
mod explore;
mod input;
mod render;
mod variants;

/// Allocate, model-check and compare RocketMQ consumer-group rebalancing.
#[derive(Debug, Parser)]
#[command(name = "rebalance", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an allocation strategy: on a generated group (a table of who gets
    /// what), or on conformance cases (`--cases FILE`).
    Allocate(allocate::AllocateArgs),
    /// Model-check the rebalance protocol of a scenario: every interleaving
    /// of joins, heartbeats, notifications, rebalances and faults.
    ///
    /// `--shard I/N` (and `.ci/merge-shards`, the sharded workflow) were
    /// removed: its shards overlapped almost wholly. They were replaced by
    /// the safety search's sleep sets, which take fewer transitions to the
    /// same states (`--no-reduction` to compare), and by 128-bit
    /// fingerprints for runs of billions of states (`--fingerprint-bits`).
    Check(check::CheckArgs),
    /// Run a scenario on a real RocketMQ cluster on loopback (Java 17 and
    /// Maven needed) and set its outcome beside the model's verdicts.
    Cluster(cluster::ClusterArgs),
    /// Compare every strategy on joins, leaves and queue growth: balance,
    /// queues moved against the lower bound, disagreement, time.
    Compare(compare::CompareArgs),
    /// Decide whether a real cluster's trace (`rebalance cluster`'s NDJSON)
    /// is a behaviour of the model configured by the same flags as `check`:
    /// 0 it is, 1 it is not (with the first event the model cannot
    /// explain, where the trace contradicts itself, or an allocation not
    /// the crate's: these two decided before any bound), 2 bad input (a
    /// malformed line, named with its field), 3 a search bound was hit
    /// and nothing else decided it.
    Conform(conform::ConformArgs),
    /// Serve the interactive state explorer for a model configuration (the
    /// same flags as `check`) in the browser.
    Explore(explore::ExploreArgs),
    /// List the protocol variants `--variant NAME` switches on: RocketMQ
    /// before a fix it shipped, a remedy for a finding, another client's
    /// behaviour; each with its reference, versions and demonstration.
    Variants(variants::VariantsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Allocate(args) => allocate::run(args),
        Command::Check(args) => check::run(args),
        Command::Cluster(args) => cluster::run_cluster(args),
        Command::Compare(args) => compare::run(args),
        Command::Conform(args) => conform::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Variants(args) => variants::run(args),
    }
}
