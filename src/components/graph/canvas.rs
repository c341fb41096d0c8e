//! The canvas: replays a [`DrawList`] (decided by `embers_model::view::paint`) onto a 2D
//! context. It decides nothing about how frames look; it only resolves colours to strings and
//! issues the calls.
//!
//! Layout and paint work in `css_px`; here the backing store is sized in `device_px`
//! (`css_px × devicePixelRatio`) and the context is scaled once, so bars and text stay sharp
//! on HiDPI screens while every coordinate stays in CSS pixels.

use std::cell::{Cell, OnceCell, RefCell};

use embers_model::view::color::{fill_color, ColorBy, Palette, MERGED_COLOR};
use embers_model::view::layout::Viewport;
use embers_model::view::paint::{DrawList, Fill, Labels, Mark};
use embers_model::Profile;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Label font; monospace so that elision is arithmetic, not a `measureText` per bar.
pub const LABEL_FONT: &str = "12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";

/// The root bar's colour (neutral: it is the whole).
const ROOT_COLOR: &str = "#b9ada1";

/// Colours that depend on the page theme.
#[derive(Clone, Debug)]
pub struct Theme {
    /// Canvas background.
    background: &'static str,
    /// Outline of the hovered bar and the keyboard focus.
    hover: &'static str,
    /// Outline of the selected function's frames.
    accent: &'static str,
    /// Dashed outline of frames only a diff's baseline has.
    gone: &'static str,
    /// Fixed fills as JS strings, converted once (a `&str` would be re-encoded on every call).
    label: JsValue,
    merged: JsValue,
    /// A function whose colour is missing (never expected).
    missing: JsValue,
    root: JsValue,
}

impl Theme {
    /// Theme for light or dark pages. Bars are light in both, so labels are dark in both.
    pub fn new(dark: bool) -> Theme {
        let (background, label, hover, accent, gone) = if dark {
            ("#17181b", "#111111", "#ffffff", "#60a5fa", "#9aa0a6")
        } else {
            ("#ffffff", "#1d1d1f", "#111111", "#2563eb", "#5f6368")
        };
        Theme {
            background,
            hover,
            accent,
            gone,
            label: JsValue::from_str(label),
            merged: merged_fill(dark),
            missing: JsValue::from_str(&MERGED_COLOR.css()),
            root: JsValue::from_str(ROOT_COLOR),
        }
    }
}

/// Fill colours per function id as JS strings, each made on first use: a profile can name
/// 10^5 functions, a frame shows a few hundred, and each conversion crosses into JS.
pub struct ColorCache {
    palette: Palette,
    by: ColorBy,
    fills: Vec<OnceCell<JsValue>>,
}

impl ColorCache {
    /// An empty cache for the functions of `profile` in `palette`, coloured `by` kind or package.
    pub fn new(profile: &Profile, palette: Palette, by: ColorBy) -> ColorCache {
        ColorCache {
            palette,
            by,
            fills: vec![OnceCell::new(); profile.function_count()],
        }
    }

    /// The palette and colouring the colours are for.
    pub fn scheme(&self) -> (Palette, ColorBy) {
        (self.palette, self.by)
    }

    fn fill(&self, profile: &Profile, func: u32) -> Option<&JsValue> {
        let cell = self.fills.get(func as usize)?;
        Some(cell.get_or_init(|| {
            let kind = profile.function_kind(func);
            let name = profile.function_name(func);
            rgb_css(fill_color(kind, name, self.palette, self.by).packed())
        }))
    }
}

/// Sizes the backing store for the viewport and returns the context, scaled to CSS px, with
/// the label font set. `first` says the canvas was never drawn by us.
pub fn prepare(
    canvas: &HtmlCanvasElement,
    viewport: &Viewport,
    dpr: f64,
    first: bool,
) -> Option<CanvasRenderingContext2d> {
    let (w, h) = (
        (viewport.width_css * dpr).round() as u32,
        (viewport.height_css * dpr).round() as u32,
    );
    // Setting either size clears the canvas and resets its state, even to the same value.
    let resized = canvas.width() != w || canvas.height() != h;
    if resized {
        canvas.set_width(w);
        canvas.set_height(h);
    }
    let ctx = canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()?;
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0).ok()?;
    // Resizing resets the context's state. Otherwise the font stays: setting it makes Blink
    // parse the font string again, ~0.4 ms of every redraw.
    if first || resized {
        ctx.set_font(LABEL_FONT);
        ctx.set_text_baseline("middle");
    }
    Some(ctx)
}

thread_local! {
    /// The label font's character width once measured: the font is fixed for the page's life,
    /// so a new graph (every answer) need not measure it again.
    static CHAR_WIDTH: Cell<f64> = const { Cell::new(0.0) };
}

/// The label font's character width as measured by the first graph, or a typical 12 px
/// monospace width before one was drawn (the function table's names use the same font).
pub fn char_width() -> f64 {
    let known = CHAR_WIDTH.get();
    if known > 0.0 {
        known
    } else {
        7.2
    }
}

/// The label font's character width (the font is monospace), measured on the page's first graph.
pub fn measure_char_width(ctx: &CanvasRenderingContext2d) -> f64 {
    let known = CHAR_WIDTH.get();
    if known > 0.0 {
        return known;
    }
    ctx.set_font(LABEL_FONT);
    let width = ctx
        .measure_text("0123456789")
        .map(|m| m.width() / 10.0)
        .unwrap_or(7.2);
    CHAR_WIDTH.set(width);
    width
}

