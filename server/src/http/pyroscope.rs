//! `POST /ingest` and `POST /api/v1/profile/ingest` (the path DeepFlow's agent serves): the
//! Pyroscope ingest API that language SDKs send to. Parameters and body forms are read by
//! [`crate::formats::pyroscope`]; this handler reads the body (bounded by
//! `--max-ingest-bytes`, and counted against `--max-ingest-in-flight-bytes` until it is stored;
//! gunzipped when it says `Content-Encoding: gzip`, split into parts when it is
//! `multipart/form-data`) and writes every batch in one transaction, or nothing.
//!
//! The answer is the envelope with `{batches, samples, new_stacks, ignored_labels}` (Pyroscope's
//! senders read only the status).

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use std::borrow::Cow;

use embers_model::budget::Budget;
use embers_model::contract::envelope::SUCCESS;

use crate::api_types::Answer;
use crate::error::envelope;
use crate::error::Error;
use crate::formats::pyroscope::{self, Body, Ingest};
use crate::formats::{gzip, FormatError};
use crate::http::state::AppState;
use crate::limits::writes::IngestBytes;
use crate::store::Batch;

/// The handler (also at `/api/v1/profile/ingest`: the OpenAPI document lists it twice).
#[utoipa::path(
    post,
    path = "/ingest",
    tag = "ingest",
    summary = "Pyroscope's ingest API, as language SDKs and DeepFlow's agent speak it",
    description = "A profile of one application over [from, until], in the body form `format` names \
                   (`folded`, `lines`, `pprof`; `perf` for `perf script` text) or a multipart pprof \
                   upload (`profile`, `prev_profile` for cumulative profiles, `sample_type_config`), \
                   optionally gzip (`Content-Encoding`). `name` is `app{label=value,...}`: labels \
                   become tags of the field table, the others are left out and listed in the \
                   answer's `ignored_labels`. Written in one transaction or not at all; see \
                   docs/formats.md for what is stored.",
    params(
        ("name" = String, Query, description = "`app{label=value,...}`: the application (app_service) and its labels."),
        ("from" = Option<i64>, Query, description = "Unix time in seconds (milliseconds, microseconds and nanoseconds are told by their size); now when absent."),
        ("until" = Option<i64>, Query, description = "Unix seconds (as `from`); `from` when absent."),
        ("sampleRate" = Option<i64>, Query, description = "Samples per second (default 100): with eBPF text profiles, a sample is 1e6/sampleRate µs on-CPU."),
        ("spyName" = Option<String>, Query, description = "The sender (gospy, javaspy, pyspy, rbspy, phpspy, dotnetspy, nodespy, ebpfspy, ...): the profile_language_type by DeepFlow's map."),
        ("units" = Option<String>, Query, description = "samples, bytes, objects, lock_nanoseconds, ..."),
        ("aggregationType" = Option<String>, Query, description = "sum or average (DeepFlow's spelling aggregrationType too)."),
        ("format" = Option<String>, Query, description = "folded (default), lines, pprof, jfr or perf; a multipart body is pprof (part `profile`) or JFR (part `jfr`)."),
    ),
    request_body(
        description = "The profile, as `format` says (or multipart/form-data).",
        content((String = "text/plain"), (Vec<u8> = "application/octet-stream"), (Object = "multipart/form-data")),
    ),
    responses((status = 200, description = "Stored.", body = Answer<Ingested>)),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: IngestBytes,
) -> Result<Response, Error> {
    let limit = state.limits.ingest;
    // Held until the batches are stored.
    let (_in_flight, body) = body.0.map_err(|r| r.into_error(limit))?;
    let budget = Budget::for_input(body.len(), state.limits.request_memory);
    let body = decoded_body(&headers, body, limit, &budget)?;
    let Query(query) =
        query.map_err(|e| Error::invalid(format!("bad query string: {}", e.body_text())))?;
    let params = pyroscope::params(&query).map_err(format_error)?;
    let parts = multipart(&headers, body.clone()).await?;
    let limits = state.limiter.caps().stacks;
    // Decoding and folding a big profile is CPU work: off the async threads.
    let Ingest {
        batches,
        ignored_labels,
    } = crate::blocking::run("ingest", move || {
        let body = match &parts {
            Some(p) => Body::Multipart {
                profile: &p.profile,
                previous: p.previous.as_deref(),
                config: p.config.as_deref(),
            },
            None => Body::Raw(&body),
        };
        pyroscope::batches(&params, body, &limits, limit, &budget)
    })
    .await?
    .map_err(format_error)?;
    let result = store(&state, batches, ignored_labels).await?;
    Ok(envelope(StatusCode::OK, SUCCESS, "", result, Value::Null))
}

