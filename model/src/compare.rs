//! `rebalance compare`: every allocation strategy against the same changes
//! of a consumer group (a consumer joins, one leaves, the topic gains
//! queues), measured the same way.
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
//! ```
//! use rocketmq_rebalance_model::compare::{compare, Options};
//!
//! let options = Options {
//!     consumers: vec![3, 5],
//!     queues: vec![64],
//!     trials: 2,
//!     timing: None,
//!     ..Options::default()
//! };
//! let report = compare(&options)?;
//! let sticky = report.summaries.iter().find(|s| s.strategy == "STICKY").unwrap();
//! assert!(sticky.max_balance <= 1);
//! assert!(sticky.join.ratio_total >= 1.0);
//! # Ok::<(), String>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;
use std::time::Instant;

use rocketmq_rebalance::java::compare_utf16;
use rocketmq_rebalance::strategy::Sticky;
use rocketmq_rebalance::workload::{bench_queues, broker_name, client_ids};
use rocketmq_rebalance::{strategy_from_name, AllocateStrategy, MessageQueue, STRATEGY_NAMES};
use rocketmq_rebalance_properties::{balance, moved, movement_lower_bound};
use serde::Serialize;

/// Strategies of [`STRATEGY_NAMES`] left out, and why: they need a
/// configuration that a generated group cannot sensibly have.
pub const SKIPPED: &[(&str, &str)] = &[
    (
        "CONFIG",
        "allocates a configured queue list, whatever the topic's queues and the group are",
    ),
    (
        "MACHINE_ROOM",
        "needs the consumers' machine rooms; with none configured nobody gets anything",
    ),
    (
        "MACHINE_ROOM_NEARBY",
        "needs machine rooms in broker names and client ids; without them it is AVG",
    ),
];

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
    /// Strategy names; `None` for every name in [`STRATEGY_NAMES`] but the
    /// [`SKIPPED`] ones.
    pub strategies: Option<Vec<String>>,
    /// Extra `STICKY` rows with these load windows (`STICKY-k`).
    pub slacks: Vec<usize>,
    /// Time one whole-group call at (queues, consumers); `None`: no timing.
    pub timing: Option<(usize, usize)>,
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

/// Runs the comparison. Fails (with a message for the user) on an unknown
/// strategy name, a group of fewer than 2 consumers, no queues or no trials.
pub fn compare(options: &Options) -> Result<Report, String> {
    validate(options)?;
    let (contenders, skipped) = contenders(options)?;
    let mut cells = Vec::new();
    let mut trials: BTreeMap<(usize, Change), Vec<Trial>> = BTreeMap::new();
    let mut rng = SplitMix(options.seed);
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
                    cells.push(Cell::of(name, change, m, n, &ts));
                    trials.entry((k, change)).or_default().extend(ts);
                }
            }
        }
    }
    let summaries = contenders
        .iter()
        .enumerate()
        .map(|(k, (name, strategy))| {
            let of =
                |change| ChangeSummary::of(trials.get(&(k, change)).map_or(&[][..], Vec::as_slice));
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

fn validate(options: &Options) -> Result<(), String> {
    if options.consumers.is_empty() || options.consumers.iter().any(|&n| n < 2) {
        return Err(
            "--consumers: give group sizes of at least 2 (a leave needs someone left)".into(),
        );
    }
    if options.queues.is_empty() || options.queues.contains(&0) {
        return Err("--queues: give queue counts of at least 1".into());
    }
    if options.trials == 0 {
        return Err("--trials: at least 1".into());
    }
    if options.slacks.contains(&0) {
        return Err("--slack: load windows are at least 1 wide".into());
    }
    if let Some((q, c)) = options.timing {
        if q == 0 || c == 0 {
            return Err("--time-at: give QUEUESxCONSUMERS, both at least 1".into());
        }
    }
    Ok(())
}

type Contenders = Vec<(String, Box<dyn AllocateStrategy>)>;

fn contenders(options: &Options) -> Result<(Contenders, Vec<Skipped>), String> {
    let mut skipped = Vec::new();
    let mut list: Contenders = Vec::new();
    let names: Vec<String> = match &options.strategies {
        Some(names) => names.clone(),
        None => STRATEGY_NAMES.iter().map(|s| s.to_string()).collect(),
    };
    for name in names {
        if let Some((_, reason)) = SKIPPED.iter().find(|(n, _)| *n == name) {
            skipped.push(Skipped {
                strategy: name,
                reason: reason.to_string(),
            });
            continue;
        }
        let strategy = strategy_from_name(&name).map_err(|e| e.to_string())?;
        list.push((name, strategy));
    }
    for &k in &options.slacks {
        let sticky = Sticky::with_slack(k);
        let name = sticky.name().to_string();
        if !list.iter().any(|(n, _)| *n == name) {
            list.push((name, Box::new(sticky)));
        }
    }
    Ok((list, skipped))
}

/// One change measured once.
#[derive(Debug, Clone, Copy)]
struct Trial {
    moved: usize,
    bound: usize,
    balance: usize,
    double_owned: usize,
    orphaned: usize,
}

impl Cell {
    fn of(strategy: &str, change: Change, queues: usize, consumers: usize, ts: &[Trial]) -> Cell {
        let s = ChangeSummary::of(ts);
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
        }
    }
}

impl ChangeSummary {
    fn of(ts: &[Trial]) -> ChangeSummary {
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
    fn draw(rng: &mut SplitMix, n: usize, m: usize, trial: usize) -> World {
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
            let r = rng.next();
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
        let leaver = ids[(rng.next() % n as u64) as usize].clone();
        let sees_new = (0..n).map(|_| rng.next() & 1 == 1).chain([true]).collect();
        World {
            queues: layout(m),
            grown: layout(m + (m / 4).max(1)),
            members: ids,
            joiner,
            leaver,
            sees_new,
        }
    }

    fn run(&self, strategy: &dyn AllocateStrategy, change: Change) -> Result<Trial, String> {
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
        })
    }
}

