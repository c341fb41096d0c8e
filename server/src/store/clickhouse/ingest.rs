//! Writing samples to ClickHouse: every batch of a call encoded as `RowBinary` rows and sent as
//! one `INSERT` of samples (one block up to `max_insert_block_size` rows, so one call's samples
//! are written whole or not at all on one server; over a cluster the Distributed table writes
//! each shard's part synchronously, `insert_distributed_sync = 1`, so an answered ingest is
//! readable at once), after the stacks and tag sets this server has not written before.
//!
//! The row layouts follow [`schema`]; values are encoded, never pasted into SQL.

use rustc_hash::FxHashSet;

use embers_model::contract::explore::thread_of;
use embers_model::contract::fields::{self, FieldKind};

use super::row_binary::{send, RowBinary};
use super::{fn_ingest, lines};
use super::{schema, Caches, ClickHouseStore};
use crate::store::fine::blob;
use crate::store::ingest::{int_tag, now_micros, text_tag, validate};
use crate::store::{Batch, BatchMeta, InsertStats, StoreError};

/// A `DateTime` holds unsigned 32-bit seconds: say so rather than store a wrapped time.
fn check_times(batches: &[Batch]) -> Result<(), StoreError> {
    for batch in batches {
        if let Some(s) = batch
            .samples
            .iter()
            .find(|s| u32::try_from(s.time).is_err())
        {
            return Err(StoreError::Invalid(format!(
                "sample time {} is outside what the ClickHouse store keeps (0 to {})",
                s.time,
                u32::MAX
            )));
        }
    }
    Ok(())
}

/// The 64-bit id of a stack or tag set: xxh3 of its text, the same in every server process.
fn id_of(text: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text)
}

/// A tag set's identity: every settable column's stored value and the open tags, unambiguously
/// separated.
fn tagset_fingerprint(m: &BatchMeta) -> Vec<u8> {
    let mut out = Vec::new();
    for def in fields::settable_columns() {
        match def.kind {
            FieldKind::Text => out.extend_from_slice(text_tag(m, def).as_bytes()),
            FieldKind::Int => out.extend_from_slice(int_tag(m, def).to_string().as_bytes()),
        }
        out.push(0);
    }
    for (k, v) in m.tags.open() {
        out.extend_from_slice(k.as_bytes());
        out.push(1);
        out.extend_from_slice(v.as_bytes());
        out.push(0);
    }
    out
}

/// A `tagsets` row.
fn encode_tagset(out: &mut RowBinary, id: u64, m: &BatchMeta) {
    out.u64(id);
    for def in fields::settable_columns() {
        match def.kind {
            FieldKind::Text => out.string(text_tag(m, def)),
            FieldKind::Int => out.i64(int_tag(m, def)),
        }
    }
    out.strings(m.tags.open().map(|(k, _)| k.as_str()));
    out.strings(m.tags.open().map(|(_, v)| v.as_str()));
}

/// The rows of one call: samples for `in_process`, and the stacks and tag sets this server has
/// not written before for the dictionaries.
#[derive(Debug, Default)]
struct Rows {
    samples: RowBinary,
    stacks: RowBinary,
    tagsets: RowBinary,
    line_stacks: RowBinary,
    new_stacks: Vec<u64>,
    new_tagsets: Vec<u64>,
    new_line_stacks: Vec<u64>,
}

/// The stack's `[t] ` frame, as [`thread_of`], without splitting the whole stack when the
/// thread is its first frame (the usual case; this runs once per sample).
fn thread(stack: &str) -> &str {
    if stack.starts_with("[t] ") {
        return stack.split_once(';').map_or(stack, |(first, _)| first);
    }
    thread_of(stack)
}

/// Bytes of a sample row besides its thread: the fixed-size columns and four strings with
/// their one-byte lengths (a guess: the buffer grows if it is short, as with events).
fn row_bytes(m: &BatchMeta) -> usize {
    4 + 8 * 7 + 5 + m.app_service.len() + m.event_type.len() + m.language.len()
}

