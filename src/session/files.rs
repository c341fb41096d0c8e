//! Saved profiles: importing a ProfileTracing response in either shape (with or without the
//! envelope, decoded like a query's answer, off the page's thread), folded stacks, pprof and
//! `perf script` (both read in the decode worker), and the export formats (folded stacks that
//! say what their values are, the response JSON, pprof).

use std::sync::Arc;

use embers_model::contract::envelope::{Envelope, SUCCESS};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::shape::ResultShape;
use embers_model::export::encode::encode_result;
use embers_model::export::folded::{to_diff_folded, to_folded_stacks};
use embers_model::formats::Format;
use embers_model::view::format::ValueUnit;
use embers_model::wire::folded::{is_diff_folded, parse_diff_folded, parse_folded};
use embers_model::Profile;

use crate::net::decode_worker;
use crate::net::http::Body;
use crate::session::time::now_ms;
use crate::state::loaded::{Failure, LoadState, Loaded};

/// Turns a saved file's text into something to show: a ProfileTracing response (either shape,
/// with or without the envelope; decoded like a query's answer, off the page's thread) or
/// folded stacks (rooted at `root_name`).
pub async fn import_text(file_name: &str, text: &str) -> LoadState {
    let started = now_ms();
    let trimmed = text.trim_start();
    let root_name = root_name_from_file(file_name);
    // Folded stacks may start with `[` too (`[t] thread;...`): JSON only if it parses as JSON.
    let is_json = (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok();
    let mut unit = None;
    let mut event_type = "on-cpu".to_string();
    let result = if is_json {
        match decode_worker::decode(
            200,
            &Body::from_bytes(text.as_bytes()),
            decode_worker::next_id(),
        )
        .await
        {
            Ok(d) => Ok((d.profile, d.shape)),
            Err(envelope_err) => {
                // Not an envelope: maybe a bare `result` value (JSON, checked above).
                let wrapped = wrap_result(text).unwrap_or_default();
                decode_worker::decode(
                    200,
                    &Body::from_bytes(wrapped.as_bytes()),
                    decode_worker::next_id(),
                )
                .await
                .map(|d| (d.profile, d.shape))
                .map_err(|_| envelope_err.to_string())
            }
        }
    } else {
        // Folded files count samples, unless Embers wrote them and said what they hold.
        match folded_event_type(text) {
            Some(event) => event_type = event,
            None => unit = Some(ValueUnit::Samples),
        }
        parse_folded(text, &root_name)
            .map(|p| (p, None))
            .map_err(|e| format!("it is neither ProfileTracing JSON nor folded stacks ({e})"))
    };
    match result {
        Ok((profile, shape)) => {
            let request = ProfileRequest {
                app_service: Some(if profile.is_empty() {
                    root_name
                } else {
                    profile.name(0).to_string()
                }),
                profile_language_type: "eBPF".into(),
                profile_event_type: event_type,
                ..ProfileRequest::default()
            };
            let mut loaded = Loaded::new(profile, request, shape, now_ms() - started);
            if let Some(unit) = unit {
                loaded.unit = unit;
            }
            LoadState::Loaded(Arc::new(loaded))
        }
        Err(e) => LoadState::Failed(Failure::import(format!(
            "Could not import {file_name}: {e}"
        ))),
    }
}

/// The profile on screen (transforms applied) as pprof, written by the file reader worker from
/// its folded stacks as [`folded_export`] writes them (the page carries no pprof writer); the
/// file's parts, for a download.
pub async fn pprof_export(l: &Loaded) -> Option<js_sys::Array> {
    let bytes = js_sys::Uint8Array::from(folded_export(l).as_bytes());
    let parts = decode_worker::export_pprof(bytes, l.profile.name(0))
        .await
        .ok()?;
    Some(parts.iter().collect())
}

/// The first line of folded stacks exported by Embers: says what the values are (the decode
/// worker reads it too, for *Export → pprof*).
const FOLDED_HEADER: &str = "# Embers folded stacks: profile_event_type=";
/// The same for two-column (baseline, comparison) stacks.
const DIFF_FOLDED_HEADER: &str = "# Embers diff folded stacks: profile_event_type=";

/// Folded stacks of a profile, with a header comment naming the event type (so an import
/// knows the values are microseconds or bytes, not sample counts).
pub fn folded_export(l: &Loaded) -> String {
    format!(
        "{FOLDED_HEADER}{}\n{}",
        l.request.profile_event_type,
        to_folded_stacks(&l.profile)
    )
}

/// The event type named by an Embers folded-stacks header, if the text has one.
fn folded_event_type(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let event = first
        .strip_prefix(FOLDED_HEADER)
        .or_else(|| first.strip_prefix(DIFF_FOLDED_HEADER))?
        .trim();
    (!event.is_empty()).then(|| event.to_string())
}

/// `embers-redis-server.folded` → `redis-server`.
fn root_name_from_file(name: &str) -> String {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let stem = stem.strip_prefix("embers-").unwrap_or(stem);
    if stem.is_empty() {
        "imported".into()
    } else {
        stem.to_string()
    }
}

/// What a file holds: one profile, or two (a two-column folded file: a comparison).
pub enum Imported {
    /// One profile (or why it could not be read).
    One(LoadState),
    /// A baseline and a comparison.
    Pair {
        /// The first column.
        baseline: LoadState,
        /// The second column.
        comparison: LoadState,
    },
}

/// Whether the file reader worker is loaded: until it is, opening or exporting a file waits
/// for it to load first (the page says so).
pub fn file_reader_ready() -> bool {
    decode_worker::file_reader_ready()
}

/// What the status line says while the file reader loads (the first file opened).
pub const LOADING_FILE_READER: &str = "Loading the file reader (pprof, JFR, perf script)";

/// Reads a picked or dropped file and imports it: pprof, JFR and `perf script` in the file
/// reader worker (which gunzips `.pb.gz` itself), everything else as text. `progress` is
/// told what the page waits for while it reads one in the worker (loading the worker, the
/// first time, then reading).
pub async fn import_file(file: web_sys::File, progress: &dyn Fn(String)) -> Imported {
    let name = file.name();
    let failed = || {
        Imported::One(LoadState::Failed(Failure::import(format!(
            "Could not read {name}."
        ))))
    };
    let Ok(buffer) = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await else {
        return failed();
    };
    let bytes = js_sys::Uint8Array::new(&buffer);
    let head = bytes.subarray(0, bytes.length().min(4096)).to_vec();
    if let Some(format) = worker_format(&name, &head) {
        progress(if file_reader_ready() {
            format!("Reading {name}")
        } else {
            LOADING_FILE_READER.to_owned()
        });
        return Imported::One(import_in_worker(&name, bytes, format).await);
    }
    import_any(&name, &String::from_utf8_lossy(&bytes.to_vec())).await
}

/// The format the file reader reads `name` in, judged by its name and first bytes as the
/// service and `import` judge them ([`Format::detect`]); `None` for text the page reads itself
/// (folded stacks, ProfileTracing JSON).
fn worker_format(name: &str, head: &[u8]) -> Option<Format> {
    let format = Format::detect(name, head);
    format.in_worker().then_some(format)
}

/// A pprof, JFR or `perf script` file, read in the file reader worker.
async fn import_in_worker(name: &str, bytes: js_sys::Uint8Array, format: Format) -> LoadState {
    let started = now_ms();
    let root = root_name_from_file(name.trim_end_matches(".gz"));
    match decode_worker::decode_file(bytes, format, &root).await {
        Ok(d) => {
            let root = if d.profile.is_empty() {
                root
            } else {
                d.profile.name(0).to_owned()
            };
            let request = imported_request(&root, d.event_type);
            let mut loaded = Loaded::new(d.profile, request, None, now_ms() - started);
            loaded.server_notice = d.notice;
            loaded.lines = d.lines.map(Arc::new);
            LoadState::Loaded(Arc::new(loaded))
        }
        Err(e) => LoadState::Failed(Failure::import(format!("Could not import {name}: {e}"))),
    }
}

/// Imports a file's text: two-column folded stacks as a pair, anything else as one profile.
pub async fn import_any(file_name: &str, text: &str) -> Imported {
    if !is_diff_folded(text) {
        return Imported::One(import_text(file_name, text).await);
    }
    let root = root_name_from_file(file_name);
    match parse_diff_folded(text, &root) {
        Ok((b, c)) => {
            let side = |p: Profile| {
                let mut l = Loaded::new(
                    p,
                    imported_request(&root, folded_event_type(text)),
                    None,
                    0.0,
                );
                if folded_event_type(text).is_none() {
                    l.unit = ValueUnit::Samples;
                }
                LoadState::Loaded(Arc::new(l))
            };
            Imported::Pair {
                baseline: side(b),
                comparison: side(c),
            }
        }
        Err(e) => Imported::One(LoadState::Failed(Failure::import(format!(
            "Could not import {file_name}: {e}"
        )))),
    }
}

/// The request an imported profile is shown under (no query to re-run: no times).
fn imported_request(root: &str, event_type: Option<String>) -> ProfileRequest {
    ProfileRequest {
        app_service: Some(root.to_owned()),
        profile_language_type: "eBPF".into(),
        profile_event_type: event_type.unwrap_or_else(|| "on-cpu".into()),
        ..ProfileRequest::default()
    }
}

/// Two-column folded stacks of a comparison, with a header naming the event type.
pub fn diff_folded_export(l: &Loaded) -> Option<String> {
    let diff = l.diff.as_deref()?;
    Some(format!(
        "{DIFF_FOLDED_HEADER}{}\n{}",
        l.request.profile_event_type,
        to_diff_folded(&l.profile, diff)
    ))
}

/// The saved-response JSON of a profile (ProfileTracing envelope, the response's own shape).
pub fn response_json(profile: &Profile, shape: Option<ResultShape>, event_type: &str) -> String {
    let envelope = Envelope {
        opt_status: SUCCESS,
        description: "",
        result: encode_result(Some(profile), shape.unwrap_or_default(), event_type),
        debug: (),
    };
    serde_json::to_string(&envelope).unwrap_or_default()
}

/// A bare `result` value (JSON text) inside the success envelope, as the decoder reads answers.
fn wrap_result(result: &str) -> Result<String, serde_json::Error> {
    let result: &serde_json::value::RawValue = serde_json::from_str(result)?;
    serde_json::to_string(&Envelope {
        opt_status: SUCCESS,
        description: "",
        result,
        debug: (),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_results_are_wrapped_in_the_success_envelope() {
        assert_eq!(
            wrap_result(" {\"functions\": [\"a\"]}\n").unwrap(),
            r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{"functions": ["a"]},"debug":null}"#
        );
        assert!(wrap_result("a;b 1").is_err());
    }

    #[test]
    fn embers_folded_headers_name_the_event_type() {
        assert_eq!(
            folded_event_type("# Embers folded stacks: profile_event_type=off-cpu\na 1\n")
                .as_deref(),
            Some("off-cpu")
        );
        assert_eq!(folded_event_type("a;b 1\n"), None);
        assert_eq!(
            folded_event_type("# Embers folded stacks: profile_event_type=\n"),
            None
        );
    }

    #[test]
    fn pprof_and_perf_files_are_told_apart_from_text_profiles() {
        assert_eq!(
            worker_format("cpu.pb.gz", &[0x1f, 0x8b, 8]),
            Some(Format::Pprof)
        );
        assert_eq!(
            worker_format("x.bin", &[0x0a, 0x04, 0x08, 0x01]),
            Some(Format::Pprof)
        );
        assert_eq!(
            worker_format("heap.pprof", b"anything"),
            Some(Format::Pprof)
        );
        assert_eq!(worker_format("x", b"FLR\0\0\x02"), Some(Format::Jfr));
        assert_eq!(
            worker_format("app.jfr.gz", &[0x1f, 0x8b, 8]),
            Some(Format::Jfr)
        );
        let perf = b"gzip 7 [000] 1.5: 5025125 cpu-clock:ppp:\n\t46a0 [unknown] (/usr/bin/gzip)\n";
        assert_eq!(worker_format("out.txt", perf), Some(Format::Perf));
        assert_eq!(
            worker_format("a.folded", b"[t] main;work 10\nmain 3\n"),
            None
        );
        assert_eq!(worker_format("r.json", b"{\n  \"OPT_STATUS\": 1\n}"), None);
    }

    #[test]
    fn file_names_give_root_names() {
        assert_eq!(
            root_name_from_file("embers-redis-server.folded"),
            "redis-server"
        );
        assert_eq!(root_name_from_file("perf.txt"), "perf");
        assert_eq!(root_name_from_file(".folded"), "imported");
    }
}
