//! Everything a configuration derives once from its sizes and scenario: the
//! names, every queue any route version has, the routes, and what is fixed
//! about each consumer. Actors then work on small indices into it.

use std::collections::HashMap;

use rocketmq_rebalance::MessageQueue;

use super::bits::QueueSet;
use super::dense::Dense;
use super::fault::{picks, Fault, FaultSet, Target};
use super::{ConfigError, ProtocolOptions, Scenario, Sizes, MAX_QUEUES};

/// What is fixed about one consumer for the whole run.
#[derive(Clone, Debug)]
pub struct ConsumerSpec {
    /// Name in traces, unique (`c1`, `c2`, ...).
    pub name: String,
    /// The client id it reports to brokers; not unique in `duplicate-client-id`.
    pub client_id: String,
    /// Topics it subscribes to, as a bit set of topic indices.
    pub topics: u8,
    /// The faults its budgets give it ([`picks`]), each at most once
    /// ([`Fault::Join`]: it starts unregistered and joins during the run).
    pub faults: FaultSet,
    /// Brokers it cannot reach, as a bit set of broker indices.
    pub unreachable: u8,
    /// The name server it polls for routes.
    pub name_server: usize,
    /// With orderly consumption, how many ticks its clock may fall behind
    /// the brokers'.
    pub max_clock_lag: u8,
    /// Its message listener stops when its thread is interrupted: the
    /// shutdown's `shutdownNow` ends its running batch unconsumed, where a
    /// listener that ignores the interrupt (the default: CPU-bound work,
    /// blocking I/O that does not look) runs it to its end.
    pub interruptible: bool,
}

impl ConsumerSpec {
    /// Whether it may have `fault`.
    pub fn may(&self, fault: Fault) -> bool {
        self.faults.contains(fault)
    }

    /// Whether it starts unregistered and joins during the run.
    pub fn joins(&self) -> bool {
        self.may(Fault::Join)
    }
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

/// A route as a name server serves it and a consumer caches it: the
/// version of the operators' script it has reached, less the brokers it has
/// dropped (a name server drops a broker it has not heard from for 120 s).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Route {
    /// Steps of the route script applied.
    pub version: u8,
    /// Brokers left out, as a bit set of broker indices.
    pub dropped: u8,
}

/// One operator change of the route, in the order a run applies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteStep {
    /// One read queue more for the first topic on this broker (queue
    /// scale-out).
    AddQueue(usize),
    /// One read queue less for the first topic on this broker (queue
    /// scale-in).
    RemoveQueue(usize),
    /// This broker joins the route with its queues (broker scale-out).
    AddBroker(usize),
    /// This broker leaves the route (broker scale-in or upgrade).
    RemoveBroker(usize),
    /// The group's retry topic appears in the route: its broker created it
    /// at the group's first heartbeat and registers it at its next
    /// registration.
    CreateRetryTopic,
}

/// The route after some number of steps: which brokers it lists, and the
/// queues of each topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Brokers in the route, as a bit set of broker indices.
    pub brokers: u8,
    /// `queues[topic]`: the topic's queues.
    pub queues: Vec<QueueSet>,
}

/// The queues of every topic in every route version.
pub struct Routes {
    /// Every queue of every route version.
    pub queues: Vec<QueueInfo>,
    /// `versions[v]`: the route after `v` steps of the script.
    pub versions: Vec<Layout>,
    /// `on_broker[b]`: every queue hosted by broker `b`.
    pub on_broker: Vec<QueueSet>,
}

fn letter(index: usize) -> char {
    char::from(b'a' + index as u8)
}

/// `TopicA`, `TopicB`, ..., then the group's retry topic when modelled.
pub fn topic_names(sizes: &Sizes, group: &str, protocol: &ProtocolOptions) -> Vec<String> {
    (0..sizes.topics)
        .map(|t| format!("Topic{}", letter(t).to_ascii_uppercase()))
        .chain(protocol.retry_topic.then(|| format!("%RETRY%{group}")))
        .collect()
}

/// `broker-a`, `broker-b`, ...: the first `sizes.brokers`, then those that
/// join later.
pub fn broker_names(sizes: &Sizes) -> Vec<String> {
    (0..sizes.brokers + sizes.broker_joins)
        .map(|b| format!("broker-{}", letter(b)))
        .collect()
}

/// `namesrv` alone, else `namesrv-1`, `namesrv-2`, ...
pub fn name_server_names(sizes: &Sizes) -> Vec<String> {
    if sizes.name_servers == 1 {
        return vec!["namesrv".into()];
    }
    (1..=sizes.name_servers)
        .map(|n| format!("namesrv-{n}"))
        .collect()
}

