//! Writing samples: batches of stacks with shared metadata, in one transaction per call.

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::fn_rollup::{FnIngest, FnSeriesKey, FnState};
use super::functions::FrameCache;
use super::lines::ingest::{LineIds, LineIngest};
use super::rollup::{Pending, SeriesIds, SeriesKey};
use super::StoreError;
use embers_model::contract::detail::SampleDetail;
use embers_model::contract::explore::thread_of;
use embers_model::contract::fields::{self, FieldKind};

mod tags;
pub use tags::Tags;

/// Metadata shared by every sample of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchMeta {
    /// Process name (or `Total` for per-host stacks `[p] proc;[t] thread`).
    pub app_service: String,
    /// `profile_language_type`, e.g. `eBPF`.
    pub language: String,
    /// `profile_event_type`, e.g. `on-cpu`.
    pub event_type: String,
    /// `profile_value_unit`, e.g. `microseconds`.
    pub unit: String,
    /// Resource tags.
    pub tags: Tags,
}

/// One stored sample: a `;`-joined stack (root→leaf, without the app_service root) and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Unix seconds.
    pub time: i64,
    /// Frames joined by `;`.
    pub stack: String,
    /// The value (µs for eBPF events; bytes for memory events).
    pub value: u64,
    /// Source lines and event times below the sample, when its producer knows them (boxed:
    /// most samples have none, and a `Sample` stays three words wide).
    pub detail: Option<Box<SampleDetail>>,
}

/// Samples sharing metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Shared metadata.
    pub meta: BatchMeta,
    /// The samples.
    pub samples: Vec<Sample>,
}

/// What an insert wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InsertStats {
    /// Samples written.
    pub samples: u64,
    /// Stacks not stored before.
    pub new_stacks: u64,
}

/// Check what SQL constraints would not catch, with messages a caller can act on.
pub(crate) fn validate(batches: &[Batch]) -> Result<(), StoreError> {
    for (i, batch) in batches.iter().enumerate() {
        let which = || {
            if batches.len() > 1 {
                format!(" (batch {})", i + 1)
            } else {
                String::new()
            }
        };
        let m = &batch.meta;
        for (field, value) in [
            ("app_service", &m.app_service),
            ("profile_language_type", &m.language),
            ("profile_event_type", &m.event_type),
        ] {
            if value.trim().is_empty() {
                return Err(StoreError::Invalid(format!(
                    "{field} is required{}",
                    which()
                )));
            }
        }
        for (j, s) in batch.samples.iter().enumerate() {
            // The same test as `s.stack.split(';').any(str::is_empty)` in one pass over the
            // text rather than one search per frame (this runs for every sample).
            let stack = &s.stack;
            if stack.is_empty()
                || stack.starts_with(';')
                || stack.ends_with(';')
                || stack.contains(";;")
            {
                return Err(StoreError::Invalid(format!(
                    "sample {} has an empty frame{}",
                    j + 1,
                    which()
                )));
            }
            if i64::try_from(s.value).is_err() {
                return Err(StoreError::Invalid(format!(
                    "sample {} value {} exceeds {}{}",
                    j + 1,
                    s.value,
                    i64::MAX,
                    which()
                )));
            }
        }
    }
    Ok(())
}

/// Microseconds since the Unix epoch, now.
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// Most stack ids [`StackIds`] remembers (about 250 bytes each); past that it starts over.
pub const MAX_CACHED_STACKS: usize = 200_000;

/// Ids of stacks known to be committed, so repeated stacks skip the text-index lookup. Stacks are
/// never deleted or renumbered, so an entry stays valid; only committed ids are added.
#[derive(Debug, Default)]
pub struct StackIds {
    ids: HashMap<String, i64>,
}

impl StackIds {
    fn get(&self, stack: &str) -> Option<i64> {
        self.ids.get(stack).copied()
    }

    fn remember<'a>(&mut self, committed: impl ExactSizeIterator<Item = (&'a str, i64)>) {
        if self.ids.len() + committed.len() > MAX_CACHED_STACKS {
            self.ids.clear();
        }
        for (stack, id) in committed.take(MAX_CACHED_STACKS) {
            self.ids.insert(stack.to_owned(), id);
        }
    }
}

