//! Model-check your own allocation strategy, as you would from `cargo test`
//! in your CI: implement `AllocateStrategy`, hand it to the model, and
//! require its guarantees (no queue stays double-owned, the group converges)
//! on the scenarios you care about.
//!
//! Run with `cargo run --release -p rocketmq-rebalance-model --example check_custom_strategy`.

use rocketmq_rebalance::{AllocateError, AllocateStrategy, MessageQueue};
use rocketmq_rebalance_model::{
    check_strategy,
    configuration::Scenario,
    report::{Expectation, FULL_CONVERGENCE},
    CheckOptions,
};
use std::process::ExitCode;
use std::sync::Arc;

/// Broker affinity: consumer k (in sorted order) takes every queue of the
/// k-th broker, wrapping around; consumers beyond the broker count idle.
#[derive(Debug)]
struct BrokerAffinity;

impl AllocateStrategy for BrokerAffinity {
    fn name(&self) -> &str {
        "BROKER_AFFINITY"
    }

    fn allocate<'a>(
        &'a self,
        _group: &str,
        current: &str,
        queues: &'a [MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
        if current.is_empty() {
            return Err(AllocateError::EmptyCurrentId);
        }
        if queues.is_empty() {
            return Err(AllocateError::EmptyQueues);
        }
        if consumers.is_empty() {
            return Err(AllocateError::EmptyConsumers);
        }
        let Some(me) = consumers.iter().position(|c| c == current) else {
            return Ok(Vec::new());
        };
        let mut brokers: Vec<&str> = queues.iter().map(|q| q.broker_name.as_str()).collect();
        brokers.dedup();
        Ok(queues
            .iter()
            .filter(|q| {
                let broker = brokers.iter().position(|b| *b == q.broker_name);
                broker.is_some_and(|b| b % consumers.len() == me)
            })
            .collect())
    }
}

fn main() -> ExitCode {
    let strategy: Arc<dyn AllocateStrategy> = Arc::new(BrokerAffinity);
    let options = CheckOptions {
        threads: 2,
        ..CheckOptions::default()
    };
    let mut all_pass = true;
    for scenario in [
        Scenario::Healthy,
        Scenario::Crash,
        Scenario::GracefulShutdown,
    ] {
        let report = match check_strategy(Arc::clone(&strategy), scenario, None, &options) {
            Ok(report) => report,
            Err(e) => {
                eprintln!("{scenario}: {e}");
                return ExitCode::from(2);
            }
        };
        println!(
            "{scenario}: {} ({} unique states, {:.2} s)",
            if report.guarantees_hold() {
                "guarantees hold"
            } else {
                "FAILS"
            },
            report.unique_states,
            report.seconds
        );
        for p in report.properties.iter().filter(|p| p.status.failed()) {
            // A hazard the strategy never produces is no failure.
            if p.expectation == Expectation::Sometimes && p.name != FULL_CONVERGENCE {
                println!("  never happens: {}", p.name);
                continue;
            }
            println!("  {:?}: {}", p.status, p.name);
            for line in p.trace.iter().flatten() {
                println!("    {line}");
            }
        }
        all_pass &= report.guarantees_hold();
    }
    if all_pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
