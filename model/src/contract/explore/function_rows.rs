//! The functions answer: its rows and the finishing step every backend applies to the sums it
//! read ([`FunctionsAnswer::finish`]: shares, baseline change, search, ranking, paging, the
//! places listed), so two stores given the same samples answer byte for byte alike.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::function_change::{ProcessShift, Processes};
use super::function_places::{places, PlaceValue};
use super::function_sums::{share, FunctionSums};
use super::functions::{FunctionMetric, FunctionOrder, FunctionsQuery};
use crate::stats::significance::Judgement;

/// The column names of a `functions` answer, in row order.
pub const FUNCTION_COLUMNS: [&str; 14] = [
    "function",
    "self",
    "total",
    "self_share",
    "total_share",
    "baseline_self",
    "baseline_total",
    "change",
    "ratio",
    "place_change",
    "place_count",
    "places",
    "z",
    "significant",
];

/// The row as written: [`FUNCTION_COLUMNS`] in order.
type RowForm = (
    String,
    u64,
    u64,
    f64,
    f64,
    Option<u64>,
    Option<u64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    u64,
    Vec<PlaceValue>,
    Option<f64>,
    Option<bool>,
);

/// A row as services before `z` and `significant` wrote it (read, never written).
type ShortRowForm = (
    String,
    u64,
    u64,
    f64,
    f64,
    Option<u64>,
    Option<u64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    u64,
    Vec<PlaceValue>,
);

/// Either form of a row.
#[derive(Deserialize)]
#[serde(untagged)]
enum AnyRowForm {
    Row(RowForm),
    Short(ShortRowForm),
}

/// One function: the array of [`FUNCTION_COLUMNS`] (a service may write the first twelve
/// only: the two after them came later).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "AnyRowForm", into = "RowForm")]
pub struct FunctionRow {
    /// Its name as it appears in frames.
    pub function: String,
    /// Summed self.
    pub self_value: u64,
    /// Summed total (each sample once).
    pub total: u64,
    /// Self as a percentage of every selected sample's value.
    pub self_share: f64,
    /// Total as a percentage of every selected sample's value.
    pub total_share: f64,
    /// The baseline's self, when comparing.
    pub baseline_self: Option<u64>,
    /// The baseline's total, when comparing.
    pub baseline_total: Option<u64>,
    /// The change of the metric's share against the baseline, in percentage points, when
    /// comparing: with a baseline of the same samples at another time, the change inside each
    /// process present on both sides weighed by its share of them (`function_change`); null
    /// for a function that ran only in processes new or vanished since. With a baseline tag
    /// filter of its own, the change of its share of every selected sample.
    pub change: Option<f64>,
    /// The metric's share over the baseline's, as `change` measures them (null when the
    /// baseline's is 0).
    pub ratio: Option<f64>,
    /// The largest change among its places (each of its own place's samples), when comparing.
    pub place_change: Option<f64>,
    /// Places it ran in, in all.
    pub place_count: u64,
    /// [`PLACES_PER_FUNCTION`] of them: the busiest by the metric, or, sorted by place change,
    /// those whose share grew most.
    pub places: Vec<PlaceValue>,
    /// How sure `change` is: its z-score by the significance rule (`stats::significance`),
    /// when it has one.
    pub z: Option<f64>,
    /// Whether the rule calls `change` a change (|z| and samples enough), when it has one.
    pub significant: Option<bool>,
}

impl From<AnyRowForm> for FunctionRow {
    fn from(r: AnyRowForm) -> Self {
        match r {
            AnyRowForm::Row(r) => r.into(),
            AnyRowForm::Short(r) => (
                r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8, r.9, r.10, r.11, None, None,
            )
                .into(),
        }
    }
}

