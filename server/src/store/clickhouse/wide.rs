//! From when the function rollup's six-hour buckets are complete. They were added after the
//! rollup itself: rows written before hold hours and ten minutes only, so a six-hour bucket
//! there misses those samples. When a server first opens a store, every node without a record
//! gets one (`wide_from`): the end of the latest rollup bucket written so far, or 0 for a store
//! whose rollup is empty; reads use six-hour buckets only after the latest record
//! ([`crate::store::functions::plan_from`]). Servers of an older version still writing at the
//! same time would leave six-hour buckets incomplete after it: upgrade them together.

use clickhouse::Row;
use serde::Deserialize;

use super::sql::ChSql;
use super::{ch_err, ClickHouseStore};
use crate::store::StoreError;

#[derive(Debug, Row, Deserialize)]
struct Latest {
    n: i64,
    c: u64,
}

impl ClickHouseStore {
    /// Records where six-hour buckets start being complete, on every node that has no record.
    pub(super) async fn mark_wide_levels(&self) -> Result<(), StoreError> {
        let mut since = None;
        for node in self.nodes() {
            let mut sql = ChSql::new("SELECT toInt64(0) AS n, count() AS c FROM ");
            sql.push(&self.table_named("wide_from"));
            let there: Latest = sql.query(node).fetch_one().await.map_err(ch_err)?;
            if there.c > 0 {
                continue;
            }
            let start = match since {
                Some(s) => s,
                None => *since.insert(self.rollup_end().await?),
            };
            let mut insert = ChSql::new("INSERT INTO ");
            insert
                .push(&self.table_named("wide_from"))
                .push(" SELECT toDateTime(")
                .bind(start.clamp(0, i64::from(u32::MAX)))
                .push(")");
            insert.query(node).execute().await.map_err(ch_err)?;
        }
        Ok(())
    }

    /// The end of the latest bucket of the whole rollup (every shard), 0 when it is empty.
    async fn rollup_end(&self) -> Result<i64, StoreError> {
        let mut sql =
            ChSql::new("SELECT toInt64(max(toInt64(time) + level)) AS n, count() AS c FROM ");
        sql.push(&self.table_named("functions_rollup"));
        let row: Latest = sql.query(self.client()).fetch_one().await.map_err(ch_err)?;
        Ok(if row.c > 0 { row.n } else { 0 })
    }

    /// From when six-hour buckets are complete: the latest record (0 without one).
    pub(crate) fn wide_from(&self) -> Result<i64, StoreError> {
        let mut sql = ChSql::new("SELECT toInt64(max(start)) AS n, count() AS c FROM ");
        sql.push(&self.table_named("wide_from"));
        let row: Latest = self
            .block_on(sql.query(self.client()).fetch_one())
            .map_err(ch_err)?;
        Ok(if row.c > 0 { row.n } else { 0 })
    }
}
