//! The merged NDJSON trace of one run, in one typed vocabulary: every event
//! kind the processes of the cluster and the orchestrator emit (schema in
//! `docs/cluster.md`) is a variant of [`Kind`] with typed fields, and the
//! request codes are named constants of [`RequestCode`]. The observer, the
//! translator and the harms all match on it, so that what an event means
//! is decided once, here.
//!
//! Reading is strict: a line that is not an event, a field missing, null
//! or of the wrong type, a field the kind does not have, an unknown kind or
//! a schema version this program does not read is an error naming the line
//! and the field. A trace is written back ([`Event::to_line`]) exactly as it
//! was read.
//!
//! ```
//! use rocketmq_rebalance_cluster::trace::{self, Kind};
//!
//! let text = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","schema":1,"scenario":"healthy","orderly":false,"rocketmq":"5.3.3","model":["--scenario","healthy"]}
//! {"t":2,"p":"c1","seq":1,"thr":"main","ev":"c.mqchanged","divided":["broker-a:0"],"topic":"TopicTest"}"#;
//! let events = trace::parse(text).unwrap();
//! assert!(matches!(&events[1].kind, Kind::QueuesChanged { divided, .. } if divided == &["broker-a:0"]));
//! assert_eq!(events[1].to_line(), text.lines().nth(1).unwrap());
//!
//! let bad = text.replace(r#""divided":["broker-a:0"]"#, r#""divided":"broker-a:0""#);
//! let err = trace::parse(&bad).unwrap_err().to_string();
//! assert!(err.starts_with("line 2: `c.mqchanged`, field `divided`: expected a list of strings"), "{err}");
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The trace schema's version, written in the `topology` event and in the
/// orchestrator's `run` event. Adding, removing or retyping a field makes
/// a new version; this program reads the versions of [`Version::READ`].
/// Version 2 added `c.consume.interrupted`, and later, under the same
/// version, a broker's `b.life starting` (some version 2 traces lack it);
/// a version 1 trace has neither. Version 3 added a POP consumer's
/// batches, named by their messages' ids (`msgs`), and every version 3
/// trace records each broker's `starting`.
pub const SCHEMA: u64 = 3;

/// Why a line is not an event of this schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The line (from 1); 0 for what concerns the whole trace.
    pub line: usize,
    /// The event's kind, once it is known.
    pub ev: Option<String>,
    /// The field at fault, if one is.
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        match (&self.ev, &self.field) {
            (Some(ev), Some(field)) => write!(f, "`{ev}`, field `{field}`: ")?,
            (Some(ev), None) => write!(f, "`{ev}`: ")?,
            (None, Some(field)) => write!(f, "field `{field}`: ")?,
            (None, None) => {}
        }
        f.write_str(&self.problem)
    }
}

impl std::error::Error for TraceError {}

/// A field at fault, before the line and the kind are known.
#[derive(Debug)]
struct Problem {
    field: String,
    problem: String,
}

impl Problem {
    fn new(field: &str, problem: impl Into<String>) -> Problem {
        Problem {
            field: field.to_owned(),
            problem: problem.into(),
        }
    }
}

/// A value as an error shows it: a scalar itself, anything else its kind.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(40) {
                Some((cut, _)) => format!("{}...", &text[..cut]),
                None => text,
            }
        }
    }
}

/// A JSON value of a field's type: how it is read and written back.
trait Plain: Sized {
    /// What a value of it is, for errors (`a string`).
    const WHAT: &'static str;
    /// Reads it; `Err` says what was expected instead, when more precise
    /// than [`Plain::WHAT`].
    fn from_json(value: &Value) -> Result<Self, String>;
    /// Writes it back.
    fn to_json(&self) -> Value;
}

/// One field of an event: read from and written into the event's fields.
trait Field: Sized {
    /// The other keys it reads besides its own name.
    const ALSO: &'static [&'static str] = &[];
    /// Reads the field `name` of `fields`.
    fn decode(fields: &Map<String, Value>, name: &str) -> Result<Self, Problem>;
    /// Writes it into `fields` as `name` (nothing for an absent option).
    fn encode(&self, name: &str, fields: &mut Map<String, Value>);
}

fn read<T: Plain>(value: &Value, name: &str) -> Result<T, Problem> {
    T::from_json(value).map_err(|expected| {
        Problem::new(name, format!("expected {expected}, found {}", shown(value)))
    })
}

impl<T: Plain> Field for T {
    fn decode(fields: &Map<String, Value>, name: &str) -> Result<T, Problem> {
        match fields.get(name) {
            None => Err(Problem::new(
                name,
                format!("missing (expected {})", T::WHAT),
            )),
            Some(Value::Null) => Err(Problem::new(name, format!("null (expected {})", T::WHAT))),
            Some(value) => read(value, name),
        }
    }

    fn encode(&self, name: &str, fields: &mut Map<String, Value>) {
        fields.insert(name.to_owned(), self.to_json());
    }
}

/// An optional field: absent (or null) is `None`.
impl<T: Plain> Field for Option<T> {
    fn decode(fields: &Map<String, Value>, name: &str) -> Result<Option<T>, Problem> {
        match fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => read(value, name).map(Some),
        }
    }

    fn encode(&self, name: &str, fields: &mut Map<String, Value>) {
        if let Some(value) = self {
            fields.insert(name.to_owned(), value.to_json());
        }
    }
}

fn expected<T>(value: Option<T>) -> Result<T, String> {
    value.ok_or_else(String::new)
}

/// `Err(String::new())` means "expected [`Plain::WHAT`]".
fn or_what<T: Plain>(result: Result<T, String>) -> Result<T, String> {
    result.map_err(|e| if e.is_empty() { T::WHAT.to_owned() } else { e })
}

impl Plain for String {
    const WHAT: &'static str = "a string";
    fn from_json(value: &Value) -> Result<String, String> {
        or_what(expected(value.as_str().map(str::to_owned)))
    }
    fn to_json(&self) -> Value {
        Value::from(self.as_str())
    }
}