impl From<RowForm> for FunctionRow {
    fn from(r: RowForm) -> Self {
        FunctionRow {
            function: r.0,
            self_value: r.1,
            total: r.2,
            self_share: r.3,
            total_share: r.4,
            baseline_self: r.5,
            baseline_total: r.6,
            change: r.7,
            ratio: r.8,
            place_change: r.9,
            place_count: r.10,
            places: r.11,
            z: r.12,
            significant: r.13,
        }
    }
}

impl From<FunctionRow> for RowForm {
    fn from(r: FunctionRow) -> Self {
        (
            r.function,
            r.self_value,
            r.total,
            r.self_share,
            r.total_share,
            r.baseline_self,
            r.baseline_total,
            r.change,
            r.ratio,
            r.place_change,
            r.place_count,
            r.places,
            r.z,
            r.significant,
        )
    }
}

/// Which services an answer covers, when not all of them (answered from a DeepFlow querier).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// The services read.
    pub services: Vec<String>,
    /// Services with samples in the range, in all.
    pub services_in_range: u64,
    /// What that means, for the page.
    pub note: String,
}

/// The `functions` result.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionsAnswer {
    /// [`FUNCTION_COLUMNS`].
    pub columns: Vec<String>,
    /// The page of the ranked list.
    pub values: Vec<FunctionRow>,
    /// Functions in the ranked list (after `search`), for paging.
    pub rows: u64,
    /// Rows skipped before `values`.
    pub offset: u64,
    /// Summed value of every selected sample.
    pub value: u64,
    /// The baseline's, when comparing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_value: Option<u64>,
    /// Which services were read, when not all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// When comparing with a baseline of the same samples at another time: the processes
    /// with samples in the range and none in the baseline, listed apart from what grew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_processes: Option<Vec<ProcessShift>>,
    /// The processes with samples in the baseline and none in the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vanished_processes: Option<Vec<ProcessShift>>,
}

/// The row of `name` without its places; `judged` is its change when comparing (`None` there
/// for a function of new or vanished processes only).
fn row(
    name: &str,
    now: &FunctionSums,
    base: Option<&FunctionSums>,
    judged: Option<Judgement>,
) -> FunctionRow {
    let v = now.summed(name);
    let b = base.map(|b| b.summed(name));
    FunctionRow {
        function: name.to_owned(),
        self_value: v.self_value,
        total: v.total,
        self_share: share(v.self_value, now.all),
        total_share: share(v.total, now.all),
        baseline_self: b.map(|bv| bv.self_value),
        baseline_total: b.map(|bv| bv.total),
        change: judged.map(|j| j.change_points),
        ratio: judged
            .filter(|j| j.base_share > 0.0)
            .map(|j| j.new_share / j.base_share),
        place_change: None,
        place_count: 0,
        places: Vec::new(),
        z: judged.map(|j| j.z),
        significant: judged.map(|j| j.significant),
    }
}

/// Where a row stands by change: what surely grew, then what the rule cannot tell, then what
/// surely shrank (so noise never outranks a change, and a sure shrink is not "what grew").
fn tier(r: &FunctionRow) -> u8 {
    match (r.significant, r.change) {
        (Some(true), Some(c)) if c > 0.0 => 0,
        (Some(true), Some(c)) if c < 0.0 => 2,
        _ => 1,
    }
}

/// The order of two rows for `q`: by change (within its tier) or value, then value, then name.
fn ranked(q: &FunctionsQuery, a: &FunctionRow, b: &FunctionRow) -> Ordering {
    let value = |r: &FunctionRow| match q.metric {
        FunctionMetric::SelfValue => r.self_value,
        FunctionMetric::Total => r.total,
    };
    let change = |r: &FunctionRow| match q.order {
        FunctionOrder::Change => r.change.unwrap_or(0.0),
        FunctionOrder::PlaceChange => r.place_change.unwrap_or(0.0),
        FunctionOrder::Value => 0.0,
    };
    let by_tier = match q.order {
        FunctionOrder::Change => tier(a).cmp(&tier(b)),
        _ => Ordering::Equal,
    };
    by_tier
        .then_with(|| change(b).total_cmp(&change(a)))
        .then_with(|| value(b).cmp(&value(a)))
        .then_with(|| a.function.cmp(&b.function))
}

