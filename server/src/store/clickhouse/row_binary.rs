//! Writing `RowBinary` rows (one value at a time, the layouts of [`super::schema`]) and sending
//! them with one `INSERT`: what ingest writes to every table.

use super::ch_err;
use crate::store::StoreError;

/// `RowBinary` encoding of one value at a time.
#[derive(Debug, Default)]
pub(crate) struct RowBinary {
    pub(crate) buf: Vec<u8>,
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

    pub(crate) fn string(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// A `String` holding any bytes (ClickHouse's strings need not be UTF-8).
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.leb128(b.len());
        self.buf.extend_from_slice(b);
    }

    pub(crate) fn i64(&mut self, n: i64) {
        self.buf.extend_from_slice(&n.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, n: u64) {
        self.buf.extend_from_slice(&n.to_le_bytes());
    }

    pub(crate) fn u32(&mut self, n: u32) {
        self.buf.extend_from_slice(&n.to_le_bytes());
    }

    /// An `Array(UInt64)` or `Array(Int64)` (`n` 8-byte items, written by `each`).
    pub(crate) fn array<T>(&mut self, items: &[T], each: impl Fn(&mut Self, &T)) {
        self.leb128(items.len());
        for item in items {
            each(self, item);
        }
    }

    pub(crate) fn strings<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a str>) {
        self.leb128(items.len());
        for s in items {
            self.string(s);
        }
    }
}

/// Send `rows` with one `INSERT` statement `sql` (the buffer is handed over, not copied).
pub(crate) async fn send(
    client: &clickhouse::Client,
    sql: &str,
    rows: Vec<u8>,
) -> Result<(), StoreError> {
    let mut insert = client
        .insert_formatted_with(sql.to_owned())
        .with_setting("insert_distributed_sync", "1");
    insert.send(rows.into()).await.map_err(ch_err)?;
    insert.end().await.map_err(ch_err)
}