/// The samples of `batches` as `(batch, sample)` indexes in the order of the table's sort key
/// (app_service, language, time): ClickHouse then finds the block sorted and skips sorting and
/// permuting its columns (18.16 checks, `isAlreadySorted`). Samples of one batch usually
/// share a time, so this is mostly a sort of the batches.
fn key_order(batches: &[Batch]) -> Vec<(usize, usize)> {
    let mut by_process: Vec<usize> = (0..batches.len()).collect();
    let process = |b: usize| (&batches[b].meta.app_service, &batches[b].meta.language);
    by_process.sort_by(|a, b| process(*a).cmp(&process(*b)));
    let total = batches.iter().map(|b| b.samples.len()).sum();
    let mut out = Vec::with_capacity(total);
    for group in by_process.chunk_by(|a, b| process(*a) == process(*b)) {
        let start = out.len();
        for &b in group {
            out.extend((0..batches[b].samples.len()).map(|s| (b, s)));
        }
        let part = &mut out[start..];
        let time = |&(b, s): &(usize, usize)| batches[b].samples[s].time;
        if !part.is_sorted_by_key(time) {
            part.sort_by_key(time);
        }
    }
    out
}

/// Encode `batches`; `_id`s continue from `first_id`. The function sums of the samples are
/// counted in `functions`, under the index of each batch's process in `processes`.
fn encode<'b>(
    batches: &'b [Batch],
    caches: &Caches,
    first_id: i64,
    in_ts: i64,
    functions: &mut fn_ingest::Functions<'b>,
) -> Rows {
    let mut rows = Rows::default();
    let mut id = first_id;
    let mut seen: FxHashSet<u64> = FxHashSet::default();
    let capacity: usize = batches
        .iter()
        .map(|b| b.samples.len() * (row_bytes(&b.meta) + 24))
        .sum();
    rows.samples.buf.reserve(capacity);
    let mut tagsets = Vec::with_capacity(batches.len());
    let mut processes = Vec::with_capacity(batches.len());
    for batch in batches {
        let tagset = id_of(&tagset_fingerprint(&batch.meta));
        if !caches.tagsets_written.contains(&tagset) && seen.insert(tagset) {
            encode_tagset(&mut rows.tagsets, tagset, &batch.meta);
            rows.new_tagsets.push(tagset);
        }
        tagsets.push(tagset);
        processes.push(functions.process(&batch.meta));
    }
    for (b, i) in key_order(batches) {
        let (m, s) = (&batches[b].meta, &batches[b].samples[i]);
        let stack = id_of(s.stack.as_bytes());
        if !caches.stacks_written.contains(&stack) && seen.insert(stack) {
            rows.stacks.u64(stack);
            rows.stacks.string(&s.stack);
            rows.new_stacks.push(stack);
        }
        // validate() checked that the value fits.
        let value = i64::try_from(s.value).unwrap_or(i64::MAX);
        functions.add(s.time, processes[b], stack, &s.stack, value);
        let detail = s.detail.as_deref();
        let line_stack = detail.map_or(0, |d| lines::line_stack_id(&s.stack, &d.lines));
        if line_stack != 0
            && !caches.line_stacks_written.contains(&line_stack)
            && seen.insert(line_stack)
        {
            let at = detail.map_or(&[][..], |d| &d.lines[..]);
            lines::encode_line_stack(&mut rows.line_stacks, line_stack, &s.stack, at);
            rows.new_line_stacks.push(line_stack);
        }
        let out = &mut rows.samples;
        // check_times() checked the time.
        out.u32(u32::try_from(s.time).unwrap_or(0));
        out.i64(id);
        id = id.wrapping_add(1);
        out.string(&m.app_service);
        out.string(&m.event_type);
        out.string(&m.language);
        out.u64(stack);
        out.string(thread(&s.stack));
        out.i64(value);
        out.u64(tagsets[b]);
        out.i64(s.time.saturating_mul(1_000_000));
        out.i64(in_ts);
        out.u64(line_stack);
        match detail.filter(|d| !d.events.is_empty()) {
            Some(d) => out.bytes(&blob::encode(&d.events)),
            None => out.bytes(&[]),
        }
    }
    rows
}

/// A random positive start for this call's `_id`s (unique across stateless servers without
/// coordination, as DeepFlow's ingester does).
fn first_id() -> Result<i64, StoreError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError::ClickHouse(format!("no random id: {e}")))?;
    Ok(i64::from_le_bytes(bytes) & (i64::MAX >> 1))
}

