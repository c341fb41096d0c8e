//! The one-pass reader for the common big case: a `SUCCESS` envelope whose `result` is a
//! shape-B object.
//!
//! The general path lets serde find where `result` and `node_values.values` end (it must skip
//! over them to capture them raw) before the integer-row scanner reads the rows again: three
//! passes over the bulk of the body. Here a small cursor walks the envelope and the result
//! object itself and hands the rows array to the scanner in place, so the bulk is read once;
//! serde still parses every other member, from its exact span. The reader only says yes or
//! "not me": on anything unusual (escaped keys, members in an unexpected order, non-integer
//! rows, malformed JSON) it returns `None` and the caller takes the general path, which gives
//! the same result or the precise error.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::shape_b::{Columns, NodeRows};
use crate::table::NodeTable;

/// The node table of `body` if it is a `SUCCESS` envelope with a shape-B result that this
/// reader can take; `None` otherwise (the caller then takes the general path).
pub(super) fn decode_shape_b_success(body: &[u8]) -> Option<NodeTable> {
    let mut c = Cursor { b: body, i: 0 };
    let (mut success, mut table) = (false, None);
    c.object(|key, c| {
        match key {
            b"OPT_STATUS" => success = c.plain_str()? == b"SUCCESS",
            b"result" if c.peek()? == b'{' => table = Some(shape_b(c)?),
            b"result" => return None,
            _ => c.skip_checked()?,
        }
        Some(())
    })?;
    c.ws();
    (success && c.i == body.len()).then_some(table)?
}

/// Reads a shape-B object. Needs `functions` before `node_values`, and `columns` before
/// `values` in it (the order servers write them in).
fn shape_b(c: &mut Cursor<'_>) -> Option<NodeTable> {
    let mut functions: Option<Vec<Cow<'_, str>>> = None;
    let mut function_types: Option<Vec<Cow<'_, str>>> = None;
    let mut function_values: Option<&[u8]> = None;
    let mut nodes: Option<(NodeRows, usize)> = None;
    c.object(|key, c| {
        match key {
            b"functions" => functions = serde_json::from_slice(c.skip()?).ok()?,
            b"function_types" => function_types = serde_json::from_slice(c.skip()?).ok()?,
            b"function_values" => function_values = Some(c.skip()?),
            b"node_values" => {
                nodes = Some(node_values(
                    c,
                    functions.as_deref()?,
                    function_types.as_deref(),
                )?)
            }
            _ => c.skip_checked()?,
        }
        Some(())
    })?;
    let (reader, rows) = nodes?;
    let function_values: Option<Columns<'_>> = match function_values {
        Some(span) => serde_json::from_slice(span).ok()?,
        None => None,
    };
    reader.finish(rows, function_values.as_ref()).ok()
}

