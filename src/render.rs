//! The canvas renderer: replays laid-out bars onto a 2D context.
//!
//! Layout works in `css_px`; here the backing store is sized in `device_px`
//! (`css_px × devicePixelRatio`) and the context is scaled once, so bars and text stay sharp
//! on HiDPI screens while every coordinate below stays in CSS pixels.

use embers_model::view::color::{self_heat, Palette, MERGED_COLOR};
use embers_model::view::format::{elide, format_percent};
use std::cell::OnceCell;
use std::sync::Arc;

use embers_model::tree::search::SearchResult;
use embers_model::view::layout::{Bar, LayoutOptions, Viewport};
use embers_model::NodeId;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::state::{Loaded, Metric, ROOT_COLOR};

/// Label font; monospace so that elision is arithmetic, not a `measureText` per bar.
pub const LABEL_FONT: &str = "12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
/// Horizontal padding inside a bar before its label, CSS px.
const LABEL_PAD_CSS: f64 = 4.0;
/// Bars at least this wide get a 1 px gap on their right, so neighbours stay distinct.
const GAP_MIN_WIDTH_CSS: f64 = 3.0;
/// Opacity of the dimmed ancestors of a zoomed frame.
const ANCESTOR_ALPHA: f64 = 0.45;
/// Opacity of frames that do not match an active search.
const NON_MATCH_ALPHA: f64 = 0.35;

/// What is drawn on top of the bars: search matches, selection, table hover, keyboard focus.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    /// Active search over this profile (non-matching frames are dimmed).
    pub search: Option<Arc<SearchResult>>,
    /// Selected function id (all its frames outlined).
    pub selected: Option<u32>,
    /// Function id hovered in the table (all its frames outlined).
    pub highlighted: Option<u32>,
    /// Frame with keyboard focus.
    pub focused: Option<NodeId>,
}

/// Colours that depend on the page theme.
#[derive(Clone, Debug)]
pub struct Theme {
    /// Canvas background.
    pub background: &'static str,
    /// Label colour on bars (bars are light in both themes).
    pub label: &'static str,
    /// Fixed bar fills as JS strings, converted once: label, merged runs, the root.
    fills: FixedFills,
    /// Outline of the hovered bar.
    pub hover: &'static str,
    /// Outline of the selected function's frames and the keyboard focus.
    pub accent: &'static str,
}

impl Theme {
    /// Theme for light or dark pages.
    pub fn new(dark: bool) -> Theme {
        if dark {
            Theme {
                background: "#17181b",
                label: "#111111",
                fills: FixedFills::new("#111111"),
                hover: "#ffffff",
                accent: "#60a5fa",
            }
        } else {
            Theme {
                background: "#ffffff",
                label: "#1d1d1f",
                fills: FixedFills::new("#1d1d1f"),
                hover: "#111111",
                accent: "#2563eb",
            }
        }
    }
}

/// Fill colours used for many bars a frame, as JS strings (a `&str` would be re-encoded into a
/// new JS string on every call).
#[derive(Clone, Debug)]
struct FixedFills {
    label: JsValue,
    merged: JsValue,
    root: JsValue,
}

impl FixedFills {
    fn new(label: &str) -> FixedFills {
        FixedFills {
            label: JsValue::from_str(label),
            merged: JsValue::from_str(&MERGED_COLOR.css()),
            root: JsValue::from_str(ROOT_COLOR),
        }
    }
}

/// Everything one frame of drawing needs besides the bars.
pub struct Frame<'a> {
    /// The loaded profile and its colours.
    pub loaded: &'a Loaded,
    /// The viewport the bars were laid out for.
    pub viewport: Viewport,
    /// Layout settings (row height).
    pub options: LayoutOptions,
    /// Which metric leads.
    pub metric: Metric,
    /// The bar under the pointer, if any.
    pub hovered: Option<Bar>,
    /// Search, selection and focus marks.
    pub overlay: &'a Overlay,
    /// Theme colours.
    pub theme: &'a Theme,
    /// Width of one label character, CSS px (measured once per font).
    pub char_width_css: f64,
    /// Fill colour per function id.
    pub colors: &'a ColorCache,
}

/// Fill colours per function id as JS strings, each made on first use: a profile can name
/// 10^5 functions, a frame shows a few hundred, and each conversion crosses into JS.
pub struct ColorCache {
    palette: Palette,
    fills: Vec<OnceCell<JsValue>>,
}