impl Plain for bool {
    const WHAT: &'static str = "true or false";
    fn from_json(value: &Value) -> Result<bool, String> {
        or_what(expected(value.as_bool()))
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl Plain for u64 {
    const WHAT: &'static str = "a whole number, 0 or more";
    fn from_json(value: &Value) -> Result<u64, String> {
        or_what(expected(value.as_u64()))
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl Plain for i64 {
    const WHAT: &'static str = "a whole number";
    fn from_json(value: &Value) -> Result<i64, String> {
        or_what(expected(value.as_i64()))
    }
    fn to_json(&self) -> Value {
        Value::from(*self)
    }
}

impl Plain for Vec<String> {
    const WHAT: &'static str = "a list of strings";
    fn from_json(value: &Value) -> Result<Vec<String>, String> {
        let list = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect()
        });
        or_what(expected(list))
    }
    fn to_json(&self) -> Value {
        Value::from(self.clone())
    }
}

impl Plain for BTreeMap<String, u64> {
    const WHAT: &'static str = "an object of whole numbers, 0 or more";
    fn from_json(value: &Value) -> Result<BTreeMap<String, u64>, String> {
        let map = value.as_object().and_then(|entries| {
            entries
                .iter()
                .map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                .collect()
        });
        or_what(expected(map))
    }
    fn to_json(&self) -> Value {
        Value::Object(
            self.iter()
                .map(|(k, n)| (k.clone(), Value::from(*n)))
                .collect(),
        )
    }
}

impl Plain for Vec<i64> {
    const WHAT: &'static str = "a list of whole numbers";
    fn from_json(value: &Value) -> Result<Vec<i64>, String> {
        let list = value
            .as_array()
            .and_then(|items| items.iter().map(Value::as_i64).collect());
        or_what(expected(list))
    }
    fn to_json(&self) -> Value {
        Value::from(self.clone())
    }
}

/// Defines a RocketMQ request code for each name, and the table of them.
macro_rules! request_codes {
    ($($(#[$doc:meta])* $name:ident = $value:literal,)*) => {
        impl RequestCode {
            $($(#[$doc])* pub const $name: RequestCode = RequestCode($value);)*

            /// Every code the harness traces, with RocketMQ's name for it
            /// (`RequestCode` in RocketMQ's remoting module).
            pub const NAMED: &'static [(RequestCode, &'static str)] =
                &[$((RequestCode::$name, stringify!($name)),)*];
        }
    };
}

/// A RocketMQ request code (`code` of a request, a response, a fault or a
/// rule; 0 in a rule at a hook that is no request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestCode(pub i64);

impl RequestCode {
    /// No request: a rule at a hook that is none (`listener`, `alloc`), and
    /// the fault it makes.
    pub const NONE: RequestCode = RequestCode(0);
}

request_codes! {
    /// A consumer's offset of a queue, asked of its broker.
    QUERY_CONSUMER_OFFSET = 14,
    /// A consumer's offset of a queue, stored at its broker.
    UPDATE_CONSUMER_OFFSET = 15,
    /// A client's heartbeat: its subscriptions, registering it.
    HEART_BEAT = 34,
    /// A client leaving a broker's member table.
    UNREGISTER_CLIENT = 35,
    /// The member list of a group, asked of a broker.
    GET_CONSUMER_LIST_BY_GROUP = 38,
    /// A broker telling a consumer its group's members changed.
    NOTIFY_CONSUMER_IDS_CHANGED = 40,
    /// Orderly consumption's locks of queues, asked of their broker.
    LOCK_BATCH_MQ = 41,
    /// Orderly consumption's locks, given back.
    UNLOCK_BATCH_MQ = 42,
    /// A broker registering with a name server.
    REGISTER_BROKER = 103,
    /// A broker leaving a name server's routes.
    UNREGISTER_BROKER = 104,
    /// A topic's route, asked of a name server.
    GET_ROUTEINFO_BY_TOPIC = 105,
    /// A consumer's share, computed by its broker (server-side allocation;
    /// with POP, the queues it may pop, `broker-a:-1` for all of a broker's).
    QUERY_ASSIGNMENT = 400,
    /// A POP consumer's acknowledgement of a popped message.
    ACK_MESSAGE = 200051,
    /// A POP consumer's new invisible time for a popped message (its
    /// listener's `RECONSUME_LATER`).
    CHANGE_MESSAGE_INVISIBLETIME = 200053,
}

impl RequestCode {
    /// RocketMQ's name of the code, if the harness traces it.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMED
            .iter()
            .find(|(code, _)| *code == self)
            .map(|(_, name)| *name)
    }
}

impl Plain for RequestCode {
    const WHAT: &'static str = "a request code (a whole number)";
    fn from_json(value: &Value) -> Result<RequestCode, String> {
        or_what(expected(value.as_i64().map(RequestCode)))
    }
    fn to_json(&self) -> Value {
        Value::from(self.0)
    }
}

/// Defines an enum of the words a field takes, each with its word in the
/// trace.
macro_rules! words {
    ($(#[$meta:meta])* pub enum $name:ident ($what:literal) {
        $($(#[$vmeta:meta])* $variant:ident = $word:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every value, in the order the schema lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// Its word in the trace.
            pub fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)*
                }
            }

            /// The value of a word, if it is one.
            pub fn from_word(word: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.word() == word)
            }
        }

        impl Plain for $name {
            const WHAT: &'static str = $what;
            fn from_json(value: &Value) -> Result<$name, String> {
                or_what(expected(value.as_str().and_then($name::from_word)))
            }
            fn to_json(&self) -> Value {
                Value::from(self.word())
            }
        }
    };
}

words! {
    /// A name server's or a broker's life (`ns.life`, `b.life`).
    pub enum ServerState ("starting, started, stopping or stopped") {
        /// `start()` called (schema 2): a broker accepts connections, and
        /// registers the heartbeats that come in, before it returns.
        Starting = "starting",
        /// `start()` returned: serving.
        Started = "started",
        /// `shutdown()` begun: it closes its channels, unregistering them.
        Stopping = "stopping",
        /// Shut down.
        Stopped = "stopped",
    }
}

words! {
    /// A consumer process's life as it reports it (`c.life`).
    pub enum ConsumerState ("ready, starting, started, stopping or stopped") {
        /// Its JVM is up, the consumer not started.
        Ready = "ready",
        /// `consumer.start()` called (its first rebalance may come before
        /// it returns).
        Starting = "starting",
        /// `consumer.start()` returned.
        Started = "started",
        /// `consumer.shutdown()` called: the model's leave starts here.
        Stopping = "stopping",
        /// `consumer.shutdown()` returned.
        Stopped = "stopped",
    }
}

words! {
    /// What changed a broker's member table (RocketMQ's
    /// `ConsumerGroupEvent`, `b.member`'s `kind`).
    pub enum GroupEvent ("CHANGE, UNREGISTER, REGISTER, CLIENT_REGISTER or CLIENT_UNREGISTER") {
        /// The group's members or subscriptions changed: the broker
        /// notifies the group.
        Change = "CHANGE",
        /// The group's last member left.
        Unregister = "UNREGISTER",
        /// The group's subscription table was registered.
        Register = "REGISTER",
        /// A channel joined the table.
        ClientRegister = "CLIENT_REGISTER",
        /// A channel left the table.
        ClientUnregister = "CLIENT_UNREGISTER",
    }
}

words! {
    /// What a rule does when it matches (`rule`, `b.fault`, `c.fault`).
    pub enum RuleAction ("fail, drop or hold") {
        /// The call fails.
        Fail = "fail",
        /// The message is lost.
        Drop = "drop",
        /// A gate: the call waits for the rule's release.
        Hold = "hold",
    }
}

words! {
    /// A relay's state (`relay`).
    pub enum RelayState ("cut or healed") {
        /// Its connections closed, new ones refused.
        Cut = "cut",
        /// Accepting again.
        Healed = "healed",
    }
}

/// A schema version this program reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version(pub u64);

impl Version {
    /// The versions read.
    pub const READ: &'static [u64] = &[1, 2, SCHEMA];
}

impl Plain for Version {
    const WHAT: &'static str = "a schema version";
    fn from_json(value: &Value) -> Result<Version, String> {
        match value.as_u64() {
            Some(v) if Self::READ.contains(&v) => Ok(Version(v)),
            _ => Err(format!(
                "a schema version this program reads ({})",
                Self::READ
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    fn to_json(&self) -> Value {
        Value::from(self.0)
    }
}

/// What a response carries (`detail` of `b.resp` and `c.resp`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detail {
    /// The member list answered to `GET_CONSUMER_LIST_BY_GROUP`, or the
    /// queues `LOCK_BATCH_MQ` granted.
    Names(Vec<String>),
    /// The route `GET_ROUTEINFO_BY_TOPIC` answered: each broker's read
    /// queues.
    Route(BTreeMap<String, i64>),
}

impl Detail {
    /// The names it lists (none for a route).
    pub fn names(&self) -> &[String] {
        match self {
            Detail::Names(names) => names,
            Detail::Route(_) => &[],
        }
    }
}

impl Plain for Detail {
    const WHAT: &'static str = "a list of strings, or an object of whole numbers (a route)";
    fn from_json(value: &Value) -> Result<Detail, String> {
        if let Ok(names) = Vec::<String>::from_json(value) {
            return Ok(Detail::Names(names));
        }
        let route = value.as_object().and_then(|brokers| {
            brokers
                .iter()
                .map(|(b, n)| Some((b.clone(), n.as_i64()?)))
                .collect()
        });
        or_what(expected(route.map(Detail::Route)))
    }
    fn to_json(&self) -> Value {
        match self {
            Detail::Names(names) => names.to_json(),
            Detail::Route(route) => Value::Object(
                route
                    .iter()
                    .map(|(b, n)| (b.clone(), Value::from(*n)))
                    .collect(),
            ),
        }
    }
}

/// A topic of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicSpec {
    /// Its name.
    pub name: String,
    /// Its read and write queues on each broker.
    pub queues: u64,
}

/// A broker of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerSpec {
    /// Its name.
    pub name: String,
    /// Not started with the cluster: a script's step starts it.
    pub late: bool,
}

/// The cluster file the harness ran (`topology`'s `spec`): what the trace
/// needs of it, and the whole file as it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    /// The consumer group.
    pub group: String,
    /// The topics, in the file's order.
    pub topics: Vec<TopicSpec>,
    /// The brokers, in the file's order.
    pub brokers: Vec<BrokerSpec>,
    /// The whole file.
    pub file: Value,
}

impl Plain for ClusterSpec {
    const WHAT: &'static str = "the cluster file: an object with a group, topics (each a name \
                                and queues) and brokers (each a name)";
    fn from_json(value: &Value) -> Result<ClusterSpec, String> {
        let file = value.as_object();
        let list = |key: &str| file.and_then(|f| f.get(key)?.as_array());
        let topics = list("topics").and_then(|topics| {
            topics
                .iter()
                .map(|t| {
                    Some(TopicSpec {
                        name: t.get("name")?.as_str()?.to_owned(),
                        queues: t.get("queues")?.as_u64()?,
                    })
                })
                .collect()
        });
        let brokers = list("brokers").and_then(|brokers| {
            brokers
                .iter()
                .map(|b| {
                    let late = match b.get("late") {
                        None => Some(false),
                        Some(late) => late.as_bool(),
                    };
                    Some(BrokerSpec {
                        name: b.get("name")?.as_str()?.to_owned(),
                        late: late?,
                    })
                })
                .collect()
        });
        let group = file.and_then(|f| f.get("group")?.as_str());
        let spec = match (group, topics, brokers) {
            (Some(group), Some(topics), Some(brokers)) => Some(ClusterSpec {
                group: group.to_owned(),
                topics,
                brokers,
                file: value.clone(),
            }),
            _ => None,
        };
        or_what(expected(spec))
    }
    fn to_json(&self) -> Value {
        self.file.clone()
    }
}

/// A field's key: its name, unless it gives one.
macro_rules! key {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident, $key:literal) => {
        $key
    };
}

