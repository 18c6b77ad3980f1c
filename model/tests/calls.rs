//! Calls that fail, fail: a call whose connection closes, or whose broker
//! is stopped, fails at once for its caller, with Java's own retry, and no
//! state waits for an answer that can no longer come. Each retry is then
//! removed in turn (a mutant of `ProtocolOptions::calls_fail`): the caller
//! waits for ever, which `every call answered or failed` refuses, and the
//! liveness verdict that the retry kept flips.

use rocketmq_rebalance_model::{
    configuration::{
        Call, CallSet, Commit, Config, Dense, LockTiming, ProtocolOptions, Scenario, Sizes,
    },
    report::{
        Status, CONVERGES, EVERY_CALL_ENDS, EVERY_MESSAGE_CONSUMED, EVERY_QUEUE_CONSUMED_AGAIN,
    },
};

mod common;

use common::{config_with, run, status};

/// One broker that restarts and one consumer: the smallest group in which
/// each call can be lost.
fn restart(call: Call) -> (Sizes, ProtocolOptions) {
    let sizes = Sizes {
        consumers: 1,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        broker_restarts: 1,
        ..Sizes::default()
    };
    let protocol = ProtocolOptions::default();
    match call {
        // The member query of a consumer that joins, lost to the restart.
        Call::Query => (
            Sizes {
                joins: Some(1),
                ..sizes
            },
            protocol,
        ),
        // The lock of the queue it joins for.
        Call::Lock => (
            Sizes {
                joins: Some(1),
                messages: 1,
                ..sizes
            },
            ProtocolOptions {
                orderly: Some(LockTiming::default()),
                ..protocol
            },
        ),
        // The offset read of the queue it joins for (the command).
        Call::OffsetRead => (
            Sizes {
                joins: Some(1),
                messages: 1,
                ..sizes
            },
            protocol,
        ),
        // A pull, to a broker that stops.
        Call::Pull => (
            Sizes {
                messages: 2,
                ..sizes
            },
            ProtocolOptions {
                pull_requests: true,
                restart_stops: true,
                ..protocol
            },
        ),
        // A synchronous commit.
        Call::Commit => (
            Sizes {
                messages: 2,
                ..sizes
            },
            ProtocolOptions {
                commit: Commit::Sync,
                ..protocol
            },
        ),
        // A failed batch's send-back, to a broker that stops.
        Call::SendBack => (
            Sizes {
                messages: 2,
                consume_failures: 1,
                ..sizes
            },
            ProtocolOptions {
                restart_stops: true,
                ..protocol
            },
        ),
    }
}

/// The liveness property the call's retry keeps.
fn kept_by(call: Call) -> &'static str {
    match call {
        Call::Query => CONVERGES,
        Call::Lock => EVERY_QUEUE_CONSUMED_AGAIN,
        Call::OffsetRead | Call::Pull | Call::Commit | Call::SendBack => EVERY_MESSAGE_CONSUMED,
    }
}

fn check(call: Call, calls_fail: CallSet) -> (Status, Status) {
    let (sizes, protocol) = restart(call);
    let protocol = ProtocolOptions {
        calls_fail,
        ..protocol
    };
    let cfg: Config = config_with(Scenario::BrokerRestart, sizes, "AVG", protocol);
    let report = run(cfg, true);
    (
        status(&report, EVERY_CALL_ENDS),
        status(&report, kept_by(call)),
    )
}

#[test]
fn every_lost_call_fails_and_each_retry_keeps_its_liveness_verdict() {
    let all: CallSet = Call::all().collect();
    for call in Call::all() {
        assert_eq!(
            check(call, all),
            (Status::Holds, Status::Holds),
            "{call:?}: with every retry"
        );
        let (ends, kept) = check(call, all.without(call));
        assert_eq!(ends, Status::Violated, "{call:?} without its retry waits");
        assert_eq!(kept, Status::Violated, "{call:?} without its retry");
    }
}

/// A member query in flight to a broker that stops, whose consumer takes
/// the route without that broker before it sees the connection close: it
/// stops using that connection (its next one there is a new one), and the
/// close still fails the query made on it, as Java's channel fails the
/// calls it carries. Before, the close was ignored as an old connection's,
/// the query waited for ever, and the group was reported never to
/// converge. First seen beside a kill (`healthy --consumers 2 --joins 0
/// --queues 1 --kills 1 --broker-restarts 1 --restart-stops`); this is
/// the smallest group.
#[test]
fn a_query_fails_when_its_connection_closes_after_the_route_dropped_its_broker() {
    let sizes = Sizes {
        consumers: 1,
        brokers: 2,
        queues: 1,
        joins: Some(1),
        broker_restarts: 1,
        ..Sizes::default()
    };
    let protocol = ProtocolOptions {
        restart_stops: true,
        ..ProtocolOptions::default()
    };
    let report = run(config_with(Scenario::Healthy, sizes, "AVG", protocol), true);
    assert_eq!(status(&report, EVERY_CALL_ENDS), Status::Holds);
    assert_eq!(status(&report, CONVERGES), Status::Holds);
}
