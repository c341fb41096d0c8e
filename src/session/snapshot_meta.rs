//! Saved snapshots: listing them, saving the answer shown as one, and reading what one is (its
//! request and name) from the front of its body: the service answers
//! `GET /v1/profile/snapshots/{id}` with the stored ProfileTracing response and a `"snapshot"`
//! member spliced in first, so the decoders read the rest as any answer.

use embers_model::contract::request::ProfileRequest;
use embers_model::contract::snapshot::SnapshotMeta;
use serde::Deserialize;

use crate::net::api::{self, ApiFailure};
use crate::net::http::Body;

/// The saved snapshots, newest first (none when the service could not say).
pub async fn saved_snapshots(base: &str) -> Vec<SnapshotMeta> {
    api::snapshots(base).await.unwrap_or_default()
}

/// Saves an answer (its body's bytes as received, and its request) as a snapshot.
pub async fn save_snapshot(
    base: &str,
    request: &ProfileRequest,
    body: &[js_sys::Uint8Array],
) -> Result<SnapshotMeta, ApiFailure> {
    api::save_snapshot(base, request, body).await
}

/// How much of a body's start is read for the metadata (it is the first member).
const HEAD_BYTES: usize = 64 << 10;

/// The snapshot member at the front of `body`, if it is there and readable.
pub fn snapshot_meta(body: &Body) -> Option<SnapshotMeta> {
    let mut head = Vec::with_capacity(HEAD_BYTES.min(body.len));
    for chunk in &body.chunks {
        let take = (HEAD_BYTES - head.len()).min(chunk.length() as usize);
        let start = head.len();
        head.resize(start + take, 0);
        chunk.subarray(0, take as u32).copy_to(&mut head[start..]);
        if head.len() >= HEAD_BYTES {
            break;
        }
    }
    meta_from_head(&head)
}

/// Parses `{"snapshot": {...}, ...` from the start of a body (the rest may be cut off).
fn meta_from_head(head: &[u8]) -> Option<SnapshotMeta> {
    let text = head
        .trim_ascii_start()
        .strip_prefix(b"{")?
        .trim_ascii_start();
    let rest = text.strip_prefix(br#""snapshot""#)?.trim_ascii_start();
    let rest = rest.strip_prefix(b":")?;
    let mut de = serde_json::Deserializer::from_slice(rest);
    SnapshotMeta::deserialize(&mut de).ok()
}
