//! What the flags crate's model tests share: a complete check of the model
//! a list of flags describes. Each test crate uses part of it.
#![allow(dead_code)]

use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{check, report::Report, CheckOptions};

/// The check, on two threads, of the model `flags` describe, which must
/// complete.
pub fn complete_report(flags: &[&str]) -> Report {
    complete(flags, true)
}

/// [`complete_report`] for the verdicts only: no harms measured
/// ([`CheckOptions::harms`]), with messages most of a check's time.
pub fn verdicts(flags: &[&str]) -> Report {
    complete(flags, false)
}

fn complete(flags: &[&str], harms: bool) -> Report {
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let config = ModelArgs::config_from(&flags).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
    let options = CheckOptions {
        threads: 2,
        harms,
        ..CheckOptions::default()
    };
    let report = check(config, &options, |_| {});
    assert!(report.complete(), "{flags:?}");
    report
}
