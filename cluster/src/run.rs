//! The orchestrator: starts the cluster JVM and one JVM per consumer on
//! loopback, runs the script's steps (commands over each process's
//! standard input, signals, waits on observed events), and returns the
//! merged trace with its fold.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Map, Value};

use crate::harness::{self, Harness, JVM_FLAGS};
use crate::observe::Observer;
use crate::script::{Awaited, Condition, Script, Step};
use crate::trace::{ConsumerState, Env, Event, Kind, Pattern, TraceError, Version, SCHEMA};
use crate::ClusterError;

/// How a run is made.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The RocketMQ version (one of [`harness::VERSIONS`]).
    pub rocketmq: String,
    /// A broker restart's downtime when the script gives none.
    pub restart_downtime_ms: u64,
    /// The directory for the run's stores, logs and trace.
    pub run_dir: PathBuf,
}

/// What a run gives.
#[derive(Debug)]
pub struct RunResult {
    /// The merged trace, ordered by stamp.
    pub events: Vec<Event>,
    /// The fold of the merged trace.
    pub observer: Observer,
    /// Whether it ended settled.
    pub settled: bool,
    /// The wait that timed out and ended the run, if one did.
    pub timed_out: Option<String>,
    /// Wall time, seconds.
    pub seconds: f64,
    /// The version the cluster reported.
    pub rocketmq_version: String,
}

/// CLOCK_MONOTONIC in nanoseconds, the clock Java's `System.nanoTime()`
/// reads on Linux: the orchestrator's events merge with the JVMs'.
pub fn now() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

enum Incoming {
    Event(Event),
    /// A process wrote an event this program cannot read.
    Unreadable(String, TraceError),
    Closed(String),
}

struct Process {
    name: String,
    child: Child,
    stdin: ChildStdin,
    log: PathBuf,
}

struct Orchestrator {
    processes: BTreeMap<String, Process>,
    rx: Receiver<Incoming>,
    tx: Sender<Incoming>,
    arrived: Vec<Event>,
    observer: Observer,
    seq: u64,
    next_id: u64,
    paused: Vec<String>,
    killed: Vec<String>,
}

/// `n` ports free now, below the kernel's ephemeral range: a port taken
/// from that range is free when picked but may be any outgoing
/// connection's by the time the JVM binds it (a run failed so, "Address
/// already in use"), while the kernel never gives a port below the range
/// to a connection. Each port is the top of a block of its own, whose
/// port two below is free too: a broker also listens there (its fast
/// channel, `listenPort - 2`). Blocks are held until all are found, so
/// they are distinct; where the search starts depends on the process, so
/// that two runs at once rarely try the same ones.
fn free_ports(n: usize) -> Result<Vec<u16>, ClusterError> {
    const BLOCK: u16 = 10;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let low = 10_000u16.min(ephemeral_low / 2);
    let blocks = (ephemeral_low.saturating_sub(low) / BLOCK).max(1);
    let start = (std::process::id() % u32::from(blocks)) as u16;
    let mut held = Vec::with_capacity(2 * n);
    let mut ports = Vec::with_capacity(n);
    for block in (0..blocks).map(|b| (start + b) % blocks) {
        if ports.len() == n {
            break;
        }
        let port = low + block * BLOCK + BLOCK - 1;
        if let (Ok(fast), Ok(main)) = (
            TcpListener::bind(("0.0.0.0", port - 2)),
            TcpListener::bind(("0.0.0.0", port)),
        ) {
            held.extend([fast, main]);
            ports.push(port);
        }
    }
    if ports.len() < n {
        return Err(ClusterError::BadInput(format!(
            "fewer than {n} free ports between {low} and {ephemeral_low}"
        )));
    }
    Ok(ports)
}

/// The consumer group of a script's run: `rebalance-` and its scenario.
fn group_of(script: &Script) -> String {
    format!("rebalance-{}", script.scenario)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> ClusterError {
    ClusterError::NotStarted {
        reason: format!("{what}: {e}"),
        log: path.to_owned(),
    }
}

fn system_properties(props: &BTreeMap<String, Value>) -> Vec<String> {
    props
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("-D{k}={s}"),
            other => format!("-D{k}={other}"),
        })
        .collect()
}

