//! `--upstream URL`: answer from a real DeepFlow querier instead of the local store.
//!
//! ProfileTracing requests are forwarded and the querier's answer (status and body) relayed
//! unchanged, except that the client's `tag_filter`, which the querier pastes into SQL, is
//! parsed by the contract first (a bad one is a 400 here) and replaced by its canonical rendering
//! ([`statements::render_filter`]). The explore endpoints are answered from the querier's SQL API
//! ([`sql_api`], [`explore`]) with fixed statements.
//!
//! Every exchange is bounded ([`options`]): answers by size ([`relay`]: big ProfileTracing
//! answers are streamed, not held), connections and silences by time; redirects are not
//! followed; `X-Org-Id` is sent only as configured.

mod explore;
pub mod options;
mod relay;
pub mod sql_api;
pub mod statements;

use std::sync::Mutex;
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

use embers_model::contract::body::{Members, RequestError};
use embers_model::contract::shape::ResultShape;

use crate::Error;
pub use explore::UpstreamExploreError;
pub use options::{Org, UpstreamArgs, UpstreamOptions};

/// The organisation header DeepFlow uses to pick a database.
pub const ORG_HEADER: &str = "x-org-id";

/// A configured upstream querier.
#[derive(Debug)]
pub struct Upstream {
    base: String,
    client: reqwest::Client,
    options: UpstreamOptions,
    /// When the querier last said it has no `in_process_metrics`.
    metrics_missing: Mutex<Option<Instant>>,
}

/// A 502 about the querier's answer, with the empty shape-B tree a querier answers on failure.
fn gateway(description: String) -> Error {
    Error::bad_gateway(description).with_shape(ResultShape::B)
}

impl Upstream {
    /// An upstream at `base` with the default [`UpstreamOptions`].
    pub fn new(base: &str) -> Result<Upstream, String> {
        Upstream::with_options(base, UpstreamOptions::default())
    }

    /// An upstream at `base` (e.g. `http://deepflow-server:20416`); only plain HTTP is supported.
    pub fn with_options(base: &str, options: UpstreamOptions) -> Result<Upstream, String> {
        let base = base.trim().trim_end_matches('/').to_owned();
        if !base.starts_with("http://") {
            return Err(format!(
                "--upstream must be an http:// URL (this build has no TLS), got '{base}'"
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Upstream {
            base,
            client,
            options,
            metrics_missing: Mutex::new(None),
        })
    }

    /// The full ProfileTracing URL upstream.
    pub fn url(&self) -> String {
        format!("{}/v1/profile/ProfileTracing", self.base)
    }

    /// Forward the body (with `Content-Type` and the configured `X-Org-Id`) and relay
    /// status, content type and body.
    pub async fn forward(&self, headers: &HeaderMap, body: Bytes) -> Response {
        match self.try_forward(headers, body).await {
            Ok(response) => response,
            Err(e) => e.into_response(),
        }
    }

    async fn try_forward(&self, headers: &HeaderMap, body: Bytes) -> Result<Response, Error> {
        let body = canonical_body(body).map_err(|e| Error::invalid(e.0))?;
        let org = self.options.org(headers)?;
        let url = self.url();
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("application/json"));
        let mut request = self
            .client
            .post(&url)
            .header(header::CONTENT_TYPE, content_type)
            .body(body);
        if let Some(org) = org.header() {
            request = request.header(ORG_HEADER, org.clone());
        }
        let answer = request
            .send()
            .await
            .map_err(|e| Error::upstream(&url, self.describe(&e)))?;
        if let Some(description) = self.redirected(&url, &answer) {
            return Err(gateway(description));
        }
        self.relay(&url, answer).await
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
