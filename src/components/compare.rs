//! Comparing: the "Compare" menu that picks a baseline (the previous period, the same time
//! yesterday, a custom range, another filter or process, a saved snapshot, a file), and the bar
//! a comparison shows — what is compared with what, the colour legend and scale, normalised or
//! absolute, and a way back to one profile.

use embers_model::contract::snapshot::SnapshotMeta;
use embers_model::tree::diff::DiffMode;
use embers_model::view::color::{diff_color, Palette};
use embers_model::view::format::format_change;
use embers_model::view::paint::color_scale;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::components::theme::theme_state;
use crate::session::compare::BaselineSpec;
use crate::session::files::{import_file, Imported};
use crate::session::navigator::Navigator;
use crate::session::snapshot_meta::saved_snapshots;
use crate::session::time::{format_span, parse_local};
use crate::state::fetched::fetched;
use crate::state::loaded::LoadState;
use crate::state::view_state::ViewState;

/// The Compare menu (only with a profile from a query: a baseline replaces parts of it).
#[component]
pub fn CompareMenu(nav: Navigator) -> impl IntoView {
    let current = move || nav.current.get().map(|(_, r)| r);
    let pick = move |spec: Option<BaselineSpec>| {
        if let Some(spec) = spec {
            nav.compare_with(spec);
        }
        close_menus();
    };
    let (start, end) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let filter = RwSignal::new(String::new());
    let custom = move || {
        let range = match (
            parse_local(&start.get_untracked()),
            parse_local(&end.get_untracked()),
        ) {
            (Some(s), Some(e)) if s <= e => Some((s, e)),
            _ => None,
        };
        let filter = filter.get_untracked();
        (range.is_some() || !filter.trim().is_empty()).then(|| BaselineSpec {
            time_range: range,
            tag_filter: (!filter.trim().is_empty()).then(|| filter.trim().to_owned()),
            ..BaselineSpec::default()
        })
    };
    view! {
        <details class="menu" data-testid="compare-menu">
            <summary title="Compare this profile with a baseline">"Compare"</summary>
            <div class="menu-items compare-items">
                <button type="button" data-testid="compare-wall" prop:disabled=move || current().and_then(|r| BaselineSpec::wall(&r)).is_none()
                    title="This process's on-CPU and off-CPU time of the range in one graph (running + waiting)"
                    on:click=move |_| pick(current().and_then(|r| BaselineSpec::wall(&r)))>"Wall clock: on-CPU + off-CPU"</button>
                <button type="button" data-testid="compare-previous" prop:disabled=move || current().is_none()
                    on:click=move |_| pick(current().map(|r| BaselineSpec::previous_period(&r)))>"With the previous period"</button>
                <button type="button" data-testid="compare-yesterday" prop:disabled=move || current().is_none()
                    on:click=move |_| pick(current().map(|r| BaselineSpec::same_time_yesterday(&r)))>"With the same time yesterday"</button>
                <div class="menu-group">
                    <span class="menu-label">"With another range or filter"</span>
                    <input type="datetime-local" step="1" data-testid="compare-start" aria-label="Baseline start"
                        prop:value=move || start.get() on:input=move |e| start.set(event_target_value(&e)) />
                    <input type="datetime-local" step="1" data-testid="compare-end" aria-label="Baseline end"
                        prop:value=move || end.get() on:input=move |e| end.set(event_target_value(&e)) />
                    <input type="text" data-testid="compare-filter" placeholder="tag filter, e.g. pod='web-2'" spellcheck="false"
                        prop:value=move || filter.get() on:input=move |e| filter.set(event_target_value(&e)) />
                    <button type="button" data-testid="compare-apply" prop:disabled=move || current().is_none()
                        on:click=move |_| pick(custom())>"Compare"</button>
                </div>
                <SnapshotChoice nav=nav />
                <label class="file" title="A saved ProfileTracing response or folded stacks as the baseline">
                    "With a saved file…"
                    <input type="file" data-testid="compare-file" accept=".json,.folded,.txt,.collapsed"
                        on:change=move |e| {
                            let input: Option<web_sys::HtmlInputElement> = e.target().and_then(|t| t.dyn_into().ok());
                            if let Some(file) = input.as_ref().and_then(|i| i.files()).and_then(|f| f.get(0)) {
                                spawn_local(async move {
                                    // A baseline file is JSON or folded stacks, read on the page: no progress to show.
                                    match import_file(file, &|_| ()).await {
                                        Imported::One(state) => nav.compare_with_loaded(state),
                                        pair => nav.show_imported(pair),
                                    }
                                });
                                close_menus();
                            }
                        } />
                </label>
            </div>
        </details>
    }
}

