//! The bar above the graph (metric toggle, reset, zoom path, legend, warnings) and the status
//! line below it.

use std::time::Duration;

use embers_model::tree::stats::top_packages;
use embers_model::view::color::{kind_color, package_key_color, ColorBy};
use embers_model::view::format::{format_count, format_value};
use embers_model::view::names::shorten;
use leptos::prelude::*;

use embers_model::view::paint::Metric;

use crate::components::zoom_path::ZoomPath;
use crate::session::time::now_ms;
use crate::state::loaded::{LoadState, Loaded, Origin};
use crate::state::view_state::ViewState;

/// Toolbar above the graph, up while a profile with frames is shown or a query runs (so the
/// graph below does not move when the answer arrives, and the bar is not rebuilt for it).
#[component]
pub fn Toolbar(view: ViewState, #[prop(optional)] extra: Option<ChildrenFn>) -> impl IntoView {
    let metric = view.metric;
    let loaded = move || view.shown.get().filter(|l| !l.profile.is_empty());
    let up = Memo::new(move |_| {
        view.shown
            .with(|s| s.as_ref().is_some_and(|l| !l.profile.is_empty()))
            || view.load.with(LoadState::is_loading)
    });
    let about = move || {
        loaded().map(|l| {
            // Data warnings belong to the response, not to a transformed view of it.
            let warnings = match view.load.get_untracked() {
                LoadState::Loaded(base) => base,
                _ => l.clone(),
            };
            view! {
                <Warnings loaded=warnings />
                {(l.diff.is_none() && l.wall.is_none()).then(|| view! { <Legend loaded=l.clone() /> })}
            }
        })
    };
    move || {
        let extra = extra.clone();
        up.get().then(|| {
            view! {
                <div class="toolbar">
                    <button type="button" class="toggle" data-testid="metric-toggle"
                        data-metric=move || metric.get().as_str()
                        aria-pressed=move || (metric.get() == Metric::Self_).to_string()
                        title="Switch between total and self time (labels, tooltip, shading)"
                        on:click=move |_| metric.update(|m| *m = m.toggled())>
                        <span class:on=move || metric.get() == Metric::Total>"Total"</span>
                        <span class:on=move || metric.get() == Metric::Self_>"Self"</span>
                    </button>
                    <button type="button" data-testid="reset-zoom" title="Reset zoom (Esc)"
                        prop:disabled=move || view.zoom.get() == 0
                        on:click=move |_| view.zoom_to(0)>"Reset"</button>
                    <ZoomPath view=view />
                    {about}
                    {extra.map(|e| e())}
                </div>
            }
        })
    }
}

/// The colour legend: the frame kinds, or the busiest packages when colouring by package, with
/// the switch between the two.
#[component]
fn Legend(loaded: std::sync::Arc<Loaded>) -> impl IntoView {
    let theme = crate::components::theme::theme_state();
    let by_package = move || theme.color_by.get() == ColorBy::Package;
    let packages: Vec<String> = top_packages(&loaded.profile, LEGEND_PACKAGES)
        .into_iter()
        .map(|(name, _)| name.to_owned())
        .collect();
    let kinds = loaded.kinds.clone();
    view! {
        <button type="button" class="toggle" data-testid="color-by"
            aria-pressed=move || by_package().to_string()
            title="Colour frames by their kind, or by their package or namespace (one colour per package)"
            on:click=move |_| theme.color_by.update(|c| *c = if *c == ColorBy::Package { ColorBy::Kind } else { ColorBy::Package })>
            <span class:on=move || !by_package()>"Kind"</span>
            <span class:on=by_package>"Package"</span>
        </button>
        <ul class="legend" aria-label="Colours" data-testid="legend">
            {move || if by_package() {
                packages.iter().map(|name| {
                    let name = name.clone();
                    let color = package_key_color(&name, theme.palette.get()).css();
                    view! { <li title=name.clone()><span class="swatch" style:background=color></span>{shorten(&name, 18).map(|s| s.into_owned()).unwrap_or_default()}</li> }
                }).collect_view().into_any()
            } else {
                kinds.iter().map(|k| {
                    let k = *k;
                    view! {
                        <li><span class="swatch" style:background=move || kind_color(k, theme.palette.get()).css()></span>{k.label()}</li>
                    }
                }).collect_view().into_any()
            }}
        </ul>
    }
}

