//! The explore queries on ClickHouse: the same answers as the SQLite store, summed by
//! ClickHouse itself (`GROUP BY` over the samples: no rollup tables, which measurement did not
//! ask for at these sizes), tag values named from the `tagsets` dictionary, and finished by the
//! contract's own ranking and limit steps.

use std::collections::HashMap;

use clickhouse::Row;
use serde::Deserialize;

use super::instant::{latest_only, push_bucket};
use super::sql::{app_condition, common_where, open_tag, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::StoreError;
use embers_model::contract::envelope::Table;
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
    tagset: u64,
    value: i64,
}

#[derive(Debug, Row, Deserialize)]
struct Counted {
    label: String,
    tagset: u64,
    samples: u64,
}

#[derive(Debug, Row, Deserialize)]
struct TagsetText {
    id: u64,
    text: String,
}

#[derive(Debug, Row, Deserialize)]
struct TagsetNames {
    id: u64,
    names: Vec<String>,
}

fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Append `<label> AS label, <tag set> AS tagset`: a sample's own column for the process,
/// language, event type and thread; for a tag, its tag set (named afterwards from `tagsets`).
pub(super) fn label(sql: &mut ChSql, dimension: Option<&Dimension>) {
    sql.push(match dimension {
        None => "'' AS label, toUInt64(0) AS tagset",
        Some(Dimension::AppService) => "app_service AS label, toUInt64(0) AS tagset",
        Some(Dimension::Language) => "profile_language_type AS label, toUInt64(0) AS tagset",
        Some(Dimension::EventType) => "profile_event_type AS label, toUInt64(0) AS tagset",
        Some(Dimension::Thread) => "thread AS label, toUInt64(0) AS tagset",
        Some(Dimension::Tag(_)) => "'' AS label, tagset_id AS tagset",
    });
}

/// Append the expression of `field`'s value in a `tagsets` row (`''` when absent).
fn tag_value(sql: &mut ChSql, field: &FieldRef) {
    match field {
        // `def.name` is a fixed identifier of the field table.
        FieldRef::Column(def) if def.kind == FieldKind::Int => {
            sql.push("toString(").push(def.name).push(")");
        }
        FieldRef::Column(def) => {
            sql.push(def.name);
        }
        FieldRef::Open { name, .. } => open_tag(sql, name),
    }
}

/// ` WHERE id IN (...) LIMIT 1 BY id` over tag set ids the store produced.
fn ids_in(sql: &mut ChSql, ids: impl Iterator<Item = u64>) {
    let list: Vec<String> = ids.map(|id| id.to_string()).collect();
    sql.push(" WHERE id IN (")
        .push(&list.join(","))
        .push(") LIMIT 1 BY id");
}

impl ClickHouseStore {
    /// ` FROM table WHERE <range, conditions> [AND app_service ...]`.
    pub(super) fn push_from_where(&self, sql: &mut ChSql, selection: &Selection, skip_total: bool) {
        sql.push(" FROM ").push(&self.table()).push(" WHERE ");
        common_where(sql, selection, &self.table_named("tagsets"));
        app_condition(sql, selection, skip_total);
    }

    pub(super) fn fetch<T>(&self, sql: &ChSql) -> Result<Vec<T>, StoreError>
    where
        T: clickhouse::RowOwned + clickhouse::RowRead + Send,
    {
        self.block_on(sql.query(self.client()).fetch_all::<T>())
            .map_err(ch_err)
    }

    /// The value of `dimension` (a tag) for each tag set of `ids`; others read as `""`.
    pub(super) fn tag_labels(
        &self,
        dimension: Option<&Dimension>,
        ids: impl Iterator<Item = u64>,
    ) -> Result<HashMap<u64, String>, StoreError> {
        let Some(Dimension::Tag(field)) = dimension else {
            return Ok(HashMap::new());
        };
        let mut ids = ids.peekable();
        if ids.peek().is_none() {
            return Ok(HashMap::new());
        }
        let mut sql = ChSql::new("SELECT id, ");
        tag_value(&mut sql, field);
        sql.push(" AS text FROM ")
            .push(&self.table_named("tagsets"));
        ids_in(&mut sql, ids);
        let rows = self.fetch::<TagsetText>(&sql)?;
        Ok(rows.into_iter().map(|r| (r.id, r.text)).collect())
    }

