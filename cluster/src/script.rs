//! Scenario scripts: what a real-cluster run starts, does and waits for.
//!
//! A script is one JSON object (`cluster/scenarios/NAME.json`, documented
//! in `docs/cluster.md`). Every field is checked when it is read: an
//! unknown field, step or consumer is bad input, never ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use rocketmq_rebalance_model::configuration::Variant;

use crate::trace::Pattern;
use crate::ClusterError;

/// One scenario script.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The model scenario it replays (`rebalance check --scenario`).
    pub scenario: String,
    /// Orderly consumption (`rebalance check --orderly`).
    #[serde(default)]
    pub orderly: bool,
    /// How the group consumes (`rebalance check --consumption`): `push`
    /// (the default) or `pop` (the group's mode on every broker set to POP,
    /// and each consumer a remoting push consumer without its own
    /// rebalance, `setClientRebalance(false)`, which pops what
    /// `QUERY_ASSIGNMENT` assigns it).
    #[serde(default)]
    pub consumption: Consumption,
    /// Which client a POP group's consumers run (`rebalance check
    /// --pop-client`): `remoting` (the default for a concurrent group) or
    /// `grpc`, the 5.x gRPC push consumer through a proxy the cluster runs,
    /// which a FIFO group's consumers always are.
    #[serde(default)]
    pub pop_client: Option<PopClient>,
    /// One line: what happens.
    pub what: String,
    /// The model flags of the configuration it replays, as `rebalance
    /// check` takes them.
    pub model: Vec<String>,
    /// The model flags at the run's own sizes, for trace validation
    /// (`rebalance conform`), where `model` is a smaller configuration (the
    /// message layer's sizes); `model` when absent.
    #[serde(default)]
    pub conform: Option<Vec<String>>,
    /// The `sometimes` properties the script drives: the real run must
    /// show each (a replay that does not is a failed replay).
    #[serde(default)]
    pub drives: Vec<String>,
    /// Whether the model's run starts from the first settled state (default
    /// true: consumers that do not join start registered and balanced), so
    /// that transient hazards of the cold start before it are not counted;
    /// false for a cold start.
    #[serde(default = "yes")]
    pub from_settled: bool,
    /// Whether the model's group comes to rest in this scenario (default
    /// true). False where it never does (each subscription-table flip
    /// notifies the group, a notification always in flight): the model's
    /// verdicts of rest then hold vacuously, the run's are `unknown` and
    /// agree with them, and a real moment at rest is a mismatch.
    #[serde(default = "yes")]
    pub rests: bool,
    /// Brokers, `broker-a`, `broker-b`, ... (default 2).
    #[serde(default = "two")]
    pub brokers: usize,
    /// Brokers (the first ones) with a slave, which serves in the master's
    /// place after a `fail_over` step (the model's `--failovers`).
    #[serde(default)]
    pub failovers: usize,
    /// Brokers (the last ones) that are not started with the cluster: a
    /// `start_broker` step starts each (a broker joining the route).
    #[serde(default)]
    pub late_brokers: usize,
    /// Name servers, `namesrv-1`, ... (default 1); consumer `cI` (1-based)
    /// asks name server `(I - 1) mod N`, as in the model.
    #[serde(default = "one")]
    pub name_servers: usize,
    /// Links from a broker to a name server that pass through a relay the
    /// script can cut (`cut`, `heal`).
    #[serde(default)]
    pub relays: Vec<RelaySpec>,
    /// Read and write queues of the topic on each broker (default 2).
    #[serde(default = "two")]
    pub queues: usize,
    /// The group's consumers, in start order of the model's names.
    pub consumers: Vec<ConsumerSpec>,
    /// Allocation strategy (AVG, AVG_BY_CIRCLE, CONSISTENT_HASH).
    #[serde(default = "avg")]
    pub strategy: String,
    /// Which broker a rebalance asks: `random` (RocketMQ's own pick) or
    /// `first` (the first broker of the consumer's route, every time: the
    /// pick driven through the client's `Random`, replaced by reflection).
    #[serde(default = "random_pick")]
    pub broker_pick: String,
    /// Where a consumer without a stored offset starts.
    #[serde(default = "first_offset")]
    pub consume_from: String,
    /// Every timer the scenario scales, each by its RocketMQ name.
    #[serde(default)]
    pub timers: Timers,
    /// Protocol variants whose real form is a drive of this scenario's
    /// own (a broker rule standing in for a broker-side change): each
    /// variant's name, and the script beside this one that replays the
    /// scenario with it.
    #[serde(default)]
    pub variants: BTreeMap<String, String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

