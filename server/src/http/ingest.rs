//! `POST /v1/profile/ingest`: store folded stacks.
//!
//! Two body forms:
//! - `Content-Type: application/json`: one batch or `{"batches": [...]}` (see [`crate::input`]);
//! - anything else: the body is folded text and the metadata comes from the query string:
//!   `?app_service=redis&profile_event_type=on-cpu&time=1700000000&host=node-a&k8s.label.app=redis`
//!   (`profile_language_type`, `profile_value_unit` too; every other parameter is a tag).
//!
//! The whole request is one transaction: a bad line (reported with its number) writes nothing.
//! The body's bytes count against `--max-ingest-in-flight-bytes` while it is read and stored
//! ([`crate::limits::writes`]).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use embers_model::budget::Budget;
use embers_model::contract::envelope::SUCCESS;

use crate::api_types::Answer;
use crate::error::envelope;
use crate::error::Error;
use crate::http::state::AppState;
use crate::input::{self, BatchInput};
use crate::limits::writes::IngestBytes;
use crate::limits::StackLimits;
use crate::store::Batch;
use embers_model::contract::ingest::IngestBody;

/// Query-string fields that are batch metadata rather than tags.
const META_PARAMS: [&str; 5] = [
    "app_service",
    "profile_language_type",
    "profile_event_type",
    "profile_value_unit",
    "time",
];

/// The handler.
#[utoipa::path(
    post,
    path = "/v1/profile/ingest",
    tag = "ingest",
    summary = "Store folded stacks",
    description = "A JSON body (one batch or `{\"batches\": [...]}`), or folded text \
                   (`frame;frame;frame value` per line) with the batch's metadata and tags in the \
                   query string. The request is one transaction: a bad line (named by its number) \
                   writes nothing.",
    params(
        ("app_service" = Option<String>, Query, description = "Folded text only (required there): the process, or `Total`."),
        ("profile_language_type" = Option<String>, Query, description = "Folded text only; default `eBPF`."),
        ("profile_event_type" = Option<String>, Query, description = "Folded text only; default `on-cpu`."),
        ("profile_value_unit" = Option<String>, Query, description = "Folded text only; default `microseconds`."),
        ("time" = Option<i64>, Query, description = "Folded text only: Unix seconds of every sample; default now."),
    ),
    request_body(
        description = "JSON (`application/json`), or folded stacks (`application/octet-stream`) \
                       whose every query parameter not listed here is a tag.",
        content((IngestBody = "application/json"), (String = "application/octet-stream")),
    ),
    responses((status = 200, description = "What was stored.", body = Answer<Ingested>)),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
    body: IngestBytes,
) -> Result<Response, Error> {
    // The reservation is held by the blocking work, so it is given back when the write is done.
    let (in_flight, body) = body.0.map_err(|r| r.into_error(state.limits.ingest))?;
    let params = if is_json(&headers) {
        None
    } else {
        let Query(params) =
            query.map_err(|e| Error::invalid(format!("bad query string: {}", e.body_text())))?;
        Some(params)
    };
    let limits = state.limiter.caps().stacks;
    if params.is_none() {
        // What the JSON decodes into, before it is decoded (a two-byte `{}` can become a
        // batch of a hundred bytes).
        let budget = Budget::for_input(body.len(), state.limits.request_memory);
        crate::formats::charge_json(&body, JSON_VALUE_BYTES, &budget)
            .map_err(|e| Error::payload_too_large(e.to_string()))?;
    }
    let store = state.store.clone();
    // Parsing a big body is CPU work too: off the async threads with the write.
    let (batch_count, stats) = crate::blocking::run("ingest", move || {
        let _in_flight = in_flight;
        let now = crate::store::ingest::now_micros() / 1_000_000;
        let batches = match params {
            None => input::parse_json_body(&body, now, &limits)
                .map_err(|e| Error::invalid(e.to_string()))?,
            Some(params) => vec![text_batch(&params, &body, now, &limits)?],
        };
        // The samples own their text now; the body need not wait for the write.
        drop(body);
        let stats = store.insert(&batches).map_err(Error::from_store)?;
        Ok::<_, Error>((batches.len(), stats))
    })
    .await??;
    tracing::info!(
        samples = stats.samples,
        new_stacks = stats.new_stacks,
        "ingested"
    );
    let result = Ingested {
        batches: batch_count,
        new_stacks: stats.new_stacks,
        samples: stats.samples,
    };
    Ok(envelope(StatusCode::OK, SUCCESS, "", result, Value::Null))
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().contains("json"))
}

/// Build one batch from query-string metadata and a folded-text body.
fn text_batch(
    params: &[(String, String)],
    body: &[u8],
    now: i64,
    limits: &StackLimits,
) -> Result<Batch, Error> {
    let text = std::str::from_utf8(body)
        .map_err(|e| Error::invalid(format!("the folded body is not UTF-8: {e}")))?;
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let app_service = get("app_service").ok_or_else(|| {
        Error::invalid(
            "app_service is required (query parameter ?app_service=... for a folded-text body, \
             or send Content-Type: application/json)",
        )
    })?;
    let time = match get("time") {
        None => None,
        Some(t) => Some(
            t.parse::<i64>()
                .map_err(|_| Error::invalid(format!("time must be Unix seconds, got '{t}'")))?,
        ),
    };
    let tags = params
        .iter()
        .filter(|(k, _)| !META_PARAMS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let batch_input = BatchInput {
        app_service,
        profile_language_type: get("profile_language_type")
            .unwrap_or_else(|| embers_model::contract::event::DEFAULT_LANGUAGE.to_owned()),
        profile_event_type: get("profile_event_type")
            .unwrap_or_else(|| embers_model::contract::event::DEFAULT_EVENT_TYPE.to_owned()),
        profile_value_unit: get("profile_value_unit")
            .unwrap_or_else(|| embers_model::contract::event::DEFAULT_UNIT.to_owned()),
        time,
        tags,
        folded: String::new(),
        details: Vec::new(),
    };
    input::to_batch_of(&batch_input, text, now, limits).map_err(|e| Error::invalid(e.to_string()))
}

/// The `result` of an ingest. Members in alphabetical order, as answered since the first
/// release (then a sorted `serde_json::Value`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Ingested {
    /// Batches written.
    pub batches: usize,
    /// Stacks not stored before.
    pub new_stacks: u64,
    /// Samples written.
    pub samples: u64,
}

/// What one JSON value of a batch body may take once decoded (a sample's struct and its
/// vector's growth).
const JSON_VALUE_BYTES: usize = 128;
