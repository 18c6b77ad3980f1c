//! Groups of mixed clients: consumers that sort in different orders (the
//! Java client by UTF-16 code units, the Rust and Go clients by bytes), and
//! consumers that run different strategies during a rolling change of the
//! group's strategy. Each scenario's verdicts at rest and under fairness,
//! and the shape of what the checker shows.

use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::{
    check,
    configuration::{ClientChoices, ClientKind, Config, NetworkKind, Scenario},
    report::{
        Report, Status, AGREE_AT_REST, CONVERGED_WHEN_QUIESCENT, CONVERGES, FULL_CONVERGENCE,
        NO_DOUBLE_OWNERSHIP, TRANSIENT_DOUBLE,
    },
    CheckOptions,
};

fn config(scenario: Scenario) -> Config {
    config_on(scenario, "AVG")
}

fn config_on(scenario: Scenario, strategy: &str) -> Config {
    let strategy = strategy_from_name(strategy).expect("a strategy");
    Config::new(
        scenario,
        scenario.default_sizes(),
        NetworkKind::Ordered,
        Arc::from(strategy),
    )
    .expect("valid sizes")
}

fn run(cfg: Config, liveness: bool) -> Report {
    let options = CheckOptions {
        threads: 2,
        liveness,
        ..CheckOptions::default()
    };
    check(cfg, &options, |_| {})
}

fn status(report: &Report, name: &str) -> Status {
    report.property(name).expect("property reported").status
}

fn trace(report: &Report, name: &str) -> Vec<String> {
    report
        .property(name)
        .and_then(|p| p.trace.clone())
        .unwrap_or_else(|| panic!("no trace for {name}"))
}

/// A Rust client (byte order) joins a Java consumer; their ids are the
/// smallest on which the orders disagree. Each sorts the same member list
/// its own way, finds itself second, and takes the second half: the
/// queues `[b0 b1]` are consumed twice and `[a0 a1]` by nobody, at rest
/// and for ever.
#[test]
fn a_java_and_a_rust_client_take_the_same_half_for_ever() {
    let cfg = config(Scenario::MixedClients);
    assert_eq!(cfg.consumers[0].client_id, "\u{E000}");
    assert_eq!(cfg.consumers[1].client_id, "\u{10000}");
    assert_eq!(cfg.clients[0].kind, ClientKind::Java);
    assert_eq!(cfg.clients[1].kind, ClientKind::Bytes);
    let report = run(cfg, false);
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Violated);
    assert_eq!(status(&report, CONVERGED_WHEN_QUIESCENT), Status::Violated);
    // The member lists agree: only the sorts differ.
    assert_eq!(status(&report, AGREE_AT_REST), Status::Holds);
    assert_eq!(status(&report, FULL_CONVERGENCE), Status::NotFound);
    let lines = trace(&report, NO_DOUBLE_OWNERSHIP);
    for words in [
        "c1 (client id \\u{e000}) [java:AVG]: rebalanced, members [\u{10000} \\u{e000}] in java order, owns [b0 b1]",
        "c2 (client id \u{10000}) [bytes:AVG]: rebalanced, members [\\u{e000} \u{10000}] in bytes order, owns [b0 b1]",
    ] {
        assert!(lines.iter().any(|l| l.contains(words)), "{words}: {lines:#?}");
    }
    let fair = run(config(Scenario::MixedClients), true);
    assert!(fair.complete());
    assert_eq!(status(&fair, CONVERGES), Status::Violated);
}

/// The same group with both consumers on one client converges: the
/// disagreement is the sort's alone, whichever order both use.
#[test]
fn the_same_ids_on_one_client_converge() {
    for clients in ["c2=java:AVG", "c1=bytes:AVG"] {
        let cfg = config(Scenario::MixedClients)
            .with_clients(&clients.parse::<ClientChoices>().expect("valid"))
            .expect("valid clients");
        assert!(!cfg.mixed_clients(), "{clients}");
        let report = run(cfg, true);
        assert!(report.passed(), "{clients}: {report:#?}");
        assert_eq!(status(&report, CONVERGES), Status::Holds, "{clients}");
    }
}

