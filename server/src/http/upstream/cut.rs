//! The node limit on relayed answers: a querier's successful ProfileTracing answer with more
//! nodes than `--max-answer-nodes` is decoded, cut to its heaviest part exactly as a local
//! answer is (`embers_model::tree::truncate`) and re-encoded in the querier's shape, with
//! `DESCRIPTION` `truncated: N of M nodes`. Anything else is relayed unchanged.

use axum::body::{to_bytes, Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use embers_model::contract::envelope::SUCCESS;
use embers_model::export::encode::encode_result;
use embers_model::tree::truncate::keep_heaviest;
use embers_model::wire::decode_response_table;
use serde::Deserialize;

use crate::error::{envelope_json, json_response};
use crate::Error;

/// Fewest bytes one node takes in either shape (`[0,0,0,0],` in shape B): a smaller body
/// cannot hold more nodes than the limit, so it is relayed without decoding.
const MIN_NODE_BYTES: usize = 10;

/// The request member the re-encoding needs (memory events type their leaves differently).
#[derive(Deserialize, Default)]
struct EventType {
    #[serde(default)]
    profile_event_type: String,
}

/// `response` (the querier's answer to `request`) with its tree cut to `max_nodes`.
pub async fn limit_nodes(response: Response, request: &[u8], max_nodes: usize) -> Response {
    if response.status() != StatusCode::OK {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return Error::bad_gateway(format!("reading the answer failed: {e}")).into_response()
        }
    };
    if bytes.len() < max_nodes.saturating_mul(MIN_NODE_BYTES) {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let event = serde_json::from_slice::<EventType>(request).unwrap_or_default();
    let cut = tokio::task::spawn_blocking(move || {
        let cut = cut_answer(&bytes, &event.profile_event_type, max_nodes);
        (bytes, cut)
    })
    .await;
    match cut {
        Ok((_, Some(text))) => json_response(StatusCode::OK, text),
        Ok((bytes, None)) => Response::from_parts(parts, Body::from(bytes)),
        Err(e) => Error::internal(format!("cutting the answer failed: {e}")).into_response(),
    }
}

/// The cut answer as envelope text; `None` when the answer is not a decodable success or fits.
fn cut_answer(bytes: &Bytes, event_type: &str, max_nodes: usize) -> Option<String> {
    let decoded = decode_response_table(200, bytes).ok()?;
    let shape = decoded.shape?;
    if decoded.table.as_ref().is_none_or(|t| t.len() <= max_nodes) {
        return None;
    }
    let profile = decoded.build().profile;
    let (cut, truncation) = keep_heaviest(&profile, max_nodes)?;
    drop(profile);
    let result = encode_result(Some(&cut), shape, event_type);
    Some(envelope_json(
        SUCCESS,
        &truncation.notice(),
        result,
        serde_json::Value::Null,
    ))
}
