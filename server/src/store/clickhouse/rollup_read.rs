//! Reading the function rollups (`functions_rollup`, `functions_fleet`): the SQL of whole
//! buckets (summed per process by ClickHouse, or only some functions' entries), every node's
//! own tables asked at once beside the samples at a range's edges, and the `RowBinary` answers
//! added to sums by id.

use clickhouse::Row;
use serde::Deserialize;

use super::raw_rows::{item, RawRows};
use super::sql::{app_condition, id_list, ChSql};
use super::ClickHouseStore;
use crate::store::functions::{IdSums, Plan, ALL};
use crate::store::StoreError;
use embers_model::contract::selection::Selection;

/// An `Int64`'s bits as the number.
fn signed(bits: u64) -> i64 {
    i64::from_le_bytes(bits.to_le_bytes())
}

/// A sum of samples per stack at a process (and group label, tag set).
#[derive(Debug, Row, Deserialize)]
pub(super) struct StackSum {
    pub(super) app: String,
    pub(super) label: String,
    pub(super) tagset: u64,
    pub(super) id: u64,
    pub(super) value: i64,
}

impl ClickHouseStore {
    /// Asks every shard's own tables `rollups` (their bytes) and the samples at `plan`'s edges
    /// (per stack and process), all at once: ClickHouse works on the edges while it adds up
    /// the rollup (at 10M samples a day, 100 and 145 ms apart), each shard on its own part,
    /// and the shards' answers are added up here (through the Distributed tables, one node
    /// merged the shards' `sumMap` states: a day of 10M samples on two shards took 199 ms that
    /// way, 175 ms so).
    pub(super) fn ask_nodes(
        &self,
        rollups: &[ChSql],
        sel: &Selection,
        skip_total: bool,
        plan: &Plan,
    ) -> Result<(Vec<Vec<u8>>, Vec<StackSum>), StoreError> {
        let edges = self.edges_sql(sel, skip_total, plan);
        let (bytes, rows) = self.block_on(futures_util::future::join(
            self.rollup_bytes(rollups),
            self.edge_rows(edges.as_ref()),
        ));
        Ok((bytes?, rows?))
    }

    /// The samples at `plan`'s edges per stack and process, on each node's own table; `None`
    /// when the plan has no edges.
    pub(super) fn edges_sql(
        &self,
        sel: &Selection,
        skip_total: bool,
        plan: &Plan,
    ) -> Option<ChSql> {
        (!plan.samples.is_empty())
            .then(|| self.sample_sql(&self.local_table(), sel, skip_total, &plan.samples, None))
    }

    /// The answers of every node to each of `rollups` (as `RowBinary` bytes), asked at once.
    pub(super) async fn rollup_bytes(&self, rollups: &[ChSql]) -> Result<Vec<Vec<u8>>, StoreError> {
        let asks = self.nodes().iter().flat_map(|node| {
            rollups.iter().map(move |sql| async move {
                sql.query(node).fetch_bytes("RowBinary")?.collect().await
            })
        });
        let mut out = Vec::new();
        for bytes in futures_util::future::join_all(asks).await {
            out.push(bytes.map_err(super::ch_err)?.to_vec());
        }
        Ok(out)
    }

    /// Every node's rows of `edges` (of [`Self::edges_sql`]), asked at once.
    pub(super) async fn edge_rows(
        &self,
        edges: Option<&ChSql>,
    ) -> Result<Vec<StackSum>, StoreError> {
        let Some(sql) = edges else {
            return Ok(Vec::new());
        };
        let asks = self
            .nodes()
            .iter()
            .map(|node| sql.query(node).fetch_all::<StackSum>());
        let mut out = Vec::new();
        for rows in futures_util::future::join_all(asks).await {
            out.extend(rows.map_err(super::ch_err)?);
        }
        Ok(out)
    }

    /// The rollup's sums of whole buckets `(level, first, last)`, a row per process; with
    /// `only`, of those functions alone (each row's arrays filtered in ClickHouse).
    pub(super) fn rollup_sql(
        &self,
        table: &str,
        sel: &Selection,
        skip_total: bool,
        buckets: &[(i64, i64, i64)],
        only: Option<&[u64]>,
    ) -> ChSql {
        // Summed by ClickHouse per process: reading the rows out and summing them here moved
        // 40 MB for a day of 1M samples and took 150-250 ms; `sumMap` sends 1.4 MB (a row
        // per process) and its time grows with the entries read (docs/performance.md).
        let mut sql = match only {
            None => ChSql::new(
                "SELECT app_service AS app, sum(all_value) AS all_sum, \
                 sumMap(fnMap.id, fnMap.self_value, fnMap.total) AS fns FROM ",
            ),
            Some(ids) => {
                // Each row's entries of `ids` picked by a mask computed once per entry (three
                // `arrayFilter(x -> x IN ...)` took 31 ms for a day's page of the hottest
                // 100 functions, the mask 21 ms: about what reading the arrays takes).
                let mut sql = ChSql::new(
                    "SELECT app, sum(all_value) AS all_sum, sumMap(\
                     arrayFilter((x, k) -> k, ids, keep), arrayFilter((x, k) -> k, selfs, keep), \
                     arrayFilter((x, k) -> k, totals, keep)) AS fns FROM (\
                     SELECT app_service AS app, all_value, fnMap.id AS ids, \
                     fnMap.self_value AS selfs, fnMap.total AS totals, arrayMap(x -> x IN (",
                );
                // Integers the store produced: formatted, not request data.
                // 0 (every sample's sum) is no function's id: an empty list matches none.
                let list = if ids.is_empty() {
                    "0".to_owned()
                } else {
                    id_list(ids)
                };
                sql.push(&list).push("), fnMap.id) AS keep FROM ");
                sql
            }
        };
        sql.push(table).push(" WHERE ");
        buckets_where(&mut sql, buckets);
        // No tag conditions reach here: only the process's own columns.
        sql.series_conditions(sel);
        app_condition(&mut sql, sel, skip_total);
        if only.is_some() {
            sql.push(")");
        }
        sql.push(" GROUP BY app");
        sql
    }
}

/// Appends `(level = ... AND time >= ... AND time <= ...) OR ...` for whole buckets
/// `(level, first, last)`.
pub(super) fn buckets_where(sql: &mut ChSql, buckets: &[(i64, i64, i64)]) {
    sql.push("(");
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
}

/// Adds the rollup's answer (of `rollup_sql`: process, every sample's value, and the
/// functions' ids, self and total as three arrays) to `sums`, at each row's process or, given
/// `at`, all at that place.
pub(super) fn add_rollup(
    bytes: &[u8],
    sums: &mut IdSums,
    at: Option<usize>,
) -> Result<(), StoreError> {
    let mut rows = RawRows::new(bytes);
    while !rows.is_done() {
        // One row per process.
        let app = rows.string()?;
        let place = match at {
            Some(p) => p,
            None => sums.place((app.to_owned(), None)),
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
