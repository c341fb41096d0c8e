//! The page: query form, toolbar, flame graph; and the query runner that connects them.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use embers_model::format::{format_percent, format_value};
use embers_model::layout::Orientation;
use embers_model::request::ProfileRequest;
use embers_model::wire::decode_response_table;
use embers_model::NodeId;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use web_sys::AbortController;

use crate::api::{post_profile_tracing, ApiError, QUERY_TIMEOUT_MS};
use crate::components::analysis::AnalysisBar;
use crate::components::export::{DropZone, ExportMenu, ImportButton};
use crate::components::flame_graph::FlameGraph;
use crate::components::query_form::{FormState, QueryForm};
use crate::components::table::FunctionTable;
use crate::components::theme::{theme_state, ThemeSwitch};
use crate::components::toolbar::{is_import_failure, StatusLine, Toolbar};
use crate::render::Overlay;
use crate::state::{LoadState, Loaded};
use crate::time::{now_ms, yield_to_paint};
use crate::view::ViewSpec;
use crate::view_state::ViewState;

/// Runs queries: one at a time, cancellable, the newest winning.
#[derive(Clone, Copy)]
pub struct QueryRunner {
    /// Where the query stands.
    pub load: RwSignal<LoadState>,
    zoom: RwSignal<NodeId>,
    inflight: StoredValue<Option<AbortController>, LocalStorage>,
    generation: StoredValue<u64>,
}

impl QueryRunner {
    fn new(load: RwSignal<LoadState>, zoom: RwSignal<NodeId>) -> QueryRunner {
        QueryRunner {
            load,
            zoom,
            inflight: StoredValue::new_local(None),
            generation: StoredValue::new(0),
        }
    }

    /// Starts `request` against `base_url`, cancelling any query still running.
    pub fn run(self, base_url: String, request: ProfileRequest) {
        self.abort_inflight();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        let Ok(controller) = AbortController::new() else {
            self.load.set(LoadState::Failed(
                "This browser cannot run cancellable requests.".into(),
            ));
            return;
        };
        let signal = controller.signal();
        let timed_out = Rc::new(Cell::new(false));
        let timer = {
            let (timed_out, controller) = (timed_out.clone(), controller.clone());
            set_timeout_with_handle(
                move || {
                    timed_out.set(true);
                    controller.abort();
                },
                Duration::from_millis(u64::from(QUERY_TIMEOUT_MS)),
            )
            .ok()
        };
        self.inflight.set_value(Some(controller));
        let started_ms = now_ms();
        self.load.set(LoadState::Loading {
            started_ms,
            phase: None,
        });
        spawn_local(async move {
            let result = post_profile_tracing(&base_url, &request, &signal).await;
            if let Some(timer) = timer {
                timer.clear();
            }
            // A newer query or a cancel has taken over: drop this answer.
            if self.generation.get_value() != generation {
                return;
            }
            self.inflight.set_value(None);
            let state = match result {
                Ok(raw) => {
                    // Decoding a big answer blocks the page for a moment: say so first, and
                    // let the browser paint that before starting.
                    if raw.body.len() >= DECODE_NOTICE_MIN_BYTES {
                        let phase = format!("Decoding {}", format_bytes_len(raw.body.len()));
                        self.load.set(LoadState::Loading {
                            started_ms,
                            phase: Some(phase),
                        });
                        yield_to_paint().await;
                        if self.generation.get_value() != generation {
                            return;
                        }
                    }
                    decode_owned_body(raw.status, raw.body, request)
                }
                Err(_) if timed_out.get() => LoadState::Failed(ApiError::TimedOut.to_string()),
                Err(e) => LoadState::Failed(e.to_string()),
            };
            self.zoom.set(0);
            self.load.set(state);
        });
    }

    /// Cancels the running query, if any.
    pub fn cancel(self) {
        if self.abort_inflight() {
            self.generation.update_value(|g| *g += 1);
            self.load.set(LoadState::Cancelled);
        }
    }

    fn abort_inflight(self) -> bool {
        let mut aborted = false;
        self.inflight.update_value(|slot| {
            if let Some(c) = slot.take() {
                c.abort();
                aborted = true;
            }
        });
        aborted
    }
}

/// Bodies at least this big get a "Decoding…" status before decoding (smaller ones decode
/// faster than a frame, so the notice would only add a frame of delay).
const DECODE_NOTICE_MIN_BYTES: usize = 1 << 20;

/// `26.1 MB`-style size of a body.
fn format_bytes_len(n: usize) -> String {
    if n < 1_000_000 {
        format!("{:.0} kB", n as f64 / 1e3)
    } else {
        format!("{:.1} MB", n as f64 / 1e6)
    }
}

/// Decodes a body into the state to show (a profile, possibly empty, or an error).
pub fn decode_to_state(status: u16, body: &str, request: ProfileRequest) -> LoadState {
    decode_owned_body(status, body.to_string(), request)
}

