//! The outcome of a real run in the words of `rebalance check`, and its
//! comparison with the model's verdicts on the configuration it replays.

use rocketmq_rebalance_model::report::{Expectation, Report, Status};
use serde::Serialize;

use rocketmq_rebalance_model::report::{
    AGREE_AT_REST, BLOCKED_BY_ABANDONED_POP, CONVERGED_WHEN_QUIESCENT, CONVERGES,
    DUPLICATE_DELIVERY, EVERY_CALL_ENDS, EVERY_MESSAGE_CONSUMED, EVERY_QUEUE_CONSUMED_AGAIN,
    FULL_CONVERGENCE, IN_ORDER, NO_CONCURRENT_CONSUMPTION, NO_DOUBLE_OWNERSHIP, NO_LONG_STALL,
    NO_MESSAGE_RUN_TWICE, NO_MESSAGE_SKIPPED, ONE_LIVE_LOCK, PAUSED_QUEUE, TRANSIENT_DOUBLE,
    TRANSIENT_ORPHAN,
};

use crate::observe::{Observer, Sighting};
use crate::script::Script;

/// The claim of a script whose model group never rests (`rests: false`),
/// named as a property in a mismatch.
pub const NEVER_AT_REST: &str = "the group never comes to rest";
use crate::trace::short_queue;

/// One property as the real run shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RealProperty {
    /// The property's name, as `rebalance check` names it (the model's own
    /// names).
    pub name: &'static str,
    /// What it promises.
    pub expectation: Expectation,
    /// The real run's verdict (`unknown` when the run never settled, for a
    /// property judged at rest).
    pub status: Status,
    /// What was seen, in the model's queue names.
    pub detail: String,
}

/// The outcome of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Whether the group popped: its properties are a POP group's.
    pub pop: bool,
    /// Whether its consumers were gRPC clients through a proxy (a FIFO
    /// group's always are): no broker lists its members.
    pub grpc: bool,
    /// Whether it was a FIFO group: the broker gives each queue to one
    /// consumer at a time, in order.
    pub fifo: bool,
    /// Every property judged, in a fixed order.
    pub properties: Vec<RealProperty>,
    /// Messages delivered more than once.
    pub duplicates: usize,
    /// Messages sent and never delivered.
    pub never_delivered: usize,
    /// Messages sent.
    pub sent: usize,
    /// Whether the run ended settled (its last wait was met).
    pub settled: bool,
    /// The first moment at rest, seconds from the start of the trace.
    pub first_at_rest_s: Option<f64>,
    /// Each queue's owners over time: `queue: consumer from–until s, ...`
    /// (seconds from the start of the trace).
    pub ownership: Vec<String>,
}

fn seen(sightings: &[Sighting], t0: u64, what: &str) -> String {
    if sightings.is_empty() {
        return format!("never {what}");
    }
    let mut distinct: Vec<&Sighting> = Vec::new();
    for s in sightings {
        if !distinct
            .iter()
            .any(|d| d.queue == s.queue && d.who == s.who)
        {
            distinct.push(s);
        }
    }
    let listed: Vec<String> = distinct
        .iter()
        .take(4)
        .map(|s| {
            let who = if s.who.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.who.join(", "))
            };
            format!("{} at {:.1} s{who}", short_queue(&s.queue), secs(s.t, t0))
        })
        .collect();
    let more = distinct.len().saturating_sub(4);
    format!(
        "{what}: {}{}",
        listed.join("; "),
        if more > 0 {
            format!("; {more} more")
        } else {
            String::new()
        }
    )
}

/// An `always` property judged in every state: violated by any sighting.
fn never(name: &'static str, sightings: &[Sighting], t0: u64, what: &str) -> RealProperty {
    RealProperty {
        name,
        expectation: Expectation::Always,
        status: if sightings.is_empty() {
            Status::Holds
        } else {
            Status::Violated
        },
        detail: seen(sightings, t0, what),
    }
}

fn secs(t: u64, t0: u64) -> f64 {
    t.saturating_sub(t0) as f64 / 1e9
}

