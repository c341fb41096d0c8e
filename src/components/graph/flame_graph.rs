//! The flame graph of one profile: a viewport-sized canvas inside a tall scroll container (so a
//! thousands-deep graph scrolls natively without a giant backing store), with hover, click to
//! zoom, keyboard focus and the tooltip.
//!
//! Layout is recomputed only when size, scroll, zoom or orientation change; hover, marks and
//! the metric repaint the same bars. The zoom and the focus belong to the caller (signals in,
//! callbacks out), so the main graph and the sandwich halves share this component.

use std::sync::Arc;

use embers_model::tree::matches::Matches;
use embers_model::view::layout::{
    content_height_css, hit_test, layout, row_top_css, Bar, LayoutOptions, Orientation, Viewport,
};
use embers_model::view::navigate::{step, Step};
use embers_model::view::paint::{
    color_scale, paint, DiffPaint, DrawList, Marks, Metric, PaintInput, WallPaint,
};
use embers_model::NodeId;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::MouseEvent;

use crate::components::graph::canvas::{measure_char_width, prepare, replay, ColorCache, Theme};
use crate::components::graph::tooltip::Tooltip;
use crate::components::size::observe_size;
use crate::components::theme::{theme_state, ThemeState};
use crate::session::runner::graph_painted;
use crate::state::loaded::Loaded;

/// Search, selection and focus marks drawn over the graph.
#[derive(Clone, Debug, Default)]
pub struct GraphMarks {
    /// Active search (non-matching frames are dimmed).
    pub search: Option<Arc<Matches>>,
    /// Selected function id (all its frames outlined).
    pub selected: Option<u32>,
    /// Function id hovered in the table (all its frames outlined).
    pub highlighted: Option<u32>,
    /// Frame with keyboard focus.
    pub focused: Option<NodeId>,
}

/// The graph's inputs and its own state, as one `Copy` value the handlers share.
#[derive(Clone, Copy)]
struct Graph {
    loaded: StoredValue<Arc<Loaded>>,
    zoom: Signal<NodeId>,
    metric: Signal<Metric>,
    orientation: Signal<Orientation>,
    marks: Signal<GraphMarks>,
    size: RwSignal<(f64, f64)>,
    scroll_top: RwSignal<f64>,
    /// The bar under the pointer (changes repaint).
    hover: RwSignal<Option<Bar>>,
    /// Where the pointer is, CSS px (moves the tooltip only).
    pointer: RwSignal<(f64, f64)>,
    bars: StoredValue<Vec<Bar>>,
    laid_out: StoredValue<Option<(Viewport, NodeId, Orientation)>>,
    list: StoredValue<DrawList>,
    colors: StoredValue<Option<ColorCache>, LocalStorage>,
    theme: ThemeState,
    /// The change that gets the full diff colour (computed once per profile).
    diff_scale: StoredValue<f64>,
    /// The browser gave the canvas a new 2D context (after losing it): its font, baseline
    /// and backing store are reset, so the next draw sets them up again.
    fresh_context: StoredValue<bool>,
    /// Bumped to draw again with nothing else changed (a restored context).
    redraw: RwSignal<u32>,
}

impl Graph {
    fn new(
        loaded: Arc<Loaded>,
        zoom: Signal<NodeId>,
        metric: Signal<Metric>,
        orientation: Signal<Orientation>,
        marks: Signal<GraphMarks>,
    ) -> Graph {
        Graph {
            diff_scale: StoredValue::new(loaded.diff.as_deref().map_or(1.0, color_scale)),
            loaded: StoredValue::new(loaded),
            zoom,
            metric,
            orientation,
            marks,
            size: RwSignal::new((0.0, 0.0)),
            scroll_top: RwSignal::new(0.0),
            hover: RwSignal::new(None),
            pointer: RwSignal::new((0.0, 0.0)),
            bars: StoredValue::new(Vec::new()),
            laid_out: StoredValue::new(None),
            list: StoredValue::new(DrawList::default()),
            colors: StoredValue::new_local(None),
            theme: theme_state(),
            fresh_context: StoredValue::new(false),
            redraw: RwSignal::new(0),
        }
    }

    fn pointer_moved(&self, e: &MouseEvent) {
        let at = offset(e);
        let bar = self.bar_at(at);
        if bar.is_some() {
            self.pointer.set(at);
        }
        // Repaint (for the outline) only when the bar under the pointer changes.
        if bar != self.hover.get_untracked() {
            self.hover.set(bar);
        }
    }

