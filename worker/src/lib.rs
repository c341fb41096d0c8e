//! The messages between the page and the decode worker, in one place for both sides.
//!
//! The page sends the response body as it arrived (its chunks, transferred, not copied) with
//! the HTTP status; the worker answers with the decoded profile as typed arrays (transferred),
//! handing the body's chunks back the same way (the page keeps an answer for "Save snapshot"
//! without copying it), or with the decoder's error message. Requests carry an id so the page can match answers.
//! Everything read from a message is checked: a malformed one is an error, never a panic.

use embers_model::contract::shape::ResultShape;
use embers_model::wire::decode_response_table;
use embers_model::ProfileParts;
use js_sys::{Array, BigInt64Array, BigUint64Array, Object, Reflect, Uint32Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

pub mod import;
pub mod warm_up;

/// What the worker posts once it listens (messages sent before that would be lost).
pub const READY: &str = "embers-decode-worker:ready";
/// What the worker posts once its warm-up is done: from then on a body decodes at full speed
/// without waiting for a warm-up slice.
pub const WARM: &str = "embers-decode-worker:warm";

/// Heap the worker writes to while it warms up, then frees (see [`prefault`]): about what a
/// 100k-node shape-B answer (2.5 MB) needs at its peak, and the first 48 MB of a bigger one's.
pub const PREFAULT_BYTES: usize = 48 << 20;

/// A buffer of `bytes` with every page of it written. Freed, its memory stays in the
/// allocator (wasm memory never shrinks), so the decode that follows allocates pages that are
/// already backed. Writing a fresh wasm page the first time costs ~0.75–1 ms per MB on this
/// machine (measured in the worker: 20 MB took 20 ms, 220 MB 160 ms); a 100k-node decode
/// spent a third of its time on that (tables 21 → 9 ms once its memory had been written).
pub fn prefault(bytes: usize) -> Vec<u8> {
    let mut buffer = vec![1u8; bytes];
    // Keep the writes: a buffer freed unread would let the compiler drop them.
    std::hint::black_box(&mut buffer);
    buffer
}

/// Answers one request message: decodes its body and returns the reply message with the
/// buffers to transfer. The warm-up and the tests call it; the worker's message handler and
/// the page's fallback (the same code run on the page when no worker can start) call
/// [`answer_async`], which first has the browser gunzip a gzipped file.
pub fn answer(msg: &JsValue) -> Result<(JsValue, Array), String> {
    let request = DecodeRequest::from_js(msg)?;
    let body = request.body();
    Ok(reply_to(&request, body).to_js())
}

/// [`answer`], gunzipping a gzipped file first.
pub async fn answer_async(msg: &JsValue) -> Result<(JsValue, Array), String> {
    let request = DecodeRequest::from_js(msg)?;
    let mut body = request.body();
    if request.format.is_some() {
        body = match import::gunzip_if_needed(body).await {
            Ok(bytes) => bytes,
            Err(message) => {
                let failed = DecodeReply::Failed {
                    id: request.id,
                    message,
                };
                return Ok(failed.to_js());
            }
        };
    }
    Ok(reply_to(&request, body).to_js())
}

/// The reply to `request`, whose body (gunzipped) is `body`.
fn reply_to(request: &DecodeRequest, body: Vec<u8>) -> DecodeReply {
    let Some(format) = request.format.as_deref() else {
        return answer_response(request, body);
    };
    let name = request.name.as_deref().unwrap_or("imported");
    if format == import::PPROF_EXPORT {
        return match import::export_pprof(name, &body) {
            // The file travels back as the reply's body, with an empty profile.
            Ok(pprof) => DecodeReply::Decoded {
                id: request.id,
                parts: Box::new(embers_model::Profile::default().into_parts()),
                shape: None,
                notice: None,
                event_type: None,
                body: vec![Uint8Array::from(&pprof[..])],
            },
            Err(message) => DecodeReply::Failed {
                id: request.id,
                message,
            },
        };
    }
    match import::read(format, name, &body) {
        Ok(imported) => DecodeReply::Decoded {
            id: request.id,
            parts: Box::new(imported.profile.into_parts()),
            shape: None,
            notice: Some(imported.notice),
            event_type: Some(imported.event_type),
            body: request.chunks.clone(),
        },
        Err(message) => DecodeReply::Failed {
            id: request.id,
            message,
        },
    }
}

/// The reply to a ProfileTracing answer's body.
fn answer_response(request: &DecodeRequest, body: Vec<u8>) -> DecodeReply {
    // Free this thread's copy of the body before the tree is built (lower peak memory).
    let decoded = decode_response_table(request.status, &body);
    drop(body);
    match decoded {
        Ok(table) => {
            let decoded = table.build();
            DecodeReply::Decoded {
                id: request.id,
                parts: Box::new(decoded.profile.into_parts()),
                shape: decoded.shape,
                notice: decoded.notice,
                event_type: None,
                body: request.chunks.clone(),
            }
        }
        Err(e) => DecodeReply::Failed {
            id: request.id,
            message: e.to_string(),
        },
    }
}

/// A body to decode.
pub struct DecodeRequest {
    /// Matches the reply to the request.
    pub id: u32,
    /// The HTTP status the body came with.
    pub status: u16,
    /// The body's bytes, in order.
    pub chunks: Vec<Uint8Array>,
    /// A file's format (`pprof`, `perf`); `None` for a ProfileTracing answer.
    pub format: Option<String>,
    /// The file's name, for the root when the file names none.
    pub name: Option<String>,
}

impl DecodeRequest {
    /// The message and the buffers to transfer with it.
    pub fn to_js(&self) -> (JsValue, Array) {
        let msg = Object::new();
        let chunks: Array = self.chunks.iter().collect();
        let transfer: Array = self.chunks.iter().map(|c| c.buffer()).collect();
        set(&msg, "id", self.id.into());
        set(&msg, "status", self.status.into());
        set(&msg, "chunks", chunks.into());
        if let Some(format) = &self.format {
            set(&msg, "format", format.as_str().into());
        }
        if let Some(name) = &self.name {
            set(&msg, "name", name.as_str().into());
        }
        (msg.into(), transfer)
    }

    /// Reads a request message.
    pub fn from_js(msg: &JsValue) -> Result<DecodeRequest, String> {
        Ok(DecodeRequest {
            id: number(msg, "id")?,
            status: u16::try_from(number(msg, "status")?).map_err(|_| "bad status")?,
            chunks: chunks(msg, "chunks")?,
            format: get(msg, "format").ok().and_then(|f| f.as_string()),
            name: get(msg, "name").ok().and_then(|n| n.as_string()),
        })
    }

    /// The body in one buffer (copied into this thread's memory once, without zeroing it
    /// first: for a 180 MB shape-A answer that is a pass over memory saved).
    pub fn body(&self) -> Vec<u8> {
        let len = self.chunks.iter().map(|c| c.length() as usize).sum();
        let mut body = Vec::with_capacity(len);
        for c in &self.chunks {
            let n = c.length() as usize;
            let at = body.len();
            c.copy_to_uninit(&mut body.spare_capacity_mut()[..n]);
            // SAFETY: `copy_to_uninit` initialised exactly `n` more bytes after `at`.
            unsafe { body.set_len(at + n) };
        }
        body
    }
}

/// The worker's answer.
#[derive(Debug)]
pub enum DecodeReply {
    /// The decoded profile (empty when the query matched nothing).
    Decoded {
        id: u32,
        parts: Box<ProfileParts>,
        shape: Option<ResultShape>,
        /// The server's `DESCRIPTION` of a successful answer, when it wrote one (for a file:
        /// how it was read).
        notice: Option<String>,
        /// A file's event type (what its values are); `None` for an answer.
        event_type: Option<String>,
        /// The request's body chunks, handed back unchanged.
        body: Vec<Uint8Array>,
    },
    /// The decoder's message for a body it could not use.
    Failed { id: u32, message: String },
}

impl DecodeReply {
    /// The request this answers.
    pub fn id(&self) -> u32 {
        match self {
            DecodeReply::Decoded { id, .. } | DecodeReply::Failed { id, .. } => *id,
        }
    }

    /// The message and the buffers to transfer with it (the columns are copied out of wasm
    /// memory once, then moved).
    pub fn to_js(&self) -> (JsValue, Array) {
        let msg = Object::new();
        let transfer = Array::new();
        set(&msg, "id", self.id().into());
        match self {
            DecodeReply::Failed { message, .. } => set(&msg, "error", message.as_str().into()),
            DecodeReply::Decoded {
                parts,
                shape,
                notice,
                event_type,
                body,
                ..
            } => {
                if let Some(event_type) = event_type {
                    set(&msg, "event_type", event_type.as_str().into());
                }
                let chunks: Array = body.iter().collect();
                set(&msg, "body", chunks.into());
                for chunk in body {
                    transfer.push(&chunk.buffer());
                }
                let shape = match shape {
                    Some(ResultShape::A) => "A".into(),
                    Some(ResultShape::B) => "B".into(),
                    None => JsValue::NULL,
                };
                set(&msg, "shape", shape);
                if let Some(notice) = notice {
                    set(&msg, "notice", notice.as_str().into());
                }
                let put = |key: &str, array: JsValue, buffer: JsValue| {
                    set(&msg, key, array);
                    transfer.push(&buffer);
                };
                let u8s = |v: &[u8]| Uint8Array::from(v);
                let u32s = |v: &[u32]| Uint32Array::from(v);
                let u64s = |v: &[u64]| BigUint64Array::from(v);
                for (key, a) in [("names", u8s(&parts.names)), ("kinds", u8s(&parts.kinds))] {
                    put(key, a.clone().into(), a.buffer().into());
                }
                for (key, a) in [
                    ("name_ends", u32s(&parts.name_ends)),
                    ("func", u32s(&parts.func)),
                    ("parent", u32s(&parts.parent)),
                    ("depth", u32s(&parts.depth)),
                    ("end", u32s(&parts.end)),
                    ("row_offsets", u32s(&parts.row_offsets)),
                    ("row_nodes", u32s(&parts.row_nodes)),
                    ("warnings", u32s(&parts.warnings)),
                ] {
                    put(key, a.clone().into(), a.buffer().into());
                }
                for (key, a) in [
                    ("self_value", u64s(&parts.self_value)),
                    ("total", u64s(&parts.total)),
                    ("start", u64s(&parts.start)),
                ] {
                    put(key, a.clone().into(), a.buffer().into());
                }
                if let Some(v) = &parts.server_function_values {
                    let a = BigInt64Array::from(&v[..]);
                    put(
                        "server_function_values",
                        a.clone().into(),
                        a.buffer().into(),
                    );
                }
            }
        }
        (msg.into(), transfer)
    }

    /// Reads a reply message.
    pub fn from_js(msg: &JsValue) -> Result<DecodeReply, String> {
        let id = number(msg, "id")?;
        if let Some(message) = get(msg, "error").ok().and_then(|e| e.as_string()) {
            return Ok(DecodeReply::Failed { id, message });
        }
        let shape = match get(msg, "shape")?.as_string().as_deref() {
            Some("A") => Some(ResultShape::A),
            Some("B") => Some(ResultShape::B),
            _ => None,
        };
        let u8s = |key| typed::<Uint8Array>(msg, key).map(|a| a.to_vec());
        let u32s = |key| typed::<Uint32Array>(msg, key).map(|a| a.to_vec());
        let u64s = |key| typed::<BigUint64Array>(msg, key).map(|a| a.to_vec());
        let warnings = u32s("warnings")?
            .try_into()
            .map_err(|_| "`warnings` has the wrong length")?;
        let server_function_values = match get(msg, "server_function_values") {
            Ok(v) if !v.is_undefined() => Some(
                v.dyn_into::<BigInt64Array>()
                    .map_err(|_| "`server_function_values` is not a BigInt64Array")?
                    .to_vec(),
            ),
            _ => None,
        };
        let parts = Box::new(ProfileParts {
            names: u8s("names")?,
            name_ends: u32s("name_ends")?,
            kinds: u8s("kinds")?,
            func: u32s("func")?,
            parent: u32s("parent")?,
            depth: u32s("depth")?,
            self_value: u64s("self_value")?,
            total: u64s("total")?,
            start: u64s("start")?,
            end: u32s("end")?,
            row_offsets: u32s("row_offsets")?,
            row_nodes: u32s("row_nodes")?,
            server_function_values,
            warnings,
        });
        let notice = get(msg, "notice").ok().and_then(|n| n.as_string());
        let event_type = get(msg, "event_type").ok().and_then(|n| n.as_string());
        let body = chunks(msg, "body")?;
        Ok(DecodeReply::Decoded {
            id,
            parts,
            shape,
            notice,
            event_type,
            body,
        })
    }
}

fn set(obj: &Object, key: &str, value: JsValue) {
    // Setting a property on a plain object we just made cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}

fn get(msg: &JsValue, key: &str) -> Result<JsValue, String> {
    Reflect::get(msg, &JsValue::from_str(key)).map_err(|_| format!("the message has no `{key}`"))
}

fn number(msg: &JsValue, key: &str) -> Result<u32, String> {
    get(msg, key)?
        .as_f64()
        .filter(|v| v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(v))
        .map(|v| v as u32)
        .ok_or_else(|| format!("`{key}` is not a whole number"))
}

/// An array of byte chunks.
fn chunks(msg: &JsValue, key: &str) -> Result<Vec<Uint8Array>, String> {
    get(msg, key)?
        .dyn_into::<Array>()
        .map_err(|_| format!("`{key}` is not an array"))?
        .iter()
        .map(|c| c.dyn_into::<Uint8Array>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("a chunk of `{key}` is not a Uint8Array"))
}

fn typed<T: JsCast>(msg: &JsValue, key: &str) -> Result<T, String> {
    get(msg, key)?
        .dyn_into::<T>()
        .map_err(|_| format!("`{key}` is not the expected typed array"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefault_writes_every_byte_of_its_buffer() {
        let buffer = super::prefault(3 << 20);
        assert_eq!(buffer.len(), 3 << 20);
        assert!(buffer.iter().all(|&b| b == 1));
    }
}
