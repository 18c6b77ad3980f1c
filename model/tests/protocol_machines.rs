//! The sans-IO state machines on their own: one input, the exact outputs.

use rocketmq_rebalance::strategy_from_name;
use rocketmq_rebalance_model::configuration::{
    Config, Fault, LockTiming, NetworkKind, ProtocolOptions, Scenario, Sizes,
};
use rocketmq_rebalance_model::internals::{
    BrokerState, ConsumerState, Machine, Message, Output, Peer, Phase, ProcessQueue, Query, Route,
    SendBack, Timer, NO_OFFSET,
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
    let mut broker = BrokerState::start(&healthy(), 0).0;
    broker.memory.members = 0b011;
    let (next, out) = broker
        .on_message(&healthy(), 0, Peer::Consumer(2), &HEARTBEAT)
        .expect("a join changes the table");
    assert_eq!(next.memory.members, 0b111);
    let notified: Vec<Peer> = sends(&out).into_iter().map(|(to, _)| to).collect();
    assert_eq!(notified, [0, 1, 2].map(Peer::Consumer));
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A member's next heartbeat changes nothing and is pruned.
    assert!(next
        .on_message(&healthy(), 0, Peer::Consumer(2), &HEARTBEAT)
        .is_none());
}

#[test]
fn expiry_notifies_nobody_but_unregistering_does() {
    let mut broker = BrokerState::start(&healthy(), 0).0;
    broker.memory.members = 0b111;
    let (expired, out) = broker
        .on_message(
            &healthy(),
            0,
            Peer::Consumer(0),
            &Message::SilenceExpired {
                epoch: 0,
                alive: false,
            },
        )
        .unwrap();
    assert_eq!(expired.memory.members, 0b110);
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::LaterRebalance));
    let (left, out) = broker
        .on_message(
            &healthy(),
            0,
            Peer::Consumer(0),
            &Message::Unregister { epoch: 0 },
        )
        .unwrap();
    assert_eq!(left.memory.members, 0b110);
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::NotifyConsumerIdsChanged));
    // A closed connection never registers again, even if a heartbeat
    // overtook the close on an unordered network.
    assert!(left
        .on_message(&healthy(), 0, Peer::Consumer(0), &HEARTBEAT)
        .is_none());
}

