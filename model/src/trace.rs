//! Readable traces: each step of a path in RocketMQ's words.

use stateright::Path;

use crate::config::{members_of, shown_id, Config, Route, RouteStep};
use crate::guarantees::Group;
use crate::protocol::message::NO_OFFSET;
use crate::protocol::name_server::partitioned;
use crate::protocol::{
    BrokerState, ConsumerState, Fault, Message, NameServerState, Peer, Phase, Timer,
};
use crate::shell::{Action, RebalanceModel, SystemState};

/// Describes a path as numbered lines: one per step, an indented line for
/// each consumer whose owned queues or member view changed, and a summary
/// of the final state.
pub fn describe_path(model: &RebalanceModel, path: &Path<SystemState, Action>) -> Vec<String> {
    let steps = path.clone().into_vec();
    let mut lines = Vec::new();
    for (number, pair) in steps.windows(2).enumerate() {
        let (before, action) = &pair[0];
        let (after, _) = &pair[1];
        let Some(action) = action else { continue };
        let (what, changes) = describe_step(model, before, action, after);
        lines.push(format!("{}. {what}", number + 1));
        lines.extend(changes.into_iter().map(|l| format!("   {l}")));
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

/// One step in the trace's words: the action taken in `before`, and a line
/// for each consumer whose owned queues or member view it changed (as they
/// are in `after`).
pub fn describe_step(
    model: &RebalanceModel,
    before: &SystemState,
    action: &Action,
    after: &SystemState,
) -> (String, Vec<String>) {
    let cfg = &*model.cfg;
    let changes = before
        .consumers
        .iter()
        .zip(&after.consumers)
        .enumerate()
        .filter(|(_, (old, new))| old.owned != new.owned || old.views != new.views)
        .map(|(i, (_, new))| describe_consumer(cfg, i, new))
        .collect();
    (describe_action(model, Some(before), action), changes)
}

/// Whether the answer `[from, to)` to a pop of `queue`, from `src` to
/// `dst`, is lost on its way in `before`
/// ([`ConsumerState::loses_answer`](crate::protocol::ConsumerState::loses_answer)).
fn answer_lost(
    before: Option<&SystemState>,
    src: Peer,
    dst: Peer,
    [queue, from, to]: [u8; 3],
    generation: bool,
    epoch: u8,
) -> bool {
    let (Some(state), Peer::Broker(b), Peer::Consumer(c)) = (before, src, dst) else {
        return false;
    };
    let consumer = &state.consumers[usize::from(c)];
    consumer.loses_answer(
        consumer.asked(b, usize::from(queue), generation, epoch),
        from,
        to,
    )
}

/// The line that marks a lasso's cycle: the `len` steps after step `start`
/// repeat for ever, or, with none, the state after step `start` stays.
pub fn cycle_marker(start: usize, len: usize) -> String {
    if len == 0 {
        format!("-- from step {start} on, nothing fair changes the state: it stays like this for ever --")
    } else {
        format!(
            "-- steps {} to {} repeat for ever (a fair cycle that never stays converged) --",
            start + 1,
            start + len
        )
    }
}

/// One line per broker and consumer of a state.
pub fn describe_state(model: &RebalanceModel, state: &SystemState) -> Vec<String> {
    let cfg = &*model.cfg;
    let group = Group::of(model, state);
    let mut lines = describe_name_servers(cfg, group.name_server());
    lines.extend(
        group
            .brokers()
            .enumerate()
            .map(|(b, broker)| describe_broker(cfg, b, broker)),
    );
    lines.extend(
        group
            .consumers()
            .enumerate()
            .map(|(i, consumer)| describe_consumer(cfg, i, consumer)),
    );
    lines
}

/// The name servers: the route version they serve, and each one's dropped
/// brokers.
pub fn describe_name_servers(cfg: &Config, name_servers: &NameServerState) -> Vec<String> {
    let mut lines = vec![format!("namesrv: route version {}", name_servers.version)];
    for (n, name) in cfg.name_server_names.iter().enumerate() {
        if name_servers.dropped[n] != 0 {
            lines.push(format!(
                "{name}: has dropped {}",
                broker_list(cfg, name_servers.dropped[n])
            ));
        }
    }
    lines
}

/// A broker: its member table, by client id, and whether the proxy has
/// lost the FIFO group's config through it.
pub fn describe_broker(cfg: &Config, b: usize, broker: &BrokerState) -> String {
    let proxy = if broker.proxy_lost_group {
        " (the proxy has no config of the group: not FIFO to it)"
    } else {
        ""
    };
    format!(
        "{}: members {}{proxy}",
        cfg.broker_names[b],
        cfg.member_labels(broker.memory.members, broker.memory.twice)
    )
}

/// A consumer's name, with its client id when that differs.
pub fn consumer_name(cfg: &Config, i: usize) -> String {
    let spec = &cfg.consumers[i];
    let name = if spec.client_id == spec.name {
        spec.name.clone()
    } else {
        format!("{} (client id {})", spec.name, shown_id(&spec.client_id))
    };
    if cfg.mixed_clients() {
        format!("{name} [{}]", cfg.clients[i].label())
    } else {
        name
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

/// A consumer: its phase and, once it has rebalanced, the member lists it
/// used and the queues it owns.
pub fn describe_consumer(cfg: &Config, i: usize, c: &ConsumerState) -> String {
    let name = consumer_name(cfg, i);
    let views: Vec<String> = c
        .views
        .iter()
        .enumerate()
        .filter_map(|(t, v)| {
            v.map(|members| {
                let list = if cfg.mixed_clients() {
                    cfg.members_as_sorted_by(i, members)
                } else {
                    cfg.member_labels(members, 0)
                };
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
        phase => {
            let running = (0..cfg.queues.len())
                .filter(|&q| c.queues[q].running())
                .fold(0, |set, q| set | 1 << q);
            if running == 0 {
                format!("{name}: {}", phase_word(phase))
            } else {
                let batches = cfg.queue_labels(running);
                format!("{name}: {}, still consuming {batches}", phase_word(phase))
            }
        }
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
        Action::Deliver(env) => {
            let (src, dst) = (model.peer_name(env.src), model.peer_name(env.dst));
            match env.msg {
                // Markers of the environment are events, not messages.
                Message::SilenceExpired { .. } => {
                    format!("{src}'s connection to {dst} expires (silent 120 s: scan removes it, nobody notified)")
                }
                Message::ChannelClosed { .. } => {
                    format!(
                        "{src}'s connection to {dst} closes (process died: {dst} notices at once)"
                    )
                }
                Message::SecondChannelExpired { consumer, .. } => {
                    let consumer = model.peer_name(Peer::Consumer(consumer));
                    format!("{consumer}'s second channel to {dst} expires (silent: scan removes it, nobody notified)")
                }
                Message::ConnectionClosed { .. } => {
                    format!("{dst} sees {src} close its connection")
                }
                Message::LaterRebalance => {
                    format!(
                        "{dst}: periodic rebalance (sees a change made at {src} without notice)"
                    )
                }
                Message::Refused { .. } => {
                    format!("{dst} cannot connect to {src} (stopped): the call fails")
                }
                Message::BrokerPresence { alive: false } => {
                    format!("{src}'s channel to the name servers closes: they drop it from their routes")
                }
                Message::BrokerPresence { alive: true } => {
                    format!("{src} registers with the name servers again")
                }
                Message::LaterPoll { route } => format!(
                    "{dst}: a later route poll succeeds, {}",
                    describe_route(cfg, route)
                ),
                Message::PopResult {
                    queue,
                    from,
                    to,
                    generation,
                    epoch,
                    ..
                } if answer_lost(
                    before,
                    env.src,
                    env.dst,
                    [queue, from, to],
                    generation,
                    epoch,
                ) =>
                {
                    format!(
                        "{src} -> {dst}: {}: lost on the way, the receive times out",
                        describe_message(cfg, &env.msg)
                    )
                }
                _ => format!("{src} -> {dst}: {}", describe_message(cfg, &env.msg)),
            }
        }
        Action::Timeout(Peer::Broker(b), timer) => {
            format!(
                "{} {}",
                cfg.broker_names[usize::from(*b)],
                describe_timer(cfg, "", timer)
            )
        }
        Action::Timeout(Peer::Consumer(c), Timer::Pull { queue })
            if relocks(cfg, before, usize::from(*c), usize::from(*queue)) =>
        {
            format!(
                "{}: its lock of {} is not trusted: locks it again (lockOneMQ)",
                model.peer_name(Peer::Consumer(*c)),
                cfg.queues[usize::from(*queue)].label
            )
        }
        Action::Elapse { lagging: None } => format!(
            "a tick passes (every clock advances){}",
            lapses(cfg, before)
        ),
        Action::Elapse { lagging: Some(c) } => format!(
            "a tick passes; {}'s wall clock stands still (stepped back a tick){}",
            model.peer_name(Peer::Consumer(*c)),
            lapses(cfg, before)
        ),
        Action::Timeout(Peer::NameServer, Timer::Heal) => describe_timer(cfg, "", &Timer::Heal),
        Action::Fault(Peer::NameServer, fault) => describe_name_server_fault(cfg, before, *fault),
        Action::Fault(Peer::Broker(b), fault) => format!(
            "{} {}",
            cfg.broker_names[usize::from(*b)],
            describe_fault(cfg, *fault)
        ),
        Action::Fault(peer, fault) => {
            format!(
                "{}: {}",
                model.peer_name(*peer),
                describe_fault(cfg, *fault)
            )
        }
        Action::Timeout(peer, timer) => {
            let topic = match (before, peer) {
                (Some(state), Peer::Consumer(c)) if cfg.topic_names.len() > 1 => {
                    let due = state.consumers[usize::from(*c)].due;
                    format!(
                        " {}",
                        cfg.topic_names[usize::from(cfg.first_due(due)) % cfg.topic_names.len()]
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
        Message::Heartbeat { epoch, topics } => {
            if cfg.protocol.subscription_table {
                format!(
                    "HEART_BEAT{}, subscribes {}",
                    on_connection(*epoch),
                    topic_list(cfg, *topics)
                )
            } else {
                format!("HEART_BEAT{}", on_connection(*epoch))
            }
        }
        Message::Unregister { epoch } => format!("UNREGISTER_CLIENT{}", on_connection(*epoch)),
        Message::NotifyConsumerIdsChanged => "NOTIFY_CONSUMER_IDS_CHANGED".into(),
        Message::GetConsumerList { topic, epoch } => format!(
            "GET_CONSUMER_LIST_BY_GROUP ({}){}",
            cfg.topic_names[usize::from(*topic)],
            on_connection(*epoch)
        ),
        Message::ConsumerList { members, twice, .. } => {
            format!("consumer list {}", cfg.member_labels(*members, *twice))
        }
        Message::QueryAssignment { topic, epoch } => format!(
            "QUERY_ASSIGNMENT ({}){}",
            cfg.topic_names[usize::from(*topic)],
            on_connection(*epoch)
        ),
        Message::BrokerAllocation {
            topic,
            members,
            twice,
            route,
            ..
        } => format!(
            "assignment of {} from members {} and route {}",
            cfg.topic_names[usize::from(*topic)],
            cfg.member_labels(*members, *twice),
            describe_route(cfg, *route)
        ),
        Message::RouteData { route } => format!(
            "route poll returns {}, {} {}",
            describe_route(cfg, *route),
            cfg.topic_names[0],
            cfg.queue_labels(cfg.route_queues(*route, 0))
        ),
        Message::SilenceExpired { epoch, .. } => format!(
            "(silent for 120 s{}: scan expires it, nobody notified)",
            on_connection(*epoch)
        ),
        Message::ChannelClosed { epoch } => {
            format!("(process died: connection{} closes)", on_connection(*epoch))
        }
        Message::SecondChannel { epoch } => {
            format!("HEART_BEAT on a second channel{}", on_connection(*epoch))
        }
        Message::SecondChannelExpired { epoch, .. } => format!(
            "(second channel{} silent: scan expires it, nobody notified)",
            on_connection(*epoch)
        ),
        Message::ConnectionClosed { epoch } => {
            format!("(closes the channel{})", on_connection(*epoch))
        }
        Message::LaterRebalance => "(periodic rebalance sees the expiry)".into(),
        Message::Refused { epoch } => {
            format!("(connection{} refused: stopped)", on_connection(*epoch))
        }
        Message::BrokerPresence { alive: false } => "(its channel closes: stopped)".into(),
        Message::BrokerPresence { alive: true } => "REGISTER_BROKER".into(),
        Message::QueryOffset { queue, epoch } => format!(
            "QUERY_CONSUMER_OFFSET ({}){}",
            cfg.queues[usize::from(*queue)].label,
            on_connection(*epoch)
        ),
        Message::Offset {
            queue,
            stored,
            in_memory,
            ..
        } => {
            let label = &cfg.queues[usize::from(*queue)].label;
            if *stored == NO_OFFSET {
                let memory = if *in_memory {
                    "first message in memory"
                } else {
                    "first message not in memory"
                };
                format!("offset of {label}: none stored, {memory}")
            } else {
                format!("offset of {label}: {stored}")
            }
        }
        Message::UpdateOffset { queue, offset, .. } => format!(
            "UPDATE_CONSUMER_OFFSET {} = {offset}",
            cfg.queues[usize::from(*queue)].label
        ),
        Message::CommitOffset { queue, offset, .. } => format!(
            "commit {} = {offset} (synchronous)",
            cfg.queues[usize::from(*queue)].label
        ),
        Message::PullMessage {
            queue,
            offset,
            commit,
            epoch,
            ..
        } => {
            let label = &cfg.queues[usize::from(*queue)].label;
            let commits = if *commit == NO_OFFSET {
                String::new()
            } else {
                format!(", commits {commit}")
            };
            format!(
                "PULL_MESSAGE {label} from {offset}{commits}{}",
                on_connection(*epoch)
            )
        }
        Message::PullResult {
            queue, from, to, ..
        } => format!(
            "pulled {} [{from}, {to})",
            cfg.queues[usize::from(*queue)].label
        ),
        Message::PopMessage {
            queue,
            epoch,
            reenters,
            ..
        } => format!(
            "POP_MESSAGE {}{}{}",
            cfg.queues[usize::from(*queue)].label,
            on_connection(*epoch),
            reenters.map_or(String::new(), |h| format!(
                ", the attempt id of its lost pop (handle {h})"
            ))
        ),
        Message::PopResult {
            queue,
            from,
            to,
            attempt,
            ..
        } => {
            let label = &cfg.queues[usize::from(*queue)].label;
            if from == to {
                format!("popped nothing of {label}")
            } else {
                format!("popped {label} [{from}, {to}), handle {attempt}")
            }
        }
        Message::AckMessage {
            queue,
            from,
            to,
            attempt,
            epoch,
        } => format!(
            "ACK_MESSAGE {} [{from}, {to}), handle {attempt}{}",
            cfg.queues[usize::from(*queue)].label,
            on_connection(*epoch)
        ),
        Message::InvisibleTimeExpired {
            queue,
            from,
            to,
            attempt,
            ..
        } => format!(
            "(invisible time of {} [{from}, {to}), handle {attempt}, passes unacknowledged: revived)",
            cfg.queues[usize::from(*queue)].label
        ),
        Message::SendMessageBack {
            queue,
            from,
            to,
            epoch,
        } => format!(
            "CONSUMER_SEND_MSG_BACK {} [{from}, {to}){}",
            cfg.queues[usize::from(*queue)].label,
            on_connection(*epoch)
        ),
        Message::SentBack { queue, .. } => format!(
            "{} sent back to the retry topic",
            cfg.queues[usize::from(*queue)].label
        ),
        Message::CommitAck { queue } => {
            format!(
                "commit of {} acknowledged",
                cfg.queues[usize::from(*queue)].label
            )
        }
        Message::LaterPoll { route } => format!(
            "(a later route poll succeeds: {})",
            describe_route(cfg, *route)
        ),
        Message::LockBatch { queues, epoch } => format!(
            "LOCK_BATCH_MQ {}{}",
            cfg.queue_labels(u64::from(*queues)),
            on_connection(*epoch)
        ),
        Message::Locked { asked, granted, .. } => {
            let refused = asked & !granted;
            match (*granted, refused) {
                (_, 0) => format!("locked {}", cfg.queue_labels(u64::from(*granted))),
                (0, _) => format!(
                    "lock refused {} (held by another client)",
                    cfg.queue_labels(u64::from(refused))
                ),
                _ => format!(
                    "locked {}, refused {}",
                    cfg.queue_labels(u64::from(*granted)),
                    cfg.queue_labels(u64::from(refused))
                ),
            }
        }
        Message::UnlockBatch { queues, epoch } => format!(
            "UNLOCK_BATCH_MQ {}{}",
            cfg.queue_labels(u64::from(*queues)),
            on_connection(*epoch)
        ),
    }
}

/// Whether consumer `c`'s pull of `queue` in `before` is, orderly, a new
/// lock call rather than a batch: its lock is not trusted.
fn relocks(cfg: &Config, before: Option<&SystemState>, c: usize, queue: usize) -> bool {
    match (cfg.orderly(), before) {
        (Some(timing), Some(state)) => {
            !state.consumers[c].queues[queue].lock_trusted(timing.validity)
        }
        _ => false,
    }
}

/// The broker locks a tick in `before` lets lapse, in words: a lapse is
/// what a lease argument turns on, and no step of its own shows it.
fn lapses(cfg: &Config, before: Option<&SystemState>) -> String {
    let (Some(state), Some(timing)) = (before, cfg.orderly()) else {
        return String::new();
    };
    state
        .brokers
        .iter()
        .enumerate()
        .filter_map(|(b, broker)| {
            let lapsing = broker.memory.locks.lapsing(timing.lease);
            (lapsing != 0).then(|| {
                format!(
                    "; {}'s lock of {} lapses (not renewed for the lease)",
                    cfg.broker_names[b],
                    cfg.queue_labels(u64::from(lapsing))
                )
            })
        })
        .collect()
}

fn describe_timer(cfg: &Config, topic: &str, timer: &Timer) -> String {
    match timer {
        Timer::Rebalance { broker } => format!(
            "rebalance{topic}, asks {}",
            cfg.broker_names[usize::from(*broker)]
        ),
        Timer::Connect { broker } => format!(
            "connects to {}, rebalance",
            cfg.broker_names[usize::from(*broker)]
        ),
        Timer::ChannelActive { broker } => format!(
            "channel to {} active: heartbeat, rebalance",
            cfg.broker_names[usize::from(*broker)]
        ),
        Timer::Heal => {
            let (n, broker) = partitioned(cfg);
            format!(
                "{} hears from {} again",
                cfg.name_server_names[n], cfg.broker_names[broker]
            )
        }
        Timer::Start => "starts again on the same address (empty tables)".into(),
        Timer::PeriodicRebalance => "periodic rebalance".into(),
        Timer::LockAll => "renews its locks (lockAll)".into(),
        Timer::Heartbeat => "periodic heartbeat to every broker".into(),
        Timer::Pull { queue } => format!(
            "{} {}",
            if cfg.pops() { "pops" } else { "pulls" },
            cfg.queues[usize::from(*queue)].label
        ),
        Timer::Done { queue } => format!(
            "finishes consuming its batch of {}",
            cfg.queues[usize::from(*queue)].label
        ),
        Timer::Persist => "persists its offsets (every 5 s)".into(),
        Timer::SyncOffsets => "its slave copies its offsets (every 10 s)".into(),
        Timer::ReloadGroupConfig => {
            "the proxy loads the FIFO group's config through it again (every 20 s)".into()
        }
    }
}

/// A fault in the trace's words: those of its definition
/// ([`FaultSpec::words`](crate::config::FaultSpec)), with what only the
/// configuration knows.
pub fn describe_fault(cfg: &Config, fault: Fault) -> String {
    let words = describe_fault_alone(cfg, fault);
    let stops = matches!(fault, Fault::Restart | Fault::DiskLoss | Fault::BrokerCrash);
    if stops && crate::protocol::proxy_may_lose_group(cfg) {
        format!("{words}; the proxy's reload of the FIFO group's config finds no broker")
    } else {
        words
    }
}

/// A fault's words, but for what the proxy makes of it.
fn describe_fault_alone(cfg: &Config, fault: Fault) -> String {
    match fault {
        Fault::Restart | Fault::DiskLoss | Fault::BrokerCrash if cfg.protocol.restart_stops => {
            let disk = match fault {
                Fault::DiskLoss => " on a replaced disk, its offsets lost",
                Fault::BrokerCrash => " after a crash, its queues' order info lost",
                _ => "",
            };
            let tables = if cfg.orderly().is_some() {
                "member and lock tables"
            } else {
                "member table"
            };
            format!("stops for a restart{disk} ({tables} lost, connections closed)")
        }
        Fault::Restart if cfg.orderly().is_some() => {
            "restarts (member and lock tables lost)".into()
        }
        Fault::Resubscribe => format!(
            "changes its subscription (subscribes to or unsubscribes from {})",
            cfg.topic_names[cfg.sizes.topics - 1]
        ),
        _ => fault.spec().words.into(),
    }
}

/// A connection other than the first, named: `on connection 2`.
fn on_connection(epoch: u8) -> String {
    if epoch == 0 {
        String::new()
    } else {
        format!(" on connection {}", epoch + 1)
    }
}

/// Topic names of a bit set: `TopicA,TopicB`.
pub fn topic_list(cfg: &Config, topics: u8) -> String {
    members_of(u64::from(topics))
        .map(|t| cfg.topic_names[t].as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Broker names of a bit set: `broker-a, broker-c`.
fn broker_list(cfg: &Config, brokers: u8) -> String {
    members_of(u64::from(brokers))
        .map(|b| cfg.broker_names[b].as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cached or served route: `version 1`, `version 0 without broker-b`.
pub fn describe_route(cfg: &Config, route: Route) -> String {
    if route.dropped == 0 {
        format!("version {}", route.version)
    } else {
        format!(
            "version {} without {}",
            route.version,
            broker_list(cfg, route.dropped)
        )
    }
}

/// The name servers' faults: an operator's route change (named by the
/// step it takes from `before`), a partition.
fn describe_name_server_fault(cfg: &Config, before: Option<&SystemState>, fault: Fault) -> String {
    let (n, broker) = partitioned(cfg);
    let (server, broker) = (&cfg.name_server_names[n], &cfg.broker_names[broker]);
    match fault {
        Fault::RouteChange => {
            let step = before.and_then(|s| cfg.script.get(usize::from(s.name_server.version)));
            match step {
                Some(RouteStep::AddQueue(b)) => {
                    format!(
                        "namesrv: route change (queue added on {})",
                        cfg.broker_names[*b]
                    )
                }
                Some(RouteStep::RemoveQueue(b)) => {
                    format!(
                        "namesrv: route change (queue removed on {})",
                        cfg.broker_names[*b]
                    )
                }
                Some(RouteStep::AddBroker(b)) => {
                    format!("namesrv: {} joins the route", cfg.broker_names[*b])
                }
                Some(RouteStep::RemoveBroker(b)) => {
                    format!("namesrv: {} leaves the route", cfg.broker_names[*b])
                }
                Some(RouteStep::CreateRetryTopic) => format!(
                    "namesrv: the retry topic {} appears in the route",
                    cfg.topic_names[cfg.topic_names.len() - 1]
                ),
                None => "namesrv: route change".into(),
            }
        }
        Fault::Partition => format!("{server} drops {broker} (no registration for 120 s)"),
        other => format!("namesrv: {}", describe_fault(cfg, other)),
    }
}