/// Reads the `node_values` object, scanning its rows in place.
fn node_values(
    c: &mut Cursor<'_>,
    functions: &[Cow<'_, str>],
    function_types: Option<&[Cow<'_, str>]>,
) -> Option<(NodeRows, usize)> {
    let mut columns: Option<Vec<String>> = None;
    let mut read = None;
    c.object(|key, c| {
        match key {
            b"columns" => columns = serde_json::from_slice(c.skip()?).ok()?,
            b"values" => {
                let mut reader =
                    NodeRows::new(functions, function_types, columns.as_deref()).ok()?;
                c.ws();
                let scanned = reader.scan(&c.b[c.i..])?;
                c.i += scanned.end;
                // An empty table is the general path's business (it returns no functions).
                read = (scanned.rows > 0).then_some((reader, scanned.rows));
                read.as_ref()?;
            }
            _ => c.skip_checked()?,
        }
        Some(())
    })?;
    read
}

/// A position in the body. Every method returns `None` on anything it does not expect.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// The next non-space byte, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.i += 1)
    }

    /// A string without escapes or control characters (keys and statuses), without quotes.
    fn plain_str(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..0x20 => return None,
                _ => self.i += 1,
            }
        }
        self.i += 1;
        Some(&self.b[start..self.i - 1])
    }

    /// Calls `member(key, cursor)` for each member of the object here; `member` consumes the
    /// value.
    fn object(&mut self, mut member: impl FnMut(&[u8], &mut Self) -> Option<()>) -> Option<()> {
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
    fn skip(&mut self) -> Option<&'a [u8]> {
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

    /// Skips a value nobody reads, checking that it is valid JSON.
    fn skip_checked(&mut self) -> Option<()> {
        serde_json::from_slice::<IgnoredAny>(self.skip()?).ok()?;
        Some(())
    }

    fn skip_string(&mut self) -> Option<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    const COLUMNS: &str = r#"["function_id","parent_node_id","self_value","total_value"]"#;

    fn body(result: &str) -> String {
        format!(
            r#"{{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{result},"debug":{{"x":[1,"]"]}}}}"#
        )
    }

    fn shape_b(functions: &str, values: &str) -> String {
        body(&format!(
            r#"{{"functions":{functions},"function_types":["H","A"],
               "function_values":{{"columns":["self_value","total_value"],"values":[[0,5],[5,5]]}},
               "node_values":{{"columns":{COLUMNS},"values":{values}}}}}"#
        ))
    }

    #[test]
    fn reads_a_plain_shape_b_body_like_the_general_path() {
        let text = shape_b(r#"["Total","a\"b"]"#, "[[1,1,5,5],[0,-1,0,5]]");
        let fast = Profile::from_table(decode_shape_b_success(text.as_bytes()).expect("taken"));
        let general = crate::wire::decode_response(200, &text).unwrap().profile;
        assert_eq!(format!("{fast:?}"), format!("{general:?}"));
        assert_eq!(fast.name(1), "a\"b");
        assert_eq!(fast.server_function_values(), Some(&[(0, 5), (5, 5)][..]));
    }

    /// The general path's profile of a body (serde envelope, then the shape decoder).
    fn general(text: &str) -> Profile {
        let envelope: crate::wire::Envelope = serde_json::from_str(text).expect("an envelope");
        crate::wire::decode_result(envelope.result).unwrap().profile
    }

    #[test]
    fn fixtures_and_synthetic_bodies_read_the_same_in_one_pass() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixtures");
        let mut taken = 0;
        for entry in std::fs::read_dir(dir).expect("fixtures") {
            let path = entry.expect("an entry").path().join("response.json");
            if !path.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a response");
            if let Some(table) = decode_shape_b_success(text.as_bytes()) {
                let fast = Profile::from_table(table);
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{:?}", general(&text)),
                    "{path:?}"
                );
                taken += 1;
            }
        }
        assert!(taken >= 5, "only {taken} fixtures took the one-pass reader");
        let synth = crate::synth::SynthProfile::generate(crate::synth::SynthOptions {
            nodes: 5_000,
            ..Default::default()
        })
        .to_shape_b_json();
        let fast = Profile::from_table(decode_shape_b_success(synth.as_bytes()).expect("taken"));
        assert_eq!(format!("{fast:?}"), format!("{:?}", general(&synth)));
    }

    #[test]
    fn leaves_everything_unusual_to_the_general_path() {
        let plain = shape_b(r#"["Total","a"]"#, "[[0,-1,0,5],[1,0,5,5]]");
        assert!(decode_shape_b_success(plain.as_bytes()).is_some());
        for text in [
            shape_b(r#"["Total","a"]"#, "[[0,-1,0,5],[1,0,5.5,5]]"),
            shape_b(r#"["Total","a"]"#, "[]"),
            shape_b(r#"["Total","a"]"#, "null"),
            plain.replace("SUCCESS", "FAIL"),
            plain.replace(r#""debug":{"x":[1,"]"]}"#, r#""debug":{"x":[1,]}"#),
            plain.replace("\"OPT_STATUS\"", "\"OPT_\\u0053TATUS\""),
            format!("{plain} x"),
            plain[..plain.len() - 3].to_string(),
            body("[]"),
            body("null"),
            // node_values before functions
            body(&format!(
                r#"{{"node_values":{{"columns":{COLUMNS},"values":[[0,-1,0,5]]}},"functions":["Total"]}}"#
            )),
            // values before columns
            body(
                r#"{"functions":["Total"],"node_values":{"values":[[0,-1,0,5]],"columns":["function_id"]}}"#,
            ),
        ] {
            assert!(decode_shape_b_success(text.as_bytes()).is_none(), "{text}");
        }
    }
}
