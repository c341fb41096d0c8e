//! `POST /push.v1.PusherService/Push`: Pyroscope's push API as a Connect unary call, what
//! Grafana Alloy's `pyroscope.write` sends (`url = "http://embers:8080"`). Bodies are
//! `application/proto` or `application/json` (optionally `Content-Encoding: gzip`), read by
//! [`crate::formats::push`]; every series is written in one transaction, or nothing.
//!
//! Answers follow the Connect protocol: success is an empty `PushResponse` in the request's
//! encoding; an error is `{"code": "invalid_argument", "message": "..."}` with HTTP 400 (413
//! `resource_exhausted` past the size limit, 500 `internal`), so a Connect client shows the
//! message.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use embers_model::budget::Budget;

pub use super::connect::{connect_error, ConnectError, PATH};
use crate::error::Error;
use crate::formats::push;
use crate::http::state::AppState;
use crate::limits::writes::IngestBytes;

/// The handler.
#[utoipa::path(
    post,
    path = "/push.v1.PusherService/Push",
    tag = "ingest",
    summary = "Pyroscope's push API (Connect unary), as Grafana Alloy's pyroscope.write sends it",
    description = "A `PushRequest`: series of labels, each with gzipped pprof samples, as \
                   `application/proto` or `application/json` (optionally `Content-Encoding: gzip`); \
                   every series written in one transaction or none. Answers follow Connect: an empty \
                   `PushResponse` in the request's encoding, or `{code, message}`.",
    request_body(
        description = "A push.v1.PushRequest.",
        content((Vec<u8> = "application/proto"), (Object = "application/json")),
    ),
    responses(
        (status = 200, description = "All stored: an empty PushResponse.",
         content((Vec<u8> = "application/proto"), (Object = "application/json"))),
        (status = 400, description = "The request is wrong: Connect's `{\"code\": \"invalid_argument\", \"message\"}` naming the problem.", body = Object, content_type = "application/json"),
        (status = 413, description = "Over --max-ingest-bytes, compressed or not: `resource_exhausted`.", body = Object, content_type = "application/json"),
        (status = 500, description = "A server failure: `internal`.", body = Object, content_type = "application/json"),
        (status = 503, description = "The store cannot write now, or the ingest bytes in flight would pass --max-ingest-in-flight-bytes: `unavailable`; retry after `Retry-After` seconds.",
         headers(("Retry-After" = u32, description = "Seconds to wait before sending again.")),
         body = Object, content_type = "application/json"),
    ),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: IngestBytes,
) -> Result<Response, ConnectError> {
    let limit = state.limits.ingest;
    // Held until the series are stored.
    let (_in_flight, body) = body.0.map_err(|r| r.into_error(limit))?;
    let codec = codec(&headers)?;
    let budget = Budget::for_input(body.len(), state.limits.request_memory);
    let body = super::pyroscope::decoded_body(&headers, body, limit, &budget)?;
    let limits = state.limiter.caps().stacks;
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let ingest = crate::blocking::run("push", move || {
        let series = match codec {
            Codec::Proto => push::decode_proto(&body, &budget)?,
            Codec::Json => push::decode_json(&body, &budget)?,
        };
        push::batches(&series, &limits, limit, &budget, user_agent.as_deref())
    })
    .await?
    .map_err(super::pyroscope::format_error)?;
    if !ingest.ignored_labels.is_empty() {
        tracing::debug!(labels = ?ingest.ignored_labels, "push: labels that are no field left out");
    }
    super::pyroscope::store(&state, ingest.batches, ingest.ignored_labels).await?;
    let (content_type, body) = match codec {
        Codec::Proto => ("application/proto", Vec::new()),
        Codec::Json => ("application/json", b"{}".to_vec()),
    };
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body,
    )
        .into_response())
}

/// How the request (and so the answer) is encoded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Proto,
    Json,
}

fn codec(headers: &HeaderMap) -> Result<Codec, Error> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match ct.as_str() {
        "application/proto" | "application/protobuf" | "application/x-protobuf" => Ok(Codec::Proto),
        "application/json" => Ok(Codec::Json),
        other => Err(Error::invalid(format!(
            "Content-Type '{other}' is not a Connect unary encoding: send application/proto or \
             application/json (streaming and gRPC are not served here)"
        ))),
    }
}