/// The group's shares by client id, computed as the client does (sorted
/// lists, which `World` keeps).
fn shares(
    strategy: &dyn AllocateStrategy,
    queues: &[MessageQueue],
    consumers: &[String],
) -> Result<Vec<(String, Vec<MessageQueue>)>, String> {
    let group = strategy
        .allocate_group("compare", queues, consumers)
        .map_err(|e| format!("{}: {e}", strategy.name()))?;
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

/// SplitMix64: a small seeded generator, so reports are reproducible.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The summary as a Markdown table, followed by the skipped strategies.
pub fn markdown(report: &Report) -> String {
    let o = &report.options;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Groups of {} consumers with {} queues, {} trials each (seed {}).\n\
         Moved/bound: queues that change owner over the fewest any balanced strategy must move,\n\
         as the mean of the trials' ratios (and total over total).\n\
         Double/nobody: queues owned twice or by no one while each old member still sees the old lists\n\
         with probability 1/2, per queue of the lower bound (mean of the trials' ratios).\n",
        list(&o.consumers),
        list(&o.queues),
        o.trials,
        o.seed
    );
    let timing = o.timing.map_or("".to_string(), |(q, c)| {
        format!(" | whole group {q}×{c} (ms)")
    });
    let _ = writeln!(
        out,
        "| strategy | balance | join moved/bound | leave moved/bound | grow moved/bound | join double/nobody | leave double/nobody | grow double/nobody{timing} |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:{}|",
        if o.timing.is_some() { "|---:" } else { "" }
    );
    for s in &report.summaries {
        let ratio = |c: &ChangeSummary| format!("{:.2} ({:.2})", c.ratio_mean, c.ratio_total);
        let dis =
            |c: &ChangeSummary| format!("{:.2} / {:.2}", c.double_per_bound, c.orphaned_per_bound);
        let time = s
            .group_millis
            .map_or(String::new(), |ms| format!(" | {ms:.1}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {}{time} |",
            s.strategy,
            s.max_balance,
            ratio(&s.join),
            ratio(&s.leave),
            ratio(&s.grow),
            dis(&s.join),
            dis(&s.leave),
            dis(&s.grow),
        );
    }
    if !report.skipped.is_empty() {
        let _ = writeln!(out, "\nNot compared:");
        for s in &report.skipped {
            let _ = writeln!(out, "- {}: {}", s.strategy, s.reason);
        }
    }
    out
}

