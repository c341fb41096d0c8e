//! The statements Embers sends to the querier's SQL API (`POST /v1/query/`, `db=profile`): a
//! fixed template per endpoint, filled with numbers, field-table names and values quoted by the
//! contract (`'...'` with `\'` and `\\`). Client text never becomes SQL: the tag filter arrives
//! parsed and is rendered again from its typed conditions ([`render_filter`]), which is also
//! what the ProfileTracing forwarder sends instead of the client's text.
//!
//! | endpoint | template |
//! |---|---|
//! | services | `SELECT app_service, profile_language_type, profile_event_type, Sum(profile_value) AS v FROM T WHERE W GROUP BY app_service, profile_language_type, profile_event_type ORDER BY v DESC LIMIT 1000` |
//! | timeline | `SELECT time(time, I) AS toi[, G], Sum(profile_value) AS v FROM T WHERE W GROUP BY toi[, G] ORDER BY toi LIMIT N` |
//! | tags | `SELECT C1, ..., Cn, Count(row) AS n FROM T WHERE W GROUP BY C1, ..., Cn LIMIT 10000` |
//! | tag_values | `SELECT G, Count(row) AS n FROM T WHERE W GROUP BY G ORDER BY n DESC LIMIT 10000` |
//!
//! `T` is `in_process_metrics` (DeepFlow ≥ v7.1.2's 1-second aggregate) or `in_process` (older
//! servers, per-sample fields, and `thread`, which needs the stack text: then `G` is
//! `profile_location_str`). `W` is `time>=S AND time<=E` plus the process, language, event type
//! and filter conditions.

use embers_model::contract::explore::{
    Dimension, ServicesQuery, TagValuesQuery, TagsQuery, TimelineQuery, MAX_SERVICES,
};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{quote_tag_value, Condition, Op, TagFilter, Value};
use thiserror::Error;

use embers_model::contract::event::TOTAL_APP_SERVICE;

/// Most rows of a timeline statement (buckets × groups, or × stacks for `thread`).
pub(crate) const TIMELINE_ROWS: usize = 200_000;
/// Most rows of a tags or tag-values statement.
pub(crate) const TAG_ROWS: usize = 10_000;

/// Text tag columns of both profile tables that the tags statement groups by.
const TAG_COLUMNS: [&str; 28] = [
    "region",
    "az",
    "host",
    "chost",
    "vpc",
    "router",
    "dhcpgw",
    "lb",
    "natgw",
    "redis",
    "rds",
    "pod_cluster",
    "pod_ns",
    "pod_node",
    "pod_service",
    "pod_group",
    "pod",
    "service",
    "gprocess",
    "host_ip",
    "host_hostname",
    "chost_ip",
    "chost_hostname",
    "pod_node_ip",
    "pod_node_hostname",
    "ip",
    "app_instance",
    "agent",
];

/// Map-valued tags (a JSON object per row), whose keys are the open families' keys.
pub(crate) const MAP_TAGS: [&str; 4] = ["k8s.label", "k8s.annotation", "k8s.env", "cloud.tag"];

/// Fields only the raw `in_process` table has.
const SAMPLE_ONLY: [&str; 7] = [
    "_id",
    "profile_create_timestamp",
    "profile_in_timestamp",
    "profile_value_unit",
    "profile_id",
    "trace_id",
    "span_name",
];

/// A name that cannot be written into a statement.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("tag name {0:?} cannot be sent to the querier (backticks and control characters are not allowed)")]
pub struct RenderError(String);

/// Which table a statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `in_process_metrics`, the 1-second aggregate.
    Metrics,
    /// `in_process`, the samples.
    Samples,
}

impl Source {
    /// The table name.
    pub(crate) fn table(self) -> &'static str {
        match self {
            Source::Metrics => "in_process_metrics",
            Source::Samples => "in_process",
        }
    }
}

/// A statement, renderable for either table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement {
    select: String,
    condition: String,
    group: String,
    tail: String,
    /// Whether `in_process_metrics` can answer it.
    pub(crate) metrics: bool,
}

impl Statement {
    /// The SQL text for `source`.
    pub(crate) fn sql(&self, source: Source) -> String {
        format!(
            "SELECT {} FROM {} WHERE {} GROUP BY {}{}",
            self.select,
            source.table(),
            self.condition,
            self.group,
            self.tail
        )
    }
}

