//! Which functions grew inside which process: for each process with samples on both sides,
//! each function's share of that process's own samples, judged by the significance rule —
//! what an alert such as "any function's share of a service's CPU grew by more than 5 points"
//! asks. Processes new or vanished since the baseline have nothing to compare and are left
//! out (the functions answer lists them apart).

use std::collections::HashMap;

use super::function_change::{all_by_process, judge_values, value_per_sample};
use super::function_sums::FunctionSums;
use super::functions::FunctionMetric;
use crate::stats::significance::{Counts, Rule};

/// One function's growth inside one process.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessGrowth {
    /// The process.
    pub app_service: String,
    /// The function.
    pub function: String,
    /// Its share of the process's samples in the baseline, in percent.
    pub before: f64,
    /// Its share now, in percent.
    pub after: f64,
    /// `after - before`, in percentage points.
    pub change: f64,
    /// The rule's z-score of the change.
    pub z: f64,
}

/// Every function whose share of some process grew by more than `min_points` and that `rule`
/// calls a change (on-CPU values counted in samples, as the functions answer counts them),
/// largest change first, then by process and name.
pub fn grown_in_processes(
    now: &FunctionSums,
    base: &FunctionSums,
    metric: FunctionMetric,
    event_type: Option<&str>,
    rule: Rule,
    min_points: f64,
) -> Vec<ProcessGrowth> {
    let unit = value_per_sample(event_type);
    let (now_all, base_all) = (all_by_process(now), all_by_process(base));
    let mut out = Vec::new();
    for name in now.functions.keys() {
        let now_fn = per_process(now, name, metric);
        let base_fn = per_process(base, name, metric);
        for (app, value) in &now_fn {
            let (Some(&n2), Some(&n1)) = (now_all.get(*app), base_all.get(*app)) else {
                continue;
            };
            if n1 == 0 || n2 == 0 {
                continue;
            }
            let counts = Counts {
                base: base_fn.get(app).copied().unwrap_or(0),
                base_total: n1,
                new: *value,
                new_total: n2,
            };
            let j = judge_values(rule, unit, |r| r.judge(counts));
            if j.significant && j.change_points > min_points {
                out.push(ProcessGrowth {
                    app_service: (*app).to_owned(),
                    function: name.clone(),
                    before: j.base_share * 100.0,
                    after: j.new_share * 100.0,
                    change: j.change_points,
                    z: j.z,
                });
            }
        }
    }
    out.sort_by(|a, b| {
        b.change
            .total_cmp(&a.change)
            .then_with(|| a.app_service.cmp(&b.app_service))
            .then_with(|| a.function.cmp(&b.function))
    });
    out
}

/// A function's metric per process (groups added up).
fn per_process<'a>(
    s: &'a FunctionSums,
    name: &str,
    metric: FunctionMetric,
) -> HashMap<&'a str, u64> {
    super::function_change::function_by_process(s, name, metric)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::explore::SelfTotal;

    fn side(gateway_encode: u64, db_scan: u64) -> FunctionSums {
        let mut s = FunctionSums::default();
        for (app, all, f, v) in [
            ("gateway", 1_000, "encode", gateway_encode),
            ("db", 5_000, "scan", db_scan),
        ] {
            let p = s.place(&(app.to_owned(), None));
            s.add_all(p, all);
            s.all += all;
            s.add(
                f,
                p,
                SelfTotal {
                    self_value: v,
                    total: v,
                },
            );
        }
        s
    }

    #[test]
    fn a_function_that_grew_inside_its_process_and_not_noise() {
        let rule = Rule::default();
        let (now, base) = (side(500, 2_030), side(60, 2_000));
        let grown = grown_in_processes(&now, &base, FunctionMetric::Total, None, rule, 5.0);
        assert_eq!(grown.len(), 1, "{grown:?}");
        let g = &grown[0];
        assert_eq!(
            (g.app_service.as_str(), g.function.as_str()),
            ("gateway", "encode")
        );
        assert!((g.before - 6.0).abs() < 1e-9 && (g.after - 50.0).abs() < 1e-9);
        assert!((g.change - 44.0).abs() < 1e-9 && g.z > 3.0);
        // Past the threshold only.
        assert!(
            grown_in_processes(&now, &base, FunctionMetric::Total, None, rule, 50.0).is_empty()
        );
        // A process absent from the baseline has nothing to compare.
        let mut fresh = now.clone();
        let p = fresh.place(&("cc1".to_owned(), None));
        fresh.add_all(p, 100);
        fresh.add(
            "main",
            p,
            SelfTotal {
                self_value: 100,
                total: 100,
            },
        );
        let grown = grown_in_processes(&fresh, &base, FunctionMetric::Total, None, rule, 5.0);
        assert!(grown.iter().all(|g| g.app_service != "cc1"));
    }
}
