//! Protocol variants: RocketMQ as it behaved before a fix it shipped
//! (`historical`), a fix or a setting for one of this model's findings
//! (`remedy`), or another client's behaviour (`client`). Each is one switch
//! of the sans-IO protocol, read where its step is decided, and one entry of
//! the catalogue ([`Variant::entry`]): where it comes from, what it changes,
//! and the model flags that show what it does, with each affected
//! property's verdict without it and with it. The catalogue is its own
//! regression suite: a test runs every demonstration both ways.
//!
//! ```
//! use rocketmq_rebalance_model::configuration::{Dense, Variant, VariantKind};
//!
//! let v: Variant = "lock-grace-after-start".parse().unwrap();
//! assert_eq!(v.entry().kind, VariantKind::Remedy);
//! assert!(Variant::all().any(|v| v.entry().kind == VariantKind::Remedy));
//! assert!("no-such-variant".parse::<Variant>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

use super::dense::{Dense, DenseSet};
use super::{Config, ConfigError, ConsumeFrom, LockTiming};

dense_enum! {
    /// A protocol variant, by its catalogue entry ([`Variant::entry`]).
    pub enum Variant {
        /// A broker that has just started grants no lock for as long as a
        /// client may still trust a lock the stopped process granted.
        LockGraceAfterStart,
        /// A graceful shutdown waits for the batches its listeners are
        /// running before it unlocks and persists.
        ShutdownAwaitsBatches,
        /// Every listener stops on its thread's interrupt.
        ListenersStopOnInterrupt,
        /// A queue without an offset is consumed from its first message.
        ConsumeFromFirst,
        /// Every consumer's client id is its own.
        UniqueInstanceNames,
        /// RocketMQ 4.x: a failed offset read is taken for a group without
        /// an offset.
        OffsetErrorAsNewGroup,
        /// RocketMQ up to 4.8.0: a client id is `ip@pid`, so two consumers
        /// share one.
        ClientIdPidOnly,
        /// A dropped orderly queue is unlocked without its batch only once
        /// a batch and a renewal could have ended.
        UnlockDelayBeyondBatches,
        /// RocketMQ 5.0.x: a broker answers "not found" for a queue the
        /// group has no offset of, even when its first message is in
        /// memory.
        OffsetNotFoundIsNotFound,
        /// The Go client: a dropped orderly queue leaves at once and is
        /// never unlocked, and a refused lock waits for the next round.
        GoOrderlyDrop,
        /// The Go client before v2.1.2: an orderly shutdown unlocks
        /// nothing.
        GoShutdownKeepsLocks,
        /// The Go client v2.1.1: the broker's "no offset stored" is an
        /// error, so the queue is never added.
        GoOffsetNotFoundIsError,
        /// The Go client: the broker's "no consumer for this group" is an
        /// empty member list, from which it allocates nothing.
        GoEmptyListReleasesAll,
        /// RocketMQ 4.5.0 to 4.7.0: a graceful shutdown interrupts no
        /// running batch.
        ShutdownInterruptsNothing,
        /// The Go client up to v2.1.0: a failed offset read is taken for a
        /// group without an offset.
        GoOffsetErrorAsNewGroup,
        /// The Go client: its default client id is `ip@pid`.
        GoClientIdIpPid,
        /// The Go client: a dropped queue's persist erases the offsets in
        /// memory of every other queue.
        GoPersistWipesOffsets,
        /// RocketMQ before 4.9.5: a new orderly queue is marked locked
        /// only by the next renewal.
        LockedAtNextRenewal,
        /// RocketMQ before 5.3.3: an Error in a pull ends the pull thread,
        /// and no queue of the consumer is pulled again.
        PullThreadDiesOnError,
        /// rocketmq-rust up to v0.7.0: an orderly queue's progress is never
        /// committed while the consumer holds it.
        RustOrderlyOffsetFrozen,
        /// rocketmq-rust up to v0.7.0: a batch sent back stays in the
        /// process queue, and the queue's offset stays at it.
        RustSendbackOffsetStuck,
        /// Every client sorts the member list and the queues as the Java
        /// client does.
        ClientsSortAsJava,
        /// A client times its trust in a lock with its monotonic clock.
        ClientLockTrustMonotonic,
        /// A broker times its lock leases with its monotonic clock.
        BrokerLeaseMonotonic,
        /// The gRPC Java client before attempt ids: a FIFO group's pop
        /// retried after a timeout is a new attempt, which the lost pop's
        /// block refuses.
        FifoPopWithoutAttemptId,
        /// The proxy keeps the config of a group it loaded last when no
        /// broker can be asked, so a FIFO group stays FIFO across its
        /// cluster's outage.
        ProxyKeepsGroupConfig,
    }
}

/// A set of variants, one bit each.
pub type VariantSet = DenseSet<Variant>;

/// Where a variant comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VariantKind {
    /// The behaviour of RocketMQ before a fix it shipped.
    Historical,
    /// A fix or a setting for one of the model's findings.
    Remedy,
    /// Another client's behaviour (Go, rocketmq-rust, the gRPC Java
    /// client).
    Client,
}

impl VariantKind {
    /// Its word in the catalogue (`historical`, `remedy`, `client`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Historical => "historical",
            Self::Remedy => "remedy",
            Self::Client => "client",
        }
    }
}

