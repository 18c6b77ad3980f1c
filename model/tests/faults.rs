//! Every fault is part of the model: with its budget, some actor arms it,
//! and firing it is a step that changes the state. A fault declared in
//! `config/fault.rs` but never armed, or armed but answered by no machine,
//! fails here.

mod common;

use std::collections::{BTreeMap, HashSet, VecDeque};

use rocketmq_rebalance_model::internals::fingerprint;
use rocketmq_rebalance_model::view::StateView;
use rocketmq_rebalance_model::{
    configuration::{
        Allocator, Consumption, Dense, Effect, Fault, Layer, LockTiming, ProtocolOptions, Scenario,
        Sizes, Target,
    },
    internals::{Message, Peer},
    Action, RebalanceModel, SystemState,
};

/// Every fault's budget at one, with messages and orderly consumption, two topics
/// (a consumer resubscribes to the last one) and two name servers (one
/// may be partitioned from the last broker); but POP's and FIFO groups',
/// which [`every_pop_fault`] has.
fn every_fault() -> RebalanceModel {
    let mut sizes = Sizes {
        consumers: 2,
        brokers: 2,
        topics: 2,
        queues: 1,
        joins: Some(1),
        name_servers: 2,
        messages: 1,
        ..Sizes::DEFAULT
    };
    // Each fault's first budget at one, from its definition.
    for fault in Fault::all().filter(|f| !POP_LAYERS.contains(&f.spec().layer)) {
        sizes.set(fault.spec().budgets[0], 1);
    }
    let protocol = ProtocolOptions {
        orderly: Some(LockTiming::default()),
        ..ProtocolOptions::default()
    };
    healthy(sizes, protocol)
}

/// The layers of POP consumption, whose faults [`every_pop_fault`] has.
const POP_LAYERS: [Layer; 2] = [Layer::Pop, Layer::Fifo];

/// POP's faults at one, with a consumer that crashes, over one broker; a
/// FIFO group's too when `fifo`.
fn every_pop_fault(fifo: bool) -> RebalanceModel {
    let mut sizes = Sizes {
        consumers: 2,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        crashes: 1,
        messages: 1,
        ..Sizes::DEFAULT
    };
    let layers = if fifo {
        &POP_LAYERS[..]
    } else {
        &POP_LAYERS[..1]
    };
    for fault in Fault::all().filter(|f| layers.contains(&f.spec().layer)) {
        sizes.set(fault.spec().budgets[0], 1);
    }
    let protocol = ProtocolOptions {
        consumption: Consumption::Pop,
        assignment: Allocator::Server,
        fifo,
        ..ProtocolOptions::default()
    };
    healthy(sizes, protocol)
}

#[test]
fn every_fault_is_armed_and_fires_as_a_step() {
    let mut fired: BTreeMap<Fault, usize> = BTreeMap::new();
    for model in [every_fault(), every_pop_fault(false), every_pop_fault(true)] {
        fire_every_fault(&model, &mut fired);
    }
    let missing: Vec<Fault> = Fault::all().filter(|f| !fired.contains_key(f)).collect();
    assert!(
        missing.is_empty(),
        "never armed or never a step: {missing:?}"
    );
}

/// Counts in `fired` the faults that fire as steps in `model`'s first
/// states, breadth first.
fn fire_every_fault(model: &RebalanceModel, fired: &mut BTreeMap<Fault, usize>) {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([model.initial_state()]);
    seen.insert(fingerprint(&queue[0]));
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        if seen.len() > 20_000 || fired.len() == Fault::COUNT as usize {
            break;
        }
        actions.clear();
        model.enabled(&state, &mut actions);
        for &action in &actions {
            let Some(next) = model.step(&state, action) else {
                continue;
            };
            if let Action::Fault(_, fault) = action {
                assert_ne!(next, state, "{fault:?} fired and changed nothing");
                *fired.entry(fault).or_default() += 1;
            }
            if seen.insert(fingerprint(&next)) {
                queue.push_back(next);
            }
        }
    }
}

/// The explorer's and the report's consumer panel lists every fault
/// scheduled for a consumer, in the words of its definition.
#[test]
fn the_pictures_show_every_scheduled_fault() {
    let model = every_fault();
    let mut state = model.initial_state();
    let scheduled: Vec<(Fault, &str)> = Fault::all()
        .filter_map(|f| match f.spec().effect {
            Effect::Scheduled(words) => Some((f, words)),
            Effect::Now => None,
        })
        .collect();
    assert!(scheduled.len() >= 7, "{scheduled:?}");
    for &(fault, _) in &scheduled {
        assert_eq!(fault.target(), Target::Consumer, "{fault:?}");
        state.consumers[0].faults.insert(fault);
    }
    let view = StateView::of(&model, &state);
    let consumers = view
        .panels
        .iter()
        .find(|p| p.title == "consumers")
        .expect("a consumers panel");
    for (fault, words) in scheduled {
        assert!(
            consumers.lines[0].contains(words),
            "{fault:?}: {}",
            consumers.lines[0]
        );
    }
}

