//! The regression gate of `embers-server diff`: two profiles (a baseline and a new one), each
//! function's share of self time and of total time on both sides, ranked by how much the share
//! changed, and the functions whose share grew past a limit **and** passed the
//! [`significance`](super::significance) rule — the ones a CI job fails the build for.
//!
//! The sides are put on one scale as *What grew* does ([`Diff`] in normalised mode, its
//! per-function [`diff_stats`]): shares of each side's own total, so a 10 s and a 30 s run
//! compare fairly. The share change in a row is that of the values; the rule judges sample
//! counts, which a side gives when its format knows them ([`Side::samples`]): each function's
//! value is converted to samples at the side's average value per sample. Without a count the
//! values are taken as counts (folded stacks usually are).
//!
//! Pure and deterministic (ties broken by name); the words are written by [`render`], the JSON
//! is this module's types serialised.

pub mod render;

use serde::Serialize;
use thiserror::Error;

use super::significance::{Counts, Rule};
use super::text;
use crate::tree::diff::{Diff, DiffMode};
use crate::tree::order::sort_by_dyn;
use crate::tree::profile::Profile;
use crate::tree::stats::{diff_stats, FunctionStats};

/// Rows smaller than this change (0.05 percentage points) are not listed: rounding, not news.
const MIN_LISTED_POINTS: f64 = 0.05;

/// One side of the comparison.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// Its call tree.
    pub profile: &'a Profile,
    /// What the report calls it (a file name, a range).
    pub label: &'a str,
    /// `profile_event_type` of its values (`cpu`, `on-cpu`, `samples`, ...), which says their
    /// unit.
    pub event_type: &'a str,
    /// How many samples the profile's values stand for, when the format says (pprof's
    /// `samples/count` or period, perf's sample lines, JFR's events); `None`: the values are
    /// counts.
    pub samples: Option<u64>,
}

/// What the gate checks, with the rule it judges changes by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateOptions {
    /// When a change is a change.
    pub rule: Rule,
    /// Fail when a function's share of self time grew by more than this many percentage
    /// points (and the rule calls it significant); `None`: no limit.
    pub max_growth: Option<f64>,
    /// The same for the share of total time (the function and what it calls).
    pub max_total_growth: Option<f64>,
    /// Rows listed per metric (the gate looks at every function whatever this is).
    pub rows: usize,
}

/// Why two profiles cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GateError {
    /// A side has no samples at all: there is no share to compare.
    #[error("the {0} has no samples: nothing to compare")]
    Empty(&'static str),
}

/// One side as the report describes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideReport {
    /// Its label.
    pub label: String,
    /// Its total value, in the event type's unit.
    pub value: u64,
    /// Its samples: counted when the format says, else the values taken as counts.
    pub samples: u64,
    /// Whether `samples` was counted (false: the values were taken as counts).
    pub samples_counted: bool,
}

/// Which share a row or a breach is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The function's own time.
    SelfTime,
    /// The function's time with what it calls.
    TotalTime,
}

impl Metric {
    /// `self time` or `total time`.
    pub fn words(self) -> &'static str {
        match self {
            Metric::SelfTime => "self time",
            Metric::TotalTime => "total time",
        }
    }
}

/// One function's change of one share.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The function (cut to the summaries' name bound).
    pub function: String,
    /// Its value in the baseline and in the new profile.
    pub base_value: u64,
    /// See `base_value`.
    pub new_value: u64,
    /// Its samples on each side (values converted at the side's value per sample).
    pub base_samples: u64,
    /// See `base_samples`.
    pub new_samples: u64,
    /// Its share of each side's total, in percent.
    pub base_percent: f64,
    /// See `base_percent`.
    pub new_percent: f64,
    /// `new_percent − base_percent`: percentage points.
    pub change_points: f64,
    /// The rule's z-score of the change.
    pub z: f64,
    /// Whether the rule calls it a change.
    pub significant: bool,
}

/// A function the gate fails for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Breach {
    /// Which share grew.
    pub metric: Metric,
    /// The limit it passed, percentage points.
    pub limit_points: f64,
    /// The function's row.
    #[serde(flatten)]
    pub row: Row,
}

/// The whole comparison: what `diff` prints in every format.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The baseline.
    pub base: SideReport,
    /// The new profile.
    pub new: SideReport,
    /// The new profile's event type, which says the values' unit.
    pub event_type: String,
    /// The rule's thresholds.
    pub min_z: f64,
    /// See `min_z`.
    pub min_samples: u64,
    /// The limits checked (`None`: not checked).
    pub max_growth: Option<f64>,
    /// See `max_growth`.
    pub max_total_growth: Option<f64>,
    /// The functions whose share of self time changed most, largest change (either way) first.
    pub self_time: Vec<Row>,
    /// The same for total time.
    pub total_time: Vec<Row>,
    /// Every function past a limit with a significant change, largest growth first.
    pub breaches: Vec<Breach>,
    /// The differential view of the two, when the caller can name one.
    pub link: Option<String>,
}

