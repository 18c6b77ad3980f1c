//! What a rebalance costs when messages are modelled, measured on the whole
//! reachable space: the worst of each harm, with the path to a state that
//! reaches it.
//!
//! - `max_deliveries`: the most times one message reached application code
//!   (3 means three or more).
//! - `max_duplicates_per_handover`: the most messages of one queue delivered
//!   twice or more. With the budgets of a run a queue changes hands a few
//!   times at most (once with one join), so this is what hand-overs
//!   duplicate.
//! - `max_duplicated_messages`: the most messages delivered twice or more
//!   at once, over every queue: what a strategy that moves fewer queues
//!   should lower.
//! - `max_paused_queues`: the most queues with messages waiting that nobody
//!   consumes at once, after a rebalance started. The model has no clock, so
//!   a pause has no length; how many queues stop together is what it can
//!   measure, and times the length of a rebalance (up to the 20 s of the
//!   periodic rebalance when a notification is lost) it gives the
//!   throughput lost.
//! - `max_stall_ticks`: the longest a queue with a message not yet
//!   delivered waits, no batch of it running, while a live consumer owns it
//!   and can pull it (orderly: trusting its lock of it).
//! - `max_pause_ticks`, orderly only: the longest a queue with a message
//!   not yet delivered waits with no live consumer consuming it (paused),
//!   once a subscriber has rebalanced: a pause's length, where
//!   `max_paused_queues` is its width.
//! - `max_lock_wait_ticks`, orderly only: the longest a queue's owner waits
//!   for a lock that its broker still gives another client.
//!
//! The waits count ticks of the orderly clock (10 s each), each taken
//! where no step of milliseconds is left for later (`urgent`): the time
//! the protocol's clocks make a wait last, its least. Without the clock
//! the stall counts the steps of the waiting owner (`stall_unit`: `owner
//! steps`): how many things it does meanwhile, not how long it waits. A
//! wait that a fair cycle of counted steps can repeat for ever is
//! `unbounded`, and its path goes once round the cycle.

use serde::Serialize;

use crate::config::{MAX_CONSUMERS, MAX_MESSAGE_QUEUES};
use crate::guarantees::Group;
use crate::protocol::{Message, Peer, Timer};
use crate::search::graph::Edge;
use crate::search::longest::{longest_stretch, Stretch};
use crate::search::{encode_path, explorer_indices, Classify, Cutoff, Graph, Limits, StateId};
use crate::shell::{Action, RebalanceModel, SystemState};

/// The worst value of one harm, and where it is reached.
#[derive(Clone, Debug, Serialize)]
pub struct Harm {
    /// The worst value over every reachable state.
    pub value: usize,
    /// The path to open in Stateright's explorer (`#/steps/...`) of a state
    /// that reaches it, with the fewest steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explorer_path: Option<String>,
    /// A wait that a cycle repeats without end; `value` is then one
    /// round of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unbounded: bool,
    /// The same path as Explorer action indices.
    #[serde(skip)]
    pub path: Option<Vec<u32>>,
}

impl Harm {
    /// Whether it passes `bound`: unbounded, or above it.
    pub fn exceeds(&self, bound: usize) -> bool {
        self.unbounded || self.value > bound
    }
}

/// The harms of a run with messages.
#[derive(Clone, Debug, Serialize)]
pub struct Harms {
    /// The most deliveries of one message.
    pub max_deliveries: Harm,
    /// The most messages of one queue delivered twice or more.
    pub max_duplicates_per_handover: Harm,
    /// The most messages delivered twice or more, every queue together.
    pub max_duplicated_messages: Harm,
    /// The most queues paused at once.
    pub max_paused_queues: Harm,
    /// The longest a queue waits while a live consumer owns it.
    pub max_stall_ticks: Harm,
    /// Orderly: the longest a queue with a message is consumed by nobody.
    pub max_pause_ticks: Harm,
    /// Orderly: the longest an owner waits for a lock given to another.
    pub max_lock_wait_ticks: Harm,
    /// What the two waits count: `ticks` of the orderly clock, or, without
    /// it, `owner steps`.
    pub stall_unit: &'static str,
}