fn list(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// An SVG line chart: mean queues moved when one consumer joins, against
/// the group size, at the largest queue count compared; one line per
/// strategy and a dashed one for the lower bound.
pub fn svg(report: &Report) -> String {
    let queues = report.options.queues.iter().copied().max().unwrap_or(0);
    let sizes: Vec<usize> = report.options.consumers.clone();
    let series: Vec<(&str, Vec<(usize, f64)>)> = report
        .summaries
        .iter()
        .map(|s| {
            let points = report
                .cells
                .iter()
                .filter(|c| {
                    c.strategy == s.strategy && c.change == Change::Join && c.queues == queues
                })
                .map(|c| (c.consumers, c.moved))
                .collect();
            (s.strategy.as_str(), points)
        })
        .collect();
    // The bound of a balanced strategy (the joiner's share): STICKY's when
    // compared, else the first strategy's.
    let reference = report
        .summaries
        .iter()
        .find(|s| s.strategy == "STICKY")
        .or(report.summaries.first())
        .map(|s| s.strategy.as_str());
    let bound: Vec<(usize, f64)> = report
        .cells
        .iter()
        .filter(|c| {
            c.change == Change::Join && c.queues == queues && Some(c.strategy.as_str()) == reference
        })
        .map(|c| (c.consumers, c.lower_bound))
        .collect();

    // Both axes logarithmic: sizes from 2 to 40 and counts from a few to a
    // thousand would otherwise crowd the sticky strategies into one line.
    let (w, h) = (760.0, 460.0);
    let (left, right, top, bottom) = (70.0, 200.0, 40.0, 60.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let x_lo = (sizes.iter().copied().min().unwrap_or(1).max(1) as f64).ln();
    let x_hi = (sizes.iter().copied().max().unwrap_or(1).max(1) as f64).ln();
    let values = || {
        series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|&(_, y)| y))
            .chain(bound.iter().map(|&(_, y)| y))
            .filter(|&y| y > 0.0)
    };
    let y_min = 10f64.powf(
        values()
            .fold(f64::INFINITY, f64::min)
            .min(1e12)
            .log10()
            .floor(),
    );
    let y_max = nice_ceiling(values().fold(1.0, f64::max)).max(y_min * 10.0);
    let sx = |x: f64| left + (x.max(1.0).ln() - x_lo) / (x_hi - x_lo).max(1e-9) * pw;
    let sy = |y: f64| {
        let y = y.max(y_min);
        top + ph - (y / y_min).log10() / (y_max / y_min).log10() * ph
    };

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">Queues moved when one consumer joins ({queues} queues, mean of {} groups)</text>"#,
        left + pw / 2.0,
        report.options.trials
    );
    let mut decade = y_min;
    while decade <= y_max * 1.0001 {
        for f in [1.0, 2.0, 5.0] {
            let y = decade * f;
            if y > y_max * 1.0001 {
                break;
            }
            let _ = writeln!(
                out,
                r##"<line x1="{left}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#ddd"/><text x="{2:.1}" y="{3:.1}" text-anchor="end">{4}</text>"##,
                sy(y),
                left + pw,
                left - 6.0,
                sy(y) + 4.0,
                y
            );
        }
        decade *= 10.0;
    }
    for &n in &sizes {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#999"/><text x="{0:.1}" y="{3:.1}" text-anchor="middle">{n}</text>"##,
            sx(n as f64),
            top + ph,
            top + ph + 5.0,
            top + ph + 18.0
        );
    }
    let _ = writeln!(
        out,
        r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">consumers before the join (log scale)</text>"#,
        left + pw / 2.0,
        h - 18.0
    );
    let _ = writeln!(
        out,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">queues moved (log scale)</text>"#,
        top + ph / 2.0,
        top + ph / 2.0
    );
    const COLORS: &[&str] = &[
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let mut legend_y = top + 10.0;
    let mut line = |out: &mut String,
                    name: &str,
                    points: &[(usize, f64)],
                    color: &str,
                    dash: &str| {
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x as f64), sy(y)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
            path.join(" ")
        );
        for &(x, y) in points {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                sx(x as f64),
                sy(y)
            );
        }
        let _ = writeln!(
            out,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{3:.1}" y="{4:.1}">{name}</text>"#,
            left + pw + 12.0,
            legend_y,
            left + pw + 36.0,
            left + pw + 42.0,
            legend_y + 4.0
        );
        legend_y += 18.0;
    };
    for (k, (name, points)) in series.iter().enumerate() {
        line(&mut out, name, points, COLORS[k % COLORS.len()], "");
    }
    line(
        &mut out,
        "lower bound",
        &bound,
        "#000",
        r#" stroke-dasharray="5,4""#,
    );
    let _ = writeln!(out, "</svg>");
    out
}

/// 1, 2 or 5 times a power of ten, at least `y`.
fn nice_ceiling(y: f64) -> f64 {
    let mut step = 1.0;
    loop {
        for f in [1.0, 2.0, 5.0] {
            if f * step >= y {
                return f * step;
            }
        }
        step *= 10.0;
    }
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
            let skipped = SKIPPED.iter().any(|(n, _)| n == name);
            assert_eq!(names.contains(name), !skipped, "{name}");
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
    fn bad_options_are_refused() {
        let mut o = small();
        o.consumers = vec![1];
        assert!(compare(&o).is_err());
        let mut o = small();
        o.strategies = Some(vec!["NOPE".into()]);
        assert!(compare(&o).is_err());
    }

    #[test]
    fn outputs_render() {
        let report = compare(&small()).unwrap();
        assert!(markdown(&report).contains("| STICKY |"));
        let picture = svg(&report);
        assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
    }
}
