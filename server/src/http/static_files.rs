//! The built viewer, served at `/` on the same origin as the API (the querier sends no CORS
//! headers, so the page must live beside the API).
//!
//! Unknown non-API paths fall back to `index.html` (the viewer routes on the client). Unknown
//! `/v1/...` paths get a 404 envelope. When the directory has no `index.html`, `/` answers a
//! short plain-text note saying how to build the viewer.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

use crate::{AppState, Error};

/// The fallback handler for every path no route matched.
pub async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if path == "/v1" || path.starts_with("/v1/") {
        return Error::not_found(&path).into_response();
    }
    let index = state.static_dir.join("index.html");
    if !index.is_file() {
        return not_built(&state, &path);
    }
    let service = ServeDir::new(&state.static_dir).fallback(ServeFile::new(index));
    match service.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

fn not_built(state: &AppState, path: &str) -> Response {
    let status = if path == "/" {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    let text = format!(
        "Embers: the viewer is not built (no {dir}/index.html).\n\
         Build it with `trunk build --release` (output in dist/), or start the server with \
         --static-dir DIR pointing at a built viewer.\n\
         The API is available meanwhile: POST /v1/profile/ProfileTracing, POST /v1/profile/ingest, \
         GET /healthz.\n",
        dir = state.static_dir.display()
    );
    let mut response = (status, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
