//! The ProfileTracing HTTP client: one POST, cancellable, with a timeout.
//!
//! Transport failures become [`ApiError`]; everything the server said (any status, any body) is
//! returned as text for [`embers_model::decode_response`] to judge, so HTTP and envelope errors
//! are explained in one place.

use std::fmt;

use embers_model::request::ProfileRequest;
use gloo_net::http::Request;
use web_sys::AbortSignal;

/// The path of the operation below the base URL.
pub const PROFILE_TRACING_PATH: &str = "/v1/profile/ProfileTracing";

/// How long a query may run before it is abandoned.
pub const QUERY_TIMEOUT_MS: u32 = 120_000;

/// Why no response arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiError {
    /// The request never got an HTTP answer: service down, wrong URL, or blocked cross-origin.
    Network {
        /// The URL that was called.
        url: String,
        /// The browser's message.
        detail: String,
    },
    /// The user cancelled, or a newer query replaced this one.
    Cancelled,
    /// No answer within [`QUERY_TIMEOUT_MS`].
    TimedOut,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Network { url, detail } => write!(
                f,
                "Could not reach {url} ({detail}). The service may be down or the base URL wrong; \
                 if it is on another origin, the browser blocks the call because DeepFlow's querier \
                 sends no CORS headers: serve Embers from the same origin or use embers-server --upstream."
            ),
            ApiError::Cancelled => f.write_str("The query was cancelled."),
            ApiError::TimedOut => write!(f, "The service did not answer within {} s.", QUERY_TIMEOUT_MS / 1000),
        }
    }
}

/// The full URL of the operation for a base URL (empty = this page's origin).
pub fn endpoint(base_url: &str) -> String {
    format!(
        "{}{}",
        base_url.trim().trim_end_matches('/'),
        PROFILE_TRACING_PATH
    )
}

/// A raw answer: status and body text.
pub struct RawResponse {
    /// HTTP status.
    pub status: u16,
    /// Body bytes as sent (the decoder reads them without a separate UTF-8 pass).
    pub body: Vec<u8>,
}

/// Posts `request` and returns whatever the server answered.
pub async fn post_profile_tracing(
    base_url: &str,
    request: &ProfileRequest,
    signal: &AbortSignal,
) -> Result<RawResponse, ApiError> {
    let url = endpoint(base_url);
    let network = |detail: String| ApiError::Network {
        url: url.clone(),
        detail,
    };
    let pending = Request::post(&url)
        .abort_signal(Some(signal))
        .json(request)
        .map_err(|e| network(e.to_string()))?;
    let response = pending.send().await.map_err(|e| network(e.to_string()))?;
    let status = response.status();
    // Bytes, not `text()`: skips building a JS string of the whole body (tens of MB for big
    // profiles) and encoding it back to UTF-8 for wasm.
    let body = response
        .binary()
        .await
        .map_err(|e| network(format!("reading the body failed: {e}")))?;
    Ok(RawResponse { status, body })
}
