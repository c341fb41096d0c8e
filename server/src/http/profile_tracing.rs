//! `POST /v1/profile/ProfileTracing`: validate the request, query the store (or forward it
//! upstream), build the tree and answer shape A or B.
//!
//! Shape B is the default; shape A is answered when the server runs with `--result-shape a` or
//! the request says `"result_shape": "A"` (or `"a"`).

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::body::parse_tracing_body;
use embers_model::contract::envelope::SUCCESS;
use embers_model::export::encode::encode_result;
use serde_json::{json, Value};

use crate::error::{envelope_json, json_response};
use crate::store::{QueryError, StoreError};
use crate::{tree, AppState, Error};

/// The handler.
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
        return upstream.forward(&headers, body).await;
    }
    match answer(&state, &body).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

/// The querier's `debug` member for our one statement list.
fn diagnostics(statements: &[String], query_time: &str, format_time: &str) -> Value {
    json!({
        "querier_debug": statements.iter().map(|sql| json!({
            "ip": "embedded-sqlite",
            "sql": sql,
            "sql_CH": sql,
            "query_time": query_time,
            "query_uuid": "",
            "error": "",
        })).collect::<Vec<_>>(),
        "format_time": format_time,
    })
}

async fn answer(state: &AppState, body: &[u8]) -> Result<Response, Error> {
    let req = parse_tracing_body(body).map_err(|e| Error::invalid(e.to_string()))?;
    let shape = req.shape.unwrap_or(state.default_shape);
    let store = state.store.clone();
    let debug = req.debug;
    // Querying, building and serialising are all blocking work (a big answer takes seconds).
    let task = tokio::task::spawn_blocking(move || {
        let out = store.query(&req.selection())?;
        let started = Instant::now();
        let profile = tree::build_profile(
            &out.root,
            out.stacks.iter().map(|(s, v)| (s.as_str(), *v)),
            req.request.kernel_depth(),
        );
        let result = encode_result(profile.as_ref(), shape, &req.request.profile_event_type);
        let format_time = format!("{:?}", started.elapsed());
        let debug_value = debug
            .then(|| diagnostics(&out.statements, &format!("{:?}", out.elapsed), &format_time));
        Ok::<_, QueryError>(envelope_json(SUCCESS, "", result, debug_value))
    })
    .await;

    let fail = |detail: String| {
        let e = Error::internal(detail).with_shape(shape);
        if debug {
            e.with_debug(diagnostics(&[], "", ""))
        } else {
            e
        }
    };
    match task {
        Err(join) => Err(fail(format!("query task failed: {join}"))),
        Ok(Err(e @ (QueryError::NoAppService | QueryError::TooManyAppServices(_)))) => {
            Err(Error::invalid(e.to_string()))
        }
        Ok(Err(QueryError::Store(StoreError::Invalid(msg)))) => Err(fail(msg)),
        Ok(Err(QueryError::Store(e))) => Err(fail(e.to_string())),
        Ok(Ok(body)) => Ok(json_response(StatusCode::OK, body)),
    }
}
