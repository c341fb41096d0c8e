//! HTTP handlers. Every API answer, success or failure, is the ProfileTracing envelope.

pub mod explore;
pub mod guard;
pub mod health;
pub mod ingest;
pub mod pprof;
pub mod processes;
pub mod profile_tracing;
pub mod push;
pub mod pyroscope;
pub mod snapshots;
pub mod static_files;
pub mod upstream;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;

use embers_model::contract::envelope::FAIL;

use crate::error::envelope;
use crate::Error;

/// Turn a body-reading failure into the envelope: 413 when over `limit`, else 400.
pub fn read_body(body: Result<Bytes, BytesRejection>, limit: usize) -> Result<Bytes, Error> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Error::too_large(limit)
        } else {
            Error::invalid(format!(
                "could not read the request body: {}",
                rejection.body_text()
            ))
        }
    })
}

/// 405 with the envelope for a wrong method on a POST-only API path.
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    not_allowed(&method, &uri, &["POST"])
}

/// 405 with the envelope and an `Allow` header listing `allowed`.
pub fn not_allowed(method: &Method, uri: &Uri, allowed: &[&str]) -> Response {
    let mut response = envelope(
        StatusCode::METHOD_NOT_ALLOWED,
        FAIL,
        &format!(
            "{method} is not allowed on {}; use {}",
            uri.path(),
            allowed.join(" or ")
        ),
        serde_json::Value::Null,
        serde_json::Value::Null,
    );
    if let Ok(allow) = HeaderValue::from_str(&allowed.join(", ")) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}
