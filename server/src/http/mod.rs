//! HTTP handlers. Every API answer, success or failure, is the ProfileTracing envelope.

pub mod explore;
pub mod health;
pub mod ingest;
pub mod processes;
pub mod profile_tracing;
pub mod static_files;
pub mod upstream;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

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

/// 405 with the envelope for a wrong method on an API path.
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    envelope(
        StatusCode::METHOD_NOT_ALLOWED,
        FAIL,
        &format!("{method} is not allowed on {}; use POST", uri.path()),
        serde_json::Value::Null,
        serde_json::Value::Null,
    )
    .into_response()
}
