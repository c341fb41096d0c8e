//! The functions endpoints on ClickHouse, answering as the SQLite store does: an unfiltered
//! question sums `functions_rollup` over the range's whole buckets and adds the samples at its
//! edges (the same plan as SQLite's, [`plan`]); a tag filter, a grouping or a filter on
//! per-sample fields sums the samples of the whole range per stack. Stacks' functions come from
//! their texts (the `stacks` dictionary, cached), names from `functions`.

use std::collections::HashMap;
use std::sync::Arc;

use clickhouse::Row;
use serde::Deserialize;

use super::explore::label;
use super::raw_rows::{item, RawRows};
use super::sql::{common_where, filter_where, time_ranges, ChSql};
use super::ClickHouseStore;
use crate::store::functions::{
    function_id, has_tag_conditions, known, plan, Frames, IdSums, ALL, LEVELS,
};
use crate::store::sql::needs_samples;
use crate::store::StoreError;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{
    Dimension, FunctionPoint, FunctionSums, FunctionTimelineAnswer, FunctionTimelineQuery,
};
use embers_model::contract::selection::Selection;

/// Ids per name lookup statement.
const IDS_PER_LOOKUP: usize = 20_000;

/// An `Int64`'s bits as the number.
fn signed(bits: u64) -> i64 {
    i64::from_le_bytes(bits.to_le_bytes())
}

#[derive(Debug, Row, Deserialize)]
struct StackSum {
    app: String,
    label: String,
    tagset: u64,
    id: u64,
    value: i64,
}

#[derive(Debug, Row, Deserialize)]
struct FnName {
    id: u64,
    name: String,
}

/// Append ` AND app_service ...`: the process, or every one but `Total` when `skip_total`.
fn app_condition(sql: &mut ChSql, sel: &Selection, skip_total: bool) {
    match &sel.app_service {
        Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
        None if skip_total => sql
            .push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned()),
        None => sql,
    };
}

