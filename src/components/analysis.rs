//! The analysis bar: search (substring or regex, highlight or filter, step through matches),
//! view switches (icicle/flame, inverted, sandwich) and noise control (`noise`) as removable
//! chips.

use embers_model::view::format::format_percent;
use embers_model::view::layout::Orientation;
use leptos::prelude::*;

use crate::components::noise::{Chips, NoiseControl};
use crate::session::navigator::Navigator;
use crate::state::view_spec::TreeMode;
use crate::state::view_state::{Found, ViewState};

/// How a per-host graph names a process frame.
const PROCESS_PREFIX: &str = "[p] ";

/// The bar itself.
#[component]
pub fn AnalysisBar(view: ViewState) -> impl IntoView {
    view! {
        <div class="analysis" data-testid="analysis-bar">
            <SearchBox view=view />
            <span class="divider" aria-hidden="true"></span>
            <ViewSwitches view=view />
            <span class="divider" aria-hidden="true"></span>
            <NoiseControl view=view />
        </div>
        <Chips view=view />
    }
}

#[component]
fn SearchBox(view: ViewState) -> impl IntoView {
    let summary = move || {
        let root = view
            .shown
            .with(|s| s.as_ref().map_or(0, |l| l.profile.root_total()));
        match view.found.get() {
            Found::Invalid(err) => (true, format!("Invalid regex: {err}")),
            Found::Inactive => (false, String::new()),
            Found::Matches(f) if f.count == 0 => (false, "No matches".into()),
            Found::Matches(f) => (
                false,
                format!(
                    "{} match{} · {} of total",
                    f.count,
                    if f.count == 1 { "" } else { "es" },
                    format_percent(f.total, root)
                ),
            ),
        }
    };
    let step = move |forward: bool| {
        let Some(found) = view.found.with_untracked(|f| f.matches().cloned()) else {
            return;
        };
        let from = view.focused.get_untracked();
        let next = view.shown.with_untracked(|s| {
            let profile = &s.as_ref()?.profile;
            if forward {
                found.next_after(profile, from)
            } else {
                found.previous_before(profile, from)
            }
        });
        if let Some(node) = next {
            view.set_focus(Some(node));
            view.zoom_to(node);
            select_for_source(view, node);
        }
    };
    let set_text = move |text: String| view.search.update(|s| s.text = text);
    view! {
        <div class="search" role="search">
            <input type="search" data-testid="search" placeholder="Search functions: a, b  (press /)"
                aria-label="Search functions; comma-separated terms, or a regular expression"
                spellcheck="false" autocomplete="off"
                prop:value=move || view.search.get().text
                on:input=move |e| set_text(event_target_value(&e))
                on:keydown=move |e| {
                    if e.key() == "Enter" {
                        e.prevent_default();
                        step(!e.shift_key());
                    }
                } />
            <label class="check" title="Treat the search as a regular expression">
                <input type="checkbox" data-testid="search-regex" prop:checked=move || view.search.get().regex
                    on:change=move |e| view.search.update(|s| s.regex = event_target_checked(&e)) />
                ".*"
            </label>
            <label class="check" title="Keep only the stacks that contain a match">
                <input type="checkbox" data-testid="search-filter" prop:checked=move || view.search.get().filter
                    on:change=move |e| view.search.update(|s| s.filter = event_target_checked(&e)) />
                "Filter"
            </label>
            <button type="button" class="icon" data-testid="search-prev" title="Previous match (Shift+Enter)"
                prop:disabled=move || view.found.with(|f| f.matches().is_none_or(|f| f.count == 0))
                on:click=move |_| step(false)>"‹"</button>
            <button type="button" class="icon" data-testid="search-next" title="Next match (Enter)"
                prop:disabled=move || view.found.with(|f| f.matches().is_none_or(|f| f.count == 0))
                on:click=move |_| step(true)>"›"</button>
            <span class="search-summary" data-testid="search-summary" class:bad=move || summary().0>
                {move || summary().1}
            </span>
        </div>
    }
}

/// With the Source panel open, a search match is a selection: the panel shows its lines.
fn select_for_source(view: ViewState, node: embers_model::NodeId) {
    if view.source_open.get_untracked() {
        let name = view
            .shown
            .with_untracked(|s| s.as_ref().map(|l| l.profile.name(node).to_owned()));
        view.selected.set(name);
    }
}

#[component]
fn ViewSwitches(view: ViewState) -> impl IntoView {
    let flame = move || view.orientation.get() == Orientation::Flame;
    let inverted = move || view.mode.get() == TreeMode::Inverted;
    view! {
        <button type="button" data-testid="orientation-toggle" aria-pressed=move || flame().to_string()
            title="Root at the top (icicle) or at the bottom (flame)"
            on:click=move |_| view.orientation.update(|o| *o = if *o == Orientation::Flame { Orientation::Icicle } else { Orientation::Flame })>
            {move || if flame() { "Flame ▲" } else { "Icicle ▼" }}
        </button>
        <button type="button" data-testid="inverted-toggle" aria-pressed=move || inverted().to_string()
            class:active=inverted title="Bottom-up: start from the functions where time is spent"
            on:click=move |_| view.mode.update(|m| *m = if *m == TreeMode::Inverted { TreeMode::TopDown } else { TreeMode::Inverted })>
            "Inverted"
        </button>
        <button type="button" data-testid="sandwich-toggle" aria-pressed=move || view.sandwich_open.get().to_string()
            class:active=move || view.sandwich_open.get()
            prop:disabled=move || view.selected.get().is_none()
            title="Callers and callees of the selected function (select one in the table or click a frame)"
            on:click=move |_| view.sandwich_open.update(|o| *o = !*o)>
            "Sandwich"
        </button>
        <button type="button" data-testid="source-toggle" aria-pressed=move || view.source_open.get().to_string()
            class:active=move || view.source_open.get()
            title="Source lines of the selected function, below the graph (o)"
            on:click=move |_| view.source_open.update(|o| *o = !*o)>
            "Source"
        </button>
        <OpenProcess view=view />
    }
}

/// In a per-host graph, a selected `[p] process` frame opens that process's own profile for the
/// same range and filter.
#[component]
fn OpenProcess(view: ViewState) -> impl IntoView {
    let nav = use_context::<Navigator>();
    let process = move || {
        view.selected.with(|s| {
            s.as_deref()
                .and_then(|name| name.strip_prefix(PROCESS_PREFIX))
                .map(str::to_owned)
        })
    };
    move || {
        let (nav, name) = (nav?, process()?);
        let label = format!("Open {name} ›");
        Some(view! {
            <button type="button" data-testid="open-process" title="Its own flame graph, same range and filter"
                on:click=move |_| nav.open_process(&name)>{label}</button>
        })
    }
}
