//! SQL text with bound parameters, and the `WHERE` conditions every query of the store shares.
//!
//! The text is assembled only from fixed fragments and field-table column names; every value
//! from a request (app_service, language, event type, times, tag values, open-tag names) is a
//! bound parameter.

use rusqlite::types::Value as SqlValue;

use embers_model::contract::fields::{FieldRef, Scope};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{Condition, Op, TagFilter, Value};

/// SQL text with its bound parameters, built together so they cannot drift apart.
#[derive(Debug, Default)]
pub(crate) struct Sql {
    pub(crate) text: String,
    pub(crate) params: Vec<SqlValue>,
}

impl Sql {
    pub(crate) fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            params: Vec::new(),
        }
    }

    /// Append fixed SQL text (never request data).
    pub(crate) fn push(&mut self, fixed: &str) -> &mut Sql {
        self.text.push_str(fixed);
        self
    }

    /// Append a `?` placeholder bound to `value`.
    pub(crate) fn bind(&mut self, value: impl Into<SqlValue>) -> &mut Sql {
        self.text.push('?');
        self.params.push(value.into());
        self
    }

    /// Append `op` and its bound operand(s).
    pub(crate) fn op(&mut self, op: Op, values: &[Value]) -> &mut Sql {
        let list = |sql: &mut Sql, prefix: &str| {
            sql.push(prefix);
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    sql.push(", ");
                }
                sql.bind(sql_value(v));
            }
            sql.push(")");
        };
        match op {
            Op::Eq => {
                self.push(" = ");
                values.first().map(|v| self.bind(sql_value(v)));
            }
            Op::Ne => {
                self.push(" != ");
                values.first().map(|v| self.bind(sql_value(v)));
            }
            Op::In => list(self, " IN ("),
            Op::NotIn => list(self, " NOT IN ("),
        }
        self
    }

    /// The parameters, for `query(params_from_iter(..))`.
    pub(crate) fn params(&self) -> rusqlite::ParamsFromIter<std::slice::Iter<'_, SqlValue>> {
        rusqlite::params_from_iter(self.params.iter())
    }
}

fn sql_value(v: &Value) -> SqlValue {
    match v {
        Value::Text(s) => SqlValue::Text(s.clone()),
        Value::Int(i) => SqlValue::Integer(*i),
    }
}

/// Whether a condition is on a column every series of samples shares: the process, language,
/// event type or a batch tag (rather than a per-sample field such as `time` or `_id`).
pub(crate) fn is_series_condition(c: &Condition) -> bool {
    match &c.field {
        FieldRef::Column(def) if def.scope == Scope::Sample => matches!(
            def.name,
            "app_service" | "profile_language_type" | "profile_event_type"
        ),
        _ => true,
    }
}

/// Whether `filter` needs the samples themselves (it names a per-sample field).
pub(crate) fn needs_samples(filter: &TagFilter) -> bool {
    !filter.conditions.iter().all(is_series_condition)
}

/// Append the conditions every statement over samples shares: time range, language, event type,
/// tag filter.
pub(crate) fn common_where(sql: &mut Sql, q: &Selection) {
    sql.push("time >= ").bind(q.time_start);
    sql.push(" AND time <= ").bind(q.time_end);
    conditions_where(sql, q);
}

/// Append ` AND ...` for language, event type and the tag filter: the conditions that hold for
/// `profile.in_process` and, when the filter has only series conditions, `profile.series` alike.
pub(crate) fn conditions_where(sql: &mut Sql, q: &Selection) {
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
            // `def.name` is a fixed identifier from the field table, a column of the view.
            sql.push(" AND ").push(def.name).op(c.op, &c.values);
        }
    }
    if per_tagset.is_empty() {
        return;
    }
    sql.push(" AND tagset_id IN (SELECT ts.id FROM profile.tagsets AS ts WHERE ");
    for (i, c) in per_tagset.iter().enumerate() {
        if i > 0 {
            sql.push(" AND ");
        }
        match &c.field {
            FieldRef::Column(def) => {
                sql.push("ts.").push(def.name).op(c.op, &c.values);
            }
            FieldRef::Open { name, .. } => {
                sql.push(
                    "COALESCE((SELECT tt.value FROM profile.tagset_tags AS tt \
                     WHERE tt.tagset_id = ts.id AND tt.name = ",
                )
                .bind(name.clone())
                .push("), '')")
                .op(c.op, &c.values);
            }
        }
    }
    sql.push(")");
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::tag_filter;

    fn query(filter: &str) -> Selection {
        Selection {
            app_service: Some("app".into()),
            language: Some("eBPF".into()),
            event_type: Some("on-cpu".into()),
            time_start: 1,
            time_end: 2,
            filter: tag_filter::parse(filter).expect("filter"),
        }
    }

    #[test]
    fn values_are_bound_never_inlined() {
        let q = query("pod='x'' OR 1=1 --' AND k8s.label.app IN ('a','b') AND time != '5'");
        let mut sql = Sql::default();
        common_where(&mut sql, &q);
        assert!(!sql.text.contains("OR 1=1"), "{}", sql.text);
        assert!(!sql.text.contains("k8s.label.app"), "{}", sql.text);
        assert_eq!(sql.text.matches('?').count(), sql.params.len());
        assert!(sql.params.contains(&SqlValue::Text("x' OR 1=1 --".into())));
        assert!(sql.params.contains(&SqlValue::Integer(5)));
        assert!(sql.text.contains("AND time != ?"), "{}", sql.text);
        assert!(sql.text.contains("ts.pod = ?"), "{}", sql.text);
    }

    #[test]
    fn per_sample_fields_need_the_samples() {
        assert!(!needs_samples(&query("pod='a' AND app_service='x'").filter));
        assert!(!needs_samples(&query("profile_event_type!='x'").filter));
        for f in [
            "_id=1",
            "time=1",
            "profile_create_timestamp=1",
            "profile_in_timestamp=2",
        ] {
            assert!(needs_samples(&query(f).filter), "{f}");
        }
    }
}
