//! Smaller parts of the viewer: the sandwich view, the screen-reader announcer, the shortcut
//! sheet, the error banner and the empty state.

use std::sync::Arc;

use embers_model::view::format::{format_percent, format_value};
use embers_model::view::layout::Orientation;
use embers_model::NodeId;
use leptos::prelude::*;

use crate::components::export_menu::ImportButton;
use crate::components::graph::flame_graph::FlameGraph;
use crate::components::noise::TRANSFORM_KEYS;
use crate::state::loaded::{LoadState, Loaded};
use crate::state::view_state::ViewState;

/// Callers above (root at the bottom), callees below, of the selected function.
#[component]
pub fn SandwichView(view: ViewState, callers: Arc<Loaded>, callees: Arc<Loaded>) -> impl IntoView {
    let (zoom_up, zoom_down) = (RwSignal::new(0), RwSignal::new(0));
    let name = view.selected.get_untracked().unwrap_or_default();
    view! {
        <div class="sandwich" data-testid="sandwich">
            <div class="sandwich-label">{format!("Callers of {name}")}</div>
            <div class="sandwich-half">
                <FlameGraph loaded=callers zoom=zoom_up on_zoom=Callback::new(move |n| zoom_up.set(n))
                    metric=view.metric orientation=Orientation::Flame
                    testid="sandwich-callers" label="Callers of the selected function" />
            </div>
            <div class="sandwich-label">{format!("Callees of {name}")}</div>
            <div class="sandwich-half">
                <FlameGraph loaded=callees zoom=zoom_down on_zoom=Callback::new(move |n| zoom_down.set(n))
                    metric=view.metric
                    testid="sandwich-callees" label="Callees of the selected function" />
            </div>
        </div>
    }
}

/// A live region that reads out the frame with keyboard focus.
#[component]
pub fn Announcer(view: ViewState) -> impl IntoView {
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
pub fn Shortcuts(close: impl Fn() + Send + Sync + 'static) -> impl IntoView {
    const KEYS: [(&str, &str); 10] = [
        ("← →", "previous / next frame in the row"),
        ("↑ ↓", "parent / widest child"),
        ("Enter", "zoom into the focused frame"),
        ("Esc", "reset zoom and selection"),
        ("Home", "focus the zoomed frame"),
        ("/", "search"),
        (
            "o",
            "Source panel: the selected (or focused) function's lines",
        ),
        ("Enter / Shift+Enter in search", "next / previous match"),
        ("Tab", "move between the form, toolbar, graph and table"),
        ("?", "show or hide this sheet"),
    ];
    view! {
        <div class="shortcuts" role="dialog" aria-label="Keyboard shortcuts" data-testid="shortcuts">
            <h2>"Keyboard"</h2>
            <dl>{KEYS.iter().chain(TRANSFORM_KEYS.iter()).map(|(k, v)| view! { <dt><kbd>{*k}</kbd></dt><dd>{*v}</dd> }).collect_view()}</dl>
            <button type="button" on:click=move |_| close()>"Close"</button>
        </div>
    }
}

/// The error message of a failed query or import, with the page left usable.
#[component]
pub fn ErrorBanner(#[prop(into)] load: Signal<LoadState>) -> impl IntoView {
    move || match load.get() {
        LoadState::Failed(f) => view! {
            <div class="error" role="alert" data-testid="error">
                <strong>{f.headline()}</strong>
                <span>{f.message}</span>
            </div>
        }
        .into_any(),
        _ => ().into_any(),
    }
}

/// What the graph area shows when there is no graph: `state` says why, `shown` is what a
/// loaded answer became (frames without any value are not an empty match).
#[component]
pub fn EmptyState(state: LoadState, shown: Option<Arc<Loaded>>, view: ViewState) -> impl IntoView {
    let frames = shown.map_or(0, |l| l.profile.node_count());
    let text = match state {
        LoadState::Idle => {
            "Choose a process (or the whole host) and a time range, then press Enter.".into()
        }
        LoadState::Loading { .. } => "Querying…".into(),
        LoadState::Loaded(_) if frames > 0 => all_zero_text(frames),
        LoadState::Loaded(_) => {
            "No samples in this range. Widen the time range or loosen the tag filter.".into()
        }
        LoadState::Failed(_) => "No profile to show.".into(),
        LoadState::Cancelled => "Cancelled. Press Enter to run the query again.".into(),
    };
    view! {
        <div class="empty-state" data-testid="empty-state" data-zero=(frames > 0).then_some("true")>
            <p>{text}</p>
            <ImportButton view=view />
        </div>
    }
}

fn all_zero_text(frames: usize) -> String {
    format!(
        "The answer has {frames} frames, but every value in it is 0, so there is nothing to \
         draw. DeepFlow v6.5 drops leaf frames whose names end in a multi-byte character \
         (e.g. Chinese), which can leave every value 0: check the querier's version."
    )
}
