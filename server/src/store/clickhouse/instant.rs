//! Instants on ClickHouse (see [`crate::store::instant`] for the rule): a statement summing
//! samples is narrowed to the rows of each process's latest second, per bucket when it has
//! buckets. A process is app_service, language, event type and tag set, as on SQLite; its
//! latest second is `max(time)` over every shard (`GLOBAL IN`: a process's rows are spread over
//! the shards by `rand()`), so the single node and the cluster answer alike.

use super::sql::ChSql;
use crate::store::instant::may_match;
use embers_model::contract::event::INSTANT_EVENT_TYPES;
use embers_model::contract::selection::Selection;

/// `toInt64(intDiv(toInt64(time), interval) * interval)`: the start of a row's bucket (stored
/// times are never negative, so the division floors as `bucket_start` does).
pub(super) fn push_bucket(sql: &mut ChSql, interval: i64) {
    sql.push("toInt64(intDiv(toInt64(time), ")
        .bind(interval.max(1))
        .push(") * ")
        .bind(interval.max(1))
        .push(")");
}

/// The key of a row's process (and bucket, with `interval`), ending in `time`.
fn push_key(sql: &mut ChSql, interval: Option<i64>, time: &str) {
    if let Some(i) = interval {
        push_bucket(sql, i);
        sql.push(", ");
    }
    sql.push("app_service, profile_language_type, profile_event_type, tagset_id, ")
        .push(time);
}

/// Append ` AND (<the row is not of an instant event type> OR <it is of its process's latest
/// second in the range, or in its bucket of `interval`>)` when `selection` may match an instant
/// event type. `from_where` appends ` FROM <table> WHERE <conditions>` as the statement's own.
pub(super) fn latest_only(
    sql: &mut ChSql,
    selection: &Selection,
    interval: Option<i64>,
    from_where: impl Fn(&mut ChSql),
) {
    if !may_match(selection) {
        return;
    }
    let instants = INSTANT_EVENT_TYPES.map(str::to_owned);
    sql.push(" AND (NOT (profile_event_type")
        .in_list(&instants)
        .push(") OR (");
    push_key(sql, interval, "time");
    sql.push(") GLOBAL IN (SELECT ");
    push_key(sql, interval, "max(time)");
    from_where(sql);
    sql.push(" AND profile_event_type").in_list(&instants);
    sql.push(" GROUP BY ");
    if let Some(i) = interval {
        push_bucket(sql, i);
        sql.push(", ");
    }
    sql.push("app_service, profile_language_type, profile_event_type, tagset_id))");
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::tag_filter;

    #[test]
    fn only_instants_are_narrowed_and_values_stay_bound() {
        let mut sel = Selection {
            app_service: Some("app".into()),
            language: None,
            event_type: Some("on-cpu".into()),
            time_start: 1,
            time_end: 2,
            filter: tag_filter::parse("pod='x'").expect("filter"),
        };
        let mut sql = ChSql::default();
        latest_only(&mut sql, &sel, None, |s| {
            s.push(" FROM t WHERE 1");
        });
        assert!(sql.text.is_empty(), "{}", sql.text);
        sel.event_type = Some("inuse_space".into());
        latest_only(&mut sql, &sel, Some(60), |s| {
            s.push(" FROM t WHERE 1");
        });
        assert!(
            sql.text.contains("GLOBAL IN (SELECT toInt64"),
            "{}",
            sql.text
        );
        assert!(
            sql.text
                .contains("tagset_id, max(time) FROM t WHERE 1 AND profile_event_type IN"),
            "{}",
            sql.text
        );
        assert_eq!(sql.text.matches('?').count(), sql.params.len());
    }
}
