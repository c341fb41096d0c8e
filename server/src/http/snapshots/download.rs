//! A snapshot's download: the stored answer is read whole within one short blocking task —
//! one read transaction, ended before the first byte goes out — and then sent from memory.
//! A client that reads slowly or not at all so holds neither a blocking thread nor a read
//! transaction (which would keep SQLite's write-ahead log from being checkpointed), only the
//! answer's bytes — no more than `--max-snapshot-bytes` allowed when it was saved — until it
//! has read them or `--write-timeout` closes its connection.

use std::io;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use embers_model::contract::snapshot::{SnapshotMeta, SNAPSHOT_MEMBER};
use futures_util::stream::{self, StreamExt};

use crate::error::Error;
use crate::store::Store;

/// A snapshot read into memory: its metadata and the stored answer after its first byte
/// (`{`), in the pieces the store gave.
pub struct Loaded {
    meta: SnapshotMeta,
    rest: Vec<Bytes>,
    rest_len: u64,
}

/// Runs on a blocking thread: snapshot `id`, `None` if there is none.
pub fn load(store: &Store, id: &str) -> Result<Option<Loaded>, Error> {
    let mut meta = None;
    let mut rest = Vec::new();
    let mut rest_len = 0u64;
    let mut not_an_object = false;
    store
        .read_snapshot(
            id,
            |found| {
                meta = found;
                meta.is_some()
            },
            |chunk| {
                let piece = if rest.is_empty() {
                    match chunk.split_first() {
                        Some((b'{', after)) => after,
                        _ => {
                            not_an_object = true;
                            return false;
                        }
                    }
                } else {
                    chunk
                };
                rest_len += piece.len() as u64;
                rest.push(Bytes::copy_from_slice(piece));
                true
            },
        )
        .map_err(Error::from_store)?;
    let Some(meta) = meta else {
        return Ok(None);
    };
    if not_an_object || rest.is_empty() {
        return Err(Error::internal(format!(
            "snapshot {id} is not a JSON object"
        )));
    }
    Ok(Some(Loaded {
        meta,
        rest,
        rest_len,
    }))
}

/// The answer: `{"snapshot":{...},` and then the stored answer after its `{`, from memory.
pub fn response(loaded: Loaded) -> Response {
    let prefix = match head(&loaded.meta) {
        Ok(prefix) => prefix,
        Err(e) => return Error::internal(e).into_response(),
    };
    let length = prefix.len() as u64 + loaded.rest_len;
    let pieces = std::iter::once(Bytes::from(prefix)).chain(loaded.rest);
    let body = stream::iter(pieces).map(Ok::<_, io::Error>);
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// `{"snapshot":{...},`: what goes before the stored answer's first member.
fn head(meta: &SnapshotMeta) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = format!("{{\"{SNAPSHOT_MEMBER}\":").into_bytes();
    serde_json::to_writer(&mut out, meta)?;
    out.push(b',');
    Ok(out)
}
