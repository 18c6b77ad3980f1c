//! `STICKY`'s exact assignments. Consumers of one group compute the
//! assignment each on their own, possibly running different releases of
//! this crate, so the result for given lists is part of the contract: the
//! hashes and the matching that `Sticky`'s documentation defines. The
//! expected owners below were also computed by an independent
//! reimplementation of that documented algorithm.

use rocketmq_rebalance::strategy::Sticky;
use rocketmq_rebalance::workload::{client_ids, queues};
use rocketmq_rebalance::MessageQueue;

/// Each queue's owner, one base-36 digit (its position among the
/// consumers) per queue, in queue order.
fn owners(sticky: &Sticky, queues: &[MessageQueue], consumers: &[String]) -> String {
    sticky
        .assign(queues, consumers)
        .into_iter()
        .map(|o| std::char::from_digit(o as u32, 36).expect("fewer than 36 consumers"))
        .collect()
}

/// `brokers` brokers of `per_broker` queues of `TopicTest`, and `consumers`
/// client ids, both as `workload` builds them.
fn group(brokers: usize, per_broker: usize, consumers: usize) -> (Vec<MessageQueue>, Vec<String>) {
    (
        queues("TopicTest", brokers, per_broker),
        client_ids(consumers),
    )
}

#[test]
fn exact_balance_assigns_these_owners() {
    let cases = [
        ((2, 4, 3), "11010022"),
        ((4, 8, 5), "11014444002220301013243431232324"),
        // 32 queues for 8 consumers: every load is exactly 4.
        ((4, 8, 8), "11074564102526706063253431753724"),
        (
            (6, 10, 11),
            "229a56751aa1379a800071a93645381192783a4842615759246388030546",
        ),
        // Fewer queues than consumers: loads 0 or 1.
        ((3, 1, 5), "201"),
    ];
    for ((b, q, c), expected) in cases {
        let (qs, cs) = group(b, q, c);
        assert_eq!(owners(&Sticky::new(), &qs, &cs), expected, "{b}x{q}x{c}");
    }
}

#[test]
fn a_wider_window_assigns_these_owners() {
    let cases = [
        (3, (4, 8, 5), "11014444002220301013243430232324"),
        (2, (4, 8, 5), "11014444002220301013243430232324"),
        (
            3,
            (6, 10, 11),
            "229a56751aa1399a800071a43645381199783a4842615956246388030546",
        ),
        (3, (3, 2, 5), "110010"),
    ];
    for (slack, (b, q, c), expected) in cases {
        let (qs, cs) = group(b, q, c);
        assert_eq!(
            owners(&Sticky::with_slack(slack), &qs, &cs),
            expected,
            "slack {slack}, {b}x{q}x{c}"
        );
    }
}

#[test]
fn more_than_a_hundred_consumers_still_match_on_the_ring() {
    let (qs, cs) = group(3, 100, 130);
    let owners = Sticky::new().assign(&qs, &cs);
    assert_eq!(
        owners[..12],
        [28, 123, 118, 39, 56, 94, 35, 92, 12, 90, 25, 10]
    );
    let mut loads = vec![0; cs.len()];
    for o in owners {
        loads[o] += 1;
    }
    assert!(loads.iter().all(|&l| l == 2 || l == 3), "{loads:?}");
}

#[test]
fn a_repeated_id_is_owner_at_its_first_position() {
    let (qs, mut cs) = group(2, 4, 3);
    cs.insert(0, cs[2].clone());
    // "11010022" with every owner renumbered: the third consumer, now
    // listed first too, owns at position 0.
    assert_eq!(owners(&Sticky::new(), &qs, &cs), "22121100");
}

#[test]
fn no_consumers_or_no_queues_assign_nothing() {
    let (qs, cs) = group(2, 4, 3);
    assert_eq!(Sticky::new().assign(&qs, &[]), Vec::<usize>::new());
    assert_eq!(Sticky::new().assign(&[], &cs), Vec::<usize>::new());
}

#[test]
fn load_bounds_are_the_window_around_the_mean() {
    assert_eq!(Sticky::new().load_bounds(10, 3), (3, 4));
    assert_eq!(Sticky::new().load_bounds(9, 3), (3, 4));
    assert_eq!(Sticky::new().load_bounds(2, 5), (0, 1));
    assert_eq!(Sticky::with_slack(2).load_bounds(10, 3), (2, 4));
    assert_eq!(Sticky::with_slack(3).load_bounds(10, 3), (1, 4));
    assert_eq!(Sticky::with_slack(4).load_bounds(100, 8), (10, 14));
    // The window does not go below zero.
    assert_eq!(Sticky::with_slack(5).load_bounds(4, 2), (0, 5));
    assert_eq!(Sticky::with_slack(3).load_bounds(7, 0), (0, 0));
}
