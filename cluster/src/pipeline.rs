//! A real run from its script to its verdicts in one call: [`run()`] loads
//! the script, reads its model flags, checks the model, runs the script on
//! a real cluster, judges the outcome, compares it with the model's
//! verdicts, measures the harms and validates the trace, and returns the
//! judged run, which `rebalance cluster` only prints.
//!
//! A recorded trace is judged the same way, without Java: [`Plan::load`],
//! [`Plan::check`], then [`Checked::judge`] of [`RunResult::recorded`]
//! instead of the run.
//!
//! ```
//! use rocketmq_rebalance_cluster::pipeline::{Plan, Source};
//!
//! let plan = Plan::load(&Source::Scenario { name: "healthy".into(), orderly: false }, false).unwrap();
//! assert_eq!(plan.script.model, ["--scenario", "healthy"]);
//! let bad = Plan::load(&Source::Harms("no-such-change".into()), false);
//! assert_eq!(bad.err().map(|e| e.exit_code()), Some(2));
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use rocketmq_rebalance_flags::ModelArgs;
use rocketmq_rebalance_model::{
    check_model, checked_model,
    configuration::{Config, Consumption, Variant},
    default_memory,
    report::{FingerprintBits, Report},
    validation::{Bounds, End, Observation},
    CheckOptions, Search,
};
use rocketmq_rebalance_properties::compare::HarmParameters;

use crate::harms::{self, Harms};
use crate::outcome::{compare, not_compared, Mismatch, NotCompared, Outcome};
use crate::random::random_script;
use crate::run::{self, prepare, RunOptions, RunResult};
use crate::script::{self, harms_path, scenario_path, Script};
use crate::trace::Event;
use crate::translate::{restarts_with_downtime, same_sizes, validate, Start, Validation};
use crate::ClusterError;

/// Where a run's script comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A named scenario: `cluster/scenarios/NAME.json`, or
    /// `NAME-orderly.json`.
    Scenario {
        /// The scenario, by `rebalance check`'s names.
        name: String,
        /// Its orderly variant.
        orderly: bool,
    },
    /// A script file.
    Script(PathBuf),
    /// The harm script of one change of a group under a steady load:
    /// `cluster/harms/CHANGE.json`.
    Harms(String),
    /// A randomised run's script, made from its seed.
    Random(u64),
}

/// What `rebalance cluster` is asked to do.
#[derive(Clone, Debug)]
pub struct Request {
    /// The script.
    pub source: Source,
    /// At RocketMQ's default timers ([`Script::with_default_timers`]).
    pub default_timers: bool,
    /// The RocketMQ version.
    pub rocketmq: String,
    /// A broker restart's downtime where the script gives none.
    pub restart_downtime_ms: u64,
    /// The run directory (default: a new one under the temporary
    /// directory).
    pub run_dir: Option<PathBuf>,
    /// A file to write the merged trace to, besides the run directory's.
    pub trace: Option<PathBuf>,
    /// Protocol variants the run replays ([`Plan::load_with`]).
    pub variants: Vec<Variant>,
}

/// What the pipeline is about to do, for a caller that reports progress.
#[derive(Clone, Copy, Debug)]
pub enum Stage<'a> {
    /// Checking the model of these flags.
    Checking {
        /// The script's model flags.
        flags: &'a [String],
    },
    /// Running the script on a real cluster.
    Running {
        /// The RocketMQ version.
        rocketmq: &'a str,
        /// The run directory.
        run_dir: &'a Path,
    },
}

/// A script whose model flags are read: the model it is compared with,
/// and flags of a model at its own sizes for its trace's validation.
#[derive(Debug)]
pub struct Plan {
    /// The script (at RocketMQ's default timers if asked).
    pub script: Script,
    /// Where it came from, as messages name it: its path, or `--random
    /// SEED`.
    pub origin: String,
    /// Whether it runs at RocketMQ's default timers.
    pub default_timers: bool,
    model: Config,
}

impl Plan {
    /// Loads the script of `source` and reads its model flags: a script
    /// that is not found or not valid, model flags that are not, or
    /// `conform` flags at other sizes than the script's own, are bad
    /// input.
    pub fn load(source: &Source, default_timers: bool) -> Result<Plan, ClusterError> {
        Self::load_with(source, default_timers, &[])
    }

