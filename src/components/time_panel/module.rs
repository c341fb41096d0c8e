//! The time views' module side (`src/bin/time_view.rs` mounts [`render`]): the Heatmap or the
//! Stack chart of the page's question, each asking the service itself (`/v1/profile/heatmap`,
//! `/v1/profile/samples`) and handing the answer to its self-contained view (`heatmap`,
//! `stack_chart`), whose events go to the page as [`TimeEvent`]s.

use std::rc::Rc;

use embers_model::contract::fine::heatmap::ValueKind;
use embers_model::contract::fine::{Resolution, MAX_SAMPLES};
use embers_model::contract::request::ProfileRequest;
use embers_model::view::color::Palette;
use embers_model::view::heatmap::{Heatmap, Interval};
use embers_model::view::stack_chart::StackChart;
use leptos::prelude::*;

use super::interface::{TimeEvent, TimeInput, TimeViewKind};
use crate::components::heatmap::{HeatmapEvent, HeatmapView};
use crate::components::stack_chart::{ChartEvent, StackChartView};
use crate::on_demand::guest::Emit;
use crate::session::explore::ApiFailure;
use crate::session::fine::{self, fine_request, MsRange};
use crate::state::fetched::fetched;

/// The longest range the stack chart asks for without a selection, seconds.
const CHART_MAX_RANGE_S: i64 = 300;

/// Where the service is and the profile's question.
type Current = Memo<(String, ProfileRequest)>;

/// The view `input` names, its events sent through `emit`.
pub fn render(input: ReadSignal<TimeInput>, emit: Emit) -> impl IntoView {
    // Memos: an input that changes only the search or the chart's zoom asks nothing again.
    let kind = Memo::new(move |_| input.with(|i| i.view));
    let current = Memo::new(move |_| input.with(|i| (i.base_url.clone(), i.request.clone())));
    let dark = Memo::new(move |_| input.with(|i| i.dark));
    let on_event = emit.callback::<TimeEvent>();
    move || match kind.get() {
        TimeViewKind::Heatmap => {
            view! { <HeatmapPanel input=input current=current dark=dark on_event=on_event /> }
                .into_any()
        }
        TimeViewKind::StackChart => {
            view! { <ChartPanel input=input current=current dark=dark on_event=on_event /> }
                .into_any()
        }
    }
}

/// The heatmap of the range; selections open windows.
#[component]
fn HeatmapPanel(
    input: ReadSignal<TimeInput>,
    current: Current,
    dark: Memo<bool>,
    on_event: Callback<TimeEvent>,
) -> impl IntoView {
    let answer = fetched(move || {
        let (base, request) = current.get();
        async move { fine::heatmap(&base, &fine_request(&request, None)).await }
    });
    let selected = Memo::new(move |_| input.with(|i| i.window).map(interval));
    let baseline = Memo::new(move |_| input.with(|i| i.baseline).map(interval));
    let on_event = Callback::new(move |e: HeatmapEvent| {
        on_event.run(match e {
            HeatmapEvent::Select(iv) => TimeEvent::Open(iv.start_ms, iv.end_ms),
            HeatmapEvent::Baseline(iv) => TimeEvent::Baseline(iv.start_ms, iv.end_ms),
        })
    });
    move || {
        match answer.get() {
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
                    <HeatmapView map=map selected=selected baseline=baseline unit=unit dark=dark on_event=on_event />
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
fn ChartPanel(
    input: ReadSignal<TimeInput>,
    current: Current,
    dark: Memo<bool>,
    on_event: Callback<TimeEvent>,
) -> impl IntoView {
    let window = Memo::new(move |_| input.with(|i| i.window));
    let answer = fetched(move || {
        let ((base, request), window) = (current.get(), window.get());
        async move {
            if window.is_none() && request.time_end - request.time_start >= CHART_MAX_RANGE_S {
                return Err(None);
            }
            let a = fine::samples(&base, &fine_request(&request, window)).await;
            let root = request.app_service.clone().unwrap_or_default();
            a.map_err(Some).map(|a| (root, a))
        }
    });
    let search = Memo::new(move |_| input.with(|i| i.search.clone()));
    let palette = Memo::new(move |_| match input.with(|i| i.colorblind) {
        true => Palette::ColorBlind,
        false => Palette::Classic,
    });
    let on_event = Callback::new(move |e: ChartEvent| {
        on_event.run(match e {
            ChartEvent::Window(a, b) => TimeEvent::Chart(a, b),
            ChartEvent::Thread(i) => TimeEvent::Thread(i),
            ChartEvent::Open(a, b) => TimeEvent::Open(a, b),
        })
    });
    move || {
        match answer.get() {
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
                // The URL's zoom and thread when the chart is built; the chart keeps its own after.
                let (w, thread) = input.with_untracked(|i| (i.chart, i.thread));
                view! {
                    {resolution_note(a.resolution, "stack chart")}
                    <StackChartView chart=Rc::new(chart) search=search window=w track=thread
                        dark=dark palette=palette on_event=on_event />
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