#[test]
fn the_broker_lists_every_member_whatever_the_topic() {
    let mut broker = BrokerState::start(&healthy(), 0).0;
    broker.memory.members = 0b101;
    let (_, out) = broker
        .on_message(
            &healthy(),
            0,
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
                twice: 0,
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
    assert_eq!(out, [Output::ArmFault(Fault::Join)]);
    let (running, out) = idle.on_fault(&cfg, 2, Fault::Join).unwrap();
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
    let (running, _) = idle.on_fault(&cfg, 2, Fault::Join).unwrap();
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
        twice: 0,
        epoch: 0,
    };
    let (done, out) = woken.on_message(&cfg, 2, Peer::Broker(1), &answer).unwrap();
    assert_eq!(done.querying, None);
    assert_eq!(done.views[0], Some(0b111));
    assert_eq!(
        done.owned,
        cfg.allocate(Route::default(), 0, 0b111, 0, 2).unwrap(),
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
    let (running, _) = idle.on_fault(&cfg, 2, Fault::Join).unwrap();
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
        .on_message(&cfg, 0, Peer::Consumer(0), &expired)
        .unwrap();
    assert_eq!(gone.memory.members, 0b010, "c1 expired, c3 not started");
    // The scan closes the channel, which the live consumer sees; the others
    // learn at their next periodic rebalance.
    assert!(sends(&out).contains(&(Peer::Consumer(0), Message::ConnectionClosed { epoch: 0 })));
    assert!(sends(&out).contains(&(Peer::Consumer(1), Message::LaterRebalance)));
    // Nothing more arrives on the closed connection...
    let old = Message::GetConsumerList { topic: 0, epoch: 0 };
    assert!(gone.on_message(&cfg, 0, Peer::Consumer(0), &old).is_none());
    // ...and a heartbeat on a new one registers again and notifies.
    let again = Message::Heartbeat {
        epoch: 1,
        topics: 1,
    };
    let (back, out) = gone.on_message(&cfg, 0, Peer::Consumer(0), &again).unwrap();
    assert_eq!(back.memory.members, 0b011);
    assert_eq!(back.epoch(0), 1);
    assert_eq!(sends(&out).len(), 2, "both members notified");
}

#[test]
fn a_restart_loses_the_table_and_closes_every_member_connection() {
    let cfg = common::config(Scenario::BrokerRestart);
    let (broker, out) = BrokerState::start(&cfg, 0);
    assert_eq!(out, [Output::ArmFault(Fault::Restart)]);
    let (restarted, out) = broker.on_fault(&cfg, 0, Fault::Restart).unwrap();
    assert_eq!(restarted.memory.members, 0);
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
        .on_message(&cfg, 0, Peer::Consumer(1), &heartbeat)
        .unwrap();
    assert_eq!(back.memory.members, 0b10);
}

/// A disk loss is a restart that loses the offset table too: a queue's
/// next owner is told no offset is stored.
#[test]
fn a_disk_loss_restarts_the_broker_without_its_offsets() {
    let cfg = config(Sizes {
        consumers: 2,
        queues: 1,
        joins: Some(0),
        messages: 2,
        disk_losses: 1,
        ..Sizes::default()
    });
    let (broker, out) = BrokerState::start(&cfg, 0);
    assert_eq!(out, [Output::ArmFault(Fault::DiskLoss)]);
    assert_eq!(broker.offset(0), 0, "a running group has its offsets");
    let (lost, out) = broker.on_fault(&cfg, 0, Fault::DiskLoss).unwrap();
    let (restarted, restart_out) = broker.on_fault(&cfg, 0, Fault::Restart).unwrap();
    assert_eq!((lost.memory, &out), (restarted.memory, &restart_out));
    assert_eq!(restarted.disk, broker.disk, "a restart keeps the disk");
    assert_eq!(lost.offset(0), NO_OFFSET);
    assert_eq!(lost.disk.evicted, broker.disk.evicted, "the log is kept");
    let query = Message::QueryOffset { queue: 0, epoch: 1 };
    let (_, answer) = lost.on_message(&cfg, 0, Peer::Consumer(1), &query).unwrap();
    assert_eq!(
        sends(&answer),
        [(
            Peer::Consumer(1),
            Message::Offset {
                queue: 0,
                stored: NO_OFFSET,
                in_memory: true,
                epoch: 1,
            }
        )]
    );
}

/// A failover keeps the members (they heartbeat to the slave too), loses
/// the locks and serves the slave's copy of the offsets: the slave copies
/// the master's offsets when they changed (a step only then), and the
/// commits after its last copy are lost.
#[test]
fn a_failover_serves_the_offsets_of_the_slaves_last_sync() {
    let cfg = config(Sizes {
        consumers: 2,
        queues: 1,
        joins: Some(0),
        messages: 2,
        failovers: 1,
        ..Sizes::default()
    });
    let (broker, out) = BrokerState::start(&cfg, 0);
    assert_eq!(
        out,
        [
            Output::ArmFault(Fault::Failover),
            Output::Arm(Timer::SyncOffsets)
        ]
    );
    assert!(
        broker.on_timer(&cfg, 0, &Timer::SyncOffsets).is_none(),
        "in sync"
    );
    let commit = |b: &BrokerState, offset| {
        let msg = Message::UpdateOffset {
            queue: 0,
            offset,
            epoch: 0,
        };
        b.on_message(&cfg, 0, Peer::Consumer(0), &msg).unwrap().0
    };
    let (synced, out) = commit(&broker, 1)
        .on_timer(&cfg, 0, &Timer::SyncOffsets)
        .unwrap();
    assert_eq!(out, [Output::Arm(Timer::SyncOffsets)]);
    let ahead = commit(&synced, 2);
    assert_eq!(ahead.offset(0), 2);
    let (failed_over, out) = ahead.on_fault(&cfg, 0, Fault::Failover).unwrap();
    assert_eq!(out, [], "nothing closes that the group would see");
    assert_eq!(
        failed_over.memory, ahead.memory,
        "no locks without --orderly"
    );
    assert_eq!(
        failed_over.offset(0),
        1,
        "the commit after the last sync is lost"
    );
    let (restarted, _) = ahead.on_fault(&cfg, 0, Fault::Restart).unwrap();
    assert_eq!(restarted.offset(0), 2, "a restart keeps the offsets");
    let (in_sync, _) = synced.on_fault(&cfg, 0, Fault::Failover).unzip();
    assert_eq!(in_sync, None, "a failover that changes nothing is no step");
}

/// A running group has offsets stored for the queues of the route it has
/// been consuming, its retry topic's included, and for none that appear
/// later (a queue added, a broker that joins). A retry topic's queue with
/// no offset starts at 0 even when consuming from last would start at its
/// end.
#[test]
fn only_the_starting_routes_queues_have_offsets_and_a_retry_queue_starts_at_0() {
    let sizes = Sizes {
        consumers: 2,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        route_changes: 1,
        broker_joins: 1,
        messages: 2,
        ..Sizes::default()
    };
    let retry = ProtocolOptions {
        retry_topic: true,
        ..ProtocolOptions::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", retry);
    let labels: Vec<&str> = cfg.queues.iter().map(|q| q.label.as_str()).collect();
    assert_eq!(labels, ["t1.a0", "t1.a1", "t1.b0", "t2.a0", "t2.b0"]);
    let a = BrokerState::start(&cfg, 0).0;
    let b = BrokerState::start(&cfg, 1).0;
    assert_eq!((a.offset(0), a.offset(1), a.offset(3)), (0, NO_OFFSET, 0));
    assert_eq!((b.offset(2), b.offset(4)), (NO_OFFSET, NO_OFFSET));
    // Both of broker-b's queues, taken with their first messages gone.
    let mut c = ConsumerState::start(&cfg, 0).0;
    c.owned |= 0b10100;
    c.queues[2] = ProcessQueue::reading();
    c.queues[4] = ProcessQueue::reading();
    let none = |queue| Message::Offset {
        queue,
        stored: NO_OFFSET,
        in_memory: false,
        epoch: 0,
    };
    let (business, _) = c.on_message(&cfg, 0, Peer::Broker(1), &none(2)).unwrap();
    assert_eq!(business.queues[2].cursor, 2, "from last: at its end");
    let (retried, _) = c.on_message(&cfg, 0, Peer::Broker(1), &none(4)).unwrap();
    assert_eq!(retried.queues[4].cursor, 0, "a retry queue: from 0");
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
    // Connecting rebalances; the heartbeat on the new connection comes
    // from the channel's activation, a step of its own, so the member
    // query may reach the broker first.
    let (connected, out) = after
        .on_timer(&cfg, 0, &Timer::Connect { broker: 0 })
        .unwrap();
    assert_eq!(sends(&out), []);
    assert!(out.contains(&Output::Arm(Timer::ChannelActive { broker: 0 })));
    assert_eq!(connected.due, 1);
    let (asking, _) = connected
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .unwrap();
    assert_eq!(asking.querying.map(|q| q.epoch), Some(1), "asked first");
    let (active, out) = asking
        .on_timer(&cfg, 0, &Timer::ChannelActive { broker: 0 })
        .unwrap();
    let heartbeat = Message::Heartbeat {
        epoch: 1,
        topics: 1,
    };
    assert_eq!(sends(&out), [(Peer::Broker(0), heartbeat)]);
    assert_eq!(active.due, 1, "rebalanceImmediately after the heartbeat");
}

/// A second channel ([`Fault::SecondChannel`]): the consumer's next new
/// connection is opened twice, so the broker lists it twice until its
/// scan expires the silent channel; a member that allocates on that
/// listing takes the block of the third entry, and the second entry's
/// block is nobody's. The broker sends itself the expiry, so the client's
/// own calls to it are not held behind it.
#[test]
fn a_second_channel_lists_its_client_twice_until_it_expires() {
    let cfg = common::config(Scenario::ZombieConsumer);
    let (c1, _) = ConsumerState::start(&cfg, 0);
    let armed = ConsumerState {
        faults: c1.faults.with(Fault::SecondChannel),
        ..c1
    };
    let (active, out) = armed
        .on_timer(&cfg, 0, &Timer::ChannelActive { broker: 0 })
        .unwrap();
    assert_eq!(
        sends(&out),
        [
            (Peer::Broker(0), HEARTBEAT),
            (Peer::Broker(0), Message::SecondChannel { epoch: 0 }),
        ]
    );
    assert!(!active.faults.contains(Fault::SecondChannel), "once");

    let cfg = healthy();
    let mut broker = BrokerState::start(&cfg, 0).0;
    broker.memory.members = 0b011;
    let second = Message::SecondChannel { epoch: 0 };
    // Only a member's second channel is listed.
    assert!(broker
        .on_message(&cfg, 0, Peer::Consumer(2), &second)
        .is_none());
    let (twice, out) = broker
        .on_message(&cfg, 0, Peer::Consumer(0), &second)
        .expect("a new channel in the group");
    assert_eq!((twice.memory.members, twice.memory.twice), (0b011, 0b001));
    let expired = Message::SecondChannelExpired {
        consumer: 0,
        epoch: 0,
    };
    let (expiry, notices): (Vec<_>, Vec<_>) = sends(&out)
        .into_iter()
        .partition(|(to, _)| *to == Peer::Broker(0));
    assert_eq!(expiry, [(Peer::Broker(0), expired)]);
    let notified: Vec<Peer> = notices.into_iter().map(|(to, _)| to).collect();
    assert_eq!(notified, [0, 1].map(Peer::Consumer));
    let (_, out) = twice
        .on_message(
            &cfg,
            0,
            Peer::Consumer(1),
            &Message::GetConsumerList { topic: 0, epoch: 0 },
        )
        .unwrap();
    let listing = Message::ConsumerList {
        topic: 0,
        members: 0b011,
        twice: 0b001,
        epoch: 0,
    };
    assert_eq!(sends(&out), [(Peer::Consumer(1), listing)]);

    // c2, third on [c1 c1 c2], keeps the last of the four queues only.
    let (c2, _) = ConsumerState::start(&cfg, 1);
    assert_eq!(c2.owned, 0b1100);
    let asking = ConsumerState {
        querying: Some(Query {
            topic: 0,
            broker: 0,
            epoch: 0,
        }),
        ..c2
    };
    let (allocated, _) = asking
        .on_message(&cfg, 1, Peer::Broker(0), &listing)
        .unwrap();
    assert_eq!(allocated.owned, 0b1000);

    // The scan removes the silent channel and tells nobody; another
    // broker's scan is not this one's.
    assert!(twice
        .on_message(&cfg, 0, Peer::Broker(1), &expired)
        .is_none());
    let (once, out) = twice
        .on_message(&cfg, 0, Peer::Broker(0), &expired)
        .unwrap();
    assert_eq!((once.memory.members, once.memory.twice), (0b011, 0));
    assert!(sends(&out)
        .iter()
        .all(|(_, m)| *m == Message::LaterRebalance));
    assert!(once
        .on_message(&cfg, 0, Peer::Broker(0), &expired)
        .is_none());
}

#[test]
fn a_paused_consumer_keeps_its_queues_while_brokers_expire_it() {
    let cfg = common::config(Scenario::ZombieConsumer);
    let (c1, out) = ConsumerState::start(&cfg, 0);
    assert!(out.contains(&Output::ArmFault(Fault::Pause)));
    let (paused, out) = c1.on_fault(&cfg, 0, Fault::Pause).unwrap();
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
            0,
            Peer::Consumer(0),
            &Message::ChannelClosed { epoch: 0 },
        )
        .unwrap();
    assert_eq!(after.memory.members, 0b010);
    assert_eq!(
        sends(&out),
        [(Peer::Consumer(1), Message::NotifyConsumerIdsChanged)]
    );
}

#[test]
fn every_heartbeat_replaces_the_groups_subscription_table_and_a_flip_notifies() {
    let cfg = common::config(Scenario::SubscriptionFlap);
    let broker = BrokerState::start(&cfg, 0).0;
    assert_eq!(broker.memory.subscription, 0b10, "the last member's topics");
    let topic_a = Message::Heartbeat {
        epoch: 0,
        topics: 0b01,
    };
    let (flipped, out) = broker
        .on_message(&cfg, 0, Peer::Consumer(0), &topic_a)
        .unwrap();
    assert_eq!(flipped.memory.subscription, 0b01);
    assert_eq!(sends(&out).len(), 2, "both members notified");
    assert!(flipped
        .on_message(&cfg, 0, Peer::Consumer(0), &topic_a)
        .is_none());
    // Without the table modelled the same heartbeat changes nothing.
    assert!(BrokerState::start(&healthy(), 0)
        .0
        .on_message(&healthy(), 0, Peer::Consumer(0), &topic_a)
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
        let locks = BrokerState::start(&cfg, broker).0.memory.locks;
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
            .memory
            .locks
            .holder(q)
            .is_some())
    );
}

/// A state and states that each differ from it in one field.
struct Variants<T> {
    base: T,
    all: Vec<T>,
}

impl<T: Copy + PartialEq + std::hash::Hash> Variants<T> {
    fn of(base: T) -> Self {
        Self {
            base,
            all: vec![base],
        }
    }

    /// Adds the base with `change` made, if that is a new state.
    fn vary(&mut self, change: &dyn Fn(&mut T)) {
        let mut v = self.base;
        change(&mut v);
        if v != self.base && !self.all.contains(&v) {
            self.all.push(v);
        }
    }

