//! The timeline chart: the laid-out bars as SVG, time ticks, a hover read-out and a brush.
//! Hovering and brushing only move two small overlays; the bars are drawn once per answer.

use embers_model::contract::explore::OTHER_GROUP;
use embers_model::tree::order::sort_by_dyn;
use embers_model::view::color::{series_color, Palette};
use embers_model::view::format::{format_value, ValueUnit};
use embers_model::view::timeline::{
    brushed_range, bucket_at, layout_timeline, Timeline, TimelineLayout,
};
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::components::size::observe_size;
use crate::components::theme::theme_state;
use crate::session::time::{format_clock, utc_offset_secs};

/// Height of the bars' area, CSS px.
const CHART_H: f64 = 64.0;
/// Room a tick label (`23:59`, `23:59:59` at the finest steps) takes right of its tick.
const TICK_LABEL_PX: f64 = 56.0;
/// Height of the tick labels below it.
const AXIS_H: f64 = 14.0;
/// A drag narrower than this is a click, not a range.
const MIN_BRUSH_PX: f64 = 4.0;

/// The chart's state, as one `Copy` value its handlers share.
#[derive(Clone, Copy)]
struct Chart {
    host: NodeRef<html::Div>,
    size: RwSignal<(f64, f64)>,
    t: StoredValue<Timeline>,
    hover: RwSignal<Option<usize>>,
    /// Start, end (CSS px) and whether it picks a baseline (Shift held when it started).
    drag: RwSignal<Option<(f64, f64, bool)>>,
    layout: Memo<TimelineLayout>,
}

impl Chart {
    fn new(timeline: Timeline) -> Chart {
        let host = NodeRef::<html::Div>::new();
        let size = RwSignal::new((0.0f64, 0.0f64));
        observe_size(host, size);
        let offset = utc_offset_secs(timeline.time_start);
        let t = StoredValue::new(timeline);
        Chart {
            host,
            size,
            t,
            hover: RwSignal::new(None),
            drag: RwSignal::new(None),
            layout: Memo::new(move |_| {
                let width = size.get().0;
                t.with_value(|t| layout_timeline(t, width, CHART_H, offset))
            }),
        }
    }

    fn x_of(&self, e: &ev::MouseEvent) -> f64 {
        self.host.get_untracked().map_or(0.0, |el| {
            f64::from(e.client_x()) - el.get_bounding_client_rect().left()
        })
    }

    /// Follows a drag anywhere on the page, and ends it (a range, or a click) on release.
    fn listen_for_drags(
        self,
        on_range: Callback<(i64, i64)>,
        on_baseline: Option<Callback<(i64, i64)>>,
    ) {
        let moved = window_event_listener(ev::mousemove, move |e| {
            if self.drag.get_untracked().is_some() {
                let x = self.x_of(&e);
                self.drag.update(|d| {
                    if let Some(d) = d {
                        d.1 = x;
                    }
                });
            }
        });
        let released = window_event_listener(ev::mouseup, move |_| {
            let Some((a, b, for_baseline)) = self.drag.get_untracked() else {
                return;
            };
            self.drag.set(None);
            let width = self.size.get_untracked().0;
            let range = self.t.with_value(|t| brushed_range(t, width, a, b));
            match (range.filter(|_| (b - a).abs() >= MIN_BRUSH_PX), on_baseline) {
                (Some(range), Some(pick)) if for_baseline => pick.run(range),
                (Some(range), _) => on_range.run(range),
                (None, _) => {}
            }
        });
        on_cleanup(move || {
            moved.remove();
            released.remove();
        });
    }

    fn pointer_moved(&self, e: &ev::MouseEvent) {
        let width = self.size.get_untracked().0;
        let x = self.x_of(e);
        let b = self.t.with_value(|t| bucket_at(t, width, x));
        if b != self.hover.get_untracked() {
            self.hover.set(b);
        }
    }

