//! From when the function rollup's six-hour buckets are complete. They were added after the
//! rollup itself: rows written before hold hours and ten minutes only, so a six-hour bucket
//! there misses those samples. When a server first opens a store, every node without a record
//! gets one (`wide_from`): the end of the latest rollup bucket written so far, or 0 for a store
//! whose rollup is empty; reads use six-hour buckets only after the latest record
//! ([`crate::store::functions::plan_from`]). Servers of an older version still writing at the
//! same time would leave six-hour buckets incomplete after it: upgrade them together.

use super::sql::{latest, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::StoreError;

impl ClickHouseStore {
    /// Records where six-hour buckets start being complete, on every node that has no record.
    pub(super) async fn mark_wide_levels(&self) -> Result<(), StoreError> {
        let mut since = None;
        for node in self.nodes() {
            if latest(node, "start", &self.table_named("wide_from"))
                .await?
                .is_some()
            {
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
        let table = self.table_named("functions_rollup");
        let end = latest(self.client(), "toInt64(time) + level", &table).await?;
        Ok(end.unwrap_or(0))
    }

    /// From when six-hour buckets are complete: the latest record (0 without one).
    pub(crate) fn wide_from(&self) -> Result<i64, StoreError> {
        let table = self.table_named("wide_from");
        Ok(self
            .block_on(latest(self.client(), "start", &table))?
            .unwrap_or(0))
    }
}