impl ColorCache {
    /// An empty cache for the functions of `loaded` in `palette`.
    pub fn new(loaded: &Loaded, palette: Palette) -> ColorCache {
        ColorCache {
            palette,
            fills: vec![OnceCell::new(); loaded.profile.function_count()],
        }
    }

    /// The palette the colours are for.
    pub fn palette(&self) -> Palette {
        self.palette
    }

    fn fill(&self, loaded: &Loaded, func: u32) -> &JsValue {
        self.fills[func as usize]
            .get_or_init(|| JsValue::from_str(&loaded.color(func, self.palette)))
    }
}

/// Sizes the backing store for the viewport and returns the context, scaled to CSS px.
pub fn prepare(
    canvas: &HtmlCanvasElement,
    viewport: &Viewport,
    dpr: f64,
) -> Option<CanvasRenderingContext2d> {
    let (w, h) = (
        (viewport.width_css * dpr).round() as u32,
        (viewport.height_css * dpr).round() as u32,
    );
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    let ctx = canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()?;
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0).ok()?;
    Some(ctx)
}

/// Measures the label font's character width (call once; the font is monospace).
pub fn measure_char_width(ctx: &CanvasRenderingContext2d) -> f64 {
    ctx.set_font(LABEL_FONT);
    ctx.measure_text("0123456789")
        .map(|m| m.width() / 10.0)
        .unwrap_or(7.2)
}

/// Draws `bars`.
pub fn draw(ctx: &CanvasRenderingContext2d, bars: &[Bar], frame: &Frame<'_>) {
    let vp = &frame.viewport;
    ctx.set_global_alpha(1.0);
    ctx.set_fill_style_str(frame.theme.background);
    ctx.fill_rect(0.0, 0.0, vp.width_css, vp.height_css);
    ctx.set_font(LABEL_FONT);
    ctx.set_text_baseline("middle");
    let profile = &frame.loaded.profile;
    let max_self = bars
        .iter()
        .filter(|b| b.is_frame())
        .map(|b| profile.self_value(b.node))
        .max()
        .unwrap_or(0)
        .max(1);
    let row_h = frame.options.row_height_css;
    let search = frame.overlay.search.as_deref();
    let mut labels = Labels::default();
    let mut current_alpha = 1.0;
    for bar in bars {
        let mut alpha = if bar.is_ancestor { ANCESTOR_ALPHA } else { 1.0 };
        if search.is_some_and(|s| !bar.is_frame() || !s.is_match(profile, bar.node)) {
            alpha *= NON_MATCH_ALPHA;
        }
        if alpha != current_alpha {
            ctx.set_global_alpha(alpha);
            current_alpha = alpha;
        }
        set_fill(ctx, &bar_fill(bar, frame, max_self));
        let w = if bar.width_css >= GAP_MIN_WIDTH_CSS {
            bar.width_css - 1.0
        } else {
            bar.width_css
        };
        ctx.fill_rect(bar.x_css, bar.y_css, w, row_h - 1.0);
        if bar.is_frame() {
            labels.add(bar, frame, w, alpha);
        }
    }
    #[allow(deprecated)] // see `set_fill`
    ctx.set_fill_style(&frame.theme.fills.label);
    labels.draw(ctx);
    ctx.set_global_alpha(1.0);
    draw_marks(ctx, bars, frame);
}

/// Outlines: selected/highlighted function frames, keyboard focus, pointer hover.
fn draw_marks(ctx: &CanvasRenderingContext2d, bars: &[Bar], frame: &Frame<'_>) {
    let profile = &frame.loaded.profile;
    let row_h = frame.options.row_height_css;
    let outline = |bar: &Bar, color: &str, width: f64| {
        ctx.set_stroke_style_str(color);
        ctx.set_line_width(width);
        let inset = width / 2.0;
        ctx.stroke_rect(
            bar.x_css + inset,
            bar.y_css + inset,
            (bar.width_css - width).max(1.0),
            row_h - 1.0 - width,
        );
    };
    let marked = |f: Option<u32>, bar: &Bar| {
        bar.is_frame() && f.is_some_and(|f| profile.func(bar.node) == f)
    };
    for bar in bars {
        if marked(frame.overlay.selected, bar) || marked(frame.overlay.highlighted, bar) {
            outline(bar, frame.theme.accent, 2.0);
        }
        if bar.is_frame() && frame.overlay.focused == Some(bar.node) {
            ctx.set_line_dash(&js_sys::Array::of2(&3.0.into(), &2.0.into()))
                .ok();
            outline(bar, frame.theme.hover, 2.0);
            ctx.set_line_dash(&js_sys::Array::new()).ok();
        }
    }
    if let Some(h) = frame.hovered {
        outline(&h, frame.theme.hover, 1.5);
    }
}