/// With the restart's stopped phase (`restart_stops`), one consumer over
/// two brokers of one queue each: while broker-a is stopped the name
/// server's route leaves it out (its channel closed,
/// `BrokerHousekeepingService`), and the consumer, its route poll
/// returning that route, drops broker-a's queue. Without the phase no
/// route ever leaves broker-a out.
#[test]
fn a_stopped_broker_leaves_the_route_and_a_polling_consumer_drops_its_queues() {
    let sizes = Sizes {
        consumers: 1,
        brokers: 2,
        queues: 1,
        joins: Some(0),
        broker_restarts: 1,
        ..Sizes::DEFAULT
    };
    let reached = |restart_stops| {
        let protocol = ProtocolOptions {
            restart_stops,
            ..ProtocolOptions::default()
        };
        let model = healthy(sizes, protocol);
        let a0 = 1 << 0;
        let (mut unrouted, mut dropped) = (false, false);
        let initial = model.initial_state();
        assert_eq!(initial.consumers[0].owned & a0, a0, "c1 starts on a0");
        let states = breadth_first(&model, |state| {
            let stopped = state.brokers[0].down.is_some();
            let c1 = &state.consumers[0];
            unrouted |= state.name_server.route(0).dropped & 1 != 0;
            dropped |= stopped && c1.route.dropped & 1 != 0 && c1.owned & a0 == 0;
            false
        });
        (unrouted, dropped, states)
    };
    let (unrouted, dropped, states) = reached(true);
    assert!(unrouted && dropped, "{states} states");
    let (unrouted, dropped, _) = reached(false);
    assert!(!unrouted && !dropped);
}

/// A second channel's expiry is the broker's own scan, not a message on the
/// client's connection: the client's calls to that broker go on meanwhile,
/// so it may be told that the broker lists it twice (a run of `--random 7`
/// was: `c1` took one queue of its two). When the expiry travelled on the
/// client's flow to the broker, every call behind it waited for it.
#[test]
fn a_client_listed_twice_may_hear_it_before_the_scan() {
    let cfg = common::config(Scenario::ZombieConsumer);
    let sizes = Sizes {
        second_channels: 1,
        ..cfg.sizes
    };
    let protocol = cfg.protocol;
    let model = RebalanceModel::new(common::config_with(
        Scenario::ZombieConsumer,
        sizes,
        "AVG",
        protocol,
    ));
    let told_twice = |state: &SystemState| {
        state.network.iter().any(|env| {
            env.dst == Peer::Consumer(0)
                && matches!(env.msg, Message::ConsumerList { twice, .. } if twice & 1 != 0)
        })
    };
    let mut found = false;
    let states = breadth_first(&model, |state| {
        found = told_twice(state);
        found
    });
    assert!(found, "{states} states, none told c1 it is listed twice");
}

/// Visits `model`'s reachable states breadth-first until `visit` says
/// stop; the states seen.
fn breadth_first(model: &RebalanceModel, mut visit: impl FnMut(&SystemState) -> bool) -> usize {
    let initial = model.initial_state();
    let mut seen = HashSet::from([fingerprint(&initial)]);
    let mut queue = VecDeque::from([initial]);
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        if visit(&state) {
            break;
        }
        actions.clear();
        model.enabled(&state, &mut actions);
        for &action in &actions {
            if let Some(next) = model.step(&state, action) {
                if seen.insert(fingerprint(&next)) {
                    queue.push_back(next);
                }
            }
        }
    }
    seen.len()
}

/// A handle expires on the broker's time, not on its consumer's
/// connection: a FIFO queue whose last acknowledgement was lost is
/// refused to its own consumer (nothing popped) while that handle's
/// expiry is still to come, which the consumer's pop reaches the broker
/// before.
#[test]
fn a_fifo_queue_is_refused_to_its_consumer_until_its_lost_ack_s_handle_expires() {
    let sizes = Sizes {
        consumers: 1,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        messages: 2,
        lost_acks: 1,
        ..Sizes::DEFAULT
    };
    let protocol = ProtocolOptions {
        consumption: Consumption::Pop,
        assignment: Allocator::Server,
        fifo: true,
        ..ProtocolOptions::default()
    };
    let model = healthy(sizes, protocol);
    let refused_while_unexpired = |state: &SystemState| {
        let expiring = |queue| {
            state.network.iter().any(
                |e| matches!(e.msg, Message::InvisibleTimeExpired { queue: q, .. } if q == queue),
            )
        };
        state.network.iter().any(|e| match e.msg {
            Message::PopResult {
                queue, from, to, ..
            } => from == to && e.dst == Peer::Consumer(0) && expiring(queue),
            _ => false,
        })
    };
    let mut found = false;
    let states = breadth_first(&model, |state| {
        found = refused_while_unexpired(state);
        found
    });
    assert!(found, "{states} states, no pop refused before its expiry");
}

/// A broker crash loses a FIFO group's order info of its queues' last
/// pops: the queue of a batch that still runs is popped again, by the
/// other consumer, which then runs the same message beside it. (A clean
/// restart keeps the order info, and the queue stays blocked: the
/// opt-in `flags/tests/pop.rs` checks both exhaustively.)
#[test]
fn a_broker_crash_lets_a_second_consumer_pop_a_fifo_queue_whose_batch_still_runs() {
    let fifo = ProtocolOptions {
        consumption: Consumption::Pop,
        assignment: Allocator::Server,
        fifo: true,
        ..ProtocolOptions::default()
    };
    let sizes = Sizes {
        consumers: 2,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        messages: 1,
        broker_crashes: 1,
        ..Sizes::DEFAULT
    };
    let batch = |state: &SystemState, c: usize| state.consumers[c].queues[0].running();
    let crashed = healthy(sizes, fifo);
    let mut found = false;
    let states = breadth_first(&crashed, |state| {
        found = batch(state, 0) && batch(state, 1);
        found
    });
    assert!(found, "{states} states, no batch run twice at once");
}

/// The `healthy` scenario with `sizes` and `protocol`, `AVG`.
fn healthy(sizes: Sizes, protocol: ProtocolOptions) -> RebalanceModel {
    RebalanceModel::new(common::config_with(
        Scenario::Healthy,
        sizes,
        "AVG",
        protocol,
    ))
}
