//! The service's one error type, answered as the ProfileTracing envelope
//! `{"OPT_STATUS", "DESCRIPTION", "result", "debug"}`.
//!
//! | case | HTTP | OPT_STATUS | result |
//! |---|---|---|---|
//! | bad request | 400 | `INVALID_POST_DATA` | null |
//! | body too large | 413 | `FAIL` | null |
//! | no or wrong access token | 401 | `FAIL` | null |
//! | refused: foreign Host, cross-site write, simple content type | 403 | `FAIL` | null |
//! | unknown API path, unknown snapshot | 404 | `FAIL` | null |
//! | a cap on saved data reached (`--max-snapshots`, ...) | 409 | `FAIL` | null |
//! | upstream unreachable | 502 | `FAIL` | empty tree (explore endpoints: null) |
//! | not available against an upstream querier | 501 | `FAIL` | null |
//! | too many queries or writes at once, query time limit | 503 | `FAIL` | null |
//! | the store is unreachable or failing (with `Retry-After`) | 503 | `FAIL` | null (ProfileTracing: empty tree) |
//! | server failure | 500 | `FAIL` | empty tree in the requested shape |
//!
//! Server failures never expose internals in `DESCRIPTION`; the detail goes to the log and, only
//! when the service runs with `--allow-debug` and the request asked for `"debug": true`, to the
//! `debug` member.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::envelope::{Envelope, FAIL, INVALID_POST_DATA};
use embers_model::contract::shape::ResultShape;
use embers_model::export::encode::encode_result;
use serde::Serialize;

use crate::blocking::TaskFailed;
use crate::diagnostics::Diagnostics;

/// An error answered with the envelope.
#[derive(Debug, thiserror::Error)]
#[error("{} {opt_status}: {description}{}", status.as_u16(), in_parentheses(detail))]
pub struct Error {
    status: StatusCode,
    opt_status: &'static str,
    description: String,
    /// Internal detail: logged, and shown in `debug` only when the request asked for it.
    detail: Option<String>,
    /// When set, `result` is the empty tree of this shape instead of null.
    empty_shape: Option<ResultShape>,
    /// The request's `debug` flag, and diagnostics to show when it is set.
    /// (Boxed: it is rare, and an `Err` this type is in stays small.)
    debug: Option<Box<Diagnostics>>,
    /// Seconds for a `Retry-After` header (overload answers).
    retry_after: Option<u32>,
}

/// A blocking task that did not finish is a server failure (500).
impl From<TaskFailed> for Error {
    fn from(e: TaskFailed) -> Error {
        Error::internal(e.to_string())
    }
}

impl Error {
    fn new(status: StatusCode, opt_status: &'static str, description: impl Into<String>) -> Error {
        Error {
            status,
            opt_status,
            description: description.into(),
            detail: None,
            empty_shape: None,
            debug: None,
            retry_after: None,
        }
    }

    /// 400 `INVALID_POST_DATA`: the request is wrong; `description` says how.
    pub fn invalid(description: impl Into<String>) -> Error {
        Error::new(StatusCode::BAD_REQUEST, INVALID_POST_DATA, description)
    }

