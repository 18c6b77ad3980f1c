//! Every allocation strategy against the same changes of a consumer group
//! (a consumer joins, one leaves, the topic gains queues), measured the same
//! way: what `rebalance compare` prints.
//!
//! For each change and each group size the comparison reports
//!
//! - **balance**: the largest share minus the smallest, before and after;
//! - **queues moved**: queues some consumer holds after the change that it
//!   did not hold before (new queues count too), against the **lower bound**
//!   any balanced strategy must move (the joiner's share, the leaver's share,
//!   the new queues): their ratio, as the mean of each trial's ratio and as
//!   total over total;
//! - **disagreement**: while the change is seen by some consumers and not yet
//!   by the others (each old member independently sees the new lists with
//!   probability one half; a joiner sees them, a leaver is gone), how many
//!   queues two consumers own at once and how many nobody owns;
//! - **whole-group time** at one large size.
//!
//! The predicates are this crate's ([`crate::assignment`]); this module
//! only measures (`rebalance compare` renders what it measures, the
//! real-cluster runs set its harm estimate beside what they measure).
//!
//! A small comparison, and what `STICKY` promises in it:
//!
//! ```
//! use rocketmq_rebalance_properties::compare::{compare, Options};
//!
//! let options = Options {
//!     consumers: vec![3, 5],
//!     queues: vec![64],
//!     trials: 2,
//!     timing: None,
//!     ..Options::default()
//! };
//! let report = compare(&options).unwrap();
//! let sticky = report.summaries.iter().find(|s| s.strategy == "STICKY").unwrap();
//! assert!(sticky.max_balance <= 1);
//! assert!(sticky.join.ratio_total >= 1.0);
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::time::Instant;

use rocketmq_rebalance::java::compare_utf16;
use rocketmq_rebalance::strategy::Sticky;
use rocketmq_rebalance::workload::{bench_queues, broker_name, client_ids};
use rocketmq_rebalance::{
    AllocateError, AllocateStrategy, MessageQueue, SplitMix64, StrategySpec, STRATEGY_NAMES,
};
use serde::Serialize;

use crate::{balance, moved, movement_lower_bound};

/// What changes between the two views of the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// A new consumer joins.
    Join,
    /// A consumer leaves (its queues must go elsewhere).
    Leave,
    /// The topic gains a quarter more queues on the same brokers.
    Grow,
}

impl Change {
    /// Every change, in table order.
    pub const ALL: [Change; 3] = [Change::Join, Change::Leave, Change::Grow];
}

/// What to compare and on which groups.
#[derive(Debug, Clone, Serialize)]
pub struct Options {
    /// Group sizes (consumers before the change); each at least 2.
    pub consumers: Vec<usize>,
    /// Queue counts (before a growth); each at least 1.
    pub queues: Vec<usize>,
    /// Random groups per (consumers, queues) pair.
    pub trials: usize,
    /// Seed of the client ids, topics and views drawn.
    pub seed: u64,
    /// Strategies; `None` for every name in [`STRATEGY_NAMES`]. Those that
    /// need a configuration ([`StrategySpec::configuration_needed`]) are
    /// left out with the reason.
    pub strategies: Option<Vec<StrategySpec>>,
    /// Extra `STICKY` rows with these load windows (`STICKY-k`).
    pub slacks: Vec<usize>,
    /// Time one whole-group call at (queues, consumers); `None`: no timing.
    pub timing: Option<(usize, usize)>,
    /// What a moved queue costs in messages.
    pub harm: HarmParameters,
}

/// What a queue that changes owner costs, by RocketMQ's defaults: see
/// [`HarmParameters::duplicates_per_handover`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HarmParameters {
    /// Messages a second each queue receives and its owner consumes.
    pub rate: f64,
    /// Seconds between two offset persists (`persistConsumerOffsetInterval`,
    /// 5 s).
    pub persist_interval: f64,
    /// Messages a pull fetches (`pullBatchSize`, 32).
    pub pull_batch: usize,
}

impl Default for HarmParameters {
    /// 100 messages a second a queue, RocketMQ's 5 s persist interval and
    /// pull batch of 32.
    fn default() -> Self {
        Self {
            rate: 100.0,
            persist_interval: 5.0,
            pull_batch: 32,
        }
    }
}

