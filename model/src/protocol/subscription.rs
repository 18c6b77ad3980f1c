//! The subscription table (`--subscription-table`): brokers keep each
//! member's subscription from its heartbeats, so the consumer heartbeats
//! periodically, and a table that flips with every heartbeat notifies the
//! group without end.

use crate::config::Config;

/// Whether consumers heartbeat periodically (every 30 s): only the
/// subscription table makes a repeated heartbeat carry anything.
pub fn periodic_heartbeats(cfg: &Config) -> bool {
    cfg.protocol.subscription_table
}

/// Whether a wake-up merges with an identical one already on its way to
/// the same consumer (the broker's notify task replaces the pending one,
/// `DefaultConsumerIdsChangeListener`): only a flipping subscription table
/// notifies without end; elsewhere changes, so notifications, are bounded
/// and kept apart.
pub fn wake_ups_merge(cfg: &Config) -> bool {
    cfg.protocol.subscription_table
}
