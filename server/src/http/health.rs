//! `GET /healthz`: liveness, as JSON.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use crate::error::json_response;
use crate::AppState;

/// `{"mode": "local" | "upstream", "status": "ok", "version": ...}` (alphabetical, as answered
/// since the first release).
#[derive(Serialize)]
struct Health {
    mode: &'static str,
    status: &'static str,
    version: &'static str,
}

/// The handler.
pub async fn handle(State(state): State<AppState>) -> Response {
    let mode = if state.upstream.is_some() {
        "upstream"
    } else {
        "local"
    };
    let health = Health {
        mode,
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
    };
    // Three strings always serialise.
    json_response(
        StatusCode::OK,
        serde_json::to_string(&health).unwrap_or_default(),
    )
}