/// A format adapter's error as the envelope: 413 for what decompresses past the limit, else 400.
pub fn format_error(e: FormatError) -> Error {
    match e {
        FormatError::TooLarge(m) => Error::payload_too_large(m),
        other => Error::invalid(other.to_string()),
    }
}

/// The body, gunzipped when its `Content-Encoding` says gzip: at most `limit` bytes
/// (`--max-ingest-bytes`), charged to the request's `budget`.
pub fn decoded_body(
    headers: &HeaderMap,
    body: Bytes,
    limit: usize,
    budget: &Budget,
) -> Result<Bytes, Error> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    match encoding.as_deref() {
        None | Some("" | "identity") => Ok(body),
        Some("gzip") => match gzip::maybe_gunzip_within(&body, limit, budget) {
            Ok(Cow::Owned(plain)) => Ok(Bytes::from(plain)),
            Ok(Cow::Borrowed(_)) => Err(Error::invalid(
                "Content-Encoding says gzip but the body is not gzip data",
            )),
            Err(e) => Err(format_error(e)),
        },
        Some(other) => Err(Error::invalid(format!(
            "Content-Encoding {other} is not supported (gzip is)"
        ))),
    }
}

/// The parts of a multipart upload, when the body is one.
struct Parts {
    profile: Bytes,
    previous: Option<Bytes>,
    config: Option<Bytes>,
}

async fn multipart(headers: &HeaderMap, body: Bytes) -> Result<Option<Parts>, Error> {
    let Some(ct) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(None);
    };
    if !ct
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return Ok(None);
    }
    let boundary = multer::parse_boundary(ct)
        .map_err(|e| Error::invalid(format!("bad multipart Content-Type: {e}")))?;
    let stream = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
    let mut form = multer::Multipart::new(stream, boundary);
    let (mut profile, mut previous, mut config) = (None, None, None);
    let bad = |e: multer::Error| Error::invalid(format!("bad multipart body: {e}"));
    while let Some(field) = form.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_owned();
        let bytes = field.bytes().await.map_err(bad)?;
        match name.as_str() {
            // `jfr`: Pyroscope's Java agent (its `labels` part is not read).
            "profile" | "jfr" => profile = Some(bytes),
            "prev_profile" => previous = Some(bytes),
            "sample_type_config" => config = Some(bytes),
            _ => {}
        }
    }
    let profile = profile.ok_or_else(|| {
        Error::invalid(
            "the multipart body has no `profile` part (a pprof profile) or `jfr` part (a JFR \
             recording)",
        )
    })?;
    Ok(Some(Parts {
        profile,
        previous,
        config,
    }))
}

/// The `result` of an ingest.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PyroscopeIngested)]
pub struct Ingested {
    /// Batches written (one per event type and process).
    batches: usize,
    /// Labels that are no field of the field table, left out.
    ignored_labels: Vec<String>,
    /// Stacks not stored before.
    new_stacks: u64,
    /// Samples written.
    samples: u64,
}

/// Writes `batches` (off the async threads) and answers with what was written.
pub async fn store(
    state: &AppState,
    batches: Vec<Batch>,
    ignored_labels: Vec<String>,
) -> Result<Ingested, Error> {
    let store = state.store.clone();
    let count = batches.len();
    let stats = crate::blocking::run("ingest", move || store.insert(&batches))
        .await?
        .map_err(Error::from_store)?;
    tracing::info!(
        samples = stats.samples,
        new_stacks = stats.new_stacks,
        "ingested"
    );
    Ok(Ingested {
        batches: count,
        ignored_labels,
        new_stacks: stats.new_stacks,
        samples: stats.samples,
    })
}
