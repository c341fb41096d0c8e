//! The sub-second heatmap of a process (or `Total`): columns are seconds, rows the slots of a
//! second, colour the samples in a cell (`embers_model::view::heatmap` decides all of it; this
//! only replays). A self-contained view with a narrow interface — a [`Heatmap`], the
//! intervals to mark and the theme in, [`HeatmapEvent`]s out — built into the time views'
//! on-demand module (`crate::components::time_panel::module`), never into the page.
//!
//! - Drag across cells (or click a start cell, then an end cell) to select an interval:
//!   [`HeatmapEvent::Select`]; Shift does the same for a second interval to compare with:
//!   [`HeatmapEvent::Baseline`].
//! - Keyboard: focus the grid (Tab), arrows move the cursor cell (Shift+arrows a second or
//!   five slots), Enter marks the start then the end, Shift+Enter the same for the baseline,
//!   Esc drops a half-made selection.
//! - Hover (or the cursor) reads the cell's time and count below the grid.

mod canvas;
mod legend;

use embers_model::view::heatmap::{Cell, Geometry, Heatmap, Interval};
use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::components::size::observe_size;
use crate::session::time::format_clock;

/// Height of the grid, CSS px.
const GRID_H: f64 = 150.0;

/// What the user did on the heatmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeatmapEvent {
    /// Show the samples of this interval.
    Select(Interval),
    /// Compare the selection with the samples of this interval.
    Baseline(Interval),
}

/// A selection being made: its first cell, the cell it reaches, and whether it is the baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pending {
    from: Cell,
    to: Cell,
    baseline: bool,
    /// Started by the pointer (it ends on release) rather than by a click or Enter.
    dragging: bool,
}

/// The view's state, as one `Copy` value its handlers share.
#[derive(Clone, Copy)]
struct Grid {
    host: NodeRef<html::Div>,
    size: RwSignal<(f64, f64)>,
    map: StoredValue<Heatmap>,
    hover: RwSignal<Option<Cell>>,
    cursor: RwSignal<Option<Cell>>,
    pending: RwSignal<Option<Pending>>,
}