    /// No two of the states, more than `at_least` of them, share a
    /// fingerprint.
    fn assert_fingerprints_distinct(&self, at_least: usize) {
        use rocketmq_rebalance_model::internals::fingerprint;
        let prints: std::collections::HashSet<u64> = self.all.iter().map(fingerprint).collect();
        assert!(self.all.len() > at_least, "{} variants", self.all.len());
        assert_eq!(
            prints.len(),
            self.all.len(),
            "two variants share a fingerprint"
        );
    }
}

/// Stateright keeps a state's fingerprint, not the state: two states with
/// one hash would be explored as one. The consumer's hand-packed hash must
/// therefore tell apart every field, at the values a run can reach: each
/// variant below changes one field of one state, to a small value (which a
/// field shifted out of its place would confuse with another) or its
/// largest.
#[test]
fn every_field_of_a_consumer_changes_its_fingerprint() {
    let cfg = healthy();
    let base = ConsumerState::start(&cfg, 0).0;
    let mut variants = Variants::of(base);
    let mut vary = |change: &dyn Fn(&mut ConsumerState)| variants.vary(change);
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
    vary(&|c| c.faults.insert(Fault::LoseNotification));
    vary(&|c| c.faults.insert(Fault::FailQuery));
    vary(&|c| c.faults.insert(Fault::MissRoute));
    vary(&|c| c.faults.insert(Fault::LosePersist));
    vary(&|c| c.faults.insert(Fault::FailOffsetRead));
    vary(&|c| c.faults.insert(Fault::LoseUnlock));
    vary(&|c| c.faults.insert(Fault::FailLocks));
    vary(&|c| c.owned ^= 1 << 63);
    vary(&|c| c.views[0] = None);
    vary(&|c| c.views[0] = Some(0));
    for q in [0, 7] {
        vary(&move |c| c.queues[q].reading_offset = true);
        vary(&move |c| c.queues[q].awaiting_ack = true);
        vary(&move |c| c.queues[q].locked = true);
        vary(&move |c| c.queues[q].dropped = true);
        vary(&move |c| c.queues[q].send_back = SendBack::ToBroker);
        vary(&move |c| c.queues[q].send_back = SendBack::ByProducer(0));
        vary(&move |c| c.queues[q].send_back = SendBack::ByProducer(255));
        vary(&move |c| c.queues[q].send_back = SendBack::Later);
    }
    variants.assert_fingerprints_distinct(150);
}

/// The broker's hand-packed hash, likewise: every field, at small values
/// and at its largest (the lock table is written as the one word it is).
#[test]
fn every_field_of_a_broker_changes_its_fingerprint() {
    let base = BrokerState::start(&healthy(), 0).0;
    let mut variants = Variants::of(base);
    let mut vary = |change: &dyn Fn(&mut BrokerState)| variants.vary(change);
    for n in [1u8, 2, 3, 7, 255] {
        vary(&|b| b.memory.members = u16::from(n));
        vary(&|b| b.memory.members = u16::from(n) << 8);
        vary(&|b| b.memory.closed = u16::from(n));
        vary(&|b| b.memory.closed = u16::from(n) << 8);
        vary(&|b| b.memory.twice = u16::from(n));
        vary(&|b| b.memory.twice = u16::from(n) << 8);
        vary(&|b| b.memory.epochs = u64::from(n));
        vary(&|b| b.memory.epochs = u64::from(n) << 56);
        vary(&|b| b.memory.subscription = n);
        vary(&|b| b.memory.route.version = n);
        vary(&|b| b.memory.route.dropped = n);
        vary(&|b| b.disk.offsets = u32::from(n));
        vary(&|b| b.disk.offsets = u32::from(n) << 24);
    }
    vary(&|b| b.disk.evicted = true);
    variants.assert_fingerprints_distinct(50);
}

// The consumer's message and orderly steps, on the queue of the second
// broker: a step that mixed up queue indices, bits or epochs would show.

