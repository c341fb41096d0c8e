//! The statements Embers sends to the querier's SQL API (`POST /v1/query/`, `db=profile`): a
//! fixed template per endpoint, filled with numbers, field-table names and values quoted by the
//! contract (`'...'` with `\'` and `\\`). Client text never becomes SQL: the tag filter arrives
//! parsed and is rendered again from its typed conditions ([`render_filter`]), which is also
//! what the ProfileTracing forwarder sends instead of the client's text.
//!
//! | endpoint | template |
//! |---|---|
//! | services | `SELECT app_service, profile_language_type, profile_event_type, Sum(profile_value) AS v FROM T WHERE W GROUP BY app_service, profile_language_type, profile_event_type ORDER BY v DESC LIMIT 1000` |
//! | services, in-use or any type | `SELECT K, agent, process_id, [Sum(profile_value) AS v, ]Last(profile_value) AS v\|l FROM T WHERE W GROUP BY K, agent, process_id LIMIT N` (`K` the keys above) |
//! | timeline | `SELECT time(time, I) AS toi[, G], Sum(profile_value) AS v FROM T WHERE W GROUP BY toi[, G] ORDER BY toi LIMIT N` |
//! | timeline, in-use | `SELECT time(time, I) AS toi[, G], agent, process_id, Last(profile_value) AS v FROM T WHERE W GROUP BY toi[, G], agent, process_id ORDER BY toi LIMIT N` |
//! | tags | `SELECT C1, ..., Cn, Count(row) AS n FROM T WHERE W GROUP BY C1, ..., Cn LIMIT 10000` |
//! | tag_values | `SELECT G, Count(row) AS n FROM T WHERE W[ AND G ILIKE 'P%'] GROUP BY G ORDER BY n DESC LIMIT 10000` |
//!
//! `T` is `in_process_metrics` (DeepFlow ≥ v7.1's 1-second aggregate) or `in_process` (older
//! servers, per-sample fields, and `thread`, which needs the stack text: then `G` is
//! `profile_location_str`). `W` is `time>=S AND time<=E` plus the process, language, event type
//! and filter conditions. In-use event types are read as instants instead ([`instants`]).

use embers_model::contract::explore::{
    Dimension, ServicesQuery, TagValuesQuery, TagsQuery, TimelineQuery, MAX_SERVICES,
    MAX_VALUES_LIMIT,
};
use embers_model::contract::fields::{self, DeepFlowColumn, Family, FieldRef};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{
    quote_tag_value, render_conditions, render_name, Dialect, TagFilter, UnwritableName,
};

use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};

mod instants;
pub(crate) use instants::{LAST, PROCESS_KEYS};

/// Most rows of a timeline statement (buckets × groups, or × stacks for `thread`).
pub(crate) const TIMELINE_ROWS: usize = 200_000;
/// Most rows of a tags or tag-values statement.
pub(crate) const TAG_ROWS: usize = 10_000;
// A tag-values answer cut at TAG_ROWS still holds the top values any request may ask for.
const _: () = assert!(MAX_VALUES_LIMIT < TAG_ROWS);

/// A name that cannot be written into a statement (the contract's renderer refuses it).
pub type RenderError = UnwritableName;

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
    /// Read from `in_process`, also grouped by the stack (an instant's `Last` per process is
    /// of one stack's row there, not of the upload's second, as in `in_process_metrics`).
    per_stack: bool,
}

impl Statement {
    /// The SQL text for `source`.
    pub(crate) fn sql(&self, source: Source) -> String {
        let stack = if self.per_stack && source == Source::Samples {
            format!(", {STACK}")
        } else {
            String::new()
        };
        format!(
            "SELECT {}{stack} FROM {} WHERE {} GROUP BY {}{stack}{}",
            self.select,
            source.table(),
            self.condition,
            self.group,
            self.tail
        )
    }
}

/// A field name as the querier reads it (the contract's renderer, SQL dialect).
pub(crate) fn name(field: &str) -> Result<String, RenderError> {
    render_name(field, Dialect::Sql)
}

/// The canonical text of a parsed filter, in the querier's SQL: `pod='a' AND host IN ('x', 'y')`.
pub fn render_filter(filter: &TagFilter) -> Result<String, RenderError> {
    render_conditions(filter, Dialect::Sql)
}

fn metrics_has(field: &str) -> bool {
    fields::resolve(field).is_ok_and(|f| match f {
        FieldRef::Column(def) => def.deepflow != DeepFlowColumn::SamplesOnly,
        FieldRef::Open { .. } => true,
    })
}

