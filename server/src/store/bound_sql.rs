//! SQL text with its bound values, and the conditions both backends put in every `WHERE`: one
//! builder for SQLite ([`crate::store::sql::Sql`]) and ClickHouse
//! ([`crate::store::clickhouse::sql::ChSql`]), which differ only in their value type and in how
//! they select tag sets.
//!
//! The text is assembled only from fixed fragments and field-table column names; every value
//! from a request (app_service, language, event type, times, tag values, open-tag names) is a
//! `?` bound to a parameter.

use embers_model::contract::fields::{FieldRef, Scope};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{Condition, Op, Value};

/// A backend's bound value.
pub(crate) trait Param: From<String> + From<i64> + Clone {
    /// The parameter for a tag-filter operand.
    fn operand(value: &Value) -> Self {
        match value {
            Value::Text(s) => Self::from(s.clone()),
            Value::Int(i) => Self::from(*i),
        }
    }
}

/// SQL text with its bound values, built together so they cannot drift apart.
#[derive(Debug, Clone)]
pub(crate) struct BoundSql<P> {
    pub(crate) text: String,
    pub(crate) params: Vec<P>,
}

impl<P> Default for BoundSql<P> {
    fn default() -> Self {
        BoundSql {
            text: String::new(),
            params: Vec::new(),
        }
    }
}

impl<P: Param> BoundSql<P> {
    pub(crate) fn new(text: &str) -> Self {
        BoundSql {
            text: text.to_owned(),
            params: Vec::new(),
        }
    }

    /// Append fixed SQL text (never request data).
    pub(crate) fn push(&mut self, fixed: &str) -> &mut Self {
        self.text.push_str(fixed);
        self
    }

    /// Append a `?` placeholder bound to `value`.
    pub(crate) fn bind(&mut self, value: impl Into<P>) -> &mut Self {
        self.text.push('?');
        self.params.push(value.into());
        self
    }

    /// Append ` IN (?, ...)` of `values`.
    pub(crate) fn in_list<V: Into<P> + Clone>(&mut self, values: &[V]) -> &mut Self {
        self.list(" IN (", values)
    }

    /// Append `open`, the bound `values` separated by commas, and `)`.
    fn list<V: Into<P> + Clone>(&mut self, open: &str, values: &[V]) -> &mut Self {
        self.push(open);
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(v.clone());
        }
        self.push(")")
    }

    /// Append `op` and its bound operand(s).
    pub(crate) fn op(&mut self, op: Op, values: &[Value]) -> &mut Self {
        let operands: Vec<P> = values.iter().map(P::operand).collect();
        let single = |sql: &mut Self, op: &str| {
            sql.push(op);
            // The parser gives `=` and `!=` exactly one operand.
            if let Some(v) = operands.first() {
                sql.bind(v.clone());
            }
        };
        match op {
            Op::Eq => single(self, " = "),
            Op::Ne => single(self, " != "),
            Op::In => {
                self.list(" IN (", &operands);
            }
            Op::NotIn => {
                self.list(" NOT IN (", &operands);
            }
        }
        self
    }

    /// Append ` AND ...` for language, event type and the tag filter's per-sample conditions;
    /// gives back the conditions on batch tags, which each backend answers from its own tag-set
    /// table.
    pub(crate) fn series_conditions<'q>(&mut self, q: &'q Selection) -> Vec<&'q Condition> {
        if let Some(language) = &q.language {
            self.push(" AND profile_language_type = ")
                .bind(language.clone());
        }
        if let Some(event_type) = &q.event_type {
            self.push(" AND profile_event_type = ")
                .bind(event_type.clone());
        }
        let (per_sample, per_tagset): (Vec<&Condition>, Vec<&Condition>) = q
            .filter
            .conditions
            .iter()
            .partition(|c| matches!(&c.field, FieldRef::Column(d) if d.scope == Scope::Sample));
        for c in per_sample {
            if let FieldRef::Column(def) = &c.field {
                // `def.name` is a fixed identifier from the field table, a column of the samples.
                self.push(" AND ").push(def.name).op(c.op, &c.values);
            }
        }
        per_tagset
    }

    /// Append the time range (inclusive at both ends, as the interface's).
    pub(crate) fn time_range(&mut self, q: &Selection) -> &mut Self {
        self.push("time >= ").bind(q.time_start);
        self.push(" AND time <= ").bind(q.time_end)
    }
}
