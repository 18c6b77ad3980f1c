//! `rebalance variants`: the catalogue of protocol variants that `--variant`
//! switches on, as text or JSON.

use std::process::ExitCode;

use rocketmq_rebalance_model::configuration::{Dense, Variant};
use rocketmq_rebalance_model::variants::Entry;

/// The catalogue's flags.
#[derive(Debug, clap::Args)]
pub struct VariantsArgs {
    /// Print the catalogue as one JSON array: each entry's name, kind
    /// (historical, remedy, client), reference, versions, releases (a
    /// historical variant's `since` and `fixed_in`, which --rocketmq reads),
    /// changes, the finding it answers, what it needs (nothing, orderly,
    /// messages) and its demonstration (the model flags, each affected
    /// property's verdict and each affected harm's figure without and with
    /// it).
    #[arg(long)]
    json: bool,
}

/// Prints the catalogue; always exit 0.
pub fn run(args: VariantsArgs) -> ExitCode {
    let entries: Vec<Entry> = Variant::all().map(Variant::entry).collect();
    if args.json {
        match serde_json::to_string_pretty(&entries) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", text(&entries));
    }
    ExitCode::SUCCESS
}

/// One paragraph an entry: what `--variant NAME` changes, and where it
/// shows.
fn text(entries: &[Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        out += &format!("{} ({}; {})\n", e.name, e.kind.name(), e.versions);
        out += &format!("  {}\n", e.changes);
        out += &format!("  reference: {}\n", e.reference);
        if let Some(finding) = e.answers {
            out += &format!("  answers: {finding}\n");
        }
        out += &format!(
            "  shown by: rebalance check {}{} --variant {}\n",
            e.demonstration.flags.join(" "),
            if e.demonstration.liveness {
                " --liveness"
            } else {
                ""
            },
            e.name
        );
        if let Some(r) = e.releases {
            out += &format!(
                "  releases: {} up to {} (--rocketmq selects it)\n",
                r.since, r.fixed_in
            );
        }
        for v in e.demonstration.verdicts {
            out += &format!("    {}: {} -> {}\n", v.property, v.without, v.with);
        }
        for h in e.demonstration.harms {
            out += &format!("    harm {}: {} -> {}\n", h.harm, h.without, h.with);
        }
    }
    out
}