    fn click(
        &self,
        e: &MouseEvent,
        on_zoom: Callback<NodeId>,
        on_focus: Option<Callback<Option<NodeId>>>,
        on_pick: Option<Callback<NodeId>>,
    ) {
        let Some(bar) = self.bar_at(offset(e)).filter(Bar::is_frame) else {
            return;
        };
        // The geometry changes under the pointer; the next move finds the new bar.
        self.hover.set(None);
        on_zoom.run(bar.node);
        if let Some(f) = on_focus {
            f.run(Some(bar.node));
        }
        if let Some(pick) = on_pick {
            pick.run(bar.node);
        }
    }

    fn viewport(&self) -> Viewport {
        let (w, h) = self.size.get();
        Viewport {
            width_css: w,
            height_css: h,
            scroll_top_css: self.scroll_top.get(),
        }
    }

    fn options(&self) -> LayoutOptions {
        LayoutOptions {
            orientation: self.orientation.get(),
            ..LayoutOptions::default()
        }
    }

    /// Lays out (when geometry changed), paints and replays one frame.
    fn draw(&self, canvas: &web_sys::HtmlCanvasElement) {
        let (vp, zoom, opts) = (self.viewport(), self.zoom.get(), self.options());
        let (metric, marks, hovered) = (self.metric.get(), self.marks.get(), self.hover.get());
        self.redraw.track();
        let theme = Theme::new(self.theme.is_dark());
        let (palette, by) = (self.theme.palette.get(), self.theme.color_by.get());
        let loaded = self.loaded.get_value();
        if self
            .colors
            .with_value(|c| c.as_ref().map(ColorCache::scheme))
            != Some((palette, by))
        {
            self.colors
                .set_value(Some(ColorCache::new(&loaded.profile, palette, by)));
        }
        if vp.width_css <= 0.0 || vp.height_css <= 0.0 {
            return;
        }
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let first_paint = self.laid_out.get_value().is_none();
        let fresh = self.fresh_context.get_value();
        let Some(ctx) = prepare(canvas, &vp, dpr, first_paint || fresh) else {
            return;
        };
        self.fresh_context.set_value(false);
        if self.laid_out.get_value() != Some((vp, zoom, opts.orientation)) {
            self.bars
                .update_value(|b| layout(&loaded.profile, zoom, &vp, &opts, b));
            self.laid_out.set_value(Some((vp, zoom, opts.orientation)));
        }
        let input = PaintInput {
            profile: &loaded.profile,
            row_height_css: opts.row_height_css,
            metric,
            char_width_css: measure_char_width(&ctx),
            marks: Marks {
                search: marks.search.as_deref().map(|m| m as _),
                selected: marks.selected,
                highlighted: marks.highlighted,
                focused: marks.focused,
                hovered,
            },
            diff: loaded.diff.as_deref().map(|values| DiffPaint {
                diff: values,
                scale: self.diff_scale.get_value(),
                palette,
            }),
            wall: loaded
                .wall
                .as_deref()
                .map(|values| WallPaint { values, palette }),
        };
        self.bars.with_value(|bars| {
            self.list.update_value(|list| paint(bars, &input, list));
        });
        self.colors.with_value(|colors| {
            if let Some(colors) = colors {
                self.list.with_value(|list| {
                    replay(&ctx, list, &vp, &loaded.profile, &theme, colors);
                });
            }
        });
        if first_paint {
            graph_painted();
        }
    }

    /// The bar at a pointer position (the same bars that were drawn).
    fn bar_at(&self, (x, y): (f64, f64)) -> Option<Bar> {
        let (vp, opts) = (self.viewport(), self.options());
        let loaded = self.loaded.get_value();
        self.bars
            .with_value(|b| hit_test(b, &loaded.profile, x, y, &vp, &opts))
    }

    fn content_height(&self) -> f64 {
        let vp = Viewport {
            scroll_top_css: 0.0,
            ..self.viewport()
        };
        self.loaded
            .with_value(|l| content_height_css(&l.profile, &vp, &self.options()))
    }
}