/// A field name as the querier reads it: bare if it is a plain identifier, else in backticks.
pub(crate) fn name(field: &str) -> Result<String, RenderError> {
    if !field.is_empty() && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(field.to_owned())
    } else if field.is_empty() || field.chars().any(|c| c == '`' || c.is_control()) {
        Err(RenderError(field.to_owned()))
    } else {
        Ok(format!("`{field}`"))
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::Text(s) => quote_tag_value(s),
        Value::Int(i) => i.to_string(),
    }
}

fn condition(c: &Condition) -> Result<String, RenderError> {
    let values: Vec<String> = c.values.iter().map(literal).collect();
    let first = values.first().cloned().unwrap_or_default();
    let op = match c.op {
        Op::Eq => format!("={first}"),
        Op::Ne => format!("!={first}"),
        Op::In => format!(" IN ({})", values.join(", ")),
        Op::NotIn => format!(" NOT IN ({})", values.join(", ")),
    };
    Ok(format!("{}{op}", name(c.field.name())?))
}

/// The canonical text of a parsed filter, in the querier's SQL: `pod='a' AND host IN ('x', 'y')`.
pub fn render_filter(filter: &TagFilter) -> Result<String, RenderError> {
    let parts: Result<Vec<String>, RenderError> = filter.conditions.iter().map(condition).collect();
    Ok(parts?.join(" AND "))
}

fn metrics_has(field: &str) -> bool {
    !SAMPLE_ONLY.contains(&field)
}

/// `W`: the range, process, language, event type and filter; and whether the metrics table has
/// every field it names.
fn condition_of(sel: &Selection, skip_total: bool) -> Result<(String, bool), RenderError> {
    let mut parts = vec![
        format!("time>={}", sel.time_start),
        format!("time<={}", sel.time_end),
    ];
    match &sel.app_service {
        Some(app) => parts.push(format!("app_service={}", quote_tag_value(app))),
        None if skip_total => parts.push(format!(
            "app_service!={}",
            quote_tag_value(TOTAL_APP_SERVICE)
        )),
        None => {}
    }
    if let Some(language) = &sel.language {
        parts.push(format!(
            "profile_language_type={}",
            quote_tag_value(language)
        ));
    }
    if let Some(event) = &sel.event_type {
        parts.push(format!("profile_event_type={}", quote_tag_value(event)));
    }
    for c in &sel.filter.conditions {
        parts.push(condition(c)?);
    }
    let metrics = sel
        .filter
        .conditions
        .iter()
        .all(|c| metrics_has(c.field.name()));
    Ok((parts.join(" AND "), metrics))
}

/// The column a dimension reads (`None` for `thread`, which is computed from the stack text).
pub(crate) fn dimension_column(d: &Dimension) -> Result<Option<String>, RenderError> {
    Ok(match d {
        Dimension::AppService => Some("app_service".to_owned()),
        Dimension::Language => Some("profile_language_type".to_owned()),
        Dimension::EventType => Some("profile_event_type".to_owned()),
        Dimension::Thread => None,
        Dimension::Tag(field) => Some(name(field.name())?),
    })
}

/// The column `G` reads: the dimension's, or the stack text for `thread`.
fn group_column(d: &Dimension) -> Result<(String, bool), RenderError> {
    Ok(match dimension_column(d)? {
        Some(column) => {
            let metrics = !matches!(d, Dimension::Tag(f) if !metrics_has(f.name()));
            (column, metrics)
        }
        None => ("profile_location_str".to_owned(), false),
    })
}

/// The services statement.
pub(crate) fn services(q: &ServicesQuery) -> Result<Statement, RenderError> {
    let (condition, metrics) = condition_of(&q.selection, false)?;
    let keys = "app_service, profile_language_type, profile_event_type";
    Ok(Statement {
        select: format!("{keys}, Sum(profile_value) AS v"),
        condition,
        group: keys.to_owned(),
        tail: format!(" ORDER BY v DESC LIMIT {MAX_SERVICES}"),
        metrics,
    })
}

/// The timeline statement.
pub(crate) fn timeline(q: &TimelineQuery) -> Result<Statement, RenderError> {
    let (condition, mut metrics) = condition_of(&q.selection, q.skips_total())?;
    let toi = format!("time(time, {}) AS toi", q.interval);
    let (select, group) = match &q.group_by {
        None => (format!("{toi}, Sum(profile_value) AS v"), "toi".to_owned()),
        Some((_, dimension)) => {
            let (column, ok) = group_column(dimension)?;
            metrics &= ok;
            (
                format!("{toi}, {column}, Sum(profile_value) AS v"),
                format!("toi, {column}"),
            )
        }
    };
    Ok(Statement {
        select,
        condition,
        group,
        tail: format!(" ORDER BY toi LIMIT {TIMELINE_ROWS}"),
        metrics,
    })
}

