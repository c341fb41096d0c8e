//! The interactive canvas: sizing, scrolling, hover, click-to-zoom, and the tooltip.
//!
//! The canvas is always viewport-sized (a sticky element inside a tall scroll container), so a
//! thousands-deep graph scrolls natively without a giant backing store. Layout is recomputed
//! only when size, scroll or zoom change; hover and metric changes just redraw the same bars.

use std::sync::Arc;

use embers_model::view::format::{format_percent, format_value};
use embers_model::view::layout::{
    content_height_css, hit_test, layout, row_top_css, Bar, LayoutOptions, Orientation, Viewport,
};
use embers_model::{NodeId, Profile};
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{MouseEvent, ResizeObserver};

use crate::components::theme::theme_state;
use crate::render::{draw, measure_char_width, prepare, ColorCache, Frame, Overlay, Theme};
use crate::state::{Loaded, Metric};

/// The pointer's offset from the tooltip, CSS px.
const TOOLTIP_OFFSET_CSS: f64 = 14.0;
/// Tooltip width (its CSS max-width) for deciding to flip it left of the pointer, CSS px.
const TOOLTIP_FLIP_WIDTH_CSS: f64 = 360.0;
/// Typical tooltip height for deciding to flip it above the pointer, CSS px.
const TOOLTIP_FLIP_HEIGHT_CSS: f64 = 110.0;

/// A hovered bar and where the pointer is, in the graph's CSS px.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Hover {
    bar: Bar,
    x_css: f64,
    y_css: f64,
}

/// The flame graph of a loaded, non-empty profile.
#[component]
pub fn FlameGraph(
    loaded: Arc<Loaded>,
    zoom: RwSignal<NodeId>,
    #[prop(into)] metric: Signal<Metric>,
    /// Root on top or at the bottom.
    #[prop(into, default = Signal::stored(Orientation::Icicle))]
    orientation: Signal<Orientation>,
    /// Search, selection and focus marks.
    #[prop(into, default = Signal::stored(Overlay::default()))]
    overlay: Signal<Overlay>,
    /// Keyboard focus; when given, arrows move it and Enter zooms.
    #[prop(optional)]
    focused: Option<RwSignal<Option<NodeId>>>,
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
    let size = RwSignal::new((0.0f64, 0.0f64));
    let scroll_top = RwSignal::new(0.0f64);
    let hover = RwSignal::new(None::<Hover>);
    let bars = StoredValue::new(Vec::<Bar>::new());
    let last_layout = StoredValue::new(None::<(Viewport, NodeId, Orientation)>);
    let char_width = StoredValue::new(0.0f64);
    let theme_state = theme_state();
    // Colours per function, recomputed only when the palette changes.
    let colors = StoredValue::new_local(None::<ColorCache>);
    let options = move || LayoutOptions {
        orientation: orientation.get(),
        ..LayoutOptions::default()
    };

    observe_size(scroller, size);

    let profile_for_height = loaded.clone();
    let content_height = move || {
        let (w, h) = size.get();
        let vp = Viewport {
            width_css: w,
            height_css: h,
            scroll_top_css: 0.0,
        };
        content_height_css(&profile_for_height.profile, &vp, &options())
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
        let options = options();
        let overlay = overlay.get();
        let theme = Theme::new(theme_state.is_dark());
        let palette = theme_state.palette.get();
        if colors.with_value(|c| c.as_ref().map(ColorCache::palette) != Some(palette)) {
            colors.set_value(Some(ColorCache::new(&drawn, palette)));
        }
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
        if last_layout.get_value() != Some((vp, z, options.orientation)) {
            bars.update_value(|b| layout(&drawn.profile, z, &vp, &options, b));
            last_layout.set_value(Some((vp, z, options.orientation)));
        }
        colors.with_value(|c| {
            let Some(colors) = c else { return };
            let frame = Frame {
                loaded: &drawn,
                viewport: vp,
                options,
                metric,
                hovered,
                overlay: &overlay,
                theme: &theme,
                char_width_css: char_width.get_value(),
                colors,
            };
            bars.with_value(|b| draw(&ctx, b, &frame));
        });
    });

    // A Copy handle, so both pointer handlers can share the hit-test closure.
    let hit_loaded = StoredValue::new(loaded.clone());
    let bar_at = move |e: &MouseEvent| -> Option<Hover> {
        let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        let vp = viewport();
        let profile = hit_loaded.get_value();
        bars.with_value(|b| hit_test(b, &profile.profile, x, y, &vp, &options()))
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
            if let Some(f) = focused {
                f.set(Some(h.bar.node));
            }
            if let Some(pick) = on_pick {
                pick.run(h.bar.node);
            }
        }
    };

    let tip_loaded = loaded.clone();
    let key_loaded = StoredValue::new(loaded.clone());
    let on_key = move |e: web_sys::KeyboardEvent| {
        let Some(focused) = focused else { return };
        let profile = &key_loaded.get_value().profile;
        let current = focused
            .get_untracked()
            .unwrap_or_else(|| zoom.get_untracked());
        let next = match e.key().as_str() {
            "Enter" | " " => {
                zoom.set(current);
                Some(current)
            }
            key => keyboard_step(
                profile,
                current,
                zoom.get_untracked(),
                key,
                orientation.get_untracked(),
            ),
        };
        if let Some(node) = next {
            e.prevent_default();
            focused.set(Some(node));
            scroll_into_view(scroller, profile, node, &options(), size.get_untracked().1);
        }
    };
    view! {
        <div class="graph-frame">
            <div class="graph-scroller" node_ref=scroller
                on:scroll=move |_| {
                    if let Some(el) = scroller.get_untracked() {
                        scroll_top.set(f64::from(el.scroll_top()));
                    }
                }>
                <div class="graph-content" style:height=move || format!("{}px", content_height())>
                    <canvas class="flame-canvas" data-testid=testid node_ref=canvas tabindex="0"
                        aria-label=label on:keydown=on_key
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
                let (width, height) = size.get_untracked();
                // Flip to the pointer's other side near the right or bottom edge; translating by
                // -100% uses the tooltip's real size, so there is no gap to guess.
                let flip_x = x + TOOLTIP_OFFSET_CSS + TOOLTIP_FLIP_WIDTH_CSS > width;
                let flip_y = y + TOOLTIP_OFFSET_CSS + TOOLTIP_FLIP_HEIGHT_CSS > height && y > height / 2.0;
                let left = if flip_x { x - TOOLTIP_OFFSET_CSS } else { x + TOOLTIP_OFFSET_CSS };
                let top = if flip_y { y - TOOLTIP_OFFSET_CSS } else { y + TOOLTIP_OFFSET_CSS };
                let shift = format!("translate({}, {})", if flip_x { "-100%" } else { "0" }, if flip_y { "-100%" } else { "0" });
                view! {
                    <div class="tooltip" data-testid="tooltip" role="tooltip"
                        style:left=format!("{left}px") style:top=format!("{top}px") style:transform=shift>
                        <TooltipBody loaded=tip_loaded.clone() bar=h.bar metric=metric.get_untracked() />
                    </div>
                }
            })}
        </div>
    }
}

