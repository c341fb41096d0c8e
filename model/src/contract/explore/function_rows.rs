//! The functions answers: the sums every backend hands over ([`FunctionSums`], by function
//! name and place) and the finishing step they share ([`FunctionsAnswer::finish`]: shares,
//! baseline change, search, ranking, paging, the places listed), so two stores given the same
//! samples answer byte for byte alike; and the function timeline's rows and finishing step.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::functions::{FunctionMetric, FunctionOrder, FunctionsQuery, PLACES_PER_FUNCTION};

/// Where a function ran: a process, and its group's value when grouped by a tag.
pub type Place = (String, Option<String>);

/// A self and a total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelfTotal {
    /// Value of samples ending in the function.
    pub self_value: u64,
    /// Value of samples with the function anywhere on the stack (once per sample).
    pub total: u64,
}

impl SelfTotal {
    pub(super) fn add(&mut self, other: SelfTotal) {
        // Saturating: stored sums may be near u64::MAX.
        self.self_value = self.self_value.saturating_add(other.self_value);
        self.total = self.total.saturating_add(other.total);
    }

    fn of(&self, metric: FunctionMetric) -> u64 {
        match metric {
            FunctionMetric::SelfValue => self.self_value,
            FunctionMetric::Total => self.total,
        }
    }
}

/// One side's sums (the range, or the baseline), as a backend hands them over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionSums {
    /// Summed value of every selected sample (what shares are of).
    pub all: u64,
    /// Where functions ran; `functions` refers to them by index.
    pub places: Vec<Place>,
    /// Per function name: its sums per place (an index into `places`, each at most once).
    pub functions: HashMap<String, Vec<(usize, SelfTotal)>>,
}

impl FunctionSums {
    /// The index of `place`, added if new (a linear search: for the few places of an answer
    /// built function by function; stores build `places` whole).
    pub fn place(&mut self, place: &Place) -> usize {
        match self.places.iter().position(|p| p == place) {
            Some(i) => i,
            None => {
                self.places.push(place.clone());
                self.places.len() - 1
            }
        }
    }

    /// Adds `value` to `function` at the place of index `place`.
    pub fn add(&mut self, function: &str, place: usize, value: SelfTotal) {
        let list = match self.functions.get_mut(function) {
            Some(l) => l,
            None => self.functions.entry(function.to_owned()).or_default(),
        };
        match list.iter_mut().find(|(p, _)| *p == place) {
            Some((_, sum)) => sum.add(value),
            None => list.push((place, value)),
        }
    }

    fn summed(&self, name: &str) -> SelfTotal {
        let mut out = SelfTotal::default();
        for (_, v) in self.functions.get(name).into_iter().flatten() {
            out.add(*v);
        }
        out
    }
}

/// One place of a row: `[app_service, group, self, total]` (`group` null when not grouped).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    from = "(String, Option<String>, u64, u64)",
    into = "(String, Option<String>, u64, u64)"
)]
pub struct PlaceValue {
    /// The process.
    pub app_service: String,
    /// The group's value (`""` for samples without the tag), when grouped.
    pub group: Option<String>,
    /// Self there.
    pub self_value: u64,
    /// Total there.
    pub total: u64,
}

impl From<(String, Option<String>, u64, u64)> for PlaceValue {
    fn from((app_service, group, self_value, total): (String, Option<String>, u64, u64)) -> Self {
        PlaceValue {
            app_service,
            group,
            self_value,
            total,
        }
    }
}

impl From<PlaceValue> for (String, Option<String>, u64, u64) {
    fn from(p: PlaceValue) -> Self {
        (p.app_service, p.group, p.self_value, p.total)
    }
}

/// The column names of a `functions` answer, in row order.
pub const FUNCTION_COLUMNS: [&str; 11] = [
    "function",
    "self",
    "total",
    "self_share",
    "total_share",
    "baseline_self",
    "baseline_total",
    "change",
    "ratio",
    "place_count",
    "places",
];

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
    u64,
    Vec<PlaceValue>,
);

