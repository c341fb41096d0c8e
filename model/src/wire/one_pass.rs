//! The one-pass reader for the common big case: a `SUCCESS` envelope with a result.
//!
//! The general path lets serde find where `result` (and, in shape B, `node_values.values`)
//! ends — it must skip over it to capture it raw — before the shape decoder reads it again:
//! two or three passes over the bulk of the body. Here a small cursor walks the envelope (and
//! a shape-B result object) itself and hands the bulk to its reader in place — shape B's rows
//! to the integer-row scanner, a shape-A array to the streaming shape-A decoder — so it is
//! read once; serde still parses every other member, from its exact span. The reader only says yes or
//! "not me": on anything unusual (escaped keys, members in an unexpected order, non-integer
//! rows, malformed JSON) it returns `None` and the caller takes the general path, which gives
//! the same result or the precise error.

use std::borrow::Cow;

use super::cursor::Cursor;
use super::shape_a;
use super::shape_b::{Columns, NodeRows};
use crate::contract::shape::ResultShape;
use crate::tree::table::NodeTable;

/// The node table, shape and `DESCRIPTION` of `body` if it is a `SUCCESS` envelope with a
/// result this reader can take; `None` otherwise (the caller then takes the general path).
pub(super) fn decode_success(body: &[u8]) -> Option<(NodeTable, ResultShape, Option<String>)> {
    let mut c = Cursor::new(body);
    let (mut success, mut table, mut description) = (false, None, None);
    let mut seen = Seen::default();
    c.object(|key, c| {
        match key {
            b"OPT_STATUS" => {
                seen.first(0)?;
                success = c.plain_str()? == b"SUCCESS";
            }
            // The general path reads it as an optional string: that refuses more than
            // skipping does (other types, lone surrogates `\ud800`, invalid UTF-8).
            b"DESCRIPTION" => {
                seen.first(1)?;
                description = serde_json::from_slice::<Option<String>>(c.skip()?).ok()?;
            }
            b"result" => {
                seen.first(2)?;
                table = Some(match c.peek()? {
                    b'{' => (shape_b(c)?, ResultShape::B),
                    b'[' => {
                        let (rows, end) = shape_a::decode_prefix(&c.b[c.i..]).ok()?;
                        c.i += end;
                        (rows, ResultShape::A)
                    }
                    _ => return None,
                })
            }
            _ => c.skip_checked()?,
        }
        Some(())
    })?;
    c.ws();
    let (table, shape) = (success && c.i == body.len()).then_some(table)??;
    Some((table, shape, description))
}