    /// [`Plan::load`], the script replaying protocol variants `variants`:
    /// each one by the script its scenario names for it (a script's
    /// `variants`), or by the setting that makes RocketMQ behave so
    /// ([`Script::with_variant`]); one with neither is bad input.
    pub fn load_with(
        source: &Source,
        default_timers: bool,
        variants: &[Variant],
    ) -> Result<Plan, ClusterError> {
        let from_file = |path: Result<PathBuf, String>| {
            let path = path.map_err(ClusterError::BadInput)?;
            Ok::<_, ClusterError>((Script::load(&path)?, path.display().to_string()))
        };
        let (script, origin) = match source {
            Source::Scenario { name, orderly } => from_file(scenario_path(name, *orderly))?,
            Source::Script(path) => from_file(Ok(path.clone()))?,
            Source::Harms(change) => from_file(harms_path(change))?,
            Source::Random(seed) => {
                let script = random_script(*seed)
                    .map_err(|e| ClusterError::BadInput(format!("--random {seed}: {e}")))?;
                (script, format!("--random {seed}"))
            }
        };
        let (mut script, mut origin) = (script, origin);
        for &v in variants {
            match script.variants.get(v.name()) {
                Some(name) => {
                    let path = Path::new(&origin).with_file_name(name);
                    script = Script::load(&path)?;
                    if !script
                        .model
                        .windows(2)
                        .any(|f| f == ["--variant", v.name()])
                    {
                        return Err(ClusterError::BadInput(format!(
                            "{}: named for the variant {v}, its model flags lack it",
                            path.display()
                        )));
                    }
                    origin = path.display().to_string();
                }
                None => {
                    script = script
                        .with_variant(v)
                        .map_err(|e| ClusterError::BadInput(format!("{origin}: {e}")))?;
                }
            }
        }
        Plan::new(script, origin, default_timers)
    }

    /// Reads the model flags of `script`, which came from `origin`.
    pub fn new(script: Script, origin: String, default_timers: bool) -> Result<Plan, ClusterError> {
        let script = if default_timers {
            script.with_default_timers()
        } else {
            script
        };
        let model = ModelArgs::config_from(&script.model)
            .map_err(|e| ClusterError::BadInput(format!("{origin}: its model flags: {e}")))?;
        let pops = model.protocol.consumption == Consumption::Pop;
        let word = |pop: bool| if pop { "pop" } else { "push" };
        if pops != (script.consumption == script::Consumption::Pop) {
            return Err(ClusterError::BadInput(format!(
                "{origin}: its model flags consume by {} and its \"consumption\" is \"{}\": \
                 the two must agree",
                word(pops),
                word(!pops),
            )));
        }
        if script.grpc() != model.protocol.grpc_clients() {
            let clients = |grpc: bool| if grpc { "gRPC" } else { "remoting" };
            return Err(ClusterError::BadInput(format!(
                "{origin}: its model flags run {} clients and the script {} ones \
                 (\"pop_client\", --pop-client): the two must agree",
                clients(model.protocol.grpc_clients()),
                clients(script.grpc()),
            )));
        }
        if script.grpc() && script.topics().len() > 1 {
            return Err(ClusterError::BadInput(format!(
                "{origin}: gRPC clients of the proxy (a FIFO group's, or \"pop_client\": \
                 \"grpc\") subscribe to the scenario's topic only: no consumer's \"topics\" and \
                 no subscribe step"
            )));
        }
        // Trace validation needs the model at the run's own sizes.
        let flags = script.conform_flags();
        ModelArgs::config_from(flags)
            .and_then(|cfg| {
                let topics = vec![script.queues; script.topics().len()];
                let brokers = script.brokers - script.late_brokers;
                same_sizes(brokers, &topics, script.consumers.len(), &cfg)?;
                // A failover the run makes must be one the model may take.
                let failovers = cfg.sizes.failovers;
                if failovers < script.failovers {
                    return Err(format!(
                        "the run has {} brokers with a slave, the model {failovers} failovers: \
                         give the model --failovers {}",
                        script.failovers, script.failovers
                    ));
                }
                Ok(())
            })
            .map_err(|e| {
                ClusterError::BadInput(format!(
                    "{origin}: its conform flags ({}): {e}",
                    flags.join(" ")
                ))
            })?;
        Ok(Plan {
            script,
            origin,
            default_timers,
            model,
        })
    }

    /// Checks the model the run is compared with (breadth-first on every
    /// core, for at most ten minutes), and measures the model's harms that
    /// the program's report shows beside the run's.
    pub fn check(self) -> Checked {
        self.check_measuring(true)
    }

    /// [`Plan::check`] without the model's harms, most of a check with
    /// messages: a run is judged the same (its verdicts, their comparison
    /// and its trace's validation), with no model harms to show.
    pub fn check_verdicts(self) -> Checked {
        self.check_measuring(false)
    }