/// Packages shown in the legend at most.
const LEGEND_PACKAGES: usize = 5;

#[component]
fn Warnings(loaded: std::sync::Arc<Loaded>) -> impl IntoView {
    let w = loaded.profile.warnings().clone();
    let total = w.total();
    (total > 0).then(|| {
        view! {
            <details class="warnings" data-testid="warnings">
                <summary>{format!("{total} data warning{}", if total == 1 { "" } else { "s" })}</summary>
                <ul>
                    {w.lines().into_iter().map(|(n, text)| view! { <li>{format!("{n} {text}")}</li> }).collect_view()}
                </ul>
            </details>
        }
    })
}

/// One line saying what is shown (node count, root total) or what is happening.
#[component]
pub fn StatusLine(
    #[prop(into)] load: Signal<LoadState>,
    /// The displayed profile (after transforms), described instead of the raw response.
    #[prop(optional)]
    shown: Option<Memo<Option<std::sync::Arc<Loaded>>>>,
) -> impl IntoView {
    // Ticks while a query runs so the elapsed time moves.
    let now = RwSignal::new(now_ms());
    let ticker = set_interval_with_handle(
        move || {
            if load.with_untracked(LoadState::is_loading) {
                now.set(now_ms());
            }
        },
        Duration::from_millis(100),
    )
    .ok();
    on_cleanup(move || {
        if let Some(t) = ticker {
            t.clear();
        }
    });
    let text = move || match load.get() {
        LoadState::Idle => "Ready.".to_string(),
        LoadState::Loading { started_ms, phase } => format!(
            "{}… {:.1} s",
            phase.as_deref().unwrap_or("Querying"),
            ((now.get() - started_ms) / 1000.0).max(0.0)
        ),
        LoadState::Cancelled => "Cancelled.".to_string(),
        LoadState::Failed(f) if f.origin == Origin::Import => "The last import failed.".to_string(),
        LoadState::Failed(f) if f.origin == Origin::Baseline => "The baseline failed.".to_string(),
        LoadState::Failed(_) => "The last query failed.".to_string(),
        LoadState::Loaded(l) if l.profile.is_empty() => "No samples in this range.".to_string(),
        LoadState::Loaded(base) => {
            let view = shown.and_then(|s| s.get()).unwrap_or_else(|| base.clone());
            loaded_status(&view, base.decode_ms)
        }
    };
    let busy = move || load.with(LoadState::is_loading);
    view! {
        <div class="status" data-testid="status" role="status" aria-live="polite" aria-busy=move || busy().to_string()>
            {move || busy().then(|| view! { <span class="spinner" aria-hidden="true"></span> })}
            {text}
        </div>
    }
}

fn loaded_status(l: &Loaded, decode_ms: f64) -> String {
    let p = &l.profile;
    let root = p.name(0);
    let shape = l.shape.map(|s| format!(" · shape {}", s.letter()));
    // A comparison reads its own total, then the baseline's; a wall-clock view its two parts.
    let (value, baseline) = match (&l.diff, &l.wall) {
        (Some(d), _) => (
            d.comparison.root_total(),
            format!(
                " (baseline {})",
                format_value(d.baseline.root_total(), l.unit)
            ),
        ),
        (None, Some(w)) => (
            p.root_total(),
            format!(
                " (running {} + waiting {})",
                format_value(w.running.root_total(), l.unit),
                format_value(w.waiting.root_total(), l.unit)
            ),
        ),
        (None, None) => (p.root_total(), String::new()),
    };
    format!(
        "{root}: {} nodes · {} functions · depth {} · {}{}{baseline}{} · decoded in {:.0} ms",
        format_count(p.node_count() as u64),
        format_count(p.function_count() as u64),
        p.max_depth(),
        format_value(value, l.unit),
        l.value_words(),
        shape.unwrap_or_default(),
        decode_ms
    )
}
