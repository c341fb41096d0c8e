//! `--upstream URL`: forward ProfileTracing requests to a real DeepFlow querier and relay its
//! answer (status and body) unchanged.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::Error;

/// The organisation header DeepFlow uses to pick a database.
pub const ORG_HEADER: &str = "x-org-id";
/// Longest wait for an upstream answer (the querier's own ClickHouse limit is 60 s).
const TIMEOUT: Duration = Duration::from_secs(120);

/// A configured upstream querier.
#[derive(Debug)]
pub struct Upstream {
    base: String,
    client: reqwest::Client,
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
        Ok(Upstream { base, client })
    }

    /// The full ProfileTracing URL upstream.
    pub fn url(&self) -> String {
        format!("{}/v1/profile/ProfileTracing", self.base)
    }

    /// Forward the body (and `Content-Type`, `X-Org-Id`) and relay status, content type and body.
    pub async fn forward(&self, headers: &HeaderMap, body: Bytes) -> Response {
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
