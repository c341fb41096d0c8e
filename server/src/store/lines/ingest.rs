//! Writing lines at ingest (SQLite): each sample with lines gets its line-level stack
//! (`line_stacks`, by `frames_at` ids) and adds its value to the ten-minute line sums of its
//! tag-set series, written once per transaction like the function rollup. The ids of
//! committed frames and line stacks are remembered across transactions ([`LineIds`]), so a
//! repeated stack costs no lookup (a frame is keyed by a 128-bit hash of its text: no
//! allocation per frame). A frame is stored by the ids of its function and file
//! ([`super::v7`]).

use std::collections::HashMap;

use embers_model::contract::detail::{DetailError, SourceLine};
use embers_model::contract::explore::bucket_start;
use rusqlite::{params, OptionalExtension, Transaction};

use super::v7::{file_id, name_ids};
use super::BUCKET;
use crate::store::fn_rollup::stored_id;
use crate::store::functions::function_id;
use crate::store::StoreError;

/// Most ids [`LineIds`] remembers of each kind; past that it starts over.
const MAX_REMEMBERED: usize = 200_000;

/// Ids of committed frames and line stacks (never renumbered, so entries stay valid).
#[derive(Debug, Default)]
pub struct LineIds {
    frames: HashMap<u128, i64>,
    stacks: HashMap<String, i64>,
}

impl LineIds {
    /// Remembers what a committed transaction looked up or added.
    pub(crate) fn remember(&mut self, adding: LineIngest) {
        if self.frames.len() + adding.frames.len() > MAX_REMEMBERED {
            self.frames.clear();
        }
        if self.stacks.len() + adding.stacks.len() > MAX_REMEMBERED {
            self.stacks.clear();
        }
        self.frames.extend(adding.frames);
        self.stacks.extend(adding.stacks);
    }
}

/// The key of a frame at a line.
fn frame_key(function: &str, at: &SourceLine) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(function.as_bytes());
    h.update(&[0xff]);
    h.update(at.file.as_bytes());
    h.update(&[0xff]);
    h.update(&at.line.to_le_bytes());
    h.digest128()
}

/// The line sums and dictionaries one insert transaction adds.
#[derive(Debug, Default)]
pub(crate) struct LineIngest {
    /// `frames_at` ids looked up or added, by [`frame_key`].
    frames: HashMap<u128, i64>,
    /// `line_stacks` ids looked up or added, by their text.
    stacks: HashMap<String, i64>,
    /// Self and total per (bucket, series, frame id).
    sums: HashMap<(i64, i64, i64), (i64, i64)>,
}

/// The `frames_at` ids of one sample's frames (0 where the line is unknown) and its line
/// stack's id.
pub(crate) struct LineStack {
    pub(crate) id: i64,
    frames: Vec<i64>,
}

impl LineIngest {
    /// The line stack of a sample whose frames are `stack` (`;`-joined) and whose lines are
    /// `lines` (one per frame, or none: `Ok(None)`); stored now if new.
    pub(crate) fn line_stack(
        &mut self,
        tx: &Transaction<'_>,
        known: &LineIds,
        stack: &str,
        lines: &[Option<SourceLine>],
    ) -> Result<Option<LineStack>, StoreError> {
        if lines.iter().all(Option::is_none) {
            return Ok(None);
        }
        let names: Vec<&str> = stack.split(';').collect();
        if names.len() != lines.len() {
            let e = DetailError::LineCount {
                lines: lines.len(),
                frames: names.len(),
            };
            return Err(StoreError::Invalid(e.to_string()));
        }
        let mut frames = Vec::with_capacity(names.len());
        for (name, line) in names.iter().zip(lines) {
            frames.push(match line {
                Some(l) => self.frame_id(tx, known, name, l)?,
                None => 0,
            });
        }
        let text = frames
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(";");
        let id = match self.stacks.get(&text).or_else(|| known.stacks.get(&text)) {
            Some(&id) => id,
            None => {
                let id = find_or_add(
                    tx,
                    "SELECT id FROM profile.line_stacks WHERE frames = ?1",
                    "INSERT INTO profile.line_stacks (frames) VALUES (?1)",
                    params![text],
                )?;
                self.stacks.insert(text, id);
                id
            }
        };
        Ok(Some(LineStack { id, frames }))
    }

    fn frame_id(
        &mut self,
        tx: &Transaction<'_>,
        known: &LineIds,
        function: &str,
        at: &SourceLine,
    ) -> Result<i64, StoreError> {
        let key = frame_key(function, at);
        if let Some(&id) = self.frames.get(&key).or_else(|| known.frames.get(&key)) {
            return Ok(id);
        }
        let (function_id, file_id) = (stored_id(function_id(function)), file_id(&at.file));
        let find = "SELECT id FROM profile.frames_at \
                    WHERE function_id = ?1 AND file_id = ?2 AND line = ?3";
        let found = tx
            .prepare_cached(find)?
            .query_row(params![function_id, file_id, at.line], |r| r.get(0))
            .optional()?;
        let id = match found {
            Some(id) => id,
            None => {
                // A new frame: its function and file are named (once) before it is stored.
                name_ids(tx, function, &at.file)?;
                tx.prepare_cached(
                    "INSERT INTO profile.frames_at (function_id, file_id, line) \
                     VALUES (?1, ?2, ?3)",
                )?
                .execute(params![function_id, file_id, at.line])?;
                tx.last_insert_rowid()
            }
        };
        self.frames.insert(key, id);
        Ok(id)
    }

    /// Counts a sample of `series` at `time` whose line stack is `stack`: `value` to the total
    /// of each distinct known frame, and to the self of its last frame when that is known.
    pub(crate) fn add(&mut self, time: i64, series: i64, stack: &LineStack, value: i64) {
        let bucket = bucket_start(time, BUCKET);
        let mut seen: Vec<i64> = Vec::with_capacity(stack.frames.len());
        for &frame in stack.frames.iter().filter(|&&f| f != 0) {
            // Stacks are short: a linear check beats hashing (as stack_functions does).
            if !seen.contains(&frame) {
                seen.push(frame);
                let sum = self.sums.entry((bucket, series, frame)).or_default();
                sum.1 = sum.1.saturating_add(value);
            }
        }
        if let Some(&leaf) = stack.frames.last().filter(|&&f| f != 0) {
            let sum = self.sums.entry((bucket, series, leaf)).or_default();
            sum.0 = sum.0.saturating_add(value);
        }
    }

    /// Adds the sums to the stored rows.
    pub(crate) fn write(&self, tx: &Transaction<'_>) -> Result<(), StoreError> {
        let mut add = tx.prepare_cached(
            "INSERT INTO profile.lines_10m (series_id, time, frame_id, self_value, total_value) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (series_id, time, frame_id) DO UPDATE SET \
             self_value = self_value + excluded.self_value, \
             total_value = total_value + excluded.total_value",
        )?;
        for ((bucket, series, frame), (self_value, total)) in &self.sums {
            add.execute(params![series, bucket, frame, self_value, total])?;
        }
        Ok(())
    }
}

/// The id `find` selects for `args`, or the row `insert` adds with them.
fn find_or_add(
    tx: &Transaction<'_>,
    find: &str,
    insert: &str,
    args: impl rusqlite::Params + Copy,
) -> Result<i64, StoreError> {
    let found = tx
        .prepare_cached(find)?
        .query_row(args, |r| r.get::<_, i64>(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    tx.prepare_cached(insert)?.execute(args)?;
    Ok(tx.last_insert_rowid())
}
