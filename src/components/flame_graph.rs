//! The interactive canvas: sizing, scrolling, hover, click-to-zoom, and the tooltip.
//!
//! The canvas is always viewport-sized (a sticky element inside a tall scroll container), so a
//! thousands-deep graph scrolls natively without a giant backing store. Layout is recomputed
//! only when size, scroll or zoom change; hover and metric changes just redraw the same bars.

use std::sync::Arc;

use embers_model::format::{format_percent, format_value};
use embers_model::layout::{content_height_css, hit_test, layout, Bar, LayoutOptions, Viewport};
use embers_model::NodeId;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{MouseEvent, ResizeObserver};

use crate::render::{draw, measure_char_width, prepare, Frame, Theme};
use crate::state::{Loaded, Metric};

/// The pointer's offset from the tooltip, CSS px.
const TOOLTIP_OFFSET_CSS: f64 = 14.0;
/// Assumed tooltip width when deciding to flip it left of the pointer, CSS px.
const TOOLTIP_FLIP_WIDTH_CSS: f64 = 360.0;

/// A hovered bar and where the pointer is, in the graph's CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hover {
    bar: Bar,
    x_css: f64,
    y_css: f64,
}

/// Whether the page is in dark mode.
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The flame graph of a loaded, non-empty profile.
#[component]
pub fn FlameGraph(
    loaded: Arc<Loaded>,
    zoom: RwSignal<NodeId>,
    metric: RwSignal<Metric>,
) -> impl IntoView {
    let scroller = NodeRef::<html::Div>::new();
    let canvas = NodeRef::<html::Canvas>::new();
    let size = RwSignal::new((0.0f64, 0.0f64));
    let scroll_top = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<Hover>);
    let bars = StoredValue::new(Vec::<Bar>::new());
    let last_layout = StoredValue::new(None::<(Viewport, NodeId)>);
    let char_width = StoredValue::new(0.0f64);
    let options = LayoutOptions::default();
    let theme = Theme::new(prefers_dark());

    observe_size(scroller, size);

    let profile_for_height = loaded.clone();
    let content_height = move || {
        let (w, h) = size.get();
        let vp = Viewport {
            width_css: w,
            height_css: h,
            scroll_top_css: 0.0,
        };
        content_height_css(&profile_for_height.profile, &vp, &options)
    };

    let viewport = move || {
        let (w, h) = size.get();
        Viewport {
            width_css: w,
            height_css: h,
            scroll_top_css: scroll_top.get(),
        }
    };

    let drawn = loaded.clone();
    Effect::new(move |_| {
        let vp = viewport();
        let z = zoom.get();
        let metric = metric.get();
        let hovered = hover.get().map(|h| h.bar);
        let Some(el) = canvas.get() else { return };
        if vp.width_css <= 0.0 || vp.height_css <= 0.0 {
            return;
        }
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let Some(ctx) = prepare(&el, &vp, dpr) else {
            return;
        };
        if char_width.get_value() == 0.0 {
            char_width.set_value(measure_char_width(&ctx));
        }
        if last_layout.get_value() != Some((vp, z)) {
            bars.update_value(|b| layout(&drawn.profile, z, &vp, &options, b));
            last_layout.set_value(Some((vp, z)));
        }
        let frame = Frame {
            loaded: &drawn,
            viewport: vp,
            options,
            metric,
            hovered,
            theme: &theme,
            char_width_css: char_width.get_value(),
        };
        bars.with_value(|b| draw(&ctx, b, &frame));
    });

    // A Copy handle, so both pointer handlers can share the hit-test closure.
    let hit_loaded = StoredValue::new(loaded.clone());
    let bar_at = move |e: &MouseEvent| -> Option<Hover> {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        let vp = viewport();
        let profile = hit_loaded.get_value();
        bars.with_value(|b| hit_test(b, &profile.profile, x, y, &vp, &options))
            .map(|bar| Hover {
                bar,
                x_css: x,
                y_css: y,
            })
    };
    let tooltip_pos = RwSignal::new((0.0f64, 0.0f64));
    let on_move = move |e: MouseEvent| {
        let h = bar_at(&e);
        if let Some(h) = h {
            tooltip_pos.set((h.x_css, h.y_css));
        }
        // Redraw (for the outline) only when the bar under the pointer changes.
        if h.map(|h| h.bar) != hover.get_untracked().map(|h| h.bar) {
            hover.set(h);
        }
    };
    let on_click = move |e: MouseEvent| {
        if let Some(h) = bar_at(&e).filter(|h| h.bar.is_frame()) {
            // The geometry changes under the pointer; the next move finds the new bar.
            hover.set(None);
            zoom.set(h.bar.node);
        }
    };

    let tip_loaded = loaded.clone();
    view! {
        <div class="graph-frame">
            <div class="graph-scroller" node_ref=scroller
                on:scroll=move |_| {
                    if let Some(el) = scroller.get_untracked() {
                        scroll_top.set(f64::from(el.scroll_top()));
                    }
                }>
                <div class="graph-content" style:height=move || format!("{}px", content_height())>
                    <canvas class="flame-canvas" data-testid="flame-canvas" node_ref=canvas
                        aria-label="Flame graph; the function table and status line describe it in text"
                        class:pointing=move || hover.get().is_some_and(|h| h.bar.is_frame())
                        style:width=move || format!("{}px", size.get().0)
                        style:height=move || format!("{}px", size.get().1)
                        on:mousemove=on_move
                        on:mouseleave=move |_| hover.set(None)
                        on:click=on_click></canvas>
                </div>
            </div>
            {move || hover.get().map(|h| {
                let (x, y) = tooltip_pos.get();
                let flip = x + TOOLTIP_OFFSET_CSS + TOOLTIP_FLIP_WIDTH_CSS > size.get_untracked().0;
                let left = if flip { (x - TOOLTIP_OFFSET_CSS - TOOLTIP_FLIP_WIDTH_CSS).max(0.0) } else { x + TOOLTIP_OFFSET_CSS };
                view! {
                    <div class="tooltip" data-testid="tooltip" role="tooltip"
                        style:left=format!("{left}px") style:top=format!("{}px", y + TOOLTIP_OFFSET_CSS)>
                        <TooltipBody loaded=tip_loaded.clone() bar=h.bar metric=metric.get_untracked() />
                    </div>
                }
            })}
        </div>
    }
}

