//! The documents that quote the program, kept true to it:
//!
//! - `docs/cli.md` ends with every subcommand's `--help` as the program
//!   prints it, generated from the clap definitions. When a flag changes,
//!   regenerate it with
//!   `REGENERATE_CLI_DOC=1 cargo test --release -p rocketmq-rebalance-cli --test docs_sync`;
//! - the README's trace is what `rebalance check` prints for the command
//!   above it (the run's timings aside);
//! - `docs/spec.md`'s table of faults has a row for every fault, with its
//!   budget's flag, and every scenario is named in the specification, in
//!   the scenario list of `docs/cli.md`, in `--scenario`'s help and in
//!   `docs/performance.md`;
//! - `docs/spec.md`'s versions table and `docs/fixes.md`'s catalogue are
//!   the catalogue of protocol variants.

use std::path::PathBuf;
use std::process::Command;

use rocketmq_rebalance_model::configuration::{Dense, Fault, Pick, Scenario, Size, Variant};

/// The line after which `docs/cli.md` is generated, to its end.
const GENERATED: &str = "<!-- Generated from `rebalance --help` and `rebalance SUBCOMMAND --help` by cli/tests/docs_sync.rs: do not edit below this line. -->";

fn repo_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
}

fn rebalance(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(args)
        .output()
        .expect("rebalance runs");
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
    )
}

fn help(args: &[&str]) -> String {
    let (code, text) = rebalance(args);
    assert_eq!(code, Some(0), "rebalance {args:?}");
    text
}

/// The generated part of `docs/cli.md`: the program's help, then each
/// subcommand's.
fn generated() -> String {
    let mut doc = format!("{GENERATED}\n\n## `rebalance --help`\n\n```text\n");
    doc.push_str(&help(&["--help"]));
    doc.push_str("```\n");
    for sub in subcommands() {
        doc.push_str(&format!("\n## `rebalance {sub} --help`\n\n```text\n"));
        doc.push_str(&help(&[&sub, "--help"]));
        doc.push_str("```\n");
    }
    doc
}

#[test]
fn docs_cli_md_ends_with_every_subcommands_help() {
    let path = repo_file("docs/cli.md");
    let doc = std::fs::read_to_string(&path).expect("docs/cli.md reads");
    let start = doc
        .find(GENERATED)
        .expect("docs/cli.md has the generated section's marker");
    let expected = generated();
    if std::env::var_os("REGENERATE_CLI_DOC").is_some() {
        std::fs::write(&path, format!("{}{expected}", &doc[..start])).expect("docs/cli.md writes");
        return;
    }
    assert!(
        doc[start..] == expected,
        "docs/cli.md is not the program's help: regenerate it with \
         REGENERATE_CLI_DOC=1 cargo test --release -p rocketmq-rebalance-cli --test docs_sync"
    );
}

/// The subcommands, in the order `rebalance --help` lists them (derived
/// from it, so a new subcommand is documented without a list to update).
fn subcommands() -> Vec<String> {
    help(&["--help"])
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|sub| sub != "help")
        .collect()
}

#[test]
fn every_subcommand_has_a_help_section() {
    let subs = subcommands();
    assert!(subs.len() >= 5, "{subs:?}");
    let doc = std::fs::read_to_string(repo_file("docs/cli.md")).expect("docs/cli.md reads");
    for sub in subs {
        assert!(
            doc.contains(&format!("## `rebalance {sub} --help`")),
            "{sub}"
        );
    }
}

/// The README's first fenced block after its trace heading: the command
/// (`$ rebalance ...`) and what it prints.
fn readme_trace() -> (Vec<String>, Vec<String>) {
    let readme = std::fs::read_to_string(repo_file("README.md")).expect("README.md reads");
    let section = readme
        .split("\n## What a counterexample looks like\n")
        .nth(1)
        .expect("README.md has the trace section");
    let block = section
        .split("\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```\n").next())
        .expect("the trace section has a text block");
    let mut lines = block.lines();
    let command = lines
        .next()
        .and_then(|l| l.strip_prefix("$ rebalance "))
        .expect("the block starts with the command");
    (
        command.split_whitespace().map(str::to_string).collect(),
        lines.map(str::to_string).collect(),
    )
}

/// A line of the run's statistics (`80 states, 63 unique (1.27 generated
/// per unique, sleep sets), max depth 13, 0.01 s, 12374 unique states/s`),
/// whose timings vary from run to run.
fn is_timing(line: &str) -> bool {
    line.contains(" unique states/s")
}

#[test]
fn the_readme_trace_is_what_check_prints() {
    let (args, shown) = readme_trace();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, printed) = rebalance(&args);
    assert_eq!(code, Some(1), "the README's example is a counterexample");
    let printed: Vec<&str> = printed.lines().collect();
    // The README shows the beginning of the output, perhaps cut with `...`.
    let shown: Vec<&String> = shown.iter().take_while(|l| l.as_str() != "...").collect();
    assert!(shown.len() > 10, "{shown:?}");
    for (i, line) in shown.iter().enumerate() {
        if is_timing(line) {
            assert!(is_timing(printed[i]), "line {i}: {}", printed[i]);
        } else {
            assert_eq!(line.as_str(), printed[i], "line {i} of the README's trace");
        }
    }
}