impl HarmParameters {
    /// The messages a queue that changes owner is expected to deliver
    /// again: what its old owner consumed since its last offset persist
    /// (half an interval on average, for a drop at a uniformly random
    /// moment) plus the batch it was consuming, whose offset a dropped
    /// queue never records (half a batch on average). It assumes the new
    /// owner reads the offset before the old owner's persist on drop lands
    /// (the persist is one-way and races the read; `docs/spec.md` shows
    /// the race); when the persist wins, only the half batch remains.
    pub fn duplicates_per_handover(&self) -> f64 {
        self.rate * self.persist_interval / 2.0 + self.pull_batch as f64 / 2.0
    }
}

impl Default for Options {
    /// Groups of 2 to 40 consumers with 64 to 1,000 queues, 8 trials each,
    /// slack 2, 3, 4 and 6 besides exact balance, timed at 100,000 queues
    /// and 10,000 consumers.
    fn default() -> Self {
        Options {
            consumers: vec![2, 3, 5, 8, 12, 16, 24, 32, 40],
            queues: vec![64, 128, 256, 512, 1000],
            trials: 8,
            seed: 1,
            strategies: None,
            slacks: vec![2, 3, 4, 6],
            timing: Some((100_000, 10_000)),
            harm: HarmParameters::default(),
        }
    }
}

/// One strategy on one change at one size, averaged over the trials.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Strategy name.
    pub strategy: String,
    /// The change.
    pub change: Change,
    /// Queues before the change.
    pub queues: usize,
    /// Consumers before the change.
    pub consumers: usize,
    /// Mean queues moved.
    pub moved: f64,
    /// Mean lower bound.
    pub lower_bound: f64,
    /// Mean of moved / lower bound over the trials with a positive bound.
    pub ratio: f64,
    /// Largest balance seen, before or after.
    pub max_balance: usize,
    /// Mean queues owned by two or more consumers while views disagree.
    pub double_owned: f64,
    /// Mean queues owned by nobody while views disagree.
    pub orphaned: f64,
    /// Mean queues paused: each moved queue stops between its old owner's
    /// drop and its new owner's start (a new queue until its first owner).
    pub paused: f64,
    /// Mean messages expected to be delivered again: the queues that change
    /// owner times [`HarmParameters::duplicates_per_handover`].
    pub duplicates: f64,
}

/// One change summed over every size, for one strategy.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangeSummary {
    /// Mean over all trials (with a positive bound) of moved / bound.
    pub ratio_mean: f64,
    /// Total moved over total bound.
    pub ratio_total: f64,
    /// Mean queues owned twice while views disagree.
    pub double_owned: f64,
    /// Mean queues owned by nobody while views disagree.
    pub orphaned: f64,
    /// Mean over the trials (with a positive bound) of queues owned twice
    /// over the lower bound: comparable across group sizes.
    pub double_per_bound: f64,
    /// The same for queues owned by nobody.
    pub orphaned_per_bound: f64,
    /// Mean queues paused (moved).
    pub paused: f64,
    /// Mean messages expected to be delivered again.
    pub duplicates: f64,
}

/// One strategy over everything.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Strategy name.
    pub strategy: String,
    /// A consumer joins.
    pub join: ChangeSummary,
    /// A consumer leaves.
    pub leave: ChangeSummary,
    /// The topic grows.
    pub grow: ChangeSummary,
    /// Largest balance seen anywhere.
    pub max_balance: usize,
    /// Median whole-group time in milliseconds at the timing size.
    pub group_millis: Option<f64>,
}

/// A strategy left out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Strategy name.
    pub strategy: String,
    /// Why it is not compared.
    pub reason: String,
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What was compared.
    pub options: Options,
    /// Strategies left out.
    pub skipped: Vec<Skipped>,
    /// One line per strategy.
    pub summaries: Vec<Summary>,
    /// One line per strategy, change and size.
    pub cells: Vec<Cell>,
}

