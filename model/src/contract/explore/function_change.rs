//! What a function's change against a baseline is, on a fleet where processes come and go.
//!
//! A function's share of every sample moves when it grows inside a process, but also when a
//! process appears (a compiler that lived two seconds: its `main` and `_start` are "new"),
//! vanishes, or runs more this hour than the last. Only the first is a regression. So when
//! the baseline is the same samples at another time, the change is measured inside each
//! process present on both sides and weighed by that process's share of those processes' CPU
//! now ([`Rule::judge_strata`]): points of the fleet a change inside some process costs.
//! Processes present on one side only are listed apart ([`ProcessShift`]), not as growth.
//! When the baseline is another set of samples (its own tag filter: pod a against pod b),
//! the two sides are one stratum each, and the change is the plain change of the share.
//!
//! Shares are of the values; the rule counts samples: on-CPU values are µs at the collector's
//! 99 Hz ([`ON_CPU_US_PER_SAMPLE`]); other event types' values are taken as counts (the rule's
//! sample floor still holds, its z-score overstates how sure a row is). A z-score computed on
//! values is √(value per sample) times the one on samples (the pooled share is the same, the
//! variance scales with 1 / n), so the rule is applied to the values exactly ([`judge_values`]),
//! without rounding small values to no samples.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::function_sums::{share, FunctionSums};
use super::functions::{FunctionMetric, FunctionsQuery};
use crate::stats::significance::{Counts, Judgement, Rule};
use crate::stats::strata::Stratum;

/// Value of one on-CPU sample at the collector's (and the demo's) 99 Hz, in µs.
pub const ON_CPU_US_PER_SAMPLE: u64 = 10_101;
/// Functions listed per new or vanished process.
pub const FUNCTIONS_PER_SHIFT: usize = 5;

/// The value one sample of `event_type` stands for (1 when not known).
pub fn value_per_sample(event_type: Option<&str>) -> u64 {
    match event_type {
        Some("on-cpu") => ON_CPU_US_PER_SAMPLE,
        _ => 1,
    }
}

/// `judge` (of [`Rule::judge`] or [`Rule::judge_strata`]) applied to counts in values of
/// `unit` each as if they were samples: the shares of the values, the rule's z-score and
/// sample floor of value ÷ `unit` samples.
pub(super) fn judge_values(rule: Rule, unit: u64, judge: impl Fn(&Rule) -> Judgement) -> Judgement {
    let root = (unit.max(1) as f64).sqrt();
    let on_values = Rule {
        min_z: rule.min_z * root,
        min_samples: rule.min_samples.saturating_mul(unit.max(1)),
    };
    let j = judge(&on_values);
    Judgement { z: j.z / root, ..j }
}

/// A process with samples on one side only: new in the range, or vanished since the baseline.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessShift {
    /// The process.
    pub app_service: String,
    /// Its samples' value on the side it ran on.
    pub value: u64,
    /// That value as a percentage of every sample of that side.
    pub share: f64,
    /// Its [`FUNCTIONS_PER_SHIFT`] largest functions by the metric, with their values there.
    pub functions: Vec<ShiftFunction>,
}

/// One function of a [`ProcessShift`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShiftFunction {
    /// Its name as it appears in frames.
    pub function: String,
    /// Its value (self or total, as the metric) in that process.
    pub value: u64,
}

/// Both sides' processes, and how a function's change is judged across them.
pub(super) struct Processes {
    /// Every sample's value per process, now and in the baseline.
    now_all: HashMap<String, u64>,
    base_all: HashMap<String, u64>,
    /// Whether changes are measured per process (a baseline of the same samples at another
    /// time) or over the whole of each side.
    per_process: bool,
    /// The value of one sample.
    unit: u64,
    rule: Rule,
    metric: FunctionMetric,
    /// Every sample's value now in the processes on both sides.
    both_all: u64,
}

/// Every sample's value per process (the places' groups added up).
pub(super) fn all_by_process(s: &FunctionSums) -> HashMap<String, u64> {
    let mut out: HashMap<String, u64> = HashMap::new();
    for (place, all) in s.places.iter().zip(&s.place_all) {
        let v = out.entry(place.0.clone()).or_default();
        *v = v.saturating_add(*all);
    }
    out
}

/// A function's metric per process on one side.
pub(super) fn function_by_process<'a>(
    s: &'a FunctionSums,
    name: &str,
    metric: FunctionMetric,
) -> HashMap<&'a str, u64> {
    let mut out: HashMap<&str, u64> = HashMap::new();
    for (i, v) in s.functions.get(name).into_iter().flatten() {
        if let Some(place) = s.places.get(*i) {
            let sum = out.entry(place.0.as_str()).or_default();
            *sum = sum.saturating_add(v.of(metric));
        }
    }
    out
}