impl Grid {
    fn geometry(&self) -> Geometry {
        Geometry {
            width_css: self.size.get_untracked().0,
            height_css: GRID_H,
        }
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

    fn cell_at(&self, e: &ev::MouseEvent, clamp: bool) -> Option<Cell> {
        let (x, y) = self.point(e);
        let g = self.geometry();
        self.map.with_value(|m| match clamp {
            true => m.cell_near(&g, x, y),
            false => m.cell_at(&g, x, y),
        })
    }

    /// The interval a pending selection covers.
    fn interval(&self, p: &Pending) -> Interval {
        self.map.with_value(|m| m.interval(p.from, p.to))
    }

    fn finish(&self, p: Pending, on_event: Callback<HeatmapEvent>) {
        self.pending.set(None);
        let iv = self.interval(&p);
        on_event.run(match p.baseline {
            true => HeatmapEvent::Baseline(iv),
            false => HeatmapEvent::Select(iv),
        });
    }

    fn pressed(&self, e: &ev::MouseEvent, on_event: Callback<HeatmapEvent>) {
        e.prevent_default();
        let Some(cell) = self.cell_at(e, false) else {
            return;
        };
        if let Some(h) = self.host.get_untracked() {
            let _ = h.focus();
        }
        self.cursor.set(Some(cell));
        // A click after a click (no drag between) ends the selection it started.
        match self.pending.get_untracked() {
            Some(p) if !p.dragging && p.baseline == e.shift_key() => {
                self.finish(Pending { to: cell, ..p }, on_event)
            }
            _ => self.pending.set(Some(Pending {
                from: cell,
                to: cell,
                baseline: e.shift_key(),
                dragging: true,
            })),
        }
    }

    /// Follows a drag anywhere on the page; a release on another cell ends the selection, a
    /// release on the cell it started keeps it open for a second click.
    fn listen_for_drags(self, on_event: Callback<HeatmapEvent>) {
        let moved = window_event_listener(ev::mousemove, move |e| {
            let Some(p) = self.pending.get_untracked().filter(|p| p.dragging) else {
                return;
            };
            if let Some(to) = self.cell_at(&e, true).filter(|&c| c != p.to) {
                self.pending.set(Some(Pending { to, ..p }));
            }
        });
        let released = window_event_listener(ev::mouseup, move |_| {
            let Some(p) = self.pending.get_untracked().filter(|p| p.dragging) else {
                return;
            };
            match p.from == p.to {
                true => self.pending.set(Some(Pending {
                    dragging: false,
                    ..p
                })),
                false => self.finish(p, on_event),
            }
        });
        on_cleanup(move || {
            moved.remove();
            released.remove();
        });
    }

    fn key(&self, e: &ev::KeyboardEvent, on_event: Callback<HeatmapEvent>) {
        let (columns, slots) = self.map.with_value(|m| (m.columns(), m.slots()));
        if columns == 0 {
            return;
        }
        let at = self
            .cursor
            .get_untracked()
            .unwrap_or(Cell { column: 0, slot: 0 });
        let big = e.shift_key();
        let moved = match e.key().as_str() {
            "ArrowLeft" => Some(Cell {
                column: at.column.saturating_sub(if big { 10 } else { 1 }),
                ..at
            }),
            "ArrowRight" => Some(Cell {
                column: (at.column + if big { 10 } else { 1 }).min(columns - 1),
                ..at
            }),
            "ArrowUp" => Some(Cell {
                slot: at.slot.saturating_sub(if big { 5 } else { 1 }),
                ..at
            }),
            "ArrowDown" => Some(Cell {
                slot: (at.slot + if big { 5 } else { 1 }).min(slots - 1),
                ..at
            }),
            _ => None,
        };
        if let Some(cell) = moved {
            e.prevent_default();
            e.stop_propagation();
            self.cursor.set(Some(cell));
            if let Some(p) = self.pending.get_untracked() {
                self.pending.set(Some(Pending { to: cell, ..p }));
            }
            return;
        }
        match e.key().as_str() {
            "Enter" | " " => {
                e.prevent_default();
                e.stop_propagation();
                match self.pending.get_untracked() {
                    Some(p) => self.finish(Pending { to: at, ..p }, on_event),
                    None => {
                        self.cursor.set(Some(at));
                        self.pending.set(Some(Pending {
                            from: at,
                            to: at,
                            baseline: e.shift_key(),
                            dragging: false,
                        }));
                    }
                }
            }
            "Escape" if self.pending.get_untracked().is_some() => {
                e.stop_propagation();
                self.pending.set(None);
            }
            _ => {}
        }
    }
}

/// The heatmap of `map`, `selected` and `baseline` marked; `unit` names what a count counts
/// ("samples"); `dark` when the page is. What the user selects goes to `on_event`.
#[component]
pub fn HeatmapView(
    map: Heatmap,
    #[prop(into)] selected: Signal<Option<Interval>>,
    #[prop(into)] baseline: Signal<Option<Interval>>,
    unit: &'static str,
    #[prop(into)] dark: Signal<bool>,
    on_event: Callback<HeatmapEvent>,
) -> impl IntoView {
    let host = NodeRef::<html::Div>::new();
    let size = RwSignal::new((0.0f64, 0.0f64));
    observe_size(host, size);
    let (columns, slots, max) = (map.columns(), map.slots(), map.max());
    let g = Grid {
        host,
        size,
        map: StoredValue::new(map),
        hover: RwSignal::new(None),
        cursor: RwSignal::new(None),
        pending: RwSignal::new(None),
    };
    g.listen_for_drags(on_event);
    let canvas = NodeRef::<html::Canvas>::new();
    Effect::new(move |_| {
        let (Some(el), (width, _)) = (canvas.get(), size.get()) else {
            return;
        };
        let marks = canvas::Marks {
            selected: selected.get(),
            baseline: baseline.get(),
            pending: g.pending.get().map(|p| g.interval(&p)),
            hover: g.hover.get().or_else(|| g.cursor.get()),
        };
        g.map
            .with_value(|m| canvas::draw(&el, m, width, GRID_H, dark.get(), &marks));
    });
    let readout = move || readout(g, unit);
    view! {
        <div class="heatmap" data-testid="heatmap" data-columns=columns data-slots=slots data-max=max>
            <div class="heatmap-grid" node_ref=host tabindex="0" role="application"
                aria-label="Heatmap: seconds left to right, each second top to bottom. Arrows move, Enter marks the start and the end of an interval, Shift+Enter an interval to compare with."
                on:mousedown=move |e| g.pressed(&e, on_event)
                on:mousemove=move |e| {
                    let c = g.cell_at(&e, false);
                    if c != g.hover.get_untracked() {
                        g.hover.set(c);
                    }
                }
                on:mouseleave=move |_| g.hover.set(None)
                on:keydown=move |e| g.key(&e, on_event)>
                <canvas node_ref=canvas aria-hidden="true"></canvas>
            </div>
            <div class="heatmap-foot">
                <span class="heatmap-readout" data-testid="heatmap-readout" aria-live="polite">{readout}</span>
                <span class="spacer"></span>
                <legend::Legend max=max unit=unit dark=dark />
            </div>
        </div>
    }
}

/// What the foot reads: the cell under the pointer (or the cursor), else how to select.
fn readout(g: Grid, unit: &str) -> String {
    let cell = g.hover.get().or_else(|| g.cursor.get());
    let pending = g.pending.get();
    let Some(cell) = cell else {
        return "Drag across cells to select an interval · Shift+drag to compare with one".into();
    };
    g.map.with_value(|m| {
        let iv = m.cell_interval(cell);
        let mut s = format!(
            "{} · {} {unit}",
            format_ms_span(iv.start_ms, iv.end_ms),
            m.count(cell)
        );
        if let Some(p) = pending {
            let iv = m.interval(p.from, p.to);
            s.push_str(&format!(
                " · selecting {}",
                format_ms_span(iv.start_ms, iv.end_ms)
            ));
        }
        s
    })
}

/// `10:03:12.200–10:03:12.220` (local time), the end's unchanged leading part left out.
pub fn format_ms_span(start_ms: i64, end_ms: i64) -> String {
    let clock = |ms: i64| {
        format!(
            "{}.{:03}",
            format_clock(ms.div_euclid(1000)),
            ms.rem_euclid(1000)
        )
    };
    let (a, b) = (clock(start_ms), clock(end_ms));
    match a.get(..8) == b.get(..8) {
        true => format!("{a}–{}", &b[8..]),
        false => format!("{a}–{b}"),
    }
}
