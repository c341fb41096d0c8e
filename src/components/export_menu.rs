//! The Export menu (PNG, interactive SVG, folded stacks, ProfileTracing JSON, pprof, the summary
//! as text) and the ways in for a saved profile (file picker, drag-and-drop anywhere on the page).

use embers_model::export::svg::{render_svg_diff, SvgDiff, SvgOptions};
use embers_model::view::color::Palette;
use embers_model::view::paint::color_scale;
use embers_model::NodeId;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::components::theme::theme_state;
use crate::session::files::{
    diff_folded_export, file_reader_ready, folded_export, import_file, pprof_export, response_json,
    LOADING_FILE_READER,
};
use crate::session::navigator::{show_imported, Navigator};
use crate::session::snapshot_meta::save_snapshot;
use crate::session::time::now_ms;
use crate::state::loaded::{LoadState, Loaded};
use crate::state::view_state::ViewState;

/// Offers `content` as a file download.
fn download(file_name: &str, mime: &str, content: &str) {
    download_parts(file_name, mime, &js_sys::Array::of1(&content.into()));
}

/// Offers a blob of `parts` (strings or byte arrays) as a file download.
fn download_parts(file_name: &str, mime: &str, parts: &js_sys::Array) {
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(parts, &bag) else {
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

/// Downloads the visible graph as a PNG.
fn export_png(l: &Loaded) {
    let canvas = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector("[data-testid='flame-canvas']")
                .ok()
                .flatten()
        })
        .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok());
    if let Some(url) = canvas.and_then(|c| c.to_data_url().ok()) {
        download_url(&format!("{}.png", file_stem(l)), &url);
    }
}

/// Downloads the zoomed frame as an interactive SVG (coloured by change when comparing).
fn export_svg(l: &Loaded, zoom: NodeId, palette: Palette) {
    let opts = SvgOptions {
        title: format!("{} — {}", l.profile.name(0), l.request.profile_event_type),
        unit: l.unit,
        palette,
        ..SvgOptions::default()
    };
    let diff = l.diff.as_deref().map(|values| SvgDiff {
        values,
        scale: color_scale(values),
    });
    download(
        &format!("{}.svg", file_stem(l)),
        "image/svg+xml",
        &render_svg_diff(&l.profile, zoom, &opts, diff),
    );
}

/// Downloads the profile on screen (transforms applied) as pprof, for `go tool pprof`; the
/// first time, the file reader that writes it loads meanwhile, and `notice` says so.
async fn export_pprof(l: &Loaded, notice: RwSignal<Option<Saved>>) {
    let loading = !file_reader_ready();
    if loading {
        notice.set(Some(Saved::Note(format!("{LOADING_FILE_READER}…"))));
    }
    let parts = pprof_export(l).await;
    if loading {
        notice.set(None);
    }
    if let Some(parts) = parts {
        download_parts(
            &format!("{}.pprof", file_stem(l)),
            "application/octet-stream",
            &parts,
        );
    }
}

/// The page's clipboard: `navigator.clipboard` is undefined outside a secure context, so it is
/// read as a plain value first.
fn clipboard() -> Option<web_sys::Clipboard> {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &"clipboard".into()).ok())
        .filter(|c| c.is_object())
        .map(|c| c.unchecked_into::<web_sys::Clipboard>())
}

/// Copies the summary `text` to the clipboard and says so; where the page may not (the
/// clipboard refused, or none outside a secure context), downloads it as `file_name` instead.
fn copy_summary(text: String, file_name: String, notice: RwSignal<Option<Saved>>) {
    // Written now, while the click still counts as the user's gesture; awaited after.
    let lines = text.lines().count();
    let clipboard = clipboard();
    let written = clipboard
        .as_ref()
        .map(|c| wasm_bindgen_futures::JsFuture::from(c.write_text(&text)));
    let fallback = move |why: &str| {
        download(&file_name, "text/plain", &text);
        notice.set(Some(Saved::Note(format!(
            "{why}: the summary was downloaded as {file_name}."
        ))));
    };
    let Some(written) = written else {
        fallback("This page has no clipboard");
        return;
    };
    spawn_local(async move {
        match written.await {
            Ok(_) => notice.set(Some(Saved::Note(format!(
                "Summary copied to the clipboard ({lines} lines)."
            )))),
            Err(_) => fallback("The clipboard was refused"),
        }
    });
}

