//! The places of a functions row: each service (and group) the function ran in, with its
//! values there and, when comparing, the baseline's and the change of its share of that
//! place's own samples — the figure the service's own comparison shows (normalised), so a
//! function that grew inside one small service is not lost among the fleet's big ones.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::function_sums::{share, FunctionSums, Place, SelfTotal};
use super::functions::{FunctionMetric, FunctionOrder, FunctionsQuery, PLACES_PER_FUNCTION};

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

/// One place's sums on both sides, and what each side's place holds in all.
struct Sides<'a> {
    place: &'a Place,
    now: SelfTotal,
    base: Option<SelfTotal>,
    all: (u64, u64),
}

impl Sides<'_> {
    /// The change of the share of the place's own samples; none for a place without samples
    /// on a side (a process new or vanished since the baseline: its functions did not grow
    /// from nothing, the process appeared).
    fn change(&self, metric: FunctionMetric) -> Option<f64> {
        let base = self.base?;
        if self.all.0 == 0 || self.all.1 == 0 {
            return None;
        }
        Some(share(self.now.of(metric), self.all.0) - share(base.of(metric), self.all.1))
    }
}

/// The places of `name` on both sides: the range's, and the baseline's too when comparing
/// (where it ran before but no longer does).
fn sides<'a>(name: &str, now: &'a FunctionSums, base: Option<&'a FunctionSums>) -> Vec<Sides<'a>> {
    let all_of = |s: &FunctionSums, i: usize| s.place_all.get(i).copied().unwrap_or(0);
    let mut out: Vec<Sides<'a>> = Vec::new();
    let mut at: HashMap<&Place, usize> = HashMap::new();
    for (i, v) in now.functions.get(name).into_iter().flatten() {
        let Some(place) = now.places.get(*i) else {
            continue;
        };
        at.insert(place, out.len());
        out.push(Sides {
            place,
            now: *v,
            base: base.map(|_| SelfTotal::default()),
            all: (all_of(now, *i), 0),
        });
    }
    let Some(base) = base else {
        return out;
    };
    // Each side's own indexes: a place's value of every sample is looked up by the place.
    let now_index: HashMap<&Place, usize> =
        now.places.iter().enumerate().map(|(i, p)| (p, i)).collect();
    for (i, v) in base.functions.get(name).into_iter().flatten() {
        let Some(place) = base.places.get(*i) else {
            continue;
        };
        let all = all_of(base, *i);
        match at.get(place) {
            Some(&k) => {
                out[k].base = Some(*v);
                out[k].all.1 = all;
            }
            None => out.push(Sides {
                place,
                now: SelfTotal::default(),
                base: Some(*v),
                all: (now_index.get(place).map_or(0, |&j| all_of(now, j)), all),
            }),
        }
    }
    // Places where it ran on both sides but the baseline's listed no sample of it still need
    // their baseline's value of every sample.
    let base_index: HashMap<&Place, usize> = base
        .places
        .iter()
        .enumerate()
        .map(|(i, p)| (p, i))
        .collect();
    for s in out.iter_mut().filter(|s| s.all.1 == 0) {
        s.all.1 = base_index.get(s.place).map_or(0, |&j| all_of(base, j));
    }
    out
}

/// The places of function `name`: their count, the first [`PLACES_PER_FUNCTION`] (by the
/// metric's value, or by change when the list is sorted by place change) and the largest
/// change.
pub(super) fn places(
    name: &str,
    now: &FunctionSums,
    base: Option<&FunctionSums>,
    q: &FunctionsQuery,
) -> (u64, Vec<PlaceValue>, Option<f64>) {
    let metric = q.metric;
    let mut list = sides(name, now, base);
    let changes: Vec<Option<f64>> = list.iter().map(|s| s.change(metric)).collect();
    let largest = changes
        .iter()
        .flatten()
        .copied()
        .max_by(|a, b| a.total_cmp(b));
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by(|&a, &b| {
        let by_change = match q.order {
            FunctionOrder::PlaceChange => changes[b]
                .unwrap_or(0.0)
                .total_cmp(&changes[a].unwrap_or(0.0)),
            _ => Ordering::Equal,
        };
        by_change
            .then_with(|| list[b].now.of(metric).cmp(&list[a].now.of(metric)))
            .then_with(|| list[a].place.cmp(list[b].place))
    });
    let count = list.len() as u64;
    let kept = order
        .into_iter()
        .take(PLACES_PER_FUNCTION)
        .map(|i| {
            let s = &mut list[i];
            PlaceValue {
                app_service: s.place.0.clone(),
                group: s.place.1.clone(),
                self_value: s.now.self_value,
                total: s.now.total,
                baseline_self: s.base.map(|b| b.self_value),
                baseline_total: s.base.map(|b| b.total),
                change: changes[i],
            }
        })
        .collect();
    (count, kept, largest)
}
