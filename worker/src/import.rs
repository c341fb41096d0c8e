//! The file reader's jobs (`file_worker`, loaded only when a user opens or exports a file):
//! files other profilers wrote — pprof (`.pb.gz`, `.pprof`; gunzipped with the browser's
//! `DecompressionStream`, bounded), JFR recordings (`.jfr`, gzipped or not) and `perf script`
//! text — read with the model's readers into the profile to show and the event type its
//! values are; and the other way, the profile on screen written as pprof (the page sends its
//! folded stacks). An answer sent here is refused with [`JobError::WrongWorker`].

use embers_model::contract::event::{quantity, DEFAULT_EVENT_TYPE};
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::formats::Format;
use embers_model::tree::lines::LineTable;
use embers_model::wire::folded::parse_folded;
use embers_model::wire::jfr;
use embers_model::wire::perf::parse_perf_script;
use embers_model::wire::pprof::{is_gzip, read_profile_with_lines};
use embers_model::Profile;
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, ReadableStream, ReadableStreamDefaultReader, ReadableStreamReadResult,
    ReadableWritablePair, WritableStream,
};

use crate::error::{JobError, MessageError};
use crate::job::{Job, WorkerKind};
use crate::message::{DecodeReply, DecodeRequest};

// web-sys has `DecompressionStream` only behind `--cfg=web_sys_unstable_apis`; the three
// members used here are declared directly instead.
#[wasm_bindgen]
extern "C" {
    type DecompressionStream;

    #[wasm_bindgen(constructor, catch)]
    fn new(format: &str) -> Result<DecompressionStream, JsValue>;

    #[wasm_bindgen(method, getter)]
    fn readable(this: &DecompressionStream) -> ReadableStream;

    #[wasm_bindgen(method, getter)]
    fn writable(this: &DecompressionStream) -> WritableStream;
}

/// The most a gzipped file may decompress to (a bomb stops here, not at the tab's memory).
pub const MAX_GUNZIPPED_BYTES: usize = 1 << 30;

/// What a file was read into.
pub struct Imported {
    /// The tree.
    pub profile: Profile,
    /// The event type its values are (`cpu`, `on-cpu`, `inuse_space`, ...).
    pub event_type: String,
    /// What the status line says about how it was read.
    pub notice: String,
    /// Its functions' source lines (the Source panel), or why it has none.
    pub lines: LineTable,
}

/// Why a `perf script` file shows no lines.
const PERF_NO_LINES: &str = "This perf script file shows no source lines: Embers reads its \
    functions only (srcline fields are not read from a file opened here).";
/// Why a JFR recording shows no lines.
const JFR_NO_LINES: &str = "This JFR recording shows no source lines: Embers reads its \
    methods only (the frames' line numbers are not read from a file opened here).";

/// Answers one request message (a promise of the reply and the buffers to transfer): the file
/// worker's message handler and the page's fallback call it.
pub async fn answer_file(msg: &JsValue) -> Result<(JsValue, Array), MessageError> {
    let request = DecodeRequest::from_js(msg)?;
    let reply = match do_job(&request).await {
        Ok(reply) => reply,
        Err(e) => DecodeReply::Failed {
            id: request.id,
            message: e.to_string(),
        },
    };
    Ok(reply.to_js())
}

async fn do_job(request: &DecodeRequest) -> Result<DecodeReply, JobError> {
    match &request.job {
        Job::OpenFile { format, name } => {
            let body = gunzip_if_needed(request.body()).await?;
            let imported = read(*format, name, &body)?;
            Ok(DecodeReply::Decoded {
                id: request.id,
                parts: Box::new(imported.profile.into_parts()),
                shape: None,
                notice: Some(imported.notice),
                event_type: Some(imported.event_type),
                body: request.chunks.clone(),
                lines: Some(Box::new(imported.lines.into_parts())),
            })
        }
        Job::ExportPprof { root } => Ok(DecodeReply::Decoded {
            id: request.id,
            // The file travels back as the reply's body, with an empty profile.
            parts: Box::new(Profile::default().into_parts()),
            shape: None,
            notice: None,
            event_type: None,
            body: vec![Uint8Array::from(&export_pprof(root, &request.body())?[..])],
            lines: None,
        }),
        Job::Answer { .. } => Err(JobError::WrongWorker {
            worker: WorkerKind::Files,
            job: request.job.tag(),
        }),
    }
}