/// Replays `list` over the whole viewport (the font set by [`prepare`]).
pub fn replay(
    ctx: &CanvasRenderingContext2d,
    list: &DrawList,
    viewport: &Viewport,
    profile: &Profile,
    theme: &Theme,
    colors: &ColorCache,
) {
    ctx.set_global_alpha(1.0);
    ctx.set_fill_style_str(theme.background);
    ctx.fill_rect(0.0, 0.0, viewport.width_css, viewport.height_css);
    let mut alpha = 1.0;
    // The computed colour set last (diff and self-heat fills): neighbours often share one, and
    // each new one is a JS string made for it.
    let mut last_rgb = None;
    for r in &list.rects {
        if r.alpha != alpha {
            ctx.set_global_alpha(r.alpha);
            alpha = r.alpha;
        }
        match r.fill {
            Fill::Function(f) => match colors.fill(profile, f) {
                Some(v) => set_fill(ctx, v),
                None => set_fill(ctx, &theme.missing),
            },
            Fill::Root => set_fill(ctx, &theme.root),
            Fill::Merged => set_fill(ctx, &theme.merged),
            Fill::Rgb(c) if last_rgb == Some(c) => {}
            Fill::Rgb(c) => set_fill(ctx, &rgb_css(c.packed())),
        }
        last_rgb = match r.fill {
            Fill::Rgb(c) => Some(c),
            _ => None,
        };
        ctx.fill_rect(r.x, r.y, r.w, r.h);
    }
    set_fill(ctx, &theme.label);
    draw_labels(ctx, &list.labels);
    ctx.set_global_alpha(1.0);
    for o in &list.outlines {
        let color = match o.mark {
            Mark::Selected => theme.accent,
            Mark::Focus | Mark::Hover => theme.hover,
            Mark::Gone => theme.gone,
        };
        let dashed = matches!(o.mark, Mark::Focus | Mark::Gone);
        if dashed {
            ctx.set_line_dash(&js_sys::Array::of2(&3.0.into(), &2.0.into()))
                .ok();
        }
        ctx.set_stroke_style_str(color);
        ctx.set_line_width(o.line_width);
        ctx.stroke_rect(o.x, o.y, o.w, o.h);
        if dashed {
            ctx.set_line_dash(&js_sys::Array::new()).ok();
        }
    }
}

thread_local! {
    /// The hatch patterns of merged runs, light and dark, made once for the page's life.
    static HATCH: RefCell<[Option<JsValue>; 2]> = const { RefCell::new([None, None]) };
}

/// The fill of runs of frames too narrow to draw: a pale diagonal hatch, so the bands read as
/// "nothing drawn here" rather than as a wide grey frame (a plain colour if the browser makes
/// no pattern).
fn merged_fill(dark: bool) -> JsValue {
    HATCH.with(|h| {
        let mut h = h.borrow_mut();
        let slot = &mut h[usize::from(dark)];
        slot.get_or_insert_with(|| {
            let pattern = hatch(dark);
            if pattern.is_null() || pattern.is_undefined() {
                JsValue::from_str(&MERGED_COLOR.css())
            } else {
                pattern
            }
        })
        .clone()
    })
}

fn set_fill(ctx: &CanvasRenderingContext2d, value: &JsValue) {
    // `set_fill_style(&JsValue)` is deprecated only in favour of typed setters; a JS string is
    // exactly what `fillStyle` takes, and passing it avoids a re-encode.
    #[allow(deprecated)]
    ctx.set_fill_style(value);
}

fn draw_labels(ctx: &CanvasRenderingContext2d, labels: &Labels) {
    if !labels.is_empty() {
        fill_labels(
            ctx,
            &labels.text,
            &labels.utf16_ends,
            &labels.xs,
            &labels.ys,
            &labels.alphas,
        );
    }
}

#[wasm_bindgen(inline_js = "
export function hatch(dark) {
  const c = document.createElement('canvas');
  c.width = 8;
  c.height = 8;
  const x = c.getContext('2d');
  if (!x) return null;
  x.fillStyle = dark ? '#26272b' : '#f3f1ee';
  x.fillRect(0, 0, 8, 8);
  x.strokeStyle = dark ? '#45464c' : '#d9d4cd';
  x.lineWidth = 1.5;
  x.beginPath();
  x.moveTo(-2, 10); x.lineTo(10, -2);
  x.moveTo(-2, 2); x.lineTo(2, -2);
  x.moveTo(6, 10); x.lineTo(10, 6);
  x.stroke();
  return x.createPattern(c, 'repeat');
}
export function rgb_css(n) {
  return '#' + (0x1000000 | n).toString(16).slice(1);
}
export function fill_labels(ctx, text, ends, xs, ys, alphas) {
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    if (ctx.globalAlpha !== alphas[i]) ctx.globalAlpha = alphas[i];
    ctx.fillText(text.substring(start, ends[i]), xs[i], ys[i]);
    start = ends[i];
  }
}")]
extern "C" {
    /// An 8 px diagonal hatch as a `CanvasPattern` (null where the browser makes none).
    fn hatch(dark: bool) -> JsValue;

    /// The CSS `#rrggbb` string of a packed `0xRRGGBB` colour, made in JS: a colour crosses as a
    /// number instead of a string formatted in wasm and decoded by `TextDecoder`.
    fn rgb_css(rgb: u32) -> JsValue;

    /// Draws label `i` = `text[ends[i-1]..ends[i]]` (UTF-16 offsets) at `(xs[i], ys[i])`, all
    /// in one call: one UTF-8 → JS string conversion a frame instead of one a label.
    fn fill_labels(
        ctx: &CanvasRenderingContext2d,
        text: &str,
        ends: &[u32],
        xs: &[f64],
        ys: &[f64],
        alphas: &[f64],
    );
}
