//! One function's timeline as the strip under a flame graph charts it: a `function_timeline`
//! answer turned into the stacked form the timeline chart draws — the function's self time and
//! the time in what it calls (together its total), or, grouped (by pod, ...), each group's
//! total — and the sums the strip reads out. Pure.

use crate::contract::explore::{FunctionTimelineAnswer, TimelineAnswer, TimelineRow};

/// The series of an ungrouped function timeline's own time.
pub const SELF_SERIES: &str = "self";
/// The series of the rest of its total: the functions it calls.
pub const CALLEES_SERIES: &str = "callees";

/// The answer as a timeline: ungrouped, each bucket's self and callees stacked (their sum is
/// the total); grouped, each group's total.
pub fn as_timeline(answer: &FunctionTimelineAnswer) -> TimelineAnswer {
    let grouped = answer.values.iter().any(|p| p.group.is_some());
    let mut values = Vec::with_capacity(answer.values.len() * 2);
    for p in &answer.values {
        if grouped {
            values.push(TimelineRow {
                time: p.time,
                group: p.group.clone(),
                value: p.total,
            });
            continue;
        }
        let callees = p.total.saturating_sub(p.self_value);
        for (name, value) in [(SELF_SERIES, p.self_value), (CALLEES_SERIES, callees)] {
            if value > 0 {
                values.push(TimelineRow {
                    time: p.time,
                    group: Some(name.to_owned()),
                    value,
                });
            }
        }
    }
    TimelineAnswer {
        interval: answer.interval,
        columns: answer.columns.clone(),
        values,
    }
}

/// The function's self and total over the whole answer.
pub fn sums(answer: &FunctionTimelineAnswer) -> (u64, u64) {
    answer.values.iter().fold((0u64, 0u64), |(s, t), p| {
        (s.saturating_add(p.self_value), t.saturating_add(p.total))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::explore::FunctionPoint;

    fn p(time: i64, group: Option<&str>, self_value: u64, total: u64) -> FunctionPoint {
        FunctionPoint {
            time,
            group: group.map(str::to_owned),
            self_value,
            total,
        }
    }

    fn answer(values: Vec<FunctionPoint>) -> FunctionTimelineAnswer {
        FunctionTimelineAnswer {
            interval: 60,
            columns: vec![],
            values,
        }
    }

    #[test]
    fn self_and_callees_stack_to_the_total_and_groups_chart_totals() {
        let plain = answer(vec![
            p(0, None, 3, 10),
            p(60, None, 0, 4),
            p(120, None, 5, 5),
        ]);
        let stacked = as_timeline(&plain);
        let rows: Vec<(i64, Option<&str>, u64)> = stacked
            .values
            .iter()
            .map(|r| (r.time, r.group.as_deref(), r.value))
            .collect();
        assert_eq!(
            rows,
            [
                (0, Some("self"), 3),
                (0, Some("callees"), 7),
                (60, Some("callees"), 4),
                (120, Some("self"), 5)
            ]
        );
        assert_eq!(sums(&plain), (8, 19));
        let pods = answer(vec![p(0, Some("a"), 1, 2), p(0, Some("b"), 0, 6)]);
        let t = as_timeline(&pods);
        assert_eq!(t.values.len(), 2);
        assert_eq!(
            (t.values[1].group.as_deref(), t.values[1].value),
            (Some("b"), 6)
        );
        assert_eq!(sums(&pods), (1, 8));
    }
}
