//! The rollup: sums of `profile_value` and sample counts per series and time bucket, kept at two
//! granularities and written in the same transaction as the samples (DeepFlow keeps a 1-second
//! aggregate, `in_process_metrics`, for the same reason).
//!
//! A *series* (`profile.series`) is what every sample of it shares: app_service, language, event
//! type, tag set and thread (the stack's first `[t] ` frame). `profile.rollup_1s` holds one row
//! per second and series, `profile.rollup_5s` one per 5 seconds, ... up to `profile.rollup_1h`
//! ([`LEVELS`]); all are keyed by `(time, series_id)`, so a time range is one contiguous index
//! scan of small rows.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};

use super::{saturate, StoreError};
use embers_model::contract::explore::bucket_start;

/// One granularity of the rollup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Level {
    /// Bucket length in seconds.
    pub(crate) seconds: i64,
    /// The table holding it (a fixed identifier).
    pub(crate) table: &'static str,
}

/// The granularities, coarsest first; the last one is one second, so it covers any range. They
/// are the timeline's interval ladder, so a timeline at a ladder interval reads one row per
/// bucket and series (at most ~300 buckets), however many samples the range holds. The tables
/// are created by schema step 2: changing this list needs a new migration step.
pub(crate) const LEVELS: [Level; 9] = [
    level(3600, "profile.rollup_1h"),
    level(1800, "profile.rollup_30m"),
    level(600, "profile.rollup_10m"),
    level(300, "profile.rollup_5m"),
    level(60, "profile.rollup_1m"),
    level(30, "profile.rollup_30s"),
    level(10, "profile.rollup_10s"),
    level(5, "profile.rollup_5s"),
    level(1, "profile.rollup_1s"),
];

const fn level(seconds: i64, table: &'static str) -> Level {
    Level { seconds, table }
}

/// What every sample of a series shares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SeriesKey {
    pub(crate) app_service: String,
    pub(crate) language: String,
    pub(crate) event_type: String,
    pub(crate) tagset_id: i64,
    pub(crate) thread: String,
}

/// Ids of committed series. Series are never deleted or renumbered, so entries stay valid; the
/// table is small (processes × tag sets × threads), so all of it may be remembered.
#[derive(Debug, Default)]
pub(crate) struct SeriesIds {
    ids: HashMap<SeriesKey, i64>,
}

/// The rollup rows one insert transaction adds, summed before they are written.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Series this transaction created or looked up (remembered only after the commit).
    series: HashMap<SeriesKey, i64>,
    /// `(second, series_id) -> (value, samples)`.
    sums: HashMap<(i64, i64), (i64, i64)>,
}

impl Pending {
    /// The id of `key`'s series, created if new.
    pub(crate) fn series_id(
        &mut self,
        tx: &Transaction<'_>,
        known: &SeriesIds,
        key: SeriesKey,
    ) -> Result<i64, StoreError> {
        if let Some(&id) = known.ids.get(&key).or_else(|| self.series.get(&key)) {
            return Ok(id);
        }
        let existing = tx
            .prepare_cached(
                "SELECT id FROM profile.series WHERE app_service = ?1 AND \
                 profile_language_type = ?2 AND profile_event_type = ?3 AND tagset_id = ?4 \
                 AND thread = ?5",
            )?
            .query_row(
                params![
                    key.app_service,
                    key.language,
                    key.event_type,
                    key.tagset_id,
                    key.thread
                ],
                |r| r.get::<_, i64>(0),
            )
            .optional()?;
        let id = match existing {
            Some(id) => id,
            None => {
                tx.prepare_cached(
                    "INSERT INTO profile.series (app_service, profile_language_type, \
                     profile_event_type, tagset_id, thread) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![
                    key.app_service,
                    key.language,
                    key.event_type,
                    key.tagset_id,
                    key.thread
                ])?;
                tx.last_insert_rowid()
            }
        };
        self.series.insert(key, id);
        Ok(id)
    }

    /// Count one sample of `series` at `time`.
    pub(crate) fn add(&mut self, time: i64, series: i64, value: i64) {
        let sum = self.sums.entry((time, series)).or_default();
        sum.0 = sum.0.saturating_add(value);
        sum.1 += 1;
    }

    /// Add the sums to every level's table.
    pub(crate) fn write(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        for level in LEVELS {
            let mut buckets: HashMap<(i64, i64), (i64, i64)> = HashMap::new();
            for (&(time, series), &(value, samples)) in &self.sums {
                let sum = buckets
                    .entry((bucket_start(time, level.seconds), series))
                    .or_default();
                sum.0 = sum.0.saturating_add(value);
                sum.1 += samples;
            }
            // `level.table` is one of the fixed identifiers of LEVELS.
            let mut upsert = tx.prepare_cached(&format!(
                "INSERT INTO {} (time, series_id, profile_value, samples) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (time, series_id) DO UPDATE SET {}, {}",
                level.table,
                saturate::add_excluded("profile_value"),
                saturate::add_excluded("samples"),
            ))?;
            for ((time, series), (value, samples)) in buckets {
                upsert.execute(params![time, series, value, samples])?;
            }
        }
        Ok(())
    }

    /// Remember the series of a committed transaction.
    pub(crate) fn committed(self, known: &mut SeriesIds) {
        known.ids.extend(self.series);
    }
}