impl Harms {
    /// Every harm under its JSON name, in report order.
    pub fn named(&self) -> [(&'static str, &Harm); 7] {
        [
            ("max_deliveries", &self.max_deliveries),
            (
                "max_duplicates_per_handover",
                &self.max_duplicates_per_handover,
            ),
            ("max_duplicated_messages", &self.max_duplicated_messages),
            ("max_paused_queues", &self.max_paused_queues),
            ("max_stall_ticks", &self.max_stall_ticks),
            ("max_pause_ticks", &self.max_pause_ticks),
            ("max_lock_wait_ticks", &self.max_lock_wait_ticks),
        ]
    }

    /// The harm named `name` in the JSON report.
    pub fn get(&self, name: &str) -> Option<&Harm> {
        self.named()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, harm)| harm)
    }
}

/// Judges no state: the exploration only measures. Its classes mark the
/// steps a wait counts or ends: a tick, a step that consumes a queue, a
/// consumer's mail and its own steps.
struct Measure;

/// The class of a tick of the orderly clock.
const TICK: u64 = 1;
/// The class of a step that consumes queue `q` (a pull or a batch's end,
/// or a call of it delivered: its offset read, a pull request, their
/// answers): `CONSUME + q`.
const CONSUME: u64 = 2;
/// The class of a message to or from consumer `c` delivered: `MAIL + c`.
const MAIL: u64 = CONSUME + MAX_MESSAGE_QUEUES as u64;
/// The class of consumer `c`'s own other steps (its timers): `OWN + c`.
const OWN: u64 = MAIL + MAX_CONSUMERS as u64;
/// The class of consumer `c`'s rebalance: `REBALANCE + c`.
const REBALANCE: u64 = OWN + MAX_CONSUMERS as u64;

impl Classify<RebalanceModel> for Measure {
    fn class(&self, _: &RebalanceModel, _: &SystemState, action: &Action) -> Option<u64> {
        let consumes = |queue: u8| Some(CONSUME + u64::from(queue));
        match action {
            Action::Elapse { .. } => Some(TICK),
            Action::Timeout(Peer::Consumer(_), Timer::Pull { queue } | Timer::Done { queue }) => {
                consumes(*queue)
            }
            Action::Deliver(env) => match (&env.msg, env.src, env.dst) {
                (
                    Message::QueryOffset { queue, .. }
                    | Message::Offset { queue, .. }
                    | Message::PullMessage { queue, .. }
                    | Message::PullResult { queue, .. },
                    _,
                    _,
                ) => consumes(*queue),
                (_, Peer::Consumer(c), _) | (_, _, Peer::Consumer(c)) => Some(MAIL + u64::from(c)),
                _ => None,
            },
            Action::Timeout(Peer::Consumer(c), Timer::Rebalance { .. }) => {
                Some(REBALANCE + u64::from(*c))
            }
            Action::Timeout(Peer::Consumer(c), _) => Some(OWN + u64::from(*c)),
            Action::Timeout(..) | Action::Fault(..) => None,
        }
    }

    fn good(&self, _: &RebalanceModel, _: &SystemState) -> bool {
        true
    }
}

/// Whether a step must come before the clock moves on: a message on its
/// way, a connection a consumer opens, or a rebalance a consumer was
/// woken for. Each takes milliseconds where a tick is 10 s, so a tick
/// taken while one waits is the scheduler leaving it for later (which the
/// model may, to explore every order), no time anyone waits. A later
/// round a consumer owes itself (20 s in RocketMQ, untimed here) counts
/// as coming before the next tick too, so a wait that only it ends is
/// measured at its least. The one exception is a consumer's retry of what
/// only time can end: an orderly queue whose lock another client holds,
/// allocated from the member list its brokers still give
/// (`rebalanceLater`, a round a second), or the removal of a dropped
/// queue whose batch still runs (every round): its rounds go on while the
/// clock runs, and are the wait itself. A due rebalance left untaken for
/// ever is judged by fairness instead ([`due_rebalances`]).
fn urgent(model: &RebalanceModel, state: &SystemState, group: &Group) -> bool {
    let first = model.index_of(Peer::Consumer(0));
    // A round that would find another member list is progress, not a
    // retry: the lock it waits for may no longer be its to want.
    let current = |c: usize| {
        let consumer = &state.consumers[c];
        consumer.subscribed().all(|t| {
            consumer
                .targets(&model.cfg, c)
                .all(|b| consumer.views[t] == Some(state.brokers[usize::from(b)].memory.members))
        })
    };
    let retrying = |c: usize| {
        let consumer = &state.consumers[c];
        (group.lock_waits_of(c) != 0 && current(c))
            || consumer.queues.iter().any(|pq| pq.dropped && pq.running())
    };
    let woken = due_rebalances(model, state);
    state.network.iter().any(|env| match (env.src, env.dst) {
        (Peer::Consumer(a), Peer::Consumer(b)) if a == b => !retrying(usize::from(a)),
        _ => true,
    }) || (0..state.consumers.len()).any(|c| {
        let timers = state.timers[first + c];
        (0..model.cfg.broker_names.len() as u8).any(|broker| {
            timers.contains(Timer::Connect { broker })
                || timers.contains(Timer::ChannelActive { broker })
        }) || (woken & 1 << c != 0 && !retrying(c))
    })
}