/// Defines a tagged enum: each variant a tag word and typed fields, read
/// from and written into a JSON object whose `$tag` key holds the word.
macro_rules! tagged {
    (
        $(#[$meta:meta])*
        pub enum $name:ident by $tag:literal {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $word:literal {
                    $($(#[$fmeta:meta])* $field:ident $(as $key:literal)?: $ty:ty,)*
                }
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                $variant {
                    $($(#[$fmeta])* $field: $ty,)*
                },
            )*
        }

        impl $name {
            /// Every tag word with the keys of its fields, in the schema's
            /// order.
            pub fn schema() -> Vec<(&'static str, Vec<&'static str>)> {
                vec![$(($word, {
                    #[allow(unused_mut)]
                    let mut keys: Vec<&'static str> = Vec::new();
                    $(
                        keys.push(key!($field $(, $key)?));
                        keys.extend(<$ty as Field>::ALSO);
                    )*
                    keys
                }),)*]
            }

            /// Its tag word.
            pub fn word(&self) -> &'static str {
                match self {
                    $($name::$variant { .. } => $word,)*
                }
            }

            /// Reads the variant `word` from `fields` (the tag aside): a
            /// field missing or of the wrong type, or one the variant does
            /// not have, is an error naming it.
            fn read_variant(word: &str, fields: &Map<String, Value>) -> Result<$name, Problem> {
                #[allow(unused_variables)]
                let known = |keys: &[&str]| match fields.keys().find(|k| {
                    k.as_str() != $tag && !keys.contains(&k.as_str())
                }) {
                    Some(k) => Err(Problem::new(k, "no such field in this schema")),
                    None => Ok(()),
                };
                match word {
                    $($word => {
                        #[allow(unused_mut)]
                        let mut keys: Vec<&str> = Vec::new();
                        $(
                            keys.push(key!($field $(, $key)?));
                            keys.extend(<$ty as Field>::ALSO);
                        )*
                        known(&keys)?;
                        Ok($name::$variant {
                            $($field: Field::decode(fields, key!($field $(, $key)?))?,)*
                        })
                    })*
                    other => Err(Problem::new($tag, format!("unknown {} `{other}`", $tag))),
                }
            }

            /// Writes its fields (the tag aside) into `fields`.
            fn write_fields(&self, fields: &mut Map<String, Value>) {
                match self {
                    $($name::$variant { $($field,)* } => {
                        $(Field::encode($field, key!($field $(, $key)?), fields);)*
                    })*
                }
            }
        }
    };
}

tagged! {
    /// What the orchestrator did (`env`'s `action`, with its subject).
    pub enum Env by "action" {
        /// `consumer.start()`: a join.
        Start = "start" { /** The consumer. */ consumer: String, }
        /// `consumer.shutdown()`: a graceful leave.
        Shutdown = "shutdown" { /** The consumer. */ consumer: String, }
        /// `kill -9` of the consumer's process.
        Kill = "kill" { /** The consumer. */ consumer: String, }
        /// `SIGSTOP` of the consumer's process: a pause.
        Stop = "stop" { /** The consumer. */ consumer: String, }
        /// `SIGCONT` of a stopped consumer.
        Cont = "cont" { /** The consumer. */ consumer: String, }
        /// A broker stopped and started again after the downtime.
        RestartBroker = "restart_broker" {
            /** The broker. */ broker: String,
            /** The downtime, ms. */ downtime_ms: u64,
        }
        /// A broker started.
        StartBroker = "start_broker" { /** The broker. */ broker: String, }
        /// A broker shut down (it leaves the route).
        StopBroker = "stop_broker" { /** The broker. */ broker: String, }
        /// The topic's queues on a broker set.
        Route = "route" {
            /** The broker. */ broker: String,
            /** Its new read and write queues. */ queues: u64,
        }
        /// A broker's master shut down, its slave serving in its place.
        FailOver = "fail_over" { /** The broker. */ broker: String, }
        /// A broker's slave copied its master's tables.
        SyncSlave = "sync_slave" { /** The broker. */ broker: String, }
        /// A broker's expired commit-log files deleted.
        Evict = "evict" { /** The broker. */ broker: String, }
        /// A stopped broker's consumer offsets deleted.
        LoseDisk = "lose_disk" { /** The broker. */ broker: String, }
        /// A stopped broker's FIFO order info deleted.
        LoseOrderInfo = "lose_order_info" { /** The broker. */ broker: String, }
        /// The proxy of the gRPC clients made to reload the group's config
        /// until it holds none.
        ProxyForgetsGroup = "proxy_forgets_group" { /** The group. */ group: String, }
        /// A relay cut.
        Cut = "cut" { /** The relay. */ relay: String, }
        /// A relay healed.
        Heal = "heal" { /** The relay. */ relay: String, }
        /// A consumer subscribes to a topic.
        Subscribe = "subscribe" {
            /** The consumer. */ consumer: String,
            /** The topic. */ topic: String,
        }
        /// A consumer unsubscribes from a topic.
        Unsubscribe = "unsubscribe" {
            /** The consumer. */ consumer: String,
            /** The topic. */ topic: String,
        }
    }
}

impl Env {
    /// What it was done to: the consumer, the broker, the relay or the
    /// proxy's group.
    pub fn subject(&self) -> &str {
        match self {
            Env::Start { consumer }
            | Env::Shutdown { consumer }
            | Env::Kill { consumer }
            | Env::Stop { consumer }
            | Env::Cont { consumer }
            | Env::Subscribe { consumer, .. }
            | Env::Unsubscribe { consumer, .. } => consumer,
            Env::RestartBroker { broker, .. }
            | Env::StartBroker { broker }
            | Env::StopBroker { broker }
            | Env::Route { broker, .. }
            | Env::Evict { broker }
            | Env::FailOver { broker }
            | Env::SyncSlave { broker }
            | Env::LoseDisk { broker }
            | Env::LoseOrderInfo { broker } => broker,
            Env::Cut { relay } | Env::Heal { relay } => relay,
            Env::ProxyForgetsGroup { group } => group,
        }
    }

    /// The consumer it was done to, if it was one.
    pub fn consumer(&self) -> Option<&str> {
        match self {
            Env::Start { consumer }
            | Env::Shutdown { consumer }
            | Env::Kill { consumer }
            | Env::Stop { consumer }
            | Env::Cont { consumer }
            | Env::Subscribe { consumer, .. }
            | Env::Unsubscribe { consumer, .. } => Some(consumer),
            _ => None,
        }
    }
}

/// `env` reads its action and its subject from the event's own fields.
impl Field for Env {
    const ALSO: &'static [&'static str] = &[
        "consumer",
        "broker",
        "relay",
        "topic",
        "downtime_ms",
        "queues",
        "group",
    ];

    fn decode(fields: &Map<String, Value>, name: &str) -> Result<Env, Problem> {
        let word: String = Field::decode(fields, name)?;
        Env::read_variant(&word, fields)
    }

    fn encode(&self, name: &str, fields: &mut Map<String, Value>) {
        fields.insert(name.to_owned(), Value::from(self.word()));
        self.write_fields(fields);
    }
}

tagged! {
    /// An event's kind and its fields: one variant per kind of the schema.
    pub enum Kind by "ev" {
        /// The orchestrator's first event: what runs.
        Run = "run" {
            /// The schema version.
            schema: Version,
            /// The script's scenario.
            scenario: String,
            /// Orderly consumption.
            orderly: bool,
            /// The RocketMQ version asked for.
            rocketmq: String,
            /// The script's model flags.
            model: Vec<String>,
            /// The model flags at the run's own sizes, for trace
            /// validation (`model` when absent).
            conform: Option<Vec<String>>,
        }
        /// A step of the orchestrator.
        Env = "env" {
            /// What it did, and to what.
            action: Env,
        }
        /// The orchestrator's last event: the run is over.
        End = "end" {
            /// Whether it ended with the group at rest: no wait timed out,
            /// every running consumer has rebalanced twice since the last
            /// change, and no broker lists an entry that will expire.
            settled: bool,
            /// How many numbered commands it sent, each acknowledged
            /// before the next was sent and before this event (absent in
            /// traces recorded before it was written).
            commands: Option<u64>,
            /// Each process's last `seq` in the trace, this event's
            /// included: what it kept of each process (absent in traces
            /// recorded before it was written).
            last_seq: Option<BTreeMap<String, u64>>,
        }
        /// A wait that timed out and ended the run.
        AwaitTimeout = "await.timeout" {
            /// What it waited for.
            awaited as "for": String,
        }
        /// What the cluster runs.
        Topology = "topology" {
            /// The schema version.
            schema: Version,
            /// RocketMQ's version.
            rocketmq_version: String,
            /// Java's version.
            jdk: String,
            /// The cluster file.
            spec: ClusterSpec,
        }
        /// A process is ready for commands.
        Ready = "ready" {}
        /// A process could not start.
        Failed = "failed" {
            /// Why.
            reason: String,
        }
        /// A command done.
        Ack = "ack" {
            /// The command's id.
            id: String,
            /// The command.
            cmd: String,
        }
        /// A command refused.
        Nack = "nack" {
            /// The command's id (none for a line that is no command).
            id: Option<String>,
            /// The command.
            cmd: Option<String>,
            /// Why.
            reason: String,
        }
        /// A name server's life.
        NameServerLife = "ns.life" {
            /// The name server.
            ns: String,
            /// Its state.
            state: ServerState,
            /// Its port, once started.
            port: Option<u64>,
        }
        /// A broker's life.
        BrokerLife = "b.life" {
            /// The broker.
            broker: String,
            /// Its state.
            state: ServerState,
            /// Its port, once started.
            port: Option<u64>,
        }
        /// A request a name server received.
        NameServerRequest = "ns.req" {
            /// The name server.
            ns: String,
            /// `REGISTER_BROKER` or `UNREGISTER_BROKER`.
            code: RequestCode,
            /// The broker it names.
            broker: Option<String>,
            /// Where it came from.
            addr: String,
        }
        /// A request a broker received.
        BrokerRequest = "b.req" {
            /// The broker.
            broker: String,
            /// The request code.
            code: RequestCode,
            /// The client on that channel, once it has heartbeated.
            client: Option<String>,
            /// Where it came from.
            addr: String,
            /// The request's id on its channel.
            opaque: i64,
            /// The queues of a lock or an unlock.
            queues: Option<Vec<String>>,
        }
        /// A broker's response.
        BrokerResponse = "b.resp" {
            /// The broker.
            broker: String,
            /// The request code.
            code: RequestCode,
            /// The client on that channel.
            client: Option<String>,
            /// The request's id on its channel.
            opaque: i64,
            /// The response code.
            status: i64,
            /// What it answered, when it succeeded.
            detail: Option<Detail>,
        }
        /// A broker's member table of the group changed.
        Member = "b.member" {
            /// The broker.
            broker: String,
            /// What changed it.
            kind: GroupEvent,
            /// The client whose channel it concerns.
            client: Option<String>,
            /// That channel's address.
            addr: Option<String>,
            /// The table after the change, one entry a channel, sorted.
            members: Vec<String>,
        }
        /// A broker's rule that fired on a request.
        BrokerFault = "b.fault" {
            /// The broker.
            broker: String,
            /// The request code.
            code: RequestCode,
            /// The client on that channel.
            client: Option<String>,
            /// The request's id on its channel.
            opaque: i64,
            /// What the rule did.
            action: RuleAction,
        }
        /// A consumer's life.
        ConsumerLife = "c.life" {
            /// Its state.
            state: ConsumerState,
            /// Its client id.
            client: String,
            /// Its process id, when ready.
            pid: Option<u64>,
        }
        /// A request a consumer sent.
        ConsumerRequest = "c.req" {
            /// The request code.
            code: RequestCode,
            /// The broker or name server.
            peer: String,
            /// The request's id on its channel.
            opaque: i64,
            /// The queues of a lock or an unlock.
            queues: Option<Vec<String>>,
        }
        /// A response a consumer received.
        ConsumerResponse = "c.resp" {
            /// The request code.
            code: RequestCode,
            /// The broker or name server.
            peer: String,
            /// The request's id on its channel.
            opaque: i64,
            /// The response code (none without a response).
            status: Option<i64>,
            /// What it answered, when it succeeded.
            detail: Option<Detail>,
            /// The topic of a route asked for.
            topic: Option<String>,
        }
        /// A `NOTIFY_CONSUMER_IDS_CHANGED` a consumer received.
        Notify = "c.notify" {
            /// The broker.
            peer: String,
        }
        /// A client-side allocation with its inputs.
        Alloc = "c.alloc" {
            /// The topic (none when it has no queues).
            topic: Option<String>,
            /// The allocating client's id.
            cid: String,
            /// The queues, sorted.
            mq_all: Vec<String>,
            /// The member list, as the client sorted it.
            cid_all: Vec<String>,
            /// Its share.
            result: Vec<String>,
        }
        /// A round of a consumer's rebalance changed its process-queue
        /// table of a topic (`messageQueueChanged`).
        QueuesChanged = "c.mqchanged" {
            /// The topic.
            topic: String,
            /// The round's allocation, sorted.
            divided: Vec<String>,
            /// The table's queues of the topic after the round, sorted: the
            /// allocation without a queue whose lock was refused or whose
            /// offset could not be read, with a dropped one whose removal
            /// waits for its batch. None in a trace recorded before it was.
            table: Option<Vec<String>>,
        }
        /// A batch given to the application.
        ConsumeBegin = "c.consume.begin" {
            /// The topic.
            topic: String,
            /// The queue (`broker-a:0`).
            queue: String,
            /// The batch's offsets.
            offsets: Vec<i64>,
            /// A POP consumer's batch: its messages' ids (`UNIQ_KEY`, which a
            /// revived message keeps), where `queue` is the assignment's
            /// (`broker-a:-1`) and `offsets` are as popped (schema 3).
            msgs: Option<Vec<String>>,
        }
        /// A batch the application finished.
        ConsumeEnd = "c.consume.end" {
            /// The topic.
            topic: String,
            /// The queue (`broker-a:0`).
            queue: String,
            /// The batch's offsets.
            offsets: Vec<i64>,
            /// A POP consumer's batch: its messages' ids (`UNIQ_KEY`, which a
            /// revived message keeps), where `queue` is the assignment's
            /// (`broker-a:-1`) and `offsets` are as popped (schema 3).
            msgs: Option<Vec<String>>,
        }
        /// A batch the application stopped when its thread was interrupted
        /// (a graceful shutdown's `shutdownNow`), unconsumed: a listener
        /// that stops on the interrupt (schema 2).
        ConsumeInterrupted = "c.consume.interrupted" {
            /// The topic.
            topic: String,
            /// The queue (`broker-a:0`).
            queue: String,
            /// The batch's offsets.
            offsets: Vec<i64>,
            /// A POP consumer's batch: its messages' ids (`UNIQ_KEY`, which a
            /// revived message keeps), where `queue` is the assignment's
            /// (`broker-a:-1`) and `offsets` are as popped (schema 3).
            msgs: Option<Vec<String>>,
        }
        /// A consumer's rule that fired on a request or a notification, or
        /// at its listener (code 0: the application failed the batch).
        ConsumerFault = "c.fault" {
            /// The request code.
            code: RequestCode,
            /// The broker or name server; at the listener, the broker of
            /// the batch's queue.
            peer: String,
            /// What the rule did.
            action: RuleAction,
        }
        /// The scripted broker choice installed.
        Pick = "c.pick" {
            /// The choice (`first`).
            broker_pick: String,
        }
        /// A rule matched at a hook.
        Rule = "rule" {
            /// The rule's id.
            id: String,
            /// The hook point.
            at: String,
            /// The request code (0 at a hook that is no request).
            code: RequestCode,
            /// The client.
            client: Option<String>,
            /// The broker.
            broker: Option<String>,
            /// The queue.
            queue: Option<String>,
            /// What it does.
            action: RuleAction,
        }
        /// A gate released.
        GatePassed = "gate.passed" {
            /// The rule's id.
            id: String,
            /// The hook point.
            at: String,
            /// The queue.
            queue: Option<String>,
        }
        /// A message sent.
        Sent = "p.sent" {
            /// The topic.
            topic: String,
            /// The queue.
            queue: String,
            /// Its offset in the queue.
            offset: i64,
            /// Its message id.
            msg: String,
        }
        /// A round of a steady load that failed.
        SendFailed = "p.failed" {
            /// The topic.
            topic: String,
            /// Why.
            reason: String,
        }
        /// A relay cut or healed.
        Relay = "relay" {
            /// The relay.
            relay: String,
            /// Its state.
            state: RelayState,
        }
        /// The topic's queues on a broker set.
        Route = "b.route" {
            /// The broker.
            broker: String,
            /// The topic.
            topic: String,
            /// Its read and write queues there.
            queues: u64,
        }
        /// A queue's offsets after an eviction.
        Store = "b.store" {
            /// The broker.
            broker: String,
            /// The topic.
            topic: String,
            /// The queue.
            queue: String,
            /// Its first offset.
            min: i64,
            /// Its end.
            max: i64,
        }
        /// The files a lost disk lost.
        Disk = "b.disk" {
            /// The broker.
            broker: String,
            /// The files deleted.
            lost: Vec<String>,
        }
        /// A broker's member table, as asked for.
        Snapshot = "snap" {
            /// The broker.
            broker: String,
            /// Its members, one entry a channel.
            members: Vec<String>,
        }
    }
}

/// One event of the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// CLOCK_MONOTONIC in nanoseconds (Java's `System.nanoTime()`), the
    /// same clock in every process of the host.
    pub t: u64,
    /// The process: `cluster`, a consumer's name, or `orchestrator`.
    pub p: String,
    /// The process's own sequence number.
    pub seq: u64,
    /// The emitting thread (empty for the orchestrator's events).
    pub thr: String,
    /// Its kind and fields.
    pub kind: Kind,
}

/// The keys every event has, before its kind's fields.
const ENVELOPE: [&str; 5] = ["t", "p", "seq", "thr", "ev"];

impl Event {
    /// Reads one line: `Err` names the field at fault (`line` 0: set by
    /// the caller).
    pub fn from_line(line: &str) -> Result<Event, TraceError> {
        let value: Value = serde_json::from_str(line).map_err(|e| TraceError {
            line: 0,
            ev: None,
            field: None,
            problem: format!("not an event: {e}"),
        })?;
        Self::from_json(&value)
    }

    /// Reads one event from its JSON object.
    pub fn from_json(value: &Value) -> Result<Event, TraceError> {
        let at = |ev: Option<&str>, p: Problem| TraceError {
            line: 0,
            ev: ev.map(str::to_owned),
            field: Some(p.field),
            problem: p.problem,
        };
        let Some(fields) = value.as_object() else {
            return Err(TraceError {
                line: 0,
                ev: None,
                field: None,
                problem: format!("not an event: expected an object, found {}", shown(value)),
            });
        };
        let ev: String = Field::decode(fields, "ev").map_err(|p| at(None, p))?;
        let envelope = |ev: &str| -> Result<(u64, String, u64, Option<String>), TraceError> {
            Ok((
                Field::decode(fields, "t").map_err(|p| at(Some(ev), p))?,
                Field::decode(fields, "p").map_err(|p| at(Some(ev), p))?,
                Field::decode(fields, "seq").map_err(|p| at(Some(ev), p))?,
                Field::decode(fields, "thr").map_err(|p| at(Some(ev), p))?,
            ))
        };
        let (t, p, seq, thr) = envelope(&ev)?;
        let own: Map<String, Value> = fields
            .iter()
            .filter(|(k, _)| !ENVELOPE.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let kind = Kind::read_variant(&ev, &own).map_err(|p| {
            if p.field == "ev" {
                TraceError {
                    line: 0,
                    ev: None,
                    field: None,
                    problem: format!("unknown event kind `{ev}`"),
                }
            } else {
                at(Some(&ev), p)
            }
        })?;
        Ok(Event {
            t,
            p,
            seq,
            thr: thr.unwrap_or_default(),
            kind,
        })
    }

    /// Its kind's word (`c.alloc`).
    pub fn ev(&self) -> &'static str {
        self.kind.word()
    }

    /// Its kind's fields as JSON, as the trace has them.
    pub fn fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        self.kind.write_fields(&mut fields);
        fields
    }

    /// The line of the trace it is: its envelope, then its fields in order
    /// of name.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether it has every key and value of `pattern`.
    pub fn matches(&self, pattern: &Pattern) -> bool {
        pattern.ev.as_deref().map_or(true, |ev| ev == self.ev())
            && pattern.p.as_deref().map_or(true, |p| p == self.p)
            && {
                let fields = self.fields();
                pattern.fields.iter().all(|(k, v)| fields.get(k) == Some(v))
            }
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("t", &self.t)?;
        map.serialize_entry("p", &self.p)?;
        map.serialize_entry("seq", &self.seq)?;
        if !self.thr.is_empty() {
            map.serialize_entry("thr", &self.thr)?;
        }
        map.serialize_entry("ev", self.ev())?;
        for (k, v) in &fields {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What an event must have to match: its kind, its process, and fields of
/// that kind with their values (a script's `await` for an event).
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// The kind (`ev`), if given.
    pub ev: Option<String>,
    /// The process (`p`), if given.
    pub p: Option<String>,
    /// The fields and their values, compared as JSON.
    pub fields: Map<String, Value>,
}

impl Pattern {
    /// Reads a pattern: `ev` and `p` as strings, and fields the kind has
    /// (of some kind, without `ev`).
    pub fn parse(pattern: &Map<String, Value>) -> Result<Pattern, String> {
        let text = |key: &str| match pattern.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {}", shown(other))),
        };
        let (ev, p) = (text("ev")?, text("p")?);
        let schema = Kind::schema();
        let kinds: Vec<&(&str, Vec<&str>)> = match &ev {
            Some(ev) => {
                let kind = schema
                    .iter()
                    .find(|(word, _)| word == ev)
                    .ok_or_else(|| format!("no event kind `{ev}`"))?;
                vec![kind]
            }
            None => schema.iter().collect(),
        };
        let fields: Map<String, Value> = pattern
            .iter()
            .filter(|(k, _)| k.as_str() != "ev" && k.as_str() != "p")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(k) = fields
            .keys()
            .find(|k| !kinds.iter().any(|(_, keys)| keys.contains(&k.as_str())))
        {
            return Err(match &ev {
                Some(ev) => format!("`{ev}` has no field `{k}`"),
                None => format!("no event kind has a field `{k}`"),
            });
        }
        Ok(Pattern { ev, p, fields })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut all = self.fields.clone();
        if let Some(ev) = &self.ev {
            all.insert("ev".into(), Value::from(ev.as_str()));
        }
        if let Some(p) = &self.p {
            all.insert("p".into(), Value::from(p.as_str()));
        }
        write!(f, "{}", Value::Object(all))
    }
}

/// Reads a trace: one event a line; a line that is not an event of this
/// schema, or a trace with no `run` event, is an error naming the line.
pub fn parse(text: &str) -> Result<Vec<Event>, TraceError> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event = Event::from_line(line).map_err(|e| TraceError { line: i + 1, ..e })?;
        events.push(event);
    }
    if !events.iter().any(|e| matches!(e.kind, Kind::Run { .. })) {
        return Err(TraceError {
            line: 0,
            ev: None,
            field: None,
            problem: "no `run` event: not a trace of `rebalance cluster`".into(),
        });
    }
    Ok(events)
}

