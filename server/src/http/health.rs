//! `GET /healthz`: liveness, as JSON.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::error::json_response;
use crate::AppState;

/// `{"status": "ok", "version": ..., "mode": "local" | "upstream"}`.
pub async fn handle(State(state): State<AppState>) -> Response {
    let mode = if state.upstream.is_some() {
        "upstream"
    } else {
        "local"
    };
    let body = json!({"status": "ok", "version": env!("CARGO_PKG_VERSION"), "mode": mode});
    json_response(StatusCode::OK, body.to_string())
}
