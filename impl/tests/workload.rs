//! The synthetic groups behind every published figure: their exact shape,
//! so that a figure measured today is measured on the same input tomorrow.

use rocketmq_rebalance::workload::{bench_queues, broker_name, client_ids, queues};
use rocketmq_rebalance::MessageQueue;

#[test]
fn brokers_are_lettered_up_to_z_then_numbered() {
    assert_eq!(broker_name(0), "broker-a");
    assert_eq!(broker_name(25), "broker-z");
    assert_eq!(broker_name(26), "broker-26");
    assert_eq!(broker_name(300), "broker-300");
}

#[test]
fn queues_are_per_broker_and_sorted() {
    let qs = queues("T", 27, 2);
    assert_eq!(qs.len(), 54);
    assert_eq!(qs[0], MessageQueue::new("T", "broker-26", 0));
    assert_eq!(qs[2], MessageQueue::new("T", "broker-a", 0));
    assert_eq!(qs[53], MessageQueue::new("T", "broker-z", 1));
}

#[test]
fn bench_queues_spread_a_thousand_per_broker() {
    let small = bench_queues(3);
    assert_eq!(
        small,
        (0..3)
            .map(|i| MessageQueue::new("TopicTest", "broker-0", i))
            .collect::<Vec<_>>()
    );
    let qs = bench_queues(2000);
    assert_eq!(qs.len(), 2000);
    // Queue i is on broker-(i mod 2) with id i / 2; sorted by broker first.
    assert_eq!(qs[0], MessageQueue::new("TopicTest", "broker-0", 0));
    assert_eq!(qs[999], MessageQueue::new("TopicTest", "broker-0", 999));
    assert_eq!(qs[1000], MessageQueue::new("TopicTest", "broker-1", 0));
    assert_eq!(qs[1999], MessageQueue::new("TopicTest", "broker-1", 999));
}

#[test]
fn client_ids_are_ip_at_pid_in_java_order() {
    let ids = client_ids(258);
    assert_eq!(ids.len(), 258);
    assert_eq!(ids[0], "10.0.0.0@10000");
    // Text order: '0' sorts before '@', so 10.0.0.100 comes before 10.0.0.1.
    assert_eq!(ids[1], "10.0.0.100@10100");
    assert!(ids.contains(&"10.0.1.1@10257".to_string()));
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}
