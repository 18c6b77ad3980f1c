//! How big a group is and how many environment events a run may spend:
//! every number of a configuration declared once, in the table below.
//!
//! A row gives the number its [`Sizes`] field (or, for orderly
//! consumption's durations, its [`LockTiming`](super::LockTiming) field),
//! its [`Size`], its default, its name in words, its command-line flag and
//! its help, which is also the field's documentation. Everything else is
//! derived from the table: [`Sizes::DEFAULT`], [`Sizes::count`],
//! [`Sizes::set`], [`Size::name`], [`Size::flag`], [`Size::help`], and the
//! flags themselves (`rocketmq-rebalance-flags` builds one per row, and
//! adds to each budget's help the scenarios whose default differs).

use std::fmt;

/// A field of [`Sizes`]: read as a count, set from a flag's number.
trait Number: Copy {
    /// The count it stands for, `all` being the consumers.
    fn count(self, all: usize) -> usize;
    /// It, set to `value`.
    fn from_count(value: usize) -> Self;
}

impl Number for usize {
    fn count(self, _: usize) -> usize {
        self
    }
    fn from_count(value: usize) -> Self {
        value
    }
}

/// `None` stands for every consumer ([`Sizes::joins`]).
impl Number for Option<usize> {
    fn count(self, all: usize) -> usize {
        self.unwrap_or(all)
    }
    fn from_count(value: usize) -> Self {
        Some(value)
    }
}

/// Declares [`Sizes`], [`Size`] and what they derive from one table.
macro_rules! sizes_table {
    (
        sizes {$(
            $(#[doc = $doc:literal])*
            $Size:ident $field:ident: $type:ty = $default:expr, $flag:literal, $name:literal;
        )*}
        durations {$(
            $(#[doc = $ddoc:literal])*
            $Duration:ident $dfield:ident, $dflag:literal, $dname:literal;
        )*}
    ) => {
        /// Sizes of the group and budgets of environment events.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
        pub struct Sizes {$(
            $(#[doc = $doc])*
            pub $field: $type,
        )*}

        impl Sizes {
            /// Three consumers, two brokers, one topic with two queues per
            /// broker; the last consumer joins a balanced group. Usable in
            /// constants (`..Sizes::DEFAULT`).
            pub const DEFAULT: Sizes = Sizes {$($field: $default,)*};

            /// The value of the field `size` names (for
            /// [`Sizes::joins`], [`Sizes::joiners`]); `None` for the
            /// durations of [`LockTiming`](super::LockTiming), which are
            /// not sizes.
            pub fn count(&self, size: Size) -> Option<usize> {
                match size {
                    $(Size::$Size => Some(Number::count(self.$field, self.consumers)),)*
                    $(Size::$Duration => None,)*
                }
            }

            /// Sets the field `size` names to `value` (for
            /// [`Sizes::joins`], `Some(value)`); `false`, and nothing
            /// set, for a duration of [`LockTiming`](super::LockTiming).
            pub fn set(&mut self, size: Size, value: usize) -> bool {
                match size {
                    $(Size::$Size => self.$field = Number::from_count(value),)*
                    $(Size::$Duration => return false,)*
                }
                true
            }
        }

        dense_enum! {
            /// One number of a configuration (a field of [`Sizes`] or of
            /// [`LockTiming`](super::LockTiming)), to say which one a
            /// [`ConfigError`](super::ConfigError) is about. Ordered as
            /// declared: the order in which reports list the budgets.
            pub enum Size {
                $(
                    #[doc = concat!("[`Sizes::", stringify!($field), "`].")]
                    $Size,
                )*
                $(
                    #[doc = concat!(
                        "[`LockTiming::", stringify!($dfield),
                        "`](super::LockTiming::", stringify!($dfield), ")."
                    )]
                    $Duration,
                )*
            }
        }

        impl Size {
            /// The number's name in words, as in reports.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$Size => $name,)*
                    $(Self::$Duration => $dname,)*
                }
            }

            /// The command-line flag that sets it (`--crashes`).
            pub fn flag(self) -> &'static str {
                match self {
                    $(Self::$Size => $flag,)*
                    $(Self::$Duration => $dflag,)*
                }
            }

            /// What it is, in the words of its field's documentation, on
            /// one line: the flag's help.
            pub fn help(self) -> String {
                let lines: &[&str] = match self {
                    $(Self::$Size => &[$($doc),*],)*
                    $(Self::$Duration => &[$($ddoc),*],)*
                };
                lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" ")
            }

            /// Whether it is a duration of orderly consumption
            /// ([`LockTiming`](super::LockTiming)) rather than a field of
            /// [`Sizes`].
            pub fn is_duration(self) -> bool {
                matches!(self, $(Self::$Duration)|*)
            }
        }
    };
}