/// Builds the harness for the run (see [`harness::build`]), its log in the
/// run directory.
pub fn prepare(opts: &RunOptions) -> Result<Harness, ClusterError> {
    std::fs::create_dir_all(&opts.run_dir).map_err(|e| {
        ClusterError::BadInput(format!("cannot create {}: {e}", opts.run_dir.display()))
    })?;
    harness::build(&opts.rocketmq, &opts.run_dir.join("build.log"))
}

/// The main class of a consumer that is a gRPC client of the proxy.
const GRPC_CONSUMER: &str = "rebalance.harness.GrpcConsumerAgent";

/// Runs `script` on a real cluster of the `harness` built by [`prepare`].
pub fn run(
    script: &Script,
    harness: &Harness,
    opts: &RunOptions,
) -> Result<RunResult, ClusterError> {
    let started = Instant::now();
    let brokers = script.broker_names();
    let name_servers = script.name_server_names();
    // A reused run directory starts from empty stores, as a new one does.
    let names = ["cluster".to_owned()]
        .into_iter()
        .chain(brokers.iter().cloned());
    let slaves = brokers[..script.failovers]
        .iter()
        .map(|b| format!("{b}-slave"));
    let names = names
        .chain(slaves)
        .chain(name_servers.iter().cloned())
        .chain(script.grpc().then(|| "proxy".to_owned()));
    for name in names.chain(script.consumers.iter().map(|c| c.name.clone())) {
        let dir = opts.run_dir.join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| io_error("cannot clear the run directory", &dir, e))?;
        }
    }
    // The proxy of gRPC clients: its gRPC port and the remoting one its id
    // names.
    let proxy_ports = if script.grpc() { 2 } else { 0 };
    let ports = free_ports(
        name_servers.len()
            + 2 * (brokers.len() + script.failovers)
            + script.relays.len()
            + proxy_ports,
    )?;
    let mut ports = ports.into_iter();
    let ns_ports: BTreeMap<&String, u16> = name_servers
        .iter()
        .map(|n| (n, ports.next().unwrap_or_default()))
        .collect();
    let relay_ports: BTreeMap<&str, u16> = script
        .relays
        .iter()
        .map(|r| (r.name.as_str(), ports.next().unwrap_or_default()))
        .collect();
    let mut peers = Map::new();
    for (n, p) in &ns_ports {
        peers.insert(format!("127.0.0.1:{p}"), json!(n));
    }
    let late = brokers.len() - script.late_brokers;
    let broker_specs: Vec<Value> = brokers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let port = ports.next().unwrap_or_default();
            let ha_port = ports.next().unwrap_or_default();
            peers.insert(format!("127.0.0.1:{port}"), json!(b));
            let addresses: Vec<String> = name_servers
                .iter()
                .map(|n| {
                    let relayed = script
                        .relays
                        .iter()
                        .find(|r| &r.broker == b && &r.name_server == n);
                    let port = relayed.map_or(ns_ports[n], |r| relay_ports[r.name.as_str()]);
                    format!("127.0.0.1:{port}")
                })
                .collect();
            let mut spec = json!({"name": b, "port": port, "ha_port": ha_port,
                                  "name_servers": name_servers,
                                  "name_server_addresses": addresses, "late": i >= late});
            if i < script.failovers {
                let port = ports.next().unwrap_or_default();
                let ha_port = ports.next().unwrap_or_default();
                // Its slave is the broker to the consumers once it serves.
                peers.insert(format!("127.0.0.1:{port}"), json!(b));
                spec["slave"] = json!({"port": port, "ha_port": ha_port});
            }
            spec
        })
        .collect();
    let proxy = script.grpc().then(|| {
        json!({"grpc_port": ports.next().unwrap_or_default(),
               "remoting_port": ports.next().unwrap_or_default(),
               "config": script.timers.proxy_config})
    });
    let group = group_of(script);
    let mut cluster_spec = json!({
        "run_dir": opts.run_dir,
        "group": group, "consumption": script.consumption, "fifo": script.fifo(),
        "grpc": script.grpc(),
        "name_servers": ns_ports.iter().map(|(n, p)| json!({"name": n, "port": p})).collect::<Vec<_>>(),
        "relays": script.relays.iter().map(|r| json!({"name": r.name, "port": relay_ports[r.name.as_str()],
                                                        "target_port": ns_ports[&r.name_server]})).collect::<Vec<_>>(),
        "brokers": broker_specs,
        "topics": script.topics().iter()
            .map(|t| json!({"name": t, "queues": script.queues, "brokers": brokers}))
            .collect::<Vec<_>>(),
        "broker_config": script.timers.broker_config,
        "store_config": script.timers.store_config,
        "name_server_config": script.timers.name_server_config,
    });
    if let Some(proxy) = &proxy {
        cluster_spec["proxy"] = proxy.clone();
    }
    let (tx, rx) = channel();
    let mut o = Orchestrator {
        processes: BTreeMap::new(),
        rx,
        tx,
        arrived: Vec::new(),
        observer: Observer::for_script(script),
        seq: 0,
        next_id: 0,
        paused: Vec::new(),
        killed: Vec::new(),
    };
    o.emit(Kind::Run {
        schema: Version(SCHEMA),
        scenario: script.scenario.clone(),
        orderly: script.orderly,
        rocketmq: opts.rocketmq.clone(),
        model: script.model.clone(),
        conform: Some(script.conform_flags().to_vec()),
    });
    let result = (|| {
        let cluster_file = opts.run_dir.join("cluster.json");
        write_json(&cluster_file, &cluster_spec)?;
        let mut args = system_properties(&script.timers.broker_properties);
        args.extend(["-Xmx768m".into(), "-XX:MaxDirectMemorySize=512m".into()]);
        o.spawn(
            "cluster",
            harness,
            &opts.run_dir,
            args,
            "rebalance.harness.ClusterMain",
            &cluster_file,
        )?;
        o.wait_ready("cluster", Duration::from_secs(240))?;
        for (i, c) in script.consumers.iter().enumerate() {
            let ns = &name_servers[i % name_servers.len()];
            let mut spec = json!({
                "name": c.name, "group": group, "client_ip": "127.0.0.1",
                "instance_name": c.instance.as_deref().unwrap_or(&c.name),
                "namesrv": format!("127.0.0.1:{}", ns_ports[ns]),
                "topics": c.topics.clone().unwrap_or_else(|| vec![Script::TOPIC.to_owned()]),
                "orderly": script.orderly, "strategy": script.strategy,
                "consumption": script.consumption,
                "consume_from": script.consume_from, "consume_ms": c.consume_ms,
                "listener": c.listener,
                "broker_pick": script.broker_pick, "peers": peers,
                "client_config": script.timers.client_config,
            });
            // A gRPC client reaches the cluster through the proxy.
            let main = match &proxy {
                Some(proxy) => {
                    spec["endpoint"] = json!(format!("127.0.0.1:{}", proxy["grpc_port"]));
                    GRPC_CONSUMER
                }
                None => "rebalance.harness.ConsumerAgent",
            };
            let file = opts.run_dir.join(format!("{}.json", c.name));
            write_json(&file, &spec)?;
            let mut args = system_properties(&script.timers.client_properties);
            args.push("-Xmx160m".into());
            o.spawn(&c.name, harness, &opts.run_dir, args, main, &file)?;
        }
        for c in &script.consumers {
            o.wait_ready(&c.name, Duration::from_secs(240))?;
        }
        o.steps(script, opts)
    })();
    let outcome = result.map(|timed_out| {
        let settled = timed_out.is_none() && o.observer.settled(2);
        let commands = Some(o.next_id);
        o.emit(Kind::End {
            settled,
            commands,
            last_seq: None,
        });
        let end = o.arrived.last().map_or(0, |e| e.t);
        o.drain();
        (timed_out, end)
    });
    // What the processes do after the run's end is no part of it (its
    // trace stops at the end): a run that got there ends them at once; one
    // that failed lets them exit, their logs complete for its report.
    o.shutdown(outcome.is_err());
    let (timed_out, end) = outcome?;
    let mut events: Vec<Event> = o.arrived.iter().filter(|e| e.t <= end).cloned().collect();
    events.sort_by(|a, b| (a.t, &a.p, a.seq).cmp(&(b.t, &b.p, b.seq)));
    note_last_seqs(&mut events);
    Ok(RunResult::folded(
        script,
        events,
        timed_out,
        started.elapsed().as_secs_f64(),
    ))
}

