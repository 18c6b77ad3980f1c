//! `STICKY` against its promises: a partition with loads within the slack
//! window, the same answer whatever the input order, one consumer's call
//! equal to its part of the group's, and few queues moved when a consumer
//! joins or leaves or the topic grows.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use rocketmq_rebalance::strategy::Sticky;
use rocketmq_rebalance::{
    rebalance_allocate_group, strategy_from_name, AllocateStrategy, MessageQueue, SplitMix64,
};
use rocketmq_rebalance_properties::strategy::{
    group_matches_per_consumer, is_deterministic, is_order_independent,
};
use rocketmq_rebalance_properties::{balance, is_partition, moved, movement_lower_bound};

/// Client ids in RocketMQ's `ip@pid` shape and a few odd ones.
fn client_id() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0u8..4, any::<u8>(), 1u32..70_000).prop_map(|(a, b, pid)| format!("10.0.{a}.{b}@{pid}")),
        1 => "[a-z0-9@.中\u{1F600}-]{1,8}",
    ]
}

fn queue() -> impl Strategy<Value = MessageQueue> {
    (
        prop::sample::select(vec!["TopicTest", "%RETRY%g", "T"]),
        prop::sample::select(vec!["broker-a", "broker-b", "broker-c", "b中"]),
        0i32..64,
    )
        .prop_map(|(t, b, id)| MessageQueue::new(t, b, id))
}

/// Distinct queues and distinct non-empty client ids, sorted as RocketMQ
/// sorts them before allocating.
fn group(
    queues: std::ops::Range<usize>,
    consumers: std::ops::Range<usize>,
) -> impl Strategy<Value = (Vec<MessageQueue>, Vec<String>)> {
    (
        prop::collection::btree_set(queue(), queues),
        prop::collection::btree_set(client_id(), consumers),
    )
        .prop_map(|(q, c)| (q.into_iter().collect(), c.into_iter().collect()))
}

