//! The explore answers: rows that serialise as the arrays of a `{columns, values}` table (and
//! read back from them, for the viewer), and the finishing steps every store applies — ranking,
//! prefixes, group limits — so a local and an upstream answer cannot differ in them.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::point::TimelineRow;
use super::{bucket_start, TimelineQuery, MAX_SERVICES, OTHER_GROUP};
use crate::contract::envelope::Table;

/// One `services` row: `[app_service, profile_language_type, profile_event_type, value]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    from = "(String, String, String, u64)",
    into = "(String, String, String, u64)"
)]
pub struct ServiceRow {
    /// The process (or `Total`).
    pub app_service: String,
    /// `profile_language_type`.
    pub profile_language_type: String,
    /// `profile_event_type`.
    pub profile_event_type: String,
    /// Summed `profile_value` over the range.
    pub value: u64,
}

impl From<(String, String, String, u64)> for ServiceRow {
    fn from((app_service, language, event_type, value): (String, String, String, u64)) -> Self {
        ServiceRow {
            app_service,
            profile_language_type: language,
            profile_event_type: event_type,
            value,
        }
    }
}

impl From<ServiceRow> for (String, String, String, u64) {
    fn from(r: ServiceRow) -> Self {
        (
            r.app_service,
            r.profile_language_type,
            r.profile_event_type,
            r.value,
        )
    }
}

/// The column names of a `services` answer.
pub const SERVICE_COLUMNS: [&str; 4] = [
    "app_service",
    "profile_language_type",
    "profile_event_type",
    "value",
];

/// Orders services by value (highest first), ties by name, language and event type, and keeps
/// at most [`MAX_SERVICES`].
pub fn rank_services(mut rows: Vec<ServiceRow>) -> Table<ServiceRow> {
    rows.sort_by(|a, b| {
        (
            b.value,
            &a.app_service,
            &a.profile_language_type,
            &a.profile_event_type,
        )
            .cmp(&(
                a.value,
                &b.app_service,
                &b.profile_language_type,
                &b.profile_event_type,
            ))
    });
    rows.truncate(MAX_SERVICES);
    table(&SERVICE_COLUMNS, rows)
}

fn table<R>(columns: &[&str], values: Vec<R>) -> Table<R> {
    Table {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        values,
    }
}

/// One `tags` or `tag_values` row: `[value, count]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(String, u64)", into = "(String, u64)")]
pub struct ValueCount {
    /// A tag name (`tags`) or value (`tag_values`).
    pub value: String,
    /// Samples carrying it.
    pub count: u64,
}

impl From<(String, u64)> for ValueCount {
    fn from((value, count): (String, u64)) -> Self {
        ValueCount { value, count }
    }
}

impl From<ValueCount> for (String, u64) {
    fn from(r: ValueCount) -> Self {
        (r.value, r.count)
    }
}

/// Whether `value` starts with `prefix`, ASCII case ignored.
pub fn has_prefix(value: &str, prefix: &str) -> bool {
    value
        .as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// The `[value, count]` table of summed counts: values starting with `prefix` (if any), by count
/// (highest first) then value, at most `limit` of them. Empty values are left out.
pub fn rank_counts(
    counts: HashMap<String, u64>,
    prefix: Option<&str>,
    limit: usize,
) -> Table<ValueCount> {
    let mut rows: Vec<ValueCount> = counts
        .into_iter()
        .filter(|(v, _)| !v.is_empty() && prefix.is_none_or(|p| has_prefix(v, p)))
        .map(ValueCount::from)
        .collect();
    rows.sort_by(|a, b| (b.count, &a.value).cmp(&(a.count, &b.value)));
    rows.truncate(limit);
    table(&["value", "count"], rows)
}

/// The groups of a timeline kept by name: the `limit` largest by their summed values (ties by
/// name); the rest are summed into [`OTHER_GROUP`].
pub(super) fn kept_groups<'a>(
    values: impl Iterator<Item = (&'a Option<String>, u64)>,
    limit: usize,
) -> HashSet<Option<String>> {
    let mut totals: HashMap<&Option<String>, u64> = HashMap::new();
    for (group, value) in values {
        // Saturating: stored sums may already be at i64::MAX, and several such add up.
        let total = totals.entry(group).or_default();
        *total = total.saturating_add(value);
    }
    let mut ranked: Vec<(&Option<String>, u64)> = totals.into_iter().collect();
    ranked.sort_by(|a, b| (b.1, a.0).cmp(&(a.1, b.0)));
    ranked
        .iter()
        .take(limit)
        .map(|(g, _)| (*g).clone())
        .collect()
}

/// The `timeline` result.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineAnswer {
    /// Bucket length in seconds.
    pub interval: i64,
    /// `["time", "value"]`, or `["time", <group_by>, "value"]`.
    pub columns: Vec<String>,
    /// Points by time, then group name; buckets without samples are left out.
    pub values: Vec<TimelineRow>,
}

