//! HTTP handlers, one module per endpoint (or family), each returning `Result<Response, Error>`
//! where its answers are the ProfileTracing envelope (a failure is [`Error`]'s envelope); the
//! routes that speak another protocol answer their failures in its form themselves (`push`:
//! Connect's JSON, `otlp`: `google.rpc.Status`), `pprof` answers gzipped pprof and
//! `static_files` the viewer. Also here: [`Route`] (what `crate::router` builds the router
//! from), the handlers' [`state::AppState`], the write gate's body extractors (`bodies`) and
//! the guard in front of them all ([`guard`]).

pub mod alerts;
mod bodies;
pub mod connect;
pub mod embedded;
pub mod explore;
pub mod fine;
pub mod guard;
pub mod health;
pub mod ingest;
pub mod otlp;
pub mod pprof;
pub mod processes;
pub mod profile_tracing;
pub mod push;
pub mod pyroscope;
pub mod snapshots;
pub mod source;
pub mod state;
pub mod static_files;
pub mod upstream;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post, MethodRouter};

use embers_model::contract::envelope::FAIL;

use crate::error::envelope;
use crate::error::Error;
use state::AppState;

/// One route of the service: its path, the methods it answers (any other gets a 405 envelope)
/// and their handlers. The router is built from the list of them ([`crate::router::route_list`]), and
/// the OpenAPI test checks every (method, path) of that list is in the document.
pub struct Route {
    /// The path in axum's form, which is OpenAPI's too (`/v1/profile/snapshots/{id}`).
    pub path: &'static str,
    /// The methods it answers.
    pub methods: &'static [Method],
    /// The handlers.
    pub router: MethodRouter<AppState>,
}

impl Route {
    /// A POST-only API route with a body limit of `limit` bytes.
    pub fn post<H, T>(path: &'static str, handler: H, limit: usize) -> Route
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let router = post(handler)
            .fallback(method_not_allowed)
            .layer(DefaultBodyLimit::max(limit));
        Route::new(path, &[Method::POST], router)
    }

    /// A GET route (HEAD too); other methods get a 405 envelope.
    pub fn get<H, T>(path: &'static str, handler: H) -> Route
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let router = get(handler).fallback(|method: Method, uri: Uri| async move {
            not_allowed(&method, &uri, &["GET"])
        });
        Route::new(path, &[Method::GET], router)
    }

    /// A route answering `methods` with `router` (which must answer exactly those).
    pub fn new(
        path: &'static str,
        methods: &'static [Method],
        router: MethodRouter<AppState>,
    ) -> Route {
        Route {
            path,
            methods,
            router,
        }
    }
}

/// Turn a body-reading failure into the envelope: 413 when over `limit`, else 400.
pub fn read_body(body: Result<Bytes, BytesRejection>, limit: usize) -> Result<Bytes, Error> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Error::too_large(limit)
        } else {
            Error::invalid(format!(
                "could not read the request body: {}",
                rejection.body_text()
            ))
        }
    })
}

/// 405 with the envelope for a wrong method on a POST-only API path.
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    not_allowed(&method, &uri, &["POST"])
}

/// 405 with the envelope and an `Allow` header listing `allowed`.
pub fn not_allowed(method: &Method, uri: &Uri, allowed: &[&str]) -> Response {
    let mut response = envelope(
        StatusCode::METHOD_NOT_ALLOWED,
        FAIL,
        &format!(
            "{method} is not allowed on {}; use {}",
            uri.path(),
            allowed.join(" or ")
        ),
        serde_json::Value::Null,
        serde_json::Value::Null,
    );
    if let Ok(allow) = HeaderValue::from_str(&allowed.join(", ")) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}
