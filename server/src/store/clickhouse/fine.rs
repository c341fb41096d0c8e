//! Fine-grained time on ClickHouse: each sample row carries its events (millisecond, thread,
//! weight) in its own `events` column, packed as on SQLite ([`blob`]), empty without them.
//! Beside the row rather than in a table of their own: a selection's rows with their events
//! are then one read of the columns the selection already filters, on one server or a
//! cluster alike (a second table would be sharded apart from its rows). ProfileTracing and
//! the rollups never read the column.
//!
//! The fine retention (`--fine-retention`): 18.16 has no TTL (column TTL came with 19.6), so,
//! as the samples' retention does (`retention`), each node empties the column of every hour
//! partition wholly older than the cutoff (`CLEAR COLUMN ... IN PARTITION`, which rewrites only
//! that column) and, for the hour straddling the cutoff, of the rows older than it by a
//! mutation. Emptied rows read as untimed, exactly as SQLite's rows whose times were dropped.

use std::collections::HashMap;

use super::raw_rows::RawRows;
use super::retention::count;
use super::sql::{common_where, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::fine::{blob, FineRow, FineRows};
use crate::store::functions::HOUR;
use crate::store::query::QueryError;
use crate::store::StoreError;
use embers_model::contract::selection::Selection;

/// Reads the `RowBinary` rows of (time, stack_id, profile_value, events).
fn decode(bytes: &[u8]) -> Result<Vec<FineRow>, StoreError> {
    let mut rows = RawRows::new(bytes);
    let mut out = Vec::new();
    while !rows.is_done() {
        let time = i64::from(rows.u32()?);
        let stack = rows.u64()?;
        let value = rows.i64()?;
        let events = rows.bytes()?;
        out.push(FineRow {
            time,
            stack,
            value: u64::try_from(value).unwrap_or(0),
            events: match events.is_empty() {
                true => Vec::new(),
                false => blob::decode(events)?,
            },
        });
    }
    Ok(out)
}

#[derive(Debug, clickhouse::Row, serde::Deserialize)]
struct Hour {
    id: String,
}

impl ClickHouseStore {
    /// The partition ids (an hour's start in Unix seconds, as 18.16 and later name the
    /// partitions of `toStartOfHour(time)`) of `table`'s rows before `before` that still have
    /// events: only those are cleared, not every older hour again. Were the ids named
    /// otherwise, nothing would match and the mutation would empty the rows instead.
    async fn timed_hours(
        &self,
        node: &clickhouse::Client,
        table: &str,
        before: i64,
    ) -> Result<Vec<String>, StoreError> {
        let mut sql = ChSql::new("SELECT toString(toUInt32(toStartOfHour(time))) AS id FROM ");
        sql.push(table)
            .push(" WHERE events != '' AND time < ")
            .bind(before)
            .push(" GROUP BY id");
        let rows: Vec<Hour> = sql.query(node).fetch_all().await.map_err(ch_err)?;
        Ok(rows.into_iter().map(|h| h.id).collect())
    }

    /// The rows of `sel` with their events; `app_service: None` reads the processes
    /// ProfileTracing would find (1 to 10, else its error). The names read come back too.
    pub fn fine_rows(
        &self,
        sel: &Selection,
        texts: bool,
    ) -> Result<(Vec<String>, FineRows), QueryError> {
        let services = match &sel.app_service {
            Some(name) => vec![name.clone()],
            None => self.discover(sel, &mut Vec::new())?,
        };
        let mut sql = ChSql::new("SELECT time, stack_id, profile_value, events FROM ");
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, sel, &self.table_named("tagsets"));
        sql.push(" AND app_service").in_list(&services);
        let bytes = self
            .block_on(async {
                let mut rows = sql.query(self.client()).fetch_bytes("RowBinary")?;
                rows.collect().await
            })
            .map_err(ch_err)?;
        let mut out = FineRows {
            rows: decode(&bytes)?,
            stacks: HashMap::new(),
        };
        if texts {
            out.stacks = self.stack_texts(out.rows.iter().map(|r| r.stack), &mut Vec::new())?;
        }
        Ok((services, out))
    }

    /// The fine retention on every node: empties the events of rows of seconds before
    /// `before`; how many rows had some (0 once none is left, which ends the caller's loop:
    /// whole partitions go at once, so `_limit` does not bound a step here).
    pub fn expire_fine_step(&self, before: i64, _limit: usize) -> Result<u64, StoreError> {
        let before = before.clamp(0, i64::from(u32::MAX) + 1);
        let local = self.local_name();
        let table = self.local_table();
        let condition = "events != '' AND time < ";
        self.block_on(async {
            let mut total = 0;
            for node in self.nodes() {
                let n = count(node, &table, condition, before).await?;
                if n == 0 {
                    continue;
                }
                total += n;
                let timed = self.timed_hours(node, &table, before).await?;
                let expired = self.partitions_before(node, (local, HOUR), before, 1);
                for id in expired.await?.into_iter().filter(|id| timed.contains(id)) {
                    let mut clear = ChSql::new("ALTER TABLE ");
                    clear
                        .push(&table)
                        .push(" CLEAR COLUMN events IN PARTITION ID ")
                        .bind(id);
                    clear.query(node).execute().await.map_err(ch_err)?;
                }
                if count(node, &table, condition, before).await? > 0 {
                    let mut mutation = ChSql::new("ALTER TABLE ");
                    mutation
                        .push(&table)
                        .push(" UPDATE events = '' WHERE ")
                        .push(condition)
                        .bind(before);
                    self.mutate(node, local, &mutation).await?;
                }
            }
            Ok(total)
        })
    }
}