/// The rows of `docs/spec.md`'s table of faults.
fn fault_rows() -> Vec<String> {
    let spec = std::fs::read_to_string(repo_file("docs/spec.md")).expect("docs/spec.md reads");
    spec.split("\n| fault | owner | budget |\n")
        .nth(1)
        .expect("docs/spec.md has the table of faults")
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(str::to_owned)
        .collect()
}

/// Each fault has a row, by its name, that names the flag of each of its
/// budgets (the route script's are its steps, named in words).
#[test]
fn the_specs_table_of_faults_has_every_fault_and_its_flags() {
    let rows = fault_rows();
    for fault in Fault::all() {
        let name = format!("`{fault:?}`");
        let row = rows
            .iter()
            .find(|r| r.split('|').nth(1).is_some_and(|c| c.contains(&name)))
            .unwrap_or_else(|| panic!("{fault:?}: no row in docs/spec.md's table of faults"));
        if fault.spec().pick == Pick::Script {
            continue;
        }
        for size in fault.spec().budgets {
            let flag = format!("`--{}`", size.name().replace(' ', "-"));
            assert!(
                row.contains(&flag),
                "{fault:?}: {flag} not in its row: {row}"
            );
        }
    }
}

/// Each scenario is named where users look for it: the specification, the
/// list of `docs/cli.md` and the help of `--scenario`; and its default
/// check has a row in `docs/performance.md`.
#[test]
fn every_scenario_is_named_in_the_docs_and_the_help() {
    let spec = std::fs::read_to_string(repo_file("docs/spec.md")).expect("docs/spec.md reads");
    let cli = std::fs::read_to_string(repo_file("docs/cli.md")).expect("docs/cli.md reads");
    let listed = cli.split(GENERATED).next().expect("a written part");
    let performance =
        std::fs::read_to_string(repo_file("docs/performance.md")).expect("performance.md reads");
    let check = help(&["check", "--help"]);
    // The words of `--scenario`'s help (its line after the flag's).
    let help: Vec<&str> = check
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("--scenario <"))
        .nth(1)
        .expect("--scenario has a help")
        .split(|c: char| !(c.is_ascii_lowercase() || c == '-'))
        .collect();
    for scenario in Scenario::ALL {
        let name = format!("`{}`", scenario.name());
        assert!(spec.contains(&name), "{name} not in docs/spec.md");
        assert!(listed.contains(&name), "{name} not in docs/cli.md's list");
        assert!(
            performance.contains(&format!("\n| {name} ")),
            "{name}: no row in docs/performance.md"
        );
        assert!(
            help.contains(&scenario.name()),
            "{name} not in --scenario's help"
        );
    }
}

/// The spec's table of what each model step shows in a real trace
/// (trace validation) names every fault and every timer.
#[test]
fn the_trace_validation_table_names_every_fault_and_timer() {
    let spec = std::fs::read_to_string(repo_file("docs/spec.md")).expect("docs/spec.md reads");
    let table = spec
        .split("**What each step of the model shows in a trace:**")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").nth(1))
        .expect("the table");
    let name = |debug: String| -> String {
        debug
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect()
    };
    for fault in Fault::all() {
        let step = format!("`Fault({})`", name(format!("{fault:?}")));
        assert!(table.contains(&step), "{step} is not in the table");
    }
    for timer in rocketmq_rebalance_model::internals::Timer::all() {
        let step = format!("`Timeout({})`", name(format!("{timer:?}")));
        assert!(table.contains(&step), "{step} is not in the table");
    }
}

/// The rows of a table of a document that follow `header`, up to its end.
fn table_after(doc: &str, header: &str) -> Vec<String> {
    doc.split(header)
        .nth(1)
        .unwrap_or_else(|| panic!("no table headed {header:?}"))
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(str::to_owned)
        .collect()
}

/// The variant a row names in its first cell.
fn row_variant(row: &str) -> String {
    row.split('|')
        .nth(1)
        .map(|c| c.trim().trim_matches('`').to_owned())
        .unwrap_or_default()
}

