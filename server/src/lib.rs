//! Embers service: stores eBPF profiles in `profile.in_process` (SQLite) and answers DeepFlow's
//! ProfileTracing interface, serving the viewer on the same origin.
//!
//! [`app`] builds the axum router from an [`AppState`]; `main.rs` only parses arguments, sets up
//! logging and serves it.

pub mod api_types;
pub mod cli;
pub mod demo;
pub mod diagnostics;
pub mod error;
pub mod formats;
pub mod host_profile;
pub mod http;
pub mod input;
pub mod limits;
pub mod listen;
pub mod mcp;
pub mod openapi;
pub mod retention;
pub mod store;
pub mod store_args;
pub mod tree;

use std::path::PathBuf;
use std::sync::Arc;

use axum::http::Method;
use axum::response::{IntoResponse, Response};
use axum::routing::delete;
use axum::Router;
use embers_model::contract::shape::ResultShape;
use tower::util::option_layer;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

pub use error::Error;
use http::guard::Guard;
use http::upstream::Upstream;
use http::Route;
use limits::Limiter;
use store::Store;

/// Default body limit of `POST /v1/profile/ingest` (64 MiB).
pub const DEFAULT_INGEST_LIMIT: usize = 64 * 1024 * 1024;
/// Default body limit of `POST /v1/profile/ProfileTracing` and the explore endpoints (256 KiB).
pub const DEFAULT_QUERY_LIMIT: usize = 256 * 1024;
/// Default size limit of a saved snapshot's answer (64 MiB).
pub const DEFAULT_SNAPSHOT_LIMIT: usize = 64 * 1024 * 1024;
/// Default cap of one ingest request's memory budget (1 GiB): what the largest body
/// (`--max-ingest-bytes`) may expand to while it is read; a small body's budget is far less
/// (see [`embers_model::budget`]).
pub const DEFAULT_REQUEST_MEMORY: usize = 1024 * 1024 * 1024;

/// Request body size limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For ingest requests.
    pub ingest: usize,
    /// For query requests.
    pub query: usize,
    /// For the answer a snapshot saves (its body may be [`http::snapshots::BODY_HEADROOM`]
    /// more).
    pub snapshot: usize,
    /// The cap of an ingest request's memory budget (`--max-request-memory`).
    pub request_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingest: DEFAULT_INGEST_LIMIT,
            query: DEFAULT_QUERY_LIMIT,
            snapshot: DEFAULT_SNAPSHOT_LIMIT,
            request_memory: DEFAULT_REQUEST_MEMORY,
        }
    }
}

/// Everything a request handler needs; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The local profile store.
    pub store: Arc<Store>,
    /// Shape of `result` when the request does not ask for one (`--result-shape`).
    pub default_shape: ResultShape,
    /// When set, ProfileTracing requests go to this querier instead of the local store.
    pub upstream: Option<Arc<Upstream>>,
    /// Directory of the built viewer.
    pub static_dir: PathBuf,
    /// Body size limits.
    pub limits: Limits,
    /// Cost limits and the query gate.
    pub limiter: Arc<Limiter>,
    /// Who may use the service and the headers every answer gets.
    pub guard: Arc<Guard>,
    /// This host's collector (`--profile-host`), for `/healthz`.
    pub collector: Option<Arc<host_profile::HostStatus>>,
    /// The write gate: ingest bytes in flight, save and delete turns, snapshot caps.
    pub writes: Arc<limits::writes::WriteGate>,
    /// Whether `"debug": true` is honoured (`--allow-debug`): else it is neither answered
    /// with internal detail nor forwarded upstream.
    pub allow_debug: bool,
}

impl AppState {
    /// A state serving `store` locally with shape B, the `dist` viewer directory, default
    /// limits (body sizes, [`limits::Caps`], [`limits::writes::WriteCaps`]), the default guard
    /// (loopback, same origin, no tokens) and `debug` off.
    pub fn new(store: Arc<Store>) -> AppState {
        AppState {
            store,
            default_shape: ResultShape::B,
            upstream: None,
            static_dir: PathBuf::from("dist"),
            limits: Limits::default(),
            limiter: Arc::new(Limiter::new(limits::Caps::default())),
            guard: Arc::new(Guard::default()),
            collector: None,
            writes: Arc::new(limits::writes::WriteGate::new(Default::default())),
            allow_debug: false,
        }
    }
}

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
        Route::get("/readyz", http::health::ready),
        Route::get("/embers-config.json", http::guard::page::embed_config),
        Route::get("/openapi.json", openapi::handle),
        Route::post(mcp::MCP_PATH, mcp::handle, query),
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
    use axum::body::{to_bytes, Body};
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
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
