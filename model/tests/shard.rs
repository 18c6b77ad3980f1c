//! `--shard I/N`: the shards of one run together explore every reachable
//! state, and reach the same verdicts as the whole run.

use std::collections::HashSet;

use rocketmq_rebalance_model::internals::{describe_path, path_of};
use rocketmq_rebalance_model::{
    check, CheckOptions, RebalanceModel, Scenario, Shard, Status, SystemState,
};
use stateright::Model;

mod common;

use common::config;

/// Every state a model reaches within its boundary, breadth first.
fn reachable(model: &RebalanceModel) -> HashSet<SystemState> {
    let mut seen: HashSet<SystemState> = HashSet::new();
    let mut todo: Vec<SystemState> = model
        .init_states()
        .into_iter()
        .filter(|s| model.within_boundary(s))
        .collect();
    let mut actions = Vec::new();
    while let Some(state) = todo.pop() {
        if !seen.insert(state.clone()) {
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            if let Some(next) = model.next_state(&state, action) {
                if model.within_boundary(&next) && !seen.contains(&next) {
                    todo.push(next);
                }
            }
        }
    }
    seen
}

#[test]
fn the_shards_together_reach_every_state() {
    for scenario in [
        Scenario::Healthy,
        Scenario::PartialPartition,
        Scenario::BrokerScaleOut,
    ] {
        let whole = RebalanceModel::new(config(scenario));
        let everything = reachable(&whole);
        for count in [2, 3] {
            let mut union = HashSet::new();
            for index in 0..count {
                let shard = whole.clone().sharded(Shard { index, count });
                union.extend(reachable(&shard));
            }
            assert_eq!(union, everything, "{scenario} in {count} shards");
        }
    }
}

#[test]
fn the_shards_reach_the_whole_runs_verdicts_with_whole_paths() {
    for scenario in [Scenario::DuplicateClientId, Scenario::PartialPartition] {
        let whole = check(config(scenario), &CheckOptions::default(), |_| {});
        let shards: Vec<_> = (0..3)
            .map(|index| {
                let options = CheckOptions {
                    shard: Some(Shard { index, count: 3 }),
                    ..CheckOptions::default()
                };
                check(config(scenario), &options, |_| {})
            })
            .collect();
        for property in &whole.properties {
            let verdicts: Vec<Status> = shards
                .iter()
                .map(|r| r.property(&property.name).unwrap().status)
                .collect();
            let merged = match property.status {
                Status::Violated | Status::Holds => {
                    if verdicts.contains(&Status::Violated) {
                        Status::Violated
                    } else {
                        Status::Holds
                    }
                }
                _ => {
                    if verdicts.contains(&Status::Found) {
                        Status::Found
                    } else {
                        Status::NotFound
                    }
                }
            };
            assert_eq!(merged, property.status, "{scenario}: {}", property.name);
        }
        // A shard's counterexample starts at the whole model's initial
        // state, so the explorer and the HTML report replay it.
        let violated = shards
            .iter()
            .flat_map(|r| &r.properties)
            .find(|p| p.status == Status::Violated)
            .expect("a counterexample");
        let path = violated.path.as_ref().unwrap();
        assert_eq!(path[0], 0);
        let trace = violated.trace.as_ref().unwrap();
        assert!(trace[0].starts_with("1. "));
        // The trace is that path's, step by step, on the whole model.
        let model = RebalanceModel::new(config(scenario));
        let replayed = path_of(&model, path).expect("a path of the whole model");
        assert_eq!(*trace, describe_path(&model, &replayed), "{scenario}");
    }
}