/// One property's verdict without the variant and with it, in the report's
/// words (`holds`, `violated`, `found`, `not-found`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Verdicts {
    /// The property, by its report name.
    pub property: &'static str,
    /// Its verdict on the demonstration's flags alone.
    pub without: &'static str,
    /// Its verdict with the variant added.
    pub with: &'static str,
}

/// One harm's figure without the variant and with it, as the check's JSON
/// `harms` names it (`max_stall_ticks`, `max_deliveries`, ...): a bug that
/// shows as a cost rather than a broken promise, or a remedy's price.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HarmFigures {
    /// The harm, by its JSON name.
    pub harm: &'static str,
    /// Its value on the demonstration's flags alone.
    pub without: usize,
    /// Its value with the variant added.
    pub with: usize,
}

/// A RocketMQ release, `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release(pub u8, pub u8, pub u8);

impl Release {
    /// The releases `--rocketmq` takes, oldest first: one a line of
    /// releases that the catalogue's historical variants tell apart. The
    /// last is the model's default, the version it follows.
    pub const PRESETS: [Release; 5] = [
        Release(4, 9, 4),
        Release(5, 0, 0),
        Release(5, 1, 4),
        Release(5, 2, 0),
        Release(5, 3, 3),
    ];

    /// The release the model follows when none is asked for.
    pub const DEFAULT: Release = Release(5, 3, 3);
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!("{}.{}.{}", self.0, self.1, self.2))
    }
}

impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A release `--rocketmq` does not take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRelease(pub String);

impl fmt::Display for UnknownRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let presets: Vec<String> = Release::PRESETS.iter().map(Release::to_string).collect();
        write!(
            f,
            "unknown RocketMQ release '{}', expected one of: {}",
            self.0,
            presets.join(", ")
        )
    }
}

impl std::error::Error for UnknownRelease {}

impl FromStr for Release {
    type Err = UnknownRelease;

    /// One of [`Release::PRESETS`], written `major.minor.patch`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Release::PRESETS
            .into_iter()
            .find(|r| r.to_string() == s)
            .ok_or_else(|| UnknownRelease(s.to_owned()))
    }
}

/// The releases of RocketMQ that behave as a historical variant does:
/// from `since` (the first release the catalogue knows of, when the
/// behaviour is older) up to, not including, `fixed_in`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Releases {
    /// The first release that behaves so.
    pub since: Release,
    /// The first release that no longer does.
    pub fixed_in: Release,
}

impl Releases {
    /// Whether `release` behaves so.
    pub fn contain(&self, release: Release) -> bool {
        self.since <= release && release < self.fixed_in
    }
}

/// What a variant does, shown: the model flags where it matters (as
/// `rebalance check` takes them) and the verdicts it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Demonstration {
    /// The model flags, without `--variant`.
    pub flags: &'static [&'static str],
    /// Each affected property's verdict without and with the variant.
    pub verdicts: &'static [Verdicts],
    /// Each affected harm's figure without and with the variant.
    pub harms: &'static [HarmFigures],
    /// Whether the check runs with `--liveness`, for a verdict only a fair
    /// run decides (`every message consumed`, ...).
    pub liveness: bool,
    /// Where the exhaustive check takes more than seconds: the unique
    /// states the catalogue's test explores, in which a `violated` must be
    /// found and a `holds` may only be undecided (the command decides it).
    pub test_bound: Option<usize>,
}

/// What the model must have for a variant to mean anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Needs {
    /// Nothing more.
    Nothing,
    /// Orderly consumption (`--orderly`).
    Orderly,
    /// Messages (`--messages`).
    Messages,
    /// A FIFO group of POP consumers (`--consumption pop --orderly`).
    Fifo,
}

/// A variant's catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Its name on the command line.
    pub name: &'static str,
    /// Where it comes from.
    pub kind: VariantKind,
    /// The upstream issue, pull request or commit, the setting, or
    /// "proposed here".
    pub reference: &'static str,
    /// The RocketMQ or client versions that behave so, in words.
    pub versions: &'static str,
    /// A historical variant: the releases that behave so, which
    /// `--rocketmq` selects it by.
    pub releases: Option<Releases>,
    /// What it changes, in one sentence.
    pub changes: &'static str,
    /// The finding it answers (a remedy), by the scenario that shows it.
    pub answers: Option<&'static str>,
    /// Another entry whose switch this one is: the same behaviour, in
    /// another client or release line.
    pub switch_of: Option<&'static str>,
    /// What the model must have for it.
    pub needs: Needs,
    /// Where it matters.
    pub demonstration: Demonstration,
}

/// The orderly graceful shutdown whose batch runs beside the next owner,
/// which both of its remedies close.
const SHUTDOWN_BESIDE_THE_NEXT_OWNER: Demonstration = Demonstration {
    flags: &["--scenario", "graceful-shutdown", "--orderly"],
    verdicts: &[
        Verdicts {
            property: "no queue consumed by two at once",
            without: "violated",
            with: "holds",
        },
        Verdicts {
            property: "duplicate delivery",
            without: "found",
            with: "not-found",
        },
    ],
    harms: &[],
    liveness: false,
    test_bound: None,
};