/// The steps a run's environment may take, in order: the retry topic's
/// creation (a group that starts cold has none yet), queues added (round
/// robin over the first brokers), queues removed (the same way), brokers
/// added (the spare ones, after the first `sizes.brokers`), brokers removed
/// (the last of the first ones first).
pub fn route_script(sizes: &Sizes, protocol: &ProtocolOptions) -> Vec<RouteStep> {
    let brokers = sizes.brokers;
    let cold_start = sizes.joiners() == sizes.consumers;
    (protocol.retry_topic && cold_start)
        .then_some(RouteStep::CreateRetryTopic)
        .into_iter()
        .chain((0..sizes.route_changes).map(|k| RouteStep::AddQueue(k % brokers)))
        .chain((0..sizes.queue_removals).map(|k| RouteStep::RemoveQueue(k % brokers)))
        .chain((0..sizes.broker_joins).map(|k| RouteStep::AddBroker(brokers + k)))
        .chain((0..sizes.broker_leaves).map(|k| RouteStep::RemoveBroker(brokers - 1 - k)))
        .collect()
}

/// The retry topic has one queue a broker (`retryQueueNums`).
const RETRY_QUEUES: usize = 1;

/// Every route version of `script`, and the queue universe they draw on.
///
/// Fails before building any queue set when the universe would not fit one
/// (the sets are bits of a `u64`).
pub fn routes(
    sizes: &Sizes,
    script: &[RouteStep],
    topic_names: &[String],
    broker_names: &[String],
) -> Result<Routes, ConfigError> {
    let brokers = broker_names.len();
    // counts[topic][broker] of each version, and whether each broker is in.
    let mut counts = vec![vec![sizes.queues; brokers]; sizes.topics];
    if topic_names.len() > sizes.topics {
        let created = !script.contains(&RouteStep::CreateRetryTopic);
        counts.push(vec![if created { RETRY_QUEUES } else { 0 }; brokers]);
    }
    let mut listed: u8 = ((1u16 << sizes.brokers) - 1) as u8;
    let mut history = vec![(listed, counts.clone())];
    for &step in script {
        match step {
            RouteStep::AddQueue(b) => counts[0][b] += 1,
            RouteStep::RemoveQueue(b) => counts[0][b] = counts[0][b].saturating_sub(1),
            RouteStep::AddBroker(b) => listed |= 1 << b,
            RouteStep::RemoveBroker(b) => listed &= !(1 << b),
            RouteStep::CreateRetryTopic => {
                counts[sizes.topics] = vec![RETRY_QUEUES; brokers];
            }
        }
        history.push((listed, counts.clone()));
    }
    // A queue id exists if some version has it.
    let most = |topic: usize, broker: usize| {
        history
            .iter()
            .map(|(_, c)| c[topic][broker])
            .max()
            .unwrap_or(0)
    };
    let mut queues = Vec::new();
    let mut index_of = HashMap::new();
    for (topic, topic_name) in topic_names.iter().enumerate() {
        for (broker, broker_name) in broker_names.iter().enumerate() {
            for queue_id in 0..most(topic, broker) {
                index_of.insert((topic, broker, queue_id), queues.len());
                let short = format!("{}{queue_id}", letter(broker));
                queues.push(QueueInfo {
                    topic,
                    broker,
                    mq: MessageQueue::new(topic_name.clone(), broker_name.clone(), queue_id as i32),
                    label: if topic_names.len() == 1 {
                        short
                    } else {
                        format!("t{}.{short}", topic + 1)
                    },
                });
            }
        }
    }
    if queues.len() > MAX_QUEUES {
        return Err(ConfigError::TooManyQueues {
            queues: queues.len(),
            max: MAX_QUEUES,
        });
    }
    let versions = history
        .iter()
        .map(|(listed, counts)| Layout {
            brokers: *listed,
            queues: (0..topic_names.len())
                .map(|topic| {
                    (0..brokers)
                        .filter(|b| listed & (1 << b) != 0)
                        .flat_map(|broker| {
                            (0..counts[topic][broker]).map(move |id| (topic, broker, id))
                        })
                        .fold(0, |set, key| set | 1 << index_of[&key])
                })
                .collect(),
        })
        .collect();
    let on_broker = (0..brokers)
        .map(|b| {
            queues
                .iter()
                .enumerate()
                .filter(|(_, q)| q.broker == b)
                .fold(0, |set, (i, _)| set | 1 << i)
        })
        .collect();
    Ok(Routes {
        queues,
        versions,
        on_broker,
    })
}

/// The consumers of `scenario`: who joins, crashes, leaves, what each
/// subscribes to, which broker it cannot reach, and its client id.
pub fn consumer_specs(
    scenario: Scenario,
    sizes: &Sizes,
    protocol: &ProtocolOptions,
) -> Vec<ConsumerSpec> {
    let retry: u8 = if protocol.retry_topic {
        1 << sizes.topics
    } else {
        0
    };
    let n = sizes.consumers;
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
            let topics = retry
                | if matches!(
                    scenario,
                    Scenario::InconsistentSubscription | Scenario::SubscriptionFlap
                ) {
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
                faults: Fault::all()
                    .filter(|f| f.target() == Target::Consumer)
                    .filter(|&f| picks(f, scenario, sizes, protocol, i, n))
                    .collect(),
                unreachable,
                name_server: i % sizes.name_servers,
                max_clock_lag: if i == 0 { sizes.clock_drift as u8 } else { 0 },
                interruptible: false,
            }
        })
        .collect()
}
