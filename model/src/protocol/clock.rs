//! Orderly consumption's clock: a tick of real time (10 s of RocketMQ's),
//! which no other layer has. When a tick may come, whose clock may fall
//! behind at it, and what it ages are protocol rules; the shell only
//! offers the tick as a step.

use crate::config::{Config, Variant};
use crate::protocol::{BrokerState, ConsumerState, Machine, Message, Phase};

/// Whether the clock may tick: only with orderly consumption, and not
/// while a timed step is due (a consumer's, or a stopped broker's start
/// once its downtime is over) or a lock call is in flight (a synchronous
/// call with a 1 s timeout, well within a tick).
pub fn may_tick<'a>(
    cfg: &Config,
    brokers: &[BrokerState],
    consumers: &[ConsumerState],
    in_flight: impl IntoIterator<Item = &'a Message>,
) -> bool {
    cfg.orderly().is_some()
        && !consumers.iter().any(|c| c.deadline(cfg))
        && !brokers.iter().any(|b| b.due_to_start(cfg))
        && !in_flight
            .into_iter()
            .any(|msg| matches!(msg, Message::LockBatch { .. } | Message::Locked { .. }))
}

/// With clock drift, the consumers whose clock may stand still at a tick:
/// running ones not yet as far behind as they may fall.
pub fn may_lag<'a>(
    cfg: &'a Config,
    consumers: &'a [ConsumerState],
) -> impl Iterator<Item = u8> + 'a {
    consumers
        .iter()
        .enumerate()
        // Trust timed by the monotonic clock: a wall-clock step moves
        // nothing that the locks read.
        .filter(|_| !cfg.has(Variant::ClientLockTrustMonotonic))
        .filter(|(c, consumer)| {
            consumer.phase == Phase::Running && consumer.lag < cfg.consumers[*c].max_clock_lag
        })
        .map(|(c, _)| c as u8)
}

/// One tick: every broker's clock advances, and every consumer's but the
/// `lagging` one's wall clock, stepped back by the tick (its monotonic
/// clock, which times its renewal, advances).
pub fn tick(
    cfg: &Config,
    brokers: &mut [BrokerState],
    consumers: &mut [ConsumerState],
    lagging: Option<u8>,
) {
    for (b, broker) in brokers.iter_mut().enumerate() {
        *broker = broker.elapse(cfg, b, true);
    }
    for (c, consumer) in consumers.iter_mut().enumerate() {
        *consumer = consumer.elapse(cfg, c, lagging != Some(c as u8));
    }
}
