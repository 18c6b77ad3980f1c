//! Each kind of step's fairness, pinned: the table below is the spec's
//! `Fairness ==`, and a step whose fairness changes, or a new kind of step
//! nobody classified here, fails. `check::liveness::fairness` classifies
//! with exhaustive matches, so a new timer or action does not compile
//! until it is classified there.
//!
//! The random broker pick is strongly fair; `docs/spec.md` ("Fairness")
//! shows why no configuration's verdict tells it from weak fairness, and
//! the last test checks that claim on the scenarios whose liveness graphs
//! are small.

mod common;

use rocketmq_rebalance_model::internals::{
    fairness, find_fair_cycle_missing, timer_fairness, Classify, Envelope, Fairness, Graph, Limits,
    Message, Peer, RebalanceFairness, Timer, STRONG,
};
use rocketmq_rebalance_model::{
    checked_model,
    configuration::{Dense, Fault, Scenario},
    Action, CheckOptions, RebalanceModel, SystemState,
};

/// Every timer's fairness, by variant name.
const TIMERS: &[(&str, Fairness)] = &[
    ("Rebalance", Fairness::Strong),
    ("PeriodicRebalance", Fairness::Weak),
    ("Connect", Fairness::Weak),
    ("ChannelActive", Fairness::Weak),
    ("Heal", Fairness::Weak),
    ("Start", Fairness::Weak),
    ("Heartbeat", Fairness::Weak),
    ("Pull", Fairness::Weak),
    ("Done", Fairness::Weak),
    ("Persist", Fairness::Weak),
    ("LockAll", Fairness::Weak),
    ("SyncOffsets", Fairness::Weak),
    ("ReloadGroupConfig", Fairness::Weak),
];

fn variant_name<T: std::fmt::Debug>(value: &T) -> String {
    let debug = format!("{value:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn every_timer_has_the_fairness_the_table_says() {
    for timer in Timer::all() {
        let name = variant_name(&timer);
        let expected = TIMERS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, f)| f)
            .unwrap_or_else(|| panic!("{name}: a new timer, classify it in TIMERS"));
        assert_eq!(timer_fairness(&timer), expected, "{timer:?}");
        let action = Action::Timeout(Peer::Consumer(0), timer);
        assert_eq!(fairness(&action), expected, "{timer:?}");
    }
    let names: Vec<String> = Timer::all().map(|t| variant_name(&t)).collect();
    for (name, _) in TIMERS {
        assert!(names.iter().any(|n| n == name), "{name} is no timer");
    }
}

#[test]
fn every_fault_is_unfair() {
    for fault in Fault::all() {
        let action = Action::Fault(Peer::Consumer(0), fault);
        assert_eq!(fairness(&action), Fairness::Unfair, "{fault:?}");
    }
}

#[test]
fn deliveries_are_weakly_fair_and_time_strongly() {
    let env = Envelope {
        src: Peer::Broker(0),
        dst: Peer::Consumer(1),
        msg: Message::NotifyConsumerIdsChanged,
    };
    assert_eq!(fairness(&Action::Deliver(env)), Fairness::Weak);
    assert_eq!(
        fairness(&Action::Elapse { lagging: None }),
        Fairness::Strong
    );
    assert_eq!(
        fairness(&Action::Elapse { lagging: Some(0) }),
        Fairness::Unfair
    );
}

/// The model's fairness with the broker pick made weak.
struct WeakPick;

impl Classify<RebalanceModel> for WeakPick {
    fn class(&self, model: &RebalanceModel, state: &SystemState, action: &Action) -> Option<u64> {
        let class = RebalanceFairness::default().class(model, state, action)?;
        Some(match action {
            Action::Timeout(_, Timer::Rebalance { .. }) => class & !STRONG,
            _ => class,
        })
    }

    fn good(&self, model: &RebalanceModel, state: &SystemState) -> bool {
        RebalanceFairness::default().good(model, state)
    }
}

/// Weak or strong, the broker pick gives every scenario the same verdict
/// (`docs/spec.md`, "Fairness"): converging ones converge, and the partial
/// partition rebalances for ever either way.
#[test]
fn the_broker_picks_strong_fairness_changes_no_verdict() {
    let options = CheckOptions {
        liveness: true,
        ..CheckOptions::default()
    };
    let limits = Limits {
        threads: 2,
        ..Limits::default()
    };
    for (scenario, converges) in [
        (Scenario::Crash, true),
        (Scenario::RouteChange, true),
        (Scenario::PartialPartition, false),
        (Scenario::BrokerRestart, true),
        (Scenario::StaleRoute, true),
        (Scenario::ZombieConsumer, true),
    ] {
        let model = checked_model(common::config(scenario), &options);
        let strong = Graph::explore(&model, &RebalanceFairness::default(), limits);
        let weak = Graph::explore(&model, &WeakPick, limits);
        assert!(strong.cutoff.is_none() && weak.cutoff.is_none());
        let lasso = |graph: &Graph| find_fair_cycle_missing(graph, 0, 2).is_some();
        assert_eq!(lasso(&strong), !converges, "{scenario:?}, strong");
        assert_eq!(lasso(&weak), !converges, "{scenario:?}, weak");
    }
}