/// A rolling change from AVG to AVG_BY_CIRCLE: `c1` (AVG) shuts down and
/// `c3` (its replacement, on AVG_BY_CIRCLE) joins, in either order. While
/// `c1` is still there the three agree (AVG and AVG_BY_CIRCLE give one
/// queue each of three); once it has gone, `c2` (AVG, first of two) takes
/// `[a0 a1]` and `c3` (AVG_BY_CIRCLE, second) takes `[a1]`: `a1` is
/// consumed twice and `a2` by nobody until the next restart. Under
/// fairness the group never converges.
#[test]
fn a_strategy_rollout_leaves_the_group_split_between_restarts() {
    let cfg = config(Scenario::StrategyRollout);
    let labels: Vec<String> = cfg.clients.iter().map(|c| c.label()).collect();
    assert_eq!(labels, ["java:AVG", "java:AVG", "java:AVG_BY_CIRCLE"]);
    let report = run(cfg, false);
    assert!(report.complete());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Violated);
    assert_eq!(status(&report, CONVERGED_WHEN_QUIESCENT), Status::Violated);
    assert_eq!(status(&report, AGREE_AT_REST), Status::Holds);
    // Before the old member leaves, the group of three converges.
    assert_eq!(status(&report, FULL_CONVERGENCE), Status::Found);
    assert_eq!(status(&report, TRANSIENT_DOUBLE), Status::Found);
    let lines = trace(&report, NO_DOUBLE_OWNERSHIP);
    for words in [
        "c1 [java:AVG]: left",
        "c2 [java:AVG]: rebalanced, members [c2 c3] in java order, owns [a0 a1]",
        "c3 [java:AVG_BY_CIRCLE]: rebalanced, members [c2 c3] in java order, owns [a1]",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(words)),
            "{words}: {lines:#?}"
        );
    }
    let fair = run(config(Scenario::StrategyRollout), true);
    assert!(fair.complete());
    assert_eq!(status(&fair, CONVERGES), Status::Violated);
    // The same restarts with one strategy throughout (a plain rolling
    // upgrade) converge: the disagreement is the strategies'.
    let same = "c1=java:AVG_BY_CIRCLE,c2=java:AVG_BY_CIRCLE";
    let done = config(Scenario::StrategyRollout)
        .with_clients(&same.parse::<ClientChoices>().expect("valid"))
        .expect("valid clients");
    let report = run(done, true);
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Holds);
    assert_eq!(status(&report, CONVERGES), Status::Holds);
}

/// A Go client joins two Java consumers on `CONSISTENT_HASH`: the ids are
/// ASCII, so both sorts agree, but Go's ring (CRC-32 of `0c3`, `1c3`, ...;
/// a queue goes to the first point after its hash) is not Java's (MD5 of
/// `c3-0`, `c3-1`, ...). Of `[a0 a1 b0 b1]` Java's ring gives `c1` `[a0
/// b0]`, `c2` `[a1 b1]` and `c3` nothing; Go's gives `c3` `[b1]`, which
/// `c2` also holds, at rest and for ever. The same three on Go's client
/// converge.
#[test]
fn a_java_and_a_go_client_on_consistent_hash_hold_a_queue_twice_for_ever() {
    let go = "c3=bytes:CONSISTENT_HASH"
        .parse::<ClientChoices>()
        .expect("valid");
    let mixed = || {
        config_on(Scenario::Healthy, "CONSISTENT_HASH")
            .with_clients(&go)
            .expect("valid clients")
    };
    let report = run(mixed(), false);
    assert!(report.complete());
    assert_eq!(status(&report, NO_DOUBLE_OWNERSHIP), Status::Violated);
    assert_eq!(status(&report, CONVERGED_WHEN_QUIESCENT), Status::Violated);
    assert_eq!(status(&report, AGREE_AT_REST), Status::Holds);
    assert_eq!(status(&report, FULL_CONVERGENCE), Status::NotFound);
    let lines = trace(&report, NO_DOUBLE_OWNERSHIP);
    for words in [
        "c1 [java:CONSISTENT_HASH]: rebalanced, members [c1 c2 c3] in java order, owns [a0 b0]",
        "c2 [java:CONSISTENT_HASH]: rebalanced, members [c1 c2 c3] in java order, owns [a1 b1]",
        "c3 [bytes:CONSISTENT_HASH]: rebalanced, members [c1 c2 c3] in bytes order, owns [b1]",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(words)),
            "{words}: {lines:#?}"
        );
    }
    assert_eq!(status(&run(mixed(), true), CONVERGES), Status::Violated);
    let all_go = "c1=bytes:CONSISTENT_HASH,c2=bytes:CONSISTENT_HASH,c3=bytes:CONSISTENT_HASH";
    let same = config_on(Scenario::Healthy, "CONSISTENT_HASH")
        .with_clients(&all_go.parse::<ClientChoices>().expect("valid"))
        .expect("valid clients");
    let report = run(same, true);
    assert!(report.passed(), "{report:#?}");
    assert_eq!(status(&report, CONVERGES), Status::Holds);
}