fn shares(
    strategy: &Sticky,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Vec<(String, Vec<MessageQueue>)> {
    rebalance_allocate_group(strategy, "g", queues, consumers).expect("a valid group")
}

/// The most queues above the lower bound that one change may move: about
/// twice the worst seen in 4,500 random groups of 2 to 40 consumers and 1
/// to 1,000 queues (2.3 √Q). No theorem behind it; a regression guard.
fn allowed_extra(queues: usize) -> usize {
    (4.0 * (queues as f64).sqrt()).ceil() as usize + 2
}

proptest! {
    #![proptest_config(Config { cases: 96, ..Config::default() })]

    #[test]
    fn partition_with_balance_at_most_one((q, c) in group(1..120, 1..30)) {
        let s = shares(&Sticky::new(), &q, &c);
        let just_shares: Vec<&Vec<MessageQueue>> = s.iter().map(|(_, share)| share).collect();
        prop_assert!(is_partition(&q, &just_shares));
        prop_assert!(balance(&just_shares) <= 1);
    }

    #[test]
    fn partition_within_the_slack_window(
        (q, c) in group(1..120, 1..30),
        slack in 1usize..8,
    ) {
        let sticky = Sticky::with_slack(slack);
        let (lo, hi) = sticky.load_bounds(q.len(), c.len());
        let s = shares(&sticky, &q, &c);
        let just_shares: Vec<&Vec<MessageQueue>> = s.iter().map(|(_, share)| share).collect();
        prop_assert!(is_partition(&q, &just_shares));
        prop_assert!(balance(&just_shares) <= slack);
        prop_assert!(just_shares.iter().all(|share| lo <= share.len() && share.len() <= hi));
    }

    #[test]
    fn deterministic_order_independent_and_per_consumer_equals_group(
        (q, c) in group(1..80, 1..20),
        seed in any::<u64>(),
        slack in 1usize..4,
    ) {
        let sticky = Sticky::with_slack(slack);
        let mut q2 = q.clone();
        let mut c2 = c.clone();
        q2.rotate_left((seed as usize) % q.len());
        c2.rotate_left((seed as usize >> 8) % c.len());
        if seed & 1 == 1 { q2.reverse(); }
        if seed & 2 == 2 { c2.reverse(); }
        prop_assert!(is_deterministic(&sticky, &q, &c));
        prop_assert!(is_order_independent(&sticky, &q, &c, &q2, &c2));
        prop_assert!(group_matches_per_consumer(&sticky, &q, &c));
        // Not only after the sort: the strategy itself ignores list order.
        let mut direct = sticky.allocate_group("g", &q2, &c2).expect("valid");
        for share in &mut direct { share.sort(); }
        let by_id: std::collections::BTreeMap<&String, Vec<&MessageQueue>> = c2.iter().zip(direct).collect();
        let sorted = sticky.allocate_group("g", &q, &c).expect("valid");
        for (id, share) in c.iter().zip(sorted) {
            prop_assert_eq!(&by_id[id], &share);
        }
    }

    #[test]
    fn an_id_listed_twice_is_one_consumer((q, c) in group(1..60, 1..10), pick in any::<usize>()) {
        let mut twice = c.clone();
        twice.push(c[pick % c.len()].clone());
        let sticky = Sticky::new();
        let once = sticky.allocate_group("g", &q, &c).expect("valid");
        let with_repeat = sticky.allocate_group("g", &q, &twice).expect("valid");
        prop_assert_eq!(&with_repeat[..c.len()], &once[..]);
        prop_assert_eq!(&with_repeat[c.len()], &once[pick % c.len()]);
    }

    #[test]
    fn the_name_table_knows_sticky((q, c) in group(1..40, 1..8)) {
        let named = strategy_from_name("STICKY").expect("listed");
        prop_assert_eq!(named.name(), "STICKY");
        let direct = Sticky::new();
        prop_assert_eq!(
            named.allocate_group("g", &q, &c).expect("valid"),
            direct.allocate_group("g", &q, &c).expect("valid")
        );
        for k in 2..6 {
            let windowed = strategy_from_name(&format!("STICKY-{k}")).expect("a window");
            let direct = Sticky::with_slack(k);
            prop_assert_eq!(windowed.name(), direct.name());
        }
        prop_assert!(strategy_from_name("STICKY-1").is_err());
        prop_assert!(strategy_from_name("STICKY-x").is_err());
    }
}

proptest! {
    // Movement has no proven bound, so these run on a fixed seed: a
    // regression guard that cannot flake.
    #![proptest_config(Config { rng_seed: RngSeed::Fixed(6), cases: 64, ..Config::default() })]

    #[test]
    fn a_join_moves_little_more_than_the_joiners_share(
        (q, c) in group(1..250, 2..30),
        joiner in client_id(),
    ) {
        prop_assume!(!c.contains(&joiner));
        let sticky = Sticky::new();
        let mut after = c.clone();
        after.push(joiner);
        let (b, a) = (shares(&sticky, &q, &c), shares(&sticky, &q, &after));
        let (m, bound) = (moved(&b, &a), movement_lower_bound(&b, &a));
        prop_assert!(m >= bound);
        prop_assert!(m <= bound + allowed_extra(q.len()), "moved {m}, bound {bound}");
    }

    #[test]
    fn a_leave_moves_little_more_than_the_leavers_share(
        (q, c) in group(1..250, 2..30),
        pick in any::<usize>(),
    ) {
        let sticky = Sticky::new();
        let mut after = c.clone();
        after.remove(pick % c.len());
        let (b, a) = (shares(&sticky, &q, &c), shares(&sticky, &q, &after));
        let (m, bound) = (moved(&b, &a), movement_lower_bound(&b, &a));
        prop_assert!(m >= bound);
        prop_assert!(m <= bound + allowed_extra(q.len()), "moved {m}, bound {bound}");
    }

    #[test]
    fn growth_moves_little_more_than_the_new_queues(
        (q, c) in group(1..250, 1..30),
        extra in prop::collection::btree_set(queue(), 1..40),
    ) {
        let sticky = Sticky::new();
        let mut grown: Vec<MessageQueue> = q.iter().cloned().chain(extra).collect();
        grown.sort();
        grown.dedup();
        let (b, a) = (shares(&sticky, &q, &c), shares(&sticky, &grown, &c));
        let (m, bound) = (moved(&b, &a), movement_lower_bound(&b, &a));
        prop_assert!(m >= bound);
        prop_assert!(m <= bound + allowed_extra(grown.len()), "moved {m}, bound {bound}");
    }
}

/// The average over a fixed sample of realistic groups stays where
/// `docs/sticky.md` says it is (1.73 mean, 1.39 total for joins there).
#[test]
fn average_join_and_leave_movement_stays_near_the_published_figures() {
    let sticky = Sticky::new();
    let mut draws = SplitMix64::new(7);
    let mut next = move || draws.next_u64();
    let (mut ratio_sum, mut cases, mut moved_total, mut bound_total) =
        (0.0, 0usize, 0usize, 0usize);
    for _ in 0..30 {
        let n = 2 + (next() % 39) as usize;
        let m = 64 + (next() % 937) as usize;
        let q: Vec<MessageQueue> = (0..m)
            .map(|k| MessageQueue::new("TopicTest", format!("broker-{}", k % 8), (k / 8) as i32))
            .collect();
        let c: Vec<String> = (0..=n)
            .map(|_| {
                let r = next();
                format!(
                    "10.{}.{}.{}@{}",
                    r & 255,
                    (r >> 8) & 255,
                    (r >> 16) & 255,
                    (r >> 24) % 60_000
                )
            })
            .collect();
        let before = shares(&sticky, &q, &c[..n]);
        for after_ids in [c.clone(), c[1..n].to_vec()] {
            let after = shares(&sticky, &q, &after_ids);
            let (mv, bound) = (
                moved(&before, &after),
                movement_lower_bound(&before, &after),
            );
            if bound > 0 {
                ratio_sum += mv as f64 / bound as f64;
                cases += 1;
            }
            moved_total += mv;
            bound_total += bound;
        }
    }
    let mean = ratio_sum / cases as f64;
    let total = moved_total as f64 / bound_total as f64;
    assert!(mean < 1.9, "mean ratio {mean}");
    assert!(total < 1.5, "total ratio {total}");
}
