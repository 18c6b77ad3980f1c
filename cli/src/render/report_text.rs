//! The text report of `rebalance check`: the configuration in one line,
//! how the run ended, each property's verdict, and each counterexample as a
//! numbered trace with the explorer URL that opens it.

use std::io::Write;

use rocketmq_rebalance_model::check::{PropertyReport, Report, Status};
use rocketmq_rebalance_model::Config;

/// The configuration in one line: always the sizes of the first model, then
/// every other budget that is not zero.
pub fn summary(config: &Config) -> String {
    let sizes = &config.sizes;
    let mut line = format!(
        "scenario {}, strategy {}, network {}, consumers {}, brokers {}, topics {}, queues per broker {}, joins {}, crashes {}, leaves {}, route changes {}, lost notifications {}, failed queries {}",
        config.scenario,
        config.strategy.name(),
        config.network,
        sizes.consumers,
        sizes.brokers,
        sizes.topics,
        sizes.queues,
        sizes.joiners(),
        sizes.crashes,
        sizes.leaves,
        sizes.route_changes,
        sizes.lost_notifications,
        sizes.failed_queries,
    );
    let others = [
        ("kills", sizes.kills),
        ("expiries", sizes.expiries),
        ("broker restarts", sizes.broker_restarts),
        ("queue removals", sizes.queue_removals),
        ("broker joins", sizes.broker_joins),
        ("broker leaves", sizes.broker_leaves),
        ("name server partitions", sizes.name_server_partitions),
        ("stale routes", sizes.stale_routes),
    ];
    if sizes.name_servers > 1 {
        line += &format!(", name servers {}", sizes.name_servers);
    }
    for (name, value) in others.into_iter().filter(|(_, v)| *v > 0) {
        line += &format!(", {name} {value}");
    }
    line
}

/// The verdict in the report's words.
pub fn status_word(status: Status) -> &'static str {
    match status {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Found => "found",
        Status::NotFound => "NOT FOUND",
        Status::Unknown => "unknown",
    }
}

/// Writes the whole text report.
pub fn write_report(
    out: &mut impl Write,
    summary: &str,
    report: &Report,
    explorer_url: &str,
) -> std::io::Result<()> {
    writeln!(out, "{summary}")?;
    if report.complete() {
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
            p.expectation.to_string(),
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
