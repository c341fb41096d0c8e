//! The SQLite function rollup (schema version 4): per bucket of
//! [`LEVELS`](super::functions::LEVELS) and *function series* — a process (app_service,
//! language, event type) with one of its tag sets, or with tag set 0 for all of them — the
//! bucket's sums packed in one row ([`body`]), written in the same transaction as the samples.
//!
//! - `profile.functions`: each function's name by id (see [`super::functions::function_id`]);
//! - `profile.function_series`: the series;
//! - `profile.functions_1h`, `profile.functions_10m`: `(series_id, time, body)`;
//! - `profile.horizon`: the latest retention cutoff (see [`super::functions`]).
//!
//! Tag-set series are kept per hour only (per ten minutes they would cost as much again at
//! every ingest). An unfiltered question reads the process series (tag set 0); a tag filter or
//! a grouping reads the hours of the tag-set series it selects, and the samples around them.

pub(crate) mod body;

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{params, OptionalExtension, Transaction};
use rustc_hash::FxHashSet;

use super::functions::ingest::{regroup, Acc, Buckets, Sums};
use super::functions::FrameCache;
use super::StoreError;

/// The tables of the levels: `(bucket seconds, table)`, a fixed identifier each.
pub(crate) const TABLES: [(i64, &str); 2] = [
    (3600, "profile.functions_1h"),
    (600, "profile.functions_10m"),
];

/// The table of `level`.
pub(crate) fn table_of(level: i64) -> Result<&'static str, StoreError> {
    TABLES
        .iter()
        .find(|(s, _)| *s == level)
        .map(|(_, t)| *t)
        .ok_or_else(|| StoreError::Invalid(format!("no function rollup of {level} s")))
}

/// The DDL of schema version 4.
pub(crate) fn v4_sql() -> String {
    let levels: Vec<String> = TABLES
        .iter()
        .map(|(_, t)| {
            format!(
                "CREATE TABLE {t} (
  series_id INTEGER NOT NULL,
  time INTEGER NOT NULL,
  body BLOB NOT NULL,
  UNIQUE (series_id, time)
);"
            )
        })
        .collect();
    format!(
        "CREATE TABLE profile.functions (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL
);
CREATE TABLE profile.horizon (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  cutoff INTEGER NOT NULL
);
CREATE TABLE profile.function_series (
  id INTEGER PRIMARY KEY,
  app_service TEXT NOT NULL,
  profile_language_type TEXT NOT NULL,
  profile_event_type TEXT NOT NULL,
  tagset_id INTEGER NOT NULL,
  UNIQUE (app_service, profile_language_type, profile_event_type, tagset_id)
);
{}",
        levels.join("\n")
    )
}

/// Records that retention removes samples before `cutoff` (the latest cutoff is kept).
pub(crate) fn set_horizon(tx: &Transaction<'_>, cutoff: i64) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO profile.horizon (id, cutoff) VALUES (1, ?1) \
         ON CONFLICT (id) DO UPDATE SET cutoff = MAX(cutoff, excluded.cutoff)",
    )?
    .execute([cutoff])?;
    Ok(())
}

/// The latest retention cutoff, if retention ever removed anything.
pub(crate) fn horizon(conn: &rusqlite::Connection) -> Result<Option<i64>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT cutoff FROM profile.horizon WHERE id = 1")?
        .query_row([], |r| r.get(0))
        .optional()?)
}

/// A function series: a process with one tag set, or (tag set 0) with all of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FnSeriesKey {
    pub(crate) app_service: String,
    pub(crate) language: String,
    pub(crate) event_type: String,
    pub(crate) tagset_id: i64,
}

impl FnSeriesKey {
    /// The process series of this one.
    pub(crate) fn process(&self) -> FnSeriesKey {
        FnSeriesKey {
            tagset_id: 0,
            ..self.clone()
        }
    }
}

/// What the writer remembers between transactions: committed series ids and the function ids
/// whose names are stored.
#[derive(Debug, Default)]
pub(crate) struct FnState {
    series: HashMap<FnSeriesKey, i64>,
    pub(crate) written: FxHashSet<u64>,
}

