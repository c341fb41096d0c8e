//! Time inside the range, above a process's graph (issue 37): a row that opens the heatmap or
//! the stack chart and says which window the graph shows, and the view itself. This is the
//! page's side (the host): it asks the service (`/v1/profile/heatmap`, `/v1/profile/samples`),
//! hands the answers to the self-contained views (`heatmap`, `stack_chart`) and carries out
//! their events through the navigator (a window opens the graph of exactly its samples, a
//! second one compares with it; the chart's zoom and thread go into the URL).

use std::rc::Rc;

use embers_model::contract::fine::heatmap::ValueKind;
use embers_model::contract::fine::{Resolution, MAX_SAMPLES};
use embers_model::view::heatmap::{Heatmap, Interval};
use embers_model::view::stack_chart::StackChart;
use leptos::prelude::*;

use crate::components::heatmap::{format_ms_span, HeatmapEvent, HeatmapView};
use crate::components::stack_chart::{ChartEvent, StackChartView};
use crate::session::compare::BaselineSpec;
use crate::session::explore::ApiFailure;
use crate::session::fine::{self, fine_request, MsRange, TimeView};
use crate::session::navigator::Navigator;
use crate::state::fetched::fetched;

/// The longest range the stack chart asks for without a selection, seconds.
const CHART_MAX_RANGE_S: i64 = 300;

/// The row and the open time view.
#[component]
pub fn TimePanel(nav: Navigator) -> impl IntoView {
    // A memo: `current` is set again (to an equal value) by every window opened.
    let current = Memo::new(move |_| nav.current.get());
    let view = Memo::new(move |_| nav.time.with(|t| t.view));
    let window = Memo::new(move |_| nav.time.with(|t| t.window));
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
                {move || match view.get() {
                    TimeView::Off => ().into_any(),
                    TimeView::Heatmap => view! { <HeatmapPanel nav=nav current=current /> }.into_any(),
                    TimeView::StackChart => view! { <ChartPanel nav=nav current=current /> }.into_any(),
                }}
            </section>
        })
    }
}

type Current = Memo<Option<(String, embers_model::contract::request::ProfileRequest)>>;

/// The heatmap of the range; selections open windows.
#[component]
fn HeatmapPanel(nav: Navigator, current: Current) -> impl IntoView {
    let answer = fetched(move || {
        let current = current.get();
        async move {
            let (base, request) = current?;
            let body = fine_request(&request, None);
            Some(fine::heatmap(&base, &body).await)
        }
    });
    let selected = Signal::derive(move || nav.time.with(|t| t.window).map(interval));
    let baseline = Signal::derive(move || {
        nav.baseline
            .with(|b| b.as_ref().and_then(|b| b.window))
            .map(interval)
    });
    let on_event = Callback::new(move |e: HeatmapEvent| match e {
        HeatmapEvent::Select(iv) => nav.open_window((iv.start_ms, iv.end_ms)),
        HeatmapEvent::Baseline(iv) => nav.compare_with(BaselineSpec {
            window: Some((iv.start_ms, iv.end_ms)),
            ..BaselineSpec::default()
        }),
    });
    move || {
        match answer.get().flatten() {
        None => view! { <p class="explore-note" data-testid="heatmap-loading">"Reading the heatmap…"</p> }.into_any(),
        Some(Err(e)) => failure("heatmap", &e).into_any(),
        Some(Ok(a)) => match Heatmap::new(a.time_start, a.slots_per_second, &a.values) {
            Err(e) => view! { <p class="timeline-error" data-testid="heatmap-error">{format!("No heatmap: {e}")}</p> }.into_any(),
            Ok(map) => {
                let unit = match a.value_kind {
                    ValueKind::Samples => "samples",
                    ValueKind::Values => "value",
                };
                view! {
                    {resolution_note(a.resolution, "heatmap")}
                    <HeatmapView map=map selected=selected baseline=baseline unit=unit on_event=on_event />
                }
                .into_any()
            }
        },
    }
    }
}

fn interval((start_ms, end_ms): MsRange) -> Interval {
    Interval { start_ms, end_ms }
}

/// The stack chart of the window (or of a short range).
#[component]
fn ChartPanel(nav: Navigator, current: Current) -> impl IntoView {
    let window = Memo::new(move |_| nav.time.with(|t| t.window));
    let answer = fetched(move || {
        let (current, window) = (current.get(), window.get());
        async move {
            let (base, request) = current?;
            if window.is_none() && request.time_end - request.time_start >= CHART_MAX_RANGE_S {
                return Some(Err(None));
            }
            let body = fine_request(&request, window);
            let a = fine::samples(&base, &body).await;
            let root = request.app_service.clone().unwrap_or_default();
            Some(a.map_err(Some).map(|a| (root, a)))
        }
    });
    let search = Signal::derive(move || nav.runner.view.search.with(|s| s.text.clone()));
    let on_event = Callback::new(move |e: ChartEvent| match e {
        ChartEvent::Window(a, b) => nav.time.update(|t| t.chart = Some((a, b))),
        ChartEvent::Thread(i) => nav.time.update(|t| t.thread = i),
        ChartEvent::Open(a, b) => nav.open_window((a, b)),
    });
    move || {
        match answer.get().flatten() {
        None => view! { <p class="explore-note" data-testid="stack-chart-loading">"Reading the samples…"</p> }.into_any(),
        Some(Err(None)) => view! {
            <p class="explore-note" data-testid="stack-chart-hint">{format!(
                "The stack chart draws up to {} samples: select an interval on the heatmap (or pick a range of at most {} minutes) to see it.",
                MAX_SAMPLES, CHART_MAX_RANGE_S / 60
            )}</p>
        }.into_any(),
        Some(Err(Some(e))) => failure("stack chart", &e).into_any(),
        Some(Ok((root, a))) => match StackChart::from_answer(&root, &a) {
            Err(e) => view! { <p class="timeline-error" data-testid="stack-chart-error">{format!("No stack chart: {e}")}</p> }.into_any(),
            Ok(chart) if chart.tracks().is_empty() => view! {
                <p class="explore-note" data-testid="stack-chart-empty">"No samples in this window."</p>
            }.into_any(),
            Ok(chart) => {
                let (w, thread) = nav.time.with_untracked(|t| (t.chart, t.thread));
                view! {
                    {resolution_note(a.resolution, "stack chart")}
                    <StackChartView chart=Rc::new(chart) search=search window=w track=thread on_event=on_event />
                }
                .into_any()
            }
        },
    }
    }
}

/// What a view says when the service could not answer.
fn failure(what: &'static str, e: &ApiFailure) -> impl IntoView {
    let text = if e.is_missing_endpoint() {
        format!("No {what} here: this service does not keep sample times (it needs the Embers service).")
    } else {
        format!("No {what}: {e}")
    };
    view! { <p class="timeline-error" data-testid="time-view-error">{text}</p> }
}

/// A note when the data is timed to the second only.
fn resolution_note(r: Resolution, what: &'static str) -> Option<impl IntoView> {
    (r == Resolution::S).then(|| view! {
        <p class="explore-note" data-testid="resolution-note">{format!(
            "Some of these samples were stored without their times inside the second: the {what} shows them at the start of their second."
        )}</p>
    })
}