/// Two consumers, two brokers with one queue each, two messages a queue,
/// nobody joining: consumer 0 consumes queue 0 (broker-a), consumer 1
/// queue 1 (broker-b). Its connection to broker-b is in its third epoch.
fn with_messages(protocol: ProtocolOptions) -> (Config, ConsumerState) {
    let sizes = Sizes {
        consumers: 2,
        queues: 1,
        messages: 2,
        joins: Some(0),
        ..Sizes::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", protocol);
    assert_eq!((cfg.broker_of(0), cfg.broker_of(1)), (0, 1));
    let c0 = ConsumerState {
        epochs: 2 << 4,
        ..ConsumerState::start(&cfg, 0).0
    };
    assert_eq!((c0.owned, c0.epoch(1)), (0b01, 2));
    (cfg, c0)
}

fn orderly(timing: LockTiming) -> (Config, ConsumerState) {
    with_messages(ProtocolOptions {
        orderly: Some(timing),
        ..ProtocolOptions::default()
    })
}

/// `c` with the group's answer `members` to its question to broker-a.
fn answered(cfg: &Config, c: ConsumerState, members: u16) -> (ConsumerState, Vec<Output>) {
    let asking = ConsumerState {
        querying: Some(Query {
            topic: 0,
            broker: 0,
            epoch: 0,
        }),
        ..c
    };
    let answer = Message::ConsumerList {
        topic: 0,
        members,
        twice: 0,
        epoch: 0,
    };
    asking
        .on_message(cfg, 0, Peer::Broker(0), &answer)
        .expect("the awaited answer is a step")
}

/// Consumer 0 also holding queue 1, read up to `cursor`, with `pq` giving
/// the rest.
fn holding_both(c: ConsumerState, cursor: u8, pq: ProcessQueue) -> ConsumerState {
    let mut both = ConsumerState { owned: 0b11, ..c };
    both.queues[1] = ProcessQueue { cursor, ..pq };
    both
}

const UPDATE_1_AT_1: (Peer, Message) = (
    Peer::Broker(1),
    Message::UpdateOffset {
        queue: 1,
        offset: 1,
        epoch: 2,
    },
);

const UNLOCK_1: (Peer, Message) = (
    Peer::Broker(1),
    Message::UnlockBatch {
        queues: 0b10,
        epoch: 2,
    },
);

const RETRY: Output = Output::SendPeriodic(Peer::Consumer(0), Message::LaterRebalance);

#[test]
fn an_idle_dropped_orderly_queue_is_persisted_unlocked_and_forgotten() {
    let (cfg, c0) = orderly(LockTiming::default());
    let both = holding_both(c0, 1, ProcessQueue::default());
    let (next, out) = answered(&cfg, both, 0b11);
    assert_eq!(sends(&out), [UPDATE_1_AT_1, UNLOCK_1]);
    assert!(!out.contains(&RETRY));
    assert_eq!((next.owned, next.table(), next.dropped()), (0b01, 0b01, 0));
    assert_eq!(next.queues[1], ProcessQueue::default());
    assert_eq!(next.queues[0], c0.queues[0], "the kept queue is untouched");
    // A lost persist and a lost unlock: nothing sent, each fault used up.
    let mut unlucky = both;
    unlucky.faults.insert(Fault::LosePersist);
    unlucky.faults.insert(Fault::LoseUnlock);
    let (next, out) = answered(&cfg, unlucky, 0b11);
    assert_eq!(sends(&out), []);
    assert!(!next.faults.contains(Fault::LosePersist) && !next.faults.contains(Fault::LoseUnlock));
    assert_eq!(next.queues[1], ProcessQueue::default());
}

#[test]
fn a_dropped_orderly_queue_with_a_running_batch_waits_unless_its_lock_is_old() {
    let timing = LockTiming::default();
    let (cfg, c0) = orderly(timing);
    let running = ProcessQueue {
        from: 1,
        to: 2,
        batch_age: 1,
        lock_age: timing.unlock_delay,
        ..ProcessQueue::default()
    };
    let both = holding_both(c0, 2, running);
    let (next, out) = answered(&cfg, both, 0b11);
    assert_eq!(sends(&out), [UPDATE_1_AT_1, RETRY_SEND]);
    assert_eq!(
        (next.owned, next.table(), next.dropped()),
        (0b01, 0b11, 0b10)
    );
    assert_eq!(
        next.queues[1],
        ProcessQueue {
            dropped: true,
            ..both.queues[1]
        }
    );
    // Tried again at the next round, no longer in the allocation: it is
    // persisted at every try.
    let (again, out) = answered(&cfg, next, 0b11);
    assert_eq!(again.queues[1], next.queues[1]);
    assert_eq!(sends(&out), [UPDATE_1_AT_1, RETRY_SEND]);
    assert!(out.contains(&Output::SendPeriodic(UPDATE_1_AT_1.0, UPDATE_1_AT_1.1)));
    // Past the unlock delay it is unlocked at once; the batch goes on.
    let old = holding_both(
        c0,
        2,
        ProcessQueue {
            lock_age: timing.unlock_delay + 1,
            ..running
        },
    );
    let (next, out) = answered(&cfg, old, 0b11);
    assert_eq!(sends(&out), [UPDATE_1_AT_1, UNLOCK_1]);
    assert_eq!(
        next.queues[1],
        ProcessQueue {
            from: 1,
            to: 2,
            batch_age: 1,
            ..ProcessQueue::default()
        }
    );
    assert_eq!(next.table(), 0b01);
}

const RETRY_SEND: (Peer, Message) = (Peer::Consumer(0), Message::LaterRebalance);

#[test]
fn a_queue_allocated_again_while_dropped_waits_for_its_pull_expiry_then_is_locked_afresh() {
    let timing = LockTiming::default();
    let (cfg, c0) = orderly(timing);
    let stuck = |idle_age| {
        let mut c = c0;
        c.queues[1] = ProcessQueue {
            cursor: 1,
            locked: true,
            dropped: true,
            idle_age,
            ..ProcessQueue::default()
        };
        c
    };
    // Before the expiry: still dropped, neither consumed nor locked again.
    let young = stuck(timing.pull_expiry - 1);
    let (next, out) = answered(&cfg, young, 0b01);
    assert_eq!(sends(&out), []);
    assert_eq!((next.owned, next.dropped(), next.adding), (0b01, 0b10, 0));
    assert_eq!(next.queues[1], young.queues[1]);
    // At the expiry: persisted, unlocked, and added again under a new lock.
    let (next, out) = answered(&cfg, stuck(timing.pull_expiry), 0b01);
    let lock = (
        Peer::Broker(1),
        Message::LockBatch {
            queues: 0b10,
            epoch: 2,
        },
    );
    assert_eq!(sends(&out), [UPDATE_1_AT_1, UNLOCK_1, lock]);
    assert_eq!((next.owned, next.dropped()), (0b01, 0));
    assert_eq!((next.locking, next.adding, next.due), (0b10, 0b10, 0));
    assert_eq!(next.queues[1], ProcessQueue::default());
    // Its lock calls failing, the queue waits for the next round.
    let mut failing = stuck(timing.pull_expiry);
    failing.faults.insert(Fault::FailLocks);
    let (next, out) = answered(&cfg, failing, 0b01);
    assert_eq!(sends(&out), [UPDATE_1_AT_1, UNLOCK_1]);
    assert_eq!((next.locking, next.adding, next.due), (0, 0, 1));
}

#[test]
fn a_lock_answer_adds_a_new_queue_or_renews_a_held_one() {
    let (cfg, c0) = orderly(LockTiming::default());
    let asking = ConsumerState {
        locking: 0b11,
        adding: 0b10,
        ..c0
    };
    let answer = |granted| Message::Locked {
        asked: 0b10,
        granted,
        epoch: 2,
    };
    let mut asking = asking;
    asking.queues[1] = ProcessQueue {
        from: 0,
        to: 1,
        batch_age: 1,
        ..ProcessQueue::default()
    };
    let (added, out) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &answer(0b10))
        .unwrap();
    assert_eq!((added.owned, added.locking, added.adding), (0b11, 0b01, 0));
    assert_eq!(
        sends(&out),
        [(Peer::Broker(1), Message::QueryOffset { queue: 1, epoch: 2 })]
    );
    assert_eq!(
        added.queues[1],
        ProcessQueue {
            reading_offset: true,
            locked: true,
            ..asking.queues[1]
        },
        "read again; the batch of an earlier hold goes on"
    );
    // While a new queue's lock is in flight, the round is not over: no
    // rebalance starts; its answer ends the round, and a due topic is asked.
    let due = ConsumerState { due: 1, ..asking };
    assert!(due
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .is_none());
    let (_, out) = due
        .on_message(&cfg, 0, Peer::Broker(1), &answer(0b10))
        .unwrap();
    assert!(out.contains(&Output::Arm(Timer::Rebalance { broker: 0 })));
    let querying = ConsumerState {
        due: 1,
        querying: Some(Query {
            topic: 0,
            broker: 1,
            epoch: 2,
        }),
        ..c0
    };
    assert!(querying
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .is_none());
    let (refused, out) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &answer(0))
        .unwrap();
    assert_eq!(
        (refused.owned, refused.locking, refused.adding),
        (0b01, 0b01, 0)
    );
    assert_eq!(refused.due, 1, "the round is not balanced");
    assert_eq!(sends(&out), []);
    // On an old connection, no answer.
    let stale = Message::Locked {
        asked: 0b10,
        granted: 0b10,
        epoch: 1,
    };
    assert!(asking
        .on_message(&cfg, 0, Peer::Broker(1), &stale)
        .is_none());
    // A renewal of a held queue: granted, its lock is young again; refused,
    // it is no longer trusted.
    let mut renewing = ConsumerState {
        locking: 0b01,
        ..c0
    };
    renewing.queues[0].lock_age = 3;
    let renewal = |granted| Message::Locked {
        asked: 0b01,
        granted,
        epoch: 0,
    };
    let (renewed, _) = renewing
        .on_message(&cfg, 0, Peer::Broker(0), &renewal(0b01))
        .unwrap();
    assert_eq!(
        (renewed.queues[0].locked, renewed.queues[0].lock_age),
        (true, 0)
    );
    assert_eq!((renewed.owned, renewed.locking, renewed.due), (0b01, 0, 0));
    let (lost, _) = renewing
        .on_message(&cfg, 0, Peer::Broker(0), &renewal(0))
        .unwrap();
    assert_eq!((lost.queues[0].locked, lost.queues[0].lock_age), (false, 3));
}

#[test]
fn a_closed_connection_loses_its_lock_calls_and_a_new_queue_waits_for_the_next_round() {
    let (cfg, c0) = orderly(LockTiming::default());
    let asking = ConsumerState {
        locking: 0b11,
        adding: 0b10,
        ..c0
    };
    let closed = Message::ConnectionClosed { epoch: 2 };
    let (next, out) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &closed)
        .unwrap();
    assert_eq!((next.locking, next.adding, next.due), (0b01, 0, 1));
    assert_eq!((next.epoch(0), next.epoch(1)), (0, 3));
    assert!(out.contains(&Output::Arm(Timer::Connect { broker: 1 })));
    let (again, _) = next
        .on_message(
            &cfg,
            0,
            Peer::Broker(1),
            &Message::ConnectionClosed { epoch: 3 },
        )
        .unwrap();
    assert_eq!((again.epoch(0), again.epoch(1)), (0, 4));
    // Only renewals in flight there: nothing owed.
    let renewing = ConsumerState {
        locking: 0b10,
        ..c0
    };
    let (next, _) = renewing
        .on_message(&cfg, 0, Peer::Broker(1), &closed)
        .unwrap();
    assert_eq!((next.locking, next.adding, next.due), (0, 0, 0));
}

#[test]
fn the_clock_ages_locks_of_the_table_batches_and_dropped_queues_each_to_its_cap() {
    let timing = LockTiming {
        batch: 2,
        pull_expiry: 3,
        ..LockTiming::default()
    };
    let (cfg, c0) = orderly(timing);
    let cap = timing.validity.max(timing.unlock_delay) + 1;
    let mut c = ConsumerState {
        renew_age: timing.renew - 1,
        ..c0
    };
    c.queues[0] = ProcessQueue {
        from: 0,
        to: 1,
        lock_age: cap - 1,
        batch_age: timing.batch - 1,
        ..c.queues[0]
    };
    c.queues[1] = ProcessQueue {
        dropped: true,
        lock_age: 0,
        idle_age: timing.pull_expiry - 1,
        ..ProcessQueue::default()
    };
    c.queues[2].lock_age = 1;
    let once = c.elapse(&cfg, 0, true);
    assert_eq!(once.renew_age, timing.renew);
    assert_eq!(once.lag, 0);
    assert_eq!(
        (once.queues[0].lock_age, once.queues[0].batch_age),
        (cap, timing.batch)
    );
    assert_eq!(
        (once.queues[1].lock_age, once.queues[1].idle_age),
        (1, timing.pull_expiry)
    );
    assert_eq!(once.queues[2].lock_age, 1, "not in the table: no lock");
    assert!(once.deadline(&cfg));
    let twice = once.elapse(&cfg, 0, true);
    assert_eq!(twice.renew_age, timing.renew);
    assert_eq!(twice.queues[0], once.queues[0], "each age at its cap");
    assert_eq!(twice.queues[1].idle_age, timing.pull_expiry);
    assert_eq!(twice.queues[1].lock_age, 2);
    // A wall clock stepped back by the tick: locks do not age; the renewal
    // (the monotonic clock's), batches and dropped queues (the brokers'
    // and the application's time) do.
    let behind = c.elapse(&cfg, 0, false);
    assert_eq!(behind.lag, 1);
    assert_eq!(behind.renew_age, once.renew_age);
    assert_eq!(behind.queues[0].lock_age, c.queues[0].lock_age);
    assert_eq!(behind.queues[0].batch_age, timing.batch);
    assert_eq!(behind.queues[1].idle_age, timing.pull_expiry);
    assert_eq!(behind.elapse(&cfg, 0, false).lag, 2);
    // A consumer that has left has no clock of its own, but the batches it
    // still runs (its shutdown does not wait for them) age.
    let left = ConsumerState {
        phase: Phase::Left,
        ..c
    };
    let mut aged = left;
    aged.queues[0].batch_age = timing.batch;
    assert_eq!(left.elapse(&cfg, 0, true), aged);
    assert!(aged.deadline(&cfg), "its batch at its longest must end");
}