/// Writes into the trace's `end` each process's last `seq` the trace kept
/// (a process numbers its events in the order of their stamps, so the
/// events up to the end are its first ones): a dropped last event of any
/// process then contradicts it, as a dropped one before the last
/// contradicts the next one's number.
fn note_last_seqs(events: &mut [Event]) {
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    for e in events.iter() {
        let seq = last.entry(e.p.clone()).or_default();
        *seq = (*seq).max(e.seq);
    }
    for e in events.iter_mut() {
        if let Kind::End { last_seq, .. } = &mut e.kind {
            *last_seq = Some(last.clone());
        }
    }
}

impl RunResult {
    /// The result of a run of `script` whose merged trace is `events`: the
    /// observer's fold of them, and whether it ended settled (no wait timed
    /// out, and the group at rest).
    pub fn folded(
        script: &Script,
        events: Vec<Event>,
        timed_out: Option<String>,
        seconds: f64,
    ) -> RunResult {
        let mut observer = Observer::for_script(script);
        for e in &events {
            observer.apply(e);
        }
        let settled = timed_out.is_none() && observer.settled(2);
        let rocketmq_version = events
            .iter()
            .find_map(|e| match &e.kind {
                Kind::Topology {
                    rocketmq_version, ..
                } => Some(rocketmq_version.as_str()),
                _ => None,
            })
            .unwrap_or("?")
            .to_owned();
        RunResult {
            events,
            observer,
            settled,
            timed_out,
            seconds,
            rocketmq_version,
        }
    }

