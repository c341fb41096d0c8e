//! Compacting the function rollup (and the fleet's sums, `functions_fleet`, alike). A functions
//! question adds up every row of the buckets it reads, and rows of one key that background merges have not merged yet are each read: a day
//! of 10M samples ingested in calls of 200,000 was read as 2.5 to 3.8 rows per key. Once an hour
//! partition gets no more rows — its hour, and the six-hour bucket starting in it, are over,
//! with a margin for late samples — the service's maintenance loop merges each such partition
//! still in several parts into one (`OPTIMIZE ... PARTITION ID ... FINAL`, which sums the rows
//! of a key as any merge of the `SummingMergeTree` does), so questions about the past read one
//! row per key and process.

use super::sql::ChSql;
use super::{ch_err, ClickHouseStore};
use crate::store::functions::WIDE_LEVELS;
use crate::store::StoreError;

/// How long after its hour starts a partition is left to background merges alone: the widest
/// bucket starting in it, and ten minutes for samples that arrive late.
const SETTLED_AFTER: i64 = WIDE_LEVELS[0] + 600;

impl ClickHouseStore {
    /// Merges, on every node, each partition of the rollup and of the fleet's sums settled at
    /// `now` (Unix seconds) that is in more than one part; how many it merged.
    pub fn compact_rollup(&self, now: i64) -> Result<u64, StoreError> {
        self.block_on(async {
            let mut merged = 0;
            let pairs: Vec<(&clickhouse::Client, &str)> = self
                .nodes()
                .iter()
                .flat_map(|n| self.local_rollups().map(|t| (n, t)))
                .collect();
            for (node, table) in pairs {
                let parts = self
                    .partitions_before(node, (table, SETTLED_AFTER), now, 2)
                    .await?;
                for id in parts {
                    let mut optimize = ChSql::new("OPTIMIZE TABLE ");
                    optimize
                        .push(&self.table_named(table))
                        .push(" PARTITION ID ")
                        .bind(id)
                        .push(" FINAL");
                    optimize.query(node).execute().await.map_err(ch_err)?;
                    merged += 1;
                }
            }
            Ok(merged)
        })
    }
}