/// The flame graph of a loaded, non-empty profile.
#[component]
pub fn FlameGraph(
    loaded: Arc<Loaded>,
    /// The zoomed node.
    #[prop(into)]
    zoom: Signal<NodeId>,
    /// Called to zoom (a click, Enter).
    on_zoom: Callback<NodeId>,
    #[prop(into)] metric: Signal<Metric>,
    /// Root on top or at the bottom.
    #[prop(into, default = Signal::stored(Orientation::Icicle))]
    orientation: Signal<Orientation>,
    /// Search, selection and focus marks.
    #[prop(into, default = Signal::stored(GraphMarks::default()))]
    marks: Signal<GraphMarks>,
    /// Called to move the keyboard focus; when given, arrows move it and Enter zooms.
    #[prop(optional)]
    on_focus: Option<Callback<Option<NodeId>>>,
    /// Called with the clicked frame (besides zooming).
    #[prop(optional)]
    on_pick: Option<Callback<NodeId>>,
    /// `data-testid` of the canvas.
    #[prop(default = "flame-canvas")]
    testid: &'static str,
    /// Accessible name of the canvas.
    #[prop(default = "Flame graph; use the arrow keys to move between frames, Enter to zoom")]
    label: &'static str,
) -> impl IntoView {
    let scroller = NodeRef::<html::Div>::new();
    let canvas = NodeRef::<html::Canvas>::new();
    let g = Graph::new(loaded.clone(), zoom, metric, orientation, marks);
    observe_size(scroller, g.size);
    on_context_restored(canvas, g);
    Effect::new(move |_| {
        if let Some(el) = canvas.get() {
            g.draw(&el);
        }
    });
    let on_click = move |e: MouseEvent| g.click(&e, on_zoom, on_focus, on_pick);
    let on_key = move |e: web_sys::KeyboardEvent| {
        if let Some(f) = on_focus {
            keyboard(g, scroller, &e, on_zoom, f);
        }
    };
    let tip = loaded.clone();
    view! {
        <div class="graph-frame">
            <div class="graph-scroller" node_ref=scroller
                on:scroll=move |_| {
                    if let Some(el) = scroller.get_untracked() {
                        g.scroll_top.set(f64::from(el.scroll_top()));
                    }
                }>
                <div class="graph-content" style:height=move || format!("{}px", g.content_height())>
                    <canvas class="flame-canvas" data-testid=testid node_ref=canvas tabindex="0"
                        aria-label=label on:keydown=on_key
                        class:pointing=move || g.hover.get().is_some_and(|b| b.is_frame())
                        style:width=move || format!("{}px", g.size.get().0)
                        style:height=move || format!("{}px", g.size.get().1)
                        on:mousemove=move |e| g.pointer_moved(&e)
                        on:mouseleave=move |_| g.hover.set(None)
                        on:click=on_click></canvas>
                </div>
            </div>
            {move || g.hover.get().map(|bar| view! {
                <Tooltip loaded=tip.clone() bar=bar metric=metric.get_untracked()
                    at=g.pointer.get() size=g.size.get_untracked() />
            })}
        </div>
    }
}

/// Draws again, from a fresh context state, when the browser restores a lost 2D context (GPU
/// reset, memory pressure): without it the labels come back in the default font and baseline.
fn on_context_restored(canvas: NodeRef<html::Canvas>, g: Graph) {
    Effect::new(move |_| {
        let Some(el) = canvas.get() else { return };
        let restored = Closure::<dyn FnMut()>::new(move || {
            g.fresh_context.set_value(true);
            g.redraw.update(|n| *n = n.wrapping_add(1));
        });
        let _ = el
            .add_event_listener_with_callback("contextrestored", restored.as_ref().unchecked_ref());
        // Lives as long as the canvas element, which drops the listener with it.
        restored.forget();
    });
}

fn offset(e: &MouseEvent) -> (f64, f64) {
    (f64::from(e.offset_x()), f64::from(e.offset_y()))
}

/// Arrow keys move the focus, Enter (or Space) zooms into it; the focused row scrolls into view.
fn keyboard(
    g: Graph,
    scroller: NodeRef<html::Div>,
    e: &web_sys::KeyboardEvent,
    on_zoom: Callback<NodeId>,
    on_focus: Callback<Option<NodeId>>,
) {
    let zoom = g.zoom.get_untracked();
    let current = g.marks.with_untracked(|m| m.focused).unwrap_or(zoom);
    let next = match e.key().as_str() {
        "Enter" | " " => {
            on_zoom.run(current);
            Some(current)
        }
        key => Step::from_key(key).map(|s| {
            let orientation = g.orientation.get_untracked();
            g.loaded
                .with_value(|l| step(&l.profile, current, zoom, s, orientation))
        }),
    };
    if let Some(node) = next {
        e.prevent_default();
        on_focus.run(Some(node));
        scroll_into_view(g, scroller, node);
    }
}

/// Scrolls the graph so that `node`'s row is visible.
fn scroll_into_view(g: Graph, scroller: NodeRef<html::Div>, node: NodeId) {
    let Some(el) = scroller.get_untracked() else {
        return;
    };
    let current = f64::from(el.scroll_top());
    let vp = Viewport {
        width_css: 1.0,
        height_css: g.size.get_untracked().1,
        scroll_top_css: current,
    };
    let opts = LayoutOptions {
        orientation: g.orientation.get_untracked(),
        ..LayoutOptions::default()
    };
    let top = g
        .loaded
        .with_value(|l| row_top_css(&l.profile, l.profile.depth(node), &vp, &opts));
    let row_h = opts.row_height_css;
    if top < 0.0 {
        el.set_scroll_top((current + top) as i32);
    } else if top + row_h > vp.height_css {
        el.set_scroll_top((current + top + row_h - vp.height_css).ceil() as i32);
    }
}