impl Report {
    /// Whether the gate passed (no breach).
    pub fn passed(&self) -> bool {
        self.breaches.is_empty()
    }
}

/// Compares `base` with `new` and checks the limits in `options`.
pub fn gate(base: &Side, new: &Side, options: &GateOptions) -> Result<Report, GateError> {
    let totals = [base.profile.root_total(), new.profile.root_total()];
    if totals[0] == 0 {
        return Err(GateError::Empty("baseline"));
    }
    if totals[1] == 0 {
        return Err(GateError::Empty("new profile"));
    }
    let scale = Scale::new(base, new, totals);
    let diff = Diff::new(base.profile, new.profile, DiffMode::Normalized);
    let root = diff.profile.func(0);
    let stats: Vec<_> = diff_stats(&diff.profile, &diff.values)
        .into_iter()
        .filter(|s| s.func != root)
        .collect();
    let rows_of = |pick: fn(&FunctionStats) -> u64| -> Vec<Row> {
        let mut rows: Vec<Row> = stats
            .iter()
            .map(|s| {
                let name = text::name(diff.profile.function_name(s.func));
                scale.row(
                    name,
                    [pick(&s.baseline), pick(&s.comparison)],
                    &options.rule,
                )
            })
            .collect();
        sort_by_dyn(&mut rows, &|a, b| {
            b.change_points
                .abs()
                .total_cmp(&a.change_points.abs())
                .then_with(|| a.function.cmp(&b.function))
        });
        rows
    };
    let self_rows = rows_of(|f| f.self_value);
    let total_rows = rows_of(|f| f.total);
    let mut breaches = Vec::new();
    for (metric, limit, rows) in [
        (Metric::SelfTime, options.max_growth, &self_rows),
        (Metric::TotalTime, options.max_total_growth, &total_rows),
    ] {
        let Some(limit) = limit else { continue };
        breaches.extend(
            rows.iter()
                .filter(|r| r.significant && r.change_points > limit)
                .map(|r| Breach {
                    metric,
                    limit_points: limit,
                    row: r.clone(),
                }),
        );
    }
    sort_by_dyn(&mut breaches, &|a, b| {
        b.row
            .change_points
            .total_cmp(&a.row.change_points)
            .then_with(|| a.row.function.cmp(&b.row.function))
    });
    let listed = |rows: Vec<Row>| -> Vec<Row> {
        rows.into_iter()
            .filter(|r| r.change_points.abs() >= MIN_LISTED_POINTS)
            .take(options.rows.max(1))
            .collect()
    };
    Ok(Report {
        base: scale.side(base, totals[0], 0),
        new: scale.side(new, totals[1], 1),
        event_type: new.event_type.to_owned(),
        min_z: options.rule.min_z,
        min_samples: options.rule.min_samples,
        max_growth: options.max_growth,
        max_total_growth: options.max_total_growth,
        self_time: listed(self_rows),
        total_time: listed(total_rows),
        breaches,
        link: None,
    })
}

/// Each side's total value and samples: how values become shares and sample counts.
struct Scale {
    totals: [u64; 2],
    samples: [u64; 2],
}

impl Scale {
    fn new(base: &Side, new: &Side, totals: [u64; 2]) -> Scale {
        Scale {
            totals,
            samples: [
                base.samples.unwrap_or(totals[0]),
                new.samples.unwrap_or(totals[1]),
            ],
        }
    }

    /// `value` of side `i` in samples, at the side's average value per sample.
    fn samples_of(&self, value: u64, i: usize) -> u64 {
        if self.samples[i] == self.totals[i] {
            return value;
        }
        let exact = value as f64 * self.samples[i] as f64 / self.totals[i] as f64;
        // Rounded, but a function with any value keeps at least its one sample.
        (exact.round() as u64).max(u64::from(value > 0))
    }

    fn row(&self, function: String, values: [u64; 2], rule: &Rule) -> Row {
        let percent = |i: usize| values[i] as f64 * 100.0 / self.totals[i] as f64;
        let [base_samples, new_samples] = [0, 1].map(|i| self.samples_of(values[i], i));
        let judged = rule.judge(Counts {
            base: base_samples,
            base_total: self.samples[0],
            new: new_samples,
            new_total: self.samples[1],
        });
        Row {
            function,
            base_value: values[0],
            new_value: values[1],
            base_samples,
            new_samples,
            base_percent: percent(0),
            new_percent: percent(1),
            change_points: percent(1) - percent(0),
            z: judged.z,
            significant: judged.significant,
        }
    }

    fn side(&self, side: &Side, value: u64, i: usize) -> SideReport {
        SideReport {
            label: side.label.to_owned(),
            value,
            samples: self.samples[i],
            samples_counted: side.samples.is_some(),
        }
    }
}

#[cfg(test)]
mod tests;