/// The Export menu.
#[component]
pub fn ExportMenu(view: ViewState) -> impl IntoView {
    let saved = RwSignal::new(None::<Saved>);
    provide_context(saved);
    let theme = theme_state();
    let shown = move || view.shown.get_untracked();
    let png = move |_| {
        if let Some(l) = shown() {
            export_png(&l);
        }
    };
    let svg = move |_| {
        if let Some(l) = shown() {
            export_svg(&l, view.zoom.get_untracked(), theme.palette.get_untracked());
        }
    };
    let folded = move |_| {
        if let Some(l) = shown() {
            download(
                &format!("{}.folded", file_stem(&l)),
                "text/plain",
                &folded_export(&l),
            );
        }
    };
    let diff_folded = move |_| {
        if let Some((l, text)) = shown().and_then(|l| diff_folded_export(&l).map(|t| (l, t))) {
            download(
                &format!("{}.difffolded", file_stem(&l)),
                "text/plain",
                &text,
            );
        }
    };
    let pprof = move |_| {
        if let Some(l) = shown() {
            spawn_local(async move { export_pprof(&l, saved).await });
        }
    };
    let json = move |_| {
        // The response as received (before transforms), in the shape it came in.
        if let LoadState::Loaded(l) = view.load.get_untracked() {
            let body = response_json(&l.profile, l.shape, &l.request.profile_event_type);
            download(
                &format!("{}.json", file_stem(&l)),
                "application/json",
                &body,
            );
        }
    };
    let summary = move |_| {
        if let Some(text) = view.summary() {
            let stem = shown().map_or_else(|| "embers".to_owned(), |l| file_stem(&l));
            copy_summary(text, format!("{stem}-summary.txt"), saved);
        }
    };
    let comparing = move || {
        view.shown
            .with(|s| s.as_ref().is_some_and(|l| l.diff.is_some()))
    };
    view! {
        <details class="menu" data-testid="export-menu">
            <summary>"Export"</summary>
            <div class="menu-items">
                <button type="button" data-testid="export-png" on:click=png>"PNG (visible graph)"</button>
                <button type="button" data-testid="export-svg" on:click=svg>"SVG (interactive, zoomed frame)"</button>
                <button type="button" data-testid="export-folded" on:click=folded>"Folded stacks"</button>
                {move || comparing().then(|| view! {
                    <button type="button" data-testid="export-diff-folded" on:click=diff_folded>"Two-column folded stacks (baseline, comparison)"</button>
                })}
                <button type="button" data-testid="export-json" on:click=json>"ProfileTracing JSON"</button>
                <button type="button" data-testid="export-pprof" on:click=pprof>"pprof (go tool pprof)"</button>
                <button type="button" data-testid="export-summary" on:click=summary
                    title="The hottest functions and paths (or, comparing, what grew and shrank) as text, as the MCP tools write it">"Summary (copy as text)"</button>
                <SaveSnapshot />
                <ImportButton view=view />
            </div>
        </details>
        <SnapshotNotice saved=saved />
    }
}

/// What the menu last did: the snapshot saved, with its permalink (or why saving failed), or
/// where the summary went.
#[derive(Clone, Debug, PartialEq)]
enum Saved {
    Link(String),
    Failed(String),
    Note(String),
}