impl Outcome {
    /// Judges a run from its observer at the end; `settled` says whether it
    /// ended at rest (a property of rest never violated is `unknown` if not).
    pub fn judge(obs: &Observer, settled: bool, orderly: bool) -> Outcome {
        let t0 = obs.span.map_or(0, |(a, _)| a);
        // Judged at every moment at rest; a run that did not end at rest and
        // saw no violation cannot say the promise holds.
        let at_rest = |seen: &[Sighting]| match (seen.is_empty(), settled) {
            (false, _) => Status::Violated,
            (true, true) => Status::Holds,
            (true, false) => Status::Unknown,
        };
        let found = |s: bool| if s { Status::Found } else { Status::NotFound };
        // A POP group's queues are every consumer's: nothing is owned,
        // handed over or locked, and two consumers running batches of one
        // queue is the design; a message is what must not run twice.
        let owned = !obs.pop;
        let mut properties = Vec::new();
        if owned {
            properties.push(RealProperty {
                name: NO_DOUBLE_OWNERSHIP,
                expectation: Expectation::Always,
                status: at_rest(&obs.rest_double),
                detail: seen(&obs.rest_double, t0, "owned by two at rest"),
            });
        }
        properties.push(RealProperty {
            name: CONVERGED_WHEN_QUIESCENT,
            expectation: Expectation::Always,
            status: at_rest(&obs.rest_unconverged),
            detail: seen(
                &obs.rest_unconverged,
                t0,
                "at rest and not converged (owned by nobody)",
            ),
        });
        if !obs.proxied {
            properties.push(RealProperty {
                name: AGREE_AT_REST,
                expectation: Expectation::Always,
                status: at_rest(&obs.rest_disagree),
                detail: seen(
                    &obs.rest_disagree,
                    t0,
                    "settled with a broker listing other members",
                ),
            });
        }
        if owned {
            properties.extend([
                RealProperty {
                    name: TRANSIENT_DOUBLE,
                    expectation: Expectation::Sometimes,
                    status: found(!obs.double_owned.is_empty()),
                    detail: seen(&obs.double_owned, t0, "double-owned"),
                },
                RealProperty {
                    name: TRANSIENT_ORPHAN,
                    expectation: Expectation::Sometimes,
                    status: found(!obs.orphaned.is_empty()),
                    detail: seen(&obs.orphaned, t0, "orphaned"),
                },
            ]);
        }
        properties.push(RealProperty {
            name: FULL_CONVERGENCE,
            expectation: Expectation::Sometimes,
            status: found(obs.full_convergence.is_some()),
            detail: obs
                .full_convergence
                .map_or("never converged and settled".into(), |t| {
                    format!("converged and settled at {:.1} s", secs(t, t0))
                }),
        });
        // A FIFO group's queue is one consumer's at a time: the broker's
        // block keeps the others out while its last pop is unsettled.
        if owned || obs.fifo {
            properties.push(never(
                NO_CONCURRENT_CONSUMPTION,
                &obs.by_two_live(&obs.consumed_by_two),
                t0,
                "consumed by two at once",
            ));
        }
        if owned {
            if orderly {
                properties.push(never(
                    ONE_LIVE_LOCK,
                    &obs.two_live_locks,
                    t0,
                    "locked while another trusts its lock",
                ));
            }
        } else {
            properties.push(never(
                NO_MESSAGE_RUN_TWICE,
                &obs.by_two_live(&obs.message_by_two),
                t0,
                "a message (queue@offset) consumed by two at once",
            ));
        }
        if obs.fifo {
            properties.push(never(
                IN_ORDER,
                &obs.out_of_order,
                t0,
                "a message begun before an earlier one of its queue was consumed",
            ));
            properties.push(RealProperty {
                name: BLOCKED_BY_ABANDONED_POP,
                expectation: Expectation::Sometimes,
                status: found(!obs.abandoned_blocks.is_empty()),
                detail: seen(
                    &obs.abandoned_blocks,
                    t0,
                    "a message given to a consumer running since before its holder was \
                     halted with it unfinished",
                ),
            });
        }
        let duplicates = obs.deliveries.values().filter(|&&n| n > 1).count();
        let never_delivered = obs.never_delivered().count();
        let deleted = obs.produced.iter().filter(|m| obs.deleted(m)).count();
        properties.push(RealProperty {
            name: NO_MESSAGE_SKIPPED,
            expectation: Expectation::Always,
            status: match (never_delivered, settled) {
                (_, false) => Status::Unknown,
                (0, true) => Status::Holds,
                _ => Status::Violated,
            },
            detail: if deleted == 0 {
                format!(
                    "{never_delivered} of {} messages never delivered",
                    obs.produced.len()
                )
            } else {
                format!(
                    "{never_delivered} of {} messages never delivered, besides {deleted} the \
                     store deleted before any delivery (the script's stand-in for messages \
                     that left memory, which the model's consumer reads from disk)",
                    obs.produced.len()
                )
            },
        });
        properties.push(RealProperty {
            name: DUPLICATE_DELIVERY,
            expectation: Expectation::Sometimes,
            status: found(duplicates > 0),
            detail: format!("{duplicates} messages delivered more than once"),
        });
        let end = obs.span.map_or(0, |(_, b)| b);
        let ownership = obs
            .ownership
            .iter()
            .map(|(q, spans)| {
                let spans: Vec<String> = spans
                    .iter()
                    .map(|s| {
                        format!(
                            "{} {:.1}–{}",
                            s.consumer,
                            secs(s.from, t0),
                            s.until
                                .map_or("end".into(), |u| format!("{:.1}", secs(u, t0)))
                        )
                    })
                    .collect();
                format!(
                    "{}: {} (run {:.1} s)",
                    short_queue(q),
                    spans.join(", "),
                    secs(end, t0)
                )
            })
            .collect();
        Outcome {
            pop: obs.pop,
            grpc: obs.proxied,
            fifo: obs.fifo,
            properties,
            duplicates,
            never_delivered,
            sent: obs.produced.len(),
            settled,
            first_at_rest_s: obs.first_at_rest.map(|t| secs(t, t0)),
            ownership,
        }
    }

