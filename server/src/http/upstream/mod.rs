//! `--upstream URL`: answer from a real DeepFlow querier instead of the local store.
//!
//! ProfileTracing requests are forwarded and the querier's answer (status and body) relayed
//! unchanged, except that the client's `tag_filter`, which the querier pastes into SQL, is
//! parsed by the contract first (a bad one is a 400 here) and replaced by its canonical rendering
//! ([`statements::render_filter`]). The explore endpoints are answered from the querier's SQL API
//! ([`sql_api`], [`explore`]) with fixed statements.

pub mod cut;
mod explore;
pub mod sql_api;
pub mod statements;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use embers_model::contract::body::{Members, RequestError};

use crate::Error;
pub use explore::UpstreamExploreError;

/// The organisation header DeepFlow uses to pick a database.
pub const ORG_HEADER: &str = "x-org-id";
/// Longest wait for an upstream answer (the querier's own ClickHouse limit is 60 s).
const TIMEOUT: Duration = Duration::from_secs(120);

/// A configured upstream querier.
#[derive(Debug)]
pub struct Upstream {
    base: String,
    client: reqwest::Client,
    /// When the querier last said it has no `in_process_metrics`.
    metrics_missing: Mutex<Option<Instant>>,
}

impl Upstream {
    /// An upstream at `base` (e.g. `http://deepflow-server:20416`); only plain HTTP is supported.
    pub fn new(base: &str) -> Result<Upstream, String> {
        let base = base.trim().trim_end_matches('/').to_owned();
        if !base.starts_with("http://") {
            return Err(format!(
                "--upstream must be an http:// URL (this build has no TLS), got '{base}'"
            ));
        }
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Upstream {
            base,
            client,
            metrics_missing: Mutex::new(None),
        })
    }

    /// The full ProfileTracing URL upstream.
    pub fn url(&self) -> String {
        format!("{}/v1/profile/ProfileTracing", self.base)
    }

    /// Forward the body (and `Content-Type`, `X-Org-Id`) and relay status, content type and body.
    pub async fn forward(&self, headers: &HeaderMap, body: Bytes) -> Response {
        let body = match canonical_body(body) {
            Ok(body) => body,
            Err(e) => return Error::invalid(e.0).into_response(),
        };
        let url = self.url();
        let mut request = self.client.post(&url).body(body);
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("application/json"));
        request = request.header(header::CONTENT_TYPE, content_type);
        if let Some(org) = headers.get(HeaderName::from_static(ORG_HEADER)) {
            request = request.header(ORG_HEADER, org.clone());
        }
        let answer = match request.send().await {
            Ok(answer) => answer,
            Err(e) => return Error::upstream(&url, e).into_response(),
        };
        let status =
            StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
        match answer.bytes().await {
            Ok(bytes) => {
                let mut response = (status, bytes).into_response();
                if let Some(ct) = content_type {
                    response.headers_mut().insert(header::CONTENT_TYPE, ct);
                }
                response
            }
            Err(e) => {
                Error::upstream(&url, format!("reading the answer failed: {e}")).into_response()
            }
        }
    }
}

/// The body with its `tag_filter` parsed and rendered again; unchanged when it has none.
fn canonical_body(body: Bytes) -> Result<Bytes, RequestError> {
    let members = Members::parse(&body)?;
    let (text, filter) = members.tag_filter()?;
    if text.is_empty() {
        return Ok(body);
    }
    let canonical = statements::render_filter(&filter).map_err(|e| RequestError(e.to_string()))?;
    let mut value: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| RequestError(format!("request body is not valid JSON: {e}")))?;
    if let Some(object) = value.as_object_mut() {
        object.insert("tag_filter".to_owned(), canonical.into());
    }
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| RequestError(format!("cannot re-encode the request: {e}")))
}
