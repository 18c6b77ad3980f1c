//! The protocol as plain state machines, one per process, with no
//! Stateright types (sans-IO): each is a pure function from a state and an
//! input (a message or a timer) to a new state and outputs (messages to
//! send, timers to arm or disarm). The Stateright shell runs them; a
//! real-network runner could too.
//!
//! - [`name_server`]: `NamesrvController`, `RouteInfoManager`: the routes.
//! - [`broker`]: `ConsumerManager`, `ConsumerGroupInfo`: one member table.
//! - [`consumer`]: `RebalanceImpl`, `RebalanceService`, `MQClientInstance`;
//!   with messages, [`process_queue`]: `ProcessQueue` and its offset.
//! - [`clock`]: orderly consumption's clock, which ticks every machine.
//! - [`subscription`]: the rules of the subscription table.
//! - [`message`]: what they say to each other.

pub mod broker;
pub mod clock;
pub mod consumer;
pub mod machine;
pub mod message;
pub mod name_server;
pub mod process_queue;
pub mod subscription;

pub use broker::{proxy_may_lose_group, BrokerState, PopStatus};
pub use consumer::{ConsumerState, Phase};
pub use machine::{Input, Machine};
pub use message::{Fault, Message, Output, Peer, Timer};
pub use name_server::NameServerState;
pub use process_queue::{ProcessQueue, SendBack};
