//! Files other profilers wrote, opened in the viewer: pprof (`.pb.gz`, `.pprof`; gunzipped
//! with the browser's `DecompressionStream`, bounded), JFR recordings (`.jfr`, gzipped or not)
//! and `perf script` text, read with the
//! model's readers into the profile to show and the event type its values are; and the other
//! way, the profile on screen written as pprof (the page sends its folded stacks).

use embers_model::contract::event::quantity;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::formats::Format;
use embers_model::wire::folded::parse_folded;
use embers_model::wire::jfr;
use embers_model::wire::perf::parse_perf_script;
use embers_model::wire::pprof::{is_gzip, read_profile};
use embers_model::Profile;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, ReadableStream, ReadableStreamDefaultReader, ReadableStreamReadResult,
    ReadableWritablePair, WritableStream,
};

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
}

/// Reads `bytes` (already gunzipped) as `format` (`pprof`, `jfr` or `perf`), naming the root after
/// `name` where the file does not say.
pub fn read(format: &str, name: &str, bytes: &[u8]) -> Result<Imported, String> {
    let format =
        Format::from_name(format).ok_or_else(|| format!("unknown file format {format}"))?;
    match format {
        Format::Pprof => {
            let read = read_profile(bytes, name).map_err(|e| e.to_string())?;
            Ok(Imported {
                profile: read.profile,
                notice: format!("pprof sample type {}", read.sample_type),
                event_type: read.event_type,
            })
        }
        Format::Perf => {
            let text = String::from_utf8_lossy(bytes);
            let script = parse_perf_script(&text).map_err(|e| e.to_string())?;
            let event_type = script.event_type();
            Ok(Imported {
                profile: script.tree(),
                event_type: event_type.to_owned(),
                notice: format!(
                    "perf script, {} samples of {}",
                    script.samples.len(),
                    script.event
                ),
            })
        }
        Format::Jfr => read_jfr(name, bytes),
        Format::Folded | Format::Lines => Err(format!(
            "{} is read on the page, not in the decode worker",
            format.name()
        )),
    }
}

/// A recording's CPU samples when it has them, else its first event type (`embers-server
/// import` stores every one).
fn read_jfr(name: &str, bytes: &[u8]) -> Result<Imported, String> {
    let recording = jfr::read(bytes, name).map_err(|e| e.to_string())?;
    let kinds = recording.profiles.len();
    let shown = recording
        .profiles
        .into_iter()
        .min_by_key(|p| p.event_type != "cpu")
        .ok_or("the recording has no CPU, allocation or lock events")?;
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
    })
}

/// The format of a request that asks for pprof of folded stacks (the page's *Export → pprof*):
/// the body is the page's folded export, whose first line names the event type
/// (`# Embers folded stacks: profile_event_type=on-cpu`), the `name` is the root, and the
/// reply's body is the pprof file.
pub const PPROF_EXPORT: &str = "pprof-export";

/// pprof of the folded stacks `text` (what the page shows, transforms applied) under `root`.
pub fn export_pprof(root: &str, text: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(text);
    let event_type = text
        .lines()
        .next()
        .and_then(|l| l.split_once("profile_event_type="))
        .map_or("on-cpu", |(_, e)| e.trim());
    let profile = parse_folded(&text, root).map_err(|e| e.to_string())?;
    let meta = PprofMeta {
        event_type,
        quantity: quantity(event_type),
        time_nanos: 0,
        duration_nanos: 0,
    };
    Ok(to_pprof(&profile, &meta))
}

/// `bytes` gunzipped by the browser when they are gzip, else as they are.
pub async fn gunzip_if_needed(bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    if !is_gzip(&bytes) {
        return Ok(bytes);
    }
    let failed = |e: wasm_bindgen::JsValue| format!("the file is not valid gzip ({e:?})");
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
            return Err(format!(
                "the file decompresses to more than {} MiB",
                MAX_GUNZIPPED_BYTES >> 20
            ));
        }
        let at = out.len();
        out.resize(at + data.length() as usize, 0);
        data.copy_to(&mut out[at..]);
    }
}
