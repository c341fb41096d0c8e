//! The tools ask the service's own API, in process: each call goes through the same router
//! the HTTP endpoints use (body parsing, limits, the store or the upstream querier, the
//! envelope), minus the guard, which the MCP request itself passed. A failure's `DESCRIPTION`
//! is what the assistant is told.

use axum::body::{to_bytes, Body};
use axum::http::{header, Method, Request};
use axum::Router;
use embers_model::contract::envelope::Incoming;
use embers_model::Profile;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tower::ServiceExt;

use super::error::ToolError;

/// Largest answer read (an answer is bounded by --max-answer-nodes long before this).
const MAX_ANSWER_BYTES: usize = 1 << 30;

/// The service's API, called in process.
#[derive(Clone, Debug)]
pub struct Api {
    router: Router,
}

impl Api {
    /// Calls go to `router` (the service's routes with its state, without the guard).
    pub fn new(router: Router) -> Api {
        Api { router }
    }

    /// `POST path` with `body` as JSON; the answer's text.
    pub async fn post(&self, path: &str, body: &impl Serialize) -> Result<String, ToolError> {
        let json = serde_json::to_vec(body)
            .map_err(|e| ToolError::Answer(format!("cannot write the request: {e}")))?;
        let request = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(json));
        self.send(path, request).await
    }

    /// `GET path`; the answer's text.
    pub async fn get(&self, path: &str) -> Result<String, ToolError> {
        let request = Request::builder().uri(path).body(Body::empty());
        self.send(path, request).await
    }

    async fn send(
        &self,
        path: &str,
        request: Result<Request<Body>, axum::http::Error>,
    ) -> Result<String, ToolError> {
        let request = request
            .map_err(|e| ToolError::Answer(format!("{path}: cannot build the request: {e}")))?;
        let Ok(response) = self.router.clone().oneshot(request).await;
        let status = response.status();
        let bytes = to_bytes(response.into_body(), MAX_ANSWER_BYTES)
            .await
            .map_err(|e| ToolError::Answer(format!("{path}: cannot read the answer: {e}")))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if status.is_success() {
            return Ok(text);
        }
        let envelope: Option<Incoming<serde_json::Value>> = serde_json::from_str(&text).ok();
        let description = envelope
            .and_then(|e| e.description)
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| text.chars().take(300).collect());
        Err(ToolError::Refused {
            description,
            status,
        })
    }
}

/// The `result` of an envelope answer, read as `T`.
pub fn result<T: DeserializeOwned>(text: &str) -> Result<T, ToolError> {
    let envelope: Incoming<T> = serde_json::from_str(text)
        .map_err(|e| ToolError::Answer(format!("unexpected answer: {e}")))?;
    envelope
        .result
        .ok_or_else(|| ToolError::Answer("the answer has no result".to_owned()))
}

/// A ProfileTracing answer (or a stored snapshot) as a profile, decoded off the async threads.
pub async fn profile(text: String) -> Result<Profile, ToolError> {
    let decoded = crate::blocking::run("decoding", move || {
        embers_model::decode_response(200, &text)
    })
    .await?;
    decoded
        .map(|d| d.profile)
        .map_err(|e| ToolError::Answer(format!("the answer is not a profile: {e}")))
}
