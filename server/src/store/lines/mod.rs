//! Source lines below the stored samples (schema version 5, docs/design/lines-and-time.md):
//! what a function's lines cost, summed over any range and filter without re-reading every
//! raw sample, and each sample's line-level stack for exports (pprof `Line`).
//!
//! - `profile.frames_at`: each distinct (function, file, line) once, by id, as the ids of its
//!   function (`profile.functions`) and file (`profile.files`) since version 7 ([`v7`]);
//! - `profile.line_stacks`: each distinct line-level stack once, its `frames_at` ids root
//!   first, `;`-joined, `0` where a frame's line is unknown; `samples.line_stack_id` (NULL for
//!   samples without lines: everything stored before version 5, and producers without lines);
//! - `profile.lines_10m`: per ten-minute bucket, tag-set function series (see
//!   [`super::fn_rollup`]) and `frames_at` id, the self and total of the samples whose stack ran
//!   that frame at that line. Only samples with lines add rows, so a store without lines pays
//!   nothing but the (NULL) column.
//!
//! A range is read as its whole ten-minute buckets and, at its edges, the samples themselves.
//! The ProfileTracing answers never read any of this: lines are detail, not frames.

/// The DDL of schema version 5 (old samples simply have no lines).
pub(crate) const V5_SQL: &str = "
CREATE TABLE profile.frames_at (
  id INTEGER PRIMARY KEY,
  function TEXT NOT NULL,
  file TEXT NOT NULL,
  line INTEGER NOT NULL,
  UNIQUE (function, file, line)
);
CREATE TABLE profile.line_stacks (
  id INTEGER PRIMARY KEY,
  frames TEXT NOT NULL UNIQUE
);
ALTER TABLE profile.samples ADD COLUMN line_stack_id INTEGER;
CREATE TABLE profile.lines_10m (
  series_id INTEGER NOT NULL,
  time INTEGER NOT NULL,
  frame_id INTEGER NOT NULL,
  self_value INTEGER NOT NULL,
  total_value INTEGER NOT NULL,
  PRIMARY KEY (series_id, time, frame_id)
) WITHOUT ROWID;
";

mod export;
pub(crate) mod ingest;
pub(crate) mod v7;

/// The bucket of the line sums (seconds): ten minutes, as the function rollup's finest level.
pub(crate) const BUCKET: i64 = 600;
mod read;

use embers_model::contract::explore::{FunctionLinesQuery, LineRow};
use embers_model::contract::selection::Selection;
use embers_model::export::pprof_lines::StackLines;

use super::{SqliteStore, StoreError};

impl SqliteStore {
    /// One function's lines over `q`'s selection, unsorted and unnamed by rank (what
    /// [`super::Store::function_lines`] finishes).
    pub fn line_sums(&self, q: &FunctionLinesQuery) -> Result<Vec<LineRow>, StoreError> {
        self.with_reader(|conn| read::function_lines(conn, q))
    }

    /// The stacks of `sel` (one process) with their source lines, for the pprof export;
    /// `None` when no selected sample has lines.
    pub fn line_samples(&self, sel: &Selection) -> Result<Option<Vec<StackLines>>, StoreError> {
        self.with_reader(|conn| export::line_samples(conn, sel))
    }
}

/// Retention: deletes up to `limit` line rows whose ten-minute bucket ended at or before
/// `before` (a bucket straddling the cutoff stays, as the function rollup's do).
pub(crate) fn expire(
    tx: &rusqlite::Transaction<'_>,
    before: i64,
    limit: usize,
) -> Result<u64, StoreError> {
    let n = tx
        .prepare_cached(
            "DELETE FROM profile.lines_10m WHERE (series_id, time, frame_id) IN \
             (SELECT series_id, time, frame_id FROM profile.lines_10m WHERE time <= ?1 LIMIT ?2)",
        )?
        .execute(rusqlite::params![
            before.saturating_sub(BUCKET),
            i64::try_from(limit).unwrap_or(i64::MAX)
        ])?;
    Ok(n as u64)
}

/// Deletes every line row of `app`'s series.
pub(crate) fn delete_app(tx: &rusqlite::Transaction<'_>, app: &str) -> Result<u64, StoreError> {
    let n = tx
        .prepare_cached(
            "DELETE FROM profile.lines_10m WHERE series_id IN \
             (SELECT id FROM profile.function_series WHERE app_service = ?1)",
        )?
        .execute([app])?;
    Ok(n as u64)
}

#[cfg(test)]
mod tests;