#[test]
fn pull_finish_and_commit_of_the_second_queue() {
    let protocol = ProtocolOptions {
        commit: rocketmq_rebalance_model::configuration::Commit::Sync,
        ..ProtocolOptions::default()
    };
    let (mut cfg, c0) = with_messages(protocol);
    let both = holding_both(
        c0,
        1,
        ProcessQueue {
            batch_age: 1,
            ..ProcessQueue::default()
        },
    );
    let pull = Timer::Pull { queue: 1 };
    let (pulled, out) = both.on_timer(&cfg, 0, &pull).unwrap();
    assert_eq!(out, [Output::Arm(pull)]);
    let batch = ProcessQueue {
        cursor: 2,
        from: 1,
        to: 2,
        ..ProcessQueue::default()
    };
    assert_eq!(pulled.queues[1], batch);
    assert_eq!(pulled.queues[0], both.queues[0]);
    assert!(pulled.on_timer(&cfg, 0, &pull).is_none(), "a batch runs");
    let done = Timer::Done { queue: 1 };
    let (finished, out) = pulled.on_timer(&cfg, 0, &done).unwrap();
    assert_eq!(
        out,
        [
            Output::Delivered {
                queue: 1,
                from: 1,
                to: 2
            },
            Output::Arm(done),
            Output::Send(
                Peer::Broker(1),
                Message::CommitOffset {
                    queue: 1,
                    offset: 2,
                    epoch: 2
                }
            ),
        ]
    );
    assert_eq!(
        finished.queues[1],
        ProcessQueue {
            cursor: 2,
            awaiting_ack: true,
            ..ProcessQueue::default()
        }
    );
    // The end of the log, an acknowledgement awaited, an offset being read,
    // a queue not held: no pull.
    let at = |pq: ProcessQueue| holding_both(c0, pq.cursor, pq);
    for blocked in [
        at(ProcessQueue {
            cursor: 2,
            ..ProcessQueue::default()
        }),
        at(ProcessQueue {
            awaiting_ack: true,
            ..ProcessQueue::default()
        }),
        at(ProcessQueue::reading()),
        ConsumerState {
            owned: 0b01,
            ..both
        },
    ] {
        assert!(blocked.on_timer(&cfg, 0, &pull).is_none(), "{blocked:?}");
    }
    // Dropped while running, the batch still finishes, unrecorded.
    let dropped = ConsumerState {
        owned: 0b01,
        ..pulled
    };
    let (after, out) = dropped.on_timer(&cfg, 0, &done).unwrap();
    assert_eq!(after.queues[1], ProcessQueue::default());
    assert_eq!(sends(&out), []);
    // The broker's acknowledgement lets the next pull go.
    let (acked, _) = finished
        .on_message(&cfg, 0, Peer::Broker(1), &Message::CommitAck { queue: 1 })
        .unwrap();
    assert!(!acked.queues[1].awaiting_ack);
    cfg.consumers[0].unreachable = 0b10;
    assert!(
        both.on_timer(&cfg, 0, &pull).is_none(),
        "broker-b unreachable"
    );
}

#[test]
fn a_queue_taken_over_reads_its_offset_from_its_own_broker() {
    let (cfg, c0) = with_messages(ProtocolOptions::default());
    let (next, out) = answered(&cfg, c0, 0b01);
    assert_eq!(next.owned, 0b11);
    assert_eq!(
        sends(&out),
        [(Peer::Broker(1), Message::QueryOffset { queue: 1, epoch: 2 })]
    );
    assert_eq!(next.queues[1], ProcessQueue::reading());
    let offset = |stored, epoch| Message::Offset {
        queue: 1,
        stored,
        in_memory: true,
        epoch,
    };
    assert!(next
        .on_message(&cfg, 0, Peer::Broker(1), &offset(1, 0))
        .is_none());
    let (reading, _) = next
        .on_message(&cfg, 0, Peer::Broker(1), &offset(1, 2))
        .unwrap();
    assert_eq!(
        reading.queues[1],
        ProcessQueue {
            cursor: 1,
            ..ProcessQueue::default()
        }
    );
    let (fresh, _) = next
        .on_message(&cfg, 0, Peer::Broker(1), &offset(NO_OFFSET, 2))
        .unwrap();
    assert_eq!(fresh.queues[1].cursor, 0);
    // An offset for a queue it does not hold, or has read already: no step.
    for (c, queue) in [(c0, 1), (reading, 1), (next, 0)] {
        let answer = Message::Offset {
            queue,
            stored: 1,
            in_memory: true,
            epoch: c.epoch(cfg.broker_of(usize::from(queue))),
        };
        let from = Peer::Broker(cfg.broker_of(usize::from(queue)));
        assert!(
            c.on_message(&cfg, 0, from, &answer).is_none(),
            "queue {queue}"
        );
    }
    // A read that fails leaves that queue, and only it, out of this round.
    let mut failing = next;
    failing.faults.insert(Fault::FailOffsetRead);
    failing.queues[1].from = 1;
    failing.queues[1].to = 2;
    let (failed, out) = failing
        .on_message(&cfg, 0, Peer::Broker(1), &offset(1, 2))
        .unwrap();
    assert_eq!((failed.owned, failed.due), (0b01, 1));
    assert!(!failed.faults.contains(Fault::FailOffsetRead));
    assert_eq!(
        failed.queues[1],
        ProcessQueue {
            from: 1,
            to: 2,
            ..ProcessQueue::default()
        }
    );
    assert_eq!(sends(&out), [(Peer::Consumer(0), Message::LaterRebalance)]);
    // A queue given up keeps only its running batch; its offset goes to
    // its broker.
    let giving_up = holding_both(
        c0,
        2,
        ProcessQueue {
            from: 1,
            to: 2,
            ..ProcessQueue::default()
        },
    );
    let (next, out) = answered(&cfg, giving_up, 0b11);
    assert_eq!(sends(&out), [UPDATE_1_AT_1]);
    let batch = ProcessQueue {
        from: 1,
        to: 2,
        ..ProcessQueue::default()
    };
    assert_eq!(next.queues[1], batch);
    // Taken back while that batch runs: the batch goes on while the offset
    // is read.
    let (back, _) = answered(&cfg, next, 0b01);
    assert_eq!(
        back.queues[1],
        ProcessQueue {
            reading_offset: true,
            ..batch
        }
    );
}

/// With pull requests a pull asks the queue's broker, carrying the offset
/// in memory, which the broker commits before it answers; the answer
/// starts the batch of the process queue that asked, and only of it.
#[test]
fn a_pull_request_commits_its_offset_and_its_answer_goes_to_the_process_queue_that_asked() {
    let (cfg, c0) = with_messages(ProtocolOptions {
        pull_requests: true,
        ..ProtocolOptions::default()
    });
    let both = holding_both(c0, 1, ProcessQueue::default());
    let (asking, out) = both
        .on_timer(&cfg, 0, &Timer::Pull { queue: 1 })
        .expect("a pull");
    let request = Message::PullMessage {
        queue: 1,
        offset: 1,
        commit: 1,
        generation: false,
        epoch: 2,
    };
    assert_eq!(sends(&out), [(Peer::Broker(1), request)]);
    assert!(asking.queues[1].pulling && !asking.queues[1].running());
    assert!(asking
        .on_timer(&cfg, 0, &Timer::Pull { queue: 1 })
        .is_none());
    let broker = BrokerState::start(&cfg, 1).0;
    let (committed, out) = broker
        .on_message(&cfg, 1, Peer::Consumer(0), &request)
        .unwrap();
    assert_eq!(committed.offset(1), 1, "the commit-offset flag");
    let answer = Message::PullResult {
        queue: 1,
        from: 1,
        to: 2,
        generation: false,
        epoch: 2,
    };
    assert_eq!(sends(&out), [(Peer::Consumer(0), answer)]);
    let (consuming, _) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &answer)
        .unwrap();
    assert_eq!(
        consuming.queues[1],
        ProcessQueue {
            cursor: 2,
            from: 1,
            to: 2,
            ..ProcessQueue::default()
        }
    );
    // Dropped and taken again before the answer: a new process queue, of
    // another generation, which the old answer does not start.
    let (dropped, _) = answered(&cfg, asking, 0b11);
    let (again, _) = answered(&cfg, dropped, 0b01);
    assert!(again.queues[1].reading_offset && again.queues[1].generation);
    assert!(again
        .on_message(&cfg, 0, Peer::Broker(1), &answer)
        .is_none());
    // A closed connection loses the pull: the queue is pulled again later.
    let closed = Message::ConnectionClosed { epoch: 2 };
    let (reconnecting, _) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &closed)
        .unwrap();
    assert!(!reconnecting.queues[1].pulling);
    // At offset 0 the flag is off.
    let fresh = holding_both(c0, 0, ProcessQueue::default());
    let (_, out) = fresh.on_timer(&cfg, 0, &Timer::Pull { queue: 1 }).unwrap();
    assert!(matches!(
        sends(&out)[..],
        [(
            _,
            Message::PullMessage {
                commit: NO_OFFSET,
                ..
            }
        )]
    ));
}