/// The consumers whose rebalance is due in `state`, one bit each.
fn due_rebalances(model: &RebalanceModel, state: &SystemState) -> u16 {
    let brokers = 0..model.cfg.broker_names.len() as u8;
    let first = model.index_of(Peer::Consumer(0));
    state.timers[first..]
        .iter()
        .enumerate()
        .filter(|(_, timers)| {
            brokers
                .clone()
                .any(|broker| timers.contains(Timer::Rebalance { broker }))
        })
        .fold(0, |set, (c, _)| set | 1 << c)
}

/// Consumer `c`'s bit of every queue, in [`Group::stalled_owners`]' layout.
fn every_queue(c: u8) -> u128 {
    (0..MAX_MESSAGE_QUEUES).fold(0, |set, q| set | 1u128 << (16 * q + usize::from(c)))
}

/// Measures the harms of `model` (with messages) over every reachable
/// state, within `limits`; why not, when the exploration was cut short.
pub fn measure(model: &RebalanceModel, limits: Limits) -> Result<Harms, Cutoff> {
    // Value and the first state (fewest steps: BFS order) reaching it.
    let mut worst = [(0usize, 0 as StateId); 4];
    // Per state, what waits: the stalled queues' owners, the lock waits.
    let mut stalls: Vec<u128> = Vec::new();
    let mut lock_waits: Vec<u8> = Vec::new();
    let mut pauses: Vec<u8> = Vec::new();
    // Per state, whether a tick from it is time that passes: nothing is on
    // its way and no consumer has a rebalance to run.
    let mut idle: Vec<bool> = Vec::new();
    // Per state, the consumers whose rebalance is due.
    let mut due: Vec<u16> = Vec::new();
    // The whole graph: a wait is a stretch of a path, not a state.
    let graph = Graph::explore_observing(model, &Measure, limits, &mut |_, id, state| {
        let group = Group::of(model, state);
        let values = [
            usize::from(group.max_deliveries()),
            group.max_duplicates_of_a_queue(),
            group.duplicated_messages(),
            group.paused_queues().count_ones() as usize,
        ];
        for (slot, value) in worst.iter_mut().zip(values) {
            if value > slot.0 {
                *slot = (value, id);
            }
        }
        // An owner with mail on its way is not idle: what it waits for is
        // delivered within a tick.
        let busy = state.network.iter().fold(0u128, |busy, env| {
            [env.src, env.dst]
                .iter()
                .fold(busy, |busy, peer| match peer {
                    Peer::Consumer(c) => busy | every_queue(*c),
                    _ => busy,
                })
        });
        stalls.push(group.stalled_owners() & !busy);
        lock_waits.push(group.lock_waits() as u8);
        pauses.push(group.paused_queues() as u8);
        idle.push(!urgent(model, state, &group));
        due.push(due_rebalances(model, state));
    });
    if let Some(cutoff) = graph.cutoff {
        return Err(cutoff);
    }
    let indices = |path: &[u32]| explorer_indices(model, path);
    let harm = |(value, id): (usize, StateId)| {
        let path = (value > 0).then(|| indices(&graph.path_to(id)));
        Harm {
            value,
            explorer_path: path.as_ref().map(|p| format!("#/steps/{}", encode_path(p))),
            unbounded: false,
            path,
        }
    };
    let clock = model.cfg.orderly().is_some();
    let tick = |s: StateId, edge: &Edge| edge.class == Some(TICK) && idle[s as usize];
    // Weak fairness of a due rebalance: a component in all of whose states
    // a consumer's rebalance is due, and in which it never rebalances, is
    // that rebalance left for later, not a wait that repeats.
    let fair = |members: &[StateId]| {
        let always_due = members
            .iter()
            .fold(u16::MAX, |set, &m| set & due[m as usize]);
        if always_due == 0 {
            return true;
        }
        let mut sorted = members.to_vec();
        sorted.sort_unstable();
        let rebalanced = members
            .iter()
            .flat_map(|&m| graph.edges(m))
            .filter(|e| sorted.binary_search(&e.target).is_ok())
            .filter_map(|e| e.class.and_then(|c| c.checked_sub(REBALANCE)))
            .filter(|&c| c < MAX_CONSUMERS as u64)
            .fold(0u16, |set, c| set | 1 << c);
        always_due & !rebalanced == 0
    };
    let queues = 0..model.cfg.queues.len();
    let stall = queues.clone().filter_map(|q| {
        let owners = |s: StateId| (stalls[s as usize] >> (16 * q)) as u16;
        let of_owner = |s: StateId, class: Option<u64>, base: u64| {
            class
                .and_then(|class| class.checked_sub(base))
                .is_some_and(|c| c < MAX_CONSUMERS as u64 && owners(s) >> c & 1 == 1)
        };
        let owner_step = |s: StateId, edge: &Edge| {
            [MAIL, OWN, REBALANCE]
                .into_iter()
                .any(|base| of_owner(s, edge.class, base))
        };
        // A queue whose consumption can go on at once is not stalled: a
        // step left untaken while time passes is the scheduler's choice,
        // not a wait.
        let inside = |s: StateId| {
            owners(s) != 0 && !graph.edges(s).any(|e| e.class == Some(CONSUME + q as u64))
        };
        if clock {
            longest_stretch(&graph, inside, tick, fair)
        } else {
            longest_stretch(&graph, inside, owner_step, fair)
        }
    });
    let waiting_in = |of: &[u8], q: usize| {
        let of = &of;
        longest_stretch(&graph, move |s| of[s as usize] & 1 << q != 0, tick, fair)
    };
    let lock_wait = queues
        .clone()
        .filter(|_| clock)
        .filter_map(|q| waiting_in(&lock_waits, q));
    let pause = queues
        .filter(|_| clock)
        .filter_map(|q| waiting_in(&pauses, q));
    let wait = |stretches: &mut dyn Iterator<Item = Stretch>| {
        let worst = stretches.max_by_key(|s| (s.repeats, s.weight, std::cmp::Reverse(s.start)));
        worst.map_or(harm((0, 0)), |s| {
            let path = indices(&s.path(&graph));
            Harm {
                value: s.weight as usize,
                explorer_path: Some(format!("#/steps/{}", encode_path(&path))),
                unbounded: s.repeats,
                path: Some(path),
            }
        })
    };
    Ok(Harms {
        max_deliveries: harm(worst[0]),
        max_duplicates_per_handover: harm(worst[1]),
        max_duplicated_messages: harm(worst[2]),
        max_paused_queues: harm(worst[3]),
        max_stall_ticks: wait(&mut stall.into_iter()),
        max_pause_ticks: wait(&mut pause.into_iter()),
        max_lock_wait_ticks: wait(&mut lock_wait.into_iter()),
        stall_unit: if clock { "ticks" } else { "owner steps" },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, CheckOptions};
    use crate::config::{Config, NetworkKind, Scenario, Sizes};
    use std::sync::Arc;

    fn config() -> Config {
        let avg = Arc::from(rocketmq_rebalance::strategy_from_name("AVG").expect("a name"));
        let sizes = Sizes {
            consumers: 2,
            brokers: 1,
            queues: 1,
            messages: 1,
            ..Scenario::Healthy.default_sizes()
        };
        Config::new(Scenario::Healthy, sizes, NetworkKind::Ordered, avg).expect("valid")
    }

    /// A measurement cut short says why, and a check whose harms pass is cut
    /// is incomplete: its harms are missing, never silently absent.
    #[test]
    fn harms_cut_short_make_the_check_incomplete() {
        let model = crate::check::checked_model(config(), &CheckOptions::default());
        let cut = Limits {
            max_states: Some(10),
            threads: 1,
            ..Limits::default()
        };
        assert_eq!(measure(&model, cut).err(), Some(Cutoff::StateLimit));
        let whole = Limits {
            max_states: None,
            ..cut
        };
        assert!(measure(&model, whole).is_ok());
        let report = check(config(), &CheckOptions::default(), |_| {});
        assert!(report.complete() && report.harms.is_some());
        let stopped = crate::check::Stopped::HarmsCut(Cutoff::Timeout);
        assert!(!stopped.is_complete());
        assert_eq!(
            stopped.to_string(),
            "harms cut: timeout (the harms are not measured)"
        );
    }
}
