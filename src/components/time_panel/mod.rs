//! Time inside the range, above a process's graph (issue 37): a row that opens the heatmap or
//! the stack chart and says which window the graph shows, and the view itself.
//!
//! An on-demand view (`crate::on_demand`): this is the page's side, the row and the views'
//! host. It sends the views the profile's question, the time state (from the URL), the search
//! and the theme, and carries out their events through the navigator (a window opens the
//! graph of exactly its samples, a second one compares with it; the chart's zoom and thread go
//! into the URL). The views ask the service themselves and are built into their own module
//! (`src/bin/time_view.rs`, [`module`]), loaded the first time one of them opens. [`interface`]
//! is all the two sides say to each other.

pub mod interface;
pub mod module;

use embers_model::view::color::Palette;
use leptos::prelude::*;

use crate::components::heatmap::format_ms_span;
use crate::components::theme::theme_state;
use crate::on_demand::host::OnDemand;
use crate::session::compare::BaselineSpec;
use crate::session::fine::TimeView;
use crate::session::navigator::Navigator;
use interface::{TimeEvent, TimeInput, TimeViewKind, TIME_VIEW};

/// The row and the open time view.
#[component]
pub fn TimePanel(nav: Navigator) -> impl IntoView {
    // A memo: `current` is set again (to an equal value) by every window opened.
    let current = Memo::new(move |_| nav.current.get());
    let view = Memo::new(move |_| nav.time.with(|t| t.view));
    let window = Memo::new(move |_| nav.time.with(|t| t.window));
    // The host stays while one view replaces the other: the module is asked to switch.
    let open = Memo::new(move |_| view.get() != TimeView::Off);
    let toggle = move |v: TimeView| {
        nav.time.update(|t| {
            t.view = if t.view == v { TimeView::Off } else { v };
        })
    };
    let pressed = move |v: TimeView| move || (view.get() == v).to_string();
    let whole = move |_| {
        if let Some((base, request)) = current.get_untracked() {
            nav.time.update(|t| (t.window, t.chart) = (None, None));
            nav.open_profile(base, request);
        }
    };
    // Only a question's graph has times to read (not a file, not a snapshot).
    let asked = Memo::new(move |_| current.with(Option::is_some));
    move || {
        asked.get().then(|| view! {
            <section class="time-panel" aria-label="Time inside the range">
                <div class="timeline-tools time-tools">
                    <button type="button" class="ghost small" data-testid="heatmap-toggle" aria-pressed=pressed(TimeView::Heatmap)
                        class:active=move || view.get() == TimeView::Heatmap title="Samples per second and sub-second slot"
                        on:click=move |_| toggle(TimeView::Heatmap)>"Heatmap"</button>
                    <button type="button" class="ghost small" data-testid="stack-chart-toggle" aria-pressed=pressed(TimeView::StackChart)
                        class:active=move || view.get() == TimeView::StackChart title="Stacks over time, thread by thread"
                        on:click=move |_| toggle(TimeView::StackChart)>"Stack chart"</button>
                    {move || window.get().map(|(a, b)| view! {
                        <span class="time-window" data-testid="time-window">{format!("Graph of {} ({} ms)", format_ms_span(a, b), b - a)}</span>
                        <button type="button" class="ghost small" data-testid="time-window-clear" on:click=whole>"Whole range"</button>
                    })}
                </div>
                {move || open.get().then(|| view! { <TimeViews nav=nav current=current /> })}
            </section>
        })
    }
}

type Current = Memo<Option<(String, embers_model::contract::request::ProfileRequest)>>;

/// The open time view, loaded on demand.
#[component]
fn TimeViews(nav: Navigator, current: Current) -> impl IntoView {
    let theme = theme_state();
    // A memo: the page's state set again to an equal value sends nothing.
    let input = Memo::new(move |_| {
        let (base_url, request) = current.get().unwrap_or_default();
        let t = nav.time.get();
        let input = TimeInput {
            view: match t.view {
                TimeView::StackChart => TimeViewKind::StackChart,
                TimeView::Heatmap | TimeView::Off => TimeViewKind::Heatmap,
            },
            base_url,
            request,
            window: t.window,
            baseline: nav.baseline.with(|b| b.as_ref().and_then(|b| b.window)),
            chart: t.chart,
            thread: t.thread,
            search: nav.runner.view.search.with(|s| s.text.clone()),
            dark: theme.is_dark(),
            colorblind: theme.palette.get() == Palette::ColorBlind,
        };
        // Plain data of strings and numbers: it always serializes.
        serde_json::to_string(&input).unwrap_or_default()
    });
    let on_event =
        Callback::new(
            move |json: String| match serde_json::from_str::<TimeEvent>(&json) {
                Ok(event) => act(nav, event),
                Err(e) => web_sys::console::error_1(&format!("time view event: {e}").into()),
            },
        );
    view! { <OnDemand module=TIME_VIEW input=input on_event=on_event /> }
}

/// Carries out what a time view asks.
fn act(nav: Navigator, event: TimeEvent) {
    match event {
        TimeEvent::Open(a, b) => nav.open_window((a, b)),
        TimeEvent::Baseline(a, b) => nav.compare_with(BaselineSpec {
            window: Some((a, b)),
            ..BaselineSpec::default()
        }),
        TimeEvent::Chart(a, b) => nav.time.update(|t| t.chart = Some((a, b))),
        TimeEvent::Thread(i) => nav.time.update(|t| t.thread = i),
    }
}