impl ClickHouseStore {
    /// One side's sums of `POST /v1/profile/functions`: `sel`'s samples (every process but
    /// `Total` with `skip_total`), each function's places by process (and `group`).
    pub fn function_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
        group: Option<&Dimension>,
    ) -> Result<FunctionSums, StoreError> {
        let mut sums = IdSums::default();
        let from_samples =
            group.is_some() || has_tag_conditions(&sel.filter) || needs_samples(&sel.filter);
        if from_samples {
            let whole = [(sel.time_start, sel.time_end)];
            self.sample_sums(sel, skip_total, &whole, group, &mut sums)?;
        } else {
            let plan = plan(sel.time_start, sel.time_end, self.horizon()?, &LEVELS);
            self.rollup_sums(sel, skip_total, &plan.buckets, &mut sums)?;
            self.sample_sums(sel, skip_total, &plan.samples, None, &mut sums)?;
        }
        let names = self.function_names(sums.ids())?;
        sums.named(|id| names.get(&id).cloned())
    }

    /// Adds the rollup's rows of whole buckets `(level, first, last)`.
    fn rollup_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
        buckets: &[(i64, i64, i64)],
        sums: &mut IdSums,
    ) -> Result<(), StoreError> {
        if buckets.is_empty() {
            return Ok(());
        }
        // The rows themselves, summed here: on 18.16 `sumMap` (or ARRAY JOIN and GROUP BY) over
        // a day's 960,000 entries took 120-150 ms, reading them out 30-40 ms.
        let mut sql = ChSql::new(
            "SELECT app_service AS app, all_value, fnMap.id AS ids, fnMap.self_value AS selfs, \
             fnMap.total AS totals FROM ",
        );
        sql.push(&self.table_named("functions_rollup"))
            .push(" WHERE (");
        for (i, (level, first, last)) in buckets.iter().enumerate() {
            if i > 0 {
                sql.push(" OR ");
            }
            sql.push("level = ")
                .bind(*level)
                .push(" AND time >= ")
                .bind(*first)
                .push(" AND time <= ")
                .bind(*last);
        }
        sql.push(")");
        // No tag conditions reach here: only the process's own columns.
        sql.series_conditions(sel);
        app_condition(&mut sql, sel, skip_total);
        let bytes = self
            .block_on(async {
                let mut cursor = sql.query(self.client()).fetch_bytes("RowBinary")?;
                cursor.collect().await
            })
            .map_err(super::ch_err)?;
        let mut rows = RawRows::new(&bytes);
        let mut places: HashMap<&str, usize> = HashMap::new();
        while !rows.is_done() {
            let app = rows.string()?;
            let place = match places.get(app) {
                Some(p) => *p,
                None => {
                    let p = sums.place((app.to_owned(), None));
                    places.insert(app, p);
                    p
                }
            };
            sums.add(place, ALL, 0, rows.i64()?);
            let (ids, selfs, totals) = (rows.array()?, rows.array()?, rows.array()?);
            if ids.0 != selfs.0 || ids.0 != totals.0 {
                return Err(StoreError::ClickHouse(
                    "a rollup row's arrays differ in length".into(),
                ));
            }
            for i in 0..ids.0 {
                let (s, t) = (item(selfs.1, i), item(totals.1, i));
                sums.add(place, item(ids.1, i), signed(s), signed(t));
            }
        }
        Ok(())
    }

    /// Adds the samples of `ranges`, per stack, at each process (and group).
    fn sample_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
        ranges: &[(i64, i64)],
        group: Option<&Dimension>,
        sums: &mut IdSums,
    ) -> Result<(), StoreError> {
        if ranges.is_empty() {
            return Ok(());
        }
        let mut sql = ChSql::new("SELECT app_service AS app, ");
        label(&mut sql, group);
        sql.push(", stack_id AS id, sum(profile_value) AS value FROM ")
            .push(&self.table())
            .push(" WHERE ");
        time_ranges(&mut sql, ranges);
        filter_where(&mut sql, sel, &self.table_named("tagsets"));
        app_condition(&mut sql, sel, skip_total);
        sql.push(" GROUP BY app, label, tagset, id");
        let rows = self.fetch::<StackSum>(&sql)?;
        let names = self.tag_labels(group, rows.iter().map(|r| r.tagset))?;
        let frames = self.frames_of(rows.iter().map(|r| r.id))?;
        for r in rows {
            let Some(f) = frames.get(&r.id) else {
                continue;
            };
            let g = group.map(|_| names.get(&r.tagset).cloned().unwrap_or(r.label));
            let place = sums.place((r.app, g));
            sums.add_stack(place, f, r.value);
        }
        Ok(())
    }

    /// The functions of stacks `ids`: from the cache, the rest from their texts.
    fn frames_of(
        &self,
        ids: impl Iterator<Item = u64>,
    ) -> Result<HashMap<u64, Arc<Frames>>, StoreError> {
        let (mut out, missing) = {
            let cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            known(ids, |id| cache.known(id))
        };
        if !missing.is_empty() {
            let texts = self.stack_texts(missing.into_iter(), &mut Vec::new())?;
            let mut cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            for (id, text) in texts {
                out.insert(id, cache.frames(id, &text));
            }
        }
        Ok(out)
    }

    /// The names of functions `ids`: from the cache, the rest from `functions`.
    fn function_names(
        &self,
        ids: impl Iterator<Item = u64>,
    ) -> Result<HashMap<u64, Arc<str>>, StoreError> {
        let (mut out, missing) = {
            let cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            known(ids, |id| cache.name(id))
        };
        for ids in missing.chunks(IDS_PER_LOOKUP) {
            let mut sql = ChSql::new("SELECT id, name FROM ");
            // Integers the store produced: formatted, not request data.
            let list: Vec<String> = ids.iter().map(u64::to_string).collect();
            sql.push(&self.table_named("functions"))
                .push(" WHERE id IN (")
                .push(&list.join(","))
                .push(") LIMIT 1 BY id");
            let rows: Vec<FnName> = self
                .block_on(
                    sql.query(self.client())
                        .with_setting("max_query_size", "2000000")
                        .fetch_all(),
                )
                .map_err(super::ch_err)?;
            let mut cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            for row in rows {
                cache.remember_name(row.id, &row.name);
                out.insert(row.id, Arc::from(row.name.as_str()));
            }
        }
        Ok(out)
    }

    /// `POST /v1/profile/function_timeline`: from the samples of stacks whose text names the
    /// function (the exact test follows on each stack's functions).
    pub fn function_timeline(
        &self,
        q: &FunctionTimelineQuery,
    ) -> Result<FunctionTimelineAnswer, StoreError> {
        let t = &q.timeline;
        let dimension = t.group_by.as_ref().map(|(_, d)| d);
        let mut sql = ChSql::new("SELECT ");
        label(&mut sql, dimension);
        // Stored times are never negative: an integer division floors as bucket_start does.
        // Not aliased `id`: the subquery below reads the stacks' own `id`.
        sql.push(
            ", stack_id AS stack, sum(profile_value) AS value, toInt64(intDiv(toInt64(time), ",
        )
        .bind(t.interval.max(1))
        .push(") * ")
        .bind(t.interval.max(1))
        .push(") AS bucket FROM ")
        .push(&self.table())
        .push(" WHERE ");
        common_where(&mut sql, &t.selection, &self.table_named("tagsets"));
        app_condition(&mut sql, &t.selection, t.skips_total());
        sql.push(" AND stack_id IN (SELECT id FROM ")
            .push(&self.table_named("stacks"))
            .push(" WHERE position(location_str, ")
            .bind(q.function.clone())
            .push(") > 0) GROUP BY bucket, label, tagset, stack");
        let rows = self.fetch::<BucketSum>(&sql)?;
        let names = self.tag_labels(dimension, rows.iter().map(|r| r.tagset))?;
        let frames = self.frames_of(rows.iter().map(|r| r.stack))?;
        let id = function_id(&q.function);
        let mut points = Vec::new();
        for r in rows {
            let Some(f) = frames.get(&r.stack).filter(|f| f.ids.contains(&id)) else {
                continue;
            };
            let value = u64::try_from(r.value).unwrap_or(0);
            points.push(FunctionPoint {
                time: r.bucket,
                group: dimension.map(|_| names.get(&r.tagset).cloned().unwrap_or(r.label)),
                self_value: if f.leaf == id { value } else { 0 },
                total: value,
            });
        }
        Ok(FunctionTimelineAnswer::finish(t, points))
    }
}

#[derive(Debug, Row, Deserialize)]
struct BucketSum {
    label: String,
    tagset: u64,
    stack: u64,
    value: i64,
    bucket: i64,
}
