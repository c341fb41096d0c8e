//! The body of one SQLite function-rollup row: a bucket's sums for one series, packed — every
//! sample's value, then per function (sorted by id) its id (8 bytes, little-endian) and its
//! self and total (LEB128). One row per bucket and series rather than per function: a 24-hour
//! read is then a few hundred rows whose bodies decode in a tight loop, and an ingest call
//! rewrites a few hundred rows rather than upserting one per function (hundreds of thousands).

use super::super::functions::ingest::Sums;
use super::super::StoreError;

fn put(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A reader over a body; every read fails on a truncated or malformed body.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bad() -> StoreError {
        StoreError::Invalid("a function rollup row is malformed".into())
    }

    fn varint(&mut self) -> Result<u64, StoreError> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self.bytes.get(self.at).ok_or_else(Self::bad)?;
            self.at += 1;
            n |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(Self::bad())
    }

    fn id(&mut self) -> Result<u64, StoreError> {
        let end = self.at + 8;
        let bytes: [u8; 8] = self
            .bytes
            .get(self.at..end)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(Self::bad)?;
        self.at = end;
        Ok(u64::from_le_bytes(bytes))
    }
}

/// Stored sums are never negative: as their unsigned form.
fn stored(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The body of `sums`.
pub(crate) fn encode(sums: &Sums) -> Vec<u8> {
    let mut entries: Vec<(&u64, &(i64, i64))> = sums.fns.iter().collect();
    entries.sort_unstable_by_key(|(id, _)| **id);
    let mut out = Vec::with_capacity(12 + entries.len() * 14);
    put(&mut out, stored(sums.all));
    put(&mut out, entries.len() as u64);
    for (id, (self_value, total)) in entries {
        out.extend_from_slice(&id.to_le_bytes());
        put(&mut out, stored(*self_value));
        put(&mut out, stored(*total));
    }
    out
}

/// Calls `each(id, self, total)` for every function of `body`; returns every sample's value.
pub(crate) fn decode(body: &[u8], mut each: impl FnMut(u64, i64, i64)) -> Result<i64, StoreError> {
    let mut r = Reader { bytes: body, at: 0 };
    let all = signed(r.varint()?);
    let n = r.varint()?;
    for _ in 0..n {
        let id = r.id()?;
        let self_value = signed(r.varint()?);
        let total = signed(r.varint()?);
        each(id, self_value, total);
    }
    if r.at != body.len() {
        return Err(Reader::bad());
    }
    Ok(all)
}

/// The sums a body holds.
pub(crate) fn read(body: &[u8]) -> Result<Sums, StoreError> {
    let mut sums = Sums::default();
    sums.all = decode(body, |id, s, t| {
        sums.fns.insert(id, (s, t));
    })?;
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_round_trip_and_malformed_ones_are_refused() {
        let mut sums = Sums {
            all: 1 << 40,
            ..Sums::default()
        };
        sums.fns.insert(u64::MAX, (0, i64::MAX));
        sums.fns.insert(3, (7, 300));
        let body = encode(&sums);
        assert_eq!(read(&body).unwrap(), sums);
        let mut seen = Vec::new();
        decode(&body, |id, s, t| seen.push((id, s, t))).unwrap();
        assert_eq!(seen, [(3, 7, 300), (u64::MAX, 0, i64::MAX)], "sorted by id");
        for cut in 0..body.len() {
            assert!(read(&body[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = body.clone();
        long.push(0);
        assert!(read(&long).is_err());
        assert_eq!(read(&encode(&Sums::default())).unwrap(), Sums::default());
    }
}
