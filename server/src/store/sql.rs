//! The SQLite store's SQL: [`BoundSql`] over rusqlite values, and the `WHERE` conditions every
//! query of the store shares (batch tags answered from `profile.tagsets`).

use rusqlite::types::Value as SqlValue;

use embers_model::contract::fields::{FieldRef, Scope};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::{Condition, TagFilter};

use super::bound_sql::{BoundSql, Param};

/// SQLite SQL text with its bound parameters.
pub(crate) type Sql = BoundSql<SqlValue>;

impl Param for SqlValue {}

impl Sql {
    /// The parameters, for `query(params_from_iter(..))`.
    pub(crate) fn params(&self) -> rusqlite::ParamsFromIter<std::slice::Iter<'_, SqlValue>> {
        rusqlite::params_from_iter(self.params.iter())
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

/// `sel` without its per-sample conditions (`time`, `_id`, ...): what series can answer.
pub(crate) fn series_selection(sel: &Selection) -> Selection {
    Selection {
        filter: TagFilter {
            conditions: sel
                .filter
                .conditions
                .iter()
                .filter(|c| is_series_condition(c))
                .cloned()
                .collect(),
        },
        ..sel.clone()
    }
}

/// Append the conditions every statement over samples shares: time range, language, event type,
/// tag filter.
pub(crate) fn common_where(sql: &mut Sql, q: &Selection) {
    sql.time_range(q);
    conditions_where(sql, q);
}

/// Append ` AND ...` for language, event type and the tag filter: the conditions that hold for
/// `profile.in_process` and, when the filter has only series conditions, `profile.series` alike.
pub(crate) fn conditions_where(sql: &mut Sql, q: &Selection) {
    let per_tagset = sql.series_conditions(q);
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
pub(crate) mod tests {
    use super::*;
    use embers_model::contract::tag_filter;

    /// A selection of process `app` in [1, 2] with `filter`, for the store's SQL tests.
    pub(crate) fn query(filter: &str) -> Selection {
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
