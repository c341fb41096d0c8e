//! Snapshots (`/v1/profile/snapshots`): save an answer, list, fetch and delete saved ones.
//! They live in the local store in every mode, `--upstream` included, so a permalink outlives
//! the querier's 72-hour retention. The calls are listed in
//! [`embers_model::contract::snapshot`].
//!
//! A fetched snapshot is the stored answer with `"snapshot": {meta}` spliced in as its first
//! member, read whole from the store and then sent from memory ([`download`]). Saves and
//! deletes pass the write gate ([`crate::limits::writes`]); what the snapshots may add up to
//! is in [`quota`].

pub mod download;
pub mod quota;
pub mod save;

use axum::extract::rejection::PathRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::snapshot::{is_valid_id, SnapshotMeta, ID_LEN, SNAPSHOTS_PATH};
use serde_json::Value;

use super::Route;
use crate::api_types::{Answer, StoredAnswer};
use crate::blocking;
use crate::error::envelope;
use crate::error::Error;
use crate::http::state::AppState;

/// What a save body may carry besides the answer (the request, the name, the JSON around).
pub const BODY_HEADROOM: usize = 1 << 20;

/// The routes, for answers up to `max_snapshot` bytes.
pub fn routes(max_snapshot: usize) -> [Route; 2] {
    let collection = post(save::handle)
        .get(list)
        .fallback(|m: Method, u: Uri| async move { super::not_allowed(&m, &u, &["GET", "POST"]) })
        .layer(DefaultBodyLimit::max(
            max_snapshot.saturating_add(BODY_HEADROOM),
        ));
    let one = get(fetch)
        .delete(delete)
        .fallback(
            |m: Method, u: Uri| async move { super::not_allowed(&m, &u, &["GET", "DELETE"]) },
        );
    [
        Route::new(SNAPSHOTS_PATH, &[Method::GET, Method::POST], collection),
        Route::new(SNAPSHOT_PATH, &[Method::GET, Method::DELETE], one),
    ]
}

/// One snapshot's path.
const SNAPSHOT_PATH: &str = "/v1/profile/snapshots/{id}";

/// `GET /v1/profile/snapshots`: every snapshot, newest first.
#[utoipa::path(
    get,
    path = "/v1/profile/snapshots",
    tag = "snapshots",
    summary = "Every saved snapshot, newest first",
    responses((status = 200, description = "Their metadata.", body = Answer<Vec<SnapshotMeta>>)),
)]
pub async fn list(State(state): State<AppState>) -> Result<Response, Error> {
    let store = state.store.clone();
    let all = blocking::run("snapshot", move || store.snapshots())
        .await?
        .map_err(Error::from_store)?;
    Ok(envelope(StatusCode::OK, SUCCESS, "", all, Value::Null))
}

/// `DELETE /v1/profile/snapshots/{id}`: the deleted snapshot's metadata.
#[utoipa::path(
    delete,
    path = "/v1/profile/snapshots/{id}",
    tag = "snapshots",
    summary = "Delete a snapshot",
    params(("id" = String, Path, pattern = "^[A-Z2-7]{26}$", description = "The snapshot's id: 26 characters A-Z, 2-7.")),
    responses((status = 200, description = "The deleted snapshot's metadata.", body = Answer<SnapshotMeta>)),
)]
pub async fn delete(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, Error> {
    let id = snapshot_id(id)?;
    let turn = state.writes.delete_turn()?;
    let store = state.store.clone();
    let lookup = id.clone();
    let deleted = blocking::run("snapshot", move || {
        let _turn = turn;
        store.delete_snapshot(&lookup)
    })
    .await?
    .map_err(Error::from_store)?;
    let meta = deleted.ok_or_else(|| unknown(&id))?;
    Ok(envelope(StatusCode::OK, SUCCESS, "", meta, Value::Null))
}

/// `GET /v1/profile/snapshots/{id}`: the stored answer with the snapshot member first.
#[utoipa::path(
    get,
    path = "/v1/profile/snapshots/{id}",
    tag = "snapshots",
    summary = "A saved answer, byte for byte, with its metadata first",
    params(("id" = String, Path, pattern = "^[A-Z2-7]{26}$", description = "The snapshot's id: 26 characters A-Z, 2-7.")),
    responses((status = 200, description = "The stored ProfileTracing answer with `\"snapshot\": {...}` spliced in as its first member.", body = StoredAnswer)),
)]
pub async fn fetch(
    State(state): State<AppState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, Error> {
    let id = snapshot_id(id)?;
    let store = state.store.clone();
    let lookup = id.clone();
    let loaded = blocking::run("snapshot", move || download::load(&store, &lookup)).await??;
    Ok(download::response(loaded.ok_or_else(|| unknown(&id))?))
}

/// The id from the path, if it is one the service could have given.
fn snapshot_id(path: Result<Path<String>, PathRejection>) -> Result<String, Error> {
    let Path(id) = path.map_err(|e| Error::invalid(format!("bad snapshot path: {e}")))?;
    if is_valid_id(&id) {
        Ok(id)
    } else {
        let shown: String = id.chars().take(40).collect();
        Err(Error::invalid(format!(
            "{shown:?} is not a snapshot id: ids are {ID_LEN} characters A-Z and 2-7"
        )))
    }
}

fn unknown(id: &str) -> Error {
    Error::missing(format!(
        "there is no snapshot {id}; it was deleted, or saved in another Embers database"
    ))
}