/// Why a comparison cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompareError {
    /// No group size, or one below 2 (a leave needs someone left).
    GroupTooSmall,
    /// No queue count, or a count of 0.
    NoQueues,
    /// No trials.
    NoTrials,
    /// A load window of 0.
    ZeroSlack,
    /// A timing size of 0 queues or 0 consumers.
    EmptyTiming,
    /// A negative or non-finite message rate or persist interval.
    BadHarmParameter,
    /// A strategy failed on a drawn group.
    Allocation {
        /// The strategy.
        strategy: String,
        /// Its failure.
        error: AllocateError,
    },
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GroupTooSmall => {
                f.write_str("give group sizes of at least 2 (a leave needs someone left)")
            }
            Self::NoQueues => f.write_str("give queue counts of at least 1"),
            Self::NoTrials => f.write_str("give at least 1 trial"),
            Self::ZeroSlack => f.write_str("load windows are at least 1 wide"),
            Self::EmptyTiming => f.write_str("time at least 1 queue and 1 consumer"),
            Self::BadHarmParameter => {
                f.write_str("give a finite, non-negative message rate and persist interval")
            }
            Self::Allocation { strategy, error } => write!(f, "{strategy}: {error}"),
        }
    }
}

impl std::error::Error for CompareError {}

/// Runs the comparison. Fails on a group of fewer than 2 consumers, no
/// queues, no trials, a zero load window or timing size, or a strategy that
/// fails on a drawn group.
pub fn compare(options: &Options) -> Result<Report, CompareError> {
    validate(options)?;
    let (contenders, skipped) = contenders(options);
    let mut cells = Vec::new();
    let mut trials: BTreeMap<(usize, Change), Vec<Trial>> = BTreeMap::new();
    let mut rng = SplitMix64::new(options.seed);
    for &n in &options.consumers {
        for &m in &options.queues {
            let mut per: Vec<BTreeMap<Change, Vec<Trial>>> =
                vec![BTreeMap::new(); contenders.len()];
            for t in 0..options.trials {
                let world = World::draw(&mut rng, n, m, t);
                for (k, (_, strategy)) in contenders.iter().enumerate() {
                    for change in Change::ALL {
                        let trial = world.run(strategy.as_ref(), change)?;
                        per[k].entry(change).or_default().push(trial);
                    }
                }
            }
            for (k, (name, _)) in contenders.iter().enumerate() {
                for (change, ts) in std::mem::take(&mut per[k]) {
                    cells.push(Cell::of(name, change, (m, n), &ts, &options.harm));
                    trials.entry((k, change)).or_default().extend(ts);
                }
            }
        }
    }
    let summaries = contenders
        .iter()
        .enumerate()
        .map(|(k, (name, strategy))| {
            let of = |change| {
                ChangeSummary::of(
                    trials.get(&(k, change)).map_or(&[][..], Vec::as_slice),
                    &options.harm,
                )
            };
            Summary {
                strategy: name.clone(),
                join: of(Change::Join),
                leave: of(Change::Leave),
                grow: of(Change::Grow),
                max_balance: cells
                    .iter()
                    .filter(|c| &c.strategy == name)
                    .map(|c| c.max_balance)
                    .max()
                    .unwrap_or(0),
                group_millis: options
                    .timing
                    .map(|(q, c)| time_group(strategy.as_ref(), q, c)),
            }
        })
        .collect();
    Ok(Report {
        options: options.clone(),
        skipped,
        summaries,
        cells,
    })
}

/// Checks the options before any work, so that a bad one fails at once.
pub fn validate(options: &Options) -> Result<(), CompareError> {
    if options.consumers.is_empty() || options.consumers.iter().any(|&n| n < 2) {
        return Err(CompareError::GroupTooSmall);
    }
    if options.queues.is_empty() || options.queues.contains(&0) {
        return Err(CompareError::NoQueues);
    }
    if options.trials == 0 {
        return Err(CompareError::NoTrials);
    }
    if options.slacks.contains(&0) {
        return Err(CompareError::ZeroSlack);
    }
    if options.timing.is_some_and(|(q, c)| q == 0 || c == 0) {
        return Err(CompareError::EmptyTiming);
    }
    let harm = &options.harm;
    if [harm.rate, harm.persist_interval]
        .iter()
        .any(|v| !v.is_finite() || *v < 0.0)
    {
        return Err(CompareError::BadHarmParameter);
    }
    Ok(())
}

type Contenders = Vec<(String, Box<dyn AllocateStrategy>)>;

