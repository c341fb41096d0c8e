//! Writing samples to ClickHouse: every batch of a call encoded as `RowBinary` rows of the flat
//! table and sent as one `INSERT` (one block up to `max_insert_block_size` rows, so one call is
//! written whole or not at all on one server; over a cluster the Distributed table writes each
//! shard's part synchronously, `insert_distributed_sync = 1`, so an answered ingest is readable
//! at once).
//!
//! The row layout follows [`schema::columns`]; values are encoded, never pasted into SQL.

use embers_model::contract::fields;

use super::{ch_err, schema, ClickHouseStore};
use crate::store::ingest::{int_tag, now_micros, text_tag, validate};
use crate::store::{Batch, InsertStats, StoreError};

/// `RowBinary` encoding of one value at a time.
#[derive(Debug, Default)]
struct RowBinary {
    buf: Vec<u8>,
}

impl RowBinary {
    fn leb128(&mut self, mut n: usize) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.buf.push(byte);
                return;
            }
            self.buf.push(byte | 0x80);
        }
    }

    fn string(&mut self, s: &str) {
        self.leb128(s.len());
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn i64(&mut self, n: i64) {
        self.buf.extend_from_slice(&n.to_le_bytes());
    }

    fn u32(&mut self, n: u32) {
        self.buf.extend_from_slice(&n.to_le_bytes());
    }

    fn strings<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a str>) {
        self.leb128(items.len());
        for s in items {
            self.string(s);
        }
    }
}

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

/// Encode every sample of `batches` as rows; ids continue from `first_id`.
fn encode(batches: &[Batch], first_id: i64, in_ts: i64) -> Vec<u8> {
    let mut out = RowBinary::default();
    let mut id = first_id;
    for batch in batches {
        let m = &batch.meta;
        // The batch's part of every row after the per-sample columns, encoded once.
        let mut tail = RowBinary::default();
        for def in fields::settable_columns() {
            match def.kind {
                fields::FieldKind::Text => tail.string(text_tag(m, def)),
                fields::FieldKind::Int => tail.i64(int_tag(m, def)),
            }
        }
        tail.strings(m.tags.open().map(|(k, _)| k.as_str()));
        tail.strings(m.tags.open().map(|(_, v)| v.as_str()));
        for s in &batch.samples {
            // check_times() and validate() checked both conversions.
            out.u32(u32::try_from(s.time).unwrap_or(0));
            out.i64(id);
            id = id.wrapping_add(1);
            out.string(&m.app_service);
            out.string(&s.stack);
            out.i64(i64::try_from(s.value).unwrap_or(i64::MAX));
            out.string(&m.event_type);
            out.string(&m.language);
            out.i64(s.time.saturating_mul(1_000_000));
            out.i64(in_ts);
            out.buf.extend_from_slice(&tail.buf);
        }
    }
    out.buf
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
    /// Write `batches` in one `INSERT`. `new_stacks` is not tracked on ClickHouse (stacks are
    /// stored per row) and is reported as 0.
    pub fn insert(&self, batches: &[Batch]) -> Result<InsertStats, StoreError> {
        validate(batches)?;
        check_times(batches)?;
        let samples: u64 = batches.iter().map(|b| b.samples.len() as u64).sum();
        if samples == 0 {
            return Ok(InsertStats::default());
        }
        let rows = encode(batches, first_id()?, now_micros());
        let sql = format!(
            "INSERT INTO {} {} FORMAT RowBinary",
            self.table(),
            schema::insert_columns()
        );
        let mut insert = self
            .client()
            .insert_formatted_with(sql)
            .with_setting("insert_distributed_sync", "1");
        self.block_on(async move {
            insert.send(rows.into()).await.map_err(ch_err)?;
            insert.end().await.map_err(ch_err)
        })?;
        Ok(InsertStats {
            samples,
            new_stacks: 0,
        })
    }
}
