//! Removing data: samples older than a cutoff (retention) and every sample of one process
//! (delete), in small transactions so that ingest, which shares the one writer connection,
//! waits at most one batch; readers are never blocked (WAL).
//!
//! What goes: `profile.samples` rows and the rollup rows they summed (the explore rollup's,
//! the function rollup's and the line sums). A rollup bucket goes once
//! it is wholly older than the cutoff (so a coarse bucket straddling the cutoff keeps counting
//! its expired part until it has all expired). What stays: stack texts, tag sets and series
//! (small, shared across time, and cached by the writer: they are reused as they are), and
//! every other table, snapshots included. Freed pages go back to the file system by
//! incremental vacuum when the file was created with `auto_vacuum = INCREMENTAL` (new files
//! are); in an older file they are reused by later ingest.

use rusqlite::{params, Connection, TransactionBehavior};

use super::rollup::LEVELS;
use super::{fn_rollup, lines};
use super::{SqliteStore, StoreError};

/// What one call removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Sample rows.
    pub samples: u64,
    /// Rollup rows (all levels).
    pub rollup_rows: u64,
}

impl Removed {
    fn add(&mut self, other: Removed) {
        self.samples += other.samples;
        self.rollup_rows += other.rollup_rows;
    }
}

/// The (app_service, language, event type) triples with series: the leading columns of the
/// samples' index, so each delete below is an index range rather than a table scan.
fn processes(conn: &Connection, app: Option<&str>) -> Result<Vec<[String; 3]>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT app_service, profile_language_type, profile_event_type \
         FROM profile.series WHERE ?1 IS NULL OR app_service = ?1",
    )?;
    let rows = stmt.query_map([app], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Delete up to `limit` samples of `process` with `time < before` in one transaction; with
/// `horizon`, record `before` as the function rollup's horizon first (in the same one).
fn delete_samples(
    conn: &mut Connection,
    process: &[String; 3],
    before: i64,
    limit: usize,
    horizon: bool,
) -> Result<u64, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if horizon {
        fn_rollup::set_horizon(&tx, before)?;
    }
    let n = tx
        .prepare_cached(
            "DELETE FROM profile.samples WHERE id IN (SELECT id FROM profile.samples \
             WHERE app_service = ?1 AND profile_language_type = ?2 AND profile_event_type = ?3 \
             AND time < ?4 LIMIT ?5)",
        )?
        .execute(params![
            process[0],
            process[1],
            process[2],
            before,
            i64::try_from(limit).unwrap_or(i64::MAX)
        ])?;
    tx.commit()?;
    Ok(n as u64)
}

/// Delete up to `limit` rows of each rollup level (the explore rollup's and the function
/// rollup's) whose bucket ends at or before `before`.
fn delete_rollup(conn: &mut Connection, before: i64, limit: usize) -> Result<u64, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut n = 0;
    for (seconds, table) in fn_rollup::TABLES {
        // A fixed identifier of fn_rollup::TABLES.
        n += tx
            .prepare_cached(&format!(
                "DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table} WHERE time <= ?1 \
                 LIMIT ?2)"
            ))?
            .execute(params![
                before.saturating_sub(seconds),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ])? as u64;
    }
    n += lines::expire(&tx, before, limit)?;
    for level in LEVELS {
        // `level.table` is a fixed identifier; a bucket [t, t + s) has wholly expired when
        // t + s <= before.
        n += tx
            .prepare_cached(&format!(
                "DELETE FROM {0} WHERE (time, series_id) IN (SELECT time, series_id FROM {0} \
                 WHERE time <= ?1 LIMIT ?2)",
                level.table
            ))?
            .execute(params![
                before.saturating_sub(level.seconds),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ])? as u64;
    }
    tx.commit()?;
    Ok(n)
}

/// Delete every rollup row of `app`'s series (both rollups), one transaction per level.
fn delete_app_rollup(conn: &mut Connection, app: &str) -> Result<u64, StoreError> {
    let mut n = 0;
    for (_, table) in fn_rollup::TABLES {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        n += tx
            .prepare_cached(&format!(
                "DELETE FROM {table} WHERE series_id IN \
                 (SELECT id FROM profile.function_series WHERE app_service = ?1)"
            ))?
            .execute([app])? as u64;
        tx.commit()?;
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    n += lines::delete_app(&tx, app)?;
    tx.commit()?;
    for level in LEVELS {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        n += tx
            .prepare_cached(&format!(
                "DELETE FROM {} WHERE series_id IN \
                 (SELECT id FROM profile.series WHERE app_service = ?1)",
                level.table
            ))?
            .execute([app])? as u64;
        tx.commit()?;
    }
    Ok(n)
}

impl SqliteStore {
    /// One step of retention: at most `limit` expired samples of each process and `limit`
    /// wholly expired rollup rows of each level, each in its own short transaction. Call again
    /// while it removes anything.
    pub fn expire_step(&self, before: i64, limit: usize) -> Result<Removed, StoreError> {
        let list = self.with_reader(|conn| processes(conn, None))?;
        let mut removed = Removed::default();
        for process in &list {
            removed.samples +=
                delete_samples(&mut self.writer().conn, process, before, limit, true)?;
        }
        removed.rollup_rows = delete_rollup(&mut self.writer().conn, before, limit)?;
        Ok(removed)
    }

    /// Delete every sample of `app_service` (all languages and event types) and its rollup
    /// rows, `batch` samples per transaction; returns what was removed.
    pub fn delete_app(&self, app_service: &str, batch: usize) -> Result<Removed, StoreError> {
        let list = self.with_reader(|conn| processes(conn, Some(app_service)))?;
        let mut removed = Removed::default();
        for process in &list {
            loop {
                let n = delete_samples(&mut self.writer().conn, process, i64::MAX, batch, false)?;
                removed.samples += n;
                if n == 0 {
                    break;
                }
            }
        }
        let rollup_rows = delete_app_rollup(&mut self.writer().conn, app_service)?;
        removed.add(Removed {
            samples: 0,
            rollup_rows,
        });
        Ok(removed)
    }

    /// Give up to `pages` free pages back to the file system (incremental vacuum); returns how
    /// many free pages are left. A no-op on files without incremental auto-vacuum.
    pub fn reclaim(&self, pages: u32) -> Result<u64, StoreError> {
        let writer = self.writer();
        // incremental_vacuum returns no useful rows; step through them to run it.
        writer
            .conn
            .prepare(&format!("PRAGMA profile.incremental_vacuum({pages})"))?
            .query([])?
            .next()?;
        let free: i64 = writer
            .conn
            .query_row("PRAGMA profile.freelist_count", [], |r| r.get(0))?;
        Ok(u64::try_from(free).unwrap_or(0))
    }

    /// Whether the file gives freed pages back (auto_vacuum = INCREMENTAL).
    pub fn reclaims_space(&self) -> Result<bool, StoreError> {
        self.with_reader(|conn| {
            let mode: i64 = conn.query_row("PRAGMA profile.auto_vacuum", [], |r| r.get(0))?;
            Ok(mode == 2)
        })
    }
}