    /// `POST /v1/profile/services`.
    pub fn services(&self, q: &ServicesQuery) -> Result<Table<ServiceRow>, StoreError> {
        let mut sql = ChSql::new(
            "SELECT app_service AS app, profile_language_type AS language, \
             profile_event_type AS event, sum(profile_value) AS value",
        );
        self.push_from_where(&mut sql, &q.selection, false);
        latest_only(&mut sql, &q.selection, None, |s| {
            self.push_from_where(s, &q.selection, false)
        });
        sql.push(" GROUP BY app_service, profile_language_type, profile_event_type");
        let rows = self
            .fetch::<ServiceSum>(&sql)?
            .into_iter()
            .map(|r| ServiceRow::from((r.app, r.language, r.event, unsigned(r.value))))
            .collect();
        Ok(rank_services(rows))
    }

    /// `POST /v1/profile/timeline`: summed values per bucket (and group); instants the value
    /// at each bucket's end.
    pub fn timeline(&self, q: &TimelineQuery) -> Result<TimelineAnswer, StoreError> {
        let dimension = q.group_by.as_ref().map(|(_, d)| d);
        // Stored times are never negative, so an integer division floors as bucket_start
        // does. Not aliased `time`: ClickHouse lets WHERE see SELECT aliases, and the range
        // condition must read the column.
        let mut sql = ChSql::new("SELECT ");
        push_bucket(&mut sql, q.interval);
        sql.push(" AS bucket, ");
        label(&mut sql, dimension);
        sql.push(", sum(profile_value) AS value");
        self.push_from_where(&mut sql, &q.selection, q.skips_total());
        // An instant's bucket is its processes' latest uploads in it: the value at its end.
        latest_only(&mut sql, &q.selection, Some(q.interval), |s| {
            self.push_from_where(s, &q.selection, q.skips_total())
        });
        sql.push(" GROUP BY bucket, label, tagset");
        let buckets = self.fetch::<Bucket>(&sql)?;
        let names = self.tag_labels(dimension, buckets.iter().map(|b| b.tagset))?;
        let rows = buckets
            .into_iter()
            .map(|b| TimelineRow {
                time: b.bucket,
                group: dimension.map(|_| names.get(&b.tagset).cloned().unwrap_or(b.label)),
                value: unsigned(b.value),
            })
            .collect();
        Ok(TimelineAnswer::finish(q, rows))
    }

    /// `POST /v1/profile/tags`: tag names with a value on samples in the range, by sample count.
    pub fn tags(&self, q: &TagsQuery) -> Result<Table<ValueCount>, StoreError> {
        let mut sql = ChSql::new("SELECT '' AS label, tagset_id AS tagset, count() AS samples");
        self.push_from_where(&mut sql, &q.selection, false);
        sql.push(" GROUP BY tagset_id");
        let per_tagset = self.fetch::<Counted>(&sql)?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        if !per_tagset.is_empty() {
            // The text columns (not the unit, which describes the value) and the open tags
            // with a value; the names are fixed identifiers of the field table.
            let columns: Vec<&str> = fields::settable_columns()
                .filter(|d| d.kind == FieldKind::Text && d.name != "profile_value_unit")
                .map(|d| d.name)
                .collect();
            let quoted: Vec<String> = columns.iter().map(|c| format!("'{c}'")).collect();
            let mut names = ChSql::new("SELECT id, arrayFilter((n, v) -> v != '', arrayConcat([");
            names
                .push(&quoted.join(", "))
                .push("], tag_names), arrayConcat([")
                .push(&columns.join(", "))
                .push("], tag_values)) AS names FROM ")
                .push(&self.table_named("tagsets"));
            ids_in(&mut names, per_tagset.iter().map(|c| c.tagset));
            let names: HashMap<u64, Vec<String>> = self
                .fetch::<TagsetNames>(&names)?
                .into_iter()
                .map(|r| (r.id, r.names))
                .collect();
            for c in &per_tagset {
                for name in names.get(&c.tagset).into_iter().flatten() {
                    *counts.entry(name.clone()).or_default() += c.samples;
                }
            }
        }
        Ok(rank_counts(counts, None, usize::MAX))
    }

    /// `POST /v1/profile/tag_values`: values of one tag in the range, by sample count.
    pub fn tag_values(&self, q: &TagValuesQuery) -> Result<Table<ValueCount>, StoreError> {
        let mut sql = ChSql::new("SELECT ");
        label(&mut sql, Some(&q.dimension));
        sql.push(", count() AS samples");
        self.push_from_where(&mut sql, &q.selection, false);
        sql.push(" GROUP BY label, tagset");
        let rows = self.fetch::<Counted>(&sql)?;
        let names = self.tag_labels(Some(&q.dimension), rows.iter().map(|c| c.tagset))?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        for c in rows {
            let name = names.get(&c.tagset).cloned().unwrap_or(c.label);
            *counts.entry(name).or_default() += c.samples;
        }
        Ok(rank_counts(counts, q.prefix.as_deref(), q.limit))
    }
}