    /// 413 `FAIL`: the body exceeds `limit` bytes.
    pub fn too_large(limit: usize) -> Error {
        Error::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            FAIL,
            format!("request body too large: the limit for this endpoint is {limit} bytes"),
        )
    }

    /// 503 `FAIL` with `Retry-After: 1`: the service is at a limit right now (`description`
    /// names it); the same request may succeed shortly.
    pub fn busy(description: impl Into<String>) -> Error {
        let mut e = Error::new(StatusCode::SERVICE_UNAVAILABLE, FAIL, description);
        e.retry_after = Some(1);
        e
    }

    /// 503 `FAIL`: the request ran out of its time limit (`description` names it).
    pub fn timed_out(description: impl Into<String>) -> Error {
        Error::new(StatusCode::SERVICE_UNAVAILABLE, FAIL, description)
    }

    /// 401 `FAIL`: the request needs an access token it did not bring; `description` says
    /// which and how to send it.
    pub fn unauthorized(description: impl Into<String>) -> Error {
        Error::new(StatusCode::UNAUTHORIZED, FAIL, description)
    }

    /// 403 `FAIL`: a request the service refuses whoever sends it (a foreign `Host`, a
    /// cross-site write); `description` names the rule and how to comply.
    pub fn forbidden(description: impl Into<String>) -> Error {
        Error::new(StatusCode::FORBIDDEN, FAIL, description)
    }

    /// 404 `FAIL`: no API at this path.
    pub fn not_found(path: &str) -> Error {
        Error::new(
            StatusCode::NOT_FOUND,
            FAIL,
            format!("no API endpoint at {path}"),
        )
    }

    /// 413 `FAIL` with its own text (a limit that is not the body's, e.g. a snapshot's size).
    pub fn payload_too_large(description: impl Into<String>) -> Error {
        Error::new(StatusCode::PAYLOAD_TOO_LARGE, FAIL, description)
    }

    /// 409 `FAIL`: the request is sound but the service holds as much of it as it may (a cap
    /// on saved data); `description` names the option and what frees room.
    pub fn conflict(description: impl Into<String>) -> Error {
        Error::new(StatusCode::CONFLICT, FAIL, description)
    }

    /// 404 `FAIL`: what the path names does not exist; `description` says what.
    pub fn missing(description: impl Into<String>) -> Error {
        Error::new(StatusCode::NOT_FOUND, FAIL, description)
    }

    /// 502 `FAIL`: the upstream querier could not be reached.
    pub fn upstream(url: &str, detail: impl std::fmt::Display) -> Error {
        Error::new(
            StatusCode::BAD_GATEWAY,
            FAIL,
            format!("upstream querier {url} is unreachable: {detail}"),
        )
        .with_shape(ResultShape::B)
    }

    /// 501 `FAIL`: the request is sound, but this mode (a DeepFlow querier upstream) cannot
    /// answer it; `description` says why and what can.
    pub fn not_implemented(description: impl Into<String>) -> Error {
        Error::new(StatusCode::NOT_IMPLEMENTED, FAIL, description)
    }

    /// 502 `FAIL`: the upstream querier gave no usable answer; `description` says why.
    pub fn bad_gateway(description: impl Into<String>) -> Error {
        Error::new(StatusCode::BAD_GATEWAY, FAIL, description)
    }

    /// 500 `FAIL`: a server-side failure; `detail` is kept out of `DESCRIPTION`.
    pub fn internal(detail: impl std::fmt::Display) -> Error {
        let mut e = Error::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            FAIL,
            "internal error while answering the request; see the server log",
        );
        e.detail = Some(detail.to_string());
        e
    }

    /// A failed store call: the caller's mistake (400 naming it), the store's passing state
    /// (503 with `Retry-After`, naming the store: senders retry), or the server's (500).
    pub fn from_store(e: crate::store::StoreError) -> Error {
        if let crate::store::StoreError::Invalid(msg) = e {
            return Error::invalid(msg);
        }
        match e.outage() {
            Some(outage) => Error::unavailable(&outage, e),
            None => Error::internal(e),
        }
    }

    /// 503 `FAIL` with `Retry-After`: the store cannot serve now; `detail` (paths, server
    /// text) is kept out of `DESCRIPTION`.
    pub fn unavailable(outage: &crate::store::Outage, detail: impl std::fmt::Display) -> Error {
        let mut e = Error::new(StatusCode::SERVICE_UNAVAILABLE, FAIL, outage.describe());
        e.retry_after = Some(outage.retry_after);
        e.detail = Some(detail.to_string());
        e
    }

    /// Answer `result` with the empty tree of `shape` (as a shape-B querier does on failure).
    pub fn with_shape(mut self, shape: ResultShape) -> Error {
        self.empty_shape = Some(shape);
        self
    }

    /// Show `diagnostics` (plus the internal detail) in `debug`; call only when the request
    /// asked for debug output.
    pub fn with_debug(mut self, diagnostics: Diagnostics) -> Error {
        self.debug = Some(Box::new(diagnostics));
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The `DESCRIPTION` text.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Seconds for `Retry-After`, when the same request may succeed after them.
    pub fn retry_after(&self) -> Option<u32> {
        self.retry_after
    }
}

/// ` (detail)`, or nothing.
fn in_parentheses(detail: &Option<String>) -> String {
    detail
        .as_ref()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default()
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = self.status.as_u16(), detail = ?self.detail, "{}", self.description);
        } else {
            tracing::info!(status = self.status.as_u16(), "{}", self.description);
        }
        let result = self.empty_shape.map(|shape| encode_result(None, shape, ""));
        let debug = self.debug.map(|diagnostics| Diagnostics {
            error: self.detail,
            ..*diagnostics
        });
        let mut response = envelope(
            self.status,
            self.opt_status,
            &self.description,
            result,
            debug,
        );
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// The envelope response: `{"OPT_STATUS","DESCRIPTION","result","debug"}` as JSON.
pub fn envelope(
    status: StatusCode,
    opt_status: &str,
    description: &str,
    result: impl Serialize,
    debug: impl Serialize,
) -> Response {
    json_response(
        status,
        envelope_json(opt_status, description, result, debug),
    )
}

/// The envelope as JSON text (for answers serialised off the async threads).
pub fn envelope_json(
    opt_status: &str,
    description: &str,
    result: impl Serialize,
    debug: impl Serialize,
) -> String {
    let envelope = Envelope {
        opt_status,
        description,
        result,
        debug,
    };
    serde_json::to_string(&envelope).unwrap_or_else(|e| {
        tracing::error!("cannot serialise an answer: {e}");
        let failed = Envelope {
            opt_status: FAIL,
            description: "internal error: the answer could not be serialised",
            result: (),
            debug: (),
        };
        // Two strings and two nulls always serialise.
        serde_json::to_string(&failed).unwrap_or_default()
    })
}

/// A JSON body with `Content-Type: application/json; charset=utf-8`, as the querier sends.
pub fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_hide_detail_unless_debug() {
        let e = Error::internal("disk I/O error at /secret/path");
        assert!(!e.description().contains("secret"));
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn store_outages_are_503_with_retry_after_and_bad_data_400() {
        use crate::store::StoreError;
        let busy = StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("database is locked at /secret/embers.db".into()),
        ));
        let e = Error::from_store(busy);
        assert_eq!(e.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(e.description().contains("SQLite store"), "{e}");
        assert!(!e.description().contains("secret"), "{e}");
        let response = e.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        let bad = Error::from_store(StoreError::Invalid("frame 3 is empty".into()));
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        let bug = Error::from_store(StoreError::Schema("no such table".into()));
        assert_eq!(bug.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn display_is_status_opt_status_description_and_detail() {
        assert_eq!(
            Error::invalid("time_start must be an integer").to_string(),
            "400 INVALID_POST_DATA: time_start must be an integer"
        );
        assert_eq!(
            Error::internal("disk full").to_string(),
            "500 FAIL: internal error while answering the request; see the server log (disk \
             full)"
        );
    }
}
