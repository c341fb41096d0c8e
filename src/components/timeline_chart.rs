//! The timeline chart: the laid-out bars as SVG, time ticks, a hover read-out and a brush.
//! Hovering and brushing only move two small overlays; the bars are drawn once per answer.

use embers_model::contract::explore::OTHER_GROUP;
use embers_model::view::color::series_color;
use embers_model::view::format::{format_value, ValueUnit};
use embers_model::view::timeline::{brushed_range, bucket_at, layout_timeline, Timeline};
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::components::size::observe_size;
use crate::components::theme::theme_state;
use crate::session::time::{format_clock, utc_offset_secs};

/// Height of the bars' area, CSS px.
const CHART_H: f64 = 64.0;
/// Height of the tick labels below it.
const AXIS_H: f64 = 14.0;
/// A drag narrower than this is a click, not a range.
const MIN_BRUSH_PX: f64 = 4.0;

/// The chart of `timeline`; a drag calls `on_range` with the range it covers.
#[component]
pub fn TimelineChart(
    timeline: Timeline,
    unit: ValueUnit,
    on_range: Callback<(i64, i64)>,
) -> impl IntoView {
    let host = NodeRef::<html::Div>::new();
    let size = RwSignal::new((0.0f64, 0.0f64));
    observe_size(host, size);
    let offset = utc_offset_secs(timeline.time_start);
    let t = StoredValue::new(timeline);
    let theme = theme_state();
    let hover = RwSignal::new(None::<usize>);
    let drag = RwSignal::new(None::<(f64, f64)>);
    let layout = Memo::new(move |_| {
        let width = size.get().0;
        t.with_value(|t| layout_timeline(t, width, CHART_H, offset))
    });
    let x_of = move |e: &ev::MouseEvent| -> f64 {
        host.get_untracked().map_or(0.0, |el| {
            f64::from(e.client_x()) - el.get_bounding_client_rect().left()
        })
    };
    let moved = window_event_listener(ev::mousemove, move |e| {
        if drag.get_untracked().is_some() {
            let x = x_of(&e);
            drag.update(|d| {
                if let Some(d) = d {
                    d.1 = x;
                }
            });
        }
    });
    let released = window_event_listener(ev::mouseup, move |_| {
        let Some((a, b)) = drag.get_untracked() else {
            return;
        };
        drag.set(None);
        let width = size.get_untracked().0;
        if (b - a).abs() >= MIN_BRUSH_PX {
            if let Some(range) = t.with_value(|t| brushed_range(t, width, a, b)) {
                on_range.run(range);
            }
        }
    });
    on_cleanup(move || {
        moved.remove();
        released.remove();
    });
    let bars = move || {
        let palette = theme.palette.get();
        let series: Vec<bool> = t.with_value(|t| {
            t.series
                .iter()
                .map(|s| s.name.as_deref() == Some(OTHER_GROUP))
                .collect()
        });
        layout.with(|l| {
            l.bars
                .iter()
                .map(|b| {
                    let other = series.get(b.series).copied().unwrap_or(false);
                    let fill = series_color(b.series, other, palette).css();
                    view! { <rect x=b.x y=b.y width=b.w height=b.h fill=fill></rect> }
                })
                .collect_view()
        })
    };
    let ticks = move || {
        layout.with(|l| {
            l.ticks
                .iter()
                .map(|tick| view! {
                    <line class="tick" x1=tick.x x2=tick.x y1=0 y2=CHART_H></line>
                    <text class="tick-label" x=tick.x + 3.0 y=CHART_H + AXIS_H - 3.0>{tick.label.clone()}</text>
                })
                .collect_view()
        })
    };
    let slot = move || {
        let n = t.with_value(|t| t.starts.len()).max(1) as f64;
        size.get().0 / n
    };
    let buckets = t.with_value(|t| t.starts.len());
    let interval = t.with_value(|t| t.interval);
    view! {
        <div class="timeline" data-testid="timeline" node_ref=host
            data-buckets=buckets data-interval=interval
            on:mousemove=move |e| {
                let width = size.get_untracked().0;
                let x = x_of(&e);
                let b = t.with_value(|t| bucket_at(t, width, x));
                if b != hover.get_untracked() {
                    hover.set(b);
                }
            }
            on:mouseleave=move |_| hover.set(None)
            on:mousedown=move |e| {
                e.prevent_default();
                let x = x_of(&e);
                drag.set(Some((x, x)));
            }>
            <svg width=move || size.get().0 height=CHART_H + AXIS_H aria-hidden="true">
                <g class="bars">{bars}</g>
                <g class="ticks">{ticks}</g>
                {move || hover.get().map(|i| view! {
                    <rect class="hover-bucket" x=i as f64 * slot() y=0 width=slot() height=CHART_H></rect>
                })}
                {move || drag.get().map(|(a, b)| view! {
                    <rect class="brush" data-testid="timeline-brush" x=a.min(b) y=0
                        width=(b - a).abs() height=CHART_H></rect>
                })}
            </svg>
            {move || hover.get().map(|i| view! { <HoverReadout timeline=t bucket=i unit=unit x=i as f64 * slot() /> })}
        </div>
    }
}

/// The hovered bucket's time and value (and its largest groups).
#[component]
fn HoverReadout(
    timeline: StoredValue<Timeline>,
    bucket: usize,
    unit: ValueUnit,
    x: f64,
) -> impl IntoView {
    let (start, interval, mut parts, total) = timeline.with_value(|t| {
        let parts: Vec<(String, u64)> = t
            .series
            .iter()
            .filter_map(|s| {
                let v = s.values.get(bucket).copied().unwrap_or(0);
                (v > 0).then(|| (s.name.clone().unwrap_or_default(), v))
            })
            .collect();
        let total = t.stacked_totals().get(bucket).copied().unwrap_or(0);
        (
            t.starts.get(bucket).copied().unwrap_or(0),
            t.interval,
            parts,
            total,
        )
    });
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    let grouped = parts.iter().any(|(name, _)| !name.is_empty());
    let head = format!(
        "{}–{} · {}",
        format_clock(start),
        format_clock(start + interval - 1),
        format_value(total, unit)
    );
    view! {
        <div class="timeline-tooltip" data-testid="timeline-tooltip" style:left=format!("{x}px")>
            <div>{head}</div>
            {grouped.then(|| parts.into_iter().take(4).map(|(name, v)| view! {
                <div class="tip-part">{format!("{} {}", format_value(v, unit), if name.is_empty() { "(none)" } else { &name })}</div>
            }).collect_view())}
        </div>
    }
}
