//! The sans-IO state machines on their own: one input, the exact outputs.

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::config::{
    Config, LockTiming, NetworkKind, ProtocolOptions, Route, Scenario, Sizes,
};
use rocketmq_rebalance_model::protocol::consumer::Query;
use rocketmq_rebalance_model::protocol::{
    BrokerState, ConsumerState, Message, Output, Peer, Phase, Timer,
};
use std::sync::Arc;

mod common;

fn config(sizes: Sizes) -> Config {
    let avg = Arc::from(strategy_from_name("AVG").unwrap());
    Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg).unwrap()
}

/// A heartbeat on the first connection, subscribing to the first topic.
const HEARTBEAT: Message = Message::Heartbeat {
    epoch: 0,
    topics: 1,
};

fn healthy() -> Config {
    config(Sizes::default())
}

fn sends(outputs: &[Output]) -> Vec<(Peer, Message)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send(to, msg) | Output::SendWakeUp(to, msg) | Output::SendPeriodic(to, msg) => {
                Some((*to, *msg))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_new_member_makes_the_broker_notify_every_member_itself_included() {
    let broker = BrokerState {
        members: 0b011,
        ..BrokerState::start(&healthy(), 0).0
    };
    let (next, out) = broker
        .on_message(&healthy(), Peer::Consumer(2), &HEARTBEAT)
        .expect("a join changes the table");
    assert_eq!(next.members, 0b111);
    let notified: Vec<Peer> = sends(&out).into_iter().map(|(to, _)| to).collect();
    assert_eq!(notified, [0, 1, 2].map(Peer::Consumer));
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A member's next heartbeat changes nothing and is pruned.
    assert!(next
        .on_message(&healthy(), Peer::Consumer(2), &HEARTBEAT)
        .is_none());
}

#[test]
fn expiry_notifies_nobody_but_unregistering_does() {
    let broker = BrokerState {
        members: 0b111,
        ..BrokerState::start(&healthy(), 0).0
    };
    let (expired, out) = broker
        .on_message(
            &healthy(),
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
        .on_message(
            &healthy(),
            Peer::Consumer(0),
            &Message::Unregister { epoch: 0 },
        )
        .unwrap();
    assert_eq!(left.members, 0b110);
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A closed connection never registers again, even if a heartbeat
    // overtook the close on an unordered network.
    assert!(left
        .on_message(&healthy(), Peer::Consumer(0), &HEARTBEAT)
        .is_none());
}

#[test]
fn the_broker_lists_every_member_whatever_the_topic() {
    let broker = BrokerState {
        members: 0b101,
        ..BrokerState::start(&healthy(), 0).0
    };
    let (_, out) = broker
        .on_message(
            &healthy(),
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

#[test]
fn a_broker_ignores_a_closed_connection_and_registers_a_new_one() {
    let cfg = healthy();
    let broker = BrokerState::start(&cfg, 0).0;
    let expired = Message::SilenceExpired {
        epoch: 0,
        alive: true,
    };
    let (gone, out) = broker
        .on_message(&cfg, Peer::Consumer(0), &expired)
        .unwrap();
    assert_eq!(gone.members, 0b010, "c1 expired, c3 not started");
    // The scan closes the channel, which the live consumer sees; the others
    // learn at their next tick.
    assert!(sends(&out).contains(&(Peer::Consumer(0), Message::ConnectionClosed { epoch: 0 })));
    assert!(sends(&out).contains(&(Peer::Consumer(1), Message::PeriodicTick)));
    // Nothing more arrives on the closed connection...
    let old = Message::GetConsumerList { topic: 0, epoch: 0 };
    assert!(gone.on_message(&cfg, Peer::Consumer(0), &old).is_none());
    // ...and a heartbeat on a new one registers again and notifies.
    let again = Message::Heartbeat {
        epoch: 1,
        topics: 1,
    };
    let (back, out) = gone.on_message(&cfg, Peer::Consumer(0), &again).unwrap();
    assert_eq!(back.members, 0b011);
    assert_eq!(back.epoch(0), 1);
    assert_eq!(sends(&out).len(), 2, "both members notified");
}

#[test]
fn a_restart_loses_the_table_and_closes_every_member_connection() {
    let cfg = common::config(Scenario::BrokerRestart);
    let (broker, out) = BrokerState::start(&cfg, 0);
    assert_eq!(out, [Output::Arm(Timer::Restart)]);
    let (restarted, out) = broker.on_timer(&Timer::Restart).unwrap();
    assert_eq!(restarted.members, 0);
    assert_eq!(
        sends(&out),
        [0, 1].map(|c| (Peer::Consumer(c), Message::ConnectionClosed { epoch: 0 }))
    );
    // A member's reconnection registers it at once.
    let heartbeat = Message::Heartbeat {
        epoch: 1,
        topics: 1,
    };
    let (back, _) = restarted
        .on_message(&cfg, Peer::Consumer(1), &heartbeat)
        .unwrap();
    assert_eq!(back.members, 0b10);
}

#[test]
fn a_consumer_that_sees_its_connection_close_fails_its_question_and_reconnects() {
    let cfg = common::config(Scenario::ZombieConsumer);
    let (c1, _) = ConsumerState::start(&cfg, 0);
    let woken = ConsumerState { due: 1, ..c1 };
    let (asking, _) = woken
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .unwrap();
    let closed = Message::ConnectionClosed { epoch: 0 };
    let (after, out) = asking
        .on_message(&cfg, 0, Peer::Broker(0), &closed)
        .unwrap();
    assert_eq!(
        after.querying, None,
        "no answer comes on a closed connection"
    );
    assert_eq!(after.epoch(0), 1, "its next connection is a new one");
    assert!(out.contains(&Output::Arm(Timer::Connect { broker: 0 })));
    // A stale close notice (an older connection) changes nothing.
    assert!(after
        .on_message(&cfg, 0, Peer::Broker(0), &closed)
        .is_none());
    // Connecting heartbeats on the new connection and rebalances.
    let (connected, out) = after
        .on_timer(&cfg, 0, &Timer::Connect { broker: 0 })
        .unwrap();
    assert_eq!(
        sends(&out)[0],
        (
            Peer::Broker(0),
            Message::Heartbeat {
                epoch: 1,
                topics: 1
            }
        )
    );
    assert_eq!(connected.due, 1);
}

#[test]
fn a_paused_consumer_keeps_its_queues_while_brokers_expire_it() {
    let cfg = common::config(Scenario::ZombieConsumer);
    let (c1, out) = ConsumerState::start(&cfg, 0);
    assert!(out.contains(&Output::Arm(Timer::Pause)));
    let (paused, out) = c1.on_timer(&cfg, 0, &Timer::Pause).unwrap();
    assert_eq!(paused, c1, "a zombie: same queues, knows nothing");
    let expired = Message::SilenceExpired {
        epoch: 0,
        alive: true,
    };
    assert_eq!(
        sends(&out),
        [(Peer::Broker(0), expired), (Peer::Broker(1), expired)]
    );
}

#[test]
fn a_killed_process_closes_its_connections_and_brokers_notify_at_once() {
    let cfg = healthy();
    let broker = BrokerState::start(&cfg, 0).0;
    let (after, out) = broker
        .on_message(
            &cfg,
            Peer::Consumer(0),
            &Message::ChannelClosed { epoch: 0 },
        )
        .unwrap();
    assert_eq!(after.members, 0b010);
    assert_eq!(
        sends(&out),
        [(Peer::Consumer(1), Message::NotifyConsumerIdsChanged)]
    );
}

#[test]
fn every_heartbeat_replaces_the_groups_subscription_table_and_a_flip_notifies() {
    let cfg = common::config(Scenario::SubscriptionFlap);
    let broker = BrokerState::start(&cfg, 0).0;
    assert_eq!(broker.subscription, 0b10, "the last member's topics");
    let topic_a = Message::Heartbeat {
        epoch: 0,
        topics: 0b01,
    };
    let (flipped, out) = broker
        .on_message(&cfg, Peer::Consumer(0), &topic_a)
        .unwrap();
    assert_eq!(flipped.subscription, 0b01);
    assert_eq!(sends(&out).len(), 2, "both members notified");
    assert!(flipped
        .on_message(&cfg, Peer::Consumer(0), &topic_a)
        .is_none());
    // Without the table modelled the same heartbeat changes nothing.
    assert!(BrokerState::start(&healthy(), 0)
        .0
        .on_message(&healthy(), Peer::Consumer(0), &topic_a)
        .is_none());
}

#[test]
fn a_route_that_drops_a_broker_silences_it_and_one_that_lists_it_connects() {
    let cfg = common::config(Scenario::NameserverPartition);
    // c2 polls the second name server, which drops broker-b.
    let (c2, _) = ConsumerState::start(&cfg, 1);
    let without_b = Route {
        version: 0,
        dropped: 0b10,
    };
    let data = Message::RouteData { route: without_b };
    let (cut, out) = c2.on_message(&cfg, 1, Peer::NameServer, &data).unwrap();
    assert_eq!(cut.target_set(&cfg, 1), 0b01);
    assert!(sends(&out).contains(&(
        Peer::Broker(1),
        Message::SilenceExpired {
            epoch: 0,
            alive: false
        }
    )));
    assert_eq!(cut.due, 1, "a route change is acted on at the next round");
    let healed = Message::RouteData {
        route: Route::default(),
    };
    let (back, out) = cut.on_message(&cfg, 1, Peer::NameServer, &healed).unwrap();
    assert_eq!(back.target_set(&cfg, 1), 0b11);
    assert!(out.contains(&Output::Arm(Timer::Connect { broker: 1 })));
    assert_eq!(back.epoch(1), 1, "a new connection to broker-b");
}

#[test]
fn a_running_orderly_group_starts_with_the_locks_of_what_it_consumes_on_each_broker() {
    let sizes = Sizes {
        consumers: 2,
        queues: 1,
        messages: 1,
        joins: Some(0),
        ..Sizes::default()
    };
    let orderly = ProtocolOptions {
        orderly: Some(LockTiming::default()),
        ..ProtocolOptions::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", orderly);
    let owner = |q: usize| (0..2).find(|&c| ConsumerState::start(&cfg, c).0.owned & 1 << q != 0);
    for broker in 0..2 {
        let locks = BrokerState::start(&cfg, broker).0.locks;
        for q in 0..cfg.queues.len() {
            let expected = (usize::from(cfg.broker_of(q)) == broker)
                .then(|| owner(q).map(|c| cfg.lock_key(c)))
                .flatten();
            assert_eq!(locks.holder(q), expected, "broker {broker}, queue {q}");
        }
    }
    assert!(
        (0..2).all(|q| BrokerState::start(&cfg, usize::from(cfg.broker_of(q)))
            .0
            .locks
            .holder(q)
            .is_some())
    );
}

/// Stateright keeps a state's fingerprint, not the state: two states with
/// one hash would be explored as one. The consumer's hand-packed hash must
/// therefore tell apart every field, at the values a run can reach: each
/// variant below changes one field of one state, to a small value (which a
/// field shifted out of its place would confuse with another) or its
/// largest.
#[test]
fn every_field_of_a_consumer_changes_its_fingerprint() {
    use rocketmq_rebalance_model::protocol::ProcessQueue;
    use rocketmq_rebalance_model::search::fingerprint;
    let cfg = healthy();
    let base = ConsumerState::start(&cfg, 0).0;
    let mut variants = vec![base];
    let mut vary = |change: &dyn Fn(&mut ConsumerState)| {
        let mut v = base;
        change(&mut v);
        if v != base && !variants.contains(&v) {
            variants.push(v);
        }
    };
    for n in [1u8, 2, 3, 7] {
        vary(&|c| c.route.version = n);
        vary(&|c| c.route.dropped = n << 5);
        vary(&|c| c.route.dropped = n);
        vary(&|c| c.due = n);
        vary(&|c| c.topics = n);
        vary(&|c| c.assigned[3].version = n);
        vary(&|c| c.assigned[0].dropped = n);
        vary(&|c| c.locking = n);
        vary(&|c| c.adding = n);
        vary(&|c| c.renew_age = n);
        vary(&|c| c.lag = n);
        vary(&|c| c.epochs = u32::from(n));
        vary(&|c| c.epochs = u32::from(n) << 28);
        vary(&|c| c.owned = u64::from(n));
        vary(&|c| c.views[3] = Some(u16::from(n)));
        vary(&|c| c.views[0] = Some(u16::from(n) << 13));
        for (topic, broker, epoch) in [(n & 3, 0, 0), (0, n, 0), (0, 0, n), (0, 0, n + 8)] {
            vary(&move |c| {
                c.querying = Some(Query {
                    topic,
                    broker,
                    epoch,
                })
            });
        }
        for q in [0, 7] {
            let fields: [fn(&mut ProcessQueue, u8); 6] = [
                |p, n| p.cursor = n,
                |p, n| p.from = n,
                |p, n| p.to = n,
                |p, n| p.lock_age = n,
                |p, n| p.batch_age = n,
                |p, n| p.idle_age = n,
            ];
            for set in fields {
                vary(&|c| set(&mut c.queues[q], n));
                vary(&|c| set(&mut c.queues[q], 255));
            }
        }
    }
    vary(&|c| c.phase = Phase::Crashed);
    vary(&|c| c.phase = Phase::Idle);
    vary(&|c| c.faults.lose_next_notification = true);
    vary(&|c| c.faults.fail_next_query = true);
    vary(&|c| c.faults.miss_next_route = true);
    vary(&|c| c.faults.lose_next_persist = true);
    vary(&|c| c.faults.fail_next_offset_read = true);
    vary(&|c| c.faults.lose_next_unlock = true);
    vary(&|c| c.faults.locks_fail = true);
    vary(&|c| c.owned ^= 1 << 63);
    vary(&|c| c.views[0] = None);
    for q in [0, 7] {
        vary(&move |c| c.queues[q].reading_offset = true);
        vary(&move |c| c.queues[q].awaiting_ack = true);
        vary(&move |c| c.queues[q].locked = true);
        vary(&move |c| c.queues[q].dropped = true);
    }
    let prints: std::collections::HashSet<u64> = variants.iter().map(fingerprint).collect();
    assert!(variants.len() > 150, "{} variants", variants.len());
    assert_eq!(
        prints.len(),
        variants.len(),
        "two variants share a fingerprint"
    );
}