/// An abstraction (audit F3-12), pinned: the broker serves a pull, and
/// commits the offset it carries, whatever its member and subscription
/// tables hold, where RocketMQ answers `SUBSCRIPTION_NOT_EXIST` without a
/// commit until the consumer's heartbeat has filled them (a restarted
/// broker before the reconnection's heartbeat). The model's extra commits
/// come a few seconds early, a superset: no hazard is hidden by them.
#[test]
fn a_pull_is_served_before_its_consumer_is_registered() {
    let (cfg, _) = with_messages(ProtocolOptions {
        pull_requests: true,
        ..ProtocolOptions::default()
    });
    let mut broker = BrokerState::start(&cfg, 1).0;
    broker.memory = broker.memory.restarted(&cfg);
    assert_eq!(broker.memory.members, 0, "nobody registered");
    let request = Message::PullMessage {
        queue: 1,
        offset: 1,
        commit: 1,
        generation: false,
        epoch: 1,
    };
    let (served, out) = broker
        .on_message(&cfg, 1, Peer::Consumer(0), &request)
        .expect("served");
    assert_eq!(served.offset(1), 1, "committed before any heartbeat");
    assert!(matches!(
        sends(&out)[..],
        [(Peer::Consumer(0), Message::PullResult { .. })]
    ));
}

#[test]
fn an_orderly_pull_needs_a_lock_it_trusts() {
    let timing = LockTiming::default();
    let (cfg, c0) = orderly(timing);
    let pull = Timer::Pull { queue: 1 };
    let held = |locked, lock_age| {
        holding_both(
            c0,
            0,
            ProcessQueue {
                locked,
                lock_age,
                ..ProcessQueue::default()
            },
        )
    };
    let (pulled, _) = held(true, timing.validity)
        .on_timer(&cfg, 0, &pull)
        .unwrap();
    assert_eq!((pulled.queues[1].from, pulled.queues[1].to), (0, 1));
    let lock = Output::Send(
        Peer::Broker(1),
        Message::LockBatch {
            queues: 0b10,
            epoch: 2,
        },
    );
    for untrusted in [held(true, timing.validity + 1), held(false, 0)] {
        let (locking, out) = untrusted.on_timer(&cfg, 0, &pull).unwrap();
        assert_eq!(out, [Output::Arm(pull), lock.clone()]);
        assert_eq!((locking.locking, locking.adding), (0b10, 0));
        assert_eq!(locking.queues, untrusted.queues, "nothing pulled");
        assert!(locking.on_timer(&cfg, 0, &pull).is_none(), "one lock call");
        let mut failing = untrusted;
        failing.faults.insert(Fault::FailLocks);
        assert!(failing.on_timer(&cfg, 0, &pull).is_none());
    }
}

#[test]
fn only_the_awaited_answer_and_a_newer_route_are_acted_on() {
    let (cfg, c0) = with_messages(ProtocolOptions::default());
    let asking = ConsumerState {
        querying: Some(Query {
            topic: 0,
            broker: 1,
            epoch: 2,
        }),
        ..c0
    };
    let list = |epoch| Message::ConsumerList {
        topic: 0,
        members: 0b01,
        twice: 0,
        epoch,
    };
    assert!(asking
        .on_message(&cfg, 0, Peer::Broker(1), &list(2))
        .is_some());
    for (from, msg) in [
        (Peer::Broker(1), list(0)),
        (Peer::Broker(0), list(2)),
        (Peer::Consumer(1), list(2)),
    ] {
        assert!(asking.on_message(&cfg, 0, from, &msg).is_none(), "{from:?}");
    }
    // A wake-up while it waits marks the topic due and schedules nothing.
    let (woken, out) = asking
        .on_message(&cfg, 0, Peer::Broker(0), &Message::NotifyConsumerIdsChanged)
        .unwrap();
    assert_eq!((woken.due, out.len()), (1, 0));
    // With nothing due, its turn passes.
    assert!(c0
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .is_none());
    // A later poll applies a route only if it differs and is not older.
    let cfg = config(Sizes {
        route_changes: 2,
        ..Sizes::default()
    });
    let c = ConsumerState {
        route: Config::true_route(1),
        ..ConsumerState::start(&cfg, 0).0
    };
    let poll = |version, dropped| Message::LaterPoll {
        route: Route { version, dropped },
    };
    let (moved, _) = c
        .on_message(&cfg, 0, Peer::Consumer(0), &poll(2, 0))
        .unwrap();
    assert_eq!(moved.route, Config::true_route(2));
    assert!(c
        .on_message(&cfg, 0, Peer::Consumer(0), &poll(0, 0))
        .is_none());
    assert!(c
        .on_message(&cfg, 0, Peer::Consumer(0), &poll(1, 0))
        .is_none());
    let (same_version, _) = c
        .on_message(&cfg, 0, Peer::Consumer(0), &poll(1, 1))
        .unwrap();
    assert_eq!(
        same_version.route,
        Route {
            version: 1,
            dropped: 1
        }
    );
}

#[test]
fn offsets_go_only_to_brokers_it_reaches() {
    let (mut cfg, c0) = with_messages(ProtocolOptions::default());
    let both = holding_both(c0, 1, ProcessQueue::default());
    let updates = |cfg: &Config| {
        let (_, out) = both.on_timer(cfg, 0, &Timer::Persist).unwrap();
        sends(&out)
    };
    let update_0 = (
        Peer::Broker(0),
        Message::UpdateOffset {
            queue: 0,
            offset: 0,
            epoch: 0,
        },
    );
    assert_eq!(updates(&cfg), [update_0, UPDATE_1_AT_1]);
    cfg.consumers[0].unreachable = 0b10;
    assert_eq!(updates(&cfg), [update_0]);
}