/// What one transaction adds to [`FnState`] once it commits.
#[derive(Debug, Default)]
pub(crate) struct FnPending {
    series: HashMap<FnSeriesKey, i64>,
    names: Vec<u64>,
}

/// Stored function ids are the hash's bits as SQLite's signed integer.
pub(crate) fn stored_id(id: u64) -> i64 {
    i64::from_ne_bytes(id.to_ne_bytes())
}

impl FnState {
    /// The id of `key`'s series, created if new.
    pub(crate) fn series_id(
        &self,
        pending: &mut FnPending,
        tx: &Transaction<'_>,
        key: &FnSeriesKey,
    ) -> Result<i64, StoreError> {
        if let Some(&id) = self.series.get(key).or_else(|| pending.series.get(key)) {
            return Ok(id);
        }
        let args = params![key.app_service, key.language, key.event_type, key.tagset_id];
        let found = tx
            .prepare_cached(
                "SELECT id FROM profile.function_series WHERE app_service = ?1 AND \
                 profile_language_type = ?2 AND profile_event_type = ?3 AND tagset_id = ?4",
            )?
            .query_row(args, |r| r.get::<_, i64>(0))
            .optional()?;
        let id = match found {
            Some(id) => id,
            None => {
                tx.prepare_cached(
                    "INSERT INTO profile.function_series (app_service, profile_language_type, \
                     profile_event_type, tagset_id) VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(args)?;
                tx.last_insert_rowid()
            }
        };
        pending.series.insert(key.clone(), id);
        Ok(id)
    }

    /// Remembers what a committed transaction wrote.
    pub(crate) fn committed(&mut self, pending: FnPending) {
        self.series.extend(pending.series);
        if self.written.len() > 1_000_000 {
            self.written.clear();
        }
        self.written.extend(pending.names);
    }
}

/// Adds `buckets` (keyed by series id) to the stored rows, and stores the new names.
pub(crate) fn write(
    tx: &Transaction<'_>,
    pending: &mut FnPending,
    buckets: &Buckets<i64>,
    names: &[(u64, String)],
) -> Result<(), StoreError> {
    let mut add_name =
        tx.prepare_cached("INSERT OR IGNORE INTO profile.functions (id, name) VALUES (?1, ?2)")?;
    for (id, name) in names {
        add_name.execute(params![stored_id(*id), name])?;
        pending.names.push(*id);
    }
    for ((level, bucket, series), sums) in buckets {
        add(tx, table_of(*level)?, *series, *bucket, sums)?;
    }
    Ok(())
}

/// Adds `sums` to the row of `series` and `time` in `table` (a fixed identifier of [`TABLES`]).
fn add(
    tx: &Transaction<'_>,
    table: &str,
    series: i64,
    time: i64,
    sums: &Sums,
) -> Result<(), StoreError> {
    let old: Option<Vec<u8>> = tx
        .prepare_cached(&format!(
            "SELECT body FROM {table} WHERE series_id = ?1 AND time = ?2"
        ))?
        .query_row(params![series, time], |r| r.get(0))
        .optional()?;
    let merged = match old {
        Some(old) => {
            let mut stored = body::read(&old)?;
            stored.merge(sums);
            body::encode(&stored)
        }
        None => body::encode(sums),
    };
    tx.prepare_cached(&format!(
        "INSERT INTO {table} (series_id, time, body) VALUES (?1, ?2, ?3) \
         ON CONFLICT (series_id, time) DO UPDATE SET body = excluded.body"
    ))?
    .execute(params![series, time, merged])?;
    Ok(())
}

/// The function rollup rows one insert transaction adds, summed before they are written.
#[derive(Debug, Default)]
pub(crate) struct FnIngest<'a> {
    acc: Acc<'a, i64>,
    /// Each tag-set series' process series.
    process_of: HashMap<i64, i64>,
    pending: FnPending,
}

impl<'a> FnIngest<'a> {
    /// The series of a batch's samples (`key` names a tag set), its process series created too.
    pub(crate) fn series(
        &mut self,
        state: &FnState,
        tx: &Transaction<'_>,
        key: &FnSeriesKey,
    ) -> Result<i64, StoreError> {
        let id = state.series_id(&mut self.pending, tx, key)?;
        if !self.process_of.contains_key(&id) {
            let process = state.series_id(&mut self.pending, tx, &key.process())?;
            self.process_of.insert(id, process);
        }
        Ok(id)
    }

