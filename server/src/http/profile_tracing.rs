//! `POST /v1/profile/ProfileTracing`: validate the request, query the store (or forward it
//! upstream), build the tree and answer shape A or B.
//!
//! Shape B is the default; shape A is answered when the server runs with `--result-shape a` or
//! the request says `"result_shape": "A"` (or `"a"`). Queries pass the gate of
//! [`crate::limits`]; a tree built here over `--max-answer-nodes` is cut to its heaviest part and answered
//! with `DESCRIPTION` `truncated: N of M nodes`.

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::body::parse_tracing_body;
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::schema::TracingBody;
use embers_model::export::encode::{encode_result, EncodedResult};

use crate::api_types::Answer;
use crate::diagnostics::Diagnostics;
use crate::error::{envelope_json, json_response};
use crate::store::{QueryError, StoreError};
use crate::{tree, AppState, Error};

/// The handler.
#[utoipa::path(
    post,
    path = "/v1/profile/ProfileTracing",
    tag = "ProfileTracing",
    summary = "The flame graph of the samples a request selects",
    description = "DeepFlow's ProfileTracing interface: the stacks of the process (or the per-host \
                   `Total`) in the time range and tag filter, summed into a tree and answered in \
                   shape A or B. A tree over --max-answer-nodes is cut to its heaviest part and \
                   DESCRIPTION says `truncated: N of M nodes`.",
    request_body(content = TracingBody, content_type = "application/json"),
    responses((status = 200, description = "The profile (an empty match is a success too).",
               body = Answer<EncodedResult<'static>>)),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match super::read_body(body, state.limits.query) {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    if let Some(upstream) = &state.upstream {
        // Relayed answers stream as they come (bounded by --upstream-max-bytes); the node
        // limit is for answers built here.
        let forwarded = state
            .limiter
            .run_async(async { Ok(upstream.forward(&headers, body).await) })
            .await;
        return forwarded.unwrap_or_else(IntoResponse::into_response);
    }
    match answer(&state, &body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn answer(state: &AppState, body: &[u8]) -> Result<Response, Error> {
    let req = parse_tracing_body(body).map_err(|e| Error::invalid(e.to_string()))?;
    let shape = req.shape.unwrap_or(state.default_shape);
    let store = state.store.clone();
    let debug = req.debug;
    let max_nodes = state.limiter.caps().max_answer_nodes;
    let fail = move |store_error: StoreError| {
        let e = Error::from_store(store_error).with_shape(shape);
        if debug {
            e.with_debug(Diagnostics::new(&[], "", ""))
        } else {
            e
        }
    };
    // Querying, building and serialising are all blocking work (a big answer takes seconds).
    let text = state
        .limiter
        .run_blocking(move |budget| {
            let out = store.query(&req.selection()).map_err(|e| match e {
                QueryError::NoAppService | QueryError::TooManyAppServices(_) => {
                    Error::invalid(e.to_string())
                }
                QueryError::Store(e) => fail(e),
            })?;
            let started = Instant::now();
            let profile = tree::build_profile(
                &out.root,
                out.stacks.iter().map(|(s, v)| (s.as_str(), *v)),
                req.request.kernel_depth(),
                budget,
            )
            .map_err(fail)?;
            drop(out.stacks);
            let (profile, cut) = match profile {
                Some(p) => {
                    let (p, cut) = tree::limit_nodes(p, max_nodes);
                    (Some(p), cut)
                }
                None => (None, None),
            };
            let notice = cut.map(|c| c.notice()).unwrap_or_default();
            let result = encode_result(profile.as_ref(), shape, &req.request.profile_event_type);
            let format_time = format!("{:?}", started.elapsed());
            let debug_value = debug.then(|| {
                Diagnostics::new(&out.statements, &format!("{:?}", out.elapsed), &format_time)
            });
            Ok(envelope_json(SUCCESS, &notice, result, debug_value))
        })
        .await?;
    Ok(json_response(StatusCode::OK, text))
}
