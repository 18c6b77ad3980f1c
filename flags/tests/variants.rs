//! The catalogue of protocol variants is a regression suite: every entry's
//! demonstration is checked both ways, on its own flags and with its
//! variant added, and each verdict it lists must come out. A model change
//! that hides a historical bug, or that a remedy no longer closes, fails
//! here under the variant's name.

use std::collections::HashMap;

use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::variants::Demonstration;
use rocketmq_rebalance_model::{
    check,
    configuration::{Dense, Release, Variant, VariantKind},
    report::{Report, Status},
    CheckOptions,
};

/// The report of `flags`, bounded as the demonstration says.
fn report(flags: &[String], demonstration: &Demonstration) -> Report {
    let config = ModelArgs::config_from(flags).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
    let options = CheckOptions {
        threads: 2,
        max_states: demonstration.test_bound,
        liveness: demonstration.liveness,
        ..CheckOptions::default()
    };
    check(config, &options, |_| {})
}

/// Whether `status` is what the catalogue says, in its words; a bounded
/// run may leave a `holds` or `not-found` undecided, never contradict it.
fn agrees(status: Status, word: &str, bounded: bool) -> bool {
    let decided = match status {
        Status::Holds => "holds",
        Status::Violated => "violated",
        Status::Found => "found",
        Status::NotFound => "not-found",
        Status::Unknown => return bounded && matches!(word, "holds" | "not-found"),
    };
    decided == word
}

#[test]
fn every_demonstration_shows_its_verdicts_both_ways() {
    // Demonstrations share flags, and an entry that is another's switch
    // shares its runs: each distinct run is checked once.
    let mut runs: HashMap<Vec<String>, Report> = HashMap::new();
    for variant in Variant::all() {
        let entry = variant.entry();
        let demo = entry.demonstration;
        let without: Vec<String> = demo.flags.iter().map(|f| f.to_string()).collect();
        let mut with = without.clone();
        with.extend(["--variant".to_owned(), variant.switch().name().to_owned()]);
        let bounded = demo.test_bound.is_some();
        for flags in [&without, &with] {
            if !runs.contains_key(flags) {
                runs.insert(flags.clone(), report(flags, &demo));
            }
        }
        let (plain, changed) = (&runs[&without], &runs[&with]);
        for v in demo.verdicts {
            let status = |r: &Report| {
                r.property(v.property)
                    .map(|p| p.status)
                    .unwrap_or_else(|| panic!("{}: no property {:?}", entry.name, v.property))
            };
            assert!(
                agrees(status(plain), v.without, bounded),
                "{}: {} is {:?} without it, the catalogue says {}",
                entry.name,
                v.property,
                status(plain),
                v.without
            );
            assert!(
                agrees(status(changed), v.with, bounded),
                "{}: {} is {:?} with it, the catalogue says {}",
                entry.name,
                v.property,
                status(changed),
                v.with
            );
            assert_ne!(
                v.without, v.with,
                "{}: a demonstration shows a change",
                entry.name
            );
        }
        for h in demo.harms {
            let figure = |r: &Report| {
                let harms = r.harms.as_ref().unwrap_or_else(|| {
                    panic!("{}: no harms measured ({:?})", entry.name, r.stopped)
                });
                let harm = harms
                    .get(h.harm)
                    .unwrap_or_else(|| panic!("{}: no harm {:?}", entry.name, h.harm));
                assert!(!harm.unbounded, "{}: {} unbounded", entry.name, h.harm);
                harm.value
            };
            assert_eq!(
                (figure(plain), figure(changed)),
                (h.without, h.with),
                "{}: {} without and with it",
                entry.name,
                h.harm
            );
        }
        assert!(
            !demo.verdicts.is_empty() || !demo.harms.is_empty(),
            "{}: a demonstration shows something",
            entry.name
        );
    }
}

/// A historical variant shows its bug (a property violated with it), and
/// a remedy closes its finding (violated without it).
#[test]
fn historical_variants_break_and_remedies_mend() {
    for variant in Variant::all() {
        let entry = variant.entry();
        let demo = entry.demonstration;
        let breaks = demo
            .verdicts
            .iter()
            .any(|v| v.with == "violated" || v.with == "found" && v.without == "not-found")
            || demo.harms.iter().any(|h| h.with > h.without);
        let mends = demo
            .verdicts
            .iter()
            .any(|v| v.without == "violated" || v.without == "found" && v.with == "not-found")
            || demo.harms.iter().any(|h| h.with < h.without);
        match entry.kind {
            VariantKind::Historical | VariantKind::Client => assert!(breaks, "{}", entry.name),
            VariantKind::Remedy => {
                assert!(mends, "{}", entry.name);
                assert!(entry.answers.is_some(), "{}: which finding", entry.name);
            }
        }
        // Only a historical variant belongs to releases of RocketMQ.
        assert_eq!(
            entry.releases.is_some(),
            entry.kind == VariantKind::Historical,
            "{}: releases",
            entry.name
        );
    }
}

#[test]
fn unknown_and_incompatible_variants_are_refused() {
    let flags = |list: &[&str]| -> Vec<String> { list.iter().map(|f| f.to_string()).collect() };
    let err = ModelArgs::config_from(&flags(&["--variant", "no-such-variant"])).unwrap_err();
    assert!(err.contains("'no-such-variant'"), "{err}");
    assert!(
        err.contains("lock-grace-after-start"),
        "names the catalogue: {err}"
    );
    let err = ModelArgs::config_from(&flags(&["--variant", "lock-grace-after-start"])).unwrap_err();
    assert!(err.contains("needs orderly consumption"), "{err}");
    let err = ModelArgs::config_from(&flags(&[
        "--scenario",
        "graceful-shutdown",
        "--orderly",
        "--variant",
        "shutdown-awaits-batches",
        "--variant",
        "listeners-stop-on-interrupt",
    ]))
    .unwrap_err();
    assert!(err.contains("cannot go together"), "{err}");
}

/// `--rocketmq RELEASE` switches on the historical variants that release
/// still has, and no other: the default release none; an unknown release
/// is refused, naming those it takes.
#[test]
fn a_release_selects_the_historical_variants_it_still_has() {
    let flags = |list: &[&str]| -> Vec<String> { list.iter().map(|f| f.to_string()).collect() };
    let layers: [&[&str]; 3] = [&[], &["--messages", "1"], &["--orderly"]];
    for (release, layer) in Release::PRESETS
        .into_iter()
        .flat_map(|r| layers.map(|l| (r, l)))
    {
        let name = release.to_string();
        let config = ModelArgs::config_from(&flags(&[&["--rocketmq", &name], layer].concat()))
            .unwrap_or_else(|e| panic!("{release}: {e}"));
        let expected: Vec<Variant> = Variant::all()
            .filter(|&v| {
                v.entry()
                    .releases
                    .is_some_and(|r| r.since <= release && release < r.fixed_in)
                    && config.lacks(v).is_none()
            })
            .collect();
        let selected: Vec<Variant> = Variant::all().filter(|&v| config.has(v)).collect();
        assert_eq!(selected, expected, "{release} {layer:?}");
    }
    assert!(Variant::of_release(Release::DEFAULT).is_empty());
    let err = ModelArgs::config_from(&flags(&["--rocketmq", "4.2.0"])).unwrap_err();
    assert!(err.contains("4.9.4") && err.contains("5.3.3"), "{err}");
}
