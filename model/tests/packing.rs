//! The safety search keeps states packed: each as the ids of its parts
//! (`shell/fingerprint.rs`'s `Part`, through `search/packed.rs`). The round
//! trip must be exact and the record must tell states apart: over every
//! reachable state of every scenario at two consumers (and with a message,
//! and on the other networks), a state decodes to itself, and two states
//! share a record only when they are equal. And the threads that share the
//! search's tables find the same on any number of them.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use rocketmq_rebalance::strategy_from_name;

use rocketmq_rebalance_model::internals::{Classify, Codec, Graph, Interner, Limits, Packing};
use rocketmq_rebalance_model::{
    build_model,
    configuration::{Config, NetworkKind, Scenario, Sizes},
    Action, RebalanceModel, SystemState,
};

/// Every state, no fairness: only the states are wanted.
struct Every;

impl Classify<RebalanceModel> for Every {
    fn class(&self, _: &RebalanceModel, _: &SystemState, _: &Action) -> Option<u64> {
        None
    }
    fn good(&self, _: &RebalanceModel, _: &SystemState) -> bool {
        true
    }
}

/// Encodes and decodes every reachable state of `model`; the states.
fn round_trip_everywhere(name: &str, model: &RebalanceModel) -> usize {
    let interner = Interner::new(16);
    let mut codec = Codec::new(model, &interner);
    let mut by_record: HashMap<Vec<u32>, SystemState> = HashMap::new();
    let limits = Limits {
        threads: 2,
        ..Limits::default()
    };
    let graph = Graph::explore_observing(model, &Every, limits, &mut |_, _, state| {
        let mut record = vec![0; model.parts()];
        codec
            .encode(state, &mut record)
            .expect("room for the parts");
        assert_eq!(codec.decode(&record).as_ref(), Some(state), "{name}");
        if let Some(other) = by_record.insert(record, state.clone()) {
            assert_eq!(&other, state, "{name}: two states, one record");
        }
    });
    assert!(graph.cutoff.is_none(), "{name}: explored whole");
    assert_eq!(by_record.len(), graph.len(), "{name}: a record a state");
    graph.len()
}

#[test]
fn every_reachable_state_survives_the_round_trip_and_keeps_its_own_record() {
    let mut states = 0;
    for &scenario in Scenario::ALL {
        let defaults = scenario.default_sizes();
        let sizes = Sizes {
            consumers: defaults.consumers.min(2),
            ..defaults
        };
        if scenario.default_protocol().orderly.is_some() {
            continue;
        }
        let cfg = common::config_with(scenario, sizes, "AVG", scenario.default_protocol());
        states += round_trip_everywhere(scenario.name(), &build_model(cfg));
    }
    let small = Sizes {
        consumers: 2,
        brokers: 1,
        queues: 1,
        messages: 1,
        ..Sizes::DEFAULT
    };
    let cfg = common::config_with(Scenario::Healthy, small, "AVG", Default::default());
    states += round_trip_everywhere("one message", &build_model(cfg));
    for network in [NetworkKind::Unordered, NetworkKind::Duplicating] {
        let strategy = Arc::from(strategy_from_name("AVG").expect("a strategy"));
        let cfg = Config::new_with(
            Scenario::Healthy,
            small,
            network,
            strategy,
            Default::default(),
        )
        .expect("a configuration");
        states += round_trip_everywhere("another network", &build_model(cfg));
    }
    assert!(states > 100_000, "{states} states");
}

/// The search's threads share its tables without a lock: on one, two and
/// three threads it generates the same transitions, finds the same states
/// and reports the same verdicts and paths (the level is split among the
/// threads in chunks of 512 states, so the default check's levels are
/// shared by all of them).
#[test]
fn one_two_and_three_threads_find_the_same() {
    for scenario in [Scenario::Healthy, Scenario::DuplicateClientId] {
        let run = |threads| {
            let options = rocketmq_rebalance_model::CheckOptions {
                threads,
                ..Default::default()
            };
            rocketmq_rebalance_model::check(common::config(scenario), &options, |_| {})
        };
        let one = run(1);
        for threads in [2, 3] {
            let many = run(threads);
            assert_eq!(
                (many.states, many.unique_states, many.max_depth),
                (one.states, one.unique_states, one.max_depth),
                "{scenario:?}, {threads} threads"
            );
            for (a, b) in many.properties.iter().zip(&one.properties) {
                assert_eq!((&a.status, &a.path), (&b.status, &b.path), "{}", a.name);
            }
        }
    }
}
