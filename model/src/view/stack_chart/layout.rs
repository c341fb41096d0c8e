//! The stack chart's layout: a window of time and a viewport → the bars to draw (the flame
//! graph's [`Bar`], so painting and hit-testing read the same list), the time axis' ticks, and
//! how a wheel or a drag moves the window.
//!
//! Each visible row finds its first span in the window by binary search and stops at the
//! window's end; runs of spans narrower than a pixel merge into one bar, so a frame costs what
//! is visible whatever the number of samples.

use crate::view::layout::Bar;
use crate::view::stack_chart::{Span, Track};

/// Height of a row, CSS px (the flame graph's).
pub const ROW_HEIGHT_CSS: f64 = 18.0;
/// Spans narrower than this (CSS px) merge with their narrow neighbours.
pub const MIN_BAR_WIDTH_CSS: f64 = 1.0;
/// The narrowest window a zoom reaches, ms.
pub const MIN_WINDOW_MS: f64 = 1.0;

/// The time shown and where.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeViewport {
    /// Unix ms at the left edge.
    pub start_ms: f64,
    /// Unix ms at the right edge.
    pub end_ms: f64,
    /// Canvas width, CSS px.
    pub width_css: f64,
    /// Canvas height, CSS px.
    pub height_css: f64,
    /// How far the rows are scrolled down, CSS px.
    pub scroll_top_css: f64,
}

impl TimeViewport {
    /// CSS px per millisecond.
    pub fn scale(&self) -> f64 {
        self.width_css / (self.end_ms - self.start_ms).max(f64::MIN_POSITIVE)
    }

    /// The x of Unix millisecond `ms`.
    pub fn x_of(&self, ms: f64) -> f64 {
        (ms - self.start_ms) * self.scale()
    }

    /// The Unix millisecond at `x`.
    pub fn ms_at(&self, x: f64) -> f64 {
        self.start_ms + x / self.scale()
    }
}

/// The bars of `track` visible in `vp`, into `out` (cleared first), by depth then x.
pub fn layout(track: &Track, vp: &TimeViewport, out: &mut Vec<Bar>) {
    out.clear();
    if vp.width_css <= 0.0 || vp.end_ms <= vp.start_ms {
        return;
    }
    let first_row = (vp.scroll_top_css / ROW_HEIGHT_CSS).floor().max(0.0) as usize;
    let last_row = ((vp.scroll_top_css + vp.height_css) / ROW_HEIGHT_CSS).ceil() as usize;
    for (depth, spans) in track
        .depths
        .iter()
        .enumerate()
        .take(last_row)
        .skip(first_row)
    {
        let y = depth as f64 * ROW_HEIGHT_CSS - vp.scroll_top_css;
        lay_out_row(spans, depth as u32, y, vp, out);
    }
}

fn lay_out_row(spans: &[Span], depth: u32, y: f64, vp: &TimeViewport, out: &mut Vec<Bar>) {
    let from = spans.partition_point(|s| (s.end_ms as f64) <= vp.start_ms);
    let scale = vp.scale();
    // A run of narrow spans being merged: its first span, count, left and right edges.
    let mut run: Option<(Span, u32, f64, f64)> = None;
    let flush = |run: &mut Option<(Span, u32, f64, f64)>, out: &mut Vec<Bar>| {
        if let Some((span, n, x0, x1)) = run.take() {
            out.push(bar(span, if n > 1 { n } else { 0 }, depth, x0, y, x1 - x0));
        }
    };
    for span in &spans[from..] {
        if span.start_ms as f64 >= vp.end_ms {
            break;
        }
        // Clipped to just outside the canvas, so labels start at its visible left edge.
        let x0 = ((span.start_ms as f64 - vp.start_ms) * scale).max(-1.0);
        let x1 = ((span.end_ms as f64 - vp.start_ms) * scale).min(vp.width_css + 1.0);
        if x1 - x0 >= MIN_BAR_WIDTH_CSS {
            flush(&mut run, out);
            out.push(bar(*span, 0, depth, x0, y, x1 - x0));
            continue;
        }
        match &mut run {
            // Narrow neighbours that touch (within a pixel) merge.
            Some((_, n, _, end)) if x0 - *end < MIN_BAR_WIDTH_CSS => {
                *n += 1;
                *end = x1.max(*end);
            }
            _ => {
                flush(&mut run, out);
                run = Some((*span, 1, x0, x1));
            }
        }
    }
    flush(&mut run, out);
}