/// Reads a shape-B object. Needs `functions` before `node_values`, and `columns` before
/// `values` in it (the order servers write them in).
fn shape_b(c: &mut Cursor<'_>) -> Option<NodeTable> {
    let mut functions: Option<Vec<Cow<'_, str>>> = None;
    let mut function_types: Option<Vec<Cow<'_, str>>> = None;
    let mut function_values: Option<&[u8]> = None;
    let mut nodes: Option<(NodeRows, usize)> = None;
    let mut seen = Seen::default();
    c.object(|key, c| {
        match key {
            b"functions" => {
                seen.first(0)?;
                functions = serde_json::from_slice(c.skip()?).ok()?;
            }
            b"function_types" => {
                seen.first(1)?;
                function_types = serde_json::from_slice(c.skip()?).ok()?;
            }
            b"function_values" => {
                seen.first(2)?;
                function_values = Some(c.skip()?);
            }
            b"node_values" => {
                seen.first(3)?;
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
    // From a `&str`: serde would skip unknown members without checking their UTF-8, which
    // the general path does check.
    let function_values: Option<Columns<'_>> = match function_values {
        Some(span) => serde_json::from_str(std::str::from_utf8(span).ok()?).ok()?,
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
    let mut seen = Seen::default();
    c.object(|key, c| {
        match key {
            b"columns" => {
                seen.first(0)?;
                columns = serde_json::from_slice(c.skip()?).ok()?;
            }
            b"values" => {
                seen.first(1)?;
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

/// The members of one object read so far: serde refuses an object that repeats a member it
/// knows, so this reader must not take one either (it would keep the last).
#[derive(Default)]
struct Seen(u8);

impl Seen {
    /// Notes member number `bit`; `None` when it was read before.
    fn first(&mut self, bit: u8) -> Option<()> {
        let mask = 1 << bit;
        (self.0 & mask == 0).then(|| self.0 |= mask)
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
        let (table, shape, _) = decode_success(text.as_bytes()).expect("taken");
        assert_eq!(shape, ResultShape::B);
        let fast = Profile::from_table(table);
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
        let mut taken = [0, 0];
        for fixture in crate::testkit::fixtures() {
            let text = fixture.response();
            if let Some((table, shape, _)) = decode_success(text.as_bytes()) {
                let fast = Profile::from_table(table);
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{:?}", general(&text)),
                    "{}",
                    fixture.name
                );
                taken[usize::from(shape == ResultShape::B)] += 1;
            }
        }
        assert!(
            taken[0] >= 2 && taken[1] >= 5,
            "one pass took {taken:?} A/B fixtures"
        );
        let synth = crate::synth::SynthProfile::generate(crate::synth::SynthOptions {
            nodes: 5_000,
            ..Default::default()
        });
        let empty_a = body("[]");
        for text in [synth.to_shape_b_json(), synth.to_shape_a_json(), empty_a] {
            let (table, _, _) = decode_success(text.as_bytes()).expect("taken");
            let fast = Profile::from_table(table);
            assert_eq!(format!("{fast:?}"), format!("{:?}", general(&text)));
        }
    }

    #[test]
    fn leaves_everything_unusual_to_the_general_path() {
        let plain = shape_b(r#"["Total","a"]"#, "[[0,-1,0,5],[1,0,5,5]]");
        assert!(decode_success(plain.as_bytes()).is_some());
        for text in [
            shape_b(r#"["Total","a"]"#, "[[0,-1,0,5],[1,0,5.5,5]]"),
            shape_b(r#"["Total","a"]"#, "[]"),
            shape_b(r#"["Total","a"]"#, "null"),
            plain.replace("SUCCESS", "FAIL"),
            plain.replace(r#""debug":{"x":[1,"]"]}"#, r#""debug":{"x":[1,]}"#),
            plain.replace("\"OPT_STATUS\"", "\"OPT_\\u0053TATUS\""),
            format!("{plain} x"),
            plain[..plain.len() - 3].to_string(),
            body("null"),
            body(r#"[{"node_id":1}]"#),
            body(r#"[{"profile_location_str":"a","node_id":"","parent_node_id":"-1"},]"#),
            // node_values before functions
            body(&format!(
                r#"{{"node_values":{{"columns":{COLUMNS},"values":[[0,-1,0,5]]}},"functions":["Total"]}}"#
            )),
            // values before columns
            body(
                r#"{"functions":["Total"],"node_values":{"values":[[0,-1,0,5]],"columns":["function_id"]}}"#,
            ),
        ] {
            assert!(decode_success(text.as_bytes()).is_none(), "{text}");
        }
    }

    /// `text` with every `@xx@` replaced by the byte `0xxx` (bodies that are not UTF-8).
    fn with_bytes(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, part) in text.split('@').enumerate() {
            match u8::from_str_radix(part, 16) {
                Ok(byte) if i % 2 == 1 => out.push(byte),
                _ => out.extend_from_slice(part.as_bytes()),
            }
        }
        out
    }

    /// Fuzz regressions (target `response`): bodies the general path refuses that the
    /// one-pass reader used to accept, so the viewer showed answers that the general path
    /// (and any other JSON parser) rejects. Each must now be left to the general path.
    #[test]
    fn refuses_what_the_general_path_refuses() {
        let a = |extra: &str| {
            body(&format!(
                r#"[{{"profile_location_str":"r","node_id":"","parent_node_id":"-1"{extra}}}]"#
            ))
        };
        let b = shape_b(r#"["a"]"#, "[[0,-1,0,5]]");
        let cases = [
            // Not UTF-8: a key skipped unread, a key inside a skipped value, a shape-A
            // node's unknown member, a member of `function_values` serde skips unchecked.
            a(r#","@a6@":0"#),
            body(r#"{"x":{"@ab@":[]}}"#),
            a(r#","":"@ff@""#),
            b.replace(r#""values":[[0,5]"#, r#""x":"@ff@","values":[[0,5]"#),
            // A leading zero is not JSON.
            shape_b(r#"["Total","a"]"#, "[[0,-1,0,5],[1,0,05,5]]"),
            // Repeated members: serde refuses them, this reader kept the last one.
            a("").replace(r#""result""#, r#""result":null,"result""#),
            b.replace(
                r#""function_values""#,
                r#""function_values":{],"function_values""#,
            ),
            b.replace(r#""values":[[0,-1"#, r#""columns":[],"values":[[0,-1"#),
            // DESCRIPTION is read as a string: other types and lone surrogates are errors.
            a("").replace(r#""DESCRIPTION":"""#, r#""DESCRIPTION":7"#),
            a("").replace(r#""DESCRIPTION":"""#, r#""DESCRIPTION":"x\ud800y""#),
        ];
        for text in cases {
            let bytes = with_bytes(&text);
            assert!(decode_success(&bytes).is_none(), "{text}");
            let general = crate::wire::decode_response_table(200, &bytes);
            assert!(general.is_err(), "{text}");
        }
    }

    #[test]
    fn non_ascii_keys_and_names_stay_on_the_one_pass_path() {
        let text = body(
            r#"[{"profile_location_str":"wéb-ü 日本","node_id":"","parent_node_id":"-1","é":"ü"}]"#,
        );
        let (table, _, _) = decode_success(text.as_bytes()).expect("taken");
        assert_eq!(Profile::from_table(table).name(0), "wéb-ü 日本");
    }
}
