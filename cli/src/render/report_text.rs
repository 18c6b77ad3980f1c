//! The text report of `rebalance check`: the configuration in one line,
//! how the run ended, each property's verdict, and each counterexample as a
//! numbered trace with the explorer URL that opens it.

use std::io::Write;

use rocketmq_rebalance_model::{
    configuration::{Allocator, Config, Consumption, Dense, Fault, Layer, Size, Sizes},
    report::{PropertyReport, Report, Status},
};

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
    if sizes.name_servers > 1 {
        line += &format!(", name servers {}", sizes.name_servers);
    }
    if config.custom_clients() {
        let clients: Vec<String> = config
            .consumers
            .iter()
            .zip(&config.clients)
            .map(|(spec, client)| format!("{} {}", spec.name, client.label()))
            .collect();
        line += &format!(", clients {}", clients.join(" "));
    }
    if let Some(names) = config.interruptible_listeners() {
        line += &format!(", listeners stopped by an interrupt {names}");
    }
    for size in budgets(Size::Messages, false) {
        line += &shown(sizes, size);
    }
    let protocol = &config.protocol;
    for (on, words) in [
        (protocol.subscription_table, "subscription table"),
        (protocol.retry_topic, "retry topic"),
        (!protocol.notify, "no notifications"),
        (
            !protocol.heartbeat_reregisters,
            "no re-registration (a mutant)",
        ),
        (protocol.restart_stops, "restarts stop and start"),
    ] {
        if on {
            line += &format!(", {words}");
        }
    }
    if protocol.assignment != Allocator::Client {
        line += &format!(", assignment {}", protocol.assignment);
    }
    if sizes.messages > 0 && protocol.consumption == Consumption::Pop {
        line += &format!(", consumption pop, pop batch {}", sizes.pull_batch);
        if protocol.fifo {
            line += ", FIFO";
        } else if protocol.grpc_clients() {
            line += ", gRPC clients";
        }
        if protocol.pop_share > 0 {
            line += &format!(", popShareQueueNum {}", protocol.pop_share);
        }
    } else if sizes.messages > 0 {
        line += &format!(
            ", pull batch {}, commit {}, consume from {}",
            sizes.pull_batch, protocol.commit, protocol.consume_from
        );
        if protocol.pull_requests {
            line += ", pull requests";
        }
    }
    if let Some(t) = &protocol.orderly {
        line += &format!(
            ", orderly: lock renewal {}, validity {}, lease {}, unlock delay {}, batch {}, \
             pull expiry {} ticks",
            t.renew, t.validity, t.lease, t.unlock_delay, t.batch, t.pull_expiry
        );
        if t.restart_downtime > 0 {
            line += &format!(", restart downtime {} ticks", t.restart_downtime);
        }
        for size in budgets(Size::ClockDrift, true) {
            line += &shown(sizes, size);
        }
    }
    line
}

/// The budgets the summary's first part always shows.
const HEAD: [Size; 6] = [
    Size::Joins,
    Size::Crashes,
    Size::Leaves,
    Size::RouteChanges,
    Size::LostNotifications,
    Size::FailedQueries,
];

/// `extra` and every fault's budget but the head's, of orderly
/// consumption's faults or of the others, in the order `Size` declares
/// them: derived from `Fault::spec`, so that a new fault's budget is
/// shown with no edit here.
fn budgets(extra: Size, orderly: bool) -> Vec<Size> {
    let mut sizes: Vec<Size> = Fault::all()
        .filter(|f| (f.spec().layer == Layer::Orderly) == orderly)
        .flat_map(|f| f.spec().budgets.iter().copied())
        .chain([extra])
        .filter(|size| !HEAD.contains(size))
        .collect();
    sizes.sort();
    sizes.dedup();
    sizes
}

