//! POP consumption (`--consumption pop`) against push on the same group
//! changes, concurrent and orderly (a FIFO group of POP consumers against
//! orderly push consumers): the tables of `docs/pop.md`, each cell checked
//! here (the orderly push consumers' broker restart, 13 million states, in
//! an opt-in test). Two consumers of one broker's one queue, two messages
//! (one with a broker restart, whose space is larger).

mod common;

use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{
    check,
    configuration::PopClient,
    report::{
        Report, Status, BLOCKED_BY_ABANDONED_POP, CONVERGED_WHEN_QUIESCENT, CONVERGES,
        DUPLICATE_DELIVERY, EVERY_MESSAGE_CONSUMED, IN_ORDER, NO_CONCURRENT_CONSUMPTION,
        NO_DOUBLE_OWNERSHIP, NO_MESSAGE_RUN_TWICE, PAUSED_QUEUE,
    },
    CheckOptions,
};

const GROUP: [&str; 6] = ["--brokers", "1", "--queues", "1", "--consumers", "2"];

/// A FIFO group of POP consumers, one message a queue, no joins.
const FIFO_ONE_MESSAGE: [&str; 7] = [
    "--orderly",
    "--consumption",
    "pop",
    "--messages",
    "1",
    "--joins",
    "0",
];

fn report(flags: &[&str]) -> Report {
    common::complete_report(&[&GROUP[..], flags].concat())
}

fn status(report: &Report, name: &str) -> Option<Status> {
    report.property(name).map(|p| p.status)
}

fn duplicated(report: &Report) -> usize {
    report
        .harms
        .as_ref()
        .expect("measured")
        .max_duplicated_messages
        .value
}

/// One row: a change, and for push, POP (the remoting client's, then the
/// gRPC client's), orderly push and FIFO POP the unique states and the
/// most messages delivered twice.
struct Row {
    change: &'static [&'static str],
    push: (usize, usize),
    pop: (usize, usize),
    grpc: (usize, usize),
    orderly: (usize, usize),
    fifo: (usize, usize),
}

const ROWS: &[Row] = &[
    Row {
        change: &["--messages", "2", "--joins", "1"],
        push: (1_029, 0),
        pop: (6_928, 0),
        grpc: (6_928, 0),
        orderly: (18_790, 0),
        fifo: (5_102, 0),
    },
    Row {
        change: &["--messages", "2", "--joins", "0", "--leaves", "1"],
        push: (112, 0),
        pop: (1_809, 1),
        grpc: (1_204, 0),
        orderly: (737, 0),
        fifo: (881, 0),
    },
    Row {
        change: &["--messages", "2", "--joins", "0", "--crashes", "1"],
        push: (112, 2),
        pop: (1_204, 0),
        grpc: (1_204, 0),
        orderly: (2_015, 2),
        fifo: (881, 0),
    },
    Row {
        change: &["--messages", "2", "--joins", "0", "--kills", "1"],
        push: (112, 2),
        pop: (1_204, 0),
        grpc: (1_204, 0),
        orderly: (2_015, 2),
        fifo: (881, 0),
    },
    Row {
        change: &["--messages", "2", "--scenario", "rolling-upgrade"],
        push: (3_810, 1),
        pop: (26_985, 1),
        grpc: (20_434, 0),
        orderly: (80_630, 1),
        fifo: (15_309, 0),
    },
    Row {
        change: &["--messages", "1", "--joins", "0", "--broker-restarts", "1"],
        push: (53_834, 1),
        pop: (635_827, 1),
        grpc: (635_827, 1),
        orderly: (13_061_132, 1),
        fifo: (6_342_603, 1),
    },
    Row {
        change: &["--messages", "2", "--scenario", "duplicate-client-id"],
        push: (8_400, 2),
        pop: (6_928, 0),
        grpc: (6_928, 0),
        orderly: (715_944, 2),
        fifo: (5_102, 0),
    },
];