/// The tags statement.
pub(crate) fn tags(q: &TagsQuery) -> Result<Statement, RenderError> {
    let (condition, metrics) = condition_of(&q.selection, false)?;
    let mut columns: Vec<String> = TAG_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    columns.extend(MAP_TAGS.iter().map(|m| format!("`{m}`")));
    let columns = columns.join(", ");
    Ok(Statement {
        select: format!("{columns}, Count(row) AS n"),
        condition,
        group: columns,
        tail: format!(" LIMIT {TAG_ROWS}"),
        metrics,
    })
}

/// The tag-values statement (the prefix and limit are applied to its answer).
pub(crate) fn tag_values(q: &TagValuesQuery) -> Result<Statement, RenderError> {
    let (condition, metrics) = condition_of(&q.selection, false)?;
    let (column, ok) = group_column(&q.dimension)?;
    Ok(Statement {
        select: format!("{column}, Count(row) AS n"),
        condition,
        group: column,
        tail: format!(" ORDER BY n DESC LIMIT {TAG_ROWS}"),
        metrics: metrics && ok,
    })
}

/// The answer columns of [`TAG_COLUMNS`] and [`MAP_TAGS`], as the querier names them.
pub(crate) fn tag_column_names() -> impl Iterator<Item = &'static str> {
    TAG_COLUMNS.iter().chain(MAP_TAGS.iter()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::explore::{parse_tag_values_body, parse_timeline_body};
    use embers_model::contract::tag_filter::parse;

    #[test]
    fn filters_are_rendered_from_typed_conditions() {
        let f = parse(concat!(
            r"pod_ns='team-o''brien' AND vtap!='a\\b' AND k8s.label.app IN ('x','y') AND ",
            r"`k8s.label.a b`NOT IN ('q') AND is_ipv4=1"
        ))
        .unwrap();
        assert_eq!(
            render_filter(&f).unwrap(),
            r"pod_ns='team-o\'brien' AND agent!='a\\b' AND `k8s.label.app` IN ('x', 'y') AND `k8s.label.a b` NOT IN ('q') AND is_ipv4=1"
        );
        // What a client hides in a value stays inside the quotes.
        let f = parse(r"pod='x\' OR 1=1 --'").unwrap();
        assert_eq!(render_filter(&f).unwrap(), r"pod='x\' OR 1=1 --'");
        assert_eq!(render_filter(&parse("").unwrap()).unwrap(), "");
        assert!(name("a`b").is_err() && name("a\nb").is_err() && name("").is_err());
    }

    fn timeline(extra: &str) -> String {
        let body = format!(
            r#"{{"profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":100,"time_end":3699{extra}}}"#
        );
        let q = parse_timeline_body(body.as_bytes()).unwrap();
        let s = super::timeline(&q).unwrap();
        s.sql(if s.metrics {
            Source::Metrics
        } else {
            Source::Samples
        })
    }

    #[test]
    fn timeline_statements() {
        assert_eq!(
            timeline(""),
            "SELECT time(time, 30) AS toi, Sum(profile_value) AS v FROM in_process_metrics WHERE \
             time>=100 AND time<=3699 AND app_service!='Total' AND profile_language_type='eBPF' \
             AND profile_event_type='on-cpu' GROUP BY toi ORDER BY toi LIMIT 200000"
        );
        assert!(timeline(r#","group_by":"k8s.label.app","app_service":"a'b""#).contains(
            "app_service='a\\'b' AND profile_language_type='eBPF' AND profile_event_type='on-cpu' \
             GROUP BY toi, `k8s.label.app` ORDER BY"
        ));
        assert!(timeline(r#","group_by":"thread""#)
            .contains("profile_location_str, Sum(profile_value) AS v FROM in_process WHERE"));
        assert!(timeline(r#","tag_filter":"trace_id='t'""#).contains("FROM in_process WHERE"));
    }

    #[test]
    fn tag_statements() {
        let q = parse_tag_values_body(
            br#"{"tag":"vtap","time_start":1,"time_end":2,"app_service":"x"}"#,
        )
        .unwrap();
        assert_eq!(
            super::tag_values(&q).unwrap().sql(Source::Metrics),
            "SELECT agent, Count(row) AS n FROM in_process_metrics WHERE time>=1 AND time<=2 AND \
             app_service='x' GROUP BY agent ORDER BY n DESC LIMIT 10000"
        );
        assert_eq!(tag_column_names().count(), 32);
    }
}
