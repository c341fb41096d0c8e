//! Reading `RowBinary` bytes by hand, for the one answer where the client crate's row decoding
//! (value by value through serde) was the cost: the function rollup's arrays, about 1.8 million
//! entries for a day of the benchmark, read in 350-530 ms by `fetch_all` and 60-90 ms as bytes.

use crate::store::StoreError;

/// A cursor over `RowBinary` bytes; every read fails on bytes that end early.
pub(crate) struct RawRows<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn short() -> StoreError {
    StoreError::ClickHouse("a RowBinary answer ended early".into())
}

impl<'a> RawRows<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> RawRows<'a> {
        RawRows { bytes, at: 0 }
    }

    /// Whether every byte was read.
    pub(crate) fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self.at.checked_add(n).ok_or_else(short)?;
        let out = self.bytes.get(self.at..end).ok_or_else(short)?;
        self.at = end;
        Ok(out)
    }

    /// A LEB128 length.
    pub(crate) fn len(&mut self) -> Result<usize, StoreError> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return usize::try_from(n).map_err(|_| short());
            }
        }
        Err(short())
    }

    /// A `String` as its bytes (which need not be UTF-8).
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], StoreError> {
        let n = self.len()?;
        self.take(n)
    }

    /// A `String`.
    pub(crate) fn string(&mut self) -> Result<&'a str, StoreError> {
        std::str::from_utf8(self.bytes()?)
            .map_err(|e| StoreError::ClickHouse(format!("a RowBinary string is not UTF-8: {e}")))
    }

    /// An 8-byte little-endian number's bits.
    pub(crate) fn u64(&mut self) -> Result<u64, StoreError> {
        let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| short())?;
        Ok(u64::from_le_bytes(b))
    }

    /// A `UInt32` (a `DateTime` too).
    pub(crate) fn u32(&mut self) -> Result<u32, StoreError> {
        let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| short())?;
        Ok(u32::from_le_bytes(b))
    }

    /// An `Int64`.
    pub(crate) fn i64(&mut self) -> Result<i64, StoreError> {
        Ok(i64::from_le_bytes(self.u64()?.to_le_bytes()))
    }

    /// An `Array` of 8-byte numbers: its length and the bytes of its items (read with
    /// [`item`]).
    pub(crate) fn array(&mut self) -> Result<(usize, &'a [u8]), StoreError> {
        let n = self.len()?;
        Ok((n, self.take(n.checked_mul(8).ok_or_else(short)?)?))
    }
}

/// Item `i` of an array's bytes.
pub(crate) fn item(bytes: &[u8], i: usize) -> u64 {
    let at = i * 8;
    bytes
        .get(at..at + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::clickhouse::row_binary::RowBinary;

    #[test]
    fn rows_written_read_back_and_short_ones_are_refused() {
        let mut out = RowBinary::default();
        out.string("app-1");
        out.i64(-5);
        out.array(&[1u64, u64::MAX], |o, v| o.u64(*v));
        let bytes = out.buf;
        let mut r = RawRows::new(&bytes);
        assert_eq!(r.string().unwrap(), "app-1");
        assert_eq!(r.i64().unwrap(), -5);
        let (n, items) = r.array().unwrap();
        assert_eq!((n, item(items, 0), item(items, 1)), (2, 1, u64::MAX));
        assert!(r.is_done());
        for cut in 0..bytes.len() {
            let mut r = RawRows::new(&bytes[..cut]);
            let read = r.string().and_then(|_| r.i64()).and_then(|_| r.array());
            assert!(read.is_err(), "cut at {cut}");
        }
    }
}