/// Where an arrow key moves the keyboard focus: along the row (left/right), to the parent or the
/// widest child (up/down, following the orientation). Stays inside the zoomed subtree.
pub fn keyboard_step(
    p: &Profile,
    from: NodeId,
    zoom: NodeId,
    key: &str,
    orientation: Orientation,
) -> Option<NodeId> {
    let toward_root = match (key, orientation) {
        ("ArrowUp", Orientation::Icicle) | ("ArrowDown", Orientation::Flame) => true,
        ("ArrowDown", Orientation::Icicle) | ("ArrowUp", Orientation::Flame) => false,
        ("ArrowLeft" | "ArrowRight", _) => {
            let row = p.row(p.depth(from));
            let i = row.partition_point(|&n| n < from);
            let candidate = if key == "ArrowLeft" {
                i.checked_sub(1).and_then(|i| row.get(i))
            } else {
                row.get(i + 1)
            };
            return candidate
                .copied()
                .filter(|&n| p.is_in_subtree(n, zoom))
                .or(Some(from));
        }
        ("Home", _) => return Some(zoom),
        _ => return None,
    };
    if toward_root {
        Some(
            p.parent(from)
                .filter(|&q| p.is_in_subtree(q, zoom))
                .unwrap_or(from),
        )
    } else {
        Some(
            p.children(from)
                .max_by_key(|&c| (p.total(c), std::cmp::Reverse(c)))
                .unwrap_or(from),
        )
    }
}

/// Scrolls the graph so that `node`'s row is visible.
fn scroll_into_view(
    scroller: NodeRef<html::Div>,
    p: &Profile,
    node: NodeId,
    options: &LayoutOptions,
    height: f64,
) {
    let Some(el) = scroller.get_untracked() else {
        return;
    };
    let current = f64::from(el.scroll_top());
    let vp = Viewport {
        width_css: 1.0,
        height_css: height,
        scroll_top_css: current,
    };
    let top = row_top_css(p, p.depth(node), &vp, options);
    let row_h = options.row_height_css;
    if top < 0.0 {
        el.set_scroll_top((current + top) as i32);
    } else if top + row_h > height {
        el.set_scroll_top((current + top + row_h - height).ceil() as i32);
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
        observer.try_with_value(|ro| {
            if let Some(ro) = ro {
                ro.disconnect();
            }
        });
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
