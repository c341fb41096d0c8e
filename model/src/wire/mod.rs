//! Bytes → [`crate::tree::table::NodeTable`]: the ProfileTracing response envelope and its two
//! result shapes (here and in `shape_a`, `shape_b`, `one_pass`), and the other formats a
//! profile arrives in: folded stacks (`folded`), pprof (`pprof`, over the hand-written
//! `protobuf` reader), `perf script` text (`perf`) and JFR (`jfr`); `native` names the frames
//! they import.
//!
//! [`decode_response`] takes the HTTP status and body and returns either a [`Profile`] or a
//! [`DecodeError`] whose message a user can act on. The envelope is read first with `result`
//! left raw, then the shape is detected from the first byte of `result` (`[` → shape A,
//! `{` → shape B, `null` → empty) and handed to one module per shape. Neither shape goes
//! through `serde_json::Value`: rows are streamed straight into [`crate::tree::table::NodeTable`] columns.

mod cursor;
pub mod folded;
mod int_rows;
pub mod jfr;
pub mod native;
mod num;
mod one_pass;
pub mod perf;
pub mod pprof;
pub mod protobuf;
pub mod shape_a;
pub mod shape_b;

use serde_json::value::RawValue;
use thiserror::Error;

use crate::contract::envelope::{Incoming, SUCCESS};
use crate::contract::shape::ResultShape;
use crate::tree::profile::Profile;
use crate::tree::table::NodeTable;

/// A successfully decoded response.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The call tree; empty when the query matched no samples.
    pub profile: Profile,
    /// The shape the server used, `None` when `result` was null.
    pub shape: Option<ResultShape>,
    /// A non-empty `DESCRIPTION` of a successful answer: what the server wants the reader to
    /// know about it (ours says `truncated: N of M nodes` when it cut the tree).
    pub notice: Option<String>,
}

/// Why a response could not be shown as a profile.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The service answered with an error status or a non-SUCCESS `OPT_STATUS`.
    #[error("The service answered HTTP {http_status}{}{}", opt_suffix(.opt_status), description_suffix(.description))]
    Server {
        /// HTTP status code.
        http_status: u16,
        /// `OPT_STATUS`, when the body had an envelope.
        opt_status: Option<String>,
        /// `DESCRIPTION`, or the start of a non-envelope body.
        description: String,
    },
    /// The body is not JSON at all.
    #[error(
        "The response (HTTP {http_status}) is not JSON ({detail}); it starts with: {snippet:?}"
    )]
    NotJson {
        /// HTTP status code.
        http_status: u16,
        /// The parser's message with line and column.
        detail: String,
        /// The first characters of the body, to recognise e.g. an HTML error page.
        snippet: String,
    },
    /// JSON, but not a ProfileTracing envelope.
    #[error("The response is JSON but not a ProfileTracing answer: {0}")]
    NotEnvelope(String),
    /// `result` is neither an array (shape A), an object (shape B) nor null.
    #[error("`result` is neither a node array (shape A) nor function/node tables (shape B): {0}")]
    UnknownShape(String),
    /// `result` has a known shape but its content is malformed.
    #[error("The result looks like {shape} but is malformed: {detail}")]
    BadShape {
        /// The shape that was being decoded.
        shape: ResultShape,
        /// What was wrong, with position.
        detail: String,
    },
}

fn opt_suffix(opt_status: &Option<String>) -> String {
    opt_status
        .as_ref()
        .map_or_else(String::new, |s| format!(" {s}"))
}

fn description_suffix(description: &str) -> String {
    if description.is_empty() {
        String::new()
    } else {
        format!(": {description}")
    }
}

/// The response envelope, `result` left raw for the shape decoders.
pub(crate) type Envelope<'a> = Incoming<&'a RawValue>;

/// How many characters of a non-JSON body to quote back to the user.
const SNIPPET_CHARS: usize = 120;

/// Decodes a ProfileTracing HTTP response into a profile.
pub fn decode_response(http_status: u16, body: &str) -> Result<Decoded, DecodeError> {
    decode_response_table(http_status, body.as_bytes()).map(DecodedTable::build)
}

/// A response decoded as far as its node table: nothing in it borrows the body any more, so a
/// caller can free the body before building the tree (lowering the peak memory of big loads).
#[derive(Debug)]
pub struct DecodedTable {
    /// The rows, `None` when `result` was null.
    pub table: Option<NodeTable>,
    /// The shape the server used, `None` when `result` was null.
    pub shape: Option<ResultShape>,
    /// See [`Decoded::notice`].
    pub notice: Option<String>,
}

impl DecodedTable {
    /// Builds the profile.
    pub fn build(self) -> Decoded {
        Decoded {
            profile: self.table.map(Profile::from_table).unwrap_or_default(),
            shape: self.shape,
            notice: self.notice,
        }
    }
}

/// The notice of a success envelope's `DESCRIPTION`: `None` when absent or blank.
fn notice(description: Option<String>) -> Option<String> {
    description.filter(|d| !d.trim().is_empty())
}

