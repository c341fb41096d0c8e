//! Everything below the form: toolbars, error, graph (or sandwich), table and status line,
//! driven by the view state. Embedders and tests can mount it with a state of their own.

use std::sync::Arc;

use embers_model::NodeId;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::analysis::AnalysisBar;
use crate::components::compare::{CompareMenu, DiffBar};
use crate::components::export_menu::ExportMenu;
use crate::components::graph::flame_graph::{FlameGraph, GraphMarks};
use crate::components::noise::transform_key;
use crate::components::panels::{Announcer, EmptyState, ErrorBanner, SandwichView, Shortcuts};
use crate::components::source::page::SourceView;
use crate::components::table::FunctionTable;
use crate::components::theme::{theme_state, ThemeSwitch};
use crate::components::toolbar::{StatusLine, Toolbar};
use crate::components::wall::WallBar;
use crate::session::embed::announce_selection;
use crate::session::navigator::Navigator;
use crate::state::loaded::{LoadState, Loaded};
use crate::state::view_state::ViewState;

/// Windows at least this wide (CSS px) open the function table by default.
const TABLE_DEFAULT_MIN_WIDTH_CSS: f64 = 1500.0;

/// The viewer of `view`.
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
    // An answer whose values are all zero has frames but nothing to draw (see `EmptyState`).
    let drawable = move || view.shown.get().filter(|l| l.profile.has_value());
    // The analysis bar stays up while a query runs: built once, not again for each answer, and
    // the graph below does not move when one arrives.
    let analysis_up = Memo::new(move |_| {
        view.shown
            .with(|s| s.as_ref().is_some_and(|l| l.profile.has_value()))
            || view.load.with(LoadState::is_loading)
    });
    let graph = move || match (drawable(), view.sandwich.get()) {
        (Some(_), Some(pair)) => {
            view! { <SandwichView view=view callers=pair.callers callees=pair.callees /> }
                .into_any()
        }
        (Some(l), None) => view! { <MainGraph view=view loaded=l /> }.into_any(),
        _ => view! { <EmptyState state=view.load.get() shown=view.shown.get() view=view /> }
            .into_any(),
    };
    // A memo: the table follows the shown profile itself; only opening or closing rebuilds it.
    let table_up = Memo::new(move |_| table_open.get() && drawable().is_some());
    // Below the graph, which gives it the room: only opening or closing rebuilds it.
    let source_up = Memo::new(move |_| view.source_open.get() && drawable().is_some());
    let nav = use_context::<Navigator>();
    let tools: ChildrenFn = Arc::new(move || {
        view! {
            {nav.map(|nav| view! { <CompareMenu nav=nav /> })}
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
        <Toolbar view=view extra=tools />
        {nav.map(|nav| view! { <DiffBar nav=nav view=view /> <WallBar nav=nav view=view /> })}
        {move || analysis_up.get().then(|| view! { <AnalysisBar view=view /> })}
        <ErrorBanner load=view.load />
        <div class="workspace">
            <main class="graph-area">
                {graph}
                {move || source_up.get().then(|| view! { <SourceView view=view /> })}
            </main>
            {move || table_up.get().then(|| view! { <FunctionTable view=view /> })}
        </div>
        <Announcer view=view />
        {move || help.get().then(|| view! { <Shortcuts close=move || help.set(false) /> })}
        <footer class="footer">
            <StatusLine load=view.load shown=view.shown />
            {move || view.transforms.with(|t| !t.is_empty()).then(|| view! { <span class="status-note">"transformed view"</span> })}
            {move || view.shown.get().and_then(|l| l.note.clone()).map(|n| view! { <span class="status-note" data-testid="view-note">{n}</span> })}
            {move || view.shown.get().and_then(|l| l.server_notice.clone()).map(|n| view! {
                <span class="status-note warn" data-testid="server-notice" title="What the service said about this answer">{n}</span>
            })}
        </footer>
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
            view.zoom_to(0);
            view.set_focus(None);
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
        "o" if !typing && !e.ctrl_key() && !e.meta_key() && !e.alt_key() => toggle_source(view),
        key if !typing
            && !e.ctrl_key()
            && !e.meta_key()
            && !e.alt_key()
            && transform_key(view, key) =>
        {
            e.prevent_default()
        }
        _ => {}
    }
}

/// Opens or closes the Source panel; opening it with a frame focused (the arrow keys) selects
/// that frame's function, so the keyboard alone reaches its lines.
fn toggle_source(view: ViewState) {
    let open = !view.source_open.get_untracked();
    if open {
        let focused = view.focused.get_untracked().and_then(|node| {
            view.shown
                .with_untracked(|s| s.as_ref().map(|l| l.profile.name(node).to_owned()))
        });
        if let Some(name) = focused {
            view.selected.set(Some(name));
        }
    }
    view.source_open.set(open);
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

/// The main graph with search/selection marks, keyboard focus, and click-to-select.
#[component]
fn MainGraph(view: ViewState, loaded: Arc<Loaded>) -> impl IntoView {
    // Name → function id is a scan over every name: do it when the selection changes, not on
    // every redraw (hover redraws read the marks too).
    let function_id = |names: RwSignal<Option<String>>| {
        let profile = loaded.clone();
        Memo::new(move |_| names.get().and_then(|n| profile.profile.function_id(&n)))
    };
    let (selected, highlighted) = (function_id(view.selected), function_id(view.highlighted));
    let marks = Signal::derive(move || GraphMarks {
        search: view.found.with(|f| f.matches().cloned()),
        selected: selected.get(),
        highlighted: highlighted.get(),
        focused: view.focused.get(),
    });
    let for_pick = loaded.clone();
    let pick = Callback::new(move |node: NodeId| {
        view.selected
            .set(Some(for_pick.profile.name(node).to_string()));
        announce_selection(&for_pick.profile, node);
    });
    view! {
        <FlameGraph loaded=loaded zoom=view.zoom on_zoom=Callback::new(move |n| view.zoom_to(n))
            metric=view.metric orientation=view.orientation marks=marks
            on_focus=Callback::new(move |n| view.set_focus(n)) on_pick=pick />
    }
}
