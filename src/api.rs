//! The ProfileTracing HTTP client: one POST, cancellable, with a timeout.
//!
//! Transport failures become [`ApiError`]; everything the server said (any status, any body) is
//! returned as text for [`embers_model::decode_response`] to judge, so HTTP and envelope errors
//! are explained in one place.

use std::fmt;

use embers_model::request::ProfileRequest;
use gloo_net::http::{Request, Response};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, ReadableStreamReadResult};

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

/// Posts `request` and returns whatever the server answered. `progress(received, expected)`
/// is called as the body arrives (`expected` from `Content-Length`, when sent).
pub async fn post_profile_tracing(
    base_url: &str,
    request: &ProfileRequest,
    signal: &AbortSignal,
    progress: impl FnMut(usize, Option<usize>),
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
    let body = read_body(&response, progress)
        .await
        .map_err(|e| network(format!("reading the body failed: {e}")))?;
    Ok(RawResponse { status, body })
}

/// Most bytes reserved up front from a `Content-Length` (a lying header must not make us
/// allocate gigabytes before a byte arrives).
const MAX_PREALLOC_BYTES: usize = 512 << 20;

/// Reads the body into wasm memory chunk by chunk as it arrives: bytes, not `text()` (no JS
/// string of tens of MB to build and encode back), copied once, with progress.
async fn read_body(
    response: &Response,
    mut progress: impl FnMut(usize, Option<usize>),
) -> Result<Vec<u8>, String> {
    let Some(stream) = response.body() else {
        return Ok(Vec::new());
    };
    let expected = response
        .headers()
        .get("content-length")
        .and_then(|v| v.trim().parse::<usize>().ok());
    let reader = ReadableStreamDefaultReader::new(&stream).map_err(js_error)?;
    let mut body = Vec::with_capacity(expected.unwrap_or(0).min(MAX_PREALLOC_BYTES));
    loop {
        let result: ReadableStreamReadResult = JsFuture::from(reader.read())
            .await
            .map_err(js_error)?
            .unchecked_into();
        if result.get_done().unwrap_or(true) {
            break;
        }
        let chunk = Uint8Array::new(&result.get_value());
        let start = body.len();
        body.resize(start + chunk.length() as usize, 0);
        chunk.copy_to(&mut body[start..]);
        progress(body.len(), expected);
    }
    Ok(body)
}

/// A JS exception's message (or its string form).
fn js_error(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