fn contenders(options: &Options) -> (Contenders, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let mut list: Contenders = Vec::new();
    let specs: Vec<StrategySpec> = match &options.strategies {
        Some(specs) => specs.clone(),
        None => STRATEGY_NAMES
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect(),
    };
    for spec in specs {
        let name = spec.name();
        match spec.configuration_needed() {
            Some(reason) => skipped.push(Skipped {
                strategy: name,
                reason: reason.to_string(),
            }),
            None => list.push((name, spec.build())),
        }
    }
    for &k in &options.slacks {
        let sticky = Sticky::with_slack(k);
        let name = sticky.name().to_string();
        if !list.iter().any(|(n, _)| *n == name) {
            list.push((name, Box::new(sticky)));
        }
    }
    (list, skipped)
}

/// One change measured once.
#[derive(Debug, Clone, Copy)]
struct Trial {
    moved: usize,
    bound: usize,
    balance: usize,
    double_owned: usize,
    orphaned: usize,
    /// Moved queues that had an owner before (a new queue has none).
    handed_over: usize,
}

impl Cell {
    fn of(
        strategy: &str,
        change: Change,
        (queues, consumers): (usize, usize),
        ts: &[Trial],
        harm: &HarmParameters,
    ) -> Cell {
        let s = ChangeSummary::of(ts, harm);
        Cell {
            strategy: strategy.to_string(),
            change,
            queues,
            consumers,
            moved: mean(ts.iter().map(|t| t.moved as f64)),
            lower_bound: mean(ts.iter().map(|t| t.bound as f64)),
            ratio: s.ratio_mean,
            max_balance: ts.iter().map(|t| t.balance).max().unwrap_or(0),
            double_owned: s.double_owned,
            orphaned: s.orphaned,
            paused: s.paused,
            duplicates: s.duplicates,
        }
    }
}

impl ChangeSummary {
    fn of(ts: &[Trial], harm: &HarmParameters) -> ChangeSummary {
        let total_moved: usize = ts.iter().map(|t| t.moved).sum();
        let total_bound: usize = ts.iter().map(|t| t.bound).sum();
        ChangeSummary {
            ratio_mean: mean(
                ts.iter()
                    .filter(|t| t.bound > 0)
                    .map(|t| t.moved as f64 / t.bound as f64),
            ),
            ratio_total: if total_bound == 0 {
                0.0
            } else {
                total_moved as f64 / total_bound as f64
            },
            double_owned: mean(ts.iter().map(|t| t.double_owned as f64)),
            orphaned: mean(ts.iter().map(|t| t.orphaned as f64)),
            double_per_bound: per_bound(ts, |t| t.double_owned),
            orphaned_per_bound: per_bound(ts, |t| t.orphaned),
            paused: mean(ts.iter().map(|t| t.moved as f64)),
            duplicates: mean(ts.iter().map(|t| t.handed_over as f64))
                * harm.duplicates_per_handover(),
        }
    }
}

fn per_bound(ts: &[Trial], count: impl Fn(&Trial) -> usize) -> f64 {
    mean(
        ts.iter()
            .filter(|t| t.bound > 0)
            .map(|t| count(t) as f64 / t.bound as f64),
    )
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 {
        0.0
    } else {
        sum / count as f64
    }
}

/// One drawn group: its queues before and after growth, its members, a
/// joiner, a leaver and which members see the new lists first.
struct World {
    queues: Vec<MessageQueue>,
    grown: Vec<MessageQueue>,
    members: Vec<String>,
    joiner: String,
    leaver: String,
    /// Per member (and the joiner last): sees the new lists already.
    sees_new: Vec<bool>,
}

