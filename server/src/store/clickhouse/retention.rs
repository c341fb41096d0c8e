//! Removing data on ClickHouse: samples older than a cutoff (retention) and every sample of one
//! process (delete), on each node's own table of samples (`in_process`, or `in_process_local`
//! on every shard of a cluster: one `--clickhouse-url` per shard).
//!
//! 18.16 has no table TTL, so retention is done by hand, in two steps per node: every hour
//! partition that has wholly expired is dropped (`DROP PARTITION ID`, immediate and cheap), then
//! the rows of the hour straddling the cutoff that are older than it go by a mutation (`ALTER
//! TABLE ... DELETE WHERE time < cutoff`). 18.16 rewrites only the parts a mutation touches and
//! hard-links the others, so that mutation rewrites at most one hour of samples; it leaves the
//! same samples as SQLite's retention does, so both backends answer alike after a pass.
//!
//! Mutations run in the background (18.16 has no `mutations_sync`): each call waits until
//! `system.mutations` says the table has none left to do, so that an answered delete or pass is
//! visible to every later read. Counts are taken just before deleting (what was there then).
//!
//! The function rollup (`functions_rollup`, partitioned by hour too) goes the same way, by the
//! rule of SQLite's rollups: a bucket goes once it has wholly expired (`time + level <=
//! cutoff`), so both backends keep the same buckets and answer alike; the fleet's sums
//! (`functions_fleet`) with it. Deleting a process leaves those (its samples are summed in with
//! every other's) and records that they are no longer complete (`fleet`). Stacks, tag sets,
//! function names and snapshots are kept, as on SQLite.

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::sql::ChSql;
use super::{ch_err, ClickHouseStore};
use crate::store::functions::{HOUR, WIDE_LEVELS};
use crate::store::retention::Removed;
use crate::store::StoreError;
use embers_model::contract::event::TOTAL_APP_SERVICE;

/// Longest wait for a mutation to finish before the caller is told it is still running.
const MUTATION_WAIT: Duration = Duration::from_secs(600);
/// Longest pause between two looks at `system.mutations`.
const MAX_POLL: Duration = Duration::from_millis(200);

#[derive(Debug, clickhouse::Row, Deserialize)]
struct Count {
    n: u64,
}

#[derive(Debug, clickhouse::Row, Deserialize)]
struct PartitionId {
    id: String,
}

/// Rows of `table` matching `condition` (fixed text) with its bound value.
pub(super) async fn count(
    node: &clickhouse::Client,
    table: &str,
    condition: &str,
    value: impl Into<super::sql::Bound>,
) -> Result<u64, StoreError> {
    let mut sql = ChSql::new("SELECT count() AS n FROM ");
    sql.push(table).push(" WHERE ").push(condition).bind(value);
    let row: Count = sql.query(node).fetch_one().await.map_err(ch_err)?;
    Ok(row.n)
}

impl ClickHouseStore {
    /// Remove every sample with `time < before` from every node; returns how many there were.
    pub fn expire(&self, before: i64) -> Result<Removed, StoreError> {
        // A DateTime is never below 0; past u32::MAX every stored time is older.
        let before = before.clamp(0, i64::from(u32::MAX) + 1);
        self.block_on(async {
            let mut removed = Removed::default();
            if self.anything_before(before).await? {
                self.set_horizon(before).await?;
            }
            for node in self.nodes() {
                let r = self.expire_node(node, before).await?;
                removed.samples += r.samples;
                removed.rollup_rows += r.rollup_rows;
            }
            Ok(removed)
        })
    }

    /// Whether any sample is older than `before`.
    async fn anything_before(&self, before: i64) -> Result<bool, StoreError> {
        Ok(count(self.client(), &self.table(), "time < ", before).await? > 0)
    }

    /// Records on every node that samples before `before` go: the function rollup's buckets
    /// up to the next whole hour are read from the samples from now on. Kept to the hour, so
    /// that the table holds a few rows a day.
    async fn set_horizon(&self, before: i64) -> Result<(), StoreError> {
        let hour = before.div_euclid(3600) * 3600;
        let kept = if hour == before { hour } else { hour + 3600 };
        for node in self.nodes() {
            let mut sql = ChSql::new("INSERT INTO ");
            sql.push(&self.table_named("horizon"))
                .push(" SELECT toDateTime(")
                .bind(kept.min(i64::from(u32::MAX)))
                .push(")");
            sql.query(node).execute().await.map_err(ch_err)?;
        }
        Ok(())
    }