    fn check_measuring(self, harms: bool) -> Checked {
        let options = CheckOptions {
            search: Search::Bfs,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_states: None,
            timeout: Some(Duration::from_secs(600)),
            memory: default_memory(),
            progress_every: Duration::from_secs(3600),
            liveness: false,
            reduction: true,
            fingerprint_bits: FingerprintBits::B64,
            workers: None,
            max_stall: None,
            harms,
        };
        let report = check_model(checked_model(self.model, &options), &options, |_| {});
        Checked {
            script: self.script,
            default_timers: self.default_timers,
            report,
        }
    }
}

/// A plan whose model is checked: ready to judge runs of its script.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The script.
    pub script: Script,
    /// Whether it runs at RocketMQ's default timers.
    pub default_timers: bool,
    /// The model's report: the verdicts the run is compared with.
    pub report: Report,
}

impl Checked {
    /// Judges a run of the script: the real verdicts, their comparison with
    /// the model's, the harms, and the trace's validation against the model
    /// at the run's sizes; `trace` is where its trace was written.
    pub fn judge(&self, result: RunResult, trace: Option<PathBuf>) -> Judged {
        let outcome = Outcome::judge(&result.observer, result.settled, self.script.orderly);
        let mismatches = compare(&self.report, &outcome, &self.script);
        let not_compared = not_compared(&self.report, &outcome);
        let harms = harms::measure(&result.events, &result.observer, Script::TOPIC);
        let mut flags = self.script.conform_flags().to_vec();
        // A restart with a downtime is validated against restarts that
        // stop first, which the run's own flags may not say.
        if restarts_with_downtime(&result.events) && !flags.iter().any(|f| f == "--restart-stops") {
            flags.push("--restart-stops".to_owned());
        }
        // A run that ended at rest must end at rest in the model too.
        let end = if result.settled {
            End::AtRest
        } else {
            End::Open
        };
        let validation = ModelArgs::config_from(&flags)
            .and_then(|cfg| validate(&result.events, cfg, Bounds::default(), Start::Cold, end));
        Judged {
            estimate: HarmEstimate::of(&self.script),
            script: self.script.clone(),
            default_timers: self.default_timers,
            report: self.report.clone(),
            result,
            outcome,
            mismatches,
            not_compared,
            harms,
            conformance: RunConformance { flags, validation },
            trace,
        }
    }
}

/// What `rebalance compare` expects a hand-over to deliver again at a
/// run's load and persist interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HarmEstimate {
    /// The run's load, persist interval and pull batch.
    pub parameters: HarmParameters,
    /// The messages a hand-over delivers again at them.
    pub duplicates_per_hand_over: f64,
}

impl HarmEstimate {
    /// The estimate for a script with a steady load (none without one).
    pub fn of(script: &Script) -> Option<HarmEstimate> {
        let rate = script.stream_rate()?;
        let persist_ms = script
            .timers
            .client_config
            .get("persistConsumerOffsetInterval")
            .and_then(|v| v.as_f64());
        let parameters = HarmParameters {
            rate: f64::from(rate),
            persist_interval: persist_ms
                .map_or(HarmParameters::default().persist_interval, |ms| ms / 1000.0),
            ..HarmParameters::default()
        };
        Some(HarmEstimate {
            parameters,
            duplicates_per_hand_over: parameters.duplicates_per_handover(),
        })
    }
}

/// The trace's validation against the model at the run's sizes.
pub struct RunConformance {
    /// The model flags validated against (the script's `conform`, else its
    /// `model`).
    pub flags: Vec<String>,
    /// The validation, or why the trace could not be validated.
    pub validation: Result<Validation, String>,
}

impl RunConformance {
    /// The trace is a behaviour of the model, and every allocation in it
    /// the crate's.
    pub fn conforms(&self) -> bool {
        self.validation.as_ref().is_ok_and(Validation::conforms)
    }
}

/// A run and its verdicts, beside the model's.
pub struct Judged {
    /// The script that ran.
    pub script: Script,
    /// Whether it ran at RocketMQ's default timers.
    pub default_timers: bool,
    /// The model's report.
    pub report: Report,
    /// The run: its trace, the observer's fold, how it ended.
    pub result: RunResult,
    /// The real verdicts.
    pub outcome: Outcome,
    /// Where the real verdicts and the model's disagree.
    pub mismatches: Vec<Mismatch>,
    /// The model's properties the run gives no verdict on, and why.
    pub not_compared: Vec<NotCompared>,
    /// The harms measured on the run.
    pub harms: Harms,
    /// What `rebalance compare` expects of the hand-overs, for a run under
    /// a steady load.
    pub estimate: Option<HarmEstimate>,
    /// The trace's validation.
    pub conformance: RunConformance,
    /// Where the trace was written.
    pub trace: Option<PathBuf>,
}

