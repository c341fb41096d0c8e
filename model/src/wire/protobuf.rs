//! The protobuf wire format, as far as `profile.proto` (pprof) needs it: a reader of tagged
//! fields (varints, length-delimited bytes, and skipping the fixed-width kinds) and a writer
//! of the same. Hand-written rather than `prost`: see `wire/pprof/README.md` for the
//! measurement that chose it and `tests/pprof_prost.rs` for the differential test.
//!
//! The reader never panics and never allocates: every length is checked against the bytes
//! left, and a malformed message is an [`WireError`] naming what was wrong and where.

use thiserror::Error;

/// Why protobuf bytes could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WireError {
    /// The bytes end inside a field.
    #[error("the message ends inside a field at byte {0}")]
    Truncated(usize),
    /// A varint longer than ten bytes.
    #[error("a varint at byte {0} is longer than 10 bytes")]
    LongVarint(usize),
    /// A wire type protobuf does not define (or the deprecated groups).
    #[error("unsupported wire type {wire_type} at byte {at}")]
    WireType {
        /// The wire type (low three bits of the tag).
        wire_type: u8,
        /// Where the tag starts.
        at: usize,
    },
    /// Field number 0, which protobuf reserves.
    #[error("field number 0 at byte {0}")]
    FieldZero(usize),
}

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 2: bytes, a string, a sub-message or a packed repeated field.
    Bytes(&'a [u8]),
    /// Wire types 1 and 5, which pprof never uses for its own fields (skipped).
    Fixed,
}

impl Value<'_> {
    /// The varint, or `None` for another wire type.
    pub fn varint(self) -> Option<u64> {
        match self {
            Value::Varint(v) => Some(v),
            _ => None,
        }
    }
}

/// Reads the fields of one message in order.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where `bytes` starts in the outermost message, for error positions.
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over a whole message.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader::nested(bytes, 0)
    }

    /// A reader over a sub-message that starts at byte `base` of the outermost one.
    pub fn nested(bytes: &'a [u8], base: usize) -> Reader<'a> {
        Reader { bytes, at: 0, base }
    }

    /// Where the next field starts, counted in the outermost message.
    pub fn position(&self) -> usize {
        self.base + self.at
    }

    /// The next field: its number and value, or `None` at the end of the message.
    pub fn field(&mut self) -> Result<Option<(u32, Value<'a>)>, WireError> {
        if self.at >= self.bytes.len() {
            return Ok(None);
        }
        let start = self.position();
        let tag = self.varint()?;
        let number = u32::try_from(tag >> 3).map_err(|_| WireError::FieldZero(start))?;
        if number == 0 {
            return Err(WireError::FieldZero(start));
        }
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => self.skip(8, start).map(|_| Value::Fixed)?,
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| WireError::Truncated(start))?;
                Value::Bytes(self.skip(len, start)?)
            }
            5 => self.skip(4, start).map(|_| Value::Fixed)?,
            other => {
                return Err(WireError::WireType {
                    wire_type: other as u8,
                    at: start,
                })
            }
        };
        Ok(Some((number, value)))
    }

    /// The next `n` bytes of the field that starts at `field_start`.
    fn skip(&mut self, n: usize, field_start: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(WireError::Truncated(field_start))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let (v, n) = read_varint(&self.bytes[self.at..]).map_err(|e| e.at(self.position()))?;
        self.at += n;
        Ok(v)
    }
}

/// A varint's failure before its position is known.
enum VarintError {
    Truncated,
    Long,
}

impl VarintError {
    fn at(self, at: usize) -> WireError {
        match self {
            VarintError::Truncated => WireError::Truncated(at),
            VarintError::Long => WireError::LongVarint(at),
        }
    }
}

/// One varint at the start of `b`: its value and length.
fn read_varint(b: &[u8]) -> Result<(u64, usize), VarintError> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Ok((v, i + 1));
        }
    }
    Err(if b.len() < 10 {
        VarintError::Truncated
    } else {
        VarintError::Long
    })
}

/// The values of a repeated varint field, packed (one `Bytes` value) or not (one `Varint`
/// each): `push` gets every value in order.
pub fn repeated_varints(
    value: Value<'_>,
    at: usize,
    mut push: impl FnMut(u64),
) -> Result<(), WireError> {
    match value {
        Value::Varint(v) => push(v),
        Value::Bytes(b) => {
            // One tight pass over the packed bytes (this runs for every location id).
            let (mut v, mut shift, mut start) = (0u64, 0u32, 0usize);
            for (i, &byte) in b.iter().enumerate() {
                if shift > 63 {
                    return Err(WireError::LongVarint(at + start));
                }
                v |= u64::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    push(v);
                    (v, shift, start) = (0, 0, i + 1);
                } else {
                    shift += 7;
                }
            }
            if shift != 0 {
                return Err(WireError::Truncated(at + start));
            }
        }
        Value::Fixed => {}
    }
    Ok(())
}

/// Appends a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a varint field (nothing for 0, protobuf's default).
pub fn put_uint(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        put_varint(out, u64::from(field) << 3);
        put_varint(out, v);
    }
}

/// Appends a length-delimited field.
pub fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(field) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Appends a packed repeated varint field (nothing when empty).
pub fn put_packed(out: &mut Vec<u8>, field: u32, values: &[u64], scratch: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    scratch.clear();
    for &v in values {
        put_varint(scratch, v);
    }
    put_bytes(out, field, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_fail_cleanly() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert!(matches!(read_varint(&b), Ok((x, n)) if x == v && n == b.len()));
        }
        assert!(matches!(
            read_varint(&[0x80, 0x80]),
            Err(VarintError::Truncated)
        ));
        assert!(matches!(read_varint(&[0xff; 11]), Err(VarintError::Long)));
    }

    #[test]
    fn fields_are_read_in_order_and_bad_ones_named() {
        let mut m = Vec::new();
        put_uint(&mut m, 1, 150);
        put_bytes(&mut m, 2, b"hi");
        let mut scratch = Vec::new();
        put_packed(&mut m, 3, &[1, 300], &mut scratch);
        let mut r = Reader::new(&m);
        assert_eq!(r.field().unwrap(), Some((1, Value::Varint(150))));
        assert_eq!(r.field().unwrap(), Some((2, Value::Bytes(b"hi"))));
        let (_, packed) = r.field().unwrap().unwrap();
        let mut got = Vec::new();
        repeated_varints(packed, 0, |v| got.push(v)).unwrap();
        assert_eq!(got, [1, 300]);
        assert_eq!(r.field().unwrap(), None);
        assert_eq!(
            Reader::new(&[0x12, 5, b'a']).field(),
            Err(WireError::Truncated(0))
        );
        assert_eq!(
            Reader::new(&[0x0b]).field(),
            Err(WireError::WireType {
                wire_type: 3,
                at: 0
            })
        );
        assert_eq!(
            Reader::new(&[0x00, 1]).field(),
            Err(WireError::FieldZero(0))
        );
    }
}