    /// The real verdict on `name`.
    pub fn status(&self, name: &str) -> Option<Status> {
        self.properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.status)
    }
}

/// Where the model and the real run disagree on one property.
#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// The property.
    pub property: String,
    /// The model's verdict.
    pub model: Status,
    /// The real run's.
    pub real: Status,
    /// Which side the trace says is wrong, and why.
    pub wrong: String,
}

/// A property of the model's report that the real run has no verdict on.
#[derive(Clone, Debug, Serialize)]
pub struct NotCompared {
    /// The property, as the model's report names it.
    pub property: String,
    /// Why the run gives it no verdict.
    pub reason: &'static str,
}

/// Why a real run gives no verdict on the model's property `name`, for
/// every property the observer does not judge; `None` for one it judges
/// (or one added to the model since, which [`not_compared`] then reports
/// as having no real side yet).
pub fn why_not_compared(name: &str, pop: bool, grpc: bool, fifo: bool) -> Option<&'static str> {
    Some(match name {
        EVERY_CALL_ENDS => {
            "a guarantee of the model's own faithfulness: a real call always ends (its \
             timeout, or its channel closing), which the model must not forget"
        }
        PAUSED_QUEUE => {
            "not observed yet: a queue with messages waiting that nobody consumes shows \
             only as an orphan (transient orphaned queue)"
        }
        NO_LONG_STALL => {
            "not observed yet: a stall is a wait of an owned queue measured in the \
             model's ticks or its owner's steps, which the observer does not count"
        }
        NO_MESSAGE_RUN_TWICE if !pop => {
            "POP's: a push group's batches are judged by queue (no queue consumed by two \
             at once)"
        }
        IN_ORDER | BLOCKED_BY_ABANDONED_POP if !fifo => {
            "a FIFO group's: a run without one (the gRPC clients through the proxy; the \
             remoting client never pops for an orderly listener) shows neither"
        }
        AGREE_AT_REST if grpc => {
            "no broker lists gRPC clients (a FIFO group's, or a POP group's with --pop-client \
             grpc): the proxy keeps them, and gives each every queue whatever the members"
        }
        NO_DOUBLE_OWNERSHIP | TRANSIENT_DOUBLE | TRANSIENT_ORPHAN if pop => {
            "push's: a POP group's queues are every consumer's, so no queue has an owner"
        }
        NO_CONCURRENT_CONSUMPTION if pop && !fifo => {
            "push's and a FIFO group's: a POP group's queues are every consumer's, so \
             several consumers run batches of one queue by design"
        }
        ONE_LIVE_LOCK if pop => "push's: a POP group takes no queue locks",
        CONVERGES | EVERY_MESSAGE_CONSUMED | EVERY_QUEUE_CONSUMED_AGAIN => {
            "an eventually property under fairness: its counterexample is an infinite \
             run, which a finite one cannot show (a run's settling is full convergence, \
             its undelivered messages no message skipped)"
        }
        _ => return None,
    })
}

/// The properties of the model's report that `compare` passes over, each
/// with its reason.
pub fn not_compared(model: &Report, real: &Outcome) -> Vec<NotCompared> {
    model
        .properties
        .iter()
        .filter(|p| real.status(&p.name).is_none())
        .map(|p| NotCompared {
            property: p.name.clone(),
            reason: why_not_compared(&p.name, real.pop, real.grpc, real.fifo)
                .unwrap_or("no real side yet: the observer has no rule for it"),
        })
        .collect()
}