/// `, evictions 1` for a budget that is not zero, else nothing.
fn shown(sizes: &Sizes, size: Size) -> String {
    match sizes.count(size) {
        Some(value) if value > 0 => format!(", {size} {value}"),
        _ => String::new(),
    }
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

/// How the run ended, its counts and, with liveness, the graph's figures:
/// the lines between the configuration and the verdicts.
pub fn run_lines(report: &Report) -> Vec<String> {
    let mut lines = vec![
        if report.complete() {
            "complete: every reachable state visited".to_string()
        } else {
            format!("INCOMPLETE: stopped by {}", report.stopped)
        },
        format!(
            "{} states, {} unique ({:.2} generated per unique, {}), max depth {}, {:.2} s, \
             {:.0} unique states/s",
            report.states,
            report.unique_states,
            report.generated_per_unique,
            if report.reduction {
                "sleep sets"
            } else {
                "no reduction"
            },
            report.max_depth,
            report.seconds,
            report.unique_states_per_second
        ),
    ];
    lines.push(format!(
        "{}-bit fingerprints: probability that a collision hid a state {:.1e} \
         (n(n-1)/2^(b+1))",
        report.fingerprint_bits, report.collision_probability
    ));
    if let Some(l) = &report.liveness {
        lines.push(format!(
            "liveness graph: {} states, {} transitions, {} bytes/state, {:.2} s",
            l.states, l.edges, l.bytes_per_state, l.seconds
        ));
    }
    if let Some(harms) = &report.harms {
        let wait = format!(" {}", harms.stall_unit);
        // The pause's length and the lock wait need the orderly clock.
        let timed = harms.stall_unit == "ticks";
        for (name, harm, unit, _) in [
            (
                "most deliveries of one message",
                &harms.max_deliveries,
                "",
                true,
            ),
            (
                "most messages of one queue delivered twice",
                &harms.max_duplicates_per_handover,
                "",
                true,
            ),
            (
                "most messages delivered twice, all queues",
                &harms.max_duplicated_messages,
                "",
                true,
            ),
            (
                "most queues paused at once",
                &harms.max_paused_queues,
                "",
                true,
            ),
            (
                "longest stall of an owned queue",
                &harms.max_stall_ticks,
                &wait,
                true,
            ),
            (
                "longest pause of a queue",
                &harms.max_pause_ticks,
                &wait,
                timed,
            ),
            (
                "longest wait for a lock given to another",
                &harms.max_lock_wait_ticks,
                &wait,
                timed,
            ),
        ]
        .into_iter()
        .filter(|&(.., shown)| shown)
        {
            let reached = harm
                .explorer_path
                .as_ref()
                .map_or(String::new(), |path| format!(" (explorer {path})"));
            let value = if harm.unbounded {
                format!("unbounded ({}{unit} a round of its cycle)", harm.value)
            } else {
                format!("{}{unit}", harm.value)
            };
            lines.push(format!("harm: {name}: {value}{reached}"));
        }
    }
    lines
}

/// What a property's trace shows: a `counterexample` of a violated
/// property, an `example` of a found one.
pub fn trace_kind(status: Status) -> Option<&'static str> {
    match status {
        Status::Violated => Some("counterexample"),
        Status::Found => Some("example"),
        _ => None,
    }
}

/// The heading of a trace: `counterexample to "no queue stays double-owned":`.
pub fn trace_heading(kind: &str, p: &PropertyReport) -> String {
    format!("{kind} to \"{}\":", p.name)
}

/// The URL that opens `path` (`#/steps/...`) in the explorer at
/// `explorer_url`.
pub fn explorer_link(explorer_url: &str, path: &str) -> String {
    format!("{}/{path}", explorer_url.trim_end_matches('/'))
}

/// How to start the explorer that opens the report's paths: a liveness run
/// checks the model with the periodic rebalance, which `explore` adds with
/// `--liveness`.
pub fn explorer_note(report: &Report) -> &'static str {
    if report.liveness.is_some() {
        "(rebalance explore with the same model flags and --liveness)"
    } else {
        "(rebalance explore with the same model flags)"
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
    for line in run_lines(report) {
        writeln!(out, "{line}")?;
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
        writeln!(out)?;
        writeln!(out, "{}", trace_heading("counterexample", p))?;
        if let Some(path) = &p.explorer_path {
            writeln!(
                out,
                "  explorer: {}  {}",
                explorer_link(explorer_url, path),
                explorer_note(report)
            )?;
        }
        for line in p.trace.iter().flatten() {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}