/// One function: the array of [`FUNCTION_COLUMNS`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RowForm", into = "RowForm")]
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
    /// The metric's share minus the baseline's, in percentage points, when comparing.
    pub change: Option<f64>,
    /// The metric's share over the baseline's (null when the baseline's is 0).
    pub ratio: Option<f64>,
    /// Places it ran in, in all.
    pub place_count: u64,
    /// The busiest [`PLACES_PER_FUNCTION`] of them by the metric.
    pub places: Vec<PlaceValue>,
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
            place_count: r.9,
            places: r.10,
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
            r.place_count,
            r.places,
        )
    }
}

/// Which services an answer covers, when not all of them (answered from a DeepFlow querier).
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
}

/// `part` as a percentage of `whole` (0 of nothing).
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The places of one function, busiest by `metric` first, ties by name.
fn places(sums: &FunctionSums, name: &str, metric: FunctionMetric) -> (u64, Vec<PlaceValue>) {
    let mut list: Vec<(&Place, &SelfTotal)> = sums
        .functions
        .get(name)
        .into_iter()
        .flatten()
        .filter_map(|(p, v)| Some((sums.places.get(*p)?, v)))
        .collect();
    list.sort_by(|a, b| (b.1.of(metric), a.0).cmp(&(a.1.of(metric), b.0)));
    let count = list.len() as u64;
    let kept = list
        .into_iter()
        .take(PLACES_PER_FUNCTION)
        .map(|((app, group), v)| PlaceValue {
            app_service: app.clone(),
            group: group.clone(),
            self_value: v.self_value,
            total: v.total,
        })
        .collect();
    (count, kept)
}

/// The row of `name` without its places.
fn row(
    name: &str,
    now: &FunctionSums,
    base: Option<&FunctionSums>,
    metric: FunctionMetric,
) -> FunctionRow {
    let v = now.summed(name);
    let b = base.map(|b| (b.summed(name), b.all));
    let metric_share = share(v.of(metric), now.all);
    let base_share = b.map(|(bv, all)| share(bv.of(metric), all));
    FunctionRow {
        function: name.to_owned(),
        self_value: v.self_value,
        total: v.total,
        self_share: share(v.self_value, now.all),
        total_share: share(v.total, now.all),
        baseline_self: b.map(|(bv, _)| bv.self_value),
        baseline_total: b.map(|(bv, _)| bv.total),
        change: base_share.map(|s| metric_share - s),
        ratio: base_share.filter(|s| *s > 0.0).map(|s| metric_share / s),
        place_count: 0,
        places: Vec::new(),
    }
}

/// The order of two rows for `q`: by change or value, then value, then name.
fn ranked(q: &FunctionsQuery, a: &FunctionRow, b: &FunctionRow) -> Ordering {
    let value = |r: &FunctionRow| match q.metric {
        FunctionMetric::SelfValue => r.self_value,
        FunctionMetric::Total => r.total,
    };
    let by_change = match q.order {
        FunctionOrder::Change => b.change.unwrap_or(0.0).total_cmp(&a.change.unwrap_or(0.0)),
        FunctionOrder::Value => Ordering::Equal,
    };
    by_change
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
        let mut names: HashSet<&str> = now.functions.keys().map(String::as_str).collect();
        if let Some(b) = &base {
            names.extend(b.functions.keys().map(String::as_str));
        }
        let wanted = |n: &&str| {
            q.search
                .as_deref()
                .is_none_or(|s| n.to_lowercase().contains(s))
        };
        let mut rows: Vec<FunctionRow> = names
            .into_iter()
            .filter(wanted)
            .map(|n| row(n, &now, base.as_ref(), q.metric))
            .collect();
        rows.sort_by(|a, b| ranked(q, a, b));
        let total_rows = rows.len() as u64;
        let mut values: Vec<FunctionRow> = rows.into_iter().skip(q.offset).take(q.limit).collect();
        for r in &mut values {
            (r.place_count, r.places) = places(&now, &r.function, q.metric);
        }
        FunctionsAnswer {
            columns: FUNCTION_COLUMNS.iter().map(|c| (*c).to_owned()).collect(),
            values,
            rows: total_rows,
            offset: q.offset as u64,
            value: now.all,
            baseline_value: base.map(|b| b.all),
            coverage: None,
        }
    }
}

#[cfg(test)]
#[path = "function_rows_tests.rs"]
mod tests;