impl ClickHouseStore {
    /// Write `batches`: the new dictionary rows on every node first, then the samples in one
    /// `INSERT` (a sample never names a stack or tag set that is not stored). `new_stacks` counts
    /// the stacks this server had not written before.
    pub fn insert(&self, batches: &[Batch]) -> Result<InsertStats, StoreError> {
        validate(batches)?;
        check_times(batches)?;
        lines::check_details(batches)?;
        let samples: u64 = batches.iter().map(|b| b.samples.len() as u64).sum();
        if samples == 0 {
            return Ok(InsertStats::default());
        }
        let mut functions = fn_ingest::Functions::default();
        let rows = encode(
            batches,
            &self.caches_read(),
            first_id()?,
            now_micros(),
            &mut functions,
        );
        let mut fn_rows = {
            let written = &self.caches_read().functions_written;
            functions.finish(&self.frames, written)
        };
        let (rollup_rows, fleet_rows) = (
            std::mem::take(&mut fn_rows.rollup),
            std::mem::take(&mut fn_rows.fleet),
        );
        let db = self.database();
        let stacks_sql = schema::insert(db, "stacks", &[("id", ""), ("location_str", "")]);
        let tagsets_sql = schema::insert(db, "tagsets", &schema::tagset_columns());
        let samples_sql = schema::insert(db, "in_process", &schema::SAMPLE_COLUMNS);
        let line_stacks_sql = schema::insert(db, "line_stacks", &schema::LINE_STACK_COLUMNS);
        let Rows {
            samples: sample_rows,
            stacks,
            tagsets,
            line_stacks,
            new_stacks,
            new_tagsets,
            new_line_stacks,
        } = rows;
        self.block_on(async {
            for node in self.nodes() {
                if !new_tagsets.is_empty() {
                    send(node, &tagsets_sql, tagsets.buf.clone()).await?;
                }
                if !new_stacks.is_empty() {
                    send(node, &stacks_sql, stacks.buf.clone()).await?;
                }
                if !new_line_stacks.is_empty() {
                    send(node, &line_stacks_sql, line_stacks.buf.clone()).await?;
                }
                fn_ingest::send_names(node, db, &fn_rows).await?;
            }
            send(self.client(), &samples_sql, sample_rows.buf).await?;
            // After the samples: a failure here leaves the rollup short of this call's sums
            // rather than counting samples that were never stored.
            let rollup = ("functions_rollup", &schema::FUNCTION_COLUMNS[..]);
            fn_ingest::send_rows(self.client(), db, rollup, rollup_rows).await?;
            let fleet = ("functions_fleet", &schema::fleet_columns()[..]);
            let sent = fn_ingest::send_rows(self.client(), db, fleet, fleet_rows).await;
            if sent.is_err() {
                // The rollup holds this call's sums and the fleet's do not: its buckets are
                // read per process from now on.
                self.record_everywhere("fleet_from", fn_rows.end).await?;
            }
            sent
        })?;
        let mut caches = self.caches();
        caches.tagsets_written.extend(&new_tagsets);
        caches.stacks_written.extend(&new_stacks);
        caches.line_stacks_written.extend(&new_line_stacks);
        caches.functions_written.extend(&fn_rows.new_names);
        caches.bound();
        Ok(InsertStats {
            samples,
            new_stacks: new_stacks.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Sample, Tags};

    #[test]
    fn samples_go_in_the_order_of_the_sort_key() {
        let batch = |app: &str, language: &str, times: &[i64]| Batch {
            meta: BatchMeta {
                app_service: app.into(),
                language: language.into(),
                event_type: "on-cpu".into(),
                unit: "microseconds".into(),
                tags: Tags::new(),
            },
            samples: times
                .iter()
                .map(|&time| Sample {
                    time,
                    stack: "[t] x".into(),
                    value: 1,
                    detail: None,
                })
                .collect(),
        };
        let batches = [
            batch("b", "eBPF", &[5, 3]),
            batch("a", "eBPF", &[9]),
            batch("b", "eBPF", &[4]),
            batch("a", "Java", &[1]),
            batch("a", "eBPF", &[2, 2]),
        ];
        let order = key_order(&batches);
        let key = |&(b, s): &(usize, usize)| {
            let m = &batches[b].meta;
            (
                m.app_service.clone(),
                m.language.clone(),
                batches[b].samples[s].time,
            )
        };
        assert_eq!(order.len(), 7);
        assert!(order.is_sorted_by_key(key), "{order:?}");
        // "Java" < "eBPF": bytes compare, as in ClickHouse.
        assert_eq!(order[..4], [(3, 0), (4, 0), (4, 1), (1, 0)]);
    }

    #[test]
    fn the_fast_thread_is_the_contract_thread() {
        for stack in [
            "[t] main;a;b",
            "[t] main",
            "[p] redis;[t] io_thd_1;read",
            "a;b;[t] late",
            "no thread;[k] x",
            "[t] ",
            "",
        ] {
            assert_eq!(thread(stack), thread_of(stack), "{stack}");
        }
    }
}