impl Processes {
    /// The processes of `now` and `base` for `q`.
    pub(super) fn new(q: &FunctionsQuery, now: &FunctionSums, base: &FunctionSums) -> Self {
        let per_process = q
            .baseline
            .as_ref()
            .is_none_or(|b| b.filter == q.selection.filter);
        let (now_all, base_all) = (all_by_process(now), all_by_process(base));
        let both_all = now_all
            .iter()
            .filter(|(a, v)| **v > 0 && base_all.get(*a).is_some_and(|b| *b > 0))
            .fold(0u64, |s, (_, v)| s.saturating_add(*v));
        Processes {
            now_all,
            base_all,
            both_all,
            per_process,
            unit: value_per_sample(q.selection.event_type.as_deref()).max(1),
            rule: Rule::default(),
            metric: q.metric,
        }
    }

    /// Whether changes are measured per process (and processes listed apart).
    pub(super) fn per_process(&self) -> bool {
        self.per_process
    }

    /// Whether `app` has samples on both sides.
    fn on_both(&self, app: &str) -> bool {
        self.now_all.get(app).is_some_and(|v| *v > 0)
            && self.base_all.get(app).is_some_and(|v| *v > 0)
    }

    /// The change of function `name`, or `None` when it ran in no process present on both
    /// sides (it belongs to new or vanished processes only).
    pub(super) fn judge(
        &self,
        name: &str,
        now: &FunctionSums,
        base: &FunctionSums,
    ) -> Option<Judgement> {
        let now_fn = function_by_process(now, name, self.metric);
        let base_fn = function_by_process(base, name, self.metric);
        if !self.per_process {
            let sum = |m: &HashMap<&str, u64>| m.values().fold(0u64, |a, v| a.saturating_add(*v));
            let counts = Counts {
                base: sum(&base_fn),
                base_total: base.all,
                new: sum(&now_fn),
                new_total: now.all,
            };
            return Some(judge_values(self.rule, self.unit, |r| r.judge(counts)));
        }
        let mut apps: Vec<&str> = now_fn.keys().chain(base_fn.keys()).copied().collect();
        apps.sort_unstable();
        apps.dedup();
        apps.retain(|a| self.on_both(a));
        if apps.is_empty() {
            return None;
        }
        let mut strata: Vec<Stratum> = apps
            .iter()
            .map(|a| Stratum {
                weight: self.now_all[*a] as f64,
                counts: Counts {
                    base: (base_fn.get(a).copied().unwrap_or(0)),
                    base_total: self.base_all[*a],
                    new: (now_fn.get(a).copied().unwrap_or(0)),
                    new_total: self.now_all[*a],
                },
            })
            .collect();
        // The processes on both sides where the function did not run weigh in as one stratum
        // in which it has no samples: they change nothing but the weights.
        let ran: u64 = apps
            .iter()
            .fold(0u64, |s, a| s.saturating_add(self.now_all[*a]));
        let rest = self.both_all.saturating_sub(ran);
        strata.push(Stratum {
            weight: rest as f64,
            counts: Counts {
                base: 0,
                base_total: 1,
                new: 0,
                new_total: 1,
            },
        });
        Some(judge_values(self.rule, self.unit, |r| {
            r.judge_strata(&strata)
        }))
    }

    /// The processes present in the range only (new) and in the baseline only (vanished),
    /// largest first, each with its largest functions.
    pub(super) fn shifts(
        &self,
        now: &FunctionSums,
        base: &FunctionSums,
    ) -> (Vec<ProcessShift>, Vec<ProcessShift>) {
        let new = self.shifted(now, &self.now_all);
        let vanished = self.shifted(base, &self.base_all);
        (new, vanished)
    }

    /// The processes of `side` (whose values per process are `all`) not on both sides.
    fn shifted(&self, side: &FunctionSums, all: &HashMap<String, u64>) -> Vec<ProcessShift> {
        let mut out: Vec<ProcessShift> = all
            .iter()
            .filter(|(app, v)| **v > 0 && !self.on_both(app))
            .map(|(app, v)| ProcessShift {
                app_service: app.clone(),
                value: *v,
                share: share(*v, side.all),
                functions: Vec::new(),
            })
            .collect();
        out.sort_by(|a, b| {
            b.value
                .cmp(&a.value)
                .then_with(|| a.app_service.cmp(&b.app_service))
        });
        let index: HashMap<&str, usize> = out
            .iter()
            .enumerate()
            .map(|(i, s)| (s.app_service.as_str(), i))
            .collect();
        let mut lists: Vec<HashMap<&str, u64>> = vec![HashMap::new(); out.len()];
        for (name, places) in &side.functions {
            for (i, v) in places {
                let at = side.places.get(*i).and_then(|p| index.get(p.0.as_str()));
                if let Some(&k) = at {
                    let sum = lists[k].entry(name.as_str()).or_default();
                    *sum = sum.saturating_add(v.of(self.metric));
                }
            }
        }
        for (shift, list) in out.iter_mut().zip(lists) {
            let mut list: Vec<ShiftFunction> = list
                .into_iter()
                .map(|(function, value)| ShiftFunction {
                    function: function.to_owned(),
                    value,
                })
                .collect();
            list.sort_by(|a, b| {
                b.value
                    .cmp(&a.value)
                    .then_with(|| a.function.cmp(&b.function))
            });
            list.truncate(FUNCTIONS_PER_SHIFT);
            shift.functions = list;
        }
        out
    }
}

#[cfg(test)]
#[path = "function_change_tests.rs"]
mod tests;