/// What the writer remembers between transactions (only what committed transactions wrote).
pub(crate) struct Memory<'m> {
    pub(crate) stacks: &'m mut StackIds,
    pub(crate) series: &'m mut SeriesIds,
    pub(crate) functions: &'m mut FnState,
    /// Committed frame and line stack ids.
    pub(crate) lines: &'m mut LineIds,
    /// Each stack's functions, shared with the readers.
    pub(crate) frames: &'m Mutex<FrameCache>,
}

/// What one transaction writes besides the samples, remembered only after the commit.
#[derive(Default)]
struct Adding<'b> {
    /// Stacks looked up or added.
    stack_ids: HashMap<&'b str, i64>,
    rollup: Pending,
    functions: FnIngest<'b>,
    lines: LineIngest,
}

/// Insert every batch in one transaction (all or nothing), with its rollup rows.
pub(crate) fn insert(
    conn: &mut Connection,
    memory: Memory<'_>,
    batches: &[Batch],
) -> Result<InsertStats, StoreError> {
    validate(batches)?;
    let in_ts = now_micros();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut stats = InsertStats::default();
    let mut adding = Adding::default();
    {
        let mut tagset_ids: HashMap<String, i64> = HashMap::new();
        for batch in batches {
            let tagset = tagset_id(&tx, &mut tagset_ids, &batch.meta)?;
            insert_batch(&tx, &memory, &mut adding, batch, tagset, in_ts, &mut stats)?;
        }
    }
    adding.rollup.write(&tx)?;
    adding.lines.write(&tx)?;
    let functions = adding
        .functions
        .write(&tx, memory.functions, memory.frames)?;
    tx.commit()?;
    memory.stacks.remember(adding.stack_ids.into_iter());
    adding.rollup.committed(memory.series);
    memory.functions.committed(functions);
    memory.lines.remember(adding.lines);
    Ok(stats)
}

/// Insert the samples of one batch, whose tag set is `tagset`.
fn insert_batch<'b>(
    tx: &rusqlite::Transaction<'_>,
    memory: &Memory<'_>,
    adding: &mut Adding<'b>,
    batch: &'b Batch,
    tagset: i64,
    in_ts: i64,
    stats: &mut InsertStats,
) -> Result<(), StoreError> {
    let m = &batch.meta;
    let mut add_sample = tx.prepare_cached(
        "INSERT INTO profile.samples (time, app_service, profile_language_type, \
         profile_event_type, stack_id, profile_value, tagset_id, profile_create_timestamp, \
         profile_in_timestamp, line_stack_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    let fn_key = FnSeriesKey {
        app_service: m.app_service.clone(),
        language: m.language.clone(),
        event_type: m.event_type.clone(),
        tagset_id: tagset,
    };
    let fn_series = adding.functions.series(memory.functions, tx, &fn_key)?;
    let mut thread_series: HashMap<&str, i64> = HashMap::new();
    for s in &batch.samples {
        let stack = stack_id(tx, memory.stacks, &mut adding.stack_ids, &s.stack, stats)?;
        let thread = thread_of(&s.stack);
        let series = match thread_series.get(thread) {
            Some(&id) => id,
            None => {
                let key = SeriesKey {
                    app_service: m.app_service.clone(),
                    language: m.language.clone(),
                    event_type: m.event_type.clone(),
                    tagset_id: tagset,
                    thread: thread.to_owned(),
                };
                let id = adding.rollup.series_id(tx, memory.series, key)?;
                thread_series.insert(thread, id);
                id
            }
        };
        // validate() checked that the value fits.
        let value = i64::try_from(s.value).unwrap_or(i64::MAX);
        let lines = match s.detail.as_deref() {
            Some(d) => adding
                .lines
                .line_stack(tx, &*memory.lines, &s.stack, &d.lines)?,
            None => None,
        };
        add_sample.execute(params![
            s.time,
            m.app_service,
            m.language,
            m.event_type,
            stack,
            value,
            tagset,
            s.time.saturating_mul(1_000_000),
            in_ts,
            lines.as_ref().map(|l| l.id)
        ])?;
        if let Some(l) = &lines {
            adding.lines.add(s.time, fn_series, l, value);
        }
        if let Some(d) = s.detail.as_deref() {
            super::fine::write(tx, s.time, tx.last_insert_rowid(), &d.events)?;
        }
        adding.rollup.add(s.time, series, value);
        adding
            .functions
            .add(s.time, fn_series, stack, &s.stack, value);
        stats.samples += 1;
    }
    Ok(())
}

