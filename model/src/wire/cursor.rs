//! A small cursor over JSON text, for the readers that walk a body themselves instead of
//! letting serde skip over it (see `one_pass`). It accepts only what it expects and says
//! `None` otherwise, so its callers can fall back to serde for the precise error.

use serde::de::IgnoredAny;

use super::int_rows::parse_int;

/// A position in the body. Every method returns `None` on anything it does not expect.
pub(super) struct Cursor<'a> {
    /// The whole text.
    pub b: &'a [u8],
    /// The position in it.
    pub i: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `b`.
    pub fn new(b: &'a [u8]) -> Cursor<'a> {
        Cursor { b, i: 0 }
    }

    pub fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next non-space byte, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// A plain JSON integer (no fraction or exponent) that fits an `i64`.
    pub fn int(&mut self) -> Option<i64> {
        self.ws();
        let (value, next) = parse_int(self.b, self.i)?;
        self.i = next;
        Some(value)
    }

    /// A string without escapes or control characters (keys and statuses), without quotes.
    /// Its bytes are valid UTF-8 (a JSON parser refuses anything else, keys included).
    pub fn plain_str(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        // Only non-ASCII strings need checking; noting them costs nothing in this loop.
        let mut ascii = true;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..0x20 => return None,
                0x80.. => {
                    ascii = false;
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        self.i += 1;
        let s = &self.b[start..self.i - 1];
        (ascii || std::str::from_utf8(s).is_ok()).then_some(s)
    }

    /// Calls `member(key, cursor)` for each member of the object here; `member` consumes the
    /// value.
    pub fn object(&mut self, mut member: impl FnMut(&[u8], &mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.plain_str()?;
            self.eat(b':')?;
            member(key, self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Skips one value and returns its bytes. Only brackets and strings are tracked, so the
    /// span is checked by whoever parses it (or by [`Cursor::skip_checked`]).
    pub fn skip(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        let mut depth = 0usize;
        loop {
            match *self.b.get(self.i)? {
                b'"' => self.skip_string()?,
                b'[' | b'{' => {
                    depth += 1;
                    self.i += 1;
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    self.i += 1;
                }
                b']' | b'}' | b',' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => break,
                _ => self.i += 1,
            }
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }

    /// Skips a value nobody reads, checking that it is valid JSON, in valid UTF-8: serde skips
    /// strings without checking their UTF-8, but the general path captures `result` as one
    /// `&str` and refuses the whole answer if any byte of it is not UTF-8.
    pub fn skip_checked(&mut self) -> Option<()> {
        let text = std::str::from_utf8(self.skip()?).ok()?;
        serde_json::from_str::<IgnoredAny>(text).ok()?;
        Some(())
    }

    pub fn skip_string(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        Some(())
    }
}