#[test]
fn a_subscription_heartbeats_at_once_an_unsubscription_forgets_the_topic() {
    let sizes = Sizes {
        topics: 2,
        ..Sizes::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", ProtocolOptions::default());
    let c0 = ConsumerState::start(&cfg, 0).0;
    assert_eq!(c0.topics, 0b11);
    let (left, out) = c0.on_fault(&cfg, 0, Fault::Resubscribe).unwrap();
    assert_eq!((left.topics, left.views[1], left.due), (0b01, None, 0b01));
    assert_eq!(sends(&out), []);
    let (back, out) = left.on_fault(&cfg, 0, Fault::Resubscribe).unwrap();
    assert_eq!((back.topics, back.due), (0b11, 0b11));
    let heartbeat = |b| {
        (
            Peer::Broker(b),
            Message::Heartbeat {
                epoch: 0,
                topics: 0b11,
            },
        )
    };
    assert_eq!(sends(&out), [heartbeat(0), heartbeat(1)]);
    // A consumer of one topic does not unsubscribe from its last.
    assert!(ConsumerState::start(&healthy(), 0)
        .0
        .on_fault(&healthy(), 0, Fault::Resubscribe)
        .is_none());
}

/// `truncateMessageQueueNotMyTopic`: the queues of a topic it no longer
/// subscribes to leave its table at the end of the round without a persist
/// or an unlock, a running batch going on; its shutdown then unlocks only
/// what its table still has, so the broker keeps the lock until its lease
/// ends.
#[test]
fn an_unsubscribed_topics_queues_are_dropped_without_a_persist_or_an_unlock() {
    let sizes = Sizes {
        consumers: 2,
        brokers: 1,
        topics: 2,
        queues: 1,
        joins: Some(0),
        subscription_changes: 1,
        messages: 2,
        ..Sizes::default()
    };
    let orderly = ProtocolOptions {
        orderly: Some(LockTiming::default()),
        ..ProtocolOptions::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", orderly);
    let mut c0 = ConsumerState::start(&cfg, 0).0;
    assert_eq!((c0.owned, c0.table()), (0b11, 0b11));
    let running = ProcessQueue {
        cursor: 2,
        from: 1,
        to: 2,
        locked: true,
        ..ProcessQueue::default()
    };
    c0.queues[1] = running;
    let (left, _) = c0.on_fault(&cfg, 0, Fault::Resubscribe).unwrap();
    let (next, out) = answered(&cfg, left, 0b11);
    assert_eq!(sends(&out), [], "no persist, no unlock");
    assert_eq!((next.owned, next.table()), (0b01, 0b01));
    assert_eq!(
        next.queues[1],
        ProcessQueue {
            from: 1,
            to: 2,
            ..ProcessQueue::default()
        },
        "only the running batch is left"
    );
    let (_, out) = next.on_fault(&cfg, 0, Fault::Shutdown).unwrap();
    let unlocks: Vec<(Peer, Message)> = sends(&out)
        .into_iter()
        .filter(|(_, m)| matches!(m, Message::UnlockBatch { .. }))
        .collect();
    let unlock_0 = Message::UnlockBatch {
        queues: 0b01,
        epoch: 0,
    };
    assert_eq!(unlocks, [(Peer::Broker(0), unlock_0)]);
}

#[test]
fn a_server_side_assignment_is_applied_only_when_awaited() {
    use rocketmq_rebalance_model::configuration::Allocator;
    let (cfg, c0) = with_messages(ProtocolOptions {
        assignment: Allocator::Server,
        ..ProtocolOptions::default()
    });
    let asking = ConsumerState {
        querying: Some(Query {
            topic: 0,
            broker: 1,
            epoch: 2,
        }),
        ..c0
    };
    let answer = |epoch| Message::BrokerAllocation {
        topic: 0,
        members: 0b01,
        twice: 0,
        route: Route::default(),
        epoch,
    };
    let (applied, _) = asking
        .on_message(&cfg, 0, Peer::Broker(1), &answer(2))
        .unwrap();
    assert_eq!((applied.owned, applied.querying), (0b11, None));
    assert!(asking
        .on_message(&cfg, 0, Peer::Broker(1), &answer(0))
        .is_none());
    assert!(asking
        .on_message(&cfg, 0, Peer::Broker(0), &answer(2))
        .is_none());
}

#[test]
fn an_orderly_shutdown_unlocks_each_brokers_queues_there() {
    let (cfg, c0) = orderly(LockTiming::default());
    let (left, out) = c0.on_fault(&cfg, 0, Fault::Shutdown).unwrap();
    assert_eq!(left.phase, Phase::Left);
    let unlock_0 = (
        Peer::Broker(0),
        Message::UnlockBatch {
            queues: 0b01,
            epoch: 0,
        },
    );
    assert_eq!(sends(&out)[0], unlock_0);
    assert!(!sends(&out)
        .iter()
        .any(|(to, m)| *to == Peer::Broker(1) && matches!(m, Message::UnlockBatch { .. })));
}

/// A graceful shutdown keeps only the batches the application is running,
/// and those only when its listener ignores the interrupt: a failed batch
/// being sent back, or waiting to be consumed again, is not run again (the
/// send-back was the stopped process's call, the retry a task of the
/// executor the shutdown stopped).
#[test]
fn a_shutdown_keeps_only_a_running_batch_of_a_listener_that_ignores_the_interrupt() {
    let (cfg, c0) = with_messages(ProtocolOptions::default());
    let batch = ProcessQueue {
        from: 0,
        to: 1,
        cursor: 1,
        ..ProcessQueue::default()
    };
    let kept = |cfg: &Config, send_back| {
        let mut c = c0;
        c.queues[0] = ProcessQueue { send_back, ..batch };
        let (left, out) = c.on_fault(cfg, 0, Fault::Shutdown).unwrap();
        assert_eq!(left.phase, Phase::Left);
        let armed = out.contains(&Output::Arm(Timer::Done { queue: 0 }));
        assert_eq!(armed, left.queues[0].running(), "{send_back:?}");
        armed
    };
    assert!(kept(&cfg, SendBack::No), "it runs on after the shutdown");
    for failed in [SendBack::ToBroker, SendBack::ByProducer(1), SendBack::Later] {
        assert!(!kept(&cfg, failed), "{failed:?} is not consumed again");
    }
    let stopping = with_messages(ProtocolOptions::default())
        .0
        .with_interruptible_listeners(&["c1".to_string()])
        .unwrap();
    assert!(!kept(&stopping, SendBack::No), "interrupted: it ends there");
}

/// A queue already dropped, waiting in the table for its running batch, is
/// not unlocked at shutdown (`unlockAll` skips dropped process queues,
/// audit F3-14): its lock stays the broker's until the lease ends.
#[test]
fn an_orderly_shutdown_leaves_a_dropped_queues_lock_to_its_lease() {
    let (cfg, c0) = orderly(LockTiming::default());
    let mut dropping = ConsumerState { owned: 0, ..c0 };
    dropping.queues[0] = ProcessQueue {
        locked: true,
        dropped: true,
        from: 0,
        to: 1,
        cursor: 1,
        ..ProcessQueue::default()
    };
    assert_eq!(dropping.table(), 0b01, "still in its table");
    let (_, out) = dropping.on_fault(&cfg, 0, Fault::Shutdown).unwrap();
    assert!(
        !sends(&out)
            .iter()
            .any(|(_, m)| matches!(m, Message::UnlockBatch { .. })),
        "{out:?}"
    );
}

#[test]
fn a_failed_query_uses_up_its_fault_and_ends_the_round() {
    let cfg = healthy();
    let c0 = ConsumerState {
        due: 1,
        ..ConsumerState::start(&cfg, 0).0
    };
    let (faulty, _) = c0.on_fault(&cfg, 0, Fault::FailQuery).unwrap();
    assert!(faulty.faults.contains(Fault::FailQuery));
    let (failed, out) = faulty
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .unwrap();
    assert!(!failed.faults.contains(Fault::FailQuery));
    assert_eq!((failed.due, failed.querying), (0, None));
    assert_eq!(
        out,
        [
            Output::Send(Peer::Consumer(0), Message::LaterRebalance),
            Output::Disarm(Timer::Rebalance { broker: 0 }),
            Output::Disarm(Timer::Rebalance { broker: 1 }),
        ]
    );
    // The next round asks.
    let (woken, _) = failed
        .on_message(&cfg, 0, Peer::Consumer(0), &Message::LaterRebalance)
        .unwrap();
    let (asking, _) = woken
        .on_timer(&cfg, 0, &Timer::Rebalance { broker: 0 })
        .unwrap();
    assert!(asking.querying.is_some());
}

#[test]
fn a_dropped_orderly_queue_ignores_its_late_offset_and_is_not_unlocked_where_unreachable() {
    let (mut cfg, c0) = orderly(LockTiming::default());
    let mut late = c0;
    late.queues[1] = ProcessQueue {
        dropped: true,
        ..ProcessQueue::reading()
    };
    let offset = Message::Offset {
        queue: 1,
        stored: 1,
        in_memory: true,
        epoch: 2,
    };
    assert!(late.on_message(&cfg, 0, Peer::Broker(1), &offset).is_none());
    // Cut off from broker-b, it neither persists nor unlocks there.
    cfg.consumers[0].unreachable = 0b10;
    let both = holding_both(c0, 1, ProcessQueue::default());
    let (next, out) = answered(&cfg, both, 0b11);
    assert_eq!(sends(&out), []);
    assert_eq!(next.table(), 0b01);
    // And a close from there (its last word) is not followed by a reconnect.
    let closed = Message::ConnectionClosed { epoch: 2 };
    let (after, out) = c0.on_message(&cfg, 0, Peer::Broker(1), &closed).unwrap();
    assert_eq!((after.epoch(1), out.len()), (3, 0));
}

#[test]
fn a_failed_offset_read_makes_its_own_topic_due() {
    let sizes = Sizes {
        consumers: 2,
        topics: 2,
        queues: 1,
        messages: 1,
        joins: Some(0),
        ..Sizes::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", ProtocolOptions::default());
    let q = (0..cfg.queues.len())
        .find(|&q| cfg.queues[q].topic == 1)
        .unwrap();
    let mut c = ConsumerState::start(&cfg, 0).0;
    c.owned |= 1 << q;
    c.queues[q] = ProcessQueue::reading();
    c.faults.insert(Fault::FailOffsetRead);
    let broker = cfg.broker_of(q);
    let offset = Message::Offset {
        queue: q as u8,
        stored: 0,
        in_memory: true,
        epoch: 0,
    };
    let (failed, _) = c
        .on_message(&cfg, 0, Peer::Broker(broker), &offset)
        .unwrap();
    assert_eq!(failed.due, 0b10);
    assert_eq!(failed.owned, c.owned & !(1 << q));
}

#[test]
fn a_broker_acknowledges_every_commit_even_one_it_already_has() {
    let (cfg, _) = with_messages(ProtocolOptions::default());
    let broker = BrokerState::start(&cfg, 0).0;
    let commit = |offset| Message::CommitOffset {
        queue: 0,
        offset,
        epoch: 0,
    };
    let ack = (Peer::Consumer(0), Message::CommitAck { queue: 0 });
    let (stored, out) = broker
        .on_message(&cfg, 0, Peer::Consumer(0), &commit(1))
        .unwrap();
    assert_eq!((stored.offset(0), sends(&out)), (1, vec![ack]));
    let (same, out) = stored
        .on_message(&cfg, 0, Peer::Consumer(0), &commit(1))
        .expect("the consumer waits for the acknowledgement");
    assert_eq!((same, sends(&out)), (stored, vec![ack]));
    // An update that changes nothing is no step.
    let update = Message::UpdateOffset {
        queue: 0,
        offset: 1,
        epoch: 0,
    };
    assert!(stored
        .on_message(&cfg, 0, Peer::Consumer(0), &update)
        .is_none());
}

#[test]
fn a_route_that_drops_a_broker_with_a_new_queues_lock_in_flight_schedules_the_next_round() {
    let (cfg, c0) = orderly(LockTiming::default());
    let adding = ConsumerState {
        locking: 0b10,
        adding: 0b10,
        ..c0
    };
    let without_b = Message::RouteData {
        route: Route {
            version: 0,
            dropped: 0b10,
        },
    };
    let (next, out) = adding
        .on_message(&cfg, 0, Peer::NameServer, &without_b)
        .unwrap();
    assert_eq!((next.locking, next.adding, next.due), (0, 0, 1));
    assert!(
        out.contains(&Output::Arm(Timer::Rebalance { broker: 0 })),
        "the round that failed to lock is retried: {out:?}"
    );
}

/// A batch whose listener returns `RECONSUME_LATER` is sent back to its
/// queue's broker, and the offset stays at it until a broker has stored
/// it; a send-back that gets no answer (the connection closed) goes through
/// the client's producer to another broker, and only when that fails too
/// is the batch consumed again, from memory, not lost.
#[test]
fn a_failed_batch_is_sent_back_then_sent_by_the_producer_then_consumed_again() {
    let (cfg, c0) = with_messages(ProtocolOptions::default());
    let running = ProcessQueue {
        from: 1,
        to: 2,
        ..ProcessQueue::default()
    };
    let mut failing = holding_both(c0, 2, running);
    failing.faults.insert(Fault::FailConsume);
    let done = Timer::Done { queue: 1 };
    let (sending, out) = failing.on_timer(&cfg, 0, &done).expect("the batch ends");
    assert!(out.contains(&Output::Delivered {
        queue: 1,
        from: 1,
        to: 2
    }));
    let send_back = |epoch| Message::SendMessageBack {
        queue: 1,
        from: 1,
        to: 2,
        epoch,
    };
    assert_eq!(sends(&out), [(Peer::Broker(1), send_back(2))]);
    assert!(!sending.faults.contains(Fault::FailConsume));
    assert_eq!(sending.queues[1].send_back, SendBack::ToBroker);
    assert!(sending.queues[1].sending_back() && sending.queues[1].running());
    assert_eq!(sending.queues[1].local_offset(), 1, "held: not past it");
    assert!(
        sending.on_timer(&cfg, 0, &done).is_none(),
        "the call blocks"
    );
    // Stored: the batch is done with, and the offset moves past it.
    let stored = Message::SentBack { queue: 1, epoch: 2 };
    let (sent, out) = sending
        .on_message(&cfg, 0, Peer::Broker(1), &stored)
        .unwrap();
    assert_eq!(sends(&out), []);
    assert_eq!(
        sent.queues[1],
        ProcessQueue {
            cursor: 2,
            ..ProcessQueue::default()
        }
    );
    // No answer: the connection closed. The producer sends the batch to
    // the retry topic through the other broker, broker-a.
    let closed = Message::ConnectionClosed { epoch: 2 };
    let (resending, out) = sending
        .on_message(&cfg, 0, Peer::Broker(1), &closed)
        .unwrap();
    assert_eq!(resending.queues[1].send_back, SendBack::ByProducer(0));
    assert!(
        sends(&out).contains(&(Peer::Broker(0), send_back(0))),
        "{out:?}"
    );
    assert!(
        resending
            .on_message(&cfg, 0, Peer::Broker(1), &stored)
            .is_none(),
        "a late answer from the broker that failed"
    );
    let stored_by_a = Message::SentBack { queue: 1, epoch: 0 };
    let (sent, _) = resending
        .on_message(&cfg, 0, Peer::Broker(0), &stored_by_a)
        .unwrap();
    assert_eq!(
        sent.queues[1],
        ProcessQueue {
            cursor: 2,
            ..ProcessQueue::default()
        },
        "stored by the producer's broker: done with"
    );
    // The producer's send fails too: consumed again from memory, without
    // a pull, the offset still at the batch.
    let refused = Message::Refused { epoch: 0 };
    let (later, out) = resending
        .on_message(&cfg, 0, Peer::Broker(0), &refused)
        .unwrap();
    assert_eq!(sends(&out), []);
    assert_eq!(
        later.queues[1],
        ProcessQueue {
            cursor: 2,
            from: 1,
            to: 2,
            send_back: SendBack::Later,
            ..ProcessQueue::default()
        }
    );
    assert_eq!(later.queues[1].local_offset(), 1);
    assert!(later.on_timer(&cfg, 0, &Timer::Pull { queue: 1 }).is_none());
    let (again, out) = later.on_timer(&cfg, 0, &done).unwrap();
    assert!(out.contains(&Output::Delivered {
        queue: 1,
        from: 1,
        to: 2
    }));
    assert_eq!(
        again.queues[1],
        ProcessQueue {
            cursor: 2,
            ..ProcessQueue::default()
        }
    );
    // A broker it no longer reaches is not asked: the producer sends at
    // once, through broker-a.
    let unreachable = ConsumerState {
        route: Route {
            version: 0,
            dropped: 0b10,
        },
        ..failing
    };
    let (by_producer, out) = unreachable.on_timer(&cfg, 0, &done).unwrap();
    assert_eq!(sends(&out), [(Peer::Broker(0), send_back(0))]);
    assert_eq!(by_producer.queues[1].send_back, SendBack::ByProducer(0));
    // Reaching no broker at all, it consumes the batch again.
    let alone = ConsumerState {
        route: Route {
            version: 0,
            dropped: 0b11,
        },
        ..failing
    };
    let (local, out) = alone.on_timer(&cfg, 0, &done).unwrap();
    assert_eq!(sends(&out), []);
    assert_eq!(local.queues[1].send_back, SendBack::Later);
}

/// The broker appends a batch sent back to its queue of the retry topic,
/// as copies of the messages sent (a copy sent back again is still a copy
/// of the first), and answers; its pulls of that queue then reach them.
#[test]
fn a_broker_appends_what_is_sent_back_to_its_retry_queue() {
    let sizes = Sizes {
        consumers: 1,
        brokers: 1,
        queues: 1,
        joins: Some(0),
        messages: 1,
        consume_failures: 1,
        pull_batch: 1,
        ..Sizes::default()
    };
    let protocol = ProtocolOptions {
        retry_topic: true,
        ..ProtocolOptions::default()
    };
    let cfg = common::config_with(Scenario::Healthy, sizes, "AVG", protocol);
    assert_eq!(cfg.queues.len(), 2, "a0 and the retry queue");
    let broker = BrokerState::start(&cfg, 0).0;
    let send_back = Message::SendMessageBack {
        queue: 0,
        from: 0,
        to: 1,
        epoch: 0,
    };
    let (stored, out) = broker
        .on_message(&cfg, 0, Peer::Consumer(0), &send_back)
        .unwrap();
    assert_eq!(
        sends(&out),
        [(Peer::Consumer(0), Message::SentBack { queue: 0, epoch: 0 })]
    );
    assert_eq!(stored.disk.retried.len(), 1);
    assert_eq!(stored.disk.retried.origin(0), (0, 0));
    let copy_again = Message::SendMessageBack {
        queue: 1,
        from: 1,
        to: 2,
        epoch: 0,
    };
    let (twice, _) = stored
        .on_message(&cfg, 0, Peer::Consumer(0), &copy_again)
        .unwrap();
    assert_eq!(twice.disk.retried.len(), 2);
    assert_eq!(twice.disk.retried.origin(1), (0, 0), "a copy of a0's first");
    let pull = |offset| Message::PullMessage {
        queue: 1,
        offset,
        commit: NO_OFFSET,
        generation: false,
        epoch: 0,
    };
    let (_, out) = stored
        .on_message(&cfg, 0, Peer::Consumer(0), &pull(1))
        .unwrap();
    assert!(matches!(
        sends(&out)[..],
        [(_, Message::PullResult { from: 1, to: 2, .. })]
    ));
    let (_, out) = broker
        .on_message(&cfg, 0, Peer::Consumer(0), &pull(1))
        .unwrap();
    assert!(
        matches!(
            sends(&out)[..],
            [(_, Message::PullResult { from: 1, to: 1, .. })]
        ),
        "nothing new yet"
    );
}
