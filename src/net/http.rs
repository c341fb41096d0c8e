//! The HTTP client: JSON POSTs to the service, cancellable, with the body streamed back.
//!
//! Transport failures become [`ApiError`]; everything the server said (any status, any body) is
//! returned as bytes for the decoders to judge, so HTTP and envelope errors are explained in one
//! place ([`embers_model::DecodeError`] for profiles).

use gloo_net::http::{Method, Request, RequestBuilder, Response};
use js_sys::Uint8Array;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, ReadableStreamReadResult};

/// The path of the operation below the base URL.
pub const PROFILE_TRACING_PATH: &str = "/v1/profile/ProfileTracing";

/// How long a query may run before it is abandoned.
pub const QUERY_TIMEOUT_MS: u32 = 120_000;

/// Why no response arrived.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The request never got an HTTP answer: service down, wrong URL, or blocked cross-origin.
    #[error(
        "Could not reach {url} ({detail}). The service may be down or the base URL wrong; \
         if it is on another origin, the browser blocks the call because DeepFlow's querier \
         sends no CORS headers: serve Embers from the same origin or use embers-server --upstream."
    )]
    Network {
        /// The URL that was called.
        url: String,
        /// The browser's message.
        detail: String,
    },
    /// The user cancelled, or a newer query replaced this one.
    #[error("The query was cancelled.")]
    Cancelled,
    /// No answer within [`QUERY_TIMEOUT_MS`].
    #[error("The service did not answer within {} s.", QUERY_TIMEOUT_MS / 1000)]
    TimedOut,
}

/// The full URL of an API path for a base URL (empty = this page's origin).
pub fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}{path}", base_url.trim().trim_end_matches('/'))
}

/// A raw answer: status and body.
pub struct RawResponse {
    /// HTTP status.
    pub status: u16,
    /// Body bytes as sent.
    pub body: Body,
}

/// Posts `body` as JSON to `url` and returns whatever the server answered.
/// `progress(received, expected)` is called as the body arrives (`expected` from
/// `Content-Length`, when sent).
pub async fn post_json(
    url: &str,
    body: &impl Serialize,
    signal: &AbortSignal,
    progress: impl FnMut(usize, Option<usize>),
) -> Result<RawResponse, ApiError> {
    let request = Request::post(url).abort_signal(Some(signal)).json(body);
    send(url, request.map_err(|e| e.to_string()), progress).await
}

/// GETs `url` and returns whatever the server answered (as [`post_json`] does).
pub async fn get_body(
    url: &str,
    signal: &AbortSignal,
    progress: impl FnMut(usize, Option<usize>),
) -> Result<RawResponse, ApiError> {
    let request = Request::get(url).abort_signal(Some(signal)).build();
    send(url, request.map_err(|e| e.to_string()), progress).await
}

/// Sends `method` to `url` without a body (a `DELETE`, say).
pub async fn send_empty(method: Method, url: &str) -> Result<RawResponse, ApiError> {
    let request = RequestBuilder::new(url).method(method).build();
    send(url, request.map_err(|e| e.to_string()), |_, _| {}).await
}

/// Posts a JSON body assembled from `parts` (strings and byte arrays, in order) without
/// copying the byte arrays into one buffer first: how a saved answer of tens of megabytes is
/// sent back to the service.
pub async fn post_parts(url: &str, parts: &js_sys::Array) -> Result<RawResponse, ApiError> {
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type("application/json");
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(parts, &bag).map_err(|e| {
        ApiError::Network {
            url: url.to_string(),
            detail: js_error(&e),
        }
    })?;
    let request = Request::post(url)
        .header("Content-Type", "application/json")
        .body(blob);
    send(url, request.map_err(|e| e.to_string()), |_, _| {}).await
}

async fn send(
    url: &str,
    request: Result<Request, String>,
    progress: impl FnMut(usize, Option<usize>),
) -> Result<RawResponse, ApiError> {
    let network = |detail: String| ApiError::Network {
        url: url.to_string(),
        detail,
    };
    let request = request.map_err(network)?;
    if let Some(authorization) = super::auth::authorization_for(url) {
        request.headers().set("Authorization", &authorization);
    }
    let response = request.send().await.map_err(|e| network(e.to_string()))?;
    let status = response.status();
    let body = read_body(&response, progress)
        .await
        .map_err(|e| network(format!("reading the body failed: {e}")))?;
    Ok(RawResponse { status, body })
}

/// A response body as it arrived: the stream's chunks, still JS buffers (so they can be moved
/// to the decode worker without a copy).
#[derive(Clone, Debug, Default)]
pub struct Body {
    /// The chunks, in order.
    pub chunks: Vec<Uint8Array>,
    /// Total bytes.
    pub len: usize,
}

impl Body {
    /// The body's bytes in one buffer (for small answers decoded on the page).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len];
        let mut at = 0;
        for chunk in &self.chunks {
            let n = chunk.length() as usize;
            if let Some(dst) = out.get_mut(at..at + n) {
                chunk.copy_to(dst);
            }
            at += n;
        }
        out
    }

    /// A body from bytes already in memory (imports, tests).
    pub fn from_bytes(bytes: &[u8]) -> Body {
        Body {
            chunks: vec![Uint8Array::from(bytes)],
            len: bytes.len(),
        }
    }
}

/// Reads the body chunk by chunk as it arrives: bytes, not `text()` (no JS string of tens of
/// MB to build and encode back), with progress.
async fn read_body(
    response: &Response,
    mut progress: impl FnMut(usize, Option<usize>),
) -> Result<Body, String> {
    let Some(stream) = response.body() else {
        return Ok(Body::default());
    };
    let expected = response
        .headers()
        .get("content-length")
        .and_then(|v| v.trim().parse::<usize>().ok());
    let reader = ReadableStreamDefaultReader::new(&stream).map_err(|e| js_error(&e))?;
    let mut body = Body::default();
    loop {
        let result: ReadableStreamReadResult = JsFuture::from(reader.read())
            .await
            .map_err(|e| js_error(&e))?
            .unchecked_into();
        if result.get_done().unwrap_or(true) {
            break;
        }
        let chunk: Uint8Array = result
            .get_value()
            .dyn_into()
            .map_err(|_| "the body stream gave something other than bytes".to_string())?;
        body.len += chunk.length() as usize;
        body.chunks.push(chunk);
        progress(body.len, expected);
    }
    Ok(body)
}

/// A JS exception's message (or its string form).
pub(crate) fn js_error(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