sizes_table! {
    sizes {
        /// Consumers in the group.
        Consumers consumers: usize = 3, "--consumers", "consumers";
        /// Brokers, each hosting every topic.
        Brokers brokers: usize = 2, "--brokers", "brokers";
        /// Topics the group subscribes to.
        Topics topics: usize = 1, "--topics", "topics";
        /// Read queues per topic per broker in the initial route.
        Queues queues: usize = 2, "--queues", "queues";
        /// Consumers (the last ones) that join during the run; the others
        /// start registered and balanced. The default, one, is a scale-out
        /// of a running group; as many as --consumers is a cold start.
        Joins joins: Option<usize> = Some(1), "--joins", "joins";
        /// Consumers (the first ones) whose host may die or be cut off:
        /// brokers expire them silently after 120 s.
        Crashes crashes: usize = 0, "--crashes", "crashes";
        /// Consumers (the first ones) whose process may be killed on a
        /// live host: their connections close and brokers notify the
        /// group at once.
        Kills kills: usize = 0, "--kills", "kills";
        /// Consumers (the first ones) that may pause or be cut off for
        /// over 120 s while alive: expired by brokers, they keep consuming
        /// their queues (zombies) and reconnect later.
        Expiries expiries: usize = 0, "--expiries", "expiries";
        /// Brokers (the first ones) that may restart, losing their member
        /// tables; one step, without downtime, unless --restart-stops.
        BrokerRestarts broker_restarts: usize = 0, "--broker-restarts", "broker restarts";
        /// Consumers that may shut down gracefully: the last ones, or the
        /// first ones in rolling-upgrade and strategy-rollout.
        Leaves leaves: usize = 0, "--leaves", "leaves";
        /// Queue scale-outs: route changes that each add one read queue to
        /// the first topic.
        RouteChanges route_changes: usize = 0, "--route-changes", "route changes";
        /// Queue scale-ins: route changes that each remove one read queue
        /// of the first topic.
        QueueRemovals queue_removals: usize = 0, "--queue-removals", "queue removals";
        /// Broker scale-outs: brokers beyond the first --brokers that join
        /// the route with their queues.
        BrokerJoins broker_joins: usize = 0, "--broker-joins", "broker joins";
        /// Broker scale-ins (or upgrades): brokers that leave the route,
        /// the last one first.
        BrokerLeaves broker_leaves: usize = 0, "--broker-leaves", "broker leaves";
        /// Name servers; consumer i polls name server i mod N.
        NameServers name_servers: usize = 1, "--name-servers", "name servers";
        /// Partitions between the last broker and the last name server,
        /// which then drops the broker from its routes (its 120 s scan)
        /// until the partition heals: 0 or 1.
        NameServerPartitions name_server_partitions: usize = 0,
            "--name-server-partitions", "name server partitions";
        /// Consumers (the first ones) that may each lose one
        /// NOTIFY_CONSUMER_IDS_CHANGED (a one-way message).
        LostNotifications lost_notifications: usize = 0,
            "--lost-notifications", "lost notifications";
        /// Consumers (the first ones) that may each have one
        /// GET_CONSUMER_LIST_BY_GROUP fail, its broker unreachable for it.
        FailedQueries failed_queries: usize = 0, "--failed-queries", "failed queries";
        /// Consumers (the first ones) that may each, once, open a second
        /// connection to a broker they reconnect to, which the broker lists
        /// as a second member until its scan expires the silent one.
        SecondChannels second_channels: usize = 0, "--second-channels", "second channels";
        /// Consumers (the first ones) that may each miss one route update,
        /// their name server unreachable for a poll, and see it at a later
        /// poll.
        StaleRoutes stale_routes: usize = 0, "--stale-routes", "stale routes";
        /// Consumers (the first ones) that may each change their
        /// subscription once at runtime (subscribe to the last topic, or
        /// unsubscribe from it).
        SubscriptionChanges subscription_changes: usize = 0,
            "--subscription-changes", "subscription changes";
        /// Messages in each queue's log: pulls, offsets and deliveries are
        /// modelled, with the properties no message skipped, duplicate
        /// delivery, paused queue and (with --liveness) every message
        /// consumed, and the harms. 0 leaves messages out. At most 6, and
        /// at most 8 queues in all. Unless --consumers, --brokers or
        /// --queues say otherwise, 1 queue per broker and 2 consumers with
        /// healthy, inconsistent-subscription, duplicate-client-id,
        /// queue-scale-in, nameserver-partition, broker-restart and
        /// rolling-upgrade; 1 queue per broker with crash, route-change,
        /// stale-route and zombie-consumer; 1 broker with
        /// graceful-shutdown; 1 broker (and the joining one) with 1 queue
        /// each with broker-scale-out; 2 consumers with broker-scale-in;
        /// the scenario's own sizes otherwise.
        Messages messages: usize = 0, "--messages", "messages";
        /// Messages a pull fetches at most (pullBatchSize).
        PullBatch pull_batch: usize = 1, "--pull-batch", "pull batch";
        /// Consumers (the first ones) that may each lose one offset
        /// persist (a one-way message).
        LostPersists lost_persists: usize = 0, "--lost-persists", "lost persists";
        /// Consumers (the first ones) that may each have one offset read
        /// fail, so that the queue is not added that round.
        FailedOffsetReads failed_offset_reads: usize = 0,
            "--failed-offset-reads", "failed offset reads";
        /// Brokers (the first ones) whose master may fail once, its slave
        /// serving in its place: the members are there (consumers heartbeat
        /// to slaves too), the locks are not, and with messages the offsets
        /// are those of the slave's last sync (every 10 s), the commits
        /// since then lost.
        Failovers failovers: usize = 0, "--failovers", "failovers";
        /// Brokers (the first ones) whose queues' first messages may leave
        /// memory (checkInMemByConsumeOffset then fails, and a consumer of
        /// a group without offsets, consuming from last, starts at the
        /// queue's end).
        Evictions evictions: usize = 0, "--evictions", "evictions";
        /// With messages, brokers (the first ones) that may restart on a
        /// replaced disk: their offset tables are lost with their memory,
        /// their commit logs restored (then a queue that changes hands
        /// starts where --consume-from says).
        DiskLosses disk_losses: usize = 0, "--disk-losses", "disk losses";
        /// With messages, consumers (the first ones) whose next batch may
        /// fail once: its listener returns RECONSUME_LATER and the batch is
        /// sent back to its broker (CONSUMER_SEND_MSG_BACK), which appends
        /// it to the group's retry topic (consumed again with
        /// --retry-topic), or, if the broker is unreachable, consumed
        /// again; orderly it returns SUSPEND_CURRENT_QUEUE_A_MOMENT and the
        /// batch is consumed again. The offset never moves past a failed
        /// batch before it is stored.
        ConsumeFailures consume_failures: usize = 0, "--consume-failures", "consume failures";
        /// With messages, consumers (the first ones) whose pulls may each
        /// stall for over 120 s once (a stop-the-world pause, a blocked
        /// pull thread): at their next rebalance every queue they still
        /// get has expired (isPullExpired) and is dropped and added afresh,
        /// its offset persisted and read again.
        PullStalls pull_stalls: usize = 0, "--pull-stalls", "pull stalls";
        /// POP: consumers (the first ones) that may each lose one
        /// ACK_MESSAGE (sent one-way): its message is revived when its
        /// invisible time passes, and popped again.
        LostAcks lost_acks: usize = 0, "--lost-acks", "lost acks";
        /// POP: consumers (the first ones) whose running batches may, once,
        /// outlast their invisible time: the broker revives their messages
        /// while they run, and their results settle nothing (the remoting
        /// client drops them; the proxy refuses a FIFO group's gRPC
        /// client's late acknowledgement).
        SlowBatches slow_batches: usize = 0, "--slow-batches", "slow batches";
        /// POP: consumers (the first ones) that may each lose one answer
        /// to a POP_MESSAGE that brought messages, the connection alive:
        /// the receive times out and the consumer pops again (a FIFO
        /// group's gRPC client with the same attempt id, which re-enters
        /// the queue its lost pop blocks).
        LostPopAnswers lost_pop_answers: usize = 0, "--lost-pop-answers", "lost pop answers";
        /// A FIFO group of POP consumers: brokers (the first ones) that
        /// may crash once (killed, no clean shutdown): a restart that also
        /// loses the group's order info of its queues' last pops
        /// (persisted every 10 s), so that a queue whose batch still runs
        /// is popped again.
        BrokerCrashes broker_crashes: usize = 0, "--broker-crashes", "broker crashes";
        /// Orderly: ticks by which the first consumer's wall clock may be
        /// stepped back, a tick at a time: its locks' ages stand still,
        /// while its renewal, on the monotonic clock, comes when due.
        ClockDrift clock_drift: usize = 0, "--clock-drift", "clock drift";
        /// Orderly: brokers (the first ones) whose wall clock may step
        /// forward once by a lease or more (NTP correcting a clock that
        /// was behind), so that every lock they hold lapses at once while
        /// its holder still trusts it.
        BrokerClockSteps broker_clock_steps: usize = 0,
            "--broker-clock-steps", "broker clock steps";
        /// Orderly: consumers (the first ones) that may each lose one
        /// unlock (a one-way message).
        LostUnlocks lost_unlocks: usize = 0, "--lost-unlocks", "lost unlocks";
        /// Orderly: consumers (the first ones) that may lose their
        /// connection for lock calls: from then on every lock call times
        /// out, while they go on consuming what they have pulled.
        FailedLocks failed_locks: usize = 0, "--failed-locks", "failed locks";
    }
    durations {
        /// Orderly: ticks between lock renewals (lockAll; default 2: 20 s).
        LockRenew renew, "--lock-renew", "lock renewal interval";
        /// Orderly: ticks a consumer trusts a lock after it was granted
        /// (default 3: 30 s).
        LockValidity validity, "--lock-validity", "lock validity";
        /// Orderly: ticks a broker keeps a lock nobody renews (default 6:
        /// 60 s).
        LockLease lease, "--lock-lease", "lock lease";
        /// Orderly: ticks after the last lock when a dropped queue is
        /// unlocked without waiting for its running batch (default 2:
        /// 20 s).
        UnlockDelay unlock_delay, "--unlock-delay", "unlock delay";
        /// Orderly: the most ticks one batch takes (default 0: under a
        /// tick; slow-batch: 3).
        BatchTicks batch, "--batch-ticks", "batch duration";
        /// Orderly: ticks a restarting broker stays stopped before it
        /// starts again (1 or more; implies --restart-stops, which alone
        /// lets it start within the tick it stopped in). The old holder
        /// trusts its lock validity ticks after its last lock, so a
        /// downtime longer than that trust closes broker-restart's window.
        RestartDowntime restart_downtime, "--restart-downtime", "restart downtime";
    }
}

