//! `POST /v1development/profiles`: OTLP/HTTP profiles (what an OpenTelemetry Collector's
//! `otlphttp` exporter sends), and the gRPC `ProfilesService/Export` ([`grpc`]) on
//! `--otlp-grpc-listen`. Both decode with [`crate::formats::otlp`] and store the whole request
//! in one transaction, or nothing of it.
//!
//! The body is `application/x-protobuf` or `application/json` (OTLP/JSON), optionally with
//! `Content-Encoding: gzip`; it may be `--max-ingest-bytes` long, compressed and decompressed.
//! Answers follow OTLP/HTTP rather than the envelope: on success an empty
//! `ExportProfilesServiceResponse`, on failure a `google.rpc.Status` whose `message` names the
//! problem (400 for a bad request, 413 too large, 415 an unknown type or encoding, 503 with
//! `Retry-After` while the store cannot serve, 500 a failure of the service), each encoded as
//! the request was. The guard in front (host,
//! cross-site rules, the `--token-file` token) answers its refusals as every route does.

mod codec;
pub mod grpc;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use prost::Message;

use embers_model::budget::Budget;

use crate::formats::gzip::maybe_gunzip_within;
use crate::formats::otlp::{self, Encoding, ExportProfilesServiceResponse, OtlpError};
use crate::formats::FormatError;
use crate::http::state::AppState;
use crate::limits::writes::{IngestBytes, Refused};
use crate::limits::StackLimits;
use crate::store::{Batch, InsertStats};

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
    /// The store cannot serve now (unreachable, busy, failing): OTLP's retryable answer, 503
    /// with `Retry-After` (gRPC `UNAVAILABLE`); the message names the store.
    Unavailable {
        /// For the sender.
        message: String,
        /// Seconds to wait.
        retry_after: u32,
    },
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
#[utoipa::path(
    post,
    path = "/v1development/profiles",
    tag = "ingest",
    summary = "OTLP profiles, as an OpenTelemetry Collector's otlphttp exporter sends them",
    description = "An `ExportProfilesServiceRequest` (OTLP v1development profiles), as protobuf or \
                   OTLP/JSON, optionally gzip (`Content-Encoding`); stored in one transaction or \
                   not at all. Answers follow OTLP/HTTP, not the envelope: an empty \
                   `ExportProfilesServiceResponse`, or a `google.rpc.Status` naming the problem, \
                   encoded as the request was. See docs/otlp.md.",
    request_body(
        description = "An ExportProfilesServiceRequest.",
        content((Vec<u8> = "application/x-protobuf"), (Object = "application/json")),
    ),
    responses(
        (status = 200, description = "All stored: an empty ExportProfilesServiceResponse.",
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
        (status = 400, description = "The request is wrong: a google.rpc.Status (code 3) naming the problem.",
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
        (status = 413, description = "Over --max-ingest-bytes, compressed or not: a google.rpc.Status (code 8).",
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
        (status = 415, description = "Not an OTLP content type or encoding: a google.rpc.Status (code 12).",
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
        (status = 500, description = "A failure of the service: a google.rpc.Status (code 13); the detail is logged.",
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
        (status = 503, description = "The store cannot serve now (named in the message): a google.rpc.Status (code 14); retry after `Retry-After` seconds.",
         headers(("Retry-After" = u32, description = "Seconds to wait before sending again.")),
         content((Vec<u8> = "application/x-protobuf"), (Object = "application/json"))),
    ),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: IngestBytes,
) -> Response {
    let encoding = match encoding_of(&headers) {
        Ok(encoding) => encoding,
        Err(failure) => return answer(Encoding::Protobuf, Err(failure)),
    };
    let outcome = match (body.0, gzipped(&headers)) {
        // The write gate is full: OTLP's retryable answer, as a store outage.
        (Err(Refused::Busy(e)), _) => Err(Failure::Unavailable {
            message: e.description().to_owned(),
            retry_after: e.retry_after().unwrap_or(1),
        }),
        (Err(Refused::Body(rejection)), _) => {
            Err(if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Failure::TooLarge(format!(
                    "the body is larger than {} bytes, the ingest size limit (--max-ingest-bytes)",
                    state.limits.ingest
                ))
            } else {
                Failure::Invalid(format!(
                    "could not read the body: {}",
                    rejection.body_text()
                ))
            })
        }
        (Ok(_), Err(failure)) => Err(failure),
        (Ok((in_flight, bytes)), Ok(gzip)) => {
            store(&state, move |now, intake| {
                // The reservation ends with the conversion; the batches own their data.
                let _in_flight = in_flight;
                let budget = Budget::for_input(bytes.len(), intake.max_request_memory);
                let plain;
                let body: &[u8] = if gzip {
                    if !crate::formats::gzip::is_gzip(&bytes) {
                        return Err(Failure::Invalid(
                            "Content-Encoding says gzip but the body is not gzip data".into(),
                        ));
                    }
                    plain = maybe_gunzip_within(&bytes, intake.max_ingest_bytes, &budget).map_err(
                        |e| match e {
                            FormatError::TooLarge(m) => Failure::TooLarge(m),
                            other => Failure::Invalid(other.to_string()),
                        },
                    )?;
                    &plain
                } else {
                    &bytes
                };
                otlp::decode(body, encoding, now, intake.stacks, &budget).map_err(refused)
            })
            .await
        }
    };
    answer(encoding, outcome.map(|_| ()))
}

/// What a request may cost: each stack, and the memory it may expand to.
#[derive(Debug, Clone, Copy)]
pub struct Intake {
    /// `--max-stack-frames`, `--max-frame-bytes`.
    pub stacks: StackLimits,
    /// `--max-request-memory`: the cap of the request's budget.
    pub max_request_memory: usize,
    /// `--max-ingest-bytes`: what a gzip body may decompress to.
    pub max_ingest_bytes: usize,
}

/// Convert (with `make`, given the time now and what the request may cost) and store one
/// request, off the async threads; shared by HTTP and gRPC.
pub async fn store(
    state: &AppState,
    make: impl FnOnce(i64, &Intake) -> Result<Vec<Batch>, Failure> + Send + 'static,
) -> Result<InsertStats, Failure> {
    let intake = Intake {
        stacks: state.limiter.caps().stacks,
        max_request_memory: state.limits.request_memory,
        max_ingest_bytes: state.limits.ingest,
    };
    let store = state.store.clone();
    let stats = crate::blocking::run("ingest", move || {
        let now = crate::store::ingest::now_micros() / 1_000_000;
        let batches = make(now, &intake)?;
        store.insert(&batches).map_err(|e| match (e.outage(), e) {
            (_, crate::store::StoreError::Invalid(msg)) => Failure::Invalid(msg),
            (Some(outage), other) => {
                tracing::warn!(detail = %other, "OTLP profiles not stored: {}", outage.cause);
                Failure::Unavailable {
                    message: outage.describe(),
                    retry_after: outage.retry_after,
                }
            }
            (None, other) => Failure::Internal(other.to_string()),
        })
    })
    .await
    .map_err(|failed| Failure::Internal(failed.to_string()))??;
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
        OtlpError::Expands { .. } | OtlpError::OverBudget(_) => Failure::TooLarge(e.to_string()),
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
    let retry_after = match &outcome {
        Err(Failure::Unavailable { retry_after, .. }) => Some(*retry_after),
        _ => None,
    };
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
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
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
    // google.rpc.Code: INVALID_ARGUMENT 3, RESOURCE_EXHAUSTED 8, UNIMPLEMENTED 12, INTERNAL 13,
    // UNAVAILABLE 14.
    match failure {
        Failure::Invalid(m) => {
            tracing::info!(status = 400, "OTLP profiles refused: {m}");
            (StatusCode::BAD_REQUEST, 3, m)
        }
        Failure::TooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, 8, m),
        Failure::Unsupported(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, 12, m),
        Failure::Unavailable { message, .. } => (StatusCode::SERVICE_UNAVAILABLE, 14, message),
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