    fn bars(&self, palette: Palette) -> impl IntoView {
        let others: Vec<bool> = self.t.with_value(|t| {
            t.series
                .iter()
                .map(|s| s.name.as_deref() == Some(OTHER_GROUP))
                .collect()
        });
        self.layout.with(|l| {
            l.bars
                .iter()
                .map(|b| {
                    let other = others.get(b.series).copied().unwrap_or(false);
                    let fill = series_color(b.series, other, palette).css();
                    view! { <rect x=b.x y=b.y width=b.w height=b.h fill=fill></rect> }
                })
                .collect_view()
        })
    }

    fn ticks(&self) -> impl IntoView {
        let width = self.size.get().0;
        self.layout.with(|l| {
            l.ticks
                .iter()
                .map(|tick| {
                    // A label that would run past the right edge goes left of its tick.
                    let (x, anchor) = if tick.x + TICK_LABEL_PX > width {
                        (tick.x - 3.0, "end")
                    } else {
                        (tick.x + 3.0, "start")
                    };
                    view! {
                        <line class="tick" x1=tick.x x2=tick.x y1=0 y2=CHART_H></line>
                        <text class="tick-label" x=x text-anchor=anchor y=CHART_H + AXIS_H - 3.0>{tick.label.clone()}</text>
                    }
                })
                .collect_view()
        })
    }

    /// Where a range falls on the chart (clamped), if it does.
    fn band(&self, (start, end): (i64, i64)) -> Option<(f64, f64)> {
        let width = self.size.get().0;
        self.t.with_value(|t| {
            let first = *t.starts.first()?;
            let span = (t.starts.len() as i64 * t.interval).max(1) as f64;
            let x0 = ((start - first) as f64 / span * width).clamp(0.0, width);
            let x1 = ((end + 1 - first) as f64 / span * width).clamp(0.0, width);
            (x1 > x0).then_some((x0, x1 - x0))
        })
    }

    /// The width of one bucket, CSS px.
    fn slot(&self) -> f64 {
        let n = self.t.with_value(|t| t.starts.len()).max(1) as f64;
        self.size.get().0 / n
    }
}

/// The chart of `timeline`; a drag calls `on_range` with the range it covers (a Shift-drag
/// calls `on_baseline`, when given); `baseline` is shaded.
#[component]
pub fn TimelineChart(
    timeline: Timeline,
    unit: ValueUnit,
    on_range: Callback<(i64, i64)>,
    #[prop(optional)] on_baseline: Option<Callback<(i64, i64)>>,
    #[prop(into, optional)] baseline: Option<Signal<Option<(i64, i64)>>>,
) -> impl IntoView {
    let (buckets, interval) = (timeline.starts.len(), timeline.interval);
    let c = Chart::new(timeline);
    c.listen_for_drags(on_range, on_baseline);
    let theme = theme_state();
    view! {
        <div class="timeline" data-testid="timeline" node_ref=c.host
            data-buckets=buckets data-interval=interval
            on:mousemove=move |e| c.pointer_moved(&e)
            on:mouseleave=move |_| c.hover.set(None)
            on:mousedown=move |e| {
                e.prevent_default();
                let x = c.x_of(&e);
                c.drag.set(Some((x, x, e.shift_key())));
            }>
            <svg width=move || c.size.get().0 height=CHART_H + AXIS_H aria-hidden="true">
                <g class="bars">{move || c.bars(theme.palette.get())}</g>
                <g class="ticks">{move || c.ticks()}</g>
                {move || c.hover.get().map(|i| view! {
                    <rect class="hover-bucket" x=i as f64 * c.slot() y=0 width=c.slot() height=CHART_H></rect>
                })}
                {move || baseline.and_then(|b| b.get()).and_then(|r| c.band(r)).map(|(x, w)| view! {
                    <rect class="baseline-band" data-testid="timeline-baseline" x=x y=0 width=w height=CHART_H></rect>
                })}
                {move || c.drag.get().map(|(a, b, for_baseline)| view! {
                    <rect class="brush" class:for-baseline=for_baseline data-testid="timeline-brush"
                        x=a.min(b) y=0 width=(b - a).abs() height=CHART_H></rect>
                })}
            </svg>
            {move || c.hover.get().map(|i| view! { <HoverReadout timeline=c.t bucket=i unit=unit x=i as f64 * c.slot() /> })}
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
    sort_by_dyn(&mut parts, &|a, b| b.1.cmp(&a.1));
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