/// Keeps `size` equal to the element's client size (CSS px).
fn observe_size(target: NodeRef<html::Div>, size: RwSignal<(f64, f64)>) {
    let observer = StoredValue::new_local(None::<ResizeObserver>);
    Effect::new(move |_| {
        let Some(el) = target.get() else { return };
        let measured = el.clone();
        let callback = Closure::<dyn FnMut()>::new(move || {
            size.set((
                f64::from(measured.client_width()),
                f64::from(measured.client_height()),
            ));
        });
        if let Ok(ro) = ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            ro.observe(&el);
            observer.set_value(Some(ro));
        }
        size.set((f64::from(el.client_width()), f64::from(el.client_height())));
        // The observer owns the callback for the component's life; disconnecting on cleanup
        // stops it from firing, so leaking this small closure is bounded by mounts.
        callback.forget();
    });
    on_cleanup(move || {
        observer.with_value(|ro| {
            if let Some(ro) = ro {
                ro.disconnect();
            }
        })
    });
}

/// The tooltip's content: name, kind, and both metrics (the active one first).
#[component]
fn TooltipBody(loaded: Arc<Loaded>, bar: Bar, metric: Metric) -> impl IntoView {
    let p = &loaded.profile;
    if !bar.is_frame() {
        return view! {
            <div class="tip-name">{format!("{} small frames", bar.merged)}</div>
            <div class="tip-kind">"Too narrow to draw one by one; click a wider parent to zoom in."</div>
        }
        .into_any();
    }
    let node = bar.node;
    let root = p.root_total();
    let parent_total = p.parent(node).map_or(root, |q| p.total(q));
    let unit = loaded.unit;
    let total_line = format!(
        "{} · {} of all · {} of parent",
        format_value(p.total(node), unit),
        format_percent(p.total(node), root),
        format_percent(p.total(node), parent_total)
    );
    let self_line = format!(
        "{} · {} of all · {} of parent",
        format_value(p.self_value(node), unit),
        format_percent(p.self_value(node), root),
        format_percent(p.self_value(node), parent_total)
    );
    let rows = match metric {
        Metric::Total => [("Total", total_line), ("Self", self_line)],
        Metric::Self_ => [("Self", self_line), ("Total", total_line)],
    };
    view! {
        <div class="tip-name">{p.name(node).to_string()}</div>
        <div class="tip-kind">{format!("{} frame · depth {}", p.kind(node).label(), p.depth(node))}</div>
        <dl class="tip-values">
            {rows.into_iter().enumerate().map(|(i, (k, v))| view! {
                <dt class:lead=i == 0>{k}</dt><dd class:lead=i == 0>{v}</dd>
            }).collect_view()}
        </dl>
    }
    .into_any()
}
