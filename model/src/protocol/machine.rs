//! What every process of the protocol is: a sans-IO state machine with one
//! signature for each of its inputs, so that the shell runs the name
//! servers, the brokers and the consumers alike.

use crate::config::Config;
use crate::protocol::message::{Fault, Message, Output, Peer, Step, Timer};

/// A process of the protocol: a pure function from its state and an input
/// to its next state and its outputs. `me` is its index among the actors
/// of its kind (0 for the name servers, which are one actor).
pub trait Machine: Sized + PartialEq {
    /// Its state at start, and its first outputs (the timers and the
    /// faults its budgets give it, its first messages).
    fn start(cfg: &Config, me: usize) -> (Self, Vec<Output>);

    /// A message from `from` arrives. `None`: the machine takes no step.
    fn on_message(&self, cfg: &Config, me: usize, from: Peer, msg: &Message) -> Step<Self>;

    /// One of its timers fires.
    fn on_timer(&self, cfg: &Config, me: usize, timer: &Timer) -> Step<Self>;

    /// One of its armed faults happens.
    fn on_fault(&self, cfg: &Config, me: usize, fault: Fault) -> Step<Self>;

    /// A tick of orderly consumption's clock, its wall clock advancing or,
    /// stepped back by the tick, standing still (`wall_clock`); what has an
    /// age ages. No outputs: a tick only ages, and what falls due is a
    /// timer's step.
    fn elapse(&self, cfg: &Config, me: usize, wall_clock: bool) -> Self;

    /// The step `input` makes it take.
    fn react(&self, cfg: &Config, me: usize, input: Input<'_>) -> Step<Self> {
        match input {
            Input::Message { from, msg } => self.on_message(cfg, me, from, msg),
            Input::Timer(timer) => self.on_timer(cfg, me, timer),
            Input::Fault(fault) => self.on_fault(cfg, me, fault),
        }
    }
}

/// An input that makes a machine take a step (the clock's tick aside,
/// which every machine takes at once).
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A message arrives.
    Message {
        /// Its sender.
        from: Peer,
        /// The message.
        msg: &'a Message,
    },
    /// A timer fires.
    Timer(&'a Timer),
    /// A fault happens.
    Fault(Fault),
}
