//! Everything a configuration derives once from its sizes and scenario: the
//! names, every queue any route version has, the routes, and what is fixed
//! about each consumer. Actors then work on small indices into it.

use std::collections::HashMap;

use rocketmq_rebalance::MessageQueue;

use super::bits::QueueSet;
use super::{Scenario, Sizes};

/// What is fixed about one consumer for the whole run.
#[derive(Clone, Debug)]
pub struct ConsumerSpec {
    /// Name in traces, unique (`c1`, `c2`, ...).
    pub name: String,
    /// The client id it reports to brokers; not unique in `duplicate-client-id`.
    pub client_id: String,
    /// Topics it subscribes to, as a bit set of topic indices.
    pub topics: u8,
    /// Starts unregistered and joins during the run.
    pub joins: bool,
    /// May crash once.
    pub may_crash: bool,
    /// May shut down gracefully once.
    pub may_leave: bool,
    /// Brokers it cannot reach, as a bit set of broker indices.
    pub unreachable: u8,
    /// May lose one notification.
    pub may_lose_notification: bool,
    /// May have one consumer-list query fail.
    pub may_fail_query: bool,
}

/// One queue of the universe: every queue that any route version has.
#[derive(Clone, Debug)]
pub struct QueueInfo {
    /// Topic index.
    pub topic: usize,
    /// Broker index.
    pub broker: usize,
    /// The queue as the allocation crate sees it.
    pub mq: MessageQueue,
    /// Short name in traces, such as `a0` (or `t1.a0` with several topics).
    pub label: String,
}

/// The queues of every topic in every route version.
pub struct Routes {
    /// Every queue of every route version.
    pub queues: Vec<QueueInfo>,
    /// `versions[v][topic]`: the queues of route version `v` for one topic.
    pub versions: Vec<Vec<QueueSet>>,
}

fn letter(index: usize) -> char {
    char::from(b'a' + index as u8)
}

/// `TopicA`, `TopicB`, ...
pub fn topic_names(sizes: &Sizes) -> Vec<String> {
    (0..sizes.topics)
        .map(|t| format!("Topic{}", letter(t).to_ascii_uppercase()))
        .collect()
}

/// `broker-a`, `broker-b`, ...
pub fn broker_names(sizes: &Sizes) -> Vec<String> {
    (0..sizes.brokers)
        .map(|b| format!("broker-{}", letter(b)))
        .collect()
}

/// Route version `v` adds `v` queues, one at a time, round robin over the
/// brokers, to the first topic.
pub fn routes(sizes: &Sizes, topic_names: &[String], broker_names: &[String]) -> Routes {
    let queue_count = |topic: usize, broker: usize, version: usize| {
        let added = if topic == 0 {
            (0..version)
                .filter(|change| change % sizes.brokers == broker)
                .count()
        } else {
            0
        };
        sizes.queues + added
    };
    let mut queues = Vec::new();
    let mut index_of = HashMap::new();
    for (topic, topic_name) in topic_names.iter().enumerate() {
        for (broker, broker_name) in broker_names.iter().enumerate() {
            for queue_id in 0..queue_count(topic, broker, sizes.route_changes) {
                index_of.insert((topic, broker, queue_id), queues.len());
                let short = format!("{}{queue_id}", letter(broker));
                queues.push(QueueInfo {
                    topic,
                    broker,
                    mq: MessageQueue::new(topic_name.clone(), broker_name.clone(), queue_id as i32),
                    label: if sizes.topics == 1 {
                        short
                    } else {
                        format!("t{}.{short}", topic + 1)
                    },
                });
            }
        }
    }
    let versions = (0..=sizes.route_changes)
        .map(|version| {
            (0..sizes.topics)
                .map(|topic| {
                    (0..sizes.brokers)
                        .flat_map(|broker| {
                            (0..queue_count(topic, broker, version))
                                .map(move |queue_id| (topic, broker, queue_id))
                        })
                        .fold(0, |set, key| set | 1 << index_of[&key])
                })
                .collect()
        })
        .collect();
    Routes { queues, versions }
}

/// The consumers of `scenario`: who joins, crashes, leaves, what each
/// subscribes to, which broker it cannot reach, and its client id.
pub fn consumer_specs(scenario: Scenario, sizes: &Sizes) -> Vec<ConsumerSpec> {
    let n = sizes.consumers;
    let joins = sizes.joiners();
    (0..n)
        .map(|i| {
            let name = format!("c{}", i + 1);
            // The last consumer reuses its neighbour's id, as two pods
            // with one IP and pid would.
            let client_id = if scenario == Scenario::DuplicateClientId && i == n - 1 {
                format!("c{i}")
            } else {
                name.clone()
            };
            let topics = if scenario == Scenario::InconsistentSubscription {
                1 << (i % sizes.topics)
            } else {
                (1u8 << sizes.topics) - 1
            };
            let unreachable = if scenario == Scenario::PartialPartition && i == n - 1 {
                1 << (sizes.brokers - 1)
            } else {
                0
            };
            ConsumerSpec {
                name,
                client_id,
                topics,
                joins: i >= n - joins,
                may_crash: i < sizes.crashes,
                may_leave: i >= n - sizes.leaves,
                unreachable,
                may_lose_notification: i < sizes.lost_notifications,
                may_fail_query: i < sizes.failed_queries,
            }
        })
        .collect()
}
