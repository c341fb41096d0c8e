//! The functions answers: the sums every backend hands over ([`FunctionSums`], by function
//! name and place) and the finishing step they share ([`FunctionsAnswer::finish`]: shares,
//! baseline change, search, ranking, paging, the places listed), so two stores given the same
//! samples answer byte for byte alike; and the function timeline's rows and finishing step.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::function_places::places;
use super::functions::{FunctionMetric, FunctionOrder, FunctionsQuery};

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

    pub(super) fn of(&self, metric: FunctionMetric) -> u64 {
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
    /// Summed value of every sample at each place (what a place's shares are of).
    pub place_all: Vec<u64>,
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
                self.place_all.push(0);
                self.places.len() - 1
            }
        }
    }

    /// Adds `value` (of every sample) to the place of index `place`.
    pub fn add_all(&mut self, place: usize, value: u64) {
        if let Some(all) = self.place_all.get_mut(place) {
            *all = all.saturating_add(value);
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

    pub(super) fn summed(&self, name: &str) -> SelfTotal {
        let mut out = SelfTotal::default();
        for (_, v) in self.functions.get(name).into_iter().flatten() {
            out.add(*v);
        }
        out
    }
}

type PlaceForm = (
    String,
    Option<String>,
    u64,
    u64,
    Option<u64>,
    Option<u64>,
    Option<f64>,
);

/// One place of a row: `[app_service, group, self, total, baseline_self, baseline_total,
/// change]` (`group` null when not grouped, the baseline's null when not comparing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "PlaceForm", into = "PlaceForm")]
pub struct PlaceValue {
    /// The process.
    pub app_service: String,
    /// The group's value (`""` for samples without the tag), when grouped.
    pub group: Option<String>,
    /// Self there.
    pub self_value: u64,
    /// Total there.
    pub total: u64,
    /// The baseline's self there, when comparing.
    pub baseline_self: Option<u64>,
    /// The baseline's total there, when comparing.
    pub baseline_total: Option<u64>,
    /// The change of the metric's share of the place's own samples, in percentage points (as
    /// that service's comparison shows it, normalised), when comparing.
    pub change: Option<f64>,
}

impl From<PlaceForm> for PlaceValue {
    fn from(p: PlaceForm) -> Self {
        PlaceValue {
            app_service: p.0,
            group: p.1,
            self_value: p.2,
            total: p.3,
            baseline_self: p.4,
            baseline_total: p.5,
            change: p.6,
        }
    }
}

impl From<PlaceValue> for PlaceForm {
    fn from(p: PlaceValue) -> Self {
        (
            p.app_service,
            p.group,
            p.self_value,
            p.total,
            p.baseline_self,
            p.baseline_total,
            p.change,
        )
    }
}

/// The column names of a `functions` answer, in row order.
pub const FUNCTION_COLUMNS: [&str; 12] = [
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
    /// The largest change among its places (each of its own place's samples), when comparing.
    pub place_change: Option<f64>,
    /// Places it ran in, in all.
    pub place_count: u64,
    /// [`PLACES_PER_FUNCTION`] of them: the busiest by the metric, or, sorted by place change,
    /// those whose share grew most.
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
            place_change: r.9,
            place_count: r.10,
            places: r.11,
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
pub(super) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
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
        place_change: None,
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
    let change = |r: &FunctionRow| match q.order {
        FunctionOrder::Change => r.change.unwrap_or(0.0),
        FunctionOrder::PlaceChange => r.place_change.unwrap_or(0.0),
        FunctionOrder::Value => 0.0,
    };
    let by_change = change(b).total_cmp(&change(a));
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
        let by_place = q.order == FunctionOrder::PlaceChange;
        let mut rows: Vec<FunctionRow> = names
            .into_iter()
            .filter(wanted)
            .map(|n| {
                let mut r = row(n, &now, base.as_ref(), q.metric);
                // Sorting by place change needs every row's places; otherwise a page's do.
                if by_place {
                    places(&mut r, &now, base.as_ref(), q);
                }
                r
            })
            .collect();
        rows.sort_by(|a, b| ranked(q, a, b));
        let total_rows = rows.len() as u64;
        let mut values: Vec<FunctionRow> = rows.into_iter().skip(q.offset).take(q.limit).collect();
        if !by_place {
            for r in &mut values {
                places(r, &now, base.as_ref(), q);
            }
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
