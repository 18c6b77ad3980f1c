//! The comparison as a Markdown table, the output of `rebalance compare`.

use std::fmt::Write as _;

use rocketmq_rebalance_properties::compare::{ChangeSummary, Report};

/// The summary as a Markdown table, followed by the skipped strategies.
pub fn markdown(report: &Report) -> String {
    let o = &report.options;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Groups of {} consumers with {} queues, {} trials each (seed {}).\n\
         Moved/bound: queues that change owner over the fewest any balanced strategy must move,\n\
         as the mean of the trials' ratios (and total over total).\n\
         Double/nobody: queues owned twice or by no one while each old member still sees the old lists\n\
         with probability 1/2, per queue of the lower bound (mean of the trials' ratios).\n",
        list(&o.consumers),
        list(&o.queues),
        o.trials,
        o.seed
    );
    let timing = o.timing.map_or("".to_string(), |(q, c)| {
        format!(" | whole group {q}×{c} (ms)")
    });
    let _ = writeln!(
        out,
        "| strategy | balance | join moved/bound | leave moved/bound | grow moved/bound | join double/nobody | leave double/nobody | grow double/nobody{timing} |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:{}|",
        if o.timing.is_some() { "|---:" } else { "" }
    );
    for s in &report.summaries {
        let ratio = |c: &ChangeSummary| format!("{:.2} ({:.2})", c.ratio_mean, c.ratio_total);
        let dis =
            |c: &ChangeSummary| format!("{:.2} / {:.2}", c.double_per_bound, c.orphaned_per_bound);
        let time = s
            .group_millis
            .map_or(String::new(), |ms| format!(" | {ms:.1}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {}{time} |",
            s.strategy,
            s.max_balance,
            ratio(&s.join),
            ratio(&s.leave),
            ratio(&s.grow),
            dis(&s.join),
            dis(&s.leave),
            dis(&s.grow),
        );
    }
    let h = &o.harm;
    let _ = writeln!(
        out,
        "\nWhat the moved queues cost, at {} messages a second a queue, a persist every {} s and pulls of {} \
         ({:.0} messages delivered again per queue that changes owner): queues paused and messages delivered again, \
         mean per change.\n",
        h.rate,
        h.persist_interval,
        h.pull_batch,
        h.duplicates_per_handover()
    );
    let _ = writeln!(
        out,
        "| strategy | join paused | join duplicates | leave paused | leave duplicates | grow paused | grow duplicates |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for s in &report.summaries {
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.0} | {:.1} | {:.0} | {:.1} | {:.0} |",
            s.strategy,
            s.join.paused,
            s.join.duplicates,
            s.leave.paused,
            s.leave.duplicates,
            s.grow.paused,
            s.grow.duplicates
        );
    }
    if !report.skipped.is_empty() {
        let _ = writeln!(out, "\nNot compared:");
        for s in &report.skipped {
            let _ = writeln!(out, "- {}: {}", s.strategy, s.reason);
        }
    }
    out
}

fn list(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
