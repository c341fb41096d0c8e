//! The functions endpoints on ClickHouse, answering as the SQLite store does: a question about
//! one process sums `functions_rollup` over the range's whole buckets and adds the samples at
//! its edges (SQLite's plan, with six-hour buckets too: [`plan_from`]; one about every process
//! is ranked from the fleet's sums first, see `fleet`); a tag filter, a grouping or a filter on
//! per-sample fields sums the samples of the whole range per stack. Stacks' functions come from
//! their texts (the `stacks` dictionary, cached), names from `functions`.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use clickhouse::Row;
use serde::Deserialize;

use super::explore::label;
use super::instant::latest_only;
use super::rollup_read::{add_rollup, StackSum};
use super::sql::{app_condition, common_where, filter_where, id_list, time_ranges, ChSql};
use super::ClickHouseStore;
use crate::store::functions::{
    function_id, has_tag_conditions, known, plan_from, Frames, IdSums, Plan,
};
use crate::store::instant::may_match;
use crate::store::sql::needs_samples;
use crate::store::StoreError;
use embers_model::contract::explore::{
    Dimension, FunctionPoint, FunctionSums, FunctionTimelineAnswer, FunctionTimelineQuery,
};
use embers_model::contract::selection::Selection;

/// Ids per name lookup statement.
const IDS_PER_LOOKUP: usize = 20_000;

#[derive(Debug, Row, Deserialize)]
struct FnName {
    id: u64,
    name: String,
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
        // The rollup sums every upload: an instant is read from its latest ones.
        let from_samples = group.is_some()
            || has_tag_conditions(&sel.filter)
            || needs_samples(&sel.filter)
            || may_match(sel);
        if from_samples {
            let whole = [(sel.time_start, sel.time_end)];
            let sql = self.sample_sql(&self.table(), sel, skip_total, &whole, group);
            let rows = self.fetch::<StackSum>(&sql)?;
            self.add_samples(rows, group, &mut sums)?;
        } else {
            let (start, end) = (sel.time_start, sel.time_end);
            let starts = self.starts()?;
            let plan = plan_from(start, end, starts.horizon, starts.wide_from);
            self.planned_sums(sel, skip_total, &plan, &mut sums)?;
        }
        let names = self.function_names(sums.ids())?;
        sums.named(|id| names.get(&id).cloned())
    }

    /// Adds `plan`'s rollup buckets and the samples at its edges (see [`Self::ask_nodes`]).
    fn planned_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
        plan: &Plan,
        sums: &mut IdSums,
    ) -> Result<(), StoreError> {
        let rollup_table = self.table_named(self.local_functions());
        let mut rollups = Vec::new();
        if !plan.buckets.is_empty() {
            rollups.push(self.rollup_sql(&rollup_table, sel, skip_total, &plan.buckets, None));
        }
        let (bytes, rows) = self.ask_nodes(&rollups, sel, skip_total, plan)?;
        for b in &bytes {
            add_rollup(b, sums, None)?;
        }
        self.add_samples(rows, None, sums)
    }

    /// The samples of `ranges` in `table` summed per stack, at each process (and group).
    pub(super) fn sample_sql(
        &self,
        table: &str,
        sel: &Selection,
        skip_total: bool,
        ranges: &[(i64, i64)],
        group: Option<&Dimension>,
    ) -> ChSql {
        let mut sql = ChSql::new("SELECT app_service AS app, ");
        label(&mut sql, group);
        sql.push(", stack_id AS id, sum(profile_value) AS value FROM ")
            .push(table)
            .push(" WHERE ");
        time_ranges(&mut sql, ranges);
        filter_where(&mut sql, sel, &self.table_named("tagsets"));
        app_condition(&mut sql, sel, skip_total);
        latest_only(&mut sql, sel, None, |s| {
            s.push(" FROM ").push(table).push(" WHERE ");
            time_ranges(s, ranges);
            filter_where(s, sel, &self.table_named("tagsets"));
            app_condition(s, sel, skip_total);
        });
        sql.push(" GROUP BY app, label, tagset, id");
        sql
    }

    /// Adds sums per stack (of [`Self::sample_sql`]) to each stack's functions.
    pub(super) fn add_samples(
        &self,
        rows: Vec<StackSum>,
        group: Option<&Dimension>,
        sums: &mut IdSums,
    ) -> Result<(), StoreError> {
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
    ) -> Result<FxHashMap<u64, Arc<Frames>>, StoreError> {
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
    pub(super) fn function_names(
        &self,
        ids: impl Iterator<Item = u64>,
    ) -> Result<FxHashMap<u64, Arc<str>>, StoreError> {
        let (mut out, missing) = {
            let cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            known(ids, |id| cache.name(id))
        };
        for ids in missing.chunks(IDS_PER_LOOKUP) {
            let mut sql = ChSql::new("SELECT id, name FROM ");
            // Integers the store produced: formatted, not request data.
            sql.push(&self.table_named("functions"))
                .push(" WHERE id IN (")
                .push(&id_list(ids))
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
        // In-use functions: each process's latest upload per bucket, whatever stacks it holds.
        latest_only(&mut sql, &t.selection, Some(t.interval), |s| {
            s.push(" FROM ").push(&self.table()).push(" WHERE ");
            common_where(s, &t.selection, &self.table_named("tagsets"));
            app_condition(s, &t.selection, t.skips_total());
        });
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