/// Saves what is shown (the answer as received, and its request) as a snapshot.
#[component]
fn SaveSnapshot() -> impl IntoView {
    let nav = use_context::<Navigator>();
    let saved = use_context::<RwSignal<Option<Saved>>>();
    let save = move |_| {
        let (Some(nav), Some(saved)) = (nav, saved) else {
            return;
        };
        let Some(answer) = nav.runner.last_answer.get_value() else {
            saved.set(Some(Saved::Failed(
                "Only a query's answer (up to 64 MiB) can be saved.".into(),
            )));
            return;
        };
        let base = nav.form.base_url.get_untracked();
        spawn_local(async move {
            let result = save_snapshot(&base, &answer.request, &answer.chunks).await;
            saved.set(Some(match result {
                Ok(meta) => Saved::Link(permalink(&meta.id)),
                Err(e) => Saved::Failed(format!("Could not save the snapshot: {e}")),
            }));
        });
    };
    let can_save = move || nav.is_some_and(|n| n.current.with(Option::is_some));
    view! {
        <button type="button" data-testid="save-snapshot" prop:disabled=move || !can_save()
            title="Keep this answer in Embers (it outlives the querier's retention) and get a permalink"
            on:click=save>"Save snapshot"</button>
    }
}

/// `https://host/path?snapshot=<id>`.
fn permalink(id: &str) -> String {
    let location = web_sys::window().map(|w| w.location());
    let origin = location
        .as_ref()
        .and_then(|l| l.origin().ok())
        .unwrap_or_default();
    let path = location.and_then(|l| l.pathname().ok()).unwrap_or_default();
    format!("{origin}{path}?snapshot={id}")
}

#[component]
fn SnapshotNotice(saved: RwSignal<Option<Saved>>) -> impl IntoView {
    move || {
        saved.get().map(|s| match s {
            Saved::Link(url) => view! {
                <span class="snapshot-notice" data-testid="snapshot-saved">
                    "Snapshot saved: " <a href=url.clone() data-testid="snapshot-link">{url.clone()}</a>
                    <button type="button" class="ghost small" on:click=move |_| saved.set(None)>"×"</button>
                </span>
            }.into_any(),
            Saved::Failed(why) => view! {
                <span class="snapshot-notice bad" data-testid="snapshot-failed">{why}
                    <button type="button" class="ghost small" on:click=move |_| saved.set(None)>"×"</button>
                </span>
            }.into_any(),
            Saved::Note(note) => view! {
                <span class="snapshot-notice" data-testid="export-notice" role="status">{note}
                    <button type="button" class="ghost small" on:click=move |_| saved.set(None)>"×"</button>
                </span>
            }.into_any(),
        })
    }
}

/// Where an opened file's progress shows: the status line (the file reader loading, the first
/// time, then reading).
fn progress_in(view: ViewState) -> impl Fn(String) {
    move |note| {
        view.set_progress(LoadState::Loading {
            started_ms: now_ms(),
            phase: Some(note),
        })
    }
}

/// A file picker for a saved response or folded stacks.
#[component]
pub fn ImportButton(view: ViewState) -> impl IntoView {
    let nav = use_context::<Navigator>();
    let pick = move |e: ev::Event| {
        let input: Option<web_sys::HtmlInputElement> = e.target().and_then(|t| t.dyn_into().ok());
        if let Some(file) = input
            .as_ref()
            .and_then(|i| i.files())
            .and_then(|f| f.get(0))
        {
            spawn_local(async move {
                show_imported(view, nav, import_file(file, &progress_in(view)).await)
            });
        }
        if let Some(i) = input {
            i.set_value("");
        }
    };
    view! {
        <label class="file" title="Open a saved ProfileTracing response (either shape), folded stacks, pprof (.pb.gz) or perf script output; or drop a file on the page">
            "Open a saved profile…"
            <input type="file" data-testid="import-file" accept=".json,.folded,.txt,.collapsed,.pb,.gz,.pprof,.perf,.jfr" on:change=pick />
        </label>
    }
}

/// Accepts a file dropped anywhere on the page.
#[component]
pub fn DropZone(view: ViewState) -> impl IntoView {
    let nav = use_context::<Navigator>();
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
            spawn_local(async move {
                show_imported(view, nav, import_file(file, &progress_in(view)).await)
            });
        }
    });
    on_cleanup(move || {
        over.remove();
        leave.remove();
        drop.remove();
    });
    move || {
        dragging.get().then(|| view! { <div class="drop-overlay" data-testid="drop-overlay">"Drop a saved ProfileTracing response, folded stacks, pprof or perf script"</div> })
    }
}