/// Like [`decode_to_state`], but frees the body as soon as the node table no longer needs it,
/// so a big response and its tree are not both in memory at the peak.
pub fn decode_owned_body(status: u16, body: String, request: ProfileRequest) -> LoadState {
    let started = now_ms();
    let decoded = decode_response_table(status, &body);
    drop(body);
    match decoded {
        Ok(table) => {
            let decoded = table.build();
            LoadState::Loaded(Arc::new(Loaded::new(
                decoded.profile,
                request,
                decoded.shape,
                now_ms() - started,
            )))
        }
        Err(e) => LoadState::Failed(e.to_string()),
    }
}

/// Windows at least this wide (CSS px) open the function table by default.
const TABLE_DEFAULT_MIN_WIDTH_CSS: f64 = 1500.0;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    // Owned by the app root, so every component shares one theme for the page's life.
    theme_state();
    let load = RwSignal::new(LoadState::Idle);
    let page = crate::url::page_params();
    let spec = ViewSpec::from_params(page.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let embed = page.iter().any(|(k, v)| k == "embed" && v != "0");
    let view = ViewState::new(load, spec);
    let runner = QueryRunner::new(load, view.zoom);
    let form = FormState::from_page();
    crate::embed::listen(view, runner, form);
    crate::url::sync_view_to_url(view, form, embed);

    if form.run_on_load {
        if let Ok(req) = form.to_request() {
            runner.run(form.base_url.get_untracked(), req);
        }
    }

    view! {
        <div class="app" class:embedded=embed>
            {(!embed).then(|| view! {
                <header class="topbar">
                    <div class="brand" aria-label="Embers">
                        <span class="brand-mark" aria-hidden="true"></span>
                        "Embers"
                    </div>
                    <QueryForm form=form runner=runner />
                </header>
            })}
            <Viewer view=view />
        </div>
    }
}

/// Everything below the form: toolbars, error, graph (or sandwich), table and status line,
/// driven by `view.load`. Embedders and tests can mount it with a profile they decoded themselves.
#[component]
pub fn Viewer(view: ViewState) -> impl IntoView {
    theme_state();
    let help = RwSignal::new(false);
    // The table shares the width with the graph: open it by default only on wide windows.
    let wide = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|w| w.as_f64())
        .is_some_and(|w| w >= TABLE_DEFAULT_MIN_WIDTH_CSS);
    let table_open = RwSignal::new(wide);
    let keys = window_event_listener(ev::keydown, move |e| global_key(view, help, &e));
    on_cleanup(move || keys.remove());
    let graph = move || match view.shown.get() {
        Some(l) if !l.profile.is_empty() => match view.sandwich() {
            Some((callers, callees)) => {
                view! { <SandwichView view=view callers=callers callees=callees /> }.into_any()
            }
            None => view! { <MainGraph view=view loaded=l /> }.into_any(),
        },
        _ => view! { <EmptyState state=view.load.get() view=view /> }.into_any(),
    };
    let table_toggle: ChildrenFn = Arc::new(move || {
        view! {
            <ExportMenu view=view />
            <button type="button" data-testid="table-toggle" aria-pressed=move || table_open.get().to_string()
                class:active=move || table_open.get() title="Show or hide the function table"
                on:click=move |_| table_open.update(|o| *o = !*o)>"Table"</button>
            <ThemeSwitch />
            <button type="button" class="icon" data-testid="help-toggle" title="Keyboard shortcuts (?)"
                on:click=move |_| help.update(|h| *h = !*h)>"?"</button>
        }
        .into_any()
    });
    view! {
            <Toolbar view=view extra=table_toggle />
            {move || view.shown.get().filter(|l| !l.profile.is_empty()).map(|_| view! { <AnalysisBar view=view /> })}
            <ErrorBanner load=view.load />
            <div class="workspace">
                <main class="graph-area">{graph}</main>
                {move || (table_open.get() && view.shown.get().is_some_and(|l| !l.profile.is_empty()))
                    .then(|| view! { <FunctionTable view=view /> })}
            </div>
            <Announcer view=view />
            {move || help.get().then(|| view! { <Shortcuts close=move || help.set(false) /> })}
            <footer class="footer">
                <StatusLine load=view.load shown=view.shown />
    {move || view.transforms.with(|t| !t.is_empty()).then(|| view! { <span class="status-note">"transformed view"</span> })}
                {move || view.shown.get().and_then(|l| l.note.clone()).map(|n| view! { <span class="status-note" data-testid="view-note">{n}</span> })}
            </footer>
            <DropZone view=view />
        }
}

/// Page-wide keys: Esc resets (or closes help), `/` focuses the search, `?` toggles help.
fn global_key(view: ViewState, help: RwSignal<bool>, e: &web_sys::KeyboardEvent) {
    let typing = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"));
    match e.key().as_str() {
        "Escape" if help.get_untracked() => help.set(false),
        "Escape" => {
            view.zoom.set(0);
            view.focused.set(None);
            // The selection feeds the sandwich; while that is open, keep it.
            if !view.sandwich_open.get_untracked() {
                view.selected.set(None);
            }
        }
        "/" if !typing => {
            e.prevent_default();
            focus_testid("search");
        }
        "?" if !typing => help.update(|h| *h = !*h),
        _ => {}
    }
}