fn yes() -> bool {
    true
}
fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn random_pick() -> String {
    "random".into()
}
fn avg() -> String {
    "AVG".into()
}
fn first_offset() -> String {
    "CONSUME_FROM_FIRST_OFFSET".into()
}

/// A relay between a broker and a name server.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelaySpec {
    /// Its name, which `cut` and `heal` use.
    pub name: String,
    /// The broker whose link it carries.
    pub broker: String,
    /// The name server it leads to.
    pub name_server: String,
}

/// How a script's group consumes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Consumption {
    /// Pulls of the queues its own rebalance allocates.
    #[default]
    Push,
    /// Pops of what the broker assigns.
    Pop,
}

/// Which client a POP group's consumers run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PopClient {
    /// RocketMQ's remoting push consumer without its own rebalance.
    Remoting,
    /// The gRPC push consumer (`rocketmq-client-java`) of the proxy.
    Grpc,
}

/// One consumer process.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerSpec {
    /// The model's name (`c1`, `c2`, ...), the process's name in the trace.
    pub name: String,
    /// RocketMQ's instance name (default: the name), so the client id is
    /// `127.0.0.1@INSTANCE`; two processes with one instance share a
    /// client id.
    #[serde(default)]
    pub instance: Option<String>,
    /// Topics it subscribes to at start (default: the scenario's topic).
    #[serde(default)]
    pub topics: Option<Vec<String>>,
    /// Milliseconds the application works on each message it is given
    /// (default 0), so that a steady load keeps a backlog in its process
    /// queue.
    #[serde(default)]
    pub consume_ms: u64,
    /// What its message listener does when its thread is interrupted (a
    /// graceful shutdown's `shutdownNow`): `ignores` (the default) works
    /// on to the batch's end; `stops` ends the batch there, unconsumed
    /// (`SUSPEND_CURRENT_QUEUE_A_MOMENT` orderly, `RECONSUME_LATER`
    /// otherwise). The model's `--interruptible` names the second kind.
    #[serde(default)]
    pub listener: Listener,
}

/// A message listener's answer to an interrupt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Listener {
    /// It works on: CPU-bound work, or I/O that does not look at the
    /// interrupt.
    #[default]
    Ignores,
    /// It stops, and its batch ends unconsumed.
    Stops,
}

impl ConsumerSpec {
    /// The client id RocketMQ builds for it (`ip@instanceName`).
    pub fn client_id(&self) -> String {
        format!(
            "127.0.0.1@{}",
            self.instance.as_deref().unwrap_or(&self.name)
        )
    }
}

/// The timers a scenario scales, by RocketMQ's own names.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timers {
    /// Consumer JVM system properties (`rocketmq.client.rebalance.waitInterval`, ...).
    #[serde(default)]
    pub client_properties: BTreeMap<String, Value>,
    /// `ClientConfig` / `DefaultMQPushConsumer` settings (`heartbeatBrokerInterval`, ...).
    #[serde(default)]
    pub client_config: BTreeMap<String, Value>,
    /// Cluster JVM system properties (`rocketmq.broker.rebalance.lockMaxLiveTime`, ...).
    #[serde(default)]
    pub broker_properties: BTreeMap<String, Value>,
    /// `BrokerConfig` settings (`channelExpiredTimeout`, ...).
    #[serde(default)]
    pub broker_config: BTreeMap<String, Value>,
    /// `MessageStoreConfig` settings.
    #[serde(default)]
    pub store_config: BTreeMap<String, Value>,
    /// `NamesrvConfig` settings.
    #[serde(default)]
    pub name_server_config: BTreeMap<String, Value>,
    /// `ProxyConfig` settings of the proxy of a group of gRPC clients
    /// (`defaultInvisibleTimeMills`, ...).
    #[serde(default)]
    pub proxy_config: BTreeMap<String, Value>,
}

