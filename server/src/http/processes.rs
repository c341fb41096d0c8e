//! `DELETE /v1/profile/processes/{app_service}`: remove every sample of one process (all its
//! languages and event types) and its rollup rows from the store: on SQLite in small
//! transactions ([`crate::store::retention`]), on ClickHouse by a mutation on every shard, waited
//! for. Answers the envelope with
//! `{"app_service", "samples_deleted", "rollup_rows_deleted"}`; deleting a process that has no
//! samples deletes nothing and succeeds (the request is idempotent). A delete takes one of
//! `--max-concurrent-deletes` turns ([`crate::limits::writes`]); with none free it is a 503.

use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::envelope::FAIL;
use serde::Serialize;

use crate::api_types::Answer;
use crate::error::Error;
use crate::error::{envelope, json_response};
use crate::http::state::AppState;

/// The `result` of a delete. Members in alphabetical order, as answered since the first release
/// (then a sorted `serde_json::Value`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Deleted {
    /// The process.
    pub app_service: String,
    /// Rollup rows removed (0 on ClickHouse, which keeps no rollup tables).
    pub rollup_rows_deleted: u64,
    /// Samples removed (0 when there were none: the request is idempotent).
    pub samples_deleted: u64,
}

/// The handler.
#[utoipa::path(
    delete,
    path = "/v1/profile/processes/{app_service}",
    tag = "ingest",
    summary = "Delete every sample of one process",
    params(("app_service" = String, Path, pattern = "\\S", description = "The process (all its languages and event types).")),
    responses((status = 200, description = "What was removed.", body = Answer<Deleted>)),
)]
pub async fn delete(
    State(state): State<AppState>,
    Path(app_service): Path<String>,
) -> Result<Response, Error> {
    if app_service.trim().is_empty() {
        return Err(Error::invalid("app_service must not be blank"));
    }
    let turn = state.writes.delete_turn()?;
    let store = state.store.clone();
    let name = app_service.clone();
    let removed = crate::blocking::run("delete", move || {
        let _turn = turn;
        store.delete_app(&name, crate::retention::BATCH)
    })
    .await?
    .map_err(Error::from_store)?;
    tracing::info!(
        app_service,
        samples = removed.samples,
        "deleted a process's samples"
    );
    let result = Deleted {
        app_service,
        rollup_rows_deleted: removed.rollup_rows,
        samples_deleted: removed.samples,
    };
    Ok(json_response(
        StatusCode::OK,
        crate::http::explore::success(&result),
    ))
}

/// 405 with the envelope for any other method.
pub async fn other_method(method: Method) -> Response {
    envelope(
        StatusCode::METHOD_NOT_ALLOWED,
        FAIL,
        &format!("{method} is not allowed on /v1/profile/processes/{{app_service}}; use DELETE"),
        serde_json::Value::Null,
        serde_json::Value::Null,
    )
    .into_response()
}
