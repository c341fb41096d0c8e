//! The byte level of a JFR chunk: big-endian fixed-size numbers, the integers every field and
//! count uses (LEB128-style varints when the chunk header says its integers are compressed,
//! else big-endian), and the six string encodings.

use super::JfrError;

/// A string as a field holds it: inline text, or a key into the `java.lang.String` pool.
#[derive(Clone, Debug, PartialEq)]
pub enum JfrString {
    /// Encoding 0: `null`.
    Null,
    /// Encodings 1, 3, 4, 5: the text.
    Text(Box<str>),
    /// Encoding 2: a key into the chunk's `java.lang.String` constant pool.
    Pooled(i64),
}

/// A position in one chunk's bytes. Every read checks the bounds and says where it failed.
#[derive(Clone, Debug)]
pub struct Bytes<'a> {
    buf: &'a [u8],
    pos: usize,
    compressed: bool,
}

impl<'a> Bytes<'a> {
    /// A reader of `buf` from `pos`; `compressed` is the chunk header's integer encoding.
    pub fn new(buf: &'a [u8], pos: usize, compressed: bool) -> Self {
        Bytes {
            buf,
            pos,
            compressed,
        }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    fn truncated(&self, what: &str) -> JfrError {
        JfrError::Truncated {
            what: what.to_owned(),
            offset: self.pos,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], JfrError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.truncated(what))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// The next `N` bytes, for the fixed-size big-endian numbers.
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], JfrError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, JfrError> {
        Ok(self.take(1, "a byte")?[0])
    }

    /// A big-endian `i64` whatever the integer encoding (the chunk header's fields).
    pub fn fixed_i64(&mut self) -> Result<i64, JfrError> {
        Ok(i64::from_be_bytes(self.array("a 64-bit number")?))
    }

    pub fn fixed_i32(&mut self) -> Result<i32, JfrError> {
        Ok(i32::from_be_bytes(self.array("a 32-bit number")?))
    }

    pub fn fixed_u16(&mut self) -> Result<u16, JfrError> {
        Ok(u16::from_be_bytes(self.array("a 16-bit number")?))
    }

    /// A `long`: a varint of up to nine bytes (the ninth carries eight bits), or 8 bytes.
    pub fn long(&mut self) -> Result<i64, JfrError> {
        if !self.compressed {
            return self.fixed_i64();
        }
        let mut value: u64 = 0;
        for i in 0..8 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value as i64);
            }
        }
        Ok((value | u64::from(self.u8()?) << 56) as i64)
    }

    /// An `int`: a varint, or 4 bytes. Varints past 32 bits are cut as the JDK's reader does.
    pub fn int(&mut self) -> Result<i32, JfrError> {
        if self.compressed {
            Ok(self.long()? as i32)
        } else {
            self.fixed_i32()
        }
    }

    /// A `short` (and a `char`'s code unit): a varint, or 2 bytes.
    pub fn short(&mut self) -> Result<i16, JfrError> {
        if self.compressed {
            Ok(self.long()? as i16)
        } else {
            Ok(self.fixed_u16()? as i16)
        }
    }

    pub fn f32(&mut self) -> Result<f32, JfrError> {
        Ok(f32::from_be_bytes(self.array("a float")?))
    }

    pub fn f64(&mut self) -> Result<f64, JfrError> {
        Ok(f64::from_be_bytes(self.array("a double")?))
    }

    /// A count or length, checked against the bytes left: every item of a real recording
    /// takes at least a byte, so a larger count is a forged one (and would allocate for it).
    pub fn count(&mut self, what: &str) -> Result<usize, JfrError> {
        let n = self.int()?;
        let n = usize::try_from(n).map_err(|_| JfrError::Invalid(format!("{what}: {n}")))?;
        if n > self.remaining() {
            return Err(JfrError::Invalid(format!(
                "{what} of {n} with {} bytes left",
                self.remaining()
            )));
        }
        Ok(n)
    }

    /// A string in any of the six encodings.
    pub fn string(&mut self) -> Result<JfrString, JfrError> {
        match self.u8()? {
            0 => Ok(JfrString::Null),
            1 => Ok(JfrString::Text("".into())),
            2 => Ok(JfrString::Pooled(self.long()?)),
            3 => {
                let n = self.count("a UTF-8 string's length")?;
                let bytes = self.take(n, "a UTF-8 string")?;
                Ok(JfrString::Text(String::from_utf8_lossy(bytes).into()))
            }
            4 => {
                let n = self.count("a char array's length")?;
                let units = (0..n)
                    .map(|_| self.short().map(|u| u as u16))
                    .collect::<Result<Vec<u16>, _>>()?;
                Ok(JfrString::Text(String::from_utf16_lossy(&units).into()))
            }
            5 => {
                let n = self.count("a Latin-1 string's length")?;
                let bytes = self.take(n, "a Latin-1 string")?;
                Ok(JfrString::Text(bytes.iter().map(|&b| b as char).collect()))
            }
            e => Err(JfrError::Invalid(format!(
                "string encoding {e} at offset {} (0-5 exist)",
                self.pos - 1
            ))),
        }
    }

    /// A string that must be inline text (the metadata's own table).
    pub fn text(&mut self) -> Result<Box<str>, JfrError> {
        match self.string()? {
            JfrString::Text(t) => Ok(t),
            JfrString::Null => Ok("".into()),
            JfrString::Pooled(_) => Err(JfrError::Invalid(
                "a pooled string in the metadata's string table".to_owned(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_seven_bits_a_byte_and_the_ninth_byte_whole() {
        let mut b = Bytes::new(&[0x85, 0xb0, 0x03], 0, true);
        assert_eq!(b.long().unwrap(), 5 | 0x30 << 7 | 3 << 14);
        let nine = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(Bytes::new(&nine, 0, true).long().unwrap(), -1);
        assert_eq!(Bytes::new(&[0, 0, 1, 0], 0, false).int().unwrap(), 256);
    }

    #[test]
    fn strings_in_every_encoding() {
        let read = |b: &[u8]| Bytes::new(b, 0, true).string().unwrap();
        assert_eq!(read(&[0]), JfrString::Null);
        assert_eq!(read(&[1]), JfrString::Text("".into()));
        assert_eq!(read(&[2, 7]), JfrString::Pooled(7));
        assert_eq!(read(&[3, 2, b'h', b'i']), JfrString::Text("hi".into()));
        assert_eq!(
            read(&[4, 2, 0x68, 0xe9, 0x01]),
            JfrString::Text("hé".into())
        );
        assert_eq!(read(&[5, 1, 0xe9]), JfrString::Text("é".into()));
    }

    #[test]
    fn lengths_past_the_end_and_unknown_encodings_are_errors() {
        let err = |b: &[u8]| Bytes::new(b, 0, true).string().unwrap_err().to_string();
        assert!(
            err(&[3, 100, b'x']).contains("with 1 bytes left"),
            "{}",
            err(&[3, 100])
        );
        assert!(err(&[9]).contains("string encoding 9"));
        assert!(err(&[3]).contains("truncated"));
    }
}