impl Default for Sizes {
    /// [`Sizes::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Sizes {
    /// How many consumers join: `joins`, or all of them for a cold start.
    pub fn joiners(&self) -> usize {
        self.joins.unwrap_or(self.consumers)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Dense;

    #[test]
    fn every_size_is_set_and_counted_through_its_row() {
        for size in Size::all().filter(|s| !s.is_duration()) {
            let mut sizes = Sizes::DEFAULT;
            assert!(sizes.set(size, 5), "{size}");
            assert_eq!(sizes.count(size), Some(5), "{size}");
            assert!(size.flag().starts_with("--"), "{size}");
            assert!(!size.help().is_empty(), "{size}");
            assert!(!size.help().contains("  "), "{size}: one line");
        }
        for size in Size::all().filter(|s| s.is_duration()) {
            let mut sizes = Sizes::DEFAULT;
            assert!(!sizes.set(size, 5));
            assert_eq!((sizes, sizes.count(size)), (Sizes::DEFAULT, None));
        }
    }

    #[test]
    fn names_and_flags_are_unique() {
        let mut names: Vec<_> = Size::all().map(Size::name).collect();
        let mut flags: Vec<_> = Size::all().map(Size::flag).collect();
        for list in [&mut names, &mut flags] {
            list.sort();
            let len = list.len();
            list.dedup();
            assert_eq!(list.len(), len);
        }
    }
}
