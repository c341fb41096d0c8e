//! The stack chart: a thread's stacks over time (x = time, y = depth), in the flame graph's
//! colours and names (`embers_model::view::stack_chart` lays it out and paints it; the flame
//! graph's canvas replays the list). A self-contained view with a narrow interface — a
//! [`StackChart`], the search text, the window and the theme in, [`ChartEvent`]s out — built
//! into the time views' on-demand module (`crate::components::time_panel::module`), never into
//! the page.
//!
//! Wheel zooms around the pointer (horizontal wheel pans), a drag pans; keys: `+`/`-` zoom,
//! arrows pan and scroll, `0` shows everything. Hover reads the frame; "Open as flame graph"
//! asks for the graph of the window's samples.

mod canvas;

use std::rc::Rc;

use embers_model::view::color::Palette;
use embers_model::view::layout::Bar;
use embers_model::view::stack_chart::layout::{self as chart_layout, TimeViewport};
use embers_model::view::stack_chart::StackChart;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::components::size::observe_size;

/// Height of the time axis above the rows, CSS px.
const AXIS_H: f64 = 18.0;
/// Most height the chart's rows take, CSS px (deeper stacks scroll inside it).
const ROWS_MAX_H: f64 = 360.0;
/// Least height of the rows area, so a shallow chart still has room for its tooltip.
const ROWS_MIN_H: f64 = 5.0 * chart_layout::ROW_HEIGHT_CSS;

/// What the user did on the chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartEvent {
    /// The window moved (zoom or pan): Unix ms, start and end.
    Window(i64, i64),
    /// Another thread was picked (its index in the chart's tracks).
    Thread(usize),
    /// Open `[start, end)` (Unix ms) as a flame graph.
    Open(i64, i64),
}

/// The view's state, one `Copy` value its handlers share.
#[derive(Clone, Copy)]
struct Chart {
    chart: StoredValue<Rc<StackChart>, LocalStorage>,
    host: NodeRef<html::Div>,
    size: RwSignal<(f64, f64)>,
    window: RwSignal<(f64, f64)>,
    scroll_top: RwSignal<f64>,
    track: RwSignal<usize>,
    hover: RwSignal<Option<(Bar, f64, f64)>>,
    bars: StoredValue<Vec<Bar>>,
    drag: RwSignal<Option<(f64, f64)>>,
}

impl Chart {
    fn bounds(&self) -> (f64, f64) {
        self.chart
            .with_value(|c| (c.start_ms() as f64, c.end_ms() as f64))
    }

    /// Height of the current thread's rows (all of them, up to [`ROWS_MAX_H`]).
    fn content_height(&self) -> f64 {
        let track = self.track.get();
        self.chart.with_value(|c| {
            c.tracks()
                .get(track)
                .map_or(0.0, chart_layout::content_height_css)
        })
    }

    fn viewport(&self) -> TimeViewport {
        let (start_ms, end_ms) = self.window.get();
        TimeViewport {
            start_ms,
            end_ms,
            width_css: self.size.get().0,
            height_css: self.content_height().clamp(ROWS_MIN_H, ROWS_MAX_H),
            scroll_top_css: self.scroll_top.get(),
        }
    }

    fn viewport_untracked(&self) -> TimeViewport {
        untrack(|| self.viewport())
    }

    fn point(&self, e: &ev::MouseEvent) -> (f64, f64) {
        self.host.get_untracked().map_or((0.0, 0.0), |el| {
            let r = el.get_bounding_client_rect();
            (
                f64::from(e.client_x()) - r.left(),
                f64::from(e.client_y()) - r.top(),
            )
        })
    }

    fn set_window(&self, w: (f64, f64), on_event: Callback<ChartEvent>) {
        if w != self.window.get_untracked() {
            self.window.set(w);
            on_event.run(ChartEvent::Window(w.0.floor() as i64, w.1.ceil() as i64));
        }
    }

    fn zoom_at(&self, x: f64, factor: f64, on_event: Callback<ChartEvent>) {
        let vp = self.viewport_untracked();
        let (min, max) = self.bounds();
        self.set_window(
            chart_layout::zoom(&vp, vp.ms_at(x), factor, min, max),
            on_event,
        );
    }

