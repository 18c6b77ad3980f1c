//! The sans-IO state machines on their own: one input, the exact outputs.

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::config::{Config, NetworkKind, Route, Scenario, Sizes};
use rocketmq_rebalance_model::protocol::consumer::Query;
use rocketmq_rebalance_model::protocol::{
    BrokerState, ConsumerState, Message, Output, Peer, Phase, Timer,
};
use std::sync::Arc;

fn config(sizes: Sizes) -> Config {
    let avg = Arc::from(strategy_from_name("AVG").unwrap());
    Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg).unwrap()
}

fn sends(outputs: &[Output]) -> Vec<(Peer, Message)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send(to, msg) => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_new_member_makes_the_broker_notify_every_member_itself_included() {
    let broker = BrokerState {
        members: 0b011,
        closed: 0,
        epochs: 0,
    };
    let (next, out) = broker
        .on_message(Peer::Consumer(2), &Message::Heartbeat { epoch: 0 })
        .expect("a join changes the table");
    assert_eq!(next.members, 0b111);
    let notified: Vec<Peer> = sends(&out).into_iter().map(|(to, _)| to).collect();
    assert_eq!(notified, [0, 1, 2].map(Peer::Consumer));
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A member's next heartbeat changes nothing and is pruned.
    assert!(next
        .on_message(Peer::Consumer(2), &Message::Heartbeat { epoch: 0 })
        .is_none());
}

#[test]
fn expiry_notifies_nobody_but_unregistering_does() {
    let broker = BrokerState {
        members: 0b111,
        closed: 0,
        epochs: 0,
    };
    let (expired, out) = broker
        .on_message(
            Peer::Consumer(0),
            &Message::SilenceExpired {
                epoch: 0,
                alive: false,
            },
        )
        .unwrap();
    assert_eq!(expired.members, 0b110);
    assert!(sends(&out).iter().all(|(_, m)| *m == Message::PeriodicTick));
    let (left, out) = broker
        .on_message(Peer::Consumer(0), &Message::Unregister { epoch: 0 })
        .unwrap();
    assert_eq!(left.members, 0b110);
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A closed connection never registers again, even if a heartbeat
    // overtook the close on an unordered network.
    assert!(left
        .on_message(Peer::Consumer(0), &Message::Heartbeat { epoch: 0 })
        .is_none());
}

#[test]
fn the_broker_lists_every_member_whatever_the_topic() {
    let broker = BrokerState {
        members: 0b101,
        closed: 0,
        epochs: 0,
    };
    let (_, out) = broker
        .on_message(
            Peer::Consumer(1),
            &Message::GetConsumerList { topic: 1, epoch: 0 },
        )
        .unwrap();
    assert_eq!(
        sends(&out),
        [(
            Peer::Consumer(1),
            Message::ConsumerList {
                topic: 1,
                members: 0b101,
                epoch: 0
            }
        )]
    );
}

#[test]
fn a_join_heartbeats_every_broker_and_arms_one_rebalance_per_broker() {
    let cfg = config(Sizes::default());
    let (idle, out) = ConsumerState::start(&cfg, 2);
    assert_eq!(idle.phase, Phase::Idle);
    assert_eq!(out, [Output::Arm(Timer::Join)]);
    let (running, out) = idle.on_timer(&cfg, 2, &Timer::Join).unwrap();
    assert_eq!(running.phase, Phase::Running);
    assert_eq!(running.due, 1);
    let heartbeats: Vec<Peer> = sends(&out).into_iter().map(|(to, _)| to).collect();
    assert_eq!(heartbeats, [Peer::Broker(0), Peer::Broker(1)]);
    assert!(out.contains(&Output::Arm(Timer::Rebalance { broker: 0 })));
    assert!(out.contains(&Output::Arm(Timer::Rebalance { broker: 1 })));
}

#[test]
fn a_rebalance_asks_one_broker_and_applies_its_answer_with_plan_update() {
    let cfg = config(Sizes::default());
    let (idle, _) = ConsumerState::start(&cfg, 2);
    let (running, _) = idle.on_timer(&cfg, 2, &Timer::Join).unwrap();
    let (asking, out) = running
        .on_timer(&cfg, 2, &Timer::Rebalance { broker: 1 })
        .unwrap();
    assert_eq!(
        asking.querying,
        Some(Query {
            topic: 0,
            broker: 1,
            epoch: 0
        })
    );
    assert!(out.contains(&Output::Disarm(Timer::Rebalance { broker: 0 })));
    assert_eq!(
        sends(&out),
        [(
            Peer::Broker(1),
            Message::GetConsumerList { topic: 0, epoch: 0 }
        )]
    );
    // A wake-up while the query is in flight keeps the topic due.
    let (woken, _) = asking
        .on_message(&cfg, 2, Peer::Broker(0), &Message::NotifyConsumerIdsChanged)
        .unwrap();
    let answer = Message::ConsumerList {
        topic: 0,
        members: 0b111,
        epoch: 0,
    };
    let (done, out) = woken.on_message(&cfg, 2, Peer::Broker(1), &answer).unwrap();
    assert_eq!(done.querying, None);
    assert_eq!(done.views[0], Some(0b111));
    assert_eq!(
        done.owned,
        cfg.allocate(Route::default(), 0, 0b111, 2).unwrap(),
        "AVG's share of the third of three consumers"
    );
    assert_eq!(done.due, 1, "the wake-up during the query is not lost");
    assert!(out.contains(&Output::Arm(Timer::Rebalance { broker: 0 })));
    // An answer nobody waits for changes nothing.
    let idle_again = ConsumerState {
        due: 0,
        querying: None,
        ..done
    };
    assert!(idle_again
        .on_message(&cfg, 2, Peer::Broker(1), &answer)
        .is_none());
}

#[test]
fn wake_ups_merge() {
    let cfg = config(Sizes::default());
    let (idle, _) = ConsumerState::start(&cfg, 2);
    let (running, _) = idle.on_timer(&cfg, 2, &Timer::Join).unwrap();
    assert!(running
        .on_message(&cfg, 2, Peer::Broker(0), &Message::NotifyConsumerIdsChanged)
        .is_none());
}
