//! The function rollup rows of one ClickHouse ingest call: the samples' sums per bucket of
//! each level and per process (see [`crate::store::functions`]), as `functions_rollup` rows —
//! one per bucket and process, every sample's value and the functions' sums as a nested map —,
//! the same summed over processes as `functions_fleet` rows, and the names of functions this
//! server has not written before, for `functions`.

use std::sync::Mutex;

use embers_model::contract::event::TOTAL_APP_SERVICE;
use rustc_hash::{FxHashMap, FxHashSet};

use super::row_binary::{send, RowBinary};
use super::schema;
use crate::store::functions::ingest::{regroup, Acc, Sums};
use crate::store::functions::{FrameCache, WIDE_LEVELS};
use crate::store::{BatchMeta, StoreError};

/// A process: app_service, language, event type.
type Process<'b> = [&'b str; 3];

/// The function sums of one call, by process, at each of [`WIDE_LEVELS`].
#[derive(Debug)]
pub(crate) struct Functions<'b> {
    processes: Vec<Process<'b>>,
    index: FxHashMap<Process<'b>, usize>,
    acc: Acc<'b, usize>,
}

impl Default for Functions<'_> {
    fn default() -> Self {
        Functions {
            processes: Vec::new(),
            index: FxHashMap::default(),
            acc: Acc::new(&WIDE_LEVELS),
        }
    }
}

/// What a call writes besides its samples.
#[derive(Debug)]
pub(crate) struct FnRows {
    /// `functions_rollup` rows.
    pub(crate) rollup: Vec<u8>,
    /// `functions_fleet` rows.
    pub(crate) fleet: Vec<u8>,
    /// The end of the latest bucket among them.
    pub(crate) end: i64,
    /// `functions` rows of the new names.
    pub(crate) names: Vec<u8>,
    /// Their ids, remembered once written.
    pub(crate) new_names: Vec<u64>,
}

impl<'b> Functions<'b> {
    /// The index of the process of a batch with `meta`.
    pub(crate) fn process(&mut self, meta: &'b BatchMeta) -> usize {
        let key = [
            meta.app_service.as_str(),
            meta.language.as_str(),
            meta.event_type.as_str(),
        ];
        let next = self.processes.len();
        let at = *self.index.entry(key).or_insert(next);
        if at == next {
            self.processes.push(key);
        }
        at
    }

    /// Counts one sample.
    pub(crate) fn add(&mut self, time: i64, process: usize, stack: u64, text: &'b str, value: i64) {
        self.acc.add(time, process, stack, text, value);
    }

    /// The rows, functions whose names `written` holds left out of the names.
    pub(crate) fn finish(self, frames: &Mutex<FrameCache>, written: &FxHashSet<u64>) -> FnRows {
        let (buckets, names) = {
            let mut cache = frames.lock().unwrap_or_else(|p| p.into_inner());
            self.acc.finish(&mut cache, written)
        };
        let mut rollup = RowBinary::default();
        let end = buckets
            .keys()
            .map(|(level, bucket, _)| bucket + level)
            .max();
        for ((level, bucket, process), sums) in &buckets {
            bucket_row(
                &mut rollup,
                (*level, *bucket),
                &self.processes[*process],
                sums,
            );
        }
        // The fleet's rows: every process but `Total` (a whole host's samples, which the
        // others' already hold) summed per language and event type.
        let processes = &self.processes;
        let fleet_buckets = regroup(&buckets, |p| {
            let [app, language, event] = processes[p];
            (app != TOTAL_APP_SERVICE).then_some([language, event])
        });
        let mut fleet = RowBinary::default();
        for ((level, bucket, series), sums) in &fleet_buckets {
            if let Some(series) = series {
                bucket_row(&mut fleet, (*level, *bucket), series, sums);
            }
        }
        let mut rows = RowBinary::default();
        let mut new_names = Vec::with_capacity(names.len());
        for (id, name) in &names {
            rows.u64(*id);
            rows.string(name);
            new_names.push(*id);
        }
        FnRows {
            rollup: rollup.buf,
            fleet: fleet.buf,
            end: end.unwrap_or(0),
            names: rows.buf,
            new_names,
        }
    }
}

/// Writes one bucket's row: its level and start, the texts that key it, every sample's value
/// and the functions' ids, self and total as three arrays sorted by id.
fn bucket_row(out: &mut RowBinary, (level, bucket): (i64, i64), key: &[&str], sums: &Sums) {
    // Levels are the constants of WIDE_LEVELS; bucket starts of stored (u32) times.
    out.u32(u32::try_from(level).unwrap_or(0));
    out.u32(u32::try_from(bucket).unwrap_or(0));
    for text in key {
        out.string(text);
    }
    out.i64(sums.all);
    let mut entries: Vec<(u64, (i64, i64))> = sums.fns.iter().map(|(id, v)| (*id, *v)).collect();
    entries.sort_unstable_by_key(|(id, _)| *id);
    out.array(&entries, |out, (id, _)| out.u64(*id));
    out.array(&entries, |out, (_, (s, _))| out.i64(*s));
    out.array(&entries, |out, (_, (_, t))| out.i64(*t));
}

/// Writes the names to one node's `functions` (every node keeps it whole).
pub(crate) async fn send_names(
    node: &clickhouse::Client,
    db: &str,
    rows: &FnRows,
) -> Result<(), StoreError> {
    if rows.new_names.is_empty() {
        return Ok(());
    }
    let sql = schema::insert(db, "functions", &[("id", ""), ("name", "")]);
    send(node, &sql, rows.names.clone()).await
}

/// Writes `buf` (rows of `columns`) to `table` (through the Distributed table on a cluster).
pub(crate) async fn send_rows(
    client: &clickhouse::Client,
    db: &str,
    (table, columns): (&str, &[(&str, &str)]),
    buf: Vec<u8>,
) -> Result<(), StoreError> {
    if buf.is_empty() {
        return Ok(());
    }
    send(client, &schema::insert(db, table, columns), buf).await
}