impl Judged {
    /// The real outcome matches the model's.
    pub fn matches_model(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// The first observation no run of the model explains, and the event
    /// of the trace it was read from.
    pub fn unexplained(&self) -> Option<(&Observation, Option<&Event>)> {
        let v = self.conformance.validation.as_ref().ok()?;
        let observation = v.translation.observations.get(v.conformance.unexplained?)?;
        let event = observation
            .line
            .checked_sub(1)
            .and_then(|i| self.result.events.get(i));
        Some((observation, event))
    }
}

/// Runs `rebalance cluster`'s whole pipeline: the plan (bad input is found
/// before anything starts), the harness (Java, Maven and the version are
/// checked, and it is built), the model's check and, beside it, the run,
/// its trace written to the run directory (and `request.trace`), and the
/// judgement. `progress` hears of the check and the run before they
/// begin. A run that fails still waits for the check to end.
pub fn run(request: &Request, mut progress: impl FnMut(Stage<'_>)) -> Result<Judged, ClusterError> {
    let plan = Plan::load_with(&request.source, request.default_timers, &request.variants)?;
    let run_dir = request.run_dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "rebalance-cluster-{}-{}",
            plan.script.scenario,
            std::process::id()
        ))
    });
    let opts = RunOptions {
        rocketmq: request.rocketmq.clone(),
        restart_downtime_ms: request.restart_downtime_ms,
        run_dir,
    };
    let harness = prepare(&opts)?;
    progress(Stage::Checking {
        flags: &plan.script.model,
    });
    progress(Stage::Running {
        rocketmq: &opts.rocketmq,
        run_dir: &opts.run_dir,
    });
    // The check and the run go side by side: a run mostly waits on its
    // cluster's timers, and its judgement is the first to need the report.
    let script = plan.script.clone();
    let (checked, result) = std::thread::scope(|s| {
        let checking = s.spawn(|| plan.check());
        let result = run::run(&script, &harness, &opts);
        let checked = checking
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (checked, result)
    });
    let result = result?;
    let text: String = result.events.iter().map(|e| e.to_line() + "\n").collect();
    let mut traces = vec![opts.run_dir.join("trace.ndjson")];
    traces.extend(request.trace.clone());
    for t in &traces {
        std::fs::write(t, &text).map_err(|e| {
            ClusterError::BadInput(format!("cannot write the trace {}: {e}", t.display()))
        })?;
    }
    Ok(checked.judge(result, traces.pop()))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn scenario(name: &str, orderly: bool) -> Source {
        Source::Scenario {
            name: name.into(),
            orderly,
        }
    }

    /// A variant is replayed by the script its scenario names for it, or
    /// by RocketMQ's own setting, the model checked with it either way;
    /// one with neither is bad input.
    #[test]
    fn a_variant_is_replayed_by_its_script_or_its_setting() {
        let grace = Plan::load_with(
            &scenario("broker-restart", true),
            false,
            &[Variant::LockGraceAfterStart],
        )
        .expect("the orderly broker restart names its script");
        assert!(grace
            .origin
            .ends_with("broker-restart-orderly-lock-grace.json"));
        let kept = Plan::load_with(
            &scenario("fifo-broker-restart", false),
            false,
            &[Variant::ProxyKeepsGroupConfig],
        )
        .expect("the FIFO broker restart names its script");
        assert!(kept
            .origin
            .ends_with("fifo-broker-restart-config-kept.json"));
        let unique = Plan::load_with(
            &scenario("duplicate-client-id", false),
            false,
            &[Variant::UniqueInstanceNames],
        )
        .expect("a setting");
        let ids: BTreeSet<String> = unique
            .script
            .consumers
            .iter()
            .map(|c| c.client_id())
            .collect();
        assert_eq!(ids.len(), unique.script.consumers.len(), "every id its own");
        assert!(unique
            .script
            .model
            .ends_with(&["--variant".into(), "unique-instance-names".into()]));
        let none = Plan::load_with(
            &scenario("healthy", false),
            false,
            &[Variant::GoOrderlyDrop],
        );
        assert_eq!(none.err().map(|e| e.exit_code()), Some(2));
    }
}
