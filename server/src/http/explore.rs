//! The explore endpoints — `POST /v1/profile/services`, `/timeline`, `/tags`, `/tag_values`,
//! `/functions`, `/function_timeline`, `/function_lines` — answered from the local store or, with `--upstream`,
//! from the querier (its SQL API; for functions, its ProfileTracing answers). Bodies are
//! read by the contract's parsers (400 `INVALID_POST_DATA` naming the problem); answers use the
//! ProfileTracing envelope with a `{columns, values}` result.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use embers_model::contract::body::RequestError;
use embers_model::contract::envelope::Table;
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::explore::{
    parse_function_lines_body, parse_function_timeline_body, parse_functions_body,
    parse_services_body, parse_tag_values_body, parse_tags_body, parse_timeline_body,
    FunctionLinesAnswer, FunctionLinesQuery, FunctionLinesRequest, FunctionTimelineAnswer,
    FunctionTimelineQuery, FunctionTimelineRequest, FunctionsAnswer, FunctionsQuery,
    FunctionsRequest, ServiceRow, ServicesQuery, ServicesRequest, TagValuesQuery, TagValuesRequest,
    TagsQuery, TagsRequest, TimelineAnswer, TimelineQuery, TimelineRequest, ValueCount,
};
use serde::Serialize;

use crate::api_types::Answer;
use crate::error::Error;
use crate::error::{envelope_json, json_response};
use crate::http::state::AppState;
use crate::store::{Store, StoreError};

/// A checked explore request.
#[derive(Debug, Clone)]
pub enum Explore {
    /// `POST /v1/profile/services`
    Services(ServicesQuery),
    /// `POST /v1/profile/timeline`
    Timeline(TimelineQuery),
    /// `POST /v1/profile/tags`
    Tags(TagsQuery),
    /// `POST /v1/profile/tag_values`
    TagValues(TagValuesQuery),
    /// `POST /v1/profile/functions`
    Functions(FunctionsQuery),
    /// `POST /v1/profile/function_timeline`
    FunctionTimeline(FunctionTimelineQuery),
    /// `POST /v1/profile/function_lines`
    FunctionLines(FunctionLinesQuery),
}

/// The success envelope around `result`.
pub(crate) fn success(result: &impl Serialize) -> String {
    envelope_json(SUCCESS, "", result, serde_json::Value::Null)
}

impl Explore {
    /// Answer from the local store (blocking).
    fn run_local(&self, store: &Store) -> Result<String, StoreError> {
        Ok(match self {
            Explore::Services(q) => success(&store.services(q)?),
            Explore::Timeline(q) => success(&store.timeline(q)?),
            Explore::Tags(q) => success(&store.tags(q)?),
            Explore::TagValues(q) => success(&store.tag_values(q)?),
            Explore::Functions(q) => success(&store.functions(q)?),
            Explore::FunctionTimeline(q) => success(&store.function_timeline(q)?),
            Explore::FunctionLines(q) => success(&store.function_lines(q)?),
        })
    }
}

/// `POST /v1/profile/services`.
#[utoipa::path(
    post,
    path = "/v1/profile/services",
    tag = "explore",
    summary = "The processes with samples in a range, by value",
    description = "Each process, language and event type with its summed value, highest first (at most 1000 rows).",
    request_body(content = ServicesRequest, content_type = "application/json"),
    responses((status = 200, description = "The table.", body = Answer<Table<ServiceRow>>)),
)]
pub async fn services(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_services_body(b).map(Explore::Services)
    })
    .await
}

/// `POST /v1/profile/timeline`.
#[utoipa::path(
    post,
    path = "/v1/profile/timeline",
    tag = "explore",
    summary = "Values over time, optionally broken down",
    description = "The selected samples summed per bucket of `interval` seconds (picked from the interval ladder when absent), optionally one series per value of `group_by` (at most `group_limit`, the rest summed into `(other)`).",
    request_body(content = TimelineRequest, content_type = "application/json"),
    responses((status = 200, description = "The table.", body = Answer<TimelineAnswer>)),
)]
pub async fn timeline(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_timeline_body(b).map(Explore::Timeline)
    })
    .await
}

