//! `POST /v1/profile/ProfileTracing`: validate the request, query the store (or forward it
//! upstream), build the tree and answer shape A or B.
//!
//! Shape B is the default; shape A is answered when the server runs with `--result-shape a` or
//! the request says `"result_shape": "A"` (or `"a"`). Queries pass the gate of
//! [`crate::limits`]; a tree built here over `--max-answer-nodes` is cut to its heaviest part and answered
//! with `DESCRIPTION` `truncated: N of M nodes`. `"debug": true` is honoured only with
//! `--allow-debug` (else `debug` is null, and nothing is forwarded).

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use embers_model::contract::body::{parse_tracing_body, TracingRequest};
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::schema::TracingBody;
use embers_model::export::encode::{encode_result, EncodedResult};
use embers_model::Profile;

use crate::api_types::Answer;
use crate::diagnostics::Diagnostics;
use crate::error::Error;
use crate::error::{envelope_json, json_response};
use crate::http::state::AppState;
use crate::store::budget::Budget;
use crate::store::{QueryError, Store, StoreError};
use crate::tree;

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
) -> Result<Response, Error> {
    let body = super::read_body(body, state.limits.query)?;
    if let Some(upstream) = &state.upstream {
        // Relayed answers stream as they come (bounded by --upstream-max-bytes); the node
        // limit is for answers built here.
        return state
            .limiter
            .run_async(upstream.forward(&headers, body, state.allow_debug))
            .await;
    }
    local(&state, &body).await
}

/// The notice of a millisecond window whose edge seconds hold samples without event times.
pub(crate) const SECOND_RESOLUTION: &str = "resolution: s at the window's edges (samples \
     stored without millisecond times were counted whole in the partly covered seconds)";

/// What a ProfileTracing query built: the tree (`None` for an empty match), the notice of a cut
/// tree, and what the store ran.
pub(crate) struct Built {
    /// The tree.
    pub profile: Option<Profile>,
    /// `truncated: N of M nodes` when it was cut to the node limit, else empty.
    pub notice: String,
    /// The statements the store ran and their time.
    pub statements: Vec<String>,
    /// Time in the store.
    pub elapsed: std::time::Duration,
    /// When building the tree started.
    pub started: Instant,
}

/// Queries the store for `req` and builds its tree, cut to the answer's node limit (blocking
/// work: run it through the limiter). `fail` words a store failure.
pub(crate) fn build(
    store: &Store,
    req: &TracingRequest,
    budget: &Budget,
    max_nodes: usize,
    fail: impl Fn(StoreError) -> Error,
) -> Result<Built, Error> {
    let refuse = |e: QueryError| match e {
        QueryError::NoAppService | QueryError::TooManyAppServices(_) => {
            Error::invalid(e.to_string())
        }
        QueryError::Store(e) => fail(e),
    };
    // A millisecond window reads its partly covered seconds by their events; the answer says
    // when some of them had none (counted whole).
    let (out, mut notice) = match req.window {
        Some(window) => {
            let w = store
                .query_window(&req.selection(), window)
                .map_err(refuse)?;
            let note = if w.untimed_at_edges {
                SECOND_RESOLUTION
            } else {
                ""
            };
            (w.output, note.to_owned())
        }
        None => (
            store.query(&req.selection()).map_err(refuse)?,
            String::new(),
        ),
    };
    let started = Instant::now();
    let profile = tree::build_profile(
        &out.root,
        out.stacks.iter().map(|(s, v)| (s.as_str(), *v)),
        req.request.kernel_depth(),
        budget,
    )
    .map_err(&fail)?;
    drop(out.stacks);
    let (profile, cut) = match profile {
        Some(p) => {
            let (p, cut) = tree::limit_nodes(p, max_nodes);
            (Some(p), cut)
        }
        None => (None, None),
    };
    if let Some(cut) = cut {
        notice = match notice.is_empty() {
            true => cut.notice(),
            false => format!("{}; {notice}", cut.notice()),
        };
    }
    Ok(Built {
        profile,
        notice,
        statements: out.statements,
        elapsed: out.elapsed,
        started,
    })
}

/// The answer from the local store (the upstream branch relays instead).
async fn local(state: &AppState, body: &[u8]) -> Result<Response, Error> {
    let req = parse_tracing_body(body).map_err(|e| Error::invalid(e.to_string()))?;
    let shape = req.shape.unwrap_or(state.default_shape);
    let store = state.store.clone();
    // The statements and a failure's detail are internal: shown only when the operator allows.
    let debug = req.debug && state.allow_debug;
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
            let built = build(&store, &req, budget, max_nodes, fail)?;
            let result = encode_result(
                built.profile.as_ref(),
                shape,
                &req.request.profile_event_type,
            );
            let format_time = format!("{:?}", built.started.elapsed());
            let debug_value = debug.then(|| {
                Diagnostics::new(
                    &built.statements,
                    &format!("{:?}", built.elapsed),
                    &format_time,
                )
            });
            Ok(envelope_json(SUCCESS, &built.notice, result, debug_value))
        })
        .await?;
    Ok(json_response(StatusCode::OK, text))
}
