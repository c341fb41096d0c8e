//! Export (PNG, interactive SVG, folded stacks, ProfileTracing JSON) and import (file picker or
//! drag-and-drop of a saved response in either shape, or folded stacks), for offline viewing.

use std::sync::Arc;

use embers_model::contract::envelope::{Envelope, SUCCESS};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::shape::ResultShape;
use embers_model::export::encode::encode_result;
use embers_model::export::folded::to_folded_stacks;
use embers_model::export::svg::{render_svg, SvgOptions};
use embers_model::view::format::ValueUnit;
use embers_model::wire::folded::parse_folded;
use embers_model::Profile;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::api::Body;
use crate::decode_worker;
use crate::state::{LoadState, Loaded};
use crate::time::now_ms;
use crate::view_state::ViewState;

/// How every import failure message starts (the UI words it as an import, not a query).
pub const IMPORT_FAILURE_PREFIX: &str = "Could not import";

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
        match decode_worker::decode(200, &Body::from_bytes(text.as_bytes())).await {
            Ok(d) => Ok((d.profile, d.shape)),
            Err(envelope_err) => {
                // Not an envelope: maybe a bare `result` value.
                let wrapped = format!(r#"{{"OPT_STATUS":"SUCCESS","result":{text}}}"#);
                decode_worker::decode(200, &Body::from_bytes(wrapped.as_bytes()))
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
        Err(e) => LoadState::Failed(format!("{IMPORT_FAILURE_PREFIX} {file_name}: {e}")),
    }
}

/// The first line of folded stacks exported by Embers: says what the values are.
const FOLDED_HEADER: &str = "# Embers folded stacks: profile_event_type=";

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
    let event = first.strip_prefix(FOLDED_HEADER)?.trim();
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

async fn read_file(view: ViewState, file: web_sys::File) {
    let name = file.name();
    let state = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
        Ok(text) => import_text(&name, &text.as_string().unwrap_or_default()).await,
        Err(_) => LoadState::Failed(format!("Could not read {name}.")),
    };
    view.zoom.set(0);
    view.load.set(state);
}

/// Offers `content` as a file download.
fn download(file_name: &str, mime: &str, content: &str) {
    let parts = js_sys::Array::of1(&content.into());
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    download_url(file_name, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
}

fn download_url(file_name: &str, url: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(a) = doc.create_element("a") else {
        return;
    };
    let a: web_sys::HtmlAnchorElement = a.unchecked_into();
    a.set_href(url);
    a.set_download(file_name);
    a.click();
}

fn file_stem(l: &Loaded) -> String {
    let name: String = l
        .profile
        .name(0)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("embers-{name}")
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

/// The Export menu.
#[component]
pub fn ExportMenu(view: ViewState) -> impl IntoView {
    let shown = move || view.shown.get_untracked();
    let png = move |_| {
        let Some(l) = shown() else { return };
        let canvas = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| {
                d.query_selector("[data-testid='flame-canvas']")
                    .ok()
                    .flatten()
            })
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok());
        if let Some(url) = canvas.and_then(|c| c.to_data_url().ok()) {
            download_url(&format!("{}.png", file_stem(&l)), &url);
        }
    };
    let svg = move |_| {
        let Some(l) = shown() else { return };
        let opts = SvgOptions {
            title: format!("{} — {}", l.profile.name(0), l.request.profile_event_type),
            unit: l.unit,
            ..SvgOptions::default()
        };
        download(
            &format!("{}.svg", file_stem(&l)),
            "image/svg+xml",
            &render_svg(&l.profile, view.zoom.get_untracked(), &opts),
        );
    };
    let folded = move |_| {
        let Some(l) = shown() else { return };
        download(
            &format!("{}.folded", file_stem(&l)),
            "text/plain",
            &folded_export(&l),
        );
    };
    let json = move |_| {
        // The response as received (before transforms), in the shape it came in.
        let LoadState::Loaded(l) = view.load.get_untracked() else {
            return;
        };
        download(
            &format!("{}.json", file_stem(&l)),
            "application/json",
            &response_json(&l.profile, l.shape, &l.request.profile_event_type),
        );
    };
    view! {
        <details class="menu" data-testid="export-menu">
            <summary>"Export"</summary>
            <div class="menu-items">
                <button type="button" data-testid="export-png" on:click=png>"PNG (visible graph)"</button>
                <button type="button" data-testid="export-svg" on:click=svg>"SVG (interactive, zoomed frame)"</button>
                <button type="button" data-testid="export-folded" on:click=folded>"Folded stacks"</button>
                <button type="button" data-testid="export-json" on:click=json>"ProfileTracing JSON"</button>
                <ImportButton view=view />
            </div>
        </details>
    }
}

/// A file picker for a saved response or folded stacks.
#[component]
pub fn ImportButton(view: ViewState) -> impl IntoView {
    let pick = move |e: ev::Event| {
        let input: Option<web_sys::HtmlInputElement> = e.target().and_then(|t| t.dyn_into().ok());
        if let Some(file) = input
            .as_ref()
            .and_then(|i| i.files())
            .and_then(|f| f.get(0))
        {
            spawn_local(read_file(view, file));
        }
        if let Some(i) = input {
            i.set_value("");
        }
    };
    view! {
        <label class="file" title="Open a saved ProfileTracing response (either shape) or folded stacks; or drop a file on the page">
            "Open a saved profile…"
            <input type="file" data-testid="import-file" accept=".json,.folded,.txt,.collapsed" on:change=pick />
        </label>
    }
}

/// Accepts a file dropped anywhere on the page.
#[component]
pub fn DropZone(view: ViewState) -> impl IntoView {
    let dragging = RwSignal::new(false);
    let over = window_event_listener(ev::dragover, move |e| {
        e.prevent_default();
        dragging.set(true);
    });
    let leave = window_event_listener(ev::dragleave, move |e| {
        // Leaving to outside the window reports no related target.
        if e.related_target().is_none() {
            dragging.set(false);
        }
    });
    let drop = window_event_listener(ev::drop, move |e| {
        e.prevent_default();
        dragging.set(false);
        if let Some(file) = e
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            spawn_local(read_file(view, file));
        }
    });
    on_cleanup(move || {
        over.remove();
        leave.remove();
        drop.remove();
    });
    move || {
        dragging.get().then(|| view! { <div class="drop-overlay" data-testid="drop-overlay">"Drop a saved ProfileTracing response or folded stacks"</div> })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn file_names_give_root_names() {
        assert_eq!(
            root_name_from_file("embers-redis-server.folded"),
            "redis-server"
        );
        assert_eq!(root_name_from_file("perf.txt"), "perf");
        assert_eq!(root_name_from_file(".folded"), "imported");
    }
}
