//! Readable traces: each step of a path in RocketMQ's words.

use stateright::Path;

use crate::config::Config;
use crate::properties::Group;
use crate::protocol::{ConsumerState, Message, Phase, Timer};
use crate::shell::{Action, RebalanceModel, SystemState};

/// Describes a path as numbered lines: one per step, an indented line for
/// each consumer whose owned queues or member view changed, and a summary
/// of the final state.
pub fn describe_path(model: &RebalanceModel, path: &Path<SystemState, Action>) -> Vec<String> {
    let cfg = &*model.cfg;
    let steps = path.clone().into_vec();
    let mut lines = Vec::new();
    for (number, pair) in steps.windows(2).enumerate() {
        let (before, action) = &pair[0];
        let (after, _) = &pair[1];
        let Some(action) = action else { continue };
        lines.push(format!(
            "{}. {}",
            number + 1,
            describe_action(model, Some(before), action)
        ));
        for (i, (old, new)) in before.consumers.iter().zip(&after.consumers).enumerate() {
            if old.owned != new.owned || old.views != new.views {
                lines.push(format!("   {}", describe_consumer(cfg, i, new)));
            }
        }
    }
    if let Some((last, _)) = steps.last() {
        lines.push("final state:".into());
        lines.extend(
            describe_state(model, last)
                .into_iter()
                .map(|l| format!("   {l}")),
        );
    }
    lines
}

/// One line per broker and consumer of a state.
pub fn describe_state(model: &RebalanceModel, state: &SystemState) -> Vec<String> {
    let cfg = &*model.cfg;
    let group = Group::of(model, state);
    let mut lines = vec![format!(
        "namesrv: route version {}",
        group.name_server().route
    )];
    for (b, broker) in group.brokers().enumerate() {
        lines.push(format!(
            "{}: members {}",
            cfg.broker_names[b],
            cfg.member_labels(broker.members)
        ));
    }
    for (i, consumer) in group.consumers().enumerate() {
        lines.push(describe_consumer(cfg, i, consumer));
    }
    lines
}

/// A consumer's name, with its client id when that differs.
pub fn consumer_name(cfg: &Config, i: usize) -> String {
    let spec = &cfg.consumers[i];
    if spec.client_id == spec.name {
        spec.name.clone()
    } else {
        format!("{} (client id {})", spec.name, spec.client_id)
    }
}

/// A consumer's phase in one word.
pub fn phase_word(phase: Phase) -> &'static str {
    match phase {
        Phase::Idle => "not started",
        Phase::Running => "running",
        Phase::Left => "left",
        Phase::Crashed => "crashed",
    }
}

fn describe_consumer(cfg: &Config, i: usize, c: &ConsumerState) -> String {
    let name = consumer_name(cfg, i);
    let views: Vec<String> = c
        .views
        .iter()
        .enumerate()
        .filter_map(|(t, v)| {
            v.map(|members| {
                let list = cfg.member_labels(members);
                if cfg.topic_names.len() == 1 {
                    list
                } else {
                    format!("{} {list}", cfg.topic_names[t])
                }
            })
        })
        .collect();
    match c.phase {
        Phase::Running if views.is_empty() => {
            format!("{name}: running, owns {}", cfg.queue_labels(c.owned))
        }
        Phase::Running => format!(
            "{name}: rebalanced, members {}, owns {}",
            views.join(", "),
            cfg.queue_labels(c.owned)
        ),
        Phase::Idle => format!("{name}: idle"),
        phase => format!("{name}: {}", phase_word(phase)),
    }
}

/// One action, taken in state `before`, in RocketMQ's words. Without the
/// state (the explorer's action list) a multi-topic rebalance does not name
/// its topic.
pub fn describe_action(
    model: &RebalanceModel,
    before: Option<&SystemState>,
    action: &Action,
) -> String {
    let cfg = &*model.cfg;
    match action {
        Action::Deliver(env) => format!(
            "{} -> {}: {}",
            model.peer_name(env.src),
            model.peer_name(env.dst),
            describe_message(cfg, &env.msg)
        ),
        Action::Timeout(peer, timer) => {
            let topic = match (before, peer) {
                (Some(state), crate::protocol::Peer::Consumer(c)) if cfg.topic_names.len() > 1 => {
                    let due = state.consumers[usize::from(*c)].due;
                    format!(
                        " {}",
                        cfg.topic_names[due.trailing_zeros() as usize % cfg.topic_names.len()]
                    )
                }
                _ => String::new(),
            };
            format!(
                "{}: {}",
                model.peer_name(*peer),
                describe_timer(cfg, &topic, timer)
            )
        }
    }
}

/// A message in RocketMQ's words: the request code, or what a marker stands
/// for.
pub fn describe_message(cfg: &Config, msg: &Message) -> String {
    match msg {
        Message::Heartbeat => "HEART_BEAT".into(),
        Message::Unregister => "UNREGISTER_CLIENT".into(),
        Message::NotifyConsumerIdsChanged => "NOTIFY_CONSUMER_IDS_CHANGED".into(),
        Message::GetConsumerList { topic } => format!(
            "GET_CONSUMER_LIST_BY_GROUP ({})",
            cfg.topic_names[usize::from(*topic)]
        ),
        Message::ConsumerList { members, .. } => {
            format!("consumer list {}", cfg.member_labels(*members))
        }
        Message::RouteData { version } => format!(
            "route poll returns version {version}, {} {}",
            cfg.topic_names[0],
            cfg.queue_labels(cfg.route_queues(*version, 0))
        ),
        Message::SilenceExpired => "(silent for 120 s: scan expires it, nobody notified)".into(),
        Message::PeriodicTick => "(periodic rebalance tick sees the expiry)".into(),
    }
}

fn describe_timer(cfg: &Config, topic: &str, timer: &Timer) -> String {
    match timer {
        Timer::Join => "start, heartbeat to every broker".into(),
        Timer::Shutdown => "shutdown, unregister from every broker".into(),
        Timer::Crash => "crash".into(),
        Timer::Rebalance { broker } => format!(
            "rebalance{topic}, asks {}",
            cfg.broker_names[usize::from(*broker)]
        ),
        Timer::RouteChange => "route change (queue added)".into(),
        Timer::Tick => "periodic rebalance tick".into(),
        Timer::LoseNotification => "its next NOTIFY_CONSUMER_IDS_CHANGED will be lost".into(),
        Timer::FailQuery => {
            "its next GET_CONSUMER_LIST_BY_GROUP will fail (broker unreachable)".into()
        }
    }
}