/// One step of a script.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Start a consumer (`consumer.start()`): a join.
    Start(String),
    /// Shut a consumer down gracefully (`consumer.shutdown()`): a leave.
    Shutdown(String),
    /// `kill -9` a consumer's process: its connections close.
    Kill(String),
    /// `SIGSTOP` a consumer's process: a pause (a crash if never resumed).
    Stop(String),
    /// `SIGCONT` a stopped consumer.
    Cont(String),
    /// Restart a broker: stop it, wait the downtime, start it on the same
    /// port and store.
    RestartBroker {
        /// The broker.
        broker: String,
        /// The downtime in milliseconds (default: `--restart-downtime`).
        #[serde(default)]
        downtime_ms: Option<u64>,
    },
    /// Start a broker that was not running (a late one, or a stopped one).
    StartBroker(String),
    /// Stop a broker: `shutdown()`, which unregisters it from the name
    /// servers (it leaves the route).
    StopBroker(String),
    /// A broker's master fails: it shuts down and its slave serves in its
    /// place, with the members the consumers' heartbeats gave it, no lock,
    /// and the offsets of its last copy (`sync_slave`). Done once every
    /// name server routes the slave as the master.
    FailOver(String),
    /// A broker's slave copies its master's tables now (the consumer
    /// offsets among them), as RocketMQ's slave does once a minute.
    SyncSlave(String),
    /// Set the topic's read and write queues on a broker (a route change).
    Route {
        /// The broker.
        broker: String,
        /// Its new number of queues.
        queues: usize,
    },
    /// Delete a broker's expired commit-log files, so that its queues'
    /// first messages are gone (the eviction of the model's
    /// `--evictions`); waits until every queue there starts above 0.
    Evict(String),
    /// A stopped broker loses its disk's consumer offsets (its offset table
    /// and the table's backup are deleted): it starts again knowing no
    /// offset, as after a replaced disk (the model's `--disk-losses`).
    LoseDisk(String),
    /// A stopped broker loses its FIFO groups' order info (the table and
    /// its backup are deleted): it starts again knowing no queue's last
    /// pop, as after a crash within the 10 s between two writes of the
    /// table (the model's `--broker-crashes`).
    LoseOrderInfo(String),
    /// The proxy of a run of gRPC clients reads the group's config, as
    /// their receives do, until it holds none: each read past the proxy's
    /// cache refresh (`subscriptionGroupConfigCacheRefreshSeconds`) starts
    /// a reload, which finds no config only while the proxy's route of the
    /// cluster lists no broker. Decides, while every broker is stopped,
    /// the race of a reload with the outage (the model's restart of a FIFO
    /// group's only broker). A proxy that still has the config at the
    /// timeout fails the run (exit 3).
    ProxyForgetsGroup {
        /// Give up after this many seconds (1..=120).
        timeout_s: u64,
    },
    /// Cut a relay: the broker's link to that name server closes.
    Cut(String),
    /// Heal a relay.
    Heal(String),
    /// Send this many messages to every queue of the topic.
    Produce(u32),
    /// A steady load while the script goes on: this many messages a second
    /// to every queue of the topic; 0 stops it (the acknowledgement follows
    /// the last message sent).
    Stream(u32),
    /// A consumer subscribes to a topic.
    Subscribe {
        /// The consumer.
        consumer: String,
        /// The topic.
        topic: String,
    },
    /// A consumer unsubscribes from a topic.
    Unsubscribe {
        /// The consumer.
        consumer: String,
        /// The topic.
        topic: String,
    },
    /// Install a fault or a gate (see `docs/cluster.md`): at a consumer's
    /// hooks when `consumer` is given, else at the brokers'.
    Rule {
        /// The consumer whose hooks it is installed in.
        #[serde(default)]
        consumer: Option<String>,
        /// Its id, which `release` names.
        id: String,
        /// The hook point: `client`, `alloc`, `listener`, `broker`.
        at: String,
        /// The request code it matches.
        #[serde(default)]
        code: Option<u32>,
        /// The client id it matches.
        #[serde(default)]
        client: Option<String>,
        /// The broker it matches.
        #[serde(default)]
        broker: Option<String>,
        /// The queue it matches (`broker-a:0`).
        #[serde(default)]
        queue: Option<String>,
        /// `fail`, `drop` or `hold` (a gate).
        action: String,
        /// How many matches it applies to (default: all).
        #[serde(default)]
        count: Option<u32>,
    },
    /// Release a gate (and remove the rule).
    Release {
        /// The consumer whose rule it is, if any.
        #[serde(default)]
        consumer: Option<String>,
        /// The rule's id.
        id: String,
    },
    /// Wait for an observation.
    Await {
        /// What to wait for.
        #[serde(rename = "for")]
        what: Awaited,
        /// Give up after this many seconds: the run ends there, and the
        /// report says which wait timed out.
        timeout_s: u64,
    },
    /// Watch for an event that should not come: the script drives nothing
    /// for `s` seconds unless an event of the pattern (as an `await`'s,
    /// seen after the last action step began) comes first, which ends the
    /// watch. Neither is a failure: the outcome judges what came. For what
    /// only a stretch of time can show, a message that is not delivered
    /// again.
    Watch {
        /// The event it watches for.
        #[serde(rename = "for")]
        what: serde_json::Map<String, Value>,
        /// How long it watches, seconds (1..=600).
        s: u64,
    },
}