/// The id of `stack`, stored now if it is new.
fn stack_id<'s>(
    tx: &rusqlite::Transaction<'_>,
    known: &StackIds,
    this_tx: &mut HashMap<&'s str, i64>,
    stack: &'s str,
    stats: &mut InsertStats,
) -> Result<i64, StoreError> {
    if let Some(id) = known.get(stack).or_else(|| this_tx.get(stack).copied()) {
        return Ok(id);
    }
    let found = tx
        .prepare_cached("SELECT id FROM profile.stacks WHERE location_str = ?1")?
        .query_row([stack], |r| r.get::<_, i64>(0))
        .optional()?;
    let id = match found {
        Some(id) => id,
        None => {
            tx.prepare_cached("INSERT INTO profile.stacks (location_str) VALUES (?1)")?
                .execute([stack])?;
            stats.new_stacks += 1;
            tx.last_insert_rowid()
        }
    };
    this_tx.insert(stack, id);
    Ok(id)
}

/// The canonical text identifying a tag set (unit, columns and open tags), as unambiguous JSON.
fn fingerprint(meta: &BatchMeta) -> String {
    // A tuple of a string and two string maps always serialises (as a JSON array).
    serde_json::to_string(&(&meta.unit, &meta.tags.columns, &meta.tags.open)).unwrap_or_default()
}

/// Find or create the tag set of `meta`.
fn tagset_id(
    tx: &rusqlite::Transaction<'_>,
    cache: &mut HashMap<String, i64>,
    meta: &BatchMeta,
) -> Result<i64, StoreError> {
    let key = fingerprint(meta);
    if let Some(&id) = cache.get(&key) {
        return Ok(id);
    }
    let existing: Option<i64> = tx
        .prepare_cached("SELECT id FROM profile.tagsets WHERE fingerprint = ?1")?
        .query_row([&key], |r| r.get(0))
        .optional()?;
    let id = match existing {
        Some(id) => id,
        None => {
            let columns: Vec<_> = fields::settable_columns().collect();
            let names: Vec<&str> = columns.iter().map(|d| d.name).collect();
            let placeholders: Vec<String> =
                (0..=columns.len()).map(|i| format!("?{}", i + 1)).collect();
            let sql = format!(
                "INSERT INTO profile.tagsets (fingerprint, {}) VALUES ({})",
                names.join(", "),
                placeholders.join(", ")
            );
            let mut values: Vec<rusqlite::types::Value> = vec![key.clone().into()];
            for def in &columns {
                values.push(column_value(meta, def));
            }
            tx.prepare_cached(&sql)?
                .execute(rusqlite::params_from_iter(values))?;
            let id = tx.last_insert_rowid();
            let mut add_tag = tx.prepare_cached(
                "INSERT INTO profile.tagset_tags (tagset_id, name, value) VALUES (?1, ?2, ?3)",
            )?;
            for (name, value) in &meta.tags.open {
                add_tag.execute(params![id, name, value])?;
            }
            id
        }
    };
    cache.insert(key, id);
    Ok(id)
}

/// The stored value of one tag column for `meta` (`''`/0 when absent).
fn column_value(meta: &BatchMeta, def: &fields::FieldDef) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match def.kind {
        FieldKind::Text => Value::Text(text_tag(meta, def).to_owned()),
        FieldKind::Int => Value::Integer(int_tag(meta, def)),
    }
}

/// The stored text of a text tag column (`''` when absent); the unit is one of them. Both
/// backends store what this says.
pub(crate) fn text_tag<'a>(meta: &'a BatchMeta, def: &fields::FieldDef) -> &'a str {
    if def.name == "profile_value_unit" {
        return &meta.unit;
    }
    meta.tags.columns.get(def.name).map_or("", String::as_str)
}

/// The stored integer of an integer tag column (0 when absent, except `is_ipv4`).
pub(crate) fn int_tag(meta: &BatchMeta, def: &fields::FieldDef) -> i64 {
    let given = meta.tags.columns.get(def.name);
    let parsed = given.and_then(|v| v.trim().parse::<i64>().ok());
    let default = if def.name == "is_ipv4" {
        // Infer from the sample IP when not given: IPv6 addresses contain ':'.
        i64::from(
            !meta
                .tags
                .columns
                .get("ip")
                .is_some_and(|ip| ip.contains(':')),
        )
    } else {
        0
    };
    parsed.unwrap_or(default)
}

#[cfg(test)]
mod tests;