impl FunctionsAnswer {
    /// The answer to `q` from the range's sums and, when comparing, the baseline's: every
    /// function of either side whose name contains `search`, ranked, one page of them.
    pub fn finish(
        q: &FunctionsQuery,
        now: FunctionSums,
        base: Option<FunctionSums>,
    ) -> FunctionsAnswer {
        let mut answer = Self::ranked(q, &now, base.as_ref());
        if q.order != FunctionOrder::PlaceChange {
            answer.fill_places(q, &now, base.as_ref());
        }
        answer
    }

    /// The page of `q`'s ranked list without the rows' places (which [`Self::fill_places`]
    /// adds), except when sorted by place change, which needs every row's places to rank.
    ///
    /// Without a baseline only the functions' values summed over their places are read, so a
    /// backend may then hand each function's sums at a single place here (a store keeping the
    /// fleet's sums ranks from those) and the page's own places to `fill_places`: the answer
    /// is the same. A comparison needs each function's processes (`function_change`).
    ///
    /// Sorted by change, functions that ran only in processes new or vanished since the
    /// baseline are not rows: those processes are listed apart (`new_processes`,
    /// `vanished_processes`).
    pub fn ranked(
        q: &FunctionsQuery,
        now: &FunctionSums,
        base: Option<&FunctionSums>,
    ) -> FunctionsAnswer {
        let mut names: HashSet<&str> = now.functions.keys().map(String::as_str).collect();
        if let Some(b) = base {
            names.extend(b.functions.keys().map(String::as_str));
        }
        let wanted = |n: &&str| {
            q.search
                .as_deref()
                .is_none_or(|s| n.to_lowercase().contains(s))
        };
        let processes = base.map(|b| Processes::new(q, now, b));
        let judge = |n: &str| Some(processes.as_ref()?.judge(n, now, base?));
        let by_place = q.order == FunctionOrder::PlaceChange;
        let mut rows: Vec<FunctionRow> = names
            .into_iter()
            .filter(wanted)
            .filter_map(|n| {
                let judged = judge(n);
                if q.order == FunctionOrder::Change && judged == Some(None) {
                    return None;
                }
                let mut r = row(n, now, base, judged.flatten());
                if by_place {
                    (r.place_count, r.places, r.place_change) = places(n, now, base, q);
                }
                Some(r)
            })
            .collect();
        rows.sort_by(|a, b| ranked(q, a, b));
        let total_rows = rows.len() as u64;
        let (new_processes, vanished_processes) = match (&processes, base) {
            (Some(p), Some(b)) if p.per_process() => {
                let (n, v) = p.shifts(now, b);
                (Some(n), Some(v))
            }
            _ => (None, None),
        };
        FunctionsAnswer {
            columns: FUNCTION_COLUMNS.iter().map(|c| (*c).to_owned()).collect(),
            values: rows.into_iter().skip(q.offset).take(q.limit).collect(),
            rows: total_rows,
            offset: q.offset as u64,
            value: now.all,
            baseline_value: base.map(|b| b.all),
            coverage: None,
            new_processes,
            vanished_processes,
        }
    }

    /// Lists each row's places from sums holding (at least) the places of the page's
    /// functions and every place's value of all samples.
    pub fn fill_places(
        &mut self,
        q: &FunctionsQuery,
        now: &FunctionSums,
        base: Option<&FunctionSums>,
    ) {
        for r in &mut self.values {
            (r.place_count, r.places, r.place_change) = places(&r.function, now, base, q);
        }
    }

    /// The names of the page's functions.
    pub fn page_functions(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|r| r.function.as_str())
    }
}

#[cfg(test)]
#[path = "function_rows_tests.rs"]
mod tests;