/// Each change, checked each way (push, the remoting client's POP, the
/// gRPC client's POP): the states, the duplicates, and that
/// POP never runs one message in two batches at once (no handle expires
/// without a fault of POP's own), while a shared client id leaves push
/// with a queue owned twice at rest.
#[test]
fn push_against_pop_on_each_group_change() {
    for row in ROWS {
        let push = report(row.change);
        let pop = report(&[row.change, &["--consumption", "pop"]].concat());
        let grpc = report(
            &[
                row.change,
                &["--consumption", "pop", "--pop-client", "grpc"],
            ]
            .concat(),
        );
        let measured = (
            (push.unique_states, duplicated(&push)),
            (pop.unique_states, duplicated(&pop)),
            (grpc.unique_states, duplicated(&grpc)),
        );
        assert_eq!(measured, (row.push, row.pop, row.grpc), "{:?}", row.change);
        let found = |r: &Report| status(r, DUPLICATE_DELIVERY) == Some(Status::Found);
        assert_eq!(found(&push), row.push.1 > 0, "{:?}", row.change);
        assert_eq!(found(&pop), row.pop.1 > 0, "{:?}", row.change);
        assert_eq!(status(&pop, NO_MESSAGE_RUN_TWICE), Some(Status::Holds));
        assert_eq!(status(&pop, NO_DOUBLE_OWNERSHIP), None, "push's property");
        let shared = row.change.contains(&"duplicate-client-id");
        let owned_twice = status(&push, NO_DOUBLE_OWNERSHIP) == Some(Status::Violated);
        assert_eq!(owned_twice, shared, "{:?}", row.change);
    }
}

/// The same changes, orderly: orderly push consumers against a FIFO group
/// of POP consumers. The FIFO group keeps the order, and runs a queue
/// twice at once only across a broker restart (through the proxy, below);
/// orderly push consumers run a queue twice at once in a rolling upgrade
/// and with a shared client id.
#[test]
fn orderly_push_against_fifo_pop_on_each_group_change() {
    for row in ROWS.iter().filter(|r| r.orderly.0 < LARGE) {
        check_orderly(row);
    }
}

/// The orderly push consumers' broker restart: 13 million states, about a
/// minute on two cores (`cargo test --release -p rocketmq-rebalance-flags
/// --test pop -- --ignored`).
#[test]
#[ignore]
fn orderly_push_against_fifo_pop_on_a_broker_restart() {
    for row in ROWS.iter().filter(|r| r.orderly.0 >= LARGE) {
        check_orderly(row);
    }
}

/// A broker restart and a broker crash, for a FIFO group, with the
/// proxy as it is and with a proxy that keeps the group's config
/// (`proxy-keeps-group-config`). As it is, both run the queue's message at
/// two consumers at once: the proxy, whose reload met the cluster's only
/// broker down, takes the group for a concurrent one and pops the queue
/// without its block. With the remedy the clean restart holds, and the
/// crash still breaks the block: it loses the order info of the queue's
/// last pop, so the other consumer pops the message whose batch still
/// runs. The order of each consumer's runs is kept. Unique states.
#[test]
fn a_broker_restart_or_crash_runs_a_fifo_queue_twice_at_once() {
    let keeps = ["--variant", "proxy-keeps-group-config"];
    for (stop, remedy, unique, at_once) in [
        ("--broker-restarts", false, 6_342_603, Status::Violated),
        ("--broker-restarts", true, 635_827, Status::Holds),
        ("--broker-crashes", true, 865_317, Status::Violated),
    ] {
        let remedy: &[&str] = if remedy { &keeps } else { &[] };
        let r = report(&[&FIFO_ONE_MESSAGE[..], &[stop, "1"], remedy].concat());
        assert_eq!(r.unique_states, unique, "{stop} {remedy:?}");
        for (name, expected) in [
            (NO_CONCURRENT_CONSUMPTION, at_once),
            (NO_MESSAGE_RUN_TWICE, at_once),
            (IN_ORDER, Status::Holds),
        ] {
            assert_eq!(
                status(&r, name),
                Some(expected),
                "{name}: {stop} {remedy:?}"
            );
        }
    }
}

/// A FIFO queue waits out its invisible time when the handle that blocks
/// it is one nobody will settle: the consumer holding it killed, its
/// acknowledgement lost, or its pop's answer lost and retried as a new
/// attempt (the gRPC client before attempt ids); the same retry with the
/// lost pop's attempt id re-enters the queue. Unique states, and whether
/// a pop is refused for such a handle.
#[test]
fn a_fifo_queue_waits_out_a_pop_nobody_settles() {
    let without_id = ["--variant", "fifo-pop-without-attempt-id"];
    let lost_answer = ["--lost-pop-answers", "1"];
    for (fault, unique, blocked) in [
        (&[][..], 55, Status::NotFound),
        (&["--kills", "1"][..], 356, Status::Found),
        (&["--lost-acks", "1"][..], 230, Status::Found),
        (&lost_answer[..], 233, Status::NotFound),
        (
            &[&lost_answer[..], &without_id].concat()[..],
            179,
            Status::Found,
        ),
    ] {
        let r = report(&[&FIFO_ONE_MESSAGE[..], fault].concat());
        assert_eq!(r.unique_states, unique, "{fault:?}");
        assert_eq!(
            status(&r, BLOCKED_BY_ABANDONED_POP),
            Some(blocked),
            "{fault:?}"
        );
        assert_eq!(status(&r, IN_ORDER), Some(Status::Holds), "{fault:?}");
    }
}

