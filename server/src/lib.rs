//! Embers service: stores eBPF profiles in `profile.in_process` (SQLite) and answers DeepFlow's
//! ProfileTracing interface, serving the viewer on the same origin.
//!
//! [`app`] builds the axum router from an [`AppState`]; `main.rs` only parses arguments, sets up
//! logging and serves it.

pub mod cli;
pub mod demo;
pub mod error;
pub mod http;
pub mod input;
pub mod limits;
pub mod store;
pub mod tree;

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use embers_model::contract::shape::ResultShape;
use tower_http::trace::TraceLayer;

pub use error::Error;
use http::upstream::Upstream;
use limits::Limiter;
use store::Store;

/// Default body limit of `POST /v1/profile/ingest` (64 MiB).
pub const DEFAULT_INGEST_LIMIT: usize = 64 * 1024 * 1024;
/// Default body limit of `POST /v1/profile/ProfileTracing` and the explore endpoints (256 KiB).
pub const DEFAULT_QUERY_LIMIT: usize = 256 * 1024;

/// Request body size limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For ingest requests.
    pub ingest: usize,
    /// For query requests.
    pub query: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingest: DEFAULT_INGEST_LIMIT,
            query: DEFAULT_QUERY_LIMIT,
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
}

impl AppState {
    /// A state serving `store` locally with shape B, the `dist` viewer directory and default
    /// limits (body sizes and [`limits::Caps`]).
    pub fn new(store: Arc<Store>) -> AppState {
        AppState {
            store,
            default_shape: ResultShape::B,
            upstream: None,
            static_dir: PathBuf::from("dist"),
            limits: Limits::default(),
            limiter: Arc::new(Limiter::new(limits::Caps::default())),
        }
    }
}

/// A POST-only API route with a body limit; other methods get a 405 envelope.
fn api<H, T>(handler: H, limit: usize) -> MethodRouter<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    post(handler)
        .fallback(http::method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
}

/// The service's router: the API under `/v1/profile/`, `/healthz`, and the viewer at `/`.
pub fn app(state: AppState) -> Router {
    let Limits { ingest, query } = state.limits;
    Router::new()
        .route(
            "/v1/profile/ProfileTracing",
            api(http::profile_tracing::handle, query),
        )
        .route("/v1/profile/services", api(http::explore::services, query))
        .route("/v1/profile/timeline", api(http::explore::timeline, query))
        .route("/v1/profile/tags", api(http::explore::tags, query))
        .route(
            "/v1/profile/tag_values",
            api(http::explore::tag_values, query),
        )
        .route("/v1/profile/ingest", api(http::ingest::handle, ingest))
        .route("/healthz", get(http::health::handle))
        .fallback(http::static_files::handle)
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}