/// The saved snapshots, newest first, to compare with.
#[component]
fn SnapshotChoice(nav: Navigator) -> impl IntoView {
    let list = fetched(move || {
        let base = nav.form.base_url.get();
        async move { saved_snapshots(&base).await }
    });
    let chosen = move |id: String| {
        if !id.is_empty() {
            nav.compare_with(BaselineSpec {
                snapshot: Some(id),
                ..BaselineSpec::default()
            });
            close_menus();
        }
    };
    view! {
        <select data-testid="compare-snapshot" aria-label="Compare with a saved snapshot"
            on:change=move |e| chosen(event_target_value(&e))>
            <option value="" selected>"With a saved snapshot…"</option>
            {move || list.get().unwrap_or_default().into_iter().map(|s: SnapshotMeta| view! {
                <option value=s.id.clone()>{s.name.clone()}</option>
            }).collect_view()}
        </select>
    }
}

/// Closes open dropdown menus (after a choice).
pub(crate) fn close_menus() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(open) = doc.query_selector_all("details.menu[open]") {
        for i in 0..open.length() {
            if let Some(el) = open
                .item(i)
                .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
            {
                let _ = el.remove_attribute("open");
            }
        }
    }
}

/// The bar of a comparison: what is compared, the legend, the mode, and the way out.
#[component]
pub fn DiffBar(nav: Navigator, view: ViewState) -> impl IntoView {
    let theme = theme_state();
    let scale = move || {
        view.shown
            .with(|s| s.as_ref().and_then(|l| l.diff.as_deref().map(color_scale)))
    };
    let described = move || {
        let name = view.baseline.with(|b| match b {
            Some(LoadState::Loaded(l)) => l.snapshot_name.clone(),
            _ => None,
        });
        nav.baseline.with(|b| {
            b.as_ref().map_or_else(
                || "a file".to_owned(),
                |b| b.describe(name.as_deref(), format_span),
            )
        })
    };
    let absolute = move || view.diff_mode.get() == DiffMode::Absolute;
    // A side without samples turns every frame into "gone" or "new": say so, or it looks like
    // a finding.
    let empty_side = move || {
        view.shown.with(|s| {
            let d = s.as_ref()?.diff.as_deref()?;
            match (d.baseline.root_total() == 0, d.comparison.root_total() == 0) {
                (_, true) => Some("The comparison has no samples: every frame is gone."),
                (true, false) => Some("The baseline has no samples: every frame is new."),
                _ => None,
            }
        })
    };
    move || {
        let scale = scale()?;
        let palette = theme.palette.get();
        Some(view! {
            <div class="diff-bar" data-testid="diff-bar">
                <span class="diff-what">"Compared with " <strong data-testid="baseline-label">{described}</strong></span>
                <DiffLegend scale=scale palette=palette />
                <button type="button" class="toggle" data-testid="diff-mode"
                    title="Compare shares of each profile's total (normalised) or the values themselves (absolute)"
                    on:click=move |_| view.diff_mode.update(|m| *m = if *m == DiffMode::Absolute { DiffMode::Normalized } else { DiffMode::Absolute })>
                    <span class:on=move || !absolute()>"Normalised"</span>
                    <span class:on=absolute>"Absolute"</span>
                </button>
                <button type="button" class="ghost small" data-testid="stop-comparing"
                    on:click=move |_| nav.stop_comparing()>"Stop comparing"</button>
                {move || empty_side().map(|t| view! { <span class="diff-empty" data-testid="diff-empty" role="status">{t}</span> })}
            </div>
        })
    }
}

/// A colour ramp from "shrank" through "unchanged" to "grew", with the scale at both ends.
#[component]
fn DiffLegend(scale: f64, palette: Palette) -> impl IntoView {
    let stops: Vec<String> = (-4..=4)
        .map(|i| diff_color(f64::from(i) / 4.0, palette).css())
        .collect();
    let gradient = format!("linear-gradient(90deg, {})", stops.join(", "));
    view! {
        <span class="diff-legend" data-testid="diff-legend" data-scale=scale>
            <span class="diff-end">{format!("shrank {}", format_change(-scale))}</span>
            <span class="diff-ramp" style:background=gradient></span>
            <span class="diff-end">{format!("{} grew", format_change(scale))}</span>
        </span>
    }
}
