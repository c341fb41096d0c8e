//! ClickHouse SQL text with bound values, and the `WHERE` conditions every statement shares —
//! the ClickHouse twin of [`crate::store::sql`].
//!
//! The text is assembled only from fixed fragments and field-table column names; every value
//! from a request is a `?` bound through the client crate's `bind`, which escapes it on the
//! client side (ClickHouse 18.16 has no server-side query parameters).

use clickhouse::query::Query;
use serde::Serialize;

use embers_model::contract::fields::{FieldRef, Scope};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{Condition, Op, Value};

/// A value bound to a `?`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Bound {
    /// A string literal.
    Text(String),
    /// An integer literal.
    Int(i64),
}

impl From<&Value> for Bound {
    fn from(v: &Value) -> Bound {
        match v {
            Value::Text(s) => Bound::Text(s.clone()),
            Value::Int(i) => Bound::Int(*i),
        }
    }
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

/// SQL text with its bound values, built together so they cannot drift apart.
#[derive(Debug, Default, Clone)]
pub(crate) struct ChSql {
    pub(crate) text: String,
    pub(crate) params: Vec<Bound>,
}

impl ChSql {
    pub(crate) fn new(text: &str) -> ChSql {
        ChSql {
            text: text.to_owned(),
            params: Vec::new(),
        }
    }

    /// Append fixed SQL text (never request data).
    pub(crate) fn push(&mut self, fixed: &str) -> &mut ChSql {
        self.text.push_str(fixed);
        self
    }

    /// Append a `?` placeholder bound to `value`.
    pub(crate) fn bind(&mut self, value: impl Into<Bound>) -> &mut ChSql {
        self.text.push('?');
        self.params.push(value.into());
        self
    }

    /// Append `op` and its bound operand(s).
    pub(crate) fn op(&mut self, op: Op, values: &[Value]) -> &mut ChSql {
        let list = |sql: &mut ChSql, prefix: &str| {
            sql.push(prefix);
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    sql.push(", ");
                }
                sql.bind(v);
            }
            sql.push(")");
        };
        match op {
            Op::Eq => {
                self.push(" = ");
                values.first().map(|v| self.bind(v));
            }
            Op::Ne => {
                self.push(" != ");
                values.first().map(|v| self.bind(v));
            }
            Op::In => list(self, " IN ("),
            Op::NotIn => list(self, " NOT IN ("),
        }
        self
    }

    /// Append ` IN (?, ...)` of `names`.
    pub(crate) fn in_list(&mut self, names: &[String]) -> &mut ChSql {
        self.push(" IN (");
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(name.clone());
        }
        self.push(")")
    }

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
    sql.push("time >= ").bind(q.time_start);
    sql.push(" AND time <= ").bind(q.time_end);
    if let Some(language) = &q.language {
        sql.push(" AND profile_language_type = ")
            .bind(language.clone());
    }
    if let Some(event_type) = &q.event_type {
        sql.push(" AND profile_event_type = ")
            .bind(event_type.clone());
    }
    let (per_sample, per_tagset): (Vec<&Condition>, Vec<&Condition>) = q
        .filter
        .conditions
        .iter()
        .partition(|c| matches!(&c.field, FieldRef::Column(d) if d.scope == Scope::Sample));
    for c in per_sample {
        if let FieldRef::Column(def) = &c.field {
            // `def.name` is a fixed identifier from the field table, a column of the table.
            sql.push(" AND ").push(def.name).op(c.op, &c.values);
        }
    }
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