/// `docs/spec.md`'s versions table is the catalogue's history: one row
/// for each historical variant with releases, with those releases.
#[test]
fn the_specs_versions_table_is_the_catalogues_history() {
    let spec = std::fs::read_to_string(repo_file("docs/spec.md")).expect("docs/spec.md reads");
    let rows = table_after(
        &spec,
        "| variant | old behaviour since | fixed in | what the older releases do |",
    );
    let mut expected: Vec<(String, String, String)> = Variant::all()
        .filter_map(|v| {
            let e = v.entry();
            e.releases.map(|r| {
                (
                    e.name.to_owned(),
                    r.since.to_string(),
                    r.fixed_in.to_string(),
                )
            })
        })
        .collect();
    let mut documented: Vec<(String, String, String)> = rows
        .iter()
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (row_variant(row), cells[2].to_owned(), cells[3].to_owned())
        })
        .collect();
    expected.sort();
    documented.sort();
    assert_eq!(documented, expected, "docs/spec.md's versions table");
}

/// `docs/fixes.md` has a row for every variant of the catalogue, with its
/// kind, its demonstration's flags and each figure it pins: a verdict's
/// property, a harm's two figures.
#[test]
fn docs_fixes_md_has_every_variant_and_its_demonstration() {
    let fixes = std::fs::read_to_string(repo_file("docs/fixes.md")).expect("docs/fixes.md reads");
    let rows = table_after(&fixes, "| variant | kind |");
    for v in Variant::all() {
        let e = v.entry();
        let row = rows
            .iter()
            .find(|r| row_variant(r) == e.name)
            .unwrap_or_else(|| panic!("{}: no row in docs/fixes.md's catalogue", e.name));
        let kind = format!("{:?}", e.kind).to_lowercase();
        let mut flags = e.demonstration.flags.join(" ");
        if e.demonstration.liveness {
            flags += " --liveness";
        }
        assert!(
            row.contains(&format!("| {kind} |")),
            "{}: kind {kind}",
            e.name
        );
        assert!(
            row.contains(&format!("`{flags}`")),
            "{}: flags `{flags}`",
            e.name
        );
        for verdict in e.demonstration.verdicts {
            assert!(
                row.contains(verdict.property),
                "{}: verdict of {}",
                e.name,
                verdict.property
            );
        }
        for harm in e.demonstration.harms {
            let figures = format!("{} {} → {}", harm.harm, harm.without, harm.with);
            assert!(row.contains(&figures), "{}: {figures}", e.name);
        }
    }
    assert_eq!(rows.len(), Variant::all().count(), "one row per variant");
}

/// Every path the fault recipe names (`docs/contributing.md`, from "### The
/// sites" to the next heading of its level or above).
fn recipe_sites() -> Vec<String> {
    let doc = std::fs::read_to_string(repo_file("docs/contributing.md")).expect("readable");
    let start = doc
        .find("### The sites")
        .expect("docs/contributing.md has the fault recipe's sites");
    let section = &doc[start + 3..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let section = &section[..section.find("\n### ").unwrap_or(section.len())];
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.ends_with(".rs") || quoted.ends_with(".md"))
        .map(str::to_owned)
        .collect()
}

/// Every Rust file under `dir`, as a path from the repository's root.
fn rust_files(dir: &str, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(repo_file(dir)).expect("a directory") {
        let name = entry.expect("an entry").file_name();
        let path = format!("{dir}/{}", name.to_string_lossy());
        if repo_file(&path).is_dir() {
            rust_files(&path, out);
        } else if path.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// Whether `text` names `variant` as a path's last segment (`Fault::Kill`,
/// `Self::Kill`), not as a prefix of another (`Fault::KillAll`).
fn names_variant(text: &str, variant: &str) -> bool {
    let needle = format!("::{variant}");
    text.match_indices(&needle).any(|(at, _)| {
        !text[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The source files a new fault must touch, found rather than listed: each
/// one that names every fault or every size (an exhaustive list, which a
/// new one joins), bounds how many faults there may be (`Fault::COUNT`), or
/// is a machine, which answers the faults of its kind (`impl Machine for`).
fn required_fault_sites() -> Vec<String> {
    let faults: Vec<String> = Fault::all().map(|f| format!("{f:?}")).collect();
    let sizes: Vec<String> = Size::all().map(|s| format!("{s:?}")).collect();
    let mut files = Vec::new();
    for dir in ["model/src", "flags/src", "cli/src", "cluster/src"] {
        rust_files(dir, &mut files);
    }
    files
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(repo_file(path)).expect("readable");
            let every = |names: &[String]| names.iter().all(|n| names_variant(&text, n));
            every(&faults)
                || every(&sizes)
                || text.contains("Fault::COUNT")
                || text.contains("impl Machine for")
        })
        .collect()
}

/// The fault recipe is complete: every site a new fault must touch is
/// named in it, and every file it names exists.
#[test]
fn the_fault_recipe_names_every_site() {
    let named = recipe_sites();
    for site in required_fault_sites() {
        assert!(
            named.contains(&site),
            "{site}: a site for a new fault (it lists every fault or size, bounds their \
             number, or answers a fault) that docs/contributing.md's recipe does not name"
        );
    }
    for site in &named {
        assert!(
            repo_file(site).exists(),
            "docs/contributing.md's recipe names {site}, which does not exist"
        );
    }
}