/// Spaces above this are left to the opt-in test.
const LARGE: usize = 1_000_000;

fn check_orderly(row: &Row) {
    let orderly = report(&[row.change, &["--orderly"]].concat());
    let fifo = report(&[row.change, &["--orderly", "--consumption", "pop"]].concat());
    let measured = (
        (orderly.unique_states, duplicated(&orderly)),
        (fifo.unique_states, duplicated(&fifo)),
    );
    assert_eq!(measured, (row.orderly, row.fifo), "{:?}", row.change);
    let restart = row.change.contains(&"--broker-restarts");
    let at_once = if restart {
        Status::Violated
    } else {
        Status::Holds
    };
    for (name, expected) in [
        (NO_CONCURRENT_CONSUMPTION, at_once),
        (IN_ORDER, Status::Holds),
        (NO_MESSAGE_RUN_TWICE, at_once),
    ] {
        assert_eq!(
            status(&fifo, name),
            Some(expected),
            "{name}: {:?}",
            row.change
        );
    }
    let twice_at_once = [
        "rolling-upgrade",
        "duplicate-client-id",
        "--broker-restarts",
    ]
    .iter()
    .any(|change| row.change.contains(change));
    let violated = status(&orderly, NO_CONCURRENT_CONSUMPTION) == Some(Status::Violated);
    assert_eq!(violated, twice_at_once, "{:?}", row.change);
}

/// POP's own faults: a lost acknowledgement and a failed batch bring a
/// consumed message back; a batch past its invisible time also runs
/// beside the batch of the consumer that popped it again, and in a FIFO
/// group that is its queue consumed by two at once.
#[test]
fn pop_faults_bring_messages_back() {
    let base = ["--messages", "2", "--joins", "0", "--consumption", "pop"];
    for (fifo, fault, unique, at_once) in [
        (false, "--lost-acks", 1_147, Status::Holds),
        (false, "--consume-failures", 1_147, Status::Holds),
        (false, "--slow-batches", 988, Status::Violated),
        (true, "--lost-acks", 755, Status::Holds),
        (true, "--consume-failures", 755, Status::Holds),
        (true, "--slow-batches", 643, Status::Violated),
    ] {
        let orderly: &[&str] = if fifo { &["--orderly"] } else { &[] };
        let r = report(&[&base[..], orderly, &[fault, "1"]].concat());
        assert_eq!(r.unique_states, unique, "{fault} {orderly:?}");
        assert_eq!(duplicated(&r), 1, "{fault}");
        assert_eq!(status(&r, NO_MESSAGE_RUN_TWICE), Some(at_once), "{fault}");
        let queue_twice = status(&r, NO_CONCURRENT_CONSUMPTION);
        assert_eq!(queue_twice, fifo.then_some(at_once), "{fault} {orderly:?}");
    }
}

/// With `popShareQueueNum` above 0 the broker assigns each consumer its
/// own share and its neighbours' in the sorted client ids, found by
/// `indexOf`: two consumers with one client id get the same queues, and a
/// third queue is consumed by nobody at rest, as push's shared id leaves
/// it. With every queue to every consumer (the default) nothing is.
#[test]
fn a_pop_share_has_push_s_shared_client_id_collision() {
    let group = [
        "--messages",
        "1",
        "--brokers",
        "1",
        "--queues",
        "3",
        "--consumers",
        "3",
        "--joins",
        "0",
        "--consumption",
        "pop",
    ];
    let shared = ["--scenario", "duplicate-client-id"];
    let share = ["--pop-share-queue-num", "1"];
    let with_share = common::complete_report(&[&group[..], &shared, &share].concat());
    assert_eq!(with_share.unique_states, 3_450);
    assert_eq!(
        status(&with_share, CONVERGED_WHEN_QUIESCENT),
        Some(Status::Violated)
    );
    assert_eq!(status(&with_share, PAUSED_QUEUE), Some(Status::Found));
    let distinct = common::complete_report(&[&group[..], &share].concat());
    assert_eq!(distinct.unique_states, 346_523);
    assert_eq!(
        status(&distinct, CONVERGED_WHEN_QUIESCENT),
        Some(Status::Holds)
    );
    assert_eq!(status(&distinct, PAUSED_QUEUE), Some(Status::NotFound));
}