fn bar(span: Span, merged: u32, depth: u32, x: f64, y: f64, w: f64) -> Bar {
    Bar {
        node: span.node,
        merged,
        depth,
        x_css: x,
        y_css: y,
        // A lone narrow span is still drawn a pixel wide (a sample is never invisible).
        width_css: w.max(MIN_BAR_WIDTH_CSS),
        is_ancestor: false,
    }
}

/// The bar under `(x, y)` among `bars` as [`layout`] made them.
pub fn hit_test(bars: &[Bar], x: f64, y: f64) -> Option<Bar> {
    let first = bars.partition_point(|b| b.y_css + ROW_HEIGHT_CSS <= y);
    bars[first..]
        .iter()
        .take_while(|b| b.y_css <= y)
        .find(|b| b.x_css <= x && x < b.x_css + b.width_css)
        .copied()
}

/// Total height of the rows of `track`, CSS px.
pub fn content_height_css(track: &Track) -> f64 {
    track.depths.len() as f64 * ROW_HEIGHT_CSS
}

/// The window zoomed by `factor` (< 1 zooms in) around `anchor_ms`, kept inside
/// `[min_ms, max_ms]` and at least [`MIN_WINDOW_MS`] wide.
pub fn zoom(
    vp: &TimeViewport,
    anchor_ms: f64,
    factor: f64,
    min_ms: f64,
    max_ms: f64,
) -> (f64, f64) {
    let full = (max_ms - min_ms).max(MIN_WINDOW_MS);
    let len = ((vp.end_ms - vp.start_ms) * factor).clamp(MIN_WINDOW_MS, full);
    let share = ((anchor_ms - vp.start_ms) / (vp.end_ms - vp.start_ms)).clamp(0.0, 1.0);
    clamp_window(anchor_ms - len * share, len, min_ms, max_ms)
}

/// The window moved right by `dx_css` pixels (left for negative), kept inside `[min_ms, max_ms]`.
pub fn pan(vp: &TimeViewport, dx_css: f64, min_ms: f64, max_ms: f64) -> (f64, f64) {
    let len = vp.end_ms - vp.start_ms;
    clamp_window(vp.start_ms + dx_css / vp.scale(), len, min_ms, max_ms)
}

fn clamp_window(start: f64, len: f64, min_ms: f64, max_ms: f64) -> (f64, f64) {
    let start = start.min(max_ms - len).max(min_ms);
    (start, (start + len).min(max_ms.max(min_ms + len)))
}

/// A tick of the time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Its x, CSS px.
    pub x_css: f64,
    /// Its label: the time since `origin_ms` ("250 ms", "1.5 s").
    pub label: String,
}

/// Ticks every round step (1, 2 or 5 × 10^k ms) at least `min_gap_css` apart, labelled by
/// their time since `origin_ms`.
pub fn ticks(vp: &TimeViewport, origin_ms: f64, min_gap_css: f64) -> Vec<Tick> {
    let scale = vp.scale();
    if !(scale.is_finite() && scale > 0.0) {
        return Vec::new();
    }
    let mut step = 0.001f64;
    'find: loop {
        for m in [1.0, 2.0, 5.0] {
            if step * m * scale >= min_gap_css {
                step *= m;
                break 'find;
            }
        }
        step *= 10.0;
    }
    let first = ((vp.start_ms - origin_ms) / step).ceil();
    let last = ((vp.end_ms - origin_ms) / step).floor();
    let mut out = Vec::new();
    let mut k = first;
    while k <= last && out.len() < 1000 {
        let rel = k * step;
        out.push(Tick {
            x_css: vp.x_of(origin_ms + rel),
            label: format_offset(rel),
        });
        k += 1.0;
    }
    out
}

/// A time offset as a tick reads it: "0", "250 ms", "1.5 s", "2 min 5 s".
pub fn format_offset(ms: f64) -> String {
    let abs = ms.abs();
    let trim = |v: f64, digits: usize| {
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    if abs == 0.0 {
        "0".into()
    } else if abs < 1.0 {
        format!("{} ms", trim(ms, 3))
    } else if abs < 1000.0 {
        format!("{} ms", trim(ms, 1))
    } else if abs < 60_000.0 {
        format!("{} s", trim(ms / 1000.0, 3))
    } else {
        let s = (ms / 1000.0).round() as i64;
        match s % 60 {
            0 => format!("{} min", s / 60),
            r => format!("{} min {r} s", s / 60),
        }
    }
}