impl World {
    fn draw(rng: &mut SplitMix64, n: usize, m: usize, trial: usize) -> World {
        let topic = format!("Topic{trial}");
        // Brokers of up to 32 queues; growth adds ids on the same brokers,
        // so the grown list contains the old one.
        let brokers = m.div_ceil(32).max(1);
        let layout = |count: usize| -> Vec<MessageQueue> {
            let mut qs: Vec<MessageQueue> = (0..count)
                .map(|k| {
                    MessageQueue::new(
                        topic.as_str(),
                        broker_name(k % brokers),
                        i32::try_from(k / brokers).unwrap_or(i32::MAX),
                    )
                })
                .collect();
            qs.sort();
            qs
        };
        let mut seen = HashSet::new();
        let mut ids = Vec::with_capacity(n + 1);
        while ids.len() < n + 1 {
            let r = rng.next_u64();
            let id = format!(
                "10.{}.{}.{}@{}",
                r & 0xFF,
                (r >> 8) & 0xFF,
                (r >> 16) & 0xFF,
                1000 + (r >> 24) % 64000
            );
            if seen.insert(id.clone()) {
                ids.push(id);
            }
        }
        let joiner = ids.pop().unwrap_or_default();
        ids.sort_by(|a, b| compare_utf16(a, b));
        let leaver = ids[(rng.next_u64() % n as u64) as usize].clone();
        let sees_new = (0..n)
            .map(|_| rng.next_u64() & 1 == 1)
            .chain([true])
            .collect();
        World {
            queues: layout(m),
            grown: layout(m + (m / 4).max(1)),
            members: ids,
            joiner,
            leaver,
            sees_new,
        }
    }

    fn run(&self, strategy: &dyn AllocateStrategy, change: Change) -> Result<Trial, CompareError> {
        let mut after_members = self.members.clone();
        let mut after_queues = &self.queues;
        match change {
            Change::Join => {
                after_members.push(self.joiner.clone());
                after_members.sort_by(|a, b| compare_utf16(a, b));
            }
            Change::Leave => after_members.retain(|c| *c != self.leaver),
            Change::Grow => after_queues = &self.grown,
        }
        let before = shares(strategy, &self.queues, &self.members)?;
        let after = shares(strategy, after_queues, &after_members)?;
        let moved_count = moved(&before, &after);
        let bound = movement_lower_bound(&before, &after);
        let balance_seen = balance(&before.iter().map(|(_, s)| s).collect::<Vec<_>>())
            .max(balance(&after.iter().map(|(_, s)| s).collect::<Vec<_>>()));

        // Who consumes what while the views disagree: each member by the
        // view it has; the joiner by the new one; the leaver not at all.
        let old: BTreeMap<&str, &Vec<MessageQueue>> =
            before.iter().map(|(c, s)| (c.as_str(), s)).collect();
        let new: BTreeMap<&str, &Vec<MessageQueue>> =
            after.iter().map(|(c, s)| (c.as_str(), s)).collect();
        let mut owners: BTreeMap<&MessageQueue, usize> = BTreeMap::new();
        let participants = self
            .members
            .iter()
            .zip(&self.sees_new)
            .map(|(c, &sees)| (c.as_str(), sees))
            .chain((change == Change::Join).then_some((self.joiner.as_str(), true)));
        for (c, sees_new) in participants {
            if change == Change::Leave && c == self.leaver {
                continue;
            }
            let view = if sees_new { &new } else { &old };
            for q in view.get(c).map(|s| s.iter()).into_iter().flatten() {
                *owners.entry(q).or_default() += 1;
            }
        }
        let all: BTreeSet<&MessageQueue> = after_queues.iter().collect();
        let double_owned = owners.values().filter(|&&k| k > 1).count();
        let orphaned = all.iter().filter(|q| !owners.contains_key(*q)).count();
        Ok(Trial {
            moved: moved_count,
            bound,
            balance: balance_seen,
            double_owned,
            orphaned,
            handed_over: moved_count.saturating_sub(after_queues.len() - self.queues.len()),
        })
    }
}

