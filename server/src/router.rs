//! The service's router: every route ([`route_list`]) with its handler and body limit, the
//! layers every request passes (tracing, the guard, CORS, the panic guard), and the same routes
//! without the guard for the MCP tools' in-process calls ([`internal_app`]).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use axum::routing::delete;
use axum::Router;
use embers_model::contract::source::{SOURCE_CONFIG_PATH, SOURCE_PATH};
use tower::util::option_layer;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use crate::error::Error;
use crate::http::state::AppState;
use crate::http::{self, Route};
use crate::limits::sizes::Limits;
use crate::{mcp, openapi};

/// The service's router: the API under `/v1/profile/`, `/healthz`, and the viewer at `/`.
pub fn app(state: AppState) -> Router {
    let router = guarded(routes(state.limits), &state);
    router.with_state(state)
}

/// Every route the service answers. The router is built from this list and the OpenAPI test
/// holds the document (`server/src/openapi/`) to it: a route added here without its
/// `#[utoipa::path]` and its line in the document's `paths(...)` fails that test.
pub fn route_list(limits: Limits) -> Vec<Route> {
    let Limits {
        ingest,
        query,
        snapshot,
        ..
    } = limits;
    let mut routes = vec![
        Route::post(
            "/v1/profile/ProfileTracing",
            http::profile_tracing::handle,
            query,
        ),
        Route::post("/v1/profile/services", http::explore::services, query),
        Route::post("/v1/profile/timeline", http::explore::timeline, query),
        Route::post("/v1/profile/tags", http::explore::tags, query),
        Route::post("/v1/profile/tag_values", http::explore::tag_values, query),
        Route::post("/v1/profile/functions", http::explore::functions, query),
        Route::post(
            "/v1/profile/function_timeline",
            http::explore::function_timeline,
            query,
        ),
        Route::post(
            "/v1/profile/function_lines",
            http::explore::function_lines,
            query,
        ),
        Route::post("/v1/profile/heatmap", http::fine::heatmap, query),
        Route::post("/v1/profile/samples", http::fine::samples, query),
        Route::post("/v1/profile/ingest", http::ingest::handle, ingest),
        Route::post("/v1/profile/pprof", http::pprof::handle, query),
        Route::post(http::otlp::PATH, http::otlp::handle, ingest),
        // What other profilers' senders post to (see `formats`): Pyroscope's ingest (its own
        // path and DeepFlow's agent's) and push.
        Route::post("/ingest", http::pyroscope::handle, ingest),
        Route::post("/api/v1/profile/ingest", http::pyroscope::handle, ingest),
        Route::post(http::push::PATH, http::push::handle, ingest),
        Route::new(
            "/v1/profile/processes/{app_service}",
            &[Method::DELETE],
            delete(http::processes::delete).fallback(http::processes::other_method),
        ),
        Route::get("/healthz", http::health::handle),
        Route::get("/v1/alerts/dry-run", http::alerts::dry_run),
        Route::get("/readyz", http::health::ready),
        Route::get("/embers-config.json", http::guard::page::embed_config),
        Route::get(SOURCE_CONFIG_PATH, http::source::config),
        Route::get(SOURCE_PATH, http::source::text),
        Route::get("/openapi.json", openapi::handle),
        // The MCP tools call these same routes in process: the handler is given them.
        Route::post(
            mcp::MCP_PATH,
            |state: State<AppState>, parts: Parts, body: Result<Bytes, BytesRejection>| {
                mcp::handle(state, parts, body, internal_app)
            },
            query,
        ),
    ];
    routes.extend(http::snapshots::routes(snapshot));
    routes
}

/// The routes, before the layers every request passes; every other path is the viewer.
fn routes(limits: Limits) -> Router<AppState> {
    route_list(limits)
        .into_iter()
        .fold(Router::new(), |router, route| {
            router.route(route.path, route.router)
        })
        .fallback(http::static_files::handle)
}

/// The routes with `state` but without the guard and tracing: what the MCP tools call in
/// process, after the MCP request itself passed the guard.
pub fn internal_app(state: AppState) -> Router {
    routes(state.limits)
        .layer(CatchPanicLayer::custom(panic_response))
        .with_state(state)
}

/// `routes` behind request tracing and the panic guard: a panicking handler fails its own
/// request with a 500 envelope (and a log line) while the server goes on serving the others.
/// The server unwinds on panic (the workspace's release profile does not abort; the wasm
/// target aborts by its own default).
fn guarded(routes: Router<AppState>, state: &AppState) -> Router<AppState> {
    routes
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(option_layer(state.guard.cors()))
        .layer(axum::middleware::from_fn_with_state(
            state.guard.clone(),
            http::guard::check,
        ))
        .layer(TraceLayer::new_for_http())
}

/// The 500 envelope for a panicked handler; the panic message goes to the log only.
fn panic_response(payload: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    Error::internal(format!("a handler panicked: {message}")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use axum::body::{to_bytes, Body};
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use std::sync::Arc;
    use tower::ServiceExt;

    async fn call(router: &Router, path: &str) -> (StatusCode, String) {
        let request = Request::get(path)
            .header("host", "127.0.0.1:8080")
            .body(Body::empty())
            .expect("request");
        let response = router.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let body = to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// A handler that panics (a route that exists only in this test build) is answered with
    /// the 500 envelope, and the same router goes on answering.
    #[tokio::test]
    async fn a_panicking_handler_fails_only_its_request() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Arc::new(Store::open(&dir.path().join("p.db")).expect("open"));
        let state = AppState::new(store);
        let boom = get(|| async {
            let v: Vec<u8> = Vec::new();
            // A real out-of-bounds panic, not a `panic!` the layer might special-case.
            std::hint::black_box(&v)[3].to_string()
        });
        let router = guarded(routes(state.limits).route("/boom", boom), &state).with_state(state);
        let (status, body) = call(&router, "/boom").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let envelope: serde_json::Value = serde_json::from_str(&body).expect("envelope");
        assert_eq!(envelope["OPT_STATUS"], "FAIL");
        assert!(
            envelope["DESCRIPTION"]
                .as_str()
                .is_some_and(|d| d.starts_with("internal error")),
            "{envelope}"
        );
        assert!(
            !body.contains("index out of bounds"),
            "no internals: {body}"
        );
        for _ in 0..2 {
            assert_eq!(
                call(&router, "/boom").await.0,
                StatusCode::INTERNAL_SERVER_ERROR
            );
            assert_eq!(call(&router, "/healthz").await.0, StatusCode::OK);
        }
    }
}