/// In `mixed-clients` the joiner runs the Go client with the group's
/// strategy: on `CONSISTENT_HASH`, Go's ring, exactly as when
/// `--clients` names it.
#[test]
fn the_mixed_clients_joiner_runs_gos_ring() {
    let scenario = config_on(Scenario::MixedClients, "CONSISTENT_HASH");
    assert_eq!(scenario.clients[1].label(), "bytes:CONSISTENT_HASH");
    let named = config_on(Scenario::MixedClients, "CONSISTENT_HASH")
        .with_clients(
            &"c2=bytes:CONSISTENT_HASH"
                .parse::<ClientChoices>()
                .expect("valid"),
        )
        .expect("valid clients");
    let java = config_on(Scenario::MixedClients, "CONSISTENT_HASH")
        .with_clients(
            &"c2=java:CONSISTENT_HASH"
                .parse::<ClientChoices>()
                .expect("valid"),
        )
        .expect("valid clients");
    let (scenario, named, java) = (run(scenario, false), run(named, false), run(java, false));
    assert_eq!(scenario.unique_states, named.unique_states);
    for name in [
        NO_DOUBLE_OWNERSHIP,
        CONVERGED_WHEN_QUIESCENT,
        FULL_CONVERGENCE,
    ] {
        assert_eq!(status(&scenario, name), status(&named, name), "{name}");
    }
    assert!(java.passed(), "{java:#?}");
    assert!(!scenario.passed(), "{scenario:#?}");
}

/// Client ids given by the user: a healthy group whose joiner runs a Rust
/// client and whose ids mix a character above the surrogates with one
/// outside the BMP splits as `mixed-clients` does; with ASCII ids the same
/// clients agree.
#[test]
fn user_client_ids_decide_whether_mixed_sorts_disagree() {
    let healthy = |ids: &[&str]| {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        config(Scenario::Healthy)
            .with_client_ids(&ids)
            .expect("one id per consumer")
            .with_clients(&"c3=bytes:AVG".parse::<ClientChoices>().expect("valid"))
            .expect("valid clients")
    };
    let ascii = run(healthy(&["10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"]), false);
    assert!(ascii.passed(), "{ascii:#?}");
    let tricky = run(healthy(&["a\u{FF01}", "a\u{1F600}", "b"]), false);
    assert_eq!(status(&tricky, NO_DOUBLE_OWNERSHIP), Status::Holds);
    let tricky = run(healthy(&["a\u{1F600}", "a\u{FF01}", "a\u{FF02}"]), false);
    assert_eq!(status(&tricky, CONVERGED_WHEN_QUIESCENT), Status::Violated);
}

#[test]
fn bad_clients_and_ids_are_refused_with_a_message() {
    assert!("c1".parse::<ClientChoices>().is_err());
    assert!("c1=java".parse::<ClientChoices>().is_err());
    assert!("c1=python:AVG".parse::<ClientChoices>().is_err());
    assert!("c1=java:NOPE".parse::<ClientChoices>().is_err());
    let unknown = config(Scenario::Healthy)
        .with_clients(&"c9=java:AVG".parse::<ClientChoices>().expect("parses"))
        .expect_err("no consumer c9");
    assert!(unknown.to_string().contains("no consumer c9"), "{unknown}");
    let short = config(Scenario::Healthy)
        .with_client_ids(&["a".to_string()])
        .expect_err("one id for three consumers");
    assert!(
        short.to_string().contains("1 client ids for 3 consumers"),
        "{short}"
    );
    #[cfg(not(feature = "rocketmq-rust"))]
    {
        let theirs = config(Scenario::Healthy)
            .with_clients(
                &"c1=rocketmq-rust:AVG"
                    .parse::<ClientChoices>()
                    .expect("parses"),
            )
            .expect_err("not in this build");
        assert!(theirs.to_string().contains("rocketmq-rust"), "{theirs}");
    }
}

/// With the `rocketmq-rust` feature: a consumer that runs rocketmq-rust's
/// own AVG (after its byte sort) splits from a Java consumer exactly as
/// this project's AVG on a byte-sorting client does.
#[cfg(feature = "rocketmq-rust")]
#[test]
fn rocketmq_rusts_own_code_splits_as_a_byte_sorting_client() {
    let theirs = config(Scenario::MixedClients)
        .with_clients(
            &"c2=rocketmq-rust:AVG"
                .parse::<ClientChoices>()
                .expect("parses"),
        )
        .expect("built with rocketmq-rust");
    assert_eq!(theirs.clients[1].label(), "rocketmq-rust:AVG");
    let theirs = run(theirs, false);
    let ours = run(config(Scenario::MixedClients), false);
    assert_eq!(theirs.unique_states, ours.unique_states);
    for name in [
        NO_DOUBLE_OWNERSHIP,
        CONVERGED_WHEN_QUIESCENT,
        FULL_CONVERGENCE,
    ] {
        assert_eq!(status(&theirs, name), status(&ours, name), "{name}");
    }
}