    fn pan_by(&self, dx: f64, on_event: Callback<ChartEvent>) {
        let vp = self.viewport_untracked();
        let (min, max) = self.bounds();
        self.set_window(chart_layout::pan(&vp, dx, min, max), on_event);
    }

    fn scroll_by(&self, dy: f64) {
        let content = untrack(|| self.content_height());
        let room = (content - ROWS_MAX_H).max(0.0);
        let top = (self.scroll_top.get_untracked() + dy).clamp(0.0, room);
        self.scroll_top.set(top);
    }

    fn wheel(&self, e: &ev::WheelEvent, on_event: Callback<ChartEvent>) {
        e.prevent_default();
        let (dx, dy) = (e.delta_x(), e.delta_y());
        if dx.abs() > dy.abs() {
            self.pan_by(dx, on_event);
        } else if e.shift_key() {
            self.scroll_by(dy);
        } else {
            let (x, _) = self.point(e);
            self.zoom_at(x, (dy * 0.002).exp(), on_event);
        }
    }

    fn moved(&self, e: &ev::MouseEvent, on_event: Callback<ChartEvent>) {
        let (x, y) = self.point(e);
        if let Some((x0, y0)) = self.drag.get_untracked() {
            self.drag.set(Some((x, y)));
            self.pan_by(x0 - x, on_event);
            self.scroll_by(y0 - y);
            return;
        }
        let hit = self
            .bars
            .with_value(|b| chart_layout::hit_test(b, x, y - AXIS_H));
        self.hover.set(hit.map(|b| (b, x, y)));
    }

    fn key(&self, e: &ev::KeyboardEvent, on_event: Callback<ChartEvent>) {
        let width = self.size.get_untracked().0;
        let step = width / 8.0;
        match e.key().as_str() {
            "+" | "=" => self.zoom_at(width / 2.0, 0.5, on_event),
            "-" | "_" => self.zoom_at(width / 2.0, 2.0, on_event),
            "ArrowLeft" => self.pan_by(-step, on_event),
            "ArrowRight" => self.pan_by(step, on_event),
            "ArrowUp" => self.scroll_by(-chart_layout::ROW_HEIGHT_CSS * 3.0),
            "ArrowDown" => self.scroll_by(chart_layout::ROW_HEIGHT_CSS * 3.0),
            "0" => self.set_window(self.bounds(), on_event),
            _ => return,
        }
        // The page's own keys (transforms, Esc) stay out of a chart being driven.
        e.prevent_default();
        e.stop_propagation();
    }
}

impl Chart {
    /// The chart's state: `window` (Unix ms) when it is a window, else everything; `track`
    /// when there is such a thread, else the last.
    fn new(chart: Rc<StackChart>, window: Option<(i64, i64)>, track: usize) -> Chart {
        let full = (chart.start_ms() as f64, chart.end_ms() as f64);
        let initial = window
            .map(|(a, b)| (a as f64, b as f64))
            .filter(|(a, b)| b > a)
            .unwrap_or(full);
        let last = chart.tracks().len().saturating_sub(1);
        Chart {
            track: RwSignal::new(track.min(last)),
            chart: StoredValue::new_local(chart),
            host: NodeRef::new(),
            size: RwSignal::new((0.0, 0.0)),
            window: RwSignal::new(initial),
            scroll_top: RwSignal::new(0.0),
            hover: RwSignal::new(None),
            bars: StoredValue::new(Vec::new()),
            drag: RwSignal::new(None),
        }
    }

    /// Draws into `el` whenever the window, size, thread, hover, search or theme change.
    fn draw_on_change(
        self,
        el: NodeRef<html::Canvas>,
        search: Signal<String>,
        dark: Signal<bool>,
        palette: Signal<Palette>,
    ) {
        let found = canvas::search_memo(self.chart, search);
        let painter = canvas::Painter::default();
        Effect::new(move |_| {
            let Some(el) = el.get() else { return };
            let vp = self.viewport();
            let hovered = self.hover.get().map(|(b, _, _)| b);
            let (dark, palette) = (dark.get(), palette.get());
            found.with(|f| {
                self.chart.with_value(|chart| {
                    let Some(track) = chart.tracks().get(self.track.get()) else {
                        return;
                    };
                    self.bars.update_value(|bars| {
                        chart_layout::layout(track, &vp, bars);
                        painter.draw(&el, chart, bars, &vp, f.as_ref(), hovered, dark, palette);
                    });
                })
            });
        });
    }
}

