//! The ClickHouse store's SQL: [`BoundSql`] over values the client crate's `bind` escapes on the
//! client side (ClickHouse 18.16 has no server-side query parameters), and the `WHERE`
//! conditions every statement shares (batch tags answered from the `tagsets` table).

use clickhouse::query::Query;
use serde::Serialize;

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::fields::FieldRef;
use embers_model::contract::selection::Selection;

use crate::store::bound_sql::{BoundSql, Param};

/// A value bound to a `?`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Bound {
    /// A string literal.
    Text(String),
    /// An integer literal.
    Int(i64),
}

impl From<String> for Bound {
    fn from(s: String) -> Bound {
        Bound::Text(s)
    }
}

impl From<i64> for Bound {
    fn from(i: i64) -> Bound {
        Bound::Int(i)
    }
}

impl Param for Bound {}

/// ClickHouse SQL text with its bound values.
pub(crate) type ChSql = BoundSql<Bound>;

impl ChSql {
    /// A query of the client with every value bound.
    pub(crate) fn query(&self, client: &clickhouse::Client) -> Query {
        self.params
            .iter()
            .fold(client.query(&self.text), |q, p| q.bind(p))
    }
}

/// The expression of an open-family tag (`k8s.label.app`, ...): its value in the tag arrays, or
/// `''` when the sample's batch did not set it (an index of 0 gives the default), as the
/// SQLite store's `COALESCE(..., '')`.
pub(crate) fn open_tag(sql: &mut ChSql, name: &str) {
    sql.push("tag_values[indexOf(tag_names, ")
        .bind(name.to_owned())
        .push(")]");
}

/// Append the conditions every statement over samples shares: time range, language, event type,
/// tag filter. Conditions on batch tags select tag sets from `tagsets` (a table every node keeps
/// whole, so each shard answers them locally).
pub(crate) fn common_where(sql: &mut ChSql, q: &Selection, tagsets: &str) {
    sql.time_range(q);
    filter_where(sql, q, tagsets);
}

/// Append ` AND ...` for language, event type and the tag filter: [`common_where`] without the
/// time range.
pub(crate) fn filter_where(sql: &mut ChSql, q: &Selection, tagsets: &str) {
    let per_tagset = sql.series_conditions(q);
    if per_tagset.is_empty() {
        return;
    }
    sql.push(" AND tagset_id IN (SELECT id FROM ")
        .push(tagsets)
        .push(" WHERE ");
    for (i, c) in per_tagset.iter().enumerate() {
        if i > 0 {
            sql.push(" AND ");
        }
        match &c.field {
            FieldRef::Column(def) => {
                sql.push(def.name);
            }
            FieldRef::Open { name, .. } => open_tag(sql, name),
        }
        sql.op(c.op, &c.values);
    }
    sql.push(")");
}

/// Append `(time >= ? AND time <= ? OR ...)` over the inclusive `ranges` (`1 = 0` for none).
pub(crate) fn time_ranges(sql: &mut ChSql, ranges: &[(i64, i64)]) {
    if ranges.is_empty() {
        sql.push("1 = 0");
        return;
    }
    sql.push("(");
    for (i, (from, to)) in ranges.iter().enumerate() {
        if i > 0 {
            sql.push(" OR ");
        }
        sql.push("time >= ")
            .bind(*from)
            .push(" AND time <= ")
            .bind(*to);
    }
    sql.push(")");
}

#[derive(Debug, clickhouse::Row, serde::Deserialize)]
struct Latest {
    n: i64,
    c: u64,
}

/// The largest value of `expr` (fixed text, an integer or a `DateTime`) over `table` on
/// `node`, `None` when the table is empty.
pub(crate) async fn latest(
    node: &clickhouse::Client,
    expr: &str,
    table: &str,
) -> Result<Option<i64>, crate::store::StoreError> {
    let mut sql = ChSql::new("SELECT toInt64(max(");
    sql.push(expr)
        .push(")) AS n, toUInt64(count()) AS c FROM ")
        .push(table);
    let row: Latest = sql.query(node).fetch_one().await.map_err(super::ch_err)?;
    Ok((row.c > 0).then_some(row.n))
}

/// Append ` AND app_service ...`: the process, or every one but `Total` when `skip_total`.
pub(crate) fn app_condition(sql: &mut ChSql, sel: &Selection, skip_total: bool) {
    match &sel.app_service {
        Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
        None if skip_total => sql
            .push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned()),
        None => sql,
    };
}

/// `ids` as SQL's list of integers.
pub(crate) fn id_list(ids: &[u64]) -> String {
    let list: Vec<String> = ids.iter().map(u64::to_string).collect();
    list.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::tag_filter;

    #[test]
    fn values_are_bound_never_inlined() {
        let q = Selection {
            app_service: Some("app".into()),
            language: Some("eBPF".into()),
            event_type: None,
            time_start: 1,
            time_end: 2,
            filter: tag_filter::parse(
                "pod='x'' OR 1=1 --' AND k8s.label.app IN ('a','b') AND time != '5'",
            )
            .expect("filter"),
        };
        let mut sql = ChSql::default();
        common_where(&mut sql, &q, "embers.tagsets");
        assert!(!sql.text.contains("OR 1=1"), "{}", sql.text);
        assert!(!sql.text.contains("k8s.label.app"), "{}", sql.text);
        assert_eq!(sql.text.matches('?').count(), sql.params.len());
        assert!(sql.params.contains(&Bound::Text("x' OR 1=1 --".into())));
        assert!(sql.params.contains(&Bound::Int(5)));
        assert!(sql.text.contains("AND time != ?"), "{}", sql.text);
        assert!(
            sql.text.contains("FROM embers.tagsets WHERE pod = ?"),
            "{}",
            sql.text
        );
    }
}