/// What an `await` step waits for.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Awaited {
    /// `"settled"`: every running consumer has rebalanced twice (two of its
    /// periodic rounds) since the last change of membership or allocation;
    /// `"delivered"`: every message sent has been delivered; `"idle"`: no
    /// consumer runs a batch.
    Named(Condition),
    /// `{"lapsed": "c1"}`: see [`Lapsed`].
    Lapsed(Lapsed),
    /// An event whose fields include these (values compared as JSON), seen
    /// after the last action step began: a kind of the trace's schema
    /// (`ev`), a process (`p`), and fields that kind has.
    Event(serde_json::Map<String, Value>),
}

/// Every lock the consumer was granted is past its trust
/// (`rocketmq.client.rebalance.lockMaxLiveTime` after the grant) by the
/// stamp of the latest event: it consumes nothing more under those locks.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lapsed {
    /// The consumer.
    pub lapsed: String,
}

/// A named condition.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// See [`Awaited::Named`].
    Settled,
    /// Every message sent so far has been delivered at least once.
    Delivered,
    /// No consumer runs a batch: every batch a live consumer began has
    /// ended (a paused one's does not).
    Idle,
}

/// The directory of the scenario scripts.
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The directory of the harm scripts: one change of a group under a
/// steady load each.
pub fn harms_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("harms")
}

/// The script of a named scenario: `NAME.json`, or `NAME-orderly.json`.
pub fn scenario_path(name: &str, orderly: bool) -> Result<PathBuf, String> {
    let file = format!("{name}{}.json", if orderly { "-orderly" } else { "" });
    let path = scenarios_dir().join(file);
    if path.is_file() {
        return Ok(path);
    }
    let known: Vec<String> = script_names(&scenarios_dir())
        .into_iter()
        .map(|n| match n.strip_suffix("-orderly") {
            Some(base) => format!("{base} --orderly"),
            None => n,
        })
        .collect();
    Err(format!(
        "no real-cluster script for {name}{}; scripts: {}",
        if orderly { " --orderly" } else { "" },
        known.join(", ")
    ))
}

/// The harm script of a change of the group: `harms/CHANGE.json`.
pub fn harms_path(change: &str) -> Result<PathBuf, String> {
    let path = harms_dir().join(format!("{change}.json"));
    if path.is_file() {
        return Ok(path);
    }
    Err(format!(
        "no harm script for {change}; changes: {}",
        script_names(&harms_dir()).join(", ")
    ))
}

/// The names of the scripts in `dir`, sorted.
pub fn script_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

/// The least timeout of every await of a run at RocketMQ's default timers:
/// the slowest change a script waits for there is a silent consumer's
/// expiry (120 s, and up to 10 s for the broker's scan) followed by two
/// periodic rebalances (20 s each).
pub const DEFAULT_TIMERS_AWAIT_S: u64 = 400;