/// A bar's fill: a cached JS string (per function or fixed; no UTF-8 → JS conversion per bar
/// and frame), or a computed colour for Self shading.
enum Fill<'c> {
    Cached(&'c JsValue),
    Computed(String),
}

fn bar_fill<'c>(bar: &Bar, frame: &Frame<'c>, max_self: u64) -> Fill<'c> {
    if !bar.is_frame() {
        return Fill::Cached(&frame.theme.fills.merged);
    }
    match frame.metric {
        Metric::Total if bar.node == 0 => Fill::Cached(&frame.theme.fills.root),
        Metric::Total => Fill::Cached(
            frame
                .colors
                .fill(frame.loaded, frame.loaded.profile.func(bar.node)),
        ),
        Metric::Self_ => {
            let s = frame.loaded.profile.self_value(bar.node) as f64 / max_self as f64;
            Fill::Computed(self_heat(s).css())
        }
    }
}

fn set_fill(ctx: &CanvasRenderingContext2d, fill: &Fill<'_>) {
    match fill {
        // `set_fill_style(&JsValue)` is deprecated only in favour of typed setters; a JS
        // string is exactly what `fillStyle` takes, and passing it avoids a re-encode.
        #[allow(deprecated)]
        Fill::Cached(v) => ctx.set_fill_style(v),
        Fill::Computed(css) => ctx.set_fill_style_str(css),
    }
}

/// The label a bar shows: the name, then the leading metric's share of the root.
pub fn label_text(loaded: &Loaded, node: u32, metric: Metric) -> String {
    let p = &loaded.profile;
    let value = match metric {
        Metric::Total => p.total(node),
        Metric::Self_ => p.self_value(node),
    };
    let share = format_percent(value, p.root_total());
    match metric {
        Metric::Total => format!("{} ({share})", p.name(node)),
        Metric::Self_ => format!("{} (self {share})", p.name(node)),
    }
}

#[wasm_bindgen(inline_js = "
export function fill_labels(ctx, text, ends, xs, ys, alphas) {
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    if (ctx.globalAlpha !== alphas[i]) ctx.globalAlpha = alphas[i];
    ctx.fillText(text.substring(start, ends[i]), xs[i], ys[i]);
    start = ends[i];
  }
}")]
extern "C" {
    /// Draws label `i` = `text[ends[i-1]..ends[i]]` (UTF-16 offsets) at `(xs[i], ys[i])`.
    fn fill_labels(
        ctx: &CanvasRenderingContext2d,
        text: &str,
        ends: &[u32],
        xs: &[f64],
        ys: &[f64],
        alphas: &[f64],
    );
}

/// The labels of one frame, collected while the bars are drawn and then drawn in one call:
/// one UTF-8 → JS string conversion a frame instead of one a label.
#[derive(Default)]
struct Labels {
    text: String,
    /// End of each label in `text`, in UTF-16 code units (what JS `substring` counts).
    ends: Vec<u32>,
    xs: Vec<f64>,
    ys: Vec<f64>,
    alphas: Vec<f64>,
    utf16_len: u32,
}

impl Labels {
    /// Adds the label of a frame bar drawn `width` CSS px wide, if it has room for one.
    fn add(&mut self, bar: &Bar, frame: &Frame<'_>, width: f64, alpha: f64) {
        let room = width - 2.0 * LABEL_PAD_CSS;
        if room < frame.char_width_css * 3.0 {
            return;
        }
        let max_chars = (room / frame.char_width_css).floor() as usize;
        let full = label_text(frame.loaded, bar.node, frame.metric);
        // Prefer the bare name over a cut-off percentage.
        let text = if full.chars().count() <= max_chars {
            full
        } else {
            match elide(frame.loaded.profile.name(bar.node), max_chars) {
                Some(t) => t.into_owned(),
                None => return,
            }
        };
        self.utf16_len += text.encode_utf16().count() as u32;
        self.text.push_str(&text);
        self.ends.push(self.utf16_len);
        self.xs.push(bar.x_css + LABEL_PAD_CSS);
        self.ys.push(bar.y_css + frame.options.row_height_css / 2.0);
        self.alphas.push(alpha);
    }

    fn draw(&self, ctx: &CanvasRenderingContext2d) {
        if !self.ends.is_empty() {
            fill_labels(
                ctx,
                &self.text,
                &self.ends,
                &self.xs,
                &self.ys,
                &self.alphas,
            );
        }
    }
}