/// The model flags a trace's run recorded for its validation
/// (`rebalance conform --trace-model`): its `conform` flags, the model at
/// the run's own sizes, else its `model` flags; `None` without a `run`
/// event.
pub fn validation_flags(events: &[Event]) -> Option<Vec<String>> {
    events.iter().find_map(|e| match &e.kind {
        Kind::Run { model, conform, .. } => Some(
            conform
                .clone()
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| model.clone()),
        ),
        _ => None,
    })
}

/// Where a broker's `CLIENT_UNREGISTER` listing of `gone` still shows the
/// entry it reports removed, if it does: `ConsumerManager.scanNotActiveChannel`
/// calls the listener before it removes an expired channel (the other
/// paths after), so its listing names `gone` as often as the broker's
/// `last` listing did. The broker's table is then `listed` without that
/// entry.
pub fn expired_entry(listed: &[String], gone: &str, last: Option<&[String]>) -> Option<usize> {
    let count = |l: &[String]| l.iter().filter(|c| *c == gone).count();
    let at = listed.iter().position(|c| c == gone)?;
    (last.map(count) == Some(count(listed))).then_some(at)
}

/// How the orchestrator's stop of `consumer` at `events[i]` ends: a kill
/// (`Some(true)`: the death is there), a continue (`Some(false)`: a
/// pause), or nothing (`None`: a death at the stop, a dead host).
pub fn stop_ends(events: &[Event], i: usize, consumer: &str) -> Option<bool> {
    events.get(i + 1..)?.iter().find_map(|e| match &e.kind {
        Kind::Env {
            action: Env::Kill { consumer: c },
        } if c == consumer => Some(true),
        Kind::Env {
            action: Env::Cont { consumer: c },
        } if c == consumer => Some(false),
        _ => None,
    })
}

