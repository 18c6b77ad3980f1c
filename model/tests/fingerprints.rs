//! Stateright keeps a state's fingerprint, not the state: two states with
//! one hash would be explored as one, and the check would be unsound with
//! every other test green. The hashes are packed by hand
//! (`shell/fingerprint.rs`), so this test is driven by the types
//! themselves, through serde, rather than by a list of fields: a state is
//! serialized, every leaf of it is perturbed in turn (each bit of a number
//! that still deserializes, a flag flipped, an option emptied or filled,
//! each other variant of an enum), and every perturbed state must have a
//! fingerprint of its own. A field added to a state and forgotten in its
//! hash fails here, as does one shifted onto another.

mod common;

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;

use rocketmq_rebalance_model::internals::{
    fingerprint, BrokerState, ConsumerState, Machine, NameServerState, ProcessQueue, Query,
};
use rocketmq_rebalance_model::{
    configuration::{Fault, LockTiming, ProtocolOptions, Scenario, Sizes},
    Action, RebalanceModel, SystemState,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// The values a leaf of a serialized state is perturbed to: those that
/// deserialize into the state's type make the variants.
fn candidates(leaf: &Value) -> Vec<Value> {
    let mut out = vec![Value::Null];
    match leaf {
        Value::Bool(b) => out.push(Value::Bool(!b)),
        Value::Number(n) => {
            let n = n.as_u64().expect("the states hold unsigned numbers");
            out.extend((0..64).map(|bit| Value::from(n ^ 1 << bit)));
        }
        // An empty option, filled: with a number, a flag, or a question.
        Value::Null => {
            out.extend((0..16).map(|bit| Value::from(1u64 << bit)));
            out.extend([Value::from(0), Value::Bool(true)]);
            let query = Query {
                topic: 1,
                broker: 1,
                epoch: 1,
            };
            out.push(serde_json::to_value(query).expect("a question serializes"));
        }
        Value::String(_) => {}
        Value::Array(_) | Value::Object(_) => unreachable!("not a leaf"),
    }
    out
}

/// The names of the variants of the enum a string leaf holds, from the
/// error that an unknown one makes serde name them.
fn variant_names<T: DeserializeOwned>(whole: &Value, at: &[Step]) -> Vec<String> {
    let mut probe = whole.clone();
    *get_mut(&mut probe, at) = Value::String("\u{1}no such variant".into());
    let error = match serde_json::from_value::<T>(probe) {
        Err(e) => e.to_string(),
        Ok(_) => return Vec::new(),
    };
    let expected = error.split("expected").nth(1).unwrap_or("");
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[derive(Clone, Debug)]
enum Step {
    Index(usize),
    Key(String),
}

fn get_mut<'v>(value: &'v mut Value, at: &[Step]) -> &'v mut Value {
    at.iter().fold(value, |v, step| match step {
        Step::Index(i) => &mut v[*i],
        Step::Key(k) => &mut v[k.as_str()],
    })
}

fn leaves(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::Index(i));
                leaves(item, at, out);
                at.pop();
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields {
                at.push(Step::Key(key.clone()));
                leaves(field, at, out);
                at.pop();
            }
            // An option or an enum holding this object may be emptied.
            out.push(at.clone());
        }
        _ => out.push(at.clone()),
    }
}

/// Every state that differs from one of `bases` in one leaf, and the
/// leaf it differs in.
fn variants<T>(bases: &[T]) -> Vec<(T, String)>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let mut all = Vec::new();
    for base in bases {
        let whole = serde_json::to_value(base).expect("a state serializes");
        let mut paths = Vec::new();
        leaves(&whole, &mut Vec::new(), &mut paths);
        for at in paths {
            let mut probe = whole.clone();
            let leaf = get_mut(&mut probe, &at).clone();
            let mut values = if leaf.is_object() {
                vec![Value::Null]
            } else {
                candidates(&leaf)
            };
            if leaf.is_string() {
                values.extend(
                    variant_names::<T>(&whole, &at)
                        .into_iter()
                        .map(Value::String),
                );
            }
            for value in values {
                *get_mut(&mut probe, &at) = value.clone();
                if let Ok(variant) = serde_json::from_value::<T>(probe.clone()) {
                    if variant != *base {
                        all.push((variant, format!("{at:?} = {value}")));
                    }
                }
            }
        }
    }
    all
}