/// Escapes `%`, `_` and `\` of a `LIKE` pattern (ClickHouse's escape character is `\`).
fn like_prefix(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
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
    if !sel.filter.conditions.is_empty() {
        parts.push(render_filter(&sel.filter)?);
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

/// The stack text's column.
const STACK: &str = "profile_location_str";

/// The column `G` reads: the dimension's, or the stack text for `thread`.
fn group_column(d: &Dimension) -> Result<(String, bool), RenderError> {
    Ok(match dimension_column(d)? {
        Some(column) => {
            let metrics = !matches!(d, Dimension::Tag(f) if !metrics_has(f.name()));
            (column, metrics)
        }
        None => (STACK.to_owned(), false),
    })
}

/// The keys of a services row.
const SERVICE_KEYS: &str = "app_service, profile_language_type, profile_event_type";

/// The services statement: summed over the range, or for an in-use event type each process's
/// last value ([`instants`]); for any event type both, per process.
pub(crate) fn services(q: &ServicesQuery) -> Result<Statement, RenderError> {
    let (condition, metrics) = condition_of(&q.selection, false)?;
    Ok(match q.selection.event_type.as_deref() {
        Some(event) if is_instant(event) => instants::services(condition, metrics, false),
        Some(_) => Statement {
            select: format!("{SERVICE_KEYS}, Sum(profile_value) AS v"),
            condition,
            group: SERVICE_KEYS.to_owned(),
            tail: format!(" ORDER BY v DESC LIMIT {MAX_SERVICES}"),
            metrics,
            per_stack: false,
        },
        None => instants::services(condition, metrics, true),
    })
}

/// The timeline statement; for an in-use event type each process's last value in each bucket
/// ([`instants`]), which the answer's reader sums per bucket.
pub(crate) fn timeline(q: &TimelineQuery) -> Result<Statement, RenderError> {
    let instant = q.selection.event_type.as_deref().is_some_and(is_instant);
    let (condition, mut metrics) = condition_of(&q.selection, q.skips_total())?;
    let mut keys = vec!["toi".to_owned()];
    let mut per_stack = instant;
    if let Some((_, dimension)) = &q.group_by {
        let (column, ok) = group_column(dimension)?;
        metrics &= ok;
        // Grouped by thread, the rows are per stack already.
        per_stack &= column != STACK;
        keys.push(column);
    }
    if instant {
        keys.extend(instants::PROCESS_KEYS.map(str::to_owned));
    }
    let value = if instant { "Last" } else { "Sum" };
    let others: String = keys[1..].iter().map(|k| format!(", {k}")).collect();
    Ok(Statement {
        select: format!(
            "time(time, {}) AS toi{others}, {value}(profile_value) AS v",
            q.interval
        ),
        condition,
        group: keys.join(", "),
        tail: format!(" ORDER BY toi LIMIT {TIMELINE_ROWS}"),
        metrics,
        per_stack,
    })
}

/// The tags statement.
pub(crate) fn tags(q: &TagsQuery) -> Result<Statement, RenderError> {
    let (condition, metrics) = condition_of(&q.selection, false)?;
    let columns: Result<Vec<String>, RenderError> = tag_column_names().map(name).collect();
    let columns = columns?.join(", ");
    Ok(Statement {
        select: format!("{columns}, Count(row) AS n"),
        condition,
        group: columns,
        tail: format!(" LIMIT {TAG_ROWS}"),
        metrics,
        per_stack: false,
    })
}

/// The tag-values statement. The prefix narrows the rows in SQL (`ILIKE`, a superset of the
/// contract's ASCII-case-insensitive prefix; the exact test is applied to the answer); for
/// `thread` it cannot, as the column is the whole stack.
pub(crate) fn tag_values(q: &TagValuesQuery) -> Result<Statement, RenderError> {
    let (mut condition, metrics) = condition_of(&q.selection, false)?;
    let (column, ok) = group_column(&q.dimension)?;
    if let (Some(prefix), false) = (&q.prefix, q.dimension == Dimension::Thread) {
        condition.push_str(&format!(
            " AND {column} ILIKE {}",
            quote_tag_value(&like_prefix(prefix))
        ));
    }
    Ok(Statement {
        select: format!("{column}, Count(row) AS n"),
        condition,
        group: column,
        tail: format!(" ORDER BY n DESC LIMIT {TAG_ROWS}"),
        metrics: metrics && ok,
        per_stack: false,
    })
}

/// The columns the tags statement groups by, as the querier names them in its answer: the
/// contract's text tags of both DeepFlow tables, then the map-valued open families.
pub(crate) fn tag_column_names() -> impl Iterator<Item = &'static str> {
    fields::deepflow_tag_columns()
        .map(|def| def.name)
        .chain(Family::ALL.iter().map(|f| f.base()))
}

/// Whether a column of the tags answer holds a map (a JSON object of key -> value).
pub(crate) fn is_map_tag(column: &str) -> bool {
    Family::ALL.iter().any(|f| f.base() == column)
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
            r"`k8s.annotation.example.com/a-b`NOT IN ('q') AND is_ipv4=1"
        ))
        .unwrap();
        assert_eq!(
            render_filter(&f).unwrap(),
            r"pod_ns='team-o\'brien' AND agent!='a\\b' AND `k8s.label.app` IN ('x', 'y') AND `k8s.annotation.example.com/a-b` NOT IN ('q') AND is_ipv4=1"
        );
        // What a client hides in a value stays inside the quotes.
        let f = parse(r"pod='x\' OR 1=1 --'").unwrap();
        assert_eq!(render_filter(&f).unwrap(), r"pod='x\' OR 1=1 --'");
        assert_eq!(render_filter(&parse("").unwrap()).unwrap(), "");
        for bad in ["a`b", "a\nb", "", "k8s.label.a\\", "k8s.label.a b", "a'b"] {
            assert!(name(bad).is_err(), "{bad:?}");
        }
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
        assert_eq!(tag_column_names().count(), 34);
        assert!(tag_column_names()
            .all(|c| !["pod_group_type", "trace_id", "is_ipv4", "time"].contains(&c)));
    }
}
