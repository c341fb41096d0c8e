//! The explore queries on ClickHouse: the same answers as the SQLite store, summed by
//! ClickHouse itself (`GROUP BY` over the flat table: no rollup tables, which measurement did not
//! ask for at these sizes) and finished by the contract's own ranking and limit steps.

use std::collections::HashMap;

use clickhouse::Row;
use serde::Deserialize;

use super::sql::{common_where, open_tag, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::StoreError;
use embers_model::contract::envelope::Table;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{
    rank_counts, rank_services, Dimension, ServiceRow, ServicesQuery, TagValuesQuery, TagsQuery,
    TimelineAnswer, TimelineQuery, TimelineRow, ValueCount,
};
use embers_model::contract::fields::{self, FieldKind, FieldRef};
use embers_model::contract::selection::Selection;

#[derive(Debug, Row, Deserialize)]
struct ServiceSum {
    app: String,
    language: String,
    event: String,
    value: i64,
}

#[derive(Debug, Row, Deserialize)]
struct Bucket {
    bucket: i64,
    label: String,
    value: i64,
}

#[derive(Debug, Row, Deserialize)]
struct Counted {
    label: String,
    samples: u64,
}

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Append the expression naming a sample under `dimension` (`''` when it lacks the tag).
fn label(sql: &mut ChSql, dimension: &Dimension) {
    match dimension {
        Dimension::AppService => sql.push("app_service"),
        Dimension::Language => sql.push("profile_language_type"),
        Dimension::EventType => sql.push("profile_event_type"),
        // The first `[t] ` frame, as `thread_of` finds it.
        Dimension::Thread => sql.push(
            "arrayFirst(f -> substring(f, 1, 4) = '[t] ', \
             splitByChar(';', profile_location_str))",
        ),
        // `def.name` is a fixed identifier of the field table.
        Dimension::Tag(FieldRef::Column(def)) if def.kind == FieldKind::Int => {
            sql.push("toString(").push(def.name).push(")")
        }
        Dimension::Tag(FieldRef::Column(def)) => sql.push(def.name),
        Dimension::Tag(FieldRef::Open { name, .. }) => {
            open_tag(sql, name);
            sql
        }
    };
}

impl ClickHouseStore {
    /// ` FROM table WHERE <range, conditions> [AND app_service ...]`.
    fn push_from_where(&self, sql: &mut ChSql, selection: &Selection, skip_total: bool) {
        sql.push(" FROM ").push(&self.table()).push(" WHERE ");
        common_where(sql, selection);
        match &selection.app_service {
            Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
            None if skip_total => sql
                .push(" AND app_service != ")
                .bind(TOTAL_APP_SERVICE.to_owned()),
            None => sql,
        };
    }

    fn fetch<T>(&self, sql: &ChSql) -> Result<Vec<T>, StoreError>
    where
        T: clickhouse::RowOwned + clickhouse::RowRead + Send,
    {
        self.block_on(sql.query(self.client()).fetch_all::<T>())
            .map_err(ch_err)
    }

    /// `POST /v1/profile/services`.
    pub fn services(&self, q: &ServicesQuery) -> Result<Table<ServiceRow>, StoreError> {
        let mut sql = ChSql::new(
            "SELECT app_service AS app, profile_language_type AS language, \
             profile_event_type AS event, sum(profile_value) AS value",
        );
        self.push_from_where(&mut sql, &q.selection, false);
        sql.push(" GROUP BY app_service, profile_language_type, profile_event_type");
        let rows = self
            .fetch::<ServiceSum>(&sql)?
            .into_iter()
            .map(|r| ServiceRow::from((r.app, r.language, r.event, unsigned(r.value))))
            .collect();
        Ok(rank_services(rows))
    }

    /// `POST /v1/profile/timeline`: summed values per bucket (and group).
    pub fn timeline(&self, q: &TimelineQuery) -> Result<TimelineAnswer, StoreError> {
        // Stored times are never negative, so an integer division floors as bucket_start does.
        let mut sql = ChSql::new("SELECT toInt64(intDiv(toInt64(time), ");
        sql.bind(q.interval.max(1))
            .push(") * ")
            .bind(q.interval.max(1));
        // Not aliased `time`: ClickHouse lets WHERE see SELECT aliases, and the range
        // condition must read the column.
        sql.push(") AS bucket, ");
        match &q.group_by {
            Some((_, dimension)) => label(&mut sql, dimension),
            None => {
                sql.push("''");
            }
        }
        sql.push(" AS label, sum(profile_value) AS value");
        self.push_from_where(&mut sql, &q.selection, q.skips_total());
        sql.push(" GROUP BY bucket, label");
        let grouped = q.group_by.is_some();
        let rows = self
            .fetch::<Bucket>(&sql)?
            .into_iter()
            .map(|b| TimelineRow {
                time: b.bucket,
                group: grouped.then_some(b.label),
                value: unsigned(b.value),
            })
            .collect();
        Ok(TimelineAnswer::finish(q, rows))
    }

    /// `POST /v1/profile/tags`: tag names with a value on samples in the range, by sample count.
    pub fn tags(&self, q: &TagsQuery) -> Result<Table<ValueCount>, StoreError> {
        // The text columns (not the unit, which describes the value) and the open tags, paired
        // with their values; the names are fixed identifiers of the field table.
        let columns: Vec<&str> = fields::settable_columns()
            .filter(|d| d.kind == FieldKind::Text && d.name != "profile_value_unit")
            .map(|d| d.name)
            .collect();
        let names: Vec<String> = columns.iter().map(|c| format!("'{c}'")).collect();
        let mut sql = ChSql::new("SELECT label, count() AS samples");
        self.push_from_where(&mut sql, &q.selection, false);
        // ARRAY JOIN comes before WHERE: move the WHERE after it.
        let (head, conditions) = split_where(&sql.text);
        let text = format!(
            "{head} ARRAY JOIN arrayFilter((n, v) -> v != '', arrayConcat([{}], tag_names), \
             arrayConcat([{}], tag_values)) AS label WHERE {conditions} GROUP BY label",
            names.join(", "),
            columns.join(", "),
        );
        sql.text = text;
        let counts: HashMap<String, u64> = self
            .fetch::<Counted>(&sql)?
            .into_iter()
            .map(|c| (c.label, c.samples))
            .collect();
        Ok(rank_counts(counts, None, usize::MAX))
    }

    /// `POST /v1/profile/tag_values`: values of one tag in the range, by sample count.
    pub fn tag_values(&self, q: &TagValuesQuery) -> Result<Table<ValueCount>, StoreError> {
        let mut sql = ChSql::new("SELECT ");
        label(&mut sql, &q.dimension);
        sql.push(" AS label, count() AS samples");
        self.push_from_where(&mut sql, &q.selection, false);
        sql.push(" GROUP BY label");
        let counts: HashMap<String, u64> = self
            .fetch::<Counted>(&sql)?
            .into_iter()
            .map(|c| (c.label, c.samples))
            .collect();
        Ok(rank_counts(counts, q.prefix.as_deref(), q.limit))
    }
}

/// `(text before " WHERE ", text after it)` of a statement built by `push_from_where`.
fn split_where(text: &str) -> (&str, &str) {
    text.split_once(" WHERE ").unwrap_or((text, "1"))
}