/// No two distinct states among `bases` and their variants share a
/// fingerprint; there are more than `at_least` variants (the perturbation
/// reaches the fields).
fn assert_every_leaf_counts<T>(bases: &[T], at_least: usize)
where
    T: Serialize + DeserializeOwned + PartialEq + Hash + Debug,
{
    let mut all: Vec<(T, String)> = bases.iter().map(|b| (clone_of(b), "base".into())).collect();
    all.extend(variants(bases));
    assert!(all.len() > at_least, "only {} variants", all.len());
    let mut seen: HashMap<u64, usize> = HashMap::new();
    for (i, (state, what)) in all.iter().enumerate() {
        if let Some(&j) = seen.get(&fingerprint(state)) {
            let (other, other_what) = &all[j];
            assert!(
                other == state,
                "two states share a fingerprint: {what} and {other_what}\n{state:?}\n{other:?}"
            );
        } else {
            seen.insert(fingerprint(state), i);
        }
    }
}

fn clone_of<T: Serialize + DeserializeOwned>(value: &T) -> T {
    serde_json::from_value(serde_json::to_value(value).unwrap()).unwrap()
}

/// Messages and orderly consumption: every layer of a consumer's state.
fn orderly() -> rocketmq_rebalance_model::configuration::Config {
    let sizes = Sizes {
        consumers: 2,
        brokers: 2,
        queues: 1,
        messages: 2,
        joins: Some(0),
        ..Sizes::DEFAULT
    };
    let protocol = ProtocolOptions {
        orderly: Some(LockTiming::default()),
        ..ProtocolOptions::default()
    };
    common::config_with(Scenario::Healthy, sizes, "AVG", protocol)
}

/// Consumers at rest, in the middle of a rebalance, consuming, and with
/// every scheduled fault.
fn consumers() -> Vec<ConsumerState> {
    let healthy = common::config(Scenario::Healthy);
    let at_rest = ConsumerState::start(&healthy, 0).0;
    let mut busy = at_rest;
    busy.querying = Some(Query {
        topic: 0,
        broker: 1,
        epoch: 2,
    });
    busy.due = 1;
    let mut consuming = ConsumerState::start(&orderly(), 0).0;
    consuming.queues[1] = ProcessQueue {
        cursor: 1,
        from: 1,
        to: 2,
        locked: true,
        ..ProcessQueue::default()
    };
    consuming.faults.insert(Fault::LoseUnlock);
    vec![at_rest, busy, consuming]
}

#[test]
fn every_field_of_a_consumer_changes_its_fingerprint() {
    assert_every_leaf_counts(&consumers(), 1_500);
}

#[test]
fn every_field_of_a_broker_changes_its_fingerprint() {
    let healthy = BrokerState::start(&common::config(Scenario::Healthy), 0).0;
    let orderly = BrokerState::start(&orderly(), 1).0;
    assert_every_leaf_counts(&[healthy, orderly], 300);
}

#[test]
fn every_field_of_the_name_servers_changes_their_fingerprint() {
    let start = NameServerState::start(&common::config(Scenario::NameserverPartition), 0).0;
    assert_every_leaf_counts(&[start], 20);
}

/// The whole state: every actor, the timers and faults armed, the
/// messages in flight (each envelope's packed word), the deliveries.
#[test]
fn every_field_of_the_system_changes_its_fingerprint() {
    let model = RebalanceModel::new(orderly());
    let start = model.initial_state();
    // Some messages in flight: the first steps of every kind.
    let mut actions = Vec::new();
    model.enabled(&start, &mut actions);
    let mut later = start.clone();
    for action in actions.iter().take(4) {
        if let Some(next) = model.step(&later, *action) {
            later = next;
        }
    }
    let joined = RebalanceModel::new(common::config(Scenario::Healthy));
    let first = joined.initial_state();
    let join = Action::Fault(
        rocketmq_rebalance_model::internals::Peer::Consumer(2),
        Fault::Join,
    );
    let after_join = joined.step(&first, join).expect("the join is a step");
    let bases: Vec<SystemState> = vec![start, later];
    assert!(!bases[1].network.is_empty() || !after_join.network.is_empty());
    assert_every_leaf_counts(&bases, 3_000);
    assert_every_leaf_counts(&[first, after_join], 1_000);
}