/// The DDL of the rollup (schema version 2).
pub(crate) fn v2_sql() -> String {
    let tables: Vec<String> = LEVELS
        .iter()
        .map(|l| {
            format!(
                "CREATE TABLE {} (
  time INTEGER NOT NULL,
  series_id INTEGER NOT NULL,
  profile_value INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  PRIMARY KEY (time, series_id)
) WITHOUT ROWID;",
                l.table
            )
        })
        .collect();
    format!(
        "CREATE TABLE profile.series (
  id INTEGER PRIMARY KEY,
  app_service TEXT NOT NULL,
  profile_language_type TEXT NOT NULL,
  profile_event_type TEXT NOT NULL,
  tagset_id INTEGER NOT NULL,
  thread TEXT NOT NULL,
  UNIQUE (app_service, profile_language_type, profile_event_type, tagset_id, thread)
);
{}
CREATE VIEW profile.in_process_metrics AS
SELECT r.time AS time, se.app_service AS app_service,
  se.profile_language_type AS profile_language_type,
  se.profile_event_type AS profile_event_type, se.tagset_id AS tagset_id, se.thread AS thread,
  r.profile_value AS profile_value, r.samples AS samples
FROM rollup_1s AS r JOIN series AS se ON se.id = r.series_id;
",
        tables.join("\n")
    )
}

/// Fill the rollup from the samples already stored (the step-2 migration of an existing file;
/// 335,000 samples take about a second on a 2-core machine).
pub(crate) fn backfill(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tracing::info!("building the explore rollup from the stored samples (once)");
    tx.execute_batch(
        "CREATE TEMP TABLE stack_thread (id INTEGER PRIMARY KEY, thread TEXT NOT NULL)",
    )?;
    {
        // The thread rule lives in Rust (the contract's `thread_of`), so compute it once per
        // distinct stack here rather than rewriting it in SQL.
        let mut stacks = tx.prepare("SELECT id, location_str FROM profile.stacks")?;
        let mut add = tx.prepare("INSERT INTO temp.stack_thread (id, thread) VALUES (?1, ?2)")?;
        let mut rows = stacks.query([])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let stack: String = row.get(1)?;
            add.execute(params![
                id,
                embers_model::contract::explore::thread_of(&stack)
            ])?;
        }
    }
    tx.execute_batch(
        "INSERT INTO profile.series (app_service, profile_language_type, profile_event_type,
           tagset_id, thread)
         SELECT DISTINCT s.app_service, s.profile_language_type, s.profile_event_type,
           s.tagset_id, t.thread
         FROM profile.samples AS s JOIN temp.stack_thread AS t ON t.id = s.stack_id;
         INSERT INTO profile.rollup_1s (time, series_id, profile_value, samples)
         SELECT s.time, se.id, sat_sum(s.profile_value), COUNT(*)
         FROM profile.samples AS s
         JOIN temp.stack_thread AS t ON t.id = s.stack_id
         JOIN profile.series AS se ON se.app_service = s.app_service
           AND se.profile_language_type = s.profile_language_type
           AND se.profile_event_type = s.profile_event_type
           AND se.tagset_id = s.tagset_id AND se.thread = t.thread
         GROUP BY s.time, se.id;
         DROP TABLE temp.stack_thread;",
    )?;
    // Each level from the next finer one (every level's buckets divide the next coarser's).
    for pair in LEVELS.windows(2).rev() {
        let (level, finer) = (pair[0], pair[1]);
        // Fixed identifiers and a constant from LEVELS; floor division also for negative times.
        let n = level.seconds;
        tx.execute_batch(&format!(
            "INSERT INTO {} (time, series_id, profile_value, samples)
             SELECT time - ((time % {n}) + {n}) % {n}, series_id, sat_sum(profile_value), sat_sum(samples)
             FROM {} GROUP BY 1, 2",
            level.table, finer.table
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backfill derives each level from the next finer one, and reads cover any range.
    #[test]
    fn each_level_divides_the_next_coarser_and_the_finest_is_a_second() {
        for pair in LEVELS.windows(2) {
            assert_eq!(pair[0].seconds % pair[1].seconds, 0, "{pair:?}");
        }
        assert_eq!(LEVELS.last().map(|l| l.seconds), Some(1));
        let ladder = embers_model::contract::explore::INTERVAL_LADDER;
        assert!(ladder
            .iter()
            .all(|i| LEVELS.iter().any(|l| l.seconds == *i)));
    }
}