    /// Counts one sample of `series`.
    pub(crate) fn add(&mut self, time: i64, series: i64, stack: i64, text: &'a str, value: i64) {
        self.acc.add(time, series, stack as u64, text, value);
    }

    /// Writes the rows (tag-set series and their processes'); what to remember once committed.
    pub(crate) fn write(
        self,
        tx: &Transaction<'_>,
        state: &FnState,
        cache: &Mutex<FrameCache>,
    ) -> Result<FnPending, StoreError> {
        let FnIngest {
            acc,
            process_of,
            mut pending,
        } = self;
        if acc.is_empty() {
            return Ok(pending);
        }
        let (buckets, names) = {
            let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
            acc.finish(&mut cache, &state.written)
        };
        let processes = regroup(&buckets, |s| process_of.get(&s).copied().unwrap_or(s));
        // Tag-set series per hour only: their ten minutes would cost as much again at every
        // ingest (a process has one series, but as many tag-set series as pods and hosts).
        let hours: Buckets<i64> = buckets
            .into_iter()
            .filter(|((level, _, _), _)| *level == TABLES[0].0)
            .collect();
        write(tx, &mut pending, &hours, &names)?;
        write(tx, &mut pending, &processes, &[])?;
        Ok(pending)
    }
}

/// A day of one process's samples: `(time, tagset_id, stack_id, value)`.
type Chunk = Vec<(i64, i64, i64, i64)>;

/// Fill the function rollup from the samples already stored (the step-4 migration of an
/// existing file), one process and day at a time, so memory stays bounded.
pub(crate) fn backfill(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tracing::info!("building the function rollup from the stored samples (once)");
    let processes: Vec<[String; 3]> = tx
        .prepare(
            "SELECT DISTINCT app_service, profile_language_type, profile_event_type \
             FROM profile.series",
        )?
        .query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))?
        .collect::<Result<_, _>>()?;
    let mut state = FnState::default();
    let cache = Mutex::new(FrameCache::default());
    let mut texts: HashMap<i64, String> = HashMap::new();
    for p in &processes {
        let (first, last): (Option<i64>, Option<i64>) = tx.query_row(
            "SELECT MIN(time), MAX(time) FROM profile.samples WHERE app_service = ?1 AND \
             profile_language_type = ?2 AND profile_event_type = ?3",
            params![p[0], p[1], p[2]],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let (Some(first), Some(last)) = (first, last) else {
            continue;
        };
        let mut day = embers_model::contract::explore::bucket_start(first, 86_400);
        while day <= last {
            let chunk = day_of(tx, p, day)?;
            for (_, _, stack, _) in &chunk {
                if !texts.contains_key(stack) {
                    let text: String = tx
                        .prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?
                        .query_row([stack], |r| r.get(0))?;
                    texts.insert(*stack, text);
                }
            }
            let mut ingest = FnIngest::default();
            for (time, tagset, stack, value) in chunk {
                let key = FnSeriesKey {
                    app_service: p[0].clone(),
                    language: p[1].clone(),
                    event_type: p[2].clone(),
                    tagset_id: tagset,
                };
                let series = ingest.series(&state, tx, &key)?;
                let text = texts.get(&stack).map_or("", String::as_str);
                ingest.add(time, series, stack, text, value);
            }
            let pending = ingest.write(tx, &state, &cache)?;
            state.committed(pending);
            day = day.saturating_add(86_400);
        }
    }
    Ok(())
}

/// The samples of process `p` in the day starting at `day`.
fn day_of(tx: &Transaction<'_>, p: &[String; 3], day: i64) -> Result<Chunk, StoreError> {
    let mut stmt = tx.prepare_cached(
        "SELECT time, tagset_id, stack_id, profile_value FROM profile.samples \
         WHERE app_service = ?1 AND profile_language_type = ?2 AND profile_event_type = ?3 \
         AND time >= ?4 AND time < ?5",
    )?;
    let rows = stmt.query_map(
        params![p[0], p[1], p[2], day, day.saturating_add(86_400)],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}