/// Under fairness every message is consumed and acknowledged, and the
/// group converges, whatever POP's own faults did, and after a crash.
#[test]
fn pop_faults_leave_every_message_consumed_under_fairness() {
    let base = ["--messages", "2", "--joins", "0", "--consumption", "pop"];
    for fault in [
        "--lost-acks",
        "--consume-failures",
        "--slow-batches",
        "--lost-pop-answers",
        "--crashes",
    ] {
        for orderly in [&[][..], &["--orderly"]] {
            let flags = [&GROUP[..], &base, orderly, &[fault, "1"]].concat();
            let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
            let config = ModelArgs::config_from(&flags).expect("a configuration");
            let options = CheckOptions {
                threads: 2,
                liveness: true,
                ..CheckOptions::default()
            };
            let r = check(config, &options, |_| {});
            assert!(r.complete(), "{flags:?}");
            for name in [EVERY_MESSAGE_CONSUMED, CONVERGES] {
                assert_eq!(status(&r, name), Some(Status::Holds), "{name}: {flags:?}");
            }
        }
    }
}

/// A FIFO group's consumers are gRPC clients, asked for or not; a
/// concurrent POP group's are the remoting client's unless asked.
#[test]
fn a_fifo_groups_consumers_are_grpc_clients() {
    for (flags, client) in [
        (&["--orderly"][..], PopClient::Grpc),
        (&["--orderly", "--pop-client", "grpc"][..], PopClient::Grpc),
        (&[][..], PopClient::Remoting),
        (&["--pop-client", "grpc"][..], PopClient::Grpc),
    ] {
        let base = ["--consumption", "pop", "--messages", "1"];
        let flags: Vec<String> = base.iter().chain(flags).map(|f| f.to_string()).collect();
        let config = ModelArgs::config_from(&flags).expect("a configuration");
        assert_eq!(config.protocol.pop_client, client, "{flags:?}");
        assert!(config.protocol.grpc_clients() == (client == PopClient::Grpc));
    }
}

/// What POP does not model, or cannot mean, is refused with the flag to
/// change.
#[test]
fn pop_refuses_what_it_does_not_model() {
    for (flags, words) in [
        (&["--consumption", "pop"][..], "needs messages"),
        (
            &["--consumption", "pop", "--orderly", "--lock-renew", "1"][..],
            "no locks",
        ),
        (
            &["--consumption", "pop", "--scenario", "slow-batch"][..],
            "needs orderly consumption",
        ),
        (
            &[
                "--consumption",
                "pop",
                "--messages",
                "1",
                "--assignment",
                "client",
            ][..],
            "--assignment server",
        ),
        (
            &[
                "--consumption",
                "pop",
                "--messages",
                "1",
                "--commit",
                "sync",
            ][..],
            "--commit sync",
        ),
        (
            &[
                "--consumption",
                "pop",
                "--messages",
                "1",
                "--lost-persists",
                "1",
            ][..],
            "lost persists",
        ),
        (
            &["--messages", "1", "--lost-acks", "1"][..],
            "--consumption pop",
        ),
        (
            &[
                "--messages",
                "1",
                "--consumption",
                "pop",
                "--broker-crashes",
                "1",
            ][..],
            "--broker-crashes needs a FIFO group",
        ),
        (
            &["--messages", "1", "--orderly", "--broker-crashes", "1"][..],
            "--broker-crashes needs a FIFO group",
        ),
        (
            &["--messages", "1", "--pop-client", "grpc"][..],
            "gRPC POP clients (--pop-client grpc) and push consumption",
        ),
        (
            &[
                "--messages",
                "1",
                "--consumption",
                "pop",
                "--pop-client",
                "grpc",
                "--pop-share-queue-num",
                "1",
            ][..],
            "gRPC clients (the proxy gives each every queue",
        ),
        (
            &[
                "--messages",
                "1",
                "--consumption",
                "pop",
                "--orderly",
                "--pop-client",
                "remoting",
            ][..],
            "a FIFO group's consumers are gRPC clients",
        ),
    ] {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        let error = ModelArgs::config_from(&flags).expect_err("refused");
        assert!(error.contains(words), "{flags:?}: {error}");
    }
}