impl Script {
    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<Script, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ClusterError::BadInput(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| ClusterError::BadInput(format!("{}: {e}", path.display())))
    }

    /// Parses and checks a script's text.
    pub fn parse(text: &str) -> Result<Script, String> {
        let script: Script = serde_json::from_str(text).map_err(|e| e.to_string())?;
        script.validate()?;
        Ok(script)
    }

    /// This script with protocol variant `v` in its model and conform
    /// flags and, on the real cluster, in the setting that makes RocketMQ
    /// behave so: every consumer its own instance name
    /// (`unique-instance-names`), consuming from the first offset
    /// (`consume-from-first`), listeners that stop on the interrupt
    /// (`listeners-stop-on-interrupt`). A variant with no such setting (a
    /// protocol change, another client, an older release) is refused.
    pub fn with_variant(mut self, v: Variant) -> Result<Script, String> {
        match v {
            Variant::UniqueInstanceNames => {
                for c in self.consumers.iter_mut() {
                    c.instance = None;
                }
            }
            Variant::ConsumeFromFirst => self.consume_from = first_offset(),
            Variant::ListenersStopOnInterrupt => {
                for c in self.consumers.iter_mut() {
                    c.listener = Listener::Stops;
                }
            }
            _ => {
                return Err(format!(
                    "variant {v} has no setting RocketMQ takes, and this scenario names no \
                     script that replays it (a script's \"variants\")"
                ))
            }
        }
        let flags = ["--variant".to_owned(), v.name().to_owned()];
        if let Some(conform) = self.conform.as_mut() {
            conform.extend(flags.clone());
        }
        self.model.extend(flags);
        self.what = format!("{}, with the variant {v}", self.what);
        Ok(self)
    }

    /// The broker names, `broker-a`, `broker-b`, ...
    pub fn broker_names(&self) -> Vec<String> {
        (0..self.brokers)
            .map(|i| format!("broker-{}", char::from(b'a' + i as u8)))
            .collect()
    }

    /// The name-server names, `namesrv-1`, ...
    pub fn name_server_names(&self) -> Vec<String> {
        (1..=self.name_servers)
            .map(|i| format!("namesrv-{i}"))
            .collect()
    }

    /// The topic every consumer subscribes to unless it says otherwise.
    pub const TOPIC: &'static str = "TopicTest";

    /// A FIFO group (`consumption` pop, orderly): its consumers are the 5.x
    /// gRPC clients, through a proxy (RocketMQ's remoting client never
    /// pops for an orderly listener).
    pub fn fifo(&self) -> bool {
        self.orderly && self.consumption == Consumption::Pop
    }

    /// Its consumers are gRPC clients through a proxy: a FIFO group's, or
    /// a POP group's that asks for them (`pop_client`).
    pub fn grpc(&self) -> bool {
        self.fifo() || self.pop_client == Some(PopClient::Grpc)
    }

    /// The consumer named `name`.
    pub fn consumer(&self, name: &str) -> Option<&ConsumerSpec> {
        self.consumers.iter().find(|c| c.name == name)
    }

    /// The script at RocketMQ's default timers: every timer it scales is
    /// dropped (the store's settings stay: they size its files and schedule
    /// the deletions an eviction relies on), and every await waits at least
    /// [`DEFAULT_TIMERS_AWAIT_S`].
    pub fn with_default_timers(mut self) -> Script {
        self.timers = Timers {
            store_config: std::mem::take(&mut self.timers.store_config),
            ..Timers::default()
        };
        for step in &mut self.steps {
            if let Step::Await { timeout_s, .. } = step {
                *timeout_s = (*timeout_s).max(DEFAULT_TIMERS_AWAIT_S);
            }
        }
        self
    }

    /// Every topic it names: the observed one, those its consumers
    /// subscribe to at start and in its steps, sorted.
    pub fn topics(&self) -> Vec<String> {
        let mut topics: BTreeSet<String> = self
            .consumers
            .iter()
            .flat_map(|c| c.topics.iter().flatten().cloned())
            .collect();
        topics.insert(Self::TOPIC.to_owned());
        for step in &self.steps {
            if let Step::Subscribe { topic, .. } | Step::Unsubscribe { topic, .. } = step {
                topics.insert(topic.clone());
            }
        }
        topics.into_iter().collect()
    }

    /// The model flags its trace is validated against: `conform`, else
    /// `model`.
    pub fn conform_flags(&self) -> &[String] {
        self.conform.as_deref().unwrap_or(&self.model)
    }

    /// The highest steady load of its `stream` steps, messages a second to
    /// each queue.
    pub fn stream_rate(&self) -> Option<u32> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Stream(rate) => Some(*rate),
                _ => None,
            })
            .max()
    }

    fn validate(&self) -> Result<(), String> {
        if !(1..=26).contains(&self.brokers) || !(1..=9).contains(&self.name_servers) {
            return Err("brokers must be 1..=26 and name_servers 1..=9".into());
        }
        if !["random", "first"].contains(&self.broker_pick.as_str()) {
            return Err(format!(
                "broker_pick {:?}: expected random or first",
                self.broker_pick
            ));
        }
        if self.failovers > self.brokers - self.late_brokers {
            return Err("failovers must name brokers that start with the cluster".into());
        }
        if self.late_brokers >= self.brokers {
            return Err("late_brokers must leave a broker that starts with the cluster".into());
        }
        match self.pop_client {
            Some(PopClient::Grpc) if self.consumption == Consumption::Push => {
                return Err("pop_client grpc needs \"consumption\": \"pop\" (a gRPC client pops)".into())
            }
            Some(PopClient::Remoting) if self.fifo() => {
                return Err("pop_client remoting in a FIFO group: RocketMQ's remoting client never \
                            pops for an orderly listener (a FIFO group's consumers are gRPC clients)"
                    .into())
            }
            _ => {}
        }
        if !(1..=64).contains(&self.queues) || self.consumers.is_empty() {
            return Err("queues must be 1..=64, and a script needs a consumer".into());
        }
        let brokers = self.broker_names();
        let name_servers = self.name_server_names();
        for relay in &self.relays {
            if !brokers.contains(&relay.broker) || !name_servers.contains(&relay.name_server) {
                return Err(format!(
                    "relay {}: no such broker or name server",
                    relay.name
                ));
            }
        }
        let mut names: Vec<&str> = self.consumers.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err("two consumers with one name (share a client id with `instance`)".into());
        }
        let consumer = |name: &str| {
            self.consumer(name)
                .map(|_| ())
                .ok_or_else(|| format!("no consumer {name}"))
        };
        let broker = |name: &str| {
            brokers
                .iter()
                .any(|b| b == name)
                .then_some(())
                .ok_or_else(|| format!("no broker {name}"))
        };
        let relay = |name: &str| {
            self.relays
                .iter()
                .any(|r| r.name == name)
                .then_some(())
                .ok_or_else(|| format!("no relay {name}"))
        };
        // Brokers whose master has failed over: it never comes back.
        let mut failed_over: Vec<&str> = Vec::new();
        for step in &self.steps {
            match step {
                Step::FailOver(b)
                | Step::SyncSlave(b)
                | Step::RestartBroker { broker: b, .. }
                | Step::StartBroker(b)
                | Step::LoseDisk(b)
                | Step::LoseOrderInfo(b)
                    if failed_over.contains(&b.as_str()) =>
                {
                    return Err(format!(
                        "{b} has failed over: its master is gone for good, so a step that \
                         needs it is refused"
                    ));
                }
                _ => {}
            }
            if let Step::FailOver(b) = step {
                failed_over.push(b);
            }
            match step {
                Step::Start(c)
                | Step::Shutdown(c)
                | Step::Kill(c)
                | Step::Stop(c)
                | Step::Cont(c) => consumer(c)?,
                Step::Subscribe { consumer: c, .. } | Step::Unsubscribe { consumer: c, .. } => {
                    consumer(c)?
                }
                Step::RestartBroker { broker: b, .. }
                | Step::StartBroker(b)
                | Step::StopBroker(b)
                | Step::LoseDisk(b)
                | Step::LoseOrderInfo(b)
                | Step::Evict(b) => broker(b)?,
                Step::FailOver(b) | Step::SyncSlave(b) => {
                    broker(b)?;
                    if !brokers[..self.failovers].contains(b) {
                        return Err(format!("{b} has no slave (the script's failovers)"));
                    }
                }
                Step::Route { broker: b, queues } => {
                    broker(b)?;
                    if !(1..=64).contains(queues) {
                        return Err("a route's queues must be 1..=64".into());
                    }
                }
                Step::Cut(r) | Step::Heal(r) => relay(r)?,
                Step::Rule {
                    consumer: c,
                    at,
                    action,
                    ..
                } => {
                    if let Some(c) = c {
                        consumer(c)?;
                    }
                    let points: &[&str] = if c.is_some() {
                        &["client", "alloc", "listener"]
                    } else {
                        &["broker"]
                    };
                    if !points.contains(&at.as_str()) {
                        return Err(format!("a rule at {at:?}: expected one of {points:?}"));
                    }
                    if !["fail", "drop", "hold"].contains(&action.as_str()) {
                        return Err(format!(
                            "a rule's action {action:?}: expected fail, drop or hold"
                        ));
                    }
                }
                Step::Release {
                    consumer: Some(c), ..
                } => consumer(c)?,
                Step::Await { timeout_s, .. } if *timeout_s == 0 || *timeout_s > 600 => {
                    return Err("an await's timeout_s must be 1..=600".into())
                }
                Step::Await {
                    what: Awaited::Lapsed(Lapsed { lapsed }),
                    ..
                } => consumer(lapsed)?,
                Step::Await {
                    what: Awaited::Event(pattern),
                    ..
                } => {
                    Pattern::parse(pattern).map_err(|e| format!("an await for an event: {e}"))?;
                }
                Step::Watch { s, .. } if *s == 0 || *s > 600 => {
                    return Err("a watch's s must be 1..=600".into())
                }
                Step::Watch { what, .. } => {
                    Pattern::parse(what).map_err(|e| format!("a watch for an event: {e}"))?;
                }
                Step::ProxyForgetsGroup { .. } if !self.grpc() => {
                    return Err("proxy_forgets_group is for gRPC clients (a FIFO group, or \
                                \"pop_client\": \"grpc\"), which have a proxy"
                        .into())
                }
                Step::ProxyForgetsGroup { timeout_s } if *timeout_s == 0 || *timeout_s > 120 => {
                    return Err("a proxy_forgets_group's timeout_s must be 1..=120".into())
                }
                Step::Stream(rate) if *rate > 1000 => {
                    return Err("a stream's rate must be 0..=1000 messages a second".into())
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(steps: &str) -> Result<Script, String> {
        Script::parse(&format!(
            r#"{{"scenario":"healthy","what":"w","model":["--scenario","healthy"],
               "consumers":[{{"name":"c1"}},{{"name":"c2","instance":"c1"}}],"steps":{steps}}}"#
        ))
    }

    #[test]
    fn a_script_names_its_processes_and_client_ids() {
        let s = script(r#"[{"start":"c1"},{"await":{"for":"settled","timeout_s":30}}]"#).unwrap();
        assert_eq!(s.broker_names(), ["broker-a", "broker-b"]);
        assert_eq!(s.consumers[1].client_id(), "127.0.0.1@c1");
        assert!(matches!(
            s.steps[1],
            Step::Await {
                what: Awaited::Named(Condition::Settled),
                ..
            }
        ));
    }

    #[test]
    fn unknown_names_fields_and_steps_are_refused() {
        for bad in [
            r#"[{"start":"c9"}]"#,
            r#"[{"restart_broker":{"broker":"broker-z"}}]"#,
            r#"[{"cut":"r1"}]"#,
            r#"[{"fail_over":"broker-a"}]"#,
            r#"[{"sync_slave":"broker-b"}]"#,
        ] {
            assert!(script(bad).is_err(), "{bad} was accepted");
        }
        // Failovers: broker-a has a slave.
        let failover = |steps: &str| {
            Script::parse(&format!(
                r#"{{"scenario":"healthy","what":"w","model":["--failovers","1"],"failovers":1,
                   "consumers":[{{"name":"c1"}}],"steps":{steps}}}"#
            ))
        };
        assert!(failover(r#"[{"sync_slave":"broker-a"},{"fail_over":"broker-a"}]"#).is_ok());
        for bad in [
            r#"[{"fail_over":"broker-a"},{"fail_over":"broker-a"}]"#,
            r#"[{"fail_over":"broker-a"},{"sync_slave":"broker-a"}]"#,
            r#"[{"fail_over":"broker-a"},{"restart_broker":{"broker":"broker-a"}}]"#,
            r#"[{"fail_over":"broker-b"}]"#,
        ] {
            assert!(failover(bad).is_err(), "{bad} was accepted");
        }
        for bad in [
            r#"[{"jump":"c1"}]"#,
            r#"[{"await":{"for":"settled","timeout_s":0}}]"#,
            r#"[{"rule":{"id":"g","at":"listener","action":"hold"}}]"#,
            r#"[{"rule":{"consumer":"c1","id":"g","at":"listener","action":"explode"}}]"#,
            r#"[{"await":{"for":{"ev":"b.membr"},"timeout_s":5}}]"#,
            r#"[{"await":{"for":{"ev":"b.member","queue":"broker-a:0"},"timeout_s":5}}]"#,
            r#"[{"watch":{"for":{"ev":"c.consume.begin"},"s":0}}]"#,
            r#"[{"watch":{"for":{"ev":"c.consume.begn"},"s":5}}]"#,
            r#"[{"watch":{"for":{"ev":"c.consume.begin"}}}]"#,
        ] {
            assert!(script(bad).is_err(), "{bad} was accepted");
        }
        for s in [1, 600] {
            let watch = format!(r#"[{{"watch":{{"for":{{"ev":"c.consume.begin"}},"s":{s}}}}}]"#);
            assert!(script(&watch).is_ok(), "{watch} was refused");
        }
        assert!(Script::parse(
            r#"{"scenario":"x","what":"w","model":[],"consumers":[],"steps":[]}"#
        )
        .is_err());
    }

    /// A group's client: gRPC only for a POP group, and never the remoting
    /// client for a FIFO group, which runs gRPC clients whether asked or not.
    #[test]
    fn a_pop_client_is_checked_against_the_group() {
        let group = |fields: &str| {
            Script::parse(&format!(
                r#"{{"scenario":"healthy","what":"w","model":[],{fields}
                   "consumers":[{{"name":"c1"}}],"steps":[{{"start":"c1"}}]}}"#
            ))
        };
        let grpc = |fields: &str| group(fields).map(|s| s.grpc());
        assert_eq!(
            grpc(r#""consumption":"pop","pop_client":"grpc","#),
            Ok(true)
        );
        assert_eq!(grpc(r#""consumption":"pop","orderly":true,"#), Ok(true));
        assert_eq!(
            grpc(r#""consumption":"pop","pop_client":"remoting","#),
            Ok(false)
        );
        assert_eq!(grpc(r#""consumption":"pop","#), Ok(false));
        for bad in [
            r#""pop_client":"grpc","#,
            r#""consumption":"pop","orderly":true,"pop_client":"remoting","#,
            r#""consumption":"pop","pop_client":"http","#,
        ] {
            assert!(group(bad).is_err(), "{bad} was accepted");
        }
    }

    /// The proxy's loss of a group's config is driven only where there is
    /// a proxy (gRPC clients), and within 1 to 120 s.
    #[test]
    fn a_proxy_forgets_a_group_only_of_grpc_clients_within_its_timeout() {
        let run = |fields: &str, timeout: u64| {
            Script::parse(&format!(
                r#"{{"scenario":"healthy","what":"w","model":[],{fields}
                   "consumers":[{{"name":"c1"}}],
                   "steps":[{{"proxy_forgets_group":{{"timeout_s":{timeout}}}}}]}}"#
            ))
        };
        let fifo = r#""consumption":"pop","orderly":true,"#;
        let concurrent_grpc = r#""consumption":"pop","pop_client":"grpc","#;
        for (fields, timeout) in [(fifo, 1), (fifo, 120), (concurrent_grpc, 30)] {
            assert!(run(fields, timeout).is_ok(), "{fields} {timeout}");
        }
        for (fields, timeout) in [
            (fifo, 0),
            (fifo, 121),
            (r#""consumption":"pop","#, 30),
            ("", 30),
        ] {
            assert!(
                run(fields, timeout).is_err(),
                "{fields} {timeout} was accepted"
            );
        }
    }
}
