//! The Export menu (PNG, interactive SVG, folded stacks, ProfileTracing JSON) and the ways in
//! for a saved profile (file picker, drag-and-drop anywhere on the page).

use embers_model::export::svg::{render_svg, SvgOptions};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::session::files::{folded_export, import_file, response_json};
use crate::state::loaded::{LoadState, Loaded};
use crate::state::view_state::ViewState;

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
            spawn_local(async move { view.replace_result(import_file(file).await) });
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
            spawn_local(async move { view.replace_result(import_file(file).await) });
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