/// Reads `bytes` (already gunzipped) as `format` (pprof, JFR or `perf script`), naming the root
/// after `name` where the file does not say.
pub fn read(format: Format, name: &str, bytes: &[u8]) -> Result<Imported, JobError> {
    match format {
        Format::Pprof => {
            let (read, lines) = read_profile_with_lines(bytes, name)?;
            Ok(Imported {
                profile: read.profile,
                notice: format!("pprof sample type {}", read.sample_type),
                event_type: read.event_type,
                lines,
            })
        }
        Format::Perf => {
            let text = String::from_utf8_lossy(bytes);
            let script = parse_perf_script(&text)?;
            let event_type = script.event_type();
            Ok(Imported {
                profile: script.tree(),
                event_type: event_type.to_owned(),
                notice: format!(
                    "perf script, {} samples of {}",
                    script.samples.len(),
                    script.event
                ),
                lines: LineTable::none(PERF_NO_LINES),
            })
        }
        Format::Jfr => read_jfr(name, bytes),
        Format::Folded | Format::Lines => Err(JobError::ReadOnPage(format.name())),
    }
}

/// A recording's CPU samples when it has them, else its first event type (`embers-server
/// import` stores every one).
fn read_jfr(name: &str, bytes: &[u8]) -> Result<Imported, JobError> {
    let recording = jfr::read(bytes, name)?;
    let kinds = recording.profiles.len();
    let shown = recording
        .profiles
        .into_iter()
        .min_by_key(|p| p.event_type != "cpu")
        .ok_or(JobError::NoEvents)?;
    Ok(Imported {
        profile: Profile::from_table(shown.table),
        event_type: shown.event_type.to_owned(),
        // Short: it is the status line. The other event types are what import stores.
        notice: match kinds {
            1 => format!("JFR {}", shown.event_type),
            n => format!(
                "JFR {}, one of {n} event types in the file",
                shown.event_type
            ),
        },
        lines: LineTable::none(JFR_NO_LINES),
    })
}

/// pprof of the folded stacks `text` (what the page shows, transforms applied; the page's
/// folded export, whose first line names the event type:
/// `# Embers folded stacks: profile_event_type=on-cpu`) under `root`.
pub fn export_pprof(root: &str, text: &[u8]) -> Result<Vec<u8>, JobError> {
    let text = String::from_utf8_lossy(text);
    let event_type = text
        .lines()
        .next()
        .and_then(|l| l.split_once("profile_event_type="))
        .map_or(DEFAULT_EVENT_TYPE, |(_, e)| e.trim());
    let profile = parse_folded(&text, root)?;
    let meta = PprofMeta {
        event_type,
        quantity: quantity(event_type),
        time_nanos: 0,
        duration_nanos: 0,
    };
    Ok(to_pprof(&profile, &meta))
}

/// `bytes` gunzipped by the browser when they are gzip, else as they are.
pub async fn gunzip_if_needed(bytes: Vec<u8>) -> Result<Vec<u8>, JobError> {
    if !is_gzip(&bytes) {
        return Ok(bytes);
    }
    let failed = |e: wasm_bindgen::JsValue| JobError::Gzip(format!("{e:?}"));
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&bytes[..]));
    drop(bytes);
    let blob = Blob::new_with_u8_array_sequence(&parts).map_err(failed)?;
    let stream = DecompressionStream::new("gzip").map_err(failed)?;
    let pair = ReadableWritablePair::new(&stream.readable(), &stream.writable());
    let reader: ReadableStreamDefaultReader = blob
        .stream()
        .pipe_through(&pair)
        .get_reader()
        .unchecked_into();
    let mut out = Vec::new();
    loop {
        let chunk: ReadableStreamReadResult = JsFuture::from(reader.read())
            .await
            .map_err(failed)?
            .unchecked_into();
        if chunk.get_done().unwrap_or(true) {
            return Ok(out);
        }
        let data: js_sys::Uint8Array = chunk.get_value().unchecked_into();
        if out.len() + data.length() as usize > MAX_GUNZIPPED_BYTES {
            let _ = reader.cancel();
            return Err(JobError::TooBig(MAX_GUNZIPPED_BYTES >> 20));
        }
        let at = out.len();
        out.resize(at + data.length() as usize, 0);
        data.copy_to(&mut out[at..]);
    }
}