/// Compares the real outcome with the model's report, property by
/// property, over the properties both judge (the others are
/// [`not_compared`]):
///
/// - an `always` property must have the same verdict: a real violation the
///   model rules out means the model misses a real behaviour; a model
///   violation the run does not show means the replay failed;
/// - a `sometimes` property the run shows must be one the model reaches
///   (else the model misses it); one the script `drives` must be shown by
///   the run (else the replay failed);
/// - a verdict the run could not give (`unknown`) is a mismatch: the run
///   did not reach rest; unless the script says the model's group never
///   rests (`rests: false`), where `unknown` agrees with the model's
///   vacuous `holds` and a real moment at rest is the mismatch.
pub fn compare(model: &Report, real: &Outcome, script: &Script) -> Vec<Mismatch> {
    let mut mismatches = Vec::new();
    if let (false, Some(at)) = (script.rests, real.first_at_rest_s) {
        mismatches.push(Mismatch {
            property: NEVER_AT_REST.into(),
            model: Status::Holds,
            real: Status::Violated,
            wrong: format!(
                "the script's claim or the model: RocketMQ's group came to rest at {at:.1} s, \
                 which the script says the model's never does"
            ),
        });
    }
    for p in &model.properties {
        let Some(real_status) = real.status(&p.name) else {
            continue;
        };
        let wrong = match (p.expectation, p.status, real_status) {
            (_, Status::Holds, Status::Unknown) if !script.rests => None,
            (_, _, Status::Unknown) => Some("neither: the run never came to rest, so the real verdict is unknown"),
            (Expectation::Always, m, r) if m == r => None,
            (Expectation::Always, Status::Holds, Status::Violated) => {
                Some("the model: RocketMQ shows what the model says cannot happen")
            }
            (Expectation::Always, _, _) => {
                Some("the replay: the run did not show the model's counterexample (harness or model, see the trace)")
            }
            (Expectation::Sometimes, Status::NotFound, Status::Found) => {
                Some("the model: RocketMQ reaches a state the model never reaches")
            }
            (Expectation::Sometimes, Status::Found, Status::NotFound)
                if script.drives.contains(&p.name) =>
            {
                Some("the replay: the script drives this hazard and the run did not show it")
            }
            _ => None,
        };
        if let Some(wrong) = wrong {
            mismatches.push(Mismatch {
                property: p.name.clone(),
                model: p.status,
                real: real_status,
                wrong: wrong.into(),
            });
        }
    }
    mismatches
}

#[cfg(test)]
mod tests {
    use rocketmq_rebalance_model::internals::{LIVENESS, MEASURED, PROPERTIES};

    use super::*;

    /// A FIFO run's two properties follow their sightings.
    #[test]
    fn a_fifo_run_judges_its_blocks_and_its_order_by_their_sightings() {
        let consumers = [("c1".to_owned(), "x@c1".to_owned())];
        let mut obs = Observer::new("T", &["broker-a".to_owned()], 1, &consumers, 30_000, true);
        obs.pop = true;
        obs.proxied = true;
        obs.fifo = true;
        let quiet = Outcome::judge(&obs, true, true);
        assert_eq!(
            quiet.status(BLOCKED_BY_ABANDONED_POP),
            Some(Status::NotFound)
        );
        assert_eq!(quiet.status(IN_ORDER), Some(Status::Holds));
        let sighting = Sighting {
            t: 1,
            queue: "broker-a:0@0".into(),
            who: vec!["c1".into()],
        };
        obs.abandoned_blocks.push(sighting.clone());
        obs.out_of_order.push(sighting);
        let seen = Outcome::judge(&obs, true, true);
        assert_eq!(seen.status(BLOCKED_BY_ABANDONED_POP), Some(Status::Found));
        assert_eq!(seen.status(IN_ORDER), Some(Status::Violated));
    }

    /// Every property the model may report (orderly, with messages, with
    /// liveness) is judged by a real run or passed over with its own
    /// reason, never both and never neither.
    #[test]
    fn every_model_property_is_compared_or_has_its_reason() {
        let consumers = [("c1".to_owned(), "127.0.0.1@c1".to_owned())];
        let groups = [
            (false, false, false),
            (true, false, false),
            (true, true, false),
            (true, true, true),
        ];
        for (pop, grpc, fifo) in groups {
            let mut obs = Observer::new("T", &["broker-a".to_owned()], 2, &consumers, 30_000, true);
            obs.pop = pop;
            obs.proxied = grpc;
            obs.fifo = fifo;
            let real = Outcome::judge(&obs, true, true);
            let names = PROPERTIES
                .iter()
                .map(|p| p.name)
                .chain(LIVENESS.iter().chain(MEASURED).map(|&(name, _)| name));
            for name in names {
                assert!(
                    real.status(name).is_some()
                        != why_not_compared(name, pop, grpc, fifo).is_some(),
                    "{name}, pop {pop}, grpc {grpc}, fifo {fifo}: judged {:?}, reason {:?}",
                    real.status(name),
                    why_not_compared(name, pop, grpc, fifo)
                );
            }
        }
    }
}
