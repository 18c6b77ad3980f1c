//! Every scenario, every fault budget and every protocol switch at its
//! smallest: the reachable state space and the verdicts, pinned.
//!
//! Each configuration takes milliseconds, so this suite is the one that
//! mutation testing of the protocol runs (docs/testing.md): a changed step
//! shows as a changed count or verdict here even where the scenario suites,
//! at sizes that take seconds, would be the ones to explain it. The numbers
//! are the model's own, recorded when a case was added; a change to the
//! protocol that moves one is a decision to record, as with the default
//! check's pinned 56,916.

use rocketmq_rebalance_model::{
    configuration::{
        Allocator, Commit, Config, ConsumeFrom, Consumption, LockTiming, NetworkKind,
        ProtocolOptions, Scenario, Sizes, Variant, VariantSet,
    },
    report::{Expectation, Report, Status},
};
use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;

mod common;

/// Two consumers, the second joining, one broker with two queues.
const SMALL: Sizes = Sizes {
    consumers: 2,
    brokers: 1,
    queues: 2,
    ..Sizes::DEFAULT
};

/// One message on one queue.
const ONE_MESSAGE: Sizes = Sizes {
    queues: 1,
    messages: 1,
    ..SMALL
};

/// One consumer starting alone, one message on one queue.
const COLD: Sizes = Sizes {
    consumers: 1,
    joins: None,
    ..ONE_MESSAGE
};