/// The model's short name of a queue: `broker-a:0` is `a0`.
pub fn short_queue(queue: &str) -> String {
    match queue.split_once(':') {
        Some((broker, id)) => format!("{}{id}", broker.strip_prefix("broker-").unwrap_or(broker)),
        None => queue.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"t":1,"p":"orchestrator","seq":1,"ev":"run","model":["--scenario","healthy"],"orderly":false,"rocketmq":"5.3.3","scenario":"healthy","schema":1}"#;

    fn one(line: &str) -> Result<Event, String> {
        Event::from_line(line).map_err(|e| e.to_string())
    }

    #[test]
    fn events_round_trip_and_match_patterns() {
        let line = r#"{"t":5,"p":"c1","seq":1,"thr":"x","ev":"c.alloc","cid":"127.0.0.1@c1","cid_all":["127.0.0.1@c1"],"mq_all":["broker-a:0"],"result":["broker-a:0"],"topic":"T"}"#;
        let e = one(line).unwrap();
        assert!(matches!(&e.kind, Kind::Alloc { result, .. } if result == &["broker-a:0"]));
        assert_eq!(e.to_line(), line);
        let pattern = |p: serde_json::Value| Pattern::parse(p.as_object().unwrap()).unwrap();
        assert!(e.matches(&pattern(
            serde_json::json!({"ev": "c.alloc", "p": "c1", "topic": "T"})
        )));
        assert!(!e.matches(&pattern(serde_json::json!({"ev": "c.alloc", "topic": "U"}))));
        assert_eq!(short_queue("broker-b:1"), "b1");
    }

    #[test]
    fn a_pattern_names_a_kind_and_fields_of_this_schema() {
        let parse = |p: serde_json::Value| Pattern::parse(p.as_object().unwrap());
        assert!(parse(serde_json::json!({"ev": "b.member", "kind": "CLIENT_REGISTER"})).is_ok());
        assert!(parse(serde_json::json!({"ev": "b.membr"})).is_err());
        assert!(parse(serde_json::json!({"ev": "b.member", "divided": []})).is_err());
        assert!(parse(serde_json::json!({"queue": "broker-a:0"})).is_ok());
        assert!(parse(serde_json::json!({"queu": "broker-a:0"})).is_err());
    }

    #[test]
    fn a_trace_without_its_schema_is_refused() {
        let no_run = r#"{"t":1,"p":"c1","seq":1,"ev":"ready"}"#;
        assert!(parse(no_run).is_err());
        assert!(parse("not json")
            .unwrap_err()
            .to_string()
            .starts_with("line 1"));
        let other = RUN.replace(r#""schema":1"#, r#""schema":99"#);
        let err = parse(&other).unwrap_err().to_string();
        assert!(err.contains("`schema`") && err.contains("99"), "{err}");
        assert_eq!(parse(RUN).unwrap().len(), 1);
    }

    /// A `members` or `divided` list missing, null or a string was read as
    /// an empty list, and a topology of another schema was accepted: each
    /// is now an error naming the line, the kind and the field.
    #[test]
    fn a_malformed_field_is_an_error_naming_it() {
        let member = |members: &str| {
            format!(
                r#"{{"t":1,"p":"cluster","seq":1,"ev":"b.member","broker":"broker-a","kind":"CHANGE"{members}}}"#
            )
        };
        for (members, problem) in [
            ("", "missing"),
            (r#","members":null"#, "null"),
            (
                r#","members":"c1""#,
                "expected a list of strings, found \"c1\"",
            ),
            (
                r#","members":[1]"#,
                "expected a list of strings, found a list",
            ),
        ] {
            let err = one(&member(members)).unwrap_err();
            assert!(
                err.starts_with("`b.member`, field `members`: ") && err.contains(problem),
                "{members}: {err}"
            );
        }
        let changed = r#"{"t":1,"p":"c1","seq":1,"ev":"c.mqchanged","topic":"T"}"#;
        assert!(one(changed)
            .unwrap_err()
            .contains("field `divided`: missing"));
        let topology = r#"{"t":1,"p":"cluster","seq":1,"ev":"topology","schema":4,"rocketmq_version":"5.3.3","jdk":"17","spec":{"group":"g","topics":[],"brokers":[]}}"#;
        let err = one(topology).unwrap_err();
        assert!(err.starts_with("`topology`, field `schema`: expected a schema version this program reads (1, 2, 3), found 4"), "{err}");
        assert!(one(&topology.replace(r#""schema":4"#, r#""schema":1"#)).is_ok());
        let trace = format!("{RUN}\n{}", member(r#","members":"c1""#));
        assert!(parse(&trace)
            .unwrap_err()
            .to_string()
            .starts_with("line 2: `b.member`"));
    }

    #[test]
    fn an_unknown_kind_or_field_and_a_bad_envelope_are_errors() {
        let err = one(r#"{"t":1,"p":"c1","seq":1,"ev":"c.teleport"}"#).unwrap_err();
        assert_eq!(err, "unknown event kind `c.teleport`");
        let err = one(r#"{"t":1,"p":"c1","seq":1,"ev":"c.notify","peer":"broker-a","extra":1}"#)
            .unwrap_err();
        assert_eq!(
            err,
            "`c.notify`, field `extra`: no such field in this schema"
        );
        let err = one(r#"{"t":-1,"p":"c1","seq":1,"ev":"ready"}"#).unwrap_err();
        assert!(
            err.starts_with("`ready`, field `t`: expected a whole number, 0 or more"),
            "{err}"
        );
        let err = one(r#"{"t":1,"p":"c1","seq":1}"#).unwrap_err();
        assert!(err.starts_with("field `ev`: missing"), "{err}");
        let err =
            one(r#"{"t":1,"p":"orchestrator","seq":1,"ev":"env","action":"kill"}"#).unwrap_err();
        assert!(err.starts_with("`env`, field `consumer`: missing"), "{err}");
        let err = one(r#"{"t":1,"p":"orchestrator","seq":1,"ev":"env","action":"kill","consumer":"c1","broker":"broker-a"}"#)
            .unwrap_err();
        assert!(
            err.starts_with("`env`, field `broker`: no such field"),
            "{err}"
        );
        let err =
            one(r#"{"t":1,"p":"orchestrator","seq":1,"ev":"env","action":"jump","consumer":"c1"}"#)
                .unwrap_err();
        assert!(
            err.starts_with("`env`, field `action`: unknown action `jump`"),
            "{err}"
        );
    }

    #[test]
    fn typed_fields_read_their_words_and_codes() {
        let e = one(r#"{"t":1,"p":"c1","seq":1,"ev":"c.resp","code":105,"detail":{"broker-a":2},"opaque":3,"peer":"namesrv-1","status":0,"topic":"T"}"#)
            .unwrap();
        match &e.kind {
            Kind::ConsumerResponse { code, detail, .. } => {
                assert_eq!(*code, RequestCode::GET_ROUTEINFO_BY_TOPIC);
                assert_eq!(code.name(), Some("GET_ROUTEINFO_BY_TOPIC"));
                assert_eq!(
                    detail,
                    &Some(Detail::Route([("broker-a".to_owned(), 2)].into()))
                );
            }
            other => panic!("{other:?}"),
        }
        let e = one(r#"{"t":1,"p":"orchestrator","seq":2,"ev":"env","action":"restart_broker","broker":"broker-a","downtime_ms":0}"#)
            .unwrap();
        assert_eq!(
            e.kind,
            Kind::Env {
                action: Env::RestartBroker {
                    broker: "broker-a".into(),
                    downtime_ms: 0
                }
            }
        );
        assert_eq!(
            e.to_line(),
            r#"{"t":1,"p":"orchestrator","seq":2,"ev":"env","action":"restart_broker","broker":"broker-a","downtime_ms":0}"#
        );
        assert!(
            one(r#"{"t":1,"p":"c1","seq":1,"ev":"c.life","state":"dancing","client":"x"}"#)
                .unwrap_err()
                .contains("expected ready, starting, started, stopping or stopped")
        );
    }
}
