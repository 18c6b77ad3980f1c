//! The synthetic groups the benchmarks and the `rebalance` program use, so
//! that every published figure can be reproduced with the same inputs.

use crate::MessageQueue;

/// The name of broker `i`: `broker-a` to `broker-z`, then `broker-26`, ...
pub fn broker_name(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => format!("broker-{}", char::from(b'a' + n)),
        _ => format!("broker-{i}"),
    }
}

/// `per_broker` queues of `topic` on each of `brokers` brokers, sorted.
///
/// ```
/// use rocketmq_rebalance::workload::queues;
///
/// let qs = queues("T", 2, 2);
/// let names: Vec<String> = qs.iter().map(|q| format!("{}:{}", q.broker_name, q.queue_id)).collect();
/// assert_eq!(names, ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]);
/// ```
pub fn queues(topic: &str, brokers: usize, per_broker: usize) -> Vec<MessageQueue> {
    let mut queues: Vec<MessageQueue> = (0..brokers)
        .flat_map(|b| {
            let broker = broker_name(b);
            (0..per_broker).map(move |q| {
                MessageQueue::new(topic, broker.clone(), i32::try_from(q).unwrap_or(i32::MAX))
            })
        })
        .collect();
    queues.sort();
    queues
}

/// The benchmark workload of the project's performance figures: `count`
/// queues of `TopicTest`, queue `i` on broker `broker-(i mod B)` with
/// `B = max(1, count / 1000)`, sorted as the client sorts them.
pub fn bench_queues(count: usize) -> Vec<MessageQueue> {
    let brokers = (count / 1000).max(1);
    let mut queues: Vec<MessageQueue> = (0..count)
        .map(|i| {
            MessageQueue::new(
                "TopicTest",
                format!("broker-{}", i % brokers),
                i32::try_from(i / brokers).unwrap_or(i32::MAX),
            )
        })
        .collect();
    queues.sort();
    queues
}

/// `count` client ids in RocketMQ's `ip@pid` shape,
/// `10.0.{i / 256}.{i % 256}@{10000 + i}`, sorted in Java's order.
///
/// ```
/// use rocketmq_rebalance::workload::client_ids;
///
/// assert_eq!(client_ids(2), ["10.0.0.0@10000", "10.0.0.1@10001"]);
/// ```
pub fn client_ids(count: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..count)
        .map(|i| format!("10.0.{}.{}@{}", i / 256, i % 256, 10000 + i))
        .collect();
    ids.sort_by(|a, b| crate::java::compare_utf16(a, b));
    ids
}
