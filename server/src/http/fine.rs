//! `POST /v1/profile/heatmap` and `POST /v1/profile/samples`: time inside a range (issue 37),
//! answered from the local store's event times (the contract: `embers_model::contract::fine`).
//! Bodies are ProfileTracing's plus `time_start_ms` / `time_end_ms` and `slots_per_second`;
//! past the caps (cells, samples) the answer is 400 with the numbers. A DeepFlow querier keeps
//! no event times: with `--upstream` both answer 400 saying so.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use embers_model::contract::fine::heatmap::{parse_heatmap_body, HeatmapAnswer};
use embers_model::contract::fine::samples::{parse_samples_body, SamplesAnswer};
use embers_model::contract::fine::FineRequest;

use crate::api_types::Answer;
use crate::error::json_response;
use crate::error::Error;
use crate::http::explore::success;
use crate::http::state::AppState;
use crate::store::QueryError;

/// What either endpoint answers with `--upstream`.
const UPSTREAM: &str = "the heatmap and samples read event times, which a DeepFlow querier \
     (--upstream) does not keep; run the service on its own store";

fn refuse(e: QueryError) -> Error {
    match e {
        QueryError::Store(e) => Error::from_store(e),
        other => Error::invalid(other.to_string()),
    }
}

/// `POST /v1/profile/heatmap`.
#[utoipa::path(
    post,
    path = "/v1/profile/heatmap",
    tag = "ProfileTracing",
    summary = "Samples per second and sub-second slot",
    description = "The request's samples counted per second (columns) and per slot of \
                   1/slots_per_second s (rows, default 50, at most 1000), from their event \
                   times. time_start_ms/time_end_ms narrow the seconds. At most 180000 cells \
                   (1 h x 50): past it, 400 with the numbers. Data without event times answers \
                   `resolution: \"s\"` (one slot per second, the profile's values); rows \
                   without times among timed ones are in `untimed_values`.",
    request_body(content = FineRequest, content_type = "application/json"),
    responses((status = 200, description = "The heatmap.", body = Answer<HeatmapAnswer>)),
)]
pub async fn heatmap(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    let body = super::read_body(body, state.limits.query)?;
    let query = parse_heatmap_body(&body).map_err(|e| Error::invalid(e.0))?;
    if state.upstream.is_some() {
        return Err(Error::invalid(UPSTREAM));
    }
    let store = state.store.clone();
    let text = state
        .limiter
        .run_blocking(move |_| Ok(success(&store.heatmap(&query).map_err(refuse)?)))
        .await?;
    Ok(json_response(StatusCode::OK, text))
}

/// `POST /v1/profile/samples`.
#[utoipa::path(
    post,
    path = "/v1/profile/samples",
    tag = "ProfileTracing",
    summary = "The samples of a window in time order",
    description = "Each sample of the request (narrowed by time_start_ms/time_end_ms) as \
                   [time_ms, thread, stack, value], in time order; `stacks` lists each stack \
                   once, root first, by index. At most 100000 samples: past it, 400 with the \
                   numbers. Rows stored without event times come at their second's start with \
                   thread null, and `resolution` is \"s\".",
    request_body(content = FineRequest, content_type = "application/json"),
    responses((status = 200, description = "The samples.", body = Answer<SamplesAnswer>)),
)]
pub async fn samples(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    let body = super::read_body(body, state.limits.query)?;
    let query = parse_samples_body(&body).map_err(|e| Error::invalid(e.0))?;
    if state.upstream.is_some() {
        return Err(Error::invalid(UPSTREAM));
    }
    let store = state.store.clone();
    let text = state
        .limiter
        .run_blocking(move |_| match store.samples(&query).map_err(refuse)? {
            Ok(answer) => Ok(success(&answer)),
            Err(full) => Err(Error::invalid(full.to_string())),
        })
        .await?;
    Ok(json_response(StatusCode::OK, text))
}