impl Variant {
    /// Its catalogue entry.
    pub fn entry(self) -> Entry {
        match self {
            Self::LockGraceAfterStart => Entry {
                name: "lock-grace-after-start",
                kind: VariantKind::Remedy,
                reference: "proposed here",
                versions: "none yet",
                releases: None,
                changes: "a broker that has just started answers LOCK_BATCH_MQ with no queue \
                          locked until a client's trust in a lock the stopped process granted \
                          has lapsed (the client's lockMaxLiveTime)",
                answers: Some("broker-restart --orderly"),
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "broker-restart", "--orderly"],
                    verdicts: &[
                        Verdicts {
                            property: "no queue consumed by two at once",
                            without: "violated",
                            with: "holds",
                        },
                        Verdicts {
                            property: "one live lock per queue",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: Some(1_000_000),
                },
            },
            Self::ShutdownAwaitsBatches => Entry {
                name: "shutdown-awaits-batches",
                kind: VariantKind::Remedy,
                reference: "setting: awaitTerminationMillisWhenShutdown (DefaultMQPushConsumer, \
                            0 by default) longer than the longest batch",
                versions: "4.7.1 and later (the setting was added then, apache/rocketmq#2085)",
                releases: None,
                changes: "a graceful shutdown lets the batches its listeners run end, and \
                          their offsets move on, before it unlocks, persists and unregisters",
                answers: Some("graceful-shutdown --orderly"),
                switch_of: None,
                needs: Needs::Messages,
                demonstration: SHUTDOWN_BESIDE_THE_NEXT_OWNER,
            },
            Self::ListenersStopOnInterrupt => Entry {
                name: "listeners-stop-on-interrupt",
                kind: VariantKind::Remedy,
                reference: "proposed here (the application's listener returns when \
                            Thread.interrupted())",
                versions: "every 5.x",
                releases: None,
                changes: "every listener ends its batch unconsumed when the shutdown \
                          interrupts its thread (as --interruptible all)",
                answers: Some("graceful-shutdown --orderly"),
                switch_of: None,
                needs: Needs::Messages,
                demonstration: SHUTDOWN_BESIDE_THE_NEXT_OWNER,
            },
            Self::ConsumeFromFirst => Entry {
                name: "consume-from-first",
                kind: VariantKind::Remedy,
                reference: "setting: consumeFromWhere = CONSUME_FROM_FIRST_OFFSET",
                versions: "every 4.x and 5.x",
                releases: None,
                changes: "a queue the broker has no offset for is consumed from its first \
                          stored message, not its last (as --consume-from first)",
                answers: Some("broker-disk-loss"),
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &["--scenario", "broker-disk-loss"],
                    verdicts: &[Verdicts {
                        property: "no message skipped",
                        without: "violated",
                        with: "holds",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::UniqueInstanceNames => Entry {
                name: "unique-instance-names",
                kind: VariantKind::Remedy,
                reference: "setting: instanceName unique per process (the default since 4.9.0, \
                            pid#nanoTime, commit 44736c3760)",
                versions: "every 4.x and 5.x",
                releases: None,
                changes: "every consumer's client id is its own, so no two members of the \
                          group compute the same share",
                answers: Some("duplicate-client-id"),
                switch_of: None,
                needs: Needs::Nothing,
                demonstration: Demonstration {
                    flags: &["--scenario", "duplicate-client-id"],
                    verdicts: &[
                        Verdicts {
                            property: "no queue stays double-owned",
                            without: "violated",
                            with: "holds",
                        },
                        Verdicts {
                            property: "converged when quiescent",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::OffsetErrorAsNewGroup => Entry {
                name: "offset-error-as-new-group",
                kind: VariantKind::Historical,
                reference: "apache/rocketmq#4504, commit 13ffac8926 (only QUERY_NOT_FOUND \
                            means no offset, OffsetNotFoundException)",
                versions: "4.x (through 4.9.8); fixed in 5.0.0",
                releases: Some(Releases {
                    since: Release(4, 5, 0),
                    fixed_in: Release(5, 0, 0),
                }),
                changes: "an offset read that fails (a busy or unreachable broker) is taken \
                          for a group with no offset, so the queue starts where ConsumeFromWhere \
                          says (its last message) instead of being left for the next round",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "graceful-shutdown",
                        "--messages",
                        "1",
                        "--failed-offset-reads",
                        "1",
                    ],
                    verdicts: &[Verdicts {
                        property: "no message skipped",
                        without: "holds",
                        with: "violated",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::ClientIdPidOnly => Entry {
                name: "client-id-pid-only",
                kind: VariantKind::Historical,
                reference: "commit 44736c3760 (the default instance name becomes \
                            pid#nanoTime)",
                versions: "up to 4.8.0; fixed in 4.9.0",
                releases: Some(Releases {
                    since: Release(4, 5, 0),
                    fixed_in: Release(4, 9, 0),
                }),
                changes: "a consumer left at the default instance name is ip@pid, so the last \
                          consumer, in a container of the same pid on the same address, shares \
                          its neighbour's client id",
                answers: None,
                switch_of: None,
                needs: Needs::Nothing,
                demonstration: Demonstration {
                    flags: &["--scenario", "healthy"],
                    verdicts: &[
                        Verdicts {
                            property: "no queue stays double-owned",
                            without: "holds",
                            with: "violated",
                        },
                        Verdicts {
                            property: "converged when quiescent",
                            without: "holds",
                            with: "violated",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::UnlockDelayBeyondBatches => Entry {
                name: "unlock-delay-beyond-batches",
                kind: VariantKind::Remedy,
                reference: "setting: rocketmq.client.unlockDelayTimeMills (20 s by default) \
                            longer than the longest batch and a lock renewal period together",
                versions: "every 5.x",
                releases: None,
                changes: "a dropped orderly queue whose batch still runs is unlocked without \
                          waiting for it only after the longest batch and one renewal period \
                          (in the model, --unlock-delay set to --batch-ticks plus --lock-renew)",
                answers: Some("slow-batch --orderly"),
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "slow-batch"],
                    verdicts: &[Verdicts {
                        property: "no queue consumed by two at once",
                        without: "violated",
                        with: "holds",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::OffsetNotFoundIsNotFound => Entry {
                name: "offset-not-found-is-not-found",
                kind: VariantKind::Historical,
                reference: "apache/rocketmq#4909, commit 244959c (5.0.0: setZeroIfNotFound \
                            false, ConsumerManageProcessor.queryConsumerOffset answers \
                            QUERY_NOT_FOUND); commit d5e6fb6 (5.1.0: 0 again while the queue's \
                            first message is in memory, as 4.x answered)",
                versions: "5.0.x; 5.1.0 answers 0 again",
                releases: Some(Releases {
                    since: Release(5, 0, 0),
                    fixed_in: Release(5, 1, 0),
                }),
                changes: "a broker asked for the offset of a queue the group has never \
                          committed answers not found even while the queue's first message is \
                          in memory, so a new group consuming from last starts at the queue's \
                          end and skips what was sent before it started",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "healthy",
                        "--consumers",
                        "1",
                        "--joins",
                        "1",
                        "--brokers",
                        "1",
                        "--queues",
                        "1",
                        "--messages",
                        "2",
                    ],
                    verdicts: &[Verdicts {
                        property: "no message skipped",
                        without: "holds",
                        with: "violated",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::GoOrderlyDrop => Entry {
                name: "go-orderly-drop",
                kind: VariantKind::Client,
                reference:
                    "rocketmq-client-go consumer.go: removeUnnecessaryMessageQueue persists \
                            and removes a dropped queue in the same round (pushConsumer's orderly \
                            branch is a TODO), no UNLOCK_BATCH_MQ; a new queue whose lock fails \
                            is skipped without rebalanceLater (open pull requests #1212, #1220)",
                versions: "rocketmq-client-go v2.0.0 to v2.1.2 and master",
                releases: None,
                changes: "a dropped orderly queue leaves the consumer's table at once, its \
                          running batch left to end, and is never unlocked, so the broker gives \
                          its lock to the next owner only when the lease runs out; a refused \
                          lock is asked again at the next periodic round",
                answers: None,
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "healthy", "--orderly"],
                    verdicts: &[],
                    harms: &[
                        HarmFigures {
                            harm: "max_lock_wait_ticks",
                            without: 0,
                            with: 6,
                        },
                        HarmFigures {
                            harm: "max_pause_ticks",
                            without: 0,
                            with: 7,
                        },
                    ],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::GoShutdownKeepsLocks => Entry {
                name: "go-shutdown-keeps-locks",
                kind: VariantKind::Client,
                reference: "rocketmq-client-go issue #994, pull request #1015, commit 9bca88d \
                            (pushConsumer.Shutdown calls unlockAll)",
                versions: "rocketmq-client-go v2.0.0 to v2.1.1; fixed in v2.1.2",
                releases: None,
                changes: "an orderly consumer's graceful shutdown sends no UNLOCK_BATCH_MQ: its \
                          queues stay locked at the broker until the lease runs out, so the \
                          next owner waits for it",
                answers: None,
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "graceful-shutdown", "--orderly"],
                    verdicts: &[Verdicts {
                        property: "no queue consumed by two at once",
                        without: "violated",
                        with: "holds",
                    }],
                    harms: &[
                        HarmFigures {
                            harm: "max_lock_wait_ticks",
                            without: 0,
                            with: 6,
                        },
                        HarmFigures {
                            harm: "max_pause_ticks",
                            without: 0,
                            with: 7,
                        },
                    ],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::GoOffsetNotFoundIsError => Entry {
                name: "go-offset-not-found-is-error",
                kind: VariantKind::Client,
                reference: "rocketmq-client-go pull request #886, commit ffd7241 (QUERY_NOT_FOUND \
                            read as no offset, not as an error)",
                versions: "rocketmq-client-go v2.1.1; fixed in v2.1.2",
                releases: None,
                changes: "the broker's answer that the group has no offset of a queue (its first \
                          message no longer in memory) is taken for a failed read: the queue is \
                          left out of the table at every round, and never consumed",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "healthy",
                        "--consumers",
                        "1",
                        "--joins",
                        "1",
                        "--brokers",
                        "1",
                        "--queues",
                        "1",
                        "--messages",
                        "2",
                        "--evictions",
                        "1",
                    ],
                    verdicts: &[
                        Verdicts {
                            property: "transient orphaned queue",
                            without: "not-found",
                            with: "found",
                        },
                        Verdicts {
                            property: "paused queue",
                            without: "not-found",
                            with: "found",
                        },
                        Verdicts {
                            property: "no message skipped",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[HarmFigures {
                        harm: "max_paused_queues",
                        without: 0,
                        with: 1,
                    }],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::GoEmptyListReleasesAll => Entry {
                name: "go-empty-list-releases-all",
                kind: VariantKind::Client,
                reference: "rocketmq-client-go consumer.go: findConsumerList ignores the answer's \
                            code, so SYSTEM_ERROR \"no consumer for this group\" is an empty list, \
                            and every strategy allocates nothing from it",
                versions: "rocketmq-client-go v2.0.0 to v2.1.2 and master",
                releases: None,
                changes: "a consumer that asks a broker where no member of its group is \
                          registered (just restarted, or not yet heartbeated) drops every queue \
                          of the topic, on every broker, where Java keeps them",
                answers: None,
                switch_of: None,
                needs: Needs::Nothing,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "broker-restart",
                        "--consumers",
                        "1",
                        "--joins",
                        "0",
                        "--messages",
                        "1",
                    ],
                    verdicts: &[
                        Verdicts {
                            property: "paused queue",
                            without: "not-found",
                            with: "found",
                        },
                        Verdicts {
                            property: "duplicate delivery",
                            without: "not-found",
                            with: "found",
                        },
                    ],
                    harms: &[
                        HarmFigures {
                            harm: "max_paused_queues",
                            without: 0,
                            with: 2,
                        },
                        HarmFigures {
                            harm: "max_deliveries",
                            without: 1,
                            with: 2,
                        },
                    ],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::ClientsSortAsJava => Entry {
                name: "clients-sort-as-java",
                kind: VariantKind::Remedy,
                reference: "proposed here: the Go client and rocketmq-rust sort client ids and \
                            queues by UTF-16 code units, as Java's String.compareTo does",
                versions: "none yet",
                releases: None,
                changes: "every consumer, whatever its client, sorts the member list and the \
                          queues in Java's order before it allocates, so a group of mixed clients \
                          computes one allocation",
                answers: Some("mixed-clients"),
                switch_of: None,
                needs: Needs::Nothing,
                demonstration: Demonstration {
                    flags: &["--scenario", "mixed-clients"],
                    verdicts: &[
                        Verdicts {
                            property: "no queue stays double-owned",
                            without: "violated",
                            with: "holds",
                        },
                        Verdicts {
                            property: "converged when quiescent",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::ClientLockTrustMonotonic => Entry {
                name: "client-lock-trust-monotonic",
                kind: VariantKind::Remedy,
                reference: "proposed here: ProcessQueue.isLockExpired compares System.nanoTime, \
                            not System.currentTimeMillis, with the last lock",
                versions: "none yet",
                releases: None,
                changes: "a consumer measures how long it may trust a lock on its monotonic \
                          clock, so a wall clock stepped back leaves its trust as long as the \
                          lease allows and no longer",
                answers: Some("clock-drift"),
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "clock-drift"],
                    verdicts: &[Verdicts {
                        property: "one live lock per queue",
                        without: "violated",
                        with: "holds",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: Some(600_000),
                },
            },
            Self::BrokerLeaseMonotonic => Entry {
                name: "broker-lease-monotonic",
                kind: VariantKind::Remedy,
                reference: "proposed here: the broker's LockEntry.isExpired compares \
                            System.nanoTime, not System.currentTimeMillis, with the last update",
                versions: "none yet",
                releases: None,
                changes: "a broker measures its lock leases on its monotonic clock, so its wall \
                          clock stepped forward lets no lease lapse early",
                answers: Some("healthy --orderly --broker-clock-steps 1"),
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "healthy",
                        "--orderly",
                        "--broker-clock-steps",
                        "1",
                    ],
                    verdicts: &[
                        Verdicts {
                            property: "no queue consumed by two at once",
                            without: "violated",
                            with: "holds",
                        },
                        Verdicts {
                            property: "one live lock per queue",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: Some(600_000),
                },
            },
            Self::FifoPopWithoutAttemptId => Entry {
                name: "fifo-pop-without-attempt-id",
                kind: VariantKind::Client,
                reference: "rocketmq-clients pull request #547 (ReceiveMessageRequest carries an \
                            attempt_id, kept when the request times out), answering issue #525",
                versions: "the gRPC Java client (rocketmq-clients) before June 2023",
                releases: None,
                changes: "a FIFO group's consumer whose pop timed out pops again as a new \
                          attempt, which the broker's block of the lost pop refuses until its \
                          invisible time passes, where a retry with the same attempt id \
                          re-enters the queue",
                answers: None,
                switch_of: None,
                needs: Needs::Fifo,
                demonstration: Demonstration {
                    flags: &[
                        "--brokers",
                        "1",
                        "--queues",
                        "1",
                        "--consumers",
                        "1",
                        "--joins",
                        "0",
                        "--messages",
                        "1",
                        "--consumption",
                        "pop",
                        "--orderly",
                        "--lost-pop-answers",
                        "1",
                    ],
                    verdicts: &[Verdicts {
                        property: "queue blocked by an abandoned pop",
                        without: "not-found",
                        with: "found",
                    }],
                    harms: &[],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::ProxyKeepsGroupConfig => Entry {
                name: "proxy-keeps-group-config",
                kind: VariantKind::Remedy,
                reference: "proposed here (ClusterMetadataService's loader of a group's config \
                            returns nothing when its route of the cluster lists no broker, and \
                            the cache keeps that nothing until the next reload)",
                versions: "none yet (5.3.3's proxy caches nothing)",
                releases: None,
                changes: "the proxy keeps the last config it loaded of a group when no broker \
                          can be asked, so a FIFO group's pops keep the queue's block across a \
                          restart of the cluster's only broker",
                answers: Some("broker-restart --consumption pop --orderly"),
                switch_of: None,
                needs: Needs::Fifo,
                demonstration: Demonstration {
                    flags: &[
                        "--brokers",
                        "1",
                        "--queues",
                        "1",
                        "--consumers",
                        "2",
                        "--joins",
                        "0",
                        "--messages",
                        "1",
                        "--consumption",
                        "pop",
                        "--orderly",
                        "--broker-restarts",
                        "1",
                    ],
                    verdicts: &[
                        Verdicts {
                            property: "no message consumed by two at once",
                            without: "violated",
                            with: "holds",
                        },
                        Verdicts {
                            property: "no queue consumed by two at once",
                            without: "violated",
                            with: "holds",
                        },
                    ],
                    harms: &[],
                    liveness: false,
                    test_bound: Some(1_000_000),
                },
            },
            Self::RustOrderlyOffsetFrozen => Entry {
                name: "rust-orderly-offset-frozen",
                kind: VariantKind::Client,
                reference: "rocketmq-rust pull request #5784, commit 5064358c8 \
                            (ConsumeMessageOrderlyService::process_consume_result moved the \
                            offset only when the process queue was dropped)",
                versions: "rocketmq-rust v0.3.0 to v0.7.0; fixed in v0.8.0",
                releases: None,
                changes: "an orderly consumer's offset stays where it was read when the queue was \
                          added, so its persists and commits tell the broker nothing new (the \
                          model sends none) and every hand-over delivers again all it consumed",
                answers: None,
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "graceful-shutdown",
                        "--orderly",
                        "--messages",
                        "2",
                    ],
                    verdicts: &[],
                    harms: &[
                        HarmFigures {
                            harm: "max_duplicates_per_handover",
                            without: 1,
                            with: 2,
                        },
                        HarmFigures {
                            harm: "max_duplicated_messages",
                            without: 1,
                            with: 2,
                        },
                    ],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::RustSendbackOffsetStuck => Entry {
                name: "rust-sendback-offset-stuck",
                kind: VariantKind::Client,
                reference: "rocketmq-rust pull request #6507, commit 80b0d8d22 \
                            (ConsumeMessageConcurrentlyService::process_consume_result put the \
                            messages sent back into the list it removes from the process queue \
                            only when some send-back failed)",
                versions: "rocketmq-rust v0.3.0 to v0.7.0; fixed in v0.8.0",
                releases: None,
                changes: "a failed batch that is sent back stays in the process queue, so the \
                          queue's offset stays at it while the consumer holds the queue (the \
                          model reports none), and the next owner consumes it and all after it \
                          again, though the retry topic already redelivered it",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "graceful-shutdown",
                        "--consumers",
                        "2",
                        "--queues",
                        "1",
                        "--messages",
                        "2",
                        "--consume-failures",
                        "2",
                        "--client-ids",
                        "z,a",
                    ],
                    verdicts: &[],
                    harms: &[
                        HarmFigures {
                            harm: "max_duplicates_per_handover",
                            without: 1,
                            with: 2,
                        },
                        HarmFigures {
                            harm: "max_duplicated_messages",
                            without: 1,
                            with: 2,
                        },
                    ],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::ShutdownInterruptsNothing => Entry {
                name: "shutdown-interrupts-nothing",
                kind: VariantKind::Historical,
                reference: "apache/rocketmq#2085, pull request #2084, commit 2c49e6b129 (the \
                            consume services' shutdown becomes ThreadUtils.shutdownGracefully, \
                            shutdownNow when awaitTerminationMillisWhenShutdown is 0)",
                versions: "4.5.0 to 4.7.0; 4.7.1 interrupts",
                releases: Some(Releases {
                    since: Release(4, 5, 0),
                    fixed_in: Release(4, 7, 1),
                }),
                changes: "a graceful shutdown shuts its consume pool down without interrupting \
                          it (ExecutorService.shutdown), so every running batch runs on beside \
                          the next owner, whatever its listener does with an interrupt",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "graceful-shutdown",
                        "--orderly",
                        "--interruptible",
                        "all",
                    ],
                    verdicts: &[
                        Verdicts {
                            property: "no queue consumed by two at once",
                            without: "holds",
                            with: "violated",
                        },
                        Verdicts {
                            property: "duplicate delivery",
                            without: "not-found",
                            with: "found",
                        },
                    ],
                    harms: &[HarmFigures {
                        harm: "max_deliveries",
                        without: 1,
                        with: 2,
                    }],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::GoOffsetErrorAsNewGroup => Entry {
                name: "go-offset-error-as-new-group",
                kind: VariantKind::Client,
                reference: "rocketmq-client-go issue #832, commit 16443e2 \
                            (readWithException, computePullFromWhereWithException)",
                versions: "rocketmq-client-go up to v2.1.0; fixed in v2.1.1",
                releases: None,
                changes: "as offset-error-as-new-group, in the Go client: an offset read that \
                          fails is taken for a group with no offset, so the queue starts at its \
                          last message",
                answers: None,
                switch_of: Some("offset-error-as-new-group"),
                needs: Needs::Messages,
                demonstration: Variant::OffsetErrorAsNewGroup.entry().demonstration,
            },
            Self::GoClientIdIpPid => Entry {
                name: "go-client-id-ip-pid",
                kind: VariantKind::Client,
                reference: "rocketmq-client-go: rmqClient.ClientID turns the client options' \
                            instance name DEFAULT into the pid; ChangeInstanceNameToPID changes \
                            only the consumer's copy of the options (issue #536)",
                versions: "rocketmq-client-go v2.0.0 to v2.1.2 and master, by default",
                releases: None,
                changes: "as client-id-pid-only, in the Go client: two consumers in containers \
                          of one address and one pid share a client id",
                answers: None,
                switch_of: Some("client-id-pid-only"),
                needs: Needs::Nothing,
                demonstration: Variant::ClientIdPidOnly.entry().demonstration,
            },
            Self::GoPersistWipesOffsets => Entry {
                name: "go-persist-wipes-offsets",
                kind: VariantKind::Client,
                reference:
                    "rocketmq-client-go consumer/offset_store.go: remoteBrokerOffsetStore.persist \
                            sends the queues it is given and deletes every other entry of its \
                            table, and removeUnnecessaryMessageQueue calls it with the one queue \
                            it drops (Java's drop persists that queue alone)",
                versions: "rocketmq-client-go v2.0.0 to v2.1.2 and master",
                releases: None,
                changes: "a drop's persist erases the offsets in memory of every queue the \
                          consumer keeps: until a kept queue's next batch ends, no persist, \
                          commit or shutdown reports its progress, and its next owner consumes \
                          again what it consumed since the last persist",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "rolling-upgrade",
                        "--consumers",
                        "2",
                        "--brokers",
                        "1",
                        "--queues",
                        "2",
                        "--messages",
                        "2",
                    ],
                    verdicts: &[],
                    harms: &[HarmFigures {
                        harm: "max_duplicated_messages",
                        without: 3,
                        with: 4,
                    }],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::LockedAtNextRenewal => Entry {
                name: "locked-at-next-renewal",
                kind: VariantKind::Historical,
                reference: "pull request #5466, commit eeecef3506 (4.9.5; issues #2621, #4451); \
                            5.0.0 sets the new process queue locked in \
                            updateProcessQueueTableInRebalance (commit 9d8f4c2cc0)",
                versions: "4.5.0 to 4.9.4; fixed in 4.9.5 and 5.0.0",
                releases: Some(Releases {
                    since: Release(4, 5, 0),
                    fixed_in: Release(4, 9, 5),
                }),
                changes: "a new orderly queue is locked at its broker before its process queue \
                          is in the table, so the process queue is not marked locked and its \
                          pulls wait until the next renewal (lockAll, 20 s) marks it",
                answers: None,
                switch_of: None,
                needs: Needs::Orderly,
                demonstration: Demonstration {
                    flags: &["--scenario", "graceful-shutdown", "--orderly"],
                    verdicts: &[],
                    harms: &[HarmFigures {
                        harm: "max_stall_ticks",
                        without: 0,
                        with: 2,
                    }],
                    liveness: false,
                    test_bound: None,
                },
            },
            Self::PullThreadDiesOnError => Entry {
                name: "pull-thread-dies-on-error",
                kind: VariantKind::Historical,
                reference: "apache/rocketmq#1918, pull request #9278, commit 17d57cac70 \
                            (PullMessageService.run catches Throwable)",
                versions: "4.5.0 to 5.3.2; fixed in 5.3.3",
                releases: Some(Releases {
                    since: Release(4, 5, 0),
                    fixed_in: Release(5, 3, 3),
                }),
                changes:
                    "a pull that stalls (--pull-stalls) is an Error, not an Exception, in the \
                          pull thread, which ends: the consumer keeps its queues, heartbeats and \
                          rebalances, and pulls none of them again (5.3.3 loses only that pull, \
                          and the queue's pull expiry adds it again)",
                answers: None,
                switch_of: None,
                needs: Needs::Messages,
                demonstration: Demonstration {
                    flags: &[
                        "--scenario",
                        "healthy",
                        "--consumers",
                        "1",
                        "--joins",
                        "0",
                        "--brokers",
                        "1",
                        "--queues",
                        "1",
                        "--messages",
                        "1",
                        "--pull-stalls",
                        "1",
                    ],
                    verdicts: &[Verdicts {
                        property: "every message consumed",
                        without: "holds",
                        with: "violated",
                    }],
                    harms: &[],
                    liveness: true,
                    test_bound: None,
                },
            },
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The variant whose switch this one turns on: itself, or the entry
    /// it is the same behaviour as ([`Entry::switch_of`]).
    pub fn switch(self) -> Variant {
        self.entry()
            .switch_of
            .and_then(|name| name.parse().ok())
            .unwrap_or(self)
    }

    /// The historical variants `release` still has: what `--rocketmq
    /// RELEASE` switches on.
    ///
    /// ```
    /// use rocketmq_rebalance_model::configuration::{Release, Variant, VariantSet};
    ///
    /// assert_eq!(Variant::of_release(Release::DEFAULT), VariantSet::EMPTY);
    /// let old = Variant::of_release(Release(4, 9, 4));
    /// assert!(old.contains(Variant::OffsetErrorAsNewGroup));
    /// ```
    pub fn of_release(release: Release) -> VariantSet {
        Variant::all()
            .filter(|v| v.entry().releases.is_some_and(|r| r.contain(release)))
            .collect()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Variants that answer one finding in two ways that exclude each other.
const EXCLUSIVE: &[(Variant, Variant, &str)] = &[
    (
        Variant::ShutdownInterruptsNothing,
        Variant::ListenersStopOnInterrupt,
        "a shutdown that interrupts nothing stops no listener",
    ),
    (
        Variant::ShutdownInterruptsNothing,
        Variant::ShutdownAwaitsBatches,
        "the setting that makes a shutdown wait came with the interrupt, in 4.7.1",
    ),
    (
        Variant::ShutdownAwaitsBatches,
        Variant::ListenersStopOnInterrupt,
        "a shutdown that waits for its batches interrupts none",
    ),
    (
        Variant::UniqueInstanceNames,
        Variant::ClientIdPidOnly,
        "one makes every client id unique, the other two of them equal",
    ),
    (
        Variant::GoPersistWipesOffsets,
        Variant::RustSendbackOffsetStuck,
        "one client's behaviour and another's",
    ),
];

impl Config {
    /// This configuration with the protocol variants `variants` switched
    /// on: each one's switch, and those that are a setting of an option the
    /// model has set it. A variant without the part of the model it changes,
    /// or beside one it excludes, is an error.
    ///
    /// ```
    /// use rocketmq_rebalance::strategy_from_name;
    /// use rocketmq_rebalance_model::configuration::{Config, NetworkKind, Scenario, Variant, VariantSet};
    ///
    /// let config = |scenario: Scenario| {
    ///     let avg = strategy_from_name("AVG").unwrap();
    ///     let sizes = scenario.layered_sizes(1, scenario.needs_orderly());
    ///     Config::new(scenario, sizes, NetworkKind::Ordered, avg.into()).unwrap()
    /// };
    /// let grace = VariantSet::EMPTY.with(Variant::LockGraceAfterStart);
    /// assert!(config(Scenario::SlowBatch).with_variants(grace).is_ok());
    /// let concurrent = config(Scenario::Healthy).with_variants(grace);
    /// assert!(concurrent.unwrap_err().to_string().contains("--orderly"));
    /// ```
    pub fn with_variants(mut self, variants: VariantSet) -> Result<Self, ConfigError> {
        let variants: VariantSet = variants.iter().flat_map(|v| [v, v.switch()]).collect();
        for v in variants.iter() {
            if let Some(needs) = self.lacks(v) {
                return Err(ConfigError::VariantNeeds {
                    variant: v.name(),
                    needs,
                });
            }
        }
        if let Some((a, b, reason)) = EXCLUSIVE
            .iter()
            .find(|(a, b, _)| variants.contains(*a) && variants.contains(*b))
        {
            return Err(ConfigError::VariantsExclude {
                first: a.name(),
                second: b.name(),
                reason,
            });
        }
        if variants.contains(Variant::ListenersStopOnInterrupt) {
            for c in self.consumers.iter_mut() {
                c.interruptible = true;
            }
        }
        if variants.contains(Variant::ShutdownInterruptsNothing) {
            for c in self.consumers.iter_mut() {
                c.interruptible = false;
            }
        }
        if variants.contains(Variant::ConsumeFromFirst) {
            self.protocol.consume_from = ConsumeFrom::First;
        }
        if variants.contains(Variant::UnlockDelayBeyondBatches) {
            if let Some(timing) = self.protocol.orderly.as_mut() {
                timing.unlock_delay = (timing.batch + timing.renew).min(LockTiming::MAX);
            }
        }
        if variants.contains(Variant::UniqueInstanceNames) {
            let names: Vec<String> = self.consumers.iter().map(|c| c.name.clone()).collect();
            self = self.with_client_ids(&names)?;
        }
        if variants.contains(Variant::ClientIdPidOnly) {
            let mut ids: Vec<String> = self.consumers.iter().map(|c| c.client_id.clone()).collect();
            let n = ids.len();
            ids[n - 1] = ids[n - 2].clone();
            self = self.with_client_ids(&ids)?;
        }
        self.protocol.variants = variants;
        Ok(self)
    }

    /// What this configuration lacks for variant `v` to mean anything, in
    /// words (`orderly consumption (--orderly)`); none when it has it.
    pub fn lacks(&self, v: Variant) -> Option<&'static str> {
        match v.entry().needs {
            Needs::Orderly if self.orderly().is_none() => Some("orderly consumption (--orderly)"),
            Needs::Messages if !self.messages() => Some("messages (--messages)"),
            Needs::Messages if self.pops() => Some("push consumption (--consumption push)"),
            Needs::Fifo if !(self.pops() && self.protocol.fifo) => {
                Some("a FIFO group of POP consumers (--consumption pop --orderly)")
            }
            _ if v == Variant::ClientIdPidOnly && self.consumers.len() < 2 => {
                Some("two consumers or more (--consumers)")
            }
            _ => None,
        }
    }

    /// The historical variants of `release` (as [`Variant::of_release`])
    /// that mean something here: `--rocketmq RELEASE`'s, which leaves out
    /// the behaviour of a part of the model this configuration does not
    /// have.
    pub fn variants_of_release(&self, release: Release) -> VariantSet {
        Variant::of_release(release)
            .iter()
            .filter(|&v| self.lacks(v).is_none())
            .collect()
    }

    /// Whether the protocol variant `v` is switched on.
    pub fn has(&self, v: Variant) -> bool {
        self.protocol.variants.contains(v)
    }
}

/// A variant name the catalogue does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Variant::all().map(Variant::name).collect();
        write!(
            f,
            "unknown variant '{}', expected one of: {} (rebalance variants lists them)",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::all()
            .find(|v| v.name() == s)
            .ok_or_else(|| UnknownVariant(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        let names: std::collections::BTreeSet<&str> = Variant::all().map(Variant::name).collect();
        assert_eq!(names.len(), Variant::COUNT as usize);
        for v in Variant::all() {
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
            let shown = v.entry().demonstration;
            assert!(
                !shown.verdicts.is_empty() || !shown.harms.is_empty(),
                "{v}: a demonstration shows a verdict or a harm"
            );
        }
    }
}