fn focus_testid(id: &str) {
    let el = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector(&format!("[data-testid='{id}']"))
                .ok()
                .flatten()
        })
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(el) = el {
        let _ = el.focus();
    }
}

/// The main graph with search/selection overlay, keyboard focus, and click-to-select.
#[component]
fn MainGraph(view: ViewState, loaded: Arc<Loaded>) -> impl IntoView {
    let for_overlay = loaded.clone();
    let overlay = Signal::derive(move || Overlay {
        search: view.found.get(),
        selected: view
            .selected
            .get()
            .and_then(|n| for_overlay.profile.function_id(&n)),
        highlighted: view
            .highlighted
            .get()
            .and_then(|n| for_overlay.profile.function_id(&n)),
        focused: view.focused.get(),
    });
    let for_pick = loaded.clone();
    let pick = Callback::new(move |node: NodeId| {
        view.selected
            .set(Some(for_pick.profile.name(node).to_string()));
        crate::embed::announce_selection(&for_pick.profile, node);
    });
    view! {
        <FlameGraph loaded=loaded zoom=view.zoom metric=view.metric orientation=view.orientation
            overlay=overlay focused=view.focused on_pick=pick />
    }
}

/// Callers above (root at the bottom), callees below, of the selected function.
#[component]
fn SandwichView(view: ViewState, callers: Arc<Loaded>, callees: Arc<Loaded>) -> impl IntoView {
    let (zoom_up, zoom_down) = (RwSignal::new(0), RwSignal::new(0));
    let name = view.selected.get_untracked().unwrap_or_default();
    view! {
        <div class="sandwich" data-testid="sandwich">
            <div class="sandwich-label">{format!("Callers of {name}")}</div>
            <div class="sandwich-half">
                <FlameGraph loaded=callers zoom=zoom_up metric=view.metric orientation=Orientation::Flame
                    testid="sandwich-callers" label="Callers of the selected function" />
            </div>
            <div class="sandwich-label">{format!("Callees of {name}")}</div>
            <div class="sandwich-half">
                <FlameGraph loaded=callees zoom=zoom_down metric=view.metric
                    testid="sandwich-callees" label="Callees of the selected function" />
            </div>
        </div>
    }
}

/// A live region that reads out the frame with keyboard focus.
#[component]
fn Announcer(view: ViewState) -> impl IntoView {
    let text = move || {
        let node = view.focused.get()?;
        let shown = view.shown.get()?;
        let p = &shown.profile;
        (node < p.node_count() as NodeId).then(|| {
            format!(
                "{}, {} frame, total {} ({}), self {} ({}), depth {}",
                p.name(node),
                p.kind(node).label(),
                format_value(p.total(node), shown.unit),
                format_percent(p.total(node), p.root_total()),
                format_value(p.self_value(node), shown.unit),
                format_percent(p.self_value(node), p.root_total()),
                p.depth(node)
            )
        })
    };
    view! { <div class="sr-only" aria-live="polite" data-testid="announcer">{text}</div> }
}

/// The keyboard shortcut sheet.
#[component]
fn Shortcuts(close: impl Fn() + Send + Sync + 'static) -> impl IntoView {
    const KEYS: [(&str, &str); 9] = [
        ("← →", "previous / next frame in the row"),
        ("↑ ↓", "parent / widest child"),
        ("Enter", "zoom into the focused frame"),
        ("Esc", "reset zoom and selection"),
        ("Home", "focus the zoomed frame"),
        ("/", "search"),
        ("Enter / Shift+Enter in search", "next / previous match"),
        ("Tab", "move between the form, toolbar, graph and table"),
        ("?", "show or hide this sheet"),
    ];
    view! {
        <div class="shortcuts" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts">
            <h2>"Keyboard"</h2>
            <dl>{KEYS.iter().map(|(k, v)| view! { <dt><kbd>{*k}</kbd></dt><dd>{*v}</dd> }).collect_view()}</dl>
            <button type="button" on:click=move |_| close()>"Close"</button>
        </div>
    }
}

/// The error message of a failed query, with the page left usable.
#[component]
fn ErrorBanner(load: RwSignal<LoadState>) -> impl IntoView {
    move || {
        match load.get() {
        LoadState::Failed(message) => view! {
            <div class="error" role="alert" data-testid="error">
                <strong>{if is_import_failure(&message) { "Import failed. " } else { "Query failed. " }}</strong>
                <span>{message}</span>
            </div>
        }
        .into_any(),
        _ => ().into_any(),
    }
    }
}

/// What the graph area shows when there is no graph.
#[component]
fn EmptyState(state: LoadState, view: ViewState) -> impl IntoView {
    let text = match state {
        LoadState::Idle => {
            "Choose a process (or the whole host) and a time range, then press Enter."
        }
        LoadState::Loading { .. } => "Querying…",
        LoadState::Loaded(_) => {
            "No samples in this range. Widen the time range or loosen the tag filter."
        }
        LoadState::Failed(_) => "No profile to show.",
        LoadState::Cancelled => "Cancelled. Press Enter to run the query again.",
    };
    view! {
        <div class="empty-state" data-testid="empty-state">
            <p>{text}</p>
            <ImportButton view=view />
        </div>
    }
}
