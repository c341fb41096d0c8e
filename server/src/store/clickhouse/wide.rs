//! From when the function rollup's six-hour buckets are complete. They were added after the
//! rollup itself: rows written before hold hours and ten minutes only, so a six-hour bucket
//! there misses those samples. When a server first opens a store, every node without a record
//! gets one (`wide_from`): the end of the latest rollup bucket written so far, or 0 for a store
//! whose rollup is empty; reads use six-hour buckets only after the latest record
//! ([`crate::store::functions::plan_from`]). Servers of an older version still writing at the
//! same time would leave six-hour buckets incomplete after it: upgrade them together.
//!
//! The fleet's sums (`functions_fleet`, see `fleet`) came later still, and are recorded the
//! same way (`fleet_from`): the end of the rollup when a server first opens the store.

use super::sql::{latest, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::StoreError;

impl ClickHouseStore {
    /// Records where six-hour buckets and the fleet's sums start being complete, on every node
    /// without a record of each.
    pub(super) async fn mark_wide_levels(&self) -> Result<(), StoreError> {
        let mut since = None;
        for table in ["wide_from", "fleet_from"] {
            for node in self.nodes() {
                if latest(node, "start", &self.table_named(table))
                    .await?
                    .is_some()
                {
                    continue;
                }
                let start = match since {
                    Some(s) => s,
                    None => *since.insert(self.rollup_end().await?),
                };
                self.record_start(node, table, start).await?;
            }
        }
        Ok(())
    }

    /// Adds `start` to the records of `table` (one of the marker tables) on `node`.
    pub(super) async fn record_start(
        &self,
        node: &clickhouse::Client,
        table: &str,
        start: i64,
    ) -> Result<(), StoreError> {
        let mut insert = ChSql::new("INSERT INTO ");
        insert
            .push(&self.table_named(table))
            .push(" SELECT toDateTime(")
            .bind(start.clamp(0, i64::from(u32::MAX)))
            .push(")");
        insert.query(node).execute().await.map_err(ch_err)
    }

    /// Adds `start` to the records of `table` on every node.
    pub(super) async fn record_everywhere(
        &self,
        table: &str,
        start: i64,
    ) -> Result<(), StoreError> {
        for node in self.nodes() {
            self.record_start(node, table, start).await?;
        }
        Ok(())
    }

    /// The end of the latest bucket of the whole rollup (every shard), 0 when it is empty.
    async fn rollup_end(&self) -> Result<i64, StoreError> {
        let table = self.table_named("functions_rollup");
        let end = latest(self.client(), "toInt64(time) + level", &table).await?;
        Ok(end.unwrap_or(0))
    }

    /// What a functions question's plan starts from, in one round trip per node (at once): the
    /// latest retention cutoff (see `retention`), from when six-hour buckets are complete and
    /// from when the fleet's sums are — each the latest record on any node (0 without one), so
    /// a record some node missed, or servers listing the nodes in another order, still count.
    pub(crate) fn starts(&self) -> Result<Starts, StoreError> {
        let mut sql = ChSql::new("SELECT (SELECT toInt64(max(cutoff)) FROM ");
        sql.push(&self.table_named("horizon"))
            .push(") AS horizon, (SELECT count() FROM ")
            .push(&self.table_named("horizon"))
            .push(") AS cutoffs, (SELECT toInt64(max(start)) FROM ")
            .push(&self.table_named("wide_from"))
            .push(") AS wide_from, (SELECT toInt64(max(start)) FROM ")
            .push(&self.table_named("fleet_from"))
            .push(") AS fleet_from");
        let asks = self.nodes().iter().map(|node| sql.query(node).fetch_one());
        let rows: Vec<StartsRow> = self
            .block_on(futures_util::future::join_all(asks))
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(ch_err)?;
        let latest = |f: fn(&StartsRow) -> i64| rows.iter().map(f).max().unwrap_or(0);
        Ok(Starts {
            horizon: rows
                .iter()
                .filter(|r| r.cutoffs > 0)
                .map(|r| r.horizon)
                .max(),
            wide_from: latest(|r| r.wide_from),
            fleet_from: latest(|r| r.fleet_from),
        })
    }
}

#[derive(Debug, clickhouse::Row, serde::Deserialize)]
struct StartsRow {
    horizon: i64,
    cutoffs: u64,
    wide_from: i64,
    fleet_from: i64,
}

/// See [`ClickHouseStore::starts`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Starts {
    pub(crate) horizon: Option<i64>,
    pub(crate) wide_from: i64,
    pub(crate) fleet_from: i64,
}