/// `POST /v1/profile/tags`.
#[utoipa::path(
    post,
    path = "/v1/profile/tags",
    tag = "explore",
    summary = "The tags the samples of a range carry",
    request_body(content = TagsRequest, content_type = "application/json"),
    responses((status = 200, description = "The table.", body = Answer<Table<ValueCount>>)),
)]
pub async fn tags(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_tags_body(b).map(Explore::Tags)
    })
    .await
}

/// `POST /v1/profile/tag_values`.
#[utoipa::path(
    post,
    path = "/v1/profile/tag_values",
    tag = "explore",
    summary = "The values of one tag, by samples",
    request_body(content = TagValuesRequest, content_type = "application/json"),
    responses((status = 200, description = "The table.", body = Answer<Table<ValueCount>>)),
)]
pub async fn tag_values(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_tag_values_body(b).map(Explore::TagValues)
    })
    .await
}

/// `POST /v1/profile/functions`.
#[utoipa::path(
    post,
    path = "/v1/profile/functions",
    tag = "explore",
    summary = "The hottest functions across services, and what grew",
    description = "Functions by self (or total: a function on a stack twice counts once per sample) over the selected samples of every process (or one), each with its share of every selected sample and the places (process, and the `group_by` tag's value) where it runs; ranked and paged (`limit` 1 to 1000, `offset`). With a baseline (`baseline_time_start`/`baseline_time_end` or `baseline_tag_filter`) each row carries the baseline's values, the change of its share in percentage points and the ratio, and `order_by` `change` or `place_change` ranks by them. From a DeepFlow querier (`--upstream`), `coverage` names the services read.",
    request_body(content = FunctionsRequest, content_type = "application/json"),
    responses((status = 200, description = "The ranked functions.", body = Answer<FunctionsAnswer>)),
)]
pub async fn functions(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_functions_body(b).map(Explore::Functions)
    })
    .await
}

/// `POST /v1/profile/function_timeline`.
#[utoipa::path(
    post,
    path = "/v1/profile/function_timeline",
    tag = "explore",
    summary = "One function's self and total over time",
    description = "The timeline's body and `function` (a frame's name as it appears in stacks): the function's self and total per bucket, optionally one series per value of `group_by`. Buckets where it has no samples are left out.",
    request_body(content = FunctionTimelineRequest, content_type = "application/json"),
    responses((status = 200, description = "The function's points.", body = Answer<FunctionTimelineAnswer>)),
)]
pub async fn function_timeline(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_function_timeline_body(b).map(Explore::FunctionTimeline)
    })
    .await
}

/// `POST /v1/profile/function_lines`.
#[utoipa::path(
    post,
    path = "/v1/profile/function_lines",
    tag = "explore",
    summary = "One function's source lines, hottest first",
    description = "ProfileTracing's query fields and `function` (a frame's name as in `profile_location_str`): the function's lines as `[file, line, self_value, total_value]` rows by total, then self (at most 1000; `omitted` counts the rest). A line's self counts the samples whose last frame is the function at that line, its total the samples running the function at that line (once per sample). Inlined functions are their own frames at their own lines. No lines is an empty table, not an error: `lines` is `none` and `reason` says why (`no_samples`, or `no_line_info`: the producer recorded no lines). `function_self_value`/`function_total_value` are the function's sums over every selected sample, with or without lines. Not answered with `--upstream` (a DeepFlow querier stores no lines): 501.",
    request_body(content = FunctionLinesRequest, content_type = "application/json"),
    responses((status = 200, description = "The function's lines.", body = Answer<FunctionLinesAnswer>)),
)]
pub async fn function_lines(
    state: State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    handle(state, headers, body, |b| {
        parse_function_lines_body(b).map(Explore::FunctionLines)
    })
    .await
}

/// Every explore endpoint: the body read and parsed by `parse`, answered by the upstream
/// querier or the store, as JSON.
async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
    parse: impl FnOnce(&[u8]) -> Result<Explore, RequestError>,
) -> Result<Response, Error> {
    let body = super::read_body(body, state.limits.query)?;
    let query = parse(&body).map_err(|e| Error::invalid(e.0))?;
    let text = match &state.upstream {
        Some(upstream) => {
            state
                .limiter
                .run_async(upstream.explore(&headers, &query))
                .await?
        }
        None => {
            let store = state.store.clone();
            state
                .limiter
                .run_blocking(move |_| query.run_local(&store).map_err(Error::from_store))
                .await?
        }
    };
    Ok(json_response(StatusCode::OK, text))
}