/// One line: the space, the promises broken, the examples not found, and
/// with messages the harms.
fn summary(name: &str, report: &Report) -> String {
    assert!(report.complete(), "{name}: {report:#?}");
    let of = |expectation_is_sometimes: bool, status: Status| {
        report
            .properties
            .iter()
            .filter(|p| (p.expectation == Expectation::Sometimes) == expectation_is_sometimes)
            .filter(|p| p.status == status)
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = format!(
        "{name}: {} states; violated [{}]; not found [{}]",
        report.unique_states,
        of(false, Status::Violated),
        of(true, Status::NotFound)
    );
    if let Some(l) = &report.liveness {
        line += &format!("; liveness graph {} states", l.states);
    }
    if let Some(h) = &report.harms {
        line += &format!(
            "; harms {} {} {} {}",
            h.max_deliveries.value,
            h.max_duplicates_per_handover.value,
            h.max_duplicated_messages.value,
            h.max_paused_queues.value
        );
    }
    line
}

fn case(name: &str, scenario: Scenario, sizes: Sizes, protocol: ProtocolOptions) -> String {
    let cfg = common::config_with(scenario, sizes, "AVG", protocol);
    summary(name, &common::run(cfg, false))
}

fn healthy(name: &str, sizes: Sizes, protocol: ProtocolOptions) -> String {
    case(name, Scenario::Healthy, sizes, protocol)
}

fn orderly(timing: LockTiming) -> ProtocolOptions {
    ProtocolOptions {
        orderly: Some(timing),
        ..ProtocolOptions::default()
    }
}

/// Compares line by line so that a failure names the cases that moved.
fn assert_lines(actual: &[String], expected: &str) {
    let expected: Vec<&str> = expected
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let moved: Vec<String> = actual
        .iter()
        .zip(&expected)
        .filter(|(a, e)| a != *e)
        .map(|(a, e)| format!("  expected {e}\n  now      {a}"))
        .collect();
    assert!(
        moved.is_empty() && actual.len() == expected.len(),
        "cases moved:\n{}\nall now:\n{}",
        moved.join("\n"),
        actual.join("\n")
    );
}

#[test]
fn every_scenario_with_two_consumers() {
    let actual: Vec<String> = Scenario::ALL
        .iter()
        .filter(|s| s.default_protocol().orderly.is_none())
        .map(|&s| {
            let d = s.default_sizes();
            let sizes = Sizes {
                consumers: d.consumers.min(2),
                ..d
            };
            case(s.name(), s, sizes, s.default_protocol())
        })
        .collect();
    assert_lines(
        &actual,
        "
        healthy: 1988 states; violated []; not found []
        inconsistent-subscription: 1988 states; violated [converged when quiescent]; not found [transient double ownership, full convergence]
        duplicate-client-id: 1988 states; violated [no queue stays double-owned, converged when quiescent]; not found [full convergence]
        crash: 50 states; violated []; not found [transient double ownership]
        route-change: 50 states; violated []; not found [transient double ownership]
        partial-partition: 99 states; violated [member lists agree at rest]; not found [transient double ownership, full convergence]
        graceful-shutdown: 50 states; violated []; not found [transient double ownership]
        broker-scale-out: 27736 states; violated []; not found []
        broker-scale-in: 402 states; violated []; not found []
        queue-scale-in: 50 states; violated []; not found []
        nameserver-partition: 1948 states; violated [member lists agree at rest]; not found []
        stale-route: 149 states; violated []; not found [transient double ownership]
        broker-restart: 4970 states; violated []; not found []
        broker-disk-loss: 240278 states; violated [no message skipped]; not found []; harms 3 1 1 1
        evicted-new-queue: 7082 states; violated [no message skipped]; not found [transient double ownership, duplicate delivery]; harms 1 0 0 1
        rolling-upgrade: 10740 states; violated []; not found []
        zombie-consumer: 123918 states; violated []; not found []
        subscription-flap: 41530 states; violated []; not found [transient double ownership, full convergence]
        mixed-clients: 1988 states; violated [no queue stays double-owned, converged when quiescent]; not found [full convergence]
        strategy-rollout: 207 states; violated [no queue stays double-owned, converged when quiescent]; not found []
        ",
    );
}

/// With the periodic rebalance and the fair-cycle search: its own steps (a
/// periodic rebalance, a later route poll) exist only here.
#[test]
fn every_layer_under_fairness() {
    let p = ProtocolOptions::default();
    let live = |name: &str, sizes: Sizes, protocol: ProtocolOptions| {
        let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", protocol);
        summary(name, &common::run(cfg, true))
    };
    let actual = vec![
        live("fair, small", SMALL, p),
        live(
            "fair, two brokers",
            Sizes {
                brokers: 2,
                ..SMALL
            },
            p,
        ),
        live(
            "fair, failed queries",
            Sizes {
                brokers: 2,
                failed_queries: 1,
                ..SMALL
            },
            p,
        ),
        live(
            "fair, lost notifications",
            Sizes {
                brokers: 2,
                lost_notifications: 1,
                ..SMALL
            },
            p,
        ),
        live(
            "fair, stale routes",
            Sizes {
                route_changes: 1,
                stale_routes: 1,
                ..SMALL
            },
            p,
        ),
        live(
            "fair, crash",
            Sizes {
                joins: Some(0),
                crashes: 1,
                ..SMALL
            },
            p,
        ),
        live("fair, one message", ONE_MESSAGE, p),
        live(
            "fair, orderly crash",
            Sizes {
                joins: Some(0),
                crashes: 1,
                ..ONE_MESSAGE
            },
            orderly(LockTiming::default()),
        ),
    ];
    assert_lines(
        &actual,
        "
        fair, small: 180 states; violated []; not found []; liveness graph 180 states
        fair, two brokers: 4270 states; violated []; not found []; liveness graph 4270 states
        fair, failed queries: 12810 states; violated []; not found []; liveness graph 12810 states
        fair, lost notifications: 12130 states; violated []; not found []; liveness graph 12130 states
        fair, stale routes: 4818 states; violated []; not found []; liveness graph 4818 states
        fair, crash: 56 states; violated []; not found [transient double ownership]; liveness graph 56 states
        fair, one message: 951 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; liveness graph 951 states; harms 1 0 0 0
        fair, orderly crash: 5362 states; violated []; not found [transient double ownership]; liveness graph 5362 states; harms 2 1 1 1
        ",
    );
}

#[test]
fn every_network() {
    let p = ProtocolOptions::default();
    let on = |network: NetworkKind, name: &str, sizes: Sizes, protocol: ProtocolOptions| {
        let avg = Arc::from(strategy_from_name("AVG").unwrap());
        let cfg = Config::new_with(Scenario::Healthy, sizes, network, avg, protocol).unwrap();
        summary(&format!("{name}, {network}"), &common::run(cfg, false))
    };
    let mut actual = Vec::new();
    for &network in NetworkKind::ALL {
        for (name, sizes) in [
            ("small", SMALL),
            ("kills", Sizes { kills: 1, ..SMALL }),
            ("one message", ONE_MESSAGE),
        ] {
            actual.push(on(network, name, sizes, p));
        }
    }
    // Answers on a connection that closed arrive only when the network
    // lets them overtake the close; route pushes stand for poll answers,
    // which RocketMQ receives one at a time, so reordering two of them is
    // the unordered network's doing (the older route can be applied last).
    let alone = Sizes {
        consumers: 1,
        joins: Some(0),
        broker_restarts: 1,
        ..ONE_MESSAGE
    };
    let unordered = NetworkKind::Unordered;
    actual.extend([
        on(unordered, "broker restart, one message", alone, p),
        on(
            unordered,
            "orderly broker restart",
            alone,
            orderly(LockTiming::default()),
        ),
        on(
            unordered,
            "expiries, one message",
            Sizes {
                joins: Some(0),
                expiries: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        on(
            unordered,
            "server assignment, kills",
            Sizes { kills: 1, ..SMALL },
            ProtocolOptions {
                assignment: Allocator::Server,
                ..p
            },
        ),
        on(
            unordered,
            "two route changes",
            Sizes {
                route_changes: 2,
                ..SMALL
            },
            p,
        ),
    ]);
    assert_lines(
        &actual,
        "
        small, ordered: 63 states; violated []; not found []
        kills, ordered: 207 states; violated []; not found []
        one message, ordered: 327 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        small, unordered: 85 states; violated []; not found []
        kills, unordered: 338 states; violated []; not found []
        one message, unordered: 425 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        small, duplicating: 255 states; violated []; not found [full convergence]
        kills, duplicating: 597 states; violated []; not found [full convergence]
        one message, duplicating: 1275 states; violated []; not found [transient double ownership, transient orphaned queue, full convergence, duplicate delivery, paused queue]; harms 1 0 0 0
        broker restart, one message, unordered: 418 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        orderly broker restart, unordered: 4318 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        expiries, one message, unordered: 74402 states; violated []; not found []; harms 3 1 1 1
        server assignment, kills, unordered: 338 states; violated []; not found []
        two route changes, unordered: 32956 states; violated [member lists agree at rest]; not found []
        ",
    );
}

#[test]
fn every_fault_budget_and_protocol_switch() {
    let p = ProtocolOptions::default();
    let actual = vec![
        healthy("small", SMALL, p),
        healthy("kills", Sizes { kills: 1, ..SMALL }, p),
        healthy(
            "expiries",
            Sizes {
                expiries: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "crashes",
            Sizes {
                crashes: 1,
                ..SMALL
            },
            p,
        ),
        healthy("leaves", Sizes { leaves: 1, ..SMALL }, p),
        healthy(
            "broker restarts",
            Sizes {
                broker_restarts: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "broker restart, subscription table",
            Sizes {
                consumers: 1,
                joins: Some(0),
                broker_restarts: 1,
                ..SMALL
            },
            ProtocolOptions {
                subscription_table: true,
                ..p
            },
        ),
        healthy(
            "lost notifications",
            Sizes {
                lost_notifications: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "failed queries",
            Sizes {
                failed_queries: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "failed queries, two brokers, two topics",
            Sizes {
                brokers: 2,
                topics: 2,
                failed_queries: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "route changes",
            Sizes {
                route_changes: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "stale routes",
            Sizes {
                route_changes: 1,
                stale_routes: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "queue removals",
            Sizes {
                queue_removals: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "broker joins",
            Sizes {
                broker_joins: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "broker leaves",
            Sizes {
                brokers: 2,
                broker_leaves: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "name server partition",
            Sizes {
                name_servers: 2,
                name_server_partitions: 1,
                ..SMALL
            },
            p,
        ),
        healthy(
            "subscription table",
            Sizes {
                topics: 2,
                subscription_changes: 1,
                ..SMALL
            },
            ProtocolOptions {
                subscription_table: true,
                ..p
            },
        ),
        healthy(
            "retry topic",
            Sizes {
                joins: None,
                ..SMALL
            },
            ProtocolOptions {
                retry_topic: true,
                ..p
            },
        ),
        healthy("no notify", SMALL, ProtocolOptions { notify: false, ..p }),
        healthy(
            "server assignment, kills",
            Sizes { kills: 1, ..SMALL },
            ProtocolOptions {
                assignment: Allocator::Server,
                ..p
            },
        ),
        healthy(
            "server assignment",
            Sizes {
                route_changes: 1,
                ..SMALL
            },
            ProtocolOptions {
                assignment: Allocator::Server,
                ..p
            },
        ),
        // Broker `b` polls name server `b mod N`.
        healthy(
            "server assignment, two brokers",
            Sizes {
                consumers: 1,
                joins: Some(0),
                brokers: 2,
                route_changes: 1,
                ..SMALL
            },
            ProtocolOptions {
                assignment: Allocator::Server,
                ..p
            },
        ),
    ];
    assert_lines(
        &actual,
        "
        small: 63 states; violated []; not found []
        kills: 207 states; violated []; not found []
        expiries: 5333 states; violated []; not found []
        crashes: 210 states; violated []; not found []
        leaves: 155 states; violated []; not found []
        broker restarts: 27219 states; violated []; not found []
        broker restart, subscription table: 63 states; violated []; not found [transient double ownership]
        lost notifications: 186 states; violated []; not found []
        failed queries: 186 states; violated []; not found []
        failed queries, two brokers, two topics: 36599 states; violated []; not found []
        route changes: 873 states; violated []; not found []
        stale routes: 2556 states; violated []; not found []
        queue removals: 780 states; violated []; not found []
        broker joins: 109655 states; violated []; not found []
        broker leaves: 63384 states; violated []; not found []
        name server partition: 2870 states; violated []; not found []
        subscription table: 23197 states; violated []; not found []
        retry topic: 10081 states; violated []; not found []
        no notify: 63 states; violated []; not found []
        server assignment, kills: 207 states; violated []; not found []
        server assignment: 2211 states; violated [member lists agree at rest]; not found []
        server assignment, two brokers: 36 states; violated [member lists agree at rest]; not found [transient double ownership]
        ",
    );
}

#[test]
fn every_message_and_offset_switch() {
    let p = ProtocolOptions::default();
    let actual = vec![
        healthy("one message", ONE_MESSAGE, p),
        healthy(
            "two queues",
            Sizes {
                queues: 2,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "sync commit",
            ONE_MESSAGE,
            ProtocolOptions {
                commit: Commit::Sync,
                ..p
            },
        ),
        healthy(
            "consume from first",
            Sizes {
                evictions: 1,
                ..ONE_MESSAGE
            },
            ProtocolOptions {
                consume_from: ConsumeFrom::First,
                ..p
            },
        ),
        healthy(
            "evictions",
            Sizes {
                evictions: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "lost persists",
            Sizes {
                lost_persists: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "failed offset reads",
            Sizes {
                failed_offset_reads: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "batch of two",
            Sizes {
                messages: 2,
                pull_batch: 2,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "leave",
            Sizes {
                joins: Some(0),
                leaves: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "crash",
            Sizes {
                joins: Some(0),
                crashes: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "sync commit, two messages",
            Sizes {
                messages: 2,
                ..ONE_MESSAGE
            },
            ProtocolOptions {
                commit: Commit::Sync,
                ..p
            },
        ),
        // A group that starts cold has no stored offsets: what the broker
        // answers decides where consumption starts.
        // The leaving (last) or crashing (first) consumer's second queue
        // changes hands.
        healthy(
            "two queues, leave",
            Sizes {
                queues: 2,
                joins: Some(0),
                leaves: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy(
            "two queues, crash",
            Sizes {
                queues: 2,
                joins: Some(0),
                crashes: 1,
                ..ONE_MESSAGE
            },
            p,
        ),
        healthy("cold start", COLD, p),
        healthy(
            "cold start, failed offset reads",
            Sizes {
                failed_offset_reads: 1,
                ..COLD
            },
            p,
        ),
        healthy(
            "cold start, lost persists",
            Sizes {
                lost_persists: 1,
                ..COLD
            },
            p,
        ),
        healthy("cold start, two brokers", Sizes { brokers: 2, ..COLD }, p),
        healthy(
            "cold start, evictions",
            Sizes {
                evictions: 1,
                ..COLD
            },
            p,
        ),
        healthy(
            "cold start, evictions, consume from first",
            Sizes {
                evictions: 1,
                ..COLD
            },
            ProtocolOptions {
                consume_from: ConsumeFrom::First,
                ..p
            },
        ),
    ];
    assert_lines(
        &actual,
        "
        one message: 327 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        two queues: 7262 states; violated []; not found []; harms 2 1 1 1
        sync commit: 612 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        consume from first: 654 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        evictions: 654 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        lost persists: 981 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        failed offset reads: 654 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        batch of two: 327 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        leave: 36 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        crash: 37 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        sync commit, two messages: 1422 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        two queues, leave: 281 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        two queues, crash: 193 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        cold start: 77 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        cold start, failed offset reads: 331 states; violated []; not found [transient double ownership, duplicate delivery]; harms 1 0 0 1
        cold start, lost persists: 229 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        cold start, two brokers: 3184 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        cold start, evictions: 171 states; violated [no message skipped]; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        cold start, evictions, consume from first: 158 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        ",
    );
}

#[test]
fn every_orderly_switch() {
    let t = LockTiming::default();
    // A queue changes hands when its owner leaves (the last consumer, so
    // two queues) or crashes (the first); a second consumer joining a
    // group of one queue moves nothing but locks all the same.
    let leave = Sizes {
        queues: 2,
        joins: Some(0),
        leaves: 1,
        ..ONE_MESSAGE
    };
    let crash = Sizes {
        joins: Some(0),
        crashes: 1,
        ..ONE_MESSAGE
    };
    let removal = Sizes {
        consumers: 1,
        joins: Some(0),
        queues: 2,
        queue_removals: 1,
        ..ONE_MESSAGE
    };
    let restart = Sizes {
        consumers: 1,
        joins: Some(0),
        broker_restarts: 1,
        ..ONE_MESSAGE
    };
    let actual = vec![
        healthy("orderly join", ONE_MESSAGE, orderly(t)),
        // The leaver's batch outlives its shutdown, which does not wait
        // for it, and runs beside the next owner's.
        healthy("orderly leave", leave, orderly(t)),
        healthy("orderly crash", crash, orderly(t)),
        healthy(
            "orderly kill",
            Sizes {
                joins: Some(0),
                kills: 1,
                ..ONE_MESSAGE
            },
            orderly(t),
        ),
        healthy(
            "lost unlocks",
            Sizes {
                lost_unlocks: 1,
                ..leave
            },
            orderly(t),
        ),
        healthy(
            "failed locks",
            Sizes {
                failed_locks: 1,
                ..ONE_MESSAGE
            },
            orderly(t),
        ),
        healthy(
            "clock drift",
            Sizes {
                clock_drift: 1,
                ..crash
            },
            orderly(t),
        ),
        // Every lock lapses, harmless while nobody else asks for one (the
        // one queue stays with its owner): `orderly.rs` shows the harm.
        healthy(
            "broker clock step",
            Sizes {
                broker_clock_steps: 1,
                ..ONE_MESSAGE
            },
            orderly(t),
        ),
        healthy("slow batch", leave, orderly(LockTiming { batch: 3, ..t })),
        healthy("orderly broker restart", restart, orderly(t)),
        // A queue removed from the route is dropped by the rebalance: it
        // stays in the table until its unlock, after its batch.
        healthy("queue removal", removal, orderly(t)),
        healthy(
            "queue removal, lost unlock",
            Sizes {
                lost_unlocks: 1,
                ..removal
            },
            orderly(t),
        ),
        healthy(
            "queue removal, slow batch",
            removal,
            orderly(LockTiming { batch: 3, ..t }),
        ),
    ];
    assert_lines(
        &actual,
        "
        orderly join: 5654 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        orderly leave: 5167 states; violated [no queue consumed by two at once]; not found [transient double ownership]; harms 2 1 1 1
        orderly crash: 742 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        orderly kill: 742 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        lost unlocks: 10334 states; violated [no queue consumed by two at once]; not found [transient double ownership]; harms 2 1 1 1
        failed locks: 19522 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        clock drift: 826 states; violated []; not found [transient double ownership]; harms 2 1 1 1
        broker clock step: 16962 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        slow batch: 14489 states; violated [no queue consumed by two at once]; not found [transient double ownership]; harms 2 1 1 1
        orderly broker restart: 7966 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        queue removal: 4053 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        queue removal, lost unlock: 8633 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        queue removal, slow batch: 12115 states; violated []; not found [transient double ownership, transient orphaned queue, duplicate delivery, paused queue]; harms 1 0 0 0
        ",
    );
}

/// POP consumption at its smallest: each of its faults, a FIFO group, and
/// the changes push is compared with (`docs/pop.md`).
#[test]
fn every_pop_switch() {
    let pop = ProtocolOptions {
        consumption: Consumption::Pop,
        assignment: Allocator::Server,
        ..ProtocolOptions::default()
    };
    let fifo = ProtocolOptions { fifo: true, ..pop };
    let settled = Sizes {
        joins: Some(0),
        ..ONE_MESSAGE
    };
    let actual = vec![
        healthy("pop, cold", COLD, pop),
        healthy("pop, join", ONE_MESSAGE, pop),
        healthy(
            "pop, leave",
            Sizes {
                leaves: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, crash",
            Sizes {
                crashes: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, kill",
            Sizes {
                kills: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, broker restart, one consumer",
            Sizes {
                consumers: 1,
                broker_restarts: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, lost ack",
            Sizes {
                lost_acks: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, slow batch",
            Sizes {
                slow_batches: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, consume failure",
            Sizes {
                consume_failures: 1,
                ..settled
            },
            pop,
        ),
        healthy(
            "pop, two messages a pop",
            Sizes {
                messages: 2,
                pull_batch: 2,
                ..settled
            },
            pop,
        ),
        healthy("fifo, join", ONE_MESSAGE, fifo),
        healthy(
            "fifo, slow batch",
            Sizes {
                slow_batches: 1,
                ..settled
            },
            fifo,
        ),
        healthy(
            "fifo, lost ack, two messages",
            Sizes {
                messages: 2,
                lost_acks: 1,
                ..settled
            },
            fifo,
        ),
        healthy(
            "fifo, lost pop answer",
            Sizes {
                lost_pop_answers: 1,
                ..settled
            },
            fifo,
        ),
        healthy(
            "fifo, lost pop answer, retried as a new attempt",
            Sizes {
                lost_pop_answers: 1,
                ..settled
            },
            ProtocolOptions {
                variants: VariantSet::EMPTY.with(Variant::FifoPopWithoutAttemptId),
                ..fifo
            },
        ),
        case(
            "pop share, three consumers, a shared client id",
            Scenario::DuplicateClientId,
            Sizes {
                consumers: 3,
                queues: 3,
                ..settled
            },
            ProtocolOptions {
                pop_share: 1,
                ..pop
            },
        ),
    ];
    assert_lines(
        &actual,
        "
        pop, cold: 68 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        pop, join: 2143 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        pop, leave: 490 states; violated []; not found [paused queue]; harms 2 1 1 0
        pop, crash: 356 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        pop, kill: 356 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        pop, broker restart, one consumer: 866 states; violated []; not found [paused queue]; harms 2 1 1 0
        pop, lost ack: 230 states; violated []; not found [paused queue]; harms 2 1 1 0
        pop, slow batch: 191 states; violated [no message consumed by two at once]; not found [paused queue]; harms 2 1 1 0
        pop, consume failure: 230 states; violated []; not found [paused queue]; harms 2 1 1 0
        pop, two messages a pop: 55 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        fifo, join: 2143 states; violated []; not found [duplicate delivery, paused queue, queue blocked by an abandoned pop]; harms 1 0 0 0
        fifo, slow batch: 191 states; violated [no message consumed by two at once, no queue consumed by two at once]; not found [paused queue, queue blocked by an abandoned pop]; harms 2 1 1 0
        fifo, lost ack, two messages: 755 states; violated []; not found [paused queue]; harms 2 1 1 0
        fifo, lost pop answer: 233 states; violated []; not found [duplicate delivery, paused queue, queue blocked by an abandoned pop]; harms 1 0 0 0
        fifo, lost pop answer, retried as a new attempt: 179 states; violated []; not found [duplicate delivery, paused queue]; harms 1 0 0 0
        pop share, three consumers, a shared client id: 3450 states; violated [converged when quiescent]; not found [full convergence, duplicate delivery]; harms 1 0 0 1
        ",
    );
}
