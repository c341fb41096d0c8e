//! The explore endpoints (services, timeline, tags, tag values, functions, a function's
//! timeline): small JSON answers, decoded
//! on the page with the contract's answer types. Profiles go through [`super::decode_worker`].

use embers_model::contract::envelope::{Incoming, Table, SUCCESS};
use embers_model::contract::explore::{
    FunctionTimelineAnswer, FunctionTimelineRequest, FunctionsAnswer, FunctionsRequest, ServiceRow,
    ServicesRequest, TagValuesRequest, TagsRequest, TimelineAnswer, TimelineRequest, ValueCount,
};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::snapshot::{SnapshotMeta, SNAPSHOTS_PATH};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use web_sys::AbortController;

use crate::net::http::{
    endpoint, get_body, post_json, post_parts, send_empty, ApiError, RawResponse,
};

/// Why an explore call gave no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiFailure {
    /// No HTTP answer.
    #[error(transparent)]
    Network(#[from] ApiError),
    /// The service said no.
    #[error("The service answered HTTP {status}{}: {description}", opt(.opt_status))]
    Service {
        /// HTTP status.
        status: u16,
        /// `OPT_STATUS`, when the body was an envelope.
        opt_status: Option<String>,
        /// `DESCRIPTION`, or the start of the body.
        description: String,
    },
    /// An answer that is not what the endpoint sends (e.g. an older service without it).
    #[error("The service's answer could not be read ({0}); is it an Embers service?")]
    BadAnswer(String),
}

impl ApiFailure {
    /// Whether the service has no such endpoint (404, 405): a bare DeepFlow querier, or a
    /// static server, in front of which the page was deployed without the Embers service.
    pub fn is_missing_endpoint(&self) -> bool {
        matches!(
            self,
            ApiFailure::Service {
                status: 404 | 405,
                ..
            }
        )
    }
}

fn opt(opt_status: &Option<String>) -> String {
    opt_status
        .as_ref()
        .map_or_else(String::new, |s| format!(" {s}"))
}

/// Posts `request` to `path` and decodes the envelope's `result`.
pub async fn call<Req: Serialize, Res: DeserializeOwned>(
    base_url: &str,
    path: &str,
    request: &Req,
) -> Result<Res, ApiFailure> {
    let url = endpoint(base_url, path);
    let body = serde_json::value::to_raw_value(request).map_err(|e| ApiError::Network {
        url: url.clone(),
        detail: e.to_string(),
    })?;
    read_envelope(post_raw(&url, &body).await?)
}

/// Not generic, so the request's future (the fetch, the body's stream) is one copy in the
/// wasm for every endpoint rather than one per request and answer type.
async fn post_raw(url: &str, body: &RawValue) -> Result<RawResponse, ApiFailure> {
    let controller = AbortController::new().map_err(|_| ApiError::Cancelled)?;
    Ok(post_json(url, &body, &controller.signal(), |_, _| {}).await?)
}

/// The `result` of an envelope answer, or why there is none.
fn read_envelope<Res: DeserializeOwned>(raw: RawResponse) -> Result<Res, ApiFailure> {
    let result = envelope_result(raw)?;
    serde_json::from_slice(result.get().as_bytes())
        .map_err(|e| ApiFailure::BadAnswer(e.to_string()))
}

/// The envelope's checks, once for every answer type: the `result` is kept as raw JSON and
/// only read as its type by the caller, so the page does not carry a copy of the envelope's
/// reading and its failures per answer type (six of them).
fn envelope_result(raw: RawResponse) -> Result<Box<RawValue>, ApiFailure> {
    let bytes = raw.body.to_vec();
    let envelope = serde_json::from_slice::<Incoming<Box<RawValue>>>(&bytes);
    match envelope {
        Ok(e) if raw.status == 200 && e.opt_status.as_deref() == Some(SUCCESS) => e
            .result
            .ok_or_else(|| ApiFailure::BadAnswer("it has no result".into())),
        Ok(e) => Err(ApiFailure::Service {
            status: raw.status,
            opt_status: e.opt_status,
            description: e.description.unwrap_or_default(),
        }),
        Err(_) if raw.status != 200 => Err(ApiFailure::Service {
            status: raw.status,
            opt_status: None,
            description: String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
        }),
        Err(e) => Err(ApiFailure::BadAnswer(e.to_string())),
    }
}

/// GETs `path` (with its query) and decodes the envelope's `result`.
pub async fn get<Res: DeserializeOwned>(base_url: &str, path: &str) -> Result<Res, ApiFailure> {
    let controller = AbortController::new().map_err(|_| ApiError::Cancelled)?;
    let url = endpoint(base_url, path);
    read_envelope(get_body(&url, &controller.signal(), |_, _| {}).await?)
}

/// Every service in a range, busiest first.
pub async fn services(base: &str, req: &ServicesRequest) -> Result<Table<ServiceRow>, ApiFailure> {
    call(base, "/v1/profile/services", req).await
}

/// A selection's values over time.
pub async fn timeline(base: &str, req: &TimelineRequest) -> Result<TimelineAnswer, ApiFailure> {
    call(base, "/v1/profile/timeline", req).await
}

/// The hottest functions of a range (or what grew against a baseline).
pub async fn functions(base: &str, req: &FunctionsRequest) -> Result<FunctionsAnswer, ApiFailure> {
    call(base, "/v1/profile/functions", req).await
}

/// One function's self and total over time.
pub async fn function_timeline(
    base: &str,
    req: &FunctionTimelineRequest,
) -> Result<FunctionTimelineAnswer, ApiFailure> {
    call(base, "/v1/profile/function_timeline", req).await
}

/// Tag names present in a range.
pub async fn tags(base: &str, req: &TagsRequest) -> Result<Table<ValueCount>, ApiFailure> {
    call(base, "/v1/profile/tags", req).await
}

/// Values of one tag in a range.
pub async fn tag_values(
    base: &str,
    req: &TagValuesRequest,
) -> Result<Table<ValueCount>, ApiFailure> {
    call(base, "/v1/profile/tag_values", req).await
}

/// The saved snapshots, newest first.
pub async fn snapshots(base: &str) -> Result<Vec<SnapshotMeta>, ApiFailure> {
    get(base, SNAPSHOTS_PATH).await
}

/// Saves an answer as a snapshot: `{"request": ..., "response": <the body as received>}`.
pub async fn save_snapshot(
    base: &str,
    request: &ProfileRequest,
    body: &[js_sys::Uint8Array],
) -> Result<SnapshotMeta, ApiFailure> {
    let head = format!(
        r#"{{"request":{},"response":"#,
        serde_json::to_string(request).map_err(|e| ApiFailure::BadAnswer(e.to_string()))?
    );
    let parts = js_sys::Array::new();
    parts.push(&head.into());
    for chunk in body {
        parts.push(chunk);
    }
    parts.push(&"}".into());
    let url = endpoint(base, SNAPSHOTS_PATH);
    read_envelope(post_parts(&url, &parts).await?)
}

/// Deletes a snapshot.
pub async fn delete_snapshot(base: &str, id: &str) -> Result<(), ApiFailure> {
    let url = endpoint(base, &format!("{SNAPSHOTS_PATH}/{id}"));
    let raw = send_empty(gloo_net::http::Method::DELETE, &url).await?;
    envelope_result(raw).map(|_| ())
}