    async fn expire_node(
        &self,
        node: &clickhouse::Client,
        before: i64,
    ) -> Result<Removed, StoreError> {
        let samples = self.local_table();
        let expired = count(node, &samples, "time < ", before).await?;
        let condition = "toInt64(time) + level <= ";
        if expired > 0 {
            self.cut(node, (self.local_name(), HOUR), "time < ", before)
                .await?;
        }
        let mut expired_rows = 0;
        // The fleet's sums go by the same rule; only the rollup's rows are counted (as on
        // SQLite). Each table is counted on its own: sharded at random, a node may hold
        // expired rows of one and none of the other.
        for local in self.local_rollups() {
            let n = count(node, &self.table_named(local), condition, before).await?;
            if n > 0 {
                // An hour partition also holds the six-hour buckets starting then.
                self.cut(node, (local, WIDE_LEVELS[0]), condition, before)
                    .await?;
            }
            if local == self.local_functions() {
                expired_rows = n;
            }
        }
        Ok(Removed {
            samples: expired,
            rollup_rows: expired_rows,
        })
    }

    /// Removes the rows of `local` (a table of the node, whose hour partitions hold rows up to
    /// `span` seconds from their start) matching `condition` (fixed text, `before` bound):
    /// whole partitions wholly before `before`, then a mutation for the rest.
    async fn cut(
        &self,
        node: &clickhouse::Client,
        (local, span): (&str, i64),
        condition: &str,
        before: i64,
    ) -> Result<(), StoreError> {
        let table = self.table_named(local);
        for id in self
            .partitions_before(node, (local, span), before, 1)
            .await?
        {
            let mut drop = ChSql::new("ALTER TABLE ");
            drop.push(&table).push(" DROP PARTITION ID ").bind(id);
            drop.query(node).execute().await.map_err(ch_err)?;
        }
        if count(node, &table, condition, before).await? > 0 {
            let mut mutation = ChSql::new("ALTER TABLE ");
            mutation
                .push(&table)
                .push(" DELETE WHERE ")
                .push(condition)
                .bind(before);
            self.mutate(node, local, &mutation).await?;
        }
        Ok(())
    }

    /// The partitions of the node's table `local` whose rows (up to `span` seconds from the
    /// partition's hour) are all before `before`, and which are in at least `min_parts` parts.
    pub(super) async fn partitions_before(
        &self,
        node: &clickhouse::Client,
        (local, span): (&str, i64),
        before: i64,
        min_parts: u64,
    ) -> Result<Vec<String>, StoreError> {
        let mut sql =
            ChSql::new("SELECT partition_id AS id FROM system.parts WHERE active AND database = ");
        sql.bind(self.database().to_owned())
            .push(" AND table = ")
            .bind(local.to_owned())
            .push(" GROUP BY partition_id HAVING count() >= ")
            .bind(i64::try_from(min_parts).unwrap_or(i64::MAX))
            .push(" AND toInt64(toStartOfHour(min(min_time))) + ")
            .bind(span)
            .push(" <= ")
            .bind(before);
        let rows: Vec<PartitionId> = sql.query(node).fetch_all().await.map_err(ch_err)?;
        Ok(rows.into_iter().map(|r| r.id).collect())
    }

    /// Delete every sample of `app_service` (all languages and event types) from every node;
    /// returns how many there were.
    pub fn delete_app(&self, app_service: &str) -> Result<Removed, StoreError> {
        self.block_on(async {
            // Before any mutation, and on every delete: one that fails or times out still
            // finishes in the background, and a retry then finds nothing to count.
            if app_service != TOTAL_APP_SERVICE {
                self.fleet_without_deleted().await?;
            }
            let mut removed = Removed::default();
            for node in self.nodes() {
                for (local, into_rollup) in
                    [(self.local_name(), false), (self.local_functions(), true)]
                {
                    let table = self.table_named(local);
                    let app = app_service.to_owned();
                    let n = count(node, &table, "app_service = ", app.clone()).await?;
                    if n == 0 {
                        continue;
                    }
                    let mut mutation = ChSql::new("ALTER TABLE ");
                    mutation
                        .push(&table)
                        .push(" DELETE WHERE app_service = ")
                        .bind(app);
                    self.mutate(node, local, &mutation).await?;
                    match into_rollup {
                        true => removed.rollup_rows += n,
                        false => removed.samples += n,
                    }
                }
            }
            Ok(removed)
        })
    }

    /// Run the mutation `sql` on `node` and wait until the node has no mutation of its table
    /// `local` left to do.
    pub(super) async fn mutate(
        &self,
        node: &clickhouse::Client,
        local: &str,
        sql: &ChSql,
    ) -> Result<(), StoreError> {
        sql.query(node).execute().await.map_err(ch_err)?;
        let mut pending = ChSql::new(
            "SELECT count() AS n FROM system.mutations WHERE NOT is_done AND database = ",
        );
        pending
            .bind(self.database().to_owned())
            .push(" AND table = ")
            .bind(local.to_owned());
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            let row: Count = pending.query(node).fetch_one().await.map_err(ch_err)?;
            if row.n == 0 {
                return Ok(());
            }
            if started.elapsed() > MUTATION_WAIT {
                return Err(StoreError::ClickHouse(format!(
                    "the delete did not finish within {} s; ClickHouse goes on with it in the \
                     background (see system.mutations of {})",
                    MUTATION_WAIT.as_secs(),
                    self.table_named(local)
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_POLL);
        }
    }
}
