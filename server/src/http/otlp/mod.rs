//! `POST /v1development/profiles`: OTLP/HTTP profiles (what an OpenTelemetry Collector's
//! `otlphttp` exporter sends), and the gRPC `ProfilesService/Export` ([`grpc`]) on
//! `--otlp-grpc-listen`. Both decode with [`crate::formats::otlp`] and store the whole request
//! in one transaction, or nothing of it.
//!
//! The body is `application/x-protobuf` or `application/json` (OTLP/JSON), optionally with
//! `Content-Encoding: gzip`; it may be `--max-ingest-bytes` long, compressed and decompressed.
//! Answers follow OTLP/HTTP rather than the envelope: on success an empty
//! `ExportProfilesServiceResponse`, on failure a `google.rpc.Status` whose `message` names the
//! problem (400 for a bad request, 413 too large, 415 an unknown type or encoding, 500 a
//! failure of the service), each encoded as the request was. The guard in front (host,
//! cross-site rules, the `--token-file` token) answers its refusals as every route does.

pub mod grpc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use prost::Message;

use crate::formats::gzip::gunzip_bounded;
use crate::formats::otlp::{self, Bounds, Encoding, ExportProfilesServiceResponse, OtlpError};
use crate::store::{Batch, InsertStats};
use crate::AppState;

/// The path of the route.
pub const PATH: &str = "/v1development/profiles";

/// Why an export was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The request is wrong; the text names the problem.
    Invalid(String),
    /// Larger than the limit, compressed or not.
    TooLarge(String),
    /// A content type or encoding this route does not read.
    Unsupported(String),
    /// The service failed (the detail is logged, not answered).
    Internal(String),
}

/// `google.rpc.Status`, the body of OTLP failures (its `details` are never sent here).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    /// A `google.rpc.Code`.
    #[prost(int32, tag = "1")]
    pub code: i32,
    /// What went wrong.
    #[prost(string, tag = "2")]
    pub message: String,
}

/// The handler.
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let encoding = match encoding_of(&headers) {
        Ok(encoding) => encoding,
        Err(failure) => return answer(Encoding::Protobuf, Err(failure)),
    };
    let outcome = match (body, gzipped(&headers)) {
        (Err(rejection), _) => Err(if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Failure::TooLarge(format!(
                "the body is larger than {} bytes, the ingest size limit (--max-ingest-bytes)",
                state.limits.ingest
            ))
        } else {
            Failure::Invalid(format!(
                "could not read the body: {}",
                rejection.body_text()
            ))
        }),
        (Ok(_), Err(failure)) => Err(failure),
        (Ok(bytes), Ok(gzip)) => {
            let limit = state.limits.ingest;
            store(&state, move |now, bounds| {
                let plain;
                let body: &[u8] = if gzip {
                    plain = gunzip_bounded(&bytes, limit).map_err(|e| match e {
                        crate::formats::gzip::GunzipError::TooLarge { .. } => {
                            Failure::TooLarge(e.to_string())
                        }
                        other => Failure::Invalid(other.to_string()),
                    })?;
                    &plain
                } else {
                    &bytes
                };
                otlp::decode(body, encoding, now, bounds).map_err(refused)
            })
            .await
        }
    };
    answer(encoding, outcome.map(|_| ()))
}

/// Convert (with `make`, given the time now and the request's bounds) and store one request,
/// off the async threads; shared by HTTP and gRPC.
pub async fn store(
    state: &AppState,
    make: impl FnOnce(i64, &Bounds) -> Result<Vec<Batch>, Failure> + Send + 'static,
) -> Result<InsertStats, Failure> {
    let bounds = Bounds::new(state.limiter.caps().stacks, state.limits.ingest);
    let store = state.store.clone();
    let stats = tokio::task::spawn_blocking(move || {
        let now = crate::store::ingest::now_micros() / 1_000_000;
        let batches = make(now, &bounds)?;
        store.insert(&batches).map_err(|e| match e {
            crate::store::StoreError::Invalid(msg) => Failure::Invalid(msg),
            other => Failure::Internal(other.to_string()),
        })
    })
    .await
    .map_err(|e| Failure::Internal(format!("ingest task failed: {e}")))??;
    tracing::info!(
        samples = stats.samples,
        new_stacks = stats.new_stacks,
        "ingested OTLP profiles"
    );
    Ok(stats)
}

/// A request the decoder refused: too large once named (413), or wrong (400).
fn refused(e: OtlpError) -> Failure {
    match e {
        OtlpError::Expands { .. } => Failure::TooLarge(e.to_string()),
        other => Failure::Invalid(other.to_string()),
    }
}

/// The encoding a `Content-Type` names.
fn encoding_of(headers: &HeaderMap) -> Result<Encoding, Failure> {
    let given = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = given.split(';').next().unwrap_or("").trim();
    match media.to_ascii_lowercase().as_str() {
        "application/x-protobuf" | "application/protobuf" => Ok(Encoding::Protobuf),
        "application/json" => Ok(Encoding::Json),
        _ => Err(Failure::Unsupported(format!(
            "Content-Type '{given}' is not an OTLP encoding: send application/x-protobuf or \
             application/json"
        ))),
    }
}

/// Whether `Content-Encoding` says gzip (none and `identity` are plain).
fn gzipped(headers: &HeaderMap) -> Result<bool, Failure> {
    let Some(value) = headers.get(header::CONTENT_ENCODING) else {
        return Ok(false);
    };
    match value
        .to_str()
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        Ok("gzip" | "x-gzip") => Ok(true),
        Ok("identity" | "") => Ok(false),
        _ => Err(Failure::Unsupported(format!(
            "Content-Encoding {value:?} is not supported: send gzip or no encoding"
        ))),
    }
}

/// The OTLP/HTTP answer to an outcome, encoded as the request was.
fn answer(encoding: Encoding, outcome: Result<(), Failure>) -> Response {
    let (status, body) = match outcome {
        Ok(()) => (StatusCode::OK, ok_body(encoding)),
        Err(failure) => {
            let (status, code, message) = failure_parts(failure);
            let status_message = RpcStatus { code, message };
            let body = match encoding {
                Encoding::Protobuf => status_message.encode_to_vec(),
                Encoding::Json => serde_json::json!({
                    "code": status_message.code,
                    "message": status_message.message,
                })
                .to_string()
                .into_bytes(),
            };
            (status, body)
        }
    };
    let content_type = match encoding {
        Encoding::Protobuf => "application/x-protobuf",
        Encoding::Json => "application/json",
    };
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// An empty `ExportProfilesServiceResponse` (no partial success: all was stored).
fn ok_body(encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Protobuf => ExportProfilesServiceResponse::default().encode_to_vec(),
        Encoding::Json => b"{}".to_vec(),
    }
}

/// HTTP status, `google.rpc.Code` and message of a failure; internal details are only logged.
fn failure_parts(failure: Failure) -> (StatusCode, i32, String) {
    // google.rpc.Code: INVALID_ARGUMENT 3, RESOURCE_EXHAUSTED 8, UNIMPLEMENTED 12, INTERNAL 13.
    match failure {
        Failure::Invalid(m) => {
            tracing::info!(status = 400, "OTLP profiles refused: {m}");
            (StatusCode::BAD_REQUEST, 3, m)
        }
        Failure::TooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, 8, m),
        Failure::Unsupported(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, 12, m),
        Failure::Internal(detail) => {
            tracing::error!(detail, "OTLP profiles could not be stored");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                13,
                "internal error while storing the profiles; see the server log".to_owned(),
            )
        }
    }
}