    /// The result of a recorded run of `script` (its trace's events, as
    /// `trace::parse` reads them): the wait that timed out is the trace's
    /// `await.timeout`, the run's length the trace's span.
    pub fn recorded(script: &Script, events: Vec<Event>) -> RunResult {
        let timed_out = events.iter().find_map(|e| match &e.kind {
            Kind::AwaitTimeout { awaited } => Some(awaited.clone()),
            _ => None,
        });
        let span = match (events.first(), events.last()) {
            (Some(first), Some(last)) => last.t.saturating_sub(first.t) as f64 / 1e9,
            _ => 0.0,
        };
        RunResult::folded(script, events, timed_out, span)
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), ClusterError> {
    std::fs::write(path, value.to_string())
        .map_err(|e| io_error("cannot write the run's files", path, e))
}

impl Orchestrator {
    fn emit(&mut self, kind: Kind) {
        self.seq += 1;
        let event = Event {
            t: now(),
            p: "orchestrator".into(),
            seq: self.seq,
            thr: String::new(),
            kind,
        };
        self.observer.apply(&event);
        self.arrived.push(event);
    }

    fn emit_env(&mut self, action: Env) {
        self.emit(Kind::Env { action });
    }

    fn spawn(
        &mut self,
        name: &str,
        harness: &Harness,
        run_dir: &Path,
        mut args: Vec<String>,
        main: &str,
        spec: &Path,
    ) -> Result<(), ClusterError> {
        let home = run_dir.join(name);
        std::fs::create_dir_all(&home)
            .map_err(|e| io_error("cannot create a process's directory", &home, e))?;
        let log = run_dir.join(format!("{name}.log"));
        let stderr =
            std::fs::File::create(&log).map_err(|e| io_error("cannot create a log", &log, e))?;
        args.extend(JVM_FLAGS.iter().map(|s| s.to_string()));
        args.push(format!("-Duser.home={}", home.display()));
        args.push(format!(
            "-Drocketmq.client.logRoot={}",
            home.join("logs").display()
        ));
        let classpath = if main == GRPC_CONSUMER {
            &harness.grpc_classpath
        } else {
            &harness.classpath
        };
        let mut child = Command::new("java")
            .args(&args)
            .arg("-cp")
            .arg(classpath)
            .arg(main)
            .arg(spec)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| io_error("cannot start java", &log, e))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let tx = self.tx.clone();
        let process = name.to_owned();
        std::thread::spawn(move || {
            for (i, line) in BufReader::new(stdout).lines().enumerate() {
                let Ok(line) = line else { break };
                // A line that is no JSON object with a kind is RocketMQ's,
                // not the trace's.
                let value = match serde_json::from_str::<Value>(&line) {
                    Ok(value) if value.get("ev").is_some() => value,
                    _ => continue,
                };
                let incoming = match Event::from_json(&value) {
                    Ok(event) => Incoming::Event(event),
                    Err(e) => {
                        Incoming::Unreadable(process.clone(), TraceError { line: i + 1, ..e })
                    }
                };
                if tx.send(incoming).is_err() {
                    return;
                }
            }
            let _ = tx.send(Incoming::Closed(process));
        });
        self.processes.insert(
            name.to_owned(),
            Process {
                name: name.to_owned(),
                child,
                stdin,
                log,
            },
        );
        Ok(())
    }

