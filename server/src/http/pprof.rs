//! `POST /v1/profile/pprof`: a ProfileTracing request answered as gzipped pprof of the same
//! tree (`max_kernel_stack_depth` applied, cut to the answer's node limit like any answer), so
//! `go tool pprof`, Grafana or speedscope read any stored profile:
//!
//! ```text
//! curl -s -H 'Content-Type: application/json' -d '{"app_service": "web", ...}' \
//!   http://127.0.0.1:8080/v1/profile/pprof > web.pb.gz && go tool pprof -top web.pb.gz
//! ```
//!
//! The sample type is the event type in the unit `go tool pprof` scales (`on-cpu/microseconds`,
//! `inuse_space/bytes`, `cpu/count`); the profile's time is `time_start`, its duration the
//! range. With `--upstream`, the querier's answer is converted. Errors are the envelope.
//!
//! When the stored samples of one process carry source lines, the export is written from
//! them (every stack with its lines, [`to_pprof_lines`]) so `go tool pprof -list FUNC` shows
//! the lines; the tree is still built first, for its checks and its root's name.

use axum::body::{to_bytes, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::body::{parse_tracing_body, TracingRequest};
use embers_model::contract::event::quantity;
use embers_model::contract::schema::TracingBody;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::export::pprof_lines::{to_pprof_lines, StackLines};
use embers_model::wire::decode_response;
use embers_model::Profile;

use super::profile_tracing::build;
use crate::error::Error;
use crate::formats::gzip::gzip;
use crate::http::state::AppState;

/// The handler.
#[utoipa::path(
    post,
    path = "/v1/profile/pprof",
    tag = "ProfileTracing",
    summary = "The flame graph of a request as gzipped pprof",
    description = "The ProfileTracing body, answered as gzipped pprof (profile.proto) of the same \
                   tree, for `go tool pprof`, Grafana, Parca or speedscope: the sample type is the \
                   event type in its unit (`on-cpu/microseconds`, `inuse_space/bytes`, ...), the \
                   time `time_start` and the duration the range. Failures are the envelope.",
    request_body(content = TracingBody, content_type = "application/json"),
    responses((status = 200, description = "The profile, gzipped pprof (`<app_service>.pb.gz`).",
               content_type = "application/octet-stream", body = Vec<u8>)),
)]
pub async fn handle(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Error> {
    let body = super::read_body(body, state.limits.query)?;
    let req = parse_tracing_body(&body).map_err(|e| Error::invalid(e.to_string()))?;
    let (profile, lines) = match &state.upstream {
        Some(upstream) => {
            let answer = state
                .limiter
                // An error of the forwarding itself is read back as the querier's would be.
                .run_async(async {
                    let forwarded = upstream.forward(&headers, body, state.allow_debug).await;
                    Ok(forwarded.unwrap_or_else(IntoResponse::into_response))
                })
                .await?;
            (from_answer(answer, upstream.max_bytes()).await?, None)
        }
        None => {
            let store = state.store.clone();
            let max_nodes = state.limiter.caps().max_answer_nodes;
            let query = req.clone();
            state
                .limiter
                .run_blocking(move |budget| {
                    let built = build(&store, &query, budget, max_nodes, Error::from_store)?;
                    let lines = match with_lines(&query) {
                        true => store
                            .line_samples(&query.selection())
                            .map_err(Error::from_store)?,
                        false => None,
                    };
                    Ok((built.profile, lines))
                })
                .await?
        }
    };
    Ok(pprof_response(&req, profile.unwrap_or_default(), lines))
}

/// Whether the export may be written from the stored lines: one process named (not the
/// per-host `Total`), and no kernel frames cut (the lines are of whole stacks).
fn with_lines(req: &TracingRequest) -> bool {
    let r = &req.request;
    r.kernel_depth() < 0
        && r.app_service
            .as_deref()
            .is_some_and(|a| a != embers_model::contract::event::TOTAL_APP_SERVICE)
}

/// The tree of an upstream querier's answer (its error, when it answered one, as ours).
async fn from_answer(answer: Response, max_bytes: u64) -> Result<Option<Profile>, Error> {
    let status = answer.status();
    let limit = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let bytes = to_bytes(answer.into_body(), limit)
        .await
        .map_err(|e| Error::bad_gateway(format!("the querier's answer could not be read: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    match decode_response(status.as_u16(), &text) {
        Ok(decoded) => Ok(Some(decoded.profile)),
        Err(e) if status.is_client_error() => Err(Error::invalid(e.to_string())),
        Err(e) => Err(Error::bad_gateway(e.to_string())),
    }
}

/// The gzipped pprof answer.
fn pprof_response(
    req: &TracingRequest,
    profile: Profile,
    lines: Option<Vec<StackLines>>,
) -> Response {
    let r = &req.request;
    let meta = PprofMeta {
        event_type: &r.profile_event_type,
        quantity: quantity(&r.profile_event_type),
        time_nanos: r.time_start.saturating_mul(1_000_000_000),
        duration_nanos: (r.time_end - r.time_start)
            .max(0)
            .saturating_mul(1_000_000_000),
    };
    let raw = match &lines {
        Some(stacks) => {
            let root = match profile.is_empty() {
                true => r.app_service.as_deref().unwrap_or_default(),
                false => profile.name(0),
            };
            to_pprof_lines(root, stacks, &meta)
        }
        None => to_pprof(&profile, &meta),
    };
    let bytes = gzip(&raw);
    let name: String = r
        .app_service
        .as_deref()
        .unwrap_or("profile")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = format!("attachment; filename=\"{name}.pb.gz\"");
    let mut response = (StatusCode::OK, bytes).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}
