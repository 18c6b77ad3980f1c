//! The comparison as an SVG picture: queues moved on a join against group
//! size (`rebalance compare --svg`).

use std::fmt::Write as _;

use rocketmq_rebalance_properties::compare::{Cell, Change, Report};

/// An SVG line chart: mean queues moved when one consumer joins, against
/// the group size, at the largest queue count compared; one line per
/// strategy and a dashed one for the lower bound.
/// What a picture plots against group size, on a join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Queues moved, with the lower bound.
    Moved,
    /// Messages expected to be delivered again.
    Duplicates,
}

impl Metric {
    fn of(self, cell: &Cell) -> f64 {
        match self {
            Self::Moved => cell.moved,
            Self::Duplicates => cell.duplicates,
        }
    }

    /// The lower bound of a cell, in this metric: each queue of the bound
    /// changes owner and costs what any hand-over costs.
    fn bound(self, cell: &Cell, report: &Report) -> f64 {
        match self {
            Self::Moved => cell.lower_bound,
            Self::Duplicates => cell.lower_bound * report.options.harm.duplicates_per_handover(),
        }
    }

    fn words(self) -> (&'static str, &'static str) {
        match self {
            Self::Moved => ("Queues moved", "queues moved"),
            Self::Duplicates => ("Messages delivered again", "messages delivered again"),
        }
    }
}

/// The picture of `metric` against group size on a join, at the largest
/// queue count, one line per strategy and the lower bound dashed.
pub fn svg(report: &Report, metric: Metric) -> String {
    let (title, axis) = metric.words();
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
                .map(|c| (c.consumers, metric.of(c)))
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
        .map(|c| (c.consumers, metric.bound(c, report)))
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
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{title} when one consumer joins ({queues} queues, mean of {} groups)</text>"#,
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
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{axis} (log scale)</text>"#,
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
