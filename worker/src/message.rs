//! The messages between the page and the workers, in one place for both sides.
//!
//! The page sends a [`DecodeRequest`]: a [`Job`] and the body it works on, as it arrived (its
//! chunks, transferred, not copied); the worker answers with a [`DecodeReply`]: the profile as
//! typed arrays (transferred), handing the body's chunks back the same way (the page keeps an
//! answer for "Save snapshot" without copying it), or the job's error message. Requests carry
//! an id so the page can match answers. Everything read from a message is checked: a malformed
//! one is a [`MessageError`], never a panic.

use embers_model::contract::shape::ResultShape;
use embers_model::formats::Format;
use embers_model::tree::lines::LineParts;
use embers_model::ProfileParts;
use js_sys::{Array, BigInt64Array, BigUint64Array, Object, Reflect, Uint32Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::MessageError;
use crate::job::{self, Job};

/// A body to decode.
pub struct DecodeRequest {
    /// Matches the reply to the request.
    pub id: u32,
    /// What to do with the body.
    pub job: Job,
    /// The body's bytes, in order.
    pub chunks: Vec<Uint8Array>,
}

impl DecodeRequest {
    /// The message and the buffers to transfer with it.
    pub fn to_js(&self) -> (JsValue, Array) {
        let msg = Object::new();
        let chunks: Array = self.chunks.iter().collect();
        let transfer: Array = self.chunks.iter().map(|c| c.buffer()).collect();
        set(&msg, "id", self.id.into());
        set(&msg, "job", self.job.tag().into());
        set(&msg, "chunks", chunks.into());
        match &self.job {
            Job::Answer { status } => set(&msg, "status", (*status).into()),
            Job::OpenFile { format, name } => {
                set(&msg, "format", format.name().into());
                set(&msg, "name", name.as_str().into());
            }
            Job::ExportPprof { root } => set(&msg, "name", root.as_str().into()),
        }
        (msg.into(), transfer)
    }

    /// Reads a request message.
    pub fn from_js(msg: &JsValue) -> Result<DecodeRequest, MessageError> {
        Ok(DecodeRequest {
            id: number(msg, "id")?,
            job: read_job(msg)?,
            chunks: chunks(msg, "chunks")?,
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
        /// An opened file's source lines per function (`None` for an answer).
        lines: Option<Box<LineParts>>,
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
                lines,
                ..
            } => {
                if let Some(lines) = lines {
                    put_lines(&msg, &transfer, lines);
                }
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
    pub fn from_js(msg: &JsValue) -> Result<DecodeReply, MessageError> {
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
            .map_err(|_| MessageError::WarningsLength)?;
        let server_function_values = match get(msg, "server_function_values") {
            Ok(v) if !v.is_undefined() => Some(
                v.dyn_into::<BigInt64Array>()
                    .map_err(|_| MessageError::NotTypedArray("server_function_values"))?
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
            lines: read_lines(msg)?,
        })
    }
}

/// An opened file's line table into `msg` (`line_*` fields), its columns transferred.
fn put_lines(msg: &Object, transfer: &Array, lines: &LineParts) {
    let put = |key: &str, array: JsValue, buffer: JsValue| {
        set(msg, key, array);
        transfer.push(&buffer);
    };
    let texts = Uint8Array::from(&lines.texts[..]);
    put("line_texts", texts.clone().into(), texts.buffer().into());
    for (key, column) in [
        ("line_text_ends", &lines.text_ends),
        ("line_starts", &lines.starts),
        ("line_file", &lines.file),
        ("line_no", &lines.line),
    ] {
        let a = Uint32Array::from(&column[..]);
        put(key, a.clone().into(), a.buffer().into());
    }
    for (key, column) in [
        ("line_self", &lines.self_value),
        ("line_total", &lines.total_value),
    ] {
        let a = BigUint64Array::from(&column[..]);
        put(key, a.clone().into(), a.buffer().into());
    }
    set(msg, "line_functions", lines.function_count.into());
    if let Some(why) = &lines.why_none {
        set(msg, "line_why_none", why.as_str().into());
    }
}

/// The line table of a reply, when it carries one (`line_functions` set).
fn read_lines(msg: &JsValue) -> Result<Option<Box<LineParts>>, MessageError> {
    if get(msg, "line_functions")?.is_undefined() {
        return Ok(None);
    }
    let u32s = |key| typed::<Uint32Array>(msg, key).map(|a| a.to_vec());
    let u64s = |key| typed::<BigUint64Array>(msg, key).map(|a| a.to_vec());
    Ok(Some(Box::new(LineParts {
        texts: typed::<Uint8Array>(msg, "line_texts")?.to_vec(),
        text_ends: u32s("line_text_ends")?,
        function_count: number(msg, "line_functions")?,
        starts: u32s("line_starts")?,
        file: u32s("line_file")?,
        line: u32s("line_no")?,
        self_value: u64s("line_self")?,
        total_value: u64s("line_total")?,
        why_none: get(msg, "line_why_none")?.as_string(),
    })))
}

fn set(obj: &Object, key: &str, value: JsValue) {
    // Setting a property on a plain object we just made cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value);
}

fn get(msg: &JsValue, key: &'static str) -> Result<JsValue, MessageError> {
    Reflect::get(msg, &JsValue::from_str(key)).map_err(|_| MessageError::Missing(key))
}

/// A string field that must be there.
fn text(msg: &JsValue, key: &'static str) -> Result<String, MessageError> {
    get(msg, key)?.as_string().ok_or(MessageError::Missing(key))
}

fn number(msg: &JsValue, key: &'static str) -> Result<u32, MessageError> {
    get(msg, key)?
        .as_f64()
        .filter(|v| v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(v))
        .map(|v| v as u32)
        .ok_or(MessageError::NotWholeNumber(key))
}

/// A request's job, from its `job` field and the fields that job has.
fn read_job(msg: &JsValue) -> Result<Job, MessageError> {
    match text(msg, "job")?.as_str() {
        job::ANSWER => {
            let status = number(msg, "status")?;
            let status = u16::try_from(status)
                .ok()
                .filter(|s| (100..=599).contains(s))
                .ok_or(MessageError::BadStatus(status))?;
            Ok(Job::Answer { status })
        }
        job::OPEN_FILE => {
            let format = text(msg, "format")?;
            Ok(Job::OpenFile {
                format: Format::from_name(&format).ok_or(MessageError::UnknownFormat(format))?,
                name: text(msg, "name")?,
            })
        }
        job::EXPORT_PPROF => Ok(Job::ExportPprof {
            root: text(msg, "name")?,
        }),
        other => Err(MessageError::UnknownJob(other.to_owned())),
    }
}

/// An array of byte chunks.
fn chunks(msg: &JsValue, key: &'static str) -> Result<Vec<Uint8Array>, MessageError> {
    get(msg, key)?
        .dyn_into::<Array>()
        .map_err(|_| MessageError::NotArray(key))?
        .iter()
        .map(|c| c.dyn_into::<Uint8Array>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| MessageError::NotBytes(key))
}

fn typed<T: JsCast>(msg: &JsValue, key: &'static str) -> Result<T, MessageError> {
    get(msg, key)?
        .dyn_into::<T>()
        .map_err(|_| MessageError::NotTypedArray(key))
}
