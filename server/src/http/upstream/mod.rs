//! `--upstream URL`: answer from a real DeepFlow querier instead of the local store.
//!
//! ProfileTracing requests are read and checked by the contract (a bad one is a 400 here, by
//! the same rules as without `--upstream`), their fields the querier pastes into SQL checked
//! again ([`fields`]), and forwarded re-serialised from the checked request, with the
//! `tag_filter` rendered again from its parsed conditions ([`statements::render_filter`]) and
//! `debug` only with `--allow-debug`; the querier's answer (status and body) is relayed
//! unchanged, except that without `--allow-debug` a failure's `debug` member (the querier's
//! statements) is left out. The explore endpoints are answered from the querier's SQL API
//! ([`sql_api`], [`explore`]) with fixed statements; the functions endpoint from the
//! ProfileTracing answers of the range's busiest services ([`functions`]).
//!
//! Every exchange is bounded ([`options`]): answers by size ([`relay`]: big ProfileTracing
//! answers are streamed, not held), connections and silences by time; redirects are not
//! followed; `X-Org-Id` is sent only as configured.

mod explore;
pub mod fields;
mod functions;
pub mod options;
mod relay;
pub mod sql_api;
pub mod statements;

use std::sync::Mutex;
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{header, HeaderMap};
use axum::response::Response;

use embers_model::contract::body::parse_tracing_body;
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::shape::ResultShape;
use serde::Serialize;

use crate::error::Error;
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

    /// The largest answer read from the querier (`--upstream-max-bytes`).
    pub fn max_bytes(&self) -> u64 {
        self.options.max_bytes
    }

    /// The full ProfileTracing URL upstream.
    pub fn url(&self) -> String {
        format!("{}/v1/profile/ProfileTracing", self.base)
    }

    /// Forward the checked request (as JSON, with the configured `X-Org-Id`; no header of the
    /// client's is passed on) and relay status, content type and body; `debug` goes with it and
    /// comes back only when `allow_debug` (`--allow-debug`).
    pub async fn forward(
        &self,
        headers: &HeaderMap,
        body: Bytes,
        allow_debug: bool,
    ) -> Result<Response, Error> {
        let body = canonical_body(&body, allow_debug)?;
        let org = self.options.org(headers)?;
        let url = self.url();
        // The body is the one written here, so its type is too.
        let mut request = self
            .client
            .post(&url)
            .header(header::CONTENT_TYPE, "application/json")
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
        self.relay(&url, answer, allow_debug).await
    }
}

/// What is forwarded: the request as the contract read and checked it, its `tag_filter`
/// rendered again from the parsed conditions in the querier's SQL, and `debug` (a DeepFlow
/// member) when allowed. Members the contract does not know are dropped; `result_shape` is
/// Embers' own.
#[derive(Serialize)]
struct Forwarded<'a> {
    #[serde(flatten)]
    request: &'a ProfileRequest,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    debug: bool,
}

/// The body to forward, re-serialised from the validated request (400 naming the field that
/// cannot be sent).
fn canonical_body(body: &[u8], allow_debug: bool) -> Result<Bytes, Error> {
    let read = parse_tracing_body(body).map_err(|e| Error::invalid(e.0))?;
    if read.window.is_some() {
        // The querier reads whole seconds: forwarding without the bounds would answer more
        // than was asked, silently.
        return Err(Error::invalid(
            "time_start_ms/time_end_ms cannot be sent to a DeepFlow querier (--upstream): it \
             answers whole seconds; leave them out or ask this service's own store",
        ));
    }
    let mut request = read.request;
    fields::check_request(&request)?;
    request.tag_filter =
        statements::render_filter(&read.filter).map_err(|e| Error::invalid(e.to_string()))?;
    serde_json::to_vec(&Forwarded {
        request: &request,
        debug: read.debug && allow_debug,
    })
    .map(Bytes::from)
    .map_err(|e| Error::internal(format!("cannot re-encode the request: {e}")))
}