/// [`decode_response`] up to the node table (see [`DecodedTable`]), from the body's bytes (it
/// need not be valid UTF-8 outside the strings that are read). A plain success is read
/// in one pass (see `one_pass`); everything else goes through serde.
pub fn decode_response_table(http_status: u16, body: &[u8]) -> Result<DecodedTable, DecodeError> {
    if (200..300).contains(&http_status) {
        if let Some((table, shape, description)) = one_pass::decode_success(body) {
            return Ok(DecodedTable {
                table: Some(table),
                shape: Some(shape),
                notice: notice(description),
            });
        }
    }
    let envelope: Envelope = match serde_json::from_slice(body) {
        Ok(e) => e,
        Err(e) if e.is_data() => {
            return Err(if (200..300).contains(&http_status) {
                DecodeError::NotEnvelope(e.to_string())
            } else {
                server_error(http_status, None, snippet(body))
            })
        }
        Err(e) => {
            return Err(DecodeError::NotJson {
                http_status,
                detail: e.to_string(),
                snippet: snippet(body),
            })
        }
    };
    let ok_status = (200..300).contains(&http_status);
    match envelope.opt_status.as_deref() {
        Some(SUCCESS) if ok_status => {}
        None if ok_status => {
            return Err(DecodeError::NotEnvelope(
                "it has no OPT_STATUS member".to_string(),
            ))
        }
        other => {
            return Err(server_error(
                http_status,
                other.map(str::to_string),
                envelope.description.unwrap_or_default(),
            ))
        }
    }
    let mut decoded = decode_result_table(envelope.result)?;
    decoded.notice = notice(envelope.description);
    Ok(decoded)
}

fn server_error(http_status: u16, opt_status: Option<String>, description: String) -> DecodeError {
    DecodeError::Server {
        http_status,
        opt_status,
        description,
    }
}

fn snippet(body: &[u8]) -> String {
    // Four bytes a character at most; invalid UTF-8 shows as U+FFFD.
    let head = &body[..body.len().min(SNIPPET_CHARS * 4 + 64)];
    String::from_utf8_lossy(head)
        .trim_start()
        .chars()
        .take(SNIPPET_CHARS)
        .collect()
}

/// Decodes the `result` member alone (also used for saved results and the service's own tests).
pub fn decode_result(result: Option<&RawValue>) -> Result<Decoded, DecodeError> {
    decode_result_table(result).map(DecodedTable::build)
}

/// [`decode_result`] up to the node table.
pub fn decode_result_table(result: Option<&RawValue>) -> Result<DecodedTable, DecodeError> {
    let empty = DecodedTable {
        table: None,
        shape: None,
        notice: None,
    };
    let Some(raw) = result else {
        return Ok(empty);
    };
    let text = raw.get();
    let (shape, table) = match text.as_bytes().first() {
        Some(b'[') => (ResultShape::A, shape_a::decode(text)),
        Some(b'{') => (ResultShape::B, shape_b::decode(text)),
        Some(b'n') => return Ok(empty),
        _ => {
            let start: String = text.chars().take(40).collect();
            return Err(DecodeError::UnknownShape(format!(
                "it starts with {start:?}"
            )));
        }
    };
    let table = table.map_err(|detail| DecodeError::BadShape { shape, detail })?;
    Ok(DecodedTable {
        table: Some(table),
        shape: Some(shape),
        notice: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_json_quotes_the_body() {
        let e = decode_response(200, "<html>oops</html>").unwrap_err();
        assert!(matches!(e, DecodeError::NotJson { .. }));
        assert!(e.to_string().contains("<html>"), "{e}");
    }

    #[test]
    fn non_success_envelope_reports_status_and_description() {
        let body = r#"{"OPT_STATUS":"INVALID_POST_DATA","DESCRIPTION":"Key: 'Profile.TimeStart' failed","result":null}"#;
        let e = decode_response(400, body).unwrap_err();
        assert_eq!(
            e.to_string(),
            "The service answered HTTP 400 INVALID_POST_DATA: Key: 'Profile.TimeStart' failed"
        );
    }

    #[test]
    fn a_success_description_is_kept_as_a_notice_by_both_paths() {
        let result = r#"{"functions":["svc","f"],"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":[[0,-1,0,3],[1,0,3,3]]}}"#;
        let plain = format!(
            r#"{{"OPT_STATUS":"SUCCESS","DESCRIPTION":"truncated: 2 of 9 nodes","result":{result}}}"#
        );
        // An escaped key sends the one-pass reader to the general path.
        let general = plain.replace(r#""OPT_STATUS""#, r#""OPT_\u0053TATUS""#);
        for body in [&plain, &general] {
            let d = decode_response(200, body).unwrap();
            assert_eq!(
                d.notice.as_deref(),
                Some("truncated: 2 of 9 nodes"),
                "{body}"
            );
            assert_eq!(d.profile.node_count(), 2);
        }
        for blank in [r#""DESCRIPTION":"  ","#, ""] {
            let body = plain.replace(r#""DESCRIPTION":"truncated: 2 of 9 nodes","#, blank);
            assert_eq!(decode_response(200, &body).unwrap().notice, None, "{body}");
        }
    }

    #[test]
    fn gateway_error_with_plain_text_body_is_a_server_error() {
        let e = decode_response(502, "Bad Gateway").unwrap_err();
        assert!(
            matches!(
                e,
                DecodeError::NotJson {
                    http_status: 502,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = decode_response(503, r#"{"error":"down"}"#).unwrap_err();
        assert!(
            matches!(
                e,
                DecodeError::Server {
                    http_status: 503,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn json_without_envelope_is_rejected() {
        let e = decode_response(200, r#"{"hello":1}"#).unwrap_err();
        assert!(matches!(e, DecodeError::NotEnvelope(_)), "{e:?}");
        let e = decode_response(200, "[1,2]").unwrap_err();
        assert!(matches!(e, DecodeError::NotEnvelope(_)), "{e:?}");
    }

    #[test]
    fn unknown_result_shape_is_named() {
        let e = decode_response(200, r#"{"OPT_STATUS":"SUCCESS","result":42}"#).unwrap_err();
        assert!(matches!(e, DecodeError::UnknownShape(_)), "{e:?}");
    }

    #[test]
    fn null_result_is_an_empty_success() {
        let d = decode_response(
            200,
            r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null}"#,
        )
        .unwrap();
        assert!(d.profile.is_empty());
        assert_eq!(d.shape, None);
    }
}