impl TimelineAnswer {
    /// The answer for `q` from summed `(bucket, group, value)` points, in any order and with
    /// repeats (they are added up): groups beyond the limit are summed into [`OTHER_GROUP`].
    pub fn finish(q: &TimelineQuery, points: Vec<TimelineRow>) -> TimelineAnswer {
        let mut columns = vec!["time".to_owned()];
        columns.extend(q.group_by.as_ref().map(|(name, _)| name.clone()));
        columns.push("value".to_owned());
        let kept = kept_groups(points.iter().map(|p| (&p.group, p.value)), q.group_limit);
        let mut sums: HashMap<(i64, Option<String>), u64> = HashMap::new();
        for p in points {
            let group = if kept.contains(&p.group) {
                p.group
            } else {
                Some(OTHER_GROUP.to_owned())
            };
            let sum = sums
                .entry((bucket_start(p.time, q.interval), group))
                .or_default();
            *sum = sum.saturating_add(p.value);
        }
        let mut values: Vec<TimelineRow> = sums
            .into_iter()
            .map(|((time, group), value)| TimelineRow { time, group, value })
            .collect();
        values.sort_by(|a, b| (a.time, &a.group).cmp(&(b.time, &b.group)));
        TimelineAnswer {
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

    fn row(time: i64, group: Option<&str>, value: u64) -> TimelineRow {
        TimelineRow {
            time,
            group: group.map(str::to_owned),
            value,
        }
    }

    #[test]
    fn rows_read_and_write_as_arrays() {
        let answer: TimelineAnswer = serde_json::from_str(
            r#"{"interval":60,"columns":["time","pod","value"],"values":[[60,"a",5],[120,"",1]]}"#,
        )
        .unwrap();
        assert_eq!(
            answer.values,
            vec![row(60, Some("a"), 5), row(120, Some(""), 1)]
        );
        let plain: Vec<TimelineRow> = serde_json::from_str("[[60,7]]").unwrap();
        assert_eq!(plain, vec![row(60, None, 7)]);
        assert_eq!(
            serde_json::to_string(&answer.values[0]).unwrap(),
            r#"[60,"a",5]"#
        );
        assert_eq!(serde_json::to_string(&plain[0]).unwrap(), "[60,7]");
        assert!(serde_json::from_str::<TimelineRow>("[60,1,2]").is_err());
        let services: Table<ServiceRow> =
            serde_json::from_str(r#"{"columns":[],"values":[["redis","eBPF","on-cpu",3]]}"#)
                .unwrap();
        assert_eq!(services.values[0].value, 3);
        assert_eq!(
            serde_json::to_string(&services.values[0]).unwrap(),
            r#"["redis","eBPF","on-cpu",3]"#
        );
        let counts: Vec<ValueCount> = serde_json::from_str(r#"[["pod",4]]"#).unwrap();
        assert_eq!(serde_json::to_string(&counts).unwrap(), r#"[["pod",4]]"#);
    }

    #[test]
    fn finishing_groups_keeps_the_largest_and_sums_the_rest() {
        let body = br#"{"profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":1,"time_end":200,"interval":60,"group_by":"pod","group_limit":2}"#;
        let mut q = parse_timeline_body(body).unwrap();
        let points = vec![
            row(65, Some("b"), 10),
            row(61, Some("a"), 5),
            row(60, Some("a"), 6),
            row(60, Some("c"), 3),
            row(125, Some(""), 1),
            row(130, Some("d"), 2),
        ];
        let a = TimelineAnswer::finish(&q, points.clone());
        assert_eq!(a.columns, ["time", "pod", "value"]);
        assert_eq!(
            a.values,
            vec![
                row(60, Some("a"), 11),
                row(60, Some("b"), 10),
                row(60, Some("other"), 3),
                row(120, Some("other"), 3),
            ]
        );
        q.group_limit = 10;
        assert_eq!(TimelineAnswer::finish(&q, points).values.len(), 5);
        q.group_by = None;
        let plain = TimelineAnswer::finish(&q, vec![row(61, None, 1), row(119, None, 2)]);
        assert_eq!(plain.columns, ["time", "value"]);
        assert_eq!(plain.values, vec![row(60, None, 3)]);
    }

    #[test]
    fn ranking_services_and_counts() {
        let s = |a: &str, v| ServiceRow::from((a.to_owned(), "eBPF".into(), "on-cpu".into(), v));
        let ranked = rank_services(vec![s("b", 5), s("a", 5), s("c", 9)]);
        let names: Vec<_> = ranked
            .values
            .iter()
            .map(|r| r.app_service.as_str())
            .collect();
        assert_eq!(names, ["c", "a", "b"]);
        assert_eq!(ranked.columns, SERVICE_COLUMNS);
        let counts: HashMap<String, u64> = [("Web-1", 3), ("web-2", 3), ("db", 9), ("", 50)]
            .into_iter()
            .map(|(v, c)| (v.to_owned(), c))
            .collect();
        let all = rank_counts(counts.clone(), None, 10);
        let names: Vec<_> = all.values.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(names, ["db", "Web-1", "web-2"]);
        let web = rank_counts(counts, Some("WEB"), 1);
        assert_eq!(web.values, vec![ValueCount::from(("Web-1".to_owned(), 3))]);
        assert!(has_prefix("Ünï", "Ünï") && !has_prefix("a", "ab") && has_prefix("x", ""));
    }
}
