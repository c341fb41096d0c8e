//! The heatmap's canvas: the grid as one image of a pixel per cell (built by
//! `embers_model::view::heatmap::fill_rgba`), scaled onto the canvas without smoothing, then
//! the selections and the hovered cell on top. Nothing is decided here.

use std::cell::RefCell;

use embers_model::view::heatmap::{fill_rgba, Area, Cell, Geometry, HeatScale, Heatmap, Interval};
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

/// What is marked on the grid.
#[derive(Debug, Clone, Copy, Default)]
pub struct Marks {
    /// The interval shown below.
    pub selected: Option<Interval>,
    /// The interval compared with.
    pub baseline: Option<Interval>,
    /// The selection being made.
    pub pending: Option<Interval>,
    /// The cell under the pointer or the keyboard cursor.
    pub hover: Option<Cell>,
}

thread_local! {
    /// The pixel buffer and the small canvas the image is put on, kept between draws.
    static SCRATCH: RefCell<(Vec<u8>, Option<HtmlCanvasElement>)> = const { RefCell::new((Vec::new(), None)) };
}

fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// Draws `map` over `width × height` CSS px of `canvas` with `marks`.
pub fn draw(
    canvas: &HtmlCanvasElement,
    map: &Heatmap,
    width: f64,
    height: f64,
    dark: bool,
    marks: &Marks,
) {
    let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
    let (w, h) = ((width * dpr).round() as u32, (height * dpr).round() as u32);
    if w == 0 || h == 0 {
        return;
    }
    if canvas.width() != w || canvas.height() != h {
        canvas.set_width(w);
        canvas.set_height(h);
    }
    let style = canvas.style();
    let _ = style.set_property("width", &format!("{width}px"));
    let _ = style.set_property("height", &format!("{height}px"));
    let Some(ctx) = context(canvas) else { return };
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.set_fill_style_str(if dark { "#17181b" } else { "#ffffff" });
    ctx.fill_rect(0.0, 0.0, width, height);
    if map.columns() > 0 {
        put_grid(&ctx, map, width, height, dark);
    }
    let g = Geometry {
        width_css: width,
        height_css: height,
    };
    let (accent, compare, ink) = if dark {
        ("#60a5fa", "#c084fc", "#ffffff")
    } else {
        ("#2563eb", "#9333ea", "#111111")
    };
    for (iv, color) in [
        (marks.baseline, compare),
        (marks.selected, accent),
        (marks.pending, ink),
    ] {
        if let Some(iv) = iv {
            outline_areas(&ctx, &map.selection_areas(&g, iv), color);
        }
    }
    if let Some(cell) = marks.hover {
        let iv = map.cell_interval(cell);
        if let Some(a) = map.selection_areas(&g, iv).first() {
            ctx.set_stroke_style_str(ink);
            ctx.set_line_width(1.0);
            ctx.stroke_rect(a.x - 0.5, a.y - 0.5, a.w.max(1.0) + 1.0, a.h + 1.0);
        }
    }
}

/// The grid's image scaled onto the canvas, cells as sharp blocks.
fn put_grid(ctx: &CanvasRenderingContext2d, map: &Heatmap, width: f64, height: f64, dark: bool) {
    SCRATCH.with(|s| {
        let (px, small) = &mut *s.borrow_mut();
        let scale = HeatScale::new(map.max(), dark);
        fill_rgba(map, &scale, px);
        let (cols, rows) = (map.columns() as u32, map.slots());
        let Ok(image) =
            ImageData::new_with_u8_clamped_array_and_sh(Clamped(px.as_slice()), cols, rows)
        else {
            return;
        };
        if small.is_none() {
            *small = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.create_element("canvas").ok())
                .and_then(|c| c.dyn_into().ok());
        }
        let Some(small) = small.as_ref() else { return };
        small.set_width(cols);
        small.set_height(rows);
        let Some(sctx) = context(small) else { return };
        let _ = sctx.put_image_data(&image, 0.0, 0.0);
        ctx.set_image_smoothing_enabled(false);
        let _ =
            ctx.draw_image_with_html_canvas_element_and_dw_and_dh(small, 0.0, 0.0, width, height);
    });
}

/// A selection, outlined column by column.
fn outline_areas(ctx: &CanvasRenderingContext2d, areas: &[Area], color: &str) {
    ctx.set_stroke_style_str(color);
    ctx.set_line_width(2.0);
    for a in areas {
        ctx.stroke_rect(
            a.x + 1.0,
            a.y + 1.0,
            (a.w - 2.0).max(1.0),
            (a.h - 2.0).max(1.0),
        );
    }
}