    fn log_of(&self, name: &str) -> PathBuf {
        self.processes
            .get(name)
            .map(|p| p.log.clone())
            .unwrap_or_default()
    }

    /// Receives one message, folding an event; `None` on timeout.
    fn receive(&mut self, until: Instant) -> Result<Option<usize>, ClusterError> {
        let left = until.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(Incoming::Event(e)) => {
                if let Kind::Failed { reason } = &e.kind {
                    let reason = reason.clone();
                    let log = self.log_of(&e.p);
                    return Err(if reason.contains("IllegalArgumentException") {
                        ClusterError::BadInput(format!("{}: {reason}", e.p))
                    } else {
                        ClusterError::NotStarted {
                            reason: format!("{} failed: {reason}", e.p),
                            log,
                        }
                    });
                }
                self.observer.apply(&e);
                self.arrived.push(e);
                Ok(Some(self.arrived.len() - 1))
            }
            Ok(Incoming::Unreadable(p, e)) => Err(ClusterError::NotStarted {
                reason: format!("the {p} process wrote an event of another schema: {e}"),
                log: self.log_of(&p),
            }),
            // A killed consumer's output ends: expected, not a failure.
            Ok(Incoming::Closed(p)) if self.killed.contains(&p) => self.receive(until),
            Ok(Incoming::Closed(p)) => Err(ClusterError::NotStarted {
                reason: format!("the {p} process ended unexpectedly"),
                log: self.log_of(&p),
            }),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(ClusterError::NotStarted {
                reason: "every process ended".into(),
                log: PathBuf::new(),
            }),
        }
    }

    fn wait_ready(&mut self, name: &str, timeout: Duration) -> Result<(), ClusterError> {
        let until = Instant::now() + timeout;
        let ready = |e: &Event| {
            e.p == name
                && matches!(
                    e.kind,
                    Kind::Ready {}
                        | Kind::ConsumerLife {
                            state: ConsumerState::Ready,
                            ..
                        }
                )
        };
        if self.arrived.iter().any(ready) {
            return Ok(());
        }
        loop {
            match self.receive(until)? {
                Some(i) if ready(&self.arrived[i]) => return Ok(()),
                Some(_) => {}
                None => {
                    return Err(ClusterError::NotStarted {
                        reason: format!("{name} was not ready after {} s", timeout.as_secs()),
                        log: self.log_of(name),
                    })
                }
            }
        }
    }

    /// Sends a command and waits for its acknowledgement.
    fn command(&mut self, process: &str, cmd: &str, mut args: Value) -> Result<(), ClusterError> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        args["cmd"] = json!(cmd);
        args["id"] = json!(id);
        let log = self.log_of(process);
        let p = self
            .processes
            .get_mut(process)
            .ok_or_else(|| ClusterError::BadInput(format!("no process {process}")))?;
        writeln!(p.stdin, "{args}")
            .and_then(|_| p.stdin.flush())
            .map_err(|e| io_error(&format!("cannot command {}", p.name), &log, e))?;
        let until = Instant::now() + Duration::from_secs(300);
        loop {
            match self.receive(until)? {
                Some(i) => {
                    let e = &self.arrived[i];
                    if e.p != process {
                        continue;
                    }
                    match &e.kind {
                        Kind::Ack { id: acked, .. } if *acked == id => return Ok(()),
                        Kind::Nack {
                            id: Some(refused),
                            reason,
                            ..
                        } if *refused == id => {
                            return Err(ClusterError::NotStarted {
                                reason: format!("{process} refused {cmd}: {reason}"),
                                log,
                            })
                        }
                        _ => {}
                    }
                }
                None => {
                    return Err(ClusterError::NotStarted {
                        reason: format!("{process} did not answer {cmd}"),
                        log,
                    })
                }
            }
        }
    }

    fn signal(&mut self, consumer: &str, signal: Signal) -> Result<(), ClusterError> {
        let p = self
            .processes
            .get(consumer)
            .ok_or_else(|| ClusterError::BadInput(format!("no consumer {consumer}")))?;
        let pid = Pid::from_raw(p.child.id() as i32);
        kill(pid, signal).map_err(|e| ClusterError::NotStarted {
            reason: format!("cannot signal {consumer}: {e}"),
            log: p.log.clone(),
        })
    }

    /// Runs the steps; returns the wait that timed out, if one did.
    fn steps(
        &mut self,
        script: &Script,
        opts: &RunOptions,
    ) -> Result<Option<String>, ClusterError> {
        let mut mark = self.arrived.len();
        for step in &script.steps {
            if !matches!(step, Step::Await { .. } | Step::Watch { .. }) {
                mark = self.arrived.len();
            }
            match step {
                Step::Start(c) => {
                    self.emit_env(Env::Start {
                        consumer: c.clone(),
                    });
                    self.command(c, "start", json!({}))?
                }
                Step::Shutdown(c) => {
                    self.emit_env(Env::Shutdown {
                        consumer: c.clone(),
                    });
                    self.command(c, "shutdown", json!({}))?
                }
                Step::Kill(c) => {
                    self.killed.push(c.clone());
                    self.signal(c, Signal::SIGKILL)?;
                    self.emit_env(Env::Kill {
                        consumer: c.clone(),
                    });
                }
                Step::Stop(c) => {
                    self.signal(c, Signal::SIGSTOP)?;
                    self.paused.push(c.clone());
                    self.emit_env(Env::Stop {
                        consumer: c.clone(),
                    });
                }
                Step::Cont(c) => {
                    self.emit_env(Env::Cont {
                        consumer: c.clone(),
                    });
                    self.signal(c, Signal::SIGCONT)?;
                    self.paused.retain(|p| p != c);
                }
                Step::RestartBroker {
                    broker,
                    downtime_ms,
                } => {
                    let downtime = downtime_ms.unwrap_or(opts.restart_downtime_ms);
                    self.emit_env(Env::RestartBroker {
                        broker: broker.clone(),
                        downtime_ms: downtime,
                    });
                    self.command(
                        "cluster",
                        "restart_broker",
                        json!({"broker": broker, "downtime_ms": downtime}),
                    )?
                }
                Step::StartBroker(b)
                | Step::StopBroker(b)
                | Step::FailOver(b)
                | Step::SyncSlave(b)
                | Step::LoseDisk(b)
                | Step::LoseOrderInfo(b) => {
                    let broker = b.clone();
                    let env = match step {
                        Step::StartBroker(_) => Env::StartBroker { broker },
                        Step::StopBroker(_) => Env::StopBroker { broker },
                        Step::FailOver(_) => Env::FailOver { broker },
                        Step::LoseDisk(_) => Env::LoseDisk { broker },
                        Step::LoseOrderInfo(_) => Env::LoseOrderInfo { broker },
                        _ => Env::SyncSlave { broker },
                    };
                    // The cluster's command is the action's word.
                    let cmd = env.word();
                    self.emit_env(env);
                    self.command("cluster", cmd, json!({ "broker": b }))?
                }
                Step::ProxyForgetsGroup { timeout_s } => {
                    self.emit_env(Env::ProxyForgetsGroup {
                        group: group_of(script),
                    });
                    self.command(
                        "cluster",
                        "proxy_forgets_group",
                        json!({ "timeout_ms": timeout_s * 1000 }),
                    )?
                }
                Step::Evict(b) => {
                    self.emit_env(Env::Evict { broker: b.clone() });
                    self.command(
                        "cluster",
                        "evict",
                        json!({"broker": b, "topic": Script::TOPIC}),
                    )?
                }
                Step::Route { broker, queues } => {
                    self.emit_env(Env::Route {
                        broker: broker.clone(),
                        queues: *queues as u64,
                    });
                    self.command(
                        "cluster",
                        "route",
                        json!({"broker": broker, "topic": Script::TOPIC, "queues": queues}),
                    )?
                }
                Step::Cut(r) | Step::Heal(r) => {
                    let relay = r.clone();
                    let env = if matches!(step, Step::Cut(_)) {
                        Env::Cut { relay }
                    } else {
                        Env::Heal { relay }
                    };
                    let action = env.word();
                    self.emit_env(env);
                    self.command("cluster", action, json!({"relay": r}))?
                }
                Step::Produce(n) => self.command(
                    "cluster",
                    "produce",
                    json!({"topic": Script::TOPIC, "count": n}),
                )?,
                Step::Stream(rate) => self.command(
                    "cluster",
                    "stream",
                    json!({"topic": Script::TOPIC, "rate": rate}),
                )?,
                Step::Subscribe { consumer, topic } | Step::Unsubscribe { consumer, topic } => {
                    let (consumer, topic) = (consumer.clone(), topic.clone());
                    let env = if matches!(step, Step::Subscribe { .. }) {
                        Env::Subscribe {
                            consumer: consumer.clone(),
                            topic: topic.clone(),
                        }
                    } else {
                        Env::Unsubscribe {
                            consumer: consumer.clone(),
                            topic: topic.clone(),
                        }
                    };
                    let cmd = env.word();
                    self.emit_env(env);
                    self.command(&consumer, cmd, json!({ "topic": topic }))?
                }
                Step::Rule {
                    consumer,
                    id,
                    at,
                    code,
                    client,
                    broker,
                    queue,
                    action,
                    count,
                } => {
                    let rule = json!({"id": id, "at": at, "code": code, "client": client, "broker": broker,
                                      "queue": queue, "action": action, "count": count});
                    let rule = Value::Object(
                        rule.as_object()
                            .cloned()
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|(_, v)| !v.is_null())
                            .collect(),
                    );
                    self.command(
                        consumer.as_deref().unwrap_or("cluster"),
                        "rule",
                        json!({"rule": rule}),
                    )?
                }
                Step::Release { consumer, id } => self.command(
                    consumer.as_deref().unwrap_or("cluster"),
                    "release",
                    json!({"rule": id}),
                )?,
                Step::Watch { what, s } => {
                    let watched = Awaited::Event(what.clone());
                    self.wait(&watched, mark, Duration::from_secs(*s))?;
                }
                Step::Await { what, timeout_s } => {
                    if !self.wait(what, mark, Duration::from_secs(*timeout_s))? {
                        let what = match what {
                            Awaited::Named(Condition::Settled) => "settled".to_owned(),
                            Awaited::Named(Condition::Delivered) => "delivered".to_owned(),
                            Awaited::Named(Condition::Idle) => "idle".to_owned(),
                            Awaited::Lapsed(l) => format!("{{\"lapsed\":\"{}\"}}", l.lapsed),
                            Awaited::Event(p) => Value::Object(p.clone()).to_string(),
                        };
                        self.emit(Kind::AwaitTimeout {
                            awaited: what.clone(),
                        });
                        return Ok(Some(what));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Waits up to `limit` for `what`, an event of it looked for among
    /// those that arrived from `mark` on; whether it came.
    fn wait(&mut self, what: &Awaited, mark: usize, limit: Duration) -> Result<bool, ClusterError> {
        let until = Instant::now() + limit;
        let pattern = match what {
            Awaited::Event(p) => Some(Pattern::parse(p).map_err(ClusterError::BadInput)?),
            _ => None,
        };
        // Each event is matched against a pattern once, as it arrives.
        let mut unseen = mark;
        loop {
            let met = match (&pattern, what) {
                (Some(pattern), _) => {
                    let found = self.arrived[unseen..].iter().any(|e| e.matches(pattern));
                    unseen = self.arrived.len();
                    found
                }
                (None, Awaited::Named(Condition::Settled)) => self.observer.settled(2),
                (None, Awaited::Named(Condition::Delivered)) => self.observer.all_delivered(),
                (None, Awaited::Named(Condition::Idle)) => self.observer.idle(),
                (None, Awaited::Lapsed(l)) => self.observer.trust_lapsed(&l.lapsed),
                (None, Awaited::Event(_)) => false,
            };
            if met {
                return Ok(true);
            }
            if self.receive(until)?.is_none() {
                return Ok(false);
            }
        }
    }

    /// Receives every event the processes stamped before now. An event is
    /// stamped and numbered on its thread and written after, so one stamped
    /// before the run's end may still be on its way when the end is: a
    /// trace cut there lacked a consumer's request whose arrival at the
    /// broker it had (`--random 7`). Each process still running is asked to
    /// exit (resumed first if paused) and acknowledges it; once every
    /// event it numbered before that acknowledgement has arrived, nothing
    /// it stamped before the end is missing. A process that does not
    /// answer within 10 s is given up on.
    fn drain(&mut self) {
        for c in std::mem::take(&mut self.paused) {
            let _ = self.signal(&c, Signal::SIGCONT);
        }
        let mut asked: BTreeMap<String, Option<u64>> = BTreeMap::new();
        for (name, p) in &mut self.processes {
            if self.killed.contains(name) {
                continue;
            }
            let exit = json!({"cmd": "exit", "id": "drain"});
            if writeln!(p.stdin, "{exit}")
                .and_then(|_| p.stdin.flush())
                .is_ok()
            {
                asked.insert(name.clone(), None);
            }
        }
        let until = Instant::now() + Duration::from_secs(10);
        while !asked.is_empty() {
            let Ok(Some(i)) = self.receive(until) else {
                break;
            };
            let (p, seq) = (self.arrived[i].p.clone(), self.arrived[i].seq);
            if matches!(&self.arrived[i].kind, Kind::Ack { id, .. } if id == "drain") {
                if let Some(ack) = asked.get_mut(&p) {
                    *ack = Some(seq);
                    // Its output ends as it exits: no failure.
                    self.killed.push(p);
                }
            }
            let arrived = &self.arrived;
            asked.retain(|p, ack| {
                let numbered = |n: u64| arrived.iter().filter(|e| e.p == *p && e.seq <= n).count();
                !ack.is_some_and(|n| numbered(n) as u64 >= n)
            });
        }
    }

    /// Ends every process: paused ones are resumed first so that they die.
    /// Asked to exit, each flushes its log (the cluster shuts its brokers
    /// down, 7 to 13 s for a master); otherwise each is killed at once.
    fn shutdown(&mut self, asked: bool) {
        for c in std::mem::take(&mut self.paused) {
            let _ = self.signal(&c, Signal::SIGCONT);
        }
        if asked {
            for p in self.processes.values_mut() {
                let _ = writeln!(p.stdin, "{}", json!({"cmd": "exit", "id": "exit"}));
                let _ = p.stdin.flush();
            }
        }
        let until = Instant::now() + Duration::from_secs(if asked { 20 } else { 0 });
        for p in self.processes.values_mut() {
            while Instant::now() < until {
                if let Ok(Some(_)) = p.child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }
}
