//! The function timeline's answer: one function's self and total per bucket (and group), and
//! the finishing step every backend applies (group limit, `other`, bucket flooring, order).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::answer::kept_groups;
use super::function_sums::SelfTotal;
use super::{bucket_start, TimelineQuery, OTHER_GROUP};

/// One function timeline point: `[time, group, self, total]` (`group` null when not grouped).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    from = "(i64, Option<String>, u64, u64)",
    into = "(i64, Option<String>, u64, u64)"
)]
pub struct FunctionPoint {
    /// Bucket start, a multiple of the interval.
    pub time: i64,
    /// The group (`""` for samples without the tag, [`OTHER_GROUP`]) when grouped.
    pub group: Option<String>,
    /// Self in the bucket.
    pub self_value: u64,
    /// Total in the bucket.
    pub total: u64,
}

impl From<(i64, Option<String>, u64, u64)> for FunctionPoint {
    fn from((time, group, self_value, total): (i64, Option<String>, u64, u64)) -> Self {
        FunctionPoint {
            time,
            group,
            self_value,
            total,
        }
    }
}

impl From<FunctionPoint> for (i64, Option<String>, u64, u64) {
    fn from(p: FunctionPoint) -> Self {
        (p.time, p.group, p.self_value, p.total)
    }
}

/// The `function_timeline` result.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionTimelineAnswer {
    /// Bucket length in seconds.
    pub interval: i64,
    /// `["time", <group_by or "group">, "self", "total"]`.
    pub columns: Vec<String>,
    /// Points by time, then group; buckets where the function has no samples are left out.
    pub values: Vec<FunctionPoint>,
}

impl FunctionTimelineAnswer {
    /// The answer for `q` from `(bucket, group, self, total)` points in any order, with
    /// repeats (added up): groups beyond the limit (by total) are summed into [`OTHER_GROUP`].
    pub fn finish(q: &TimelineQuery, points: Vec<FunctionPoint>) -> FunctionTimelineAnswer {
        let group_name = q.group_by.as_ref().map_or("group", |(n, _)| n.as_str());
        let columns = ["time", group_name, "self", "total"]
            .map(str::to_owned)
            .to_vec();
        let live = points.iter().filter(|p| p.total > 0);
        let kept = kept_groups(live.map(|p| (&p.group, p.total)), q.group_limit);
        let mut sums: HashMap<(i64, Option<String>), SelfTotal> = HashMap::new();
        for p in points.into_iter().filter(|p| p.total > 0) {
            let group = match kept.contains(&p.group) {
                true => p.group,
                false => Some(OTHER_GROUP.to_owned()),
            };
            sums.entry((bucket_start(p.time, q.interval), group))
                .or_default()
                .add(SelfTotal {
                    self_value: p.self_value,
                    total: p.total,
                });
        }
        let mut values: Vec<FunctionPoint> = sums
            .into_iter()
            .map(|((time, group), v)| FunctionPoint {
                time,
                group,
                self_value: v.self_value,
                total: v.total,
            })
            .collect();
        values.sort_by(|a, b| (a.time, &a.group).cmp(&(b.time, &b.group)));
        FunctionTimelineAnswer {
            interval: q.interval,
            columns,
            values,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::explore::parse_timeline_body;

    fn p(time: i64, group: Option<&str>, self_value: u64, total: u64) -> FunctionPoint {
        FunctionPoint {
            time,
            group: group.map(str::to_owned),
            self_value,
            total,
        }
    }

    #[test]
    fn points_are_bucketed_grouped_and_limited() {
        let body = br#"{"profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":1,"time_end":200,"interval":60,"group_by":"pod","group_limit":1}"#;
        let mut q = parse_timeline_body(body).unwrap();
        let points = vec![
            p(61, Some("a"), 1, 5),
            p(65, Some("a"), 2, 6),
            p(70, Some("b"), 0, 3),
            p(130, Some("b"), 4, 4),
            p(130, Some("c"), 0, 0),
        ];
        let a = FunctionTimelineAnswer::finish(&q, points.clone());
        assert_eq!(a.columns, ["time", "pod", "self", "total"]);
        assert_eq!(
            a.values,
            vec![
                p(60, Some("a"), 3, 11),
                p(60, Some("other"), 0, 3),
                p(120, Some("other"), 4, 4)
            ]
        );
        assert_eq!(
            serde_json::to_string(&a.values[0]).unwrap(),
            r#"[60,"a",3,11]"#
        );
        q.group_by = None;
        let plain = FunctionTimelineAnswer::finish(&q, vec![p(61, None, 1, 2), p(119, None, 0, 1)]);
        assert_eq!(plain.columns, ["time", "group", "self", "total"]);
        assert_eq!(plain.values, vec![p(60, None, 1, 3)]);
        assert_eq!(
            serde_json::to_string(&plain.values[0]).unwrap(),
            "[60,null,1,3]"
        );
    }
}