/// The stack chart of `chart`: thread `track`, window `window` (Unix ms; the whole chart when
/// empty), frames matching `search` lit, in the page's theme (`dark`, `palette`); what the user
/// does goes to `on_event`.
#[component]
pub fn StackChartView(
    chart: Rc<StackChart>,
    #[prop(into)] search: Signal<String>,
    window: Option<(i64, i64)>,
    track: usize,
    #[prop(into)] dark: Signal<bool>,
    #[prop(into)] palette: Signal<Palette>,
    on_event: Callback<ChartEvent>,
) -> impl IntoView {
    let c = Chart::new(chart, window, track);
    observe_size(c.host, c.size);
    let released = window_event_listener(ev::mouseup, move |_| c.drag.set(None));
    on_cleanup(move || released.remove());
    let el = NodeRef::<html::Canvas>::new();
    c.draw_on_change(el, search, dark, palette);
    let ticks = move || {
        let vp = c.viewport();
        chart_layout::ticks(&vp, c.bounds().0, 90.0)
            .into_iter()
            .map(|t| view! { <span class="chart-tick" style:left=format!("{:.1}px", t.x_css)>{t.label}</span> })
            .collect_view()
    };
    let press = move |e: ev::MouseEvent| {
        e.prevent_default();
        if let Some(h) = c.host.get_untracked() {
            let _ = h.focus();
        }
        c.drag.set(Some(c.point(&e)));
    };
    let tip = move || {
        let (track, window, width) = (
            c.track.get_untracked(),
            c.window.get_untracked(),
            c.size.get_untracked().0,
        );
        c.hover
            .get()
            .map(|(bar, x, y)| canvas::tooltip(c.chart, track, window, bar, x, y, width))
    };
    view! {
        <div class="stack-chart" data-testid="stack-chart">
            <ChartTools c=c on_event=on_event />
            <div class="stack-chart-area" node_ref=c.host tabindex="0" role="application"
                aria-label="Stack chart: time left to right, stack depth top to bottom. Plus and minus zoom, arrows pan, 0 shows everything."
                on:wheel=move |e| c.wheel(&e, on_event)
                on:mousedown=press
                on:mousemove=move |e| c.moved(&e, on_event)
                on:mouseleave=move |_| c.hover.set(None)
                on:keydown=move |e| c.key(&e, on_event)>
                <div class="chart-axis" style:height=format!("{AXIS_H}px")>{ticks}</div>
                <canvas node_ref=el data-testid="stack-chart-canvas" aria-hidden="true"></canvas>
                {tip}
            </div>
        </div>
    }
}

/// The row above the chart: the thread, the window's length, "Open as flame graph".
#[component]
fn ChartTools(c: Chart, on_event: Callback<ChartEvent>) -> impl IntoView {
    let tracks: Vec<(usize, String)> = c.chart.with_value(|chart| {
        chart
            .tracks()
            .iter()
            .enumerate()
            .map(|(i, t)| (i, format!("{} · {} samples", t.name, t.samples)))
            .collect()
    });
    let open = move |_| {
        let (a, b) = c.window.get_untracked();
        on_event.run(ChartEvent::Open(a.floor() as i64, b.ceil() as i64));
    };
    let pick = move |e: ev::Event| {
        if let Ok(i) = event_target_value(&e).parse::<usize>() {
            c.track.set(i);
            c.scroll_top.set(0.0);
            on_event.run(ChartEvent::Thread(i));
        }
    };
    view! {
        <div class="stack-chart-tools">
            <label class="check">"Thread "
                <select data-testid="stack-chart-thread" on:change=pick prop:value=move || c.track.get().to_string()>
                    {tracks.into_iter().map(|(i, label)| view! { <option value=i.to_string()>{label}</option> }).collect_view()}
                </select>
            </label>
            <span class="timeline-hint">"Wheel to zoom · drag to pan · + − ← → 0"</span>
            <span class="spacer"></span>
            <span class="stack-chart-window" data-testid="stack-chart-window">{move || canvas::window_text(c.window.get())}</span>
            <button type="button" class="ghost small" data-testid="stack-chart-open" on:click=open
                title="The flame graph of exactly the samples in this window">"Open as flame graph"</button>
        </div>
    }
}
