//! Fine-grained time in the store (schema version 6, docs/design/lines-and-time.md): the
//! millisecond, thread and weight of every event folded into a stored sample row, kept beside
//! the row and never in it, so ProfileTracing and the rollups read exactly what they read
//! before.
//!
//! - SQLite: `profile.sample_times (time, sample_id, events)`, one row per `samples` row that
//!   has event times, keyed by the row's second and id (`WITHOUT ROWID`: the key is the one
//!   b-tree, so retention by time needs no second index), `events` packed by [`blob`]. A
//!   trigger drops a row with its sample (retention, delete); `--fine-retention` drops rows
//!   older than it on their own ([`SqliteStore::expire_fine_step`]).
//! - ClickHouse: an `events` column of the sample row, packed the same way (see
//!   `clickhouse::fine`); the fine retention empties it (whole hour partitions, then a
//!   mutation for the older rows of the hour straddling the cutoff).
//!
//! Both answer [`FineRows`] (the sample rows of a selection with their events); the heatmap,
//! the samples and ProfileTracing's millisecond windows are built from those once, for both
//! ([`answer`]).

pub mod answer;
pub mod blob;
mod read;

use std::collections::HashMap;

use embers_model::contract::detail::TimedEvent;
use rusqlite::{params, Transaction, TransactionBehavior};

use super::{SqliteStore, StoreError};

/// The DDL of schema version 6.
pub const V6_SQL: &str = "
CREATE TABLE profile.sample_times (
  time INTEGER NOT NULL,
  sample_id INTEGER NOT NULL,
  events BLOB NOT NULL,
  PRIMARY KEY (time, sample_id)
) WITHOUT ROWID;
CREATE TRIGGER profile.sample_times_follow AFTER DELETE ON samples BEGIN
  DELETE FROM sample_times WHERE time = old.time AND sample_id = old.id;
END;
";

/// Stores the events of the sample row `sample_id` of second `time` (nothing when empty).
pub(crate) fn write(
    tx: &Transaction<'_>,
    time: i64,
    sample_id: i64,
    events: &[TimedEvent],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    tx.prepare_cached(
        "INSERT INTO profile.sample_times (time, sample_id, events) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![time, sample_id, blob::encode(events)])?;
    Ok(())
}

/// One stored sample row (SQLite), or one second's sum per stack (ClickHouse), with the events
/// known below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FineRow {
    /// Unix seconds.
    pub time: i64,
    /// The stack's id in the store.
    pub stack: u64,
    /// The row's value: the events' weights plus what is known only to the second.
    pub value: u64,
    /// The events with times, in time order.
    pub events: Vec<TimedEvent>,
}

impl FineRow {
    /// The part of the value no event accounts for (data without event times).
    pub fn untimed(&self) -> u64 {
        let timed = self
            .events
            .iter()
            .fold(0u64, |s, e| s.saturating_add(e.weight));
        self.value.saturating_sub(timed)
    }
}

/// The rows of a selection and, when asked, their stacks' texts.
#[derive(Debug, Default)]
pub struct FineRows {
    /// The rows, in no particular order.
    pub rows: Vec<FineRow>,
    /// Stack id → `;`-joined text (empty unless texts were asked for).
    pub stacks: HashMap<u64, String>,
}

impl SqliteStore {
    /// One step of the fine retention: drop up to `limit` event rows of seconds before
    /// `before`; how many went (call again while it removes anything).
    pub fn expire_fine_step(&self, before: i64, limit: usize) -> Result<u64, StoreError> {
        let mut writer = self.writer();
        let tx = writer
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = tx
            .prepare_cached(
                "DELETE FROM profile.sample_times WHERE (time, sample_id) IN \
                 (SELECT time, sample_id FROM profile.sample_times WHERE time < ?1 LIMIT ?2)",
            )?
            .execute(params![before, i64::try_from(limit).unwrap_or(i64::MAX)])?;
        tx.commit()?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod measure;
#[cfg(test)]
pub(crate) mod tests;