/// The group's shares by client id, computed as the client does (sorted
/// lists, which `World` keeps).
fn shares(
    strategy: &dyn AllocateStrategy,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Vec<(String, Vec<MessageQueue>)>, CompareError> {
    let group = strategy
        .allocate_group("compare", queues, consumers)
        .map_err(|error| CompareError::Allocation {
            strategy: strategy.name().to_string(),
            error,
        })?;
    Ok(consumers
        .iter()
        .cloned()
        .zip(group.into_iter().map(|s| s.into_iter().cloned().collect()))
        .collect())
}

/// Median of three whole-group calls on the benchmark workload, in ms.
fn time_group(strategy: &dyn AllocateStrategy, queues: usize, consumers: usize) -> f64 {
    let qs = bench_queues(queues);
    let cs = client_ids(consumers);
    let mut times: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            let result = strategy.allocate_group("compare", &qs, &cs);
            let elapsed = start.elapsed().as_secs_f64() * 1000.0;
            std::hint::black_box(result.is_ok());
            elapsed
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Options {
        Options {
            consumers: vec![2, 5],
            queues: vec![20],
            trials: 2,
            timing: None,
            ..Options::default()
        }
    }

    #[test]
    fn every_unskipped_strategy_is_compared() {
        let report = compare(&small()).unwrap();
        let names: Vec<&str> = report
            .summaries
            .iter()
            .map(|s| s.strategy.as_str())
            .collect();
        for name in STRATEGY_NAMES {
            let spec: StrategySpec = name.parse().unwrap();
            let skipped = spec.configuration_needed().is_some();
            assert_eq!(names.contains(&spec.name().as_str()), !skipped, "{name}");
            assert_eq!(
                report.skipped.iter().any(|s| s.strategy == spec.name()),
                skipped
            );
        }
        assert!(names.contains(&"STICKY-2"));
        // 2 sizes x 3 changes per strategy
        assert_eq!(report.cells.len(), names.len() * 2 * 3);
    }

    #[test]
    fn moved_is_never_below_the_bound_and_sticky_is_balanced() {
        let report = compare(&small()).unwrap();
        for s in &report.summaries {
            assert!(s.join.ratio_total >= 1.0 - 1e-9, "{}", s.strategy);
            assert!(s.leave.ratio_total >= 1.0 - 1e-9, "{}", s.strategy);
        }
        let sticky = report
            .summaries
            .iter()
            .find(|s| s.strategy == "STICKY")
            .unwrap();
        assert!(sticky.max_balance <= 1);
    }

    #[test]
    fn harms_follow_the_queues_that_change_owner() {
        let harm = HarmParameters::default();
        // 100 a second for half of 5 s, plus half a pull of 32.
        assert_eq!(harm.duplicates_per_handover(), 266.0);
        let report = compare(&small()).unwrap();
        for cell in &report.cells {
            assert_eq!(cell.paused, cell.moved, "{cell:?}");
            // A new queue pauses until its first owner starts, but no
            // message of it is delivered twice.
            let most = cell.moved * harm.duplicates_per_handover();
            assert!(cell.duplicates <= most + 1e-6, "{cell:?}");
            if cell.change != Change::Grow {
                assert!((cell.duplicates - most).abs() < 1e-6, "{cell:?}");
            }
        }
    }

    #[test]
    fn bad_options_are_refused() {
        let refused = |change: fn(&mut Options), error: CompareError| {
            let mut o = small();
            change(&mut o);
            assert_eq!(compare(&o).unwrap_err(), error);
        };
        refused(|o| o.consumers = vec![1], CompareError::GroupTooSmall);
        refused(|o| o.consumers.clear(), CompareError::GroupTooSmall);
        refused(|o| o.queues = vec![0], CompareError::NoQueues);
        refused(|o| o.trials = 0, CompareError::NoTrials);
        refused(|o| o.slacks = vec![0], CompareError::ZeroSlack);
        refused(|o| o.timing = Some((0, 3)), CompareError::EmptyTiming);
        refused(|o| o.harm.rate = -1.0, CompareError::BadHarmParameter);
        refused(
            |o| o.harm.persist_interval = f64::NAN,
            CompareError::BadHarmParameter,
        );
    }

    fn trial(moved: usize, bound: usize, double_owned: usize, orphaned: usize) -> Trial {
        Trial {
            moved,
            bound,
            balance: moved % 3,
            double_owned,
            orphaned,
            handed_over: moved,
        }
    }

    #[test]
    fn summaries_average_over_trials_with_a_bound_and_total_over_all() {
        let ts = [trial(3, 1, 2, 0), trial(6, 3, 1, 3), trial(4, 0, 5, 1)];
        let s = ChangeSummary::of(&ts, &HarmParameters::default());
        // Ratios 3 and 2 (the third trial has no bound); 13 moved over 4.
        assert_eq!(s.ratio_mean, 2.5);
        assert_eq!(s.ratio_total, 3.25);
        assert_eq!(s.double_owned, 8.0 / 3.0);
        assert_eq!(s.orphaned, 4.0 / 3.0);
        // 2/1 and 1/3; 0/1 and 3/3.
        assert_eq!(s.double_per_bound, (2.0 + 1.0 / 3.0) / 2.0);
        assert_eq!(s.orphaned_per_bound, 0.5);
        let cell = Cell::of(
            "AVG",
            Change::Grow,
            (40, 5),
            &ts,
            &HarmParameters::default(),
        );
        assert_eq!((cell.strategy.as_str(), cell.change), ("AVG", Change::Grow));
        assert_eq!((cell.queues, cell.consumers), (40, 5));
        assert_eq!((cell.moved, cell.lower_bound), (13.0 / 3.0, 4.0 / 3.0));
        assert_eq!(cell.ratio, 2.5);
        assert_eq!(cell.max_balance, 1);
        assert_eq!((cell.double_owned, cell.orphaned), (8.0 / 3.0, 4.0 / 3.0));
    }

    #[test]
    fn without_any_bound_every_ratio_is_zero() {
        let s = ChangeSummary::of(&[trial(2, 0, 1, 1)], &HarmParameters::default());
        assert_eq!((s.ratio_mean, s.ratio_total), (0.0, 0.0));
        assert_eq!((s.double_per_bound, s.orphaned_per_bound), (0.0, 0.0));
        assert_eq!(s.double_owned, 1.0);
        assert_eq!(mean(std::iter::empty()), 0.0);
    }

    #[test]
    fn a_drawn_world_is_reproducible_from_its_seed() {
        let mut rng = SplitMix64::new(1);
        let world = World::draw(&mut rng, 3, 40, 0);
        assert_eq!(
            world.members,
            [
                "10.103.236.142@2893",
                "10.193.92.2@48753",
                "10.94.85.50@19171"
            ]
        );
        assert_eq!(world.joiner, "10.11.201.66@15062");
        assert_eq!(world.leaver, "10.103.236.142@2893");
        assert_eq!(world.sees_new, [false, true, true, true]);
        // Two brokers of 20 queues, and 10 more on the same brokers.
        assert_eq!(world.queues, layout(0, 2, 20));
        assert_eq!(world.grown, layout(0, 2, 25));
        let next = World::draw(&mut rng, 2, 4, 1);
        assert_eq!(next.members, ["10.150.103.97@53340", "10.168.61.126@55325"]);
        assert_eq!(next.joiner, "10.97.79.86@39145");
        assert_eq!(next.leaver, "10.150.103.97@53340");
        assert_eq!(next.sees_new, [false, false, true]);
        assert_eq!(next.queues, layout(1, 1, 4));
        assert_eq!(next.grown, layout(1, 1, 5));
    }

    /// `Topic{trial}` with `per_broker` queues on each of `brokers`, sorted.
    fn layout(trial: usize, brokers: usize, per_broker: i32) -> Vec<MessageQueue> {
        let mut qs: Vec<MessageQueue> = (0..brokers)
            .flat_map(|b| {
                (0..per_broker)
                    .map(move |i| MessageQueue::new(format!("Topic{trial}"), broker_name(b), i))
            })
            .collect();
        qs.sort();
        qs
    }

    /// Two members a and b of four queues; c joins, a leaves; b alone has
    /// not seen the change yet.
    fn small_world() -> World {
        World {
            queues: layout(0, 1, 4),
            grown: layout(0, 1, 5),
            members: vec!["a".into(), "b".into()],
            joiner: "c".into(),
            leaver: "a".into(),
            sees_new: vec![true, false, true],
        }
    }

    fn run(change: Change) -> (usize, usize, usize, usize, usize) {
        run_in(small_world(), change)
    }

    fn run_in(world: World, change: Change) -> (usize, usize, usize, usize, usize) {
        let t = world
            .run(&rocketmq_rebalance::strategy::Averagely, change)
            .unwrap();
        (t.moved, t.bound, t.balance, t.double_owned, t.orphaned)
    }

    #[test]
    fn a_join_is_measured_by_hand() {
        // Before a: q0 q1, b: q2 q3; after a: q0 q1, b: q2, c: q3.
        // Meanwhile a (new view) q0 q1, b (old) q2 q3, c q3: q3 twice.
        assert_eq!(run(Change::Join), (1, 1, 1, 1, 0));
    }

    #[test]
    fn a_leave_is_measured_by_hand() {
        // After b: q0..q3. Meanwhile a is gone and b (old view) holds
        // q2 q3: q0 and q1 belong to nobody.
        assert_eq!(run(Change::Leave), (2, 2, 0, 0, 2));
        // If b leaves instead, a, which has seen the change, holds all four.
        let b_leaves = World {
            leaver: "b".into(),
            ..small_world()
        };
        assert_eq!(run_in(b_leaves, Change::Leave), (2, 2, 0, 0, 0));
    }

    #[test]
    fn a_growth_is_measured_by_hand() {
        // After a: q0 q1 q2, b: q3 q4; a needs one more. Meanwhile a (new)
        // q0 q1 q2, b (old) q2 q3: q2 twice, q4 nobody's.
        assert_eq!(run(Change::Grow), (2, 1, 1, 1, 1));
    }

    #[test]
    fn errors_say_what_to_give() {
        let texts = [
            (
                CompareError::GroupTooSmall,
                "give group sizes of at least 2 (a leave needs someone left)",
            ),
            (CompareError::NoQueues, "give queue counts of at least 1"),
            (CompareError::NoTrials, "give at least 1 trial"),
            (CompareError::ZeroSlack, "load windows are at least 1 wide"),
            (
                CompareError::EmptyTiming,
                "time at least 1 queue and 1 consumer",
            ),
            (
                CompareError::Allocation {
                    strategy: "AVG".into(),
                    error: AllocateError::EmptyQueues,
                },
                "AVG: mqAll is null or mqAll empty",
            ),
        ];
        for (error, text) in texts {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn every_bad_option_is_refused_whatever_else_is_given() {
        let refused = |change: fn(&mut Options), error: CompareError| {
            let mut o = small();
            change(&mut o);
            assert_eq!(validate(&o), Err(error));
        };
        refused(|o| o.consumers = vec![2, 1], CompareError::GroupTooSmall);
        refused(|o| o.queues = vec![20, 0], CompareError::NoQueues);
        refused(|o| o.queues.clear(), CompareError::NoQueues);
        refused(|o| o.slacks = vec![2, 0], CompareError::ZeroSlack);
        refused(|o| o.timing = Some((3, 0)), CompareError::EmptyTiming);
        let mut fine = small();
        fine.consumers = vec![2];
        fine.timing = Some((1, 1));
        assert_eq!(validate(&fine), Ok(()));
    }

    #[test]
    fn sticky_windows_are_added_once_and_configured_strategies_skipped() {
        let options = Options {
            strategies: Some(vec![
                StrategySpec::Sticky { slack: 2 },
                StrategySpec::ByConfig { queues: vec![] },
            ]),
            slacks: vec![2, 3],
            ..small()
        };
        let (list, skipped) = contenders(&options);
        let names: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["STICKY-2", "STICKY-3"]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].strategy, "CONFIG");
    }

    /// Sleeps a known time in every whole-group call.
    #[derive(Debug)]
    struct Slow;

    impl AllocateStrategy for Slow {
        fn name(&self) -> &str {
            "SLOW"
        }

        fn allocate<'a>(
            &'a self,
            _group: &str,
            _current: &str,
            _queues: &'a [MessageQueue],
            _consumers: &[String],
        ) -> Result<Vec<&'a MessageQueue>, AllocateError> {
            Ok(Vec::new())
        }

        fn allocate_group<'a>(
            &'a self,
            _group: &str,
            _queues: &'a [MessageQueue],
            consumers: &[String],
        ) -> Result<Vec<Vec<&'a MessageQueue>>, AllocateError> {
            std::thread::sleep(std::time::Duration::from_millis(3));
            Ok(vec![Vec::new(); consumers.len()])
        }
    }

    #[test]
    fn group_time_is_in_milliseconds() {
        let millis = time_group(&Slow, 4, 2);
        assert!((3.0..1000.0).contains(&millis), "{millis}");
        let timed = compare(&Options {
            consumers: vec![2],
            queues: vec![4],
            trials: 1,
            strategies: Some(vec![StrategySpec::Averagely]),
            slacks: vec![],
            timing: Some((10, 2)),
            ..Options::default()
        })
        .unwrap();
        let avg = &timed.summaries[0];
        assert!(avg.group_millis.is_some_and(|ms| ms >= 0.0));
        assert!(compare(&small()).unwrap().summaries[0]
            .group_millis
            .is_none());
    }
}
