//! The analysis bar: search (substring or regex, highlight or filter, step through matches),
//! view switches (icicle/flame, inverted, sandwich) and noise control as removable chips.

use embers_model::view::format::format_percent;
use embers_model::view::layout::Orientation;
use leptos::prelude::*;

use crate::session::navigator::Navigator;
use crate::state::view_spec::{Transform, TreeMode};
use crate::state::view_state::{Found, ViewState};

/// How a per-host graph names a process frame.
const PROCESS_PREFIX: &str = "[p] ";

/// Noise-control steps offered in the menu: (value, label, step).
fn noise_menu() -> [(&'static str, &'static str, Transform); 4] {
    [
        ("threads", "Fold [t] thread layer", Transform::FoldThreads),
        ("kernel0", "Hide kernel frames", Transform::KernelDepth(0)),
        (
            "kernel2",
            "Cap kernel depth at 2",
            Transform::KernelDepth(2),
        ),
        (
            "unresolved",
            "Collapse unresolved frames",
            Transform::CollapseUnresolved,
        ),
    ]
}

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

#[component]
fn NoiseControl(view: ViewState) -> impl IntoView {
    let add = move |t: Transform| {
        view.transforms.update(|ts| {
            // One kernel cap at a time; otherwise each step once.
            if matches!(t, Transform::KernelDepth(_)) {
                ts.retain(|x| !matches!(x, Transform::KernelDepth(_)));
            }
            if !ts.contains(&t) {
                ts.push(t);
            }
        })
    };
    let hide_text = RwSignal::new(String::new());
    view! {
        <select data-testid="noise-add" aria-label="Noise control"
            on:change=move |e| {
                let value = event_target_value(&e);
                if let Some((_, _, t)) = noise_menu().into_iter().find(|(v, _, _)| *v == value) {
                    add(t);
                }
                if value == "focus" {
                    if let Some(f) = view.selected.get_untracked() {
                        add(Transform::Focus(f));
                    }
                }
                // Back to the placeholder so the same step can be chosen again later.
                if let Some(el) = e.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlSelectElement>(t).ok()) {
                    el.set_value("");
                }
            }>
            <option value="" selected>"Noise control…"</option>
            {noise_menu().into_iter().map(|(v, label, _)| view! { <option value=v>{label}</option> }).collect_view()}
            <option value="focus" prop:disabled=move || view.selected.get().is_none()>"Focus on selected function"</option>
        </select>
        <input type="text" class="hide-input" data-testid="hide-pattern" placeholder="hide frames: a, b"
            aria-label="Hide frames whose name contains any of these terms"
            prop:value=move || hide_text.get()
            on:input=move |e| hide_text.set(event_target_value(&e))
            on:keydown=move |e| {
                if e.key() == "Enter" && !hide_text.get_untracked().trim().is_empty() {
                    e.prevent_default();
                    add(Transform::Hide(hide_text.get_untracked().trim().to_string()));
                    hide_text.set(String::new());
                }
            } />
    }
}

#[component]
fn Chips(view: ViewState) -> impl IntoView {
    move || {
        let transforms = view.transforms.get();
        (!transforms.is_empty()).then(|| {
            view! {
                <div class="chips" data-testid="chips">
                    {transforms.into_iter().enumerate().map(|(i, t)| view! {
                        <span class="chip" data-testid="chip">
                            {t.label()}
                            <button type="button" aria-label=format!("Remove {}", t.label())
                                on:click=move |_| view.transforms.update(|ts| { if i < ts.len() { ts.remove(i); } })>"×"</button>
                        </span>
                    }).collect_view()}
                    <button type="button" class="ghost small" on:click=move |_| view.transforms.set(Vec::new())>"Clear all"</button>
                </div>
            }
        })
    }
}
