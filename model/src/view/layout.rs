//! Pure layout: (profile, zoom, viewport, options) → the bars to draw, in CSS pixels.
//!
//! The renderer replays these bars and hit-testing searches the very same list, so what the
//! pointer finds is always what was drawn. Only rows inside the viewport are laid out, and runs
//! of frames narrower than [`LayoutOptions::min_bar_width_css`] become one merged bar, so the
//! cost of a frame follows what is visible, not the size of the profile.
//!
//! Coordinate spaces: `css_px` (layout, hit-testing, DOM events) here; the renderer alone
//! multiplies by `devicePixelRatio` into `device_px`.

use crate::tree::profile::{NodeId, Profile};

/// Which way the graph grows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Orientation {
    /// Root at the top, callees below (an icicle graph; scrolls naturally for deep stacks).
    #[default]
    Icicle,
    /// Root at the bottom, callees above (the classic flame graph).
    Flame,
}

/// Layout settings. `LayoutOptions::default()` documents the defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutOptions {
    /// Height of one stack level, in CSS px. Default 18.
    pub row_height_css: f64,
    /// Frames narrower than this (CSS px) are merged with their narrow neighbours. Default 1.
    pub min_bar_width_css: f64,
    /// Merged runs narrower than this are not drawn at all. Default 0.25.
    pub min_merged_width_css: f64,
    /// Root at top or bottom. Default [`Orientation::Icicle`].
    pub orientation: Orientation,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            row_height_css: 18.0,
            min_bar_width_css: 1.0,
            min_merged_width_css: 0.25,
            orientation: Orientation::Icicle,
        }
    }
}

/// The visible part of the graph, in CSS px.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Viewport {
    /// Width of the canvas.
    pub width_css: f64,
    /// Height of the canvas.
    pub height_css: f64,
    /// How far the content is scrolled down from its top.
    pub scroll_top_css: f64,
}

/// One rectangle to draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    /// The frame (for a merged run: its first frame).
    pub node: NodeId,
    /// 0 for a single frame; otherwise how many sub-pixel frames this bar stands for.
    pub merged: u32,
    /// Stack depth (root = 0).
    pub depth: u32,
    /// Left edge, CSS px from the canvas' left.
    pub x_css: f64,
    /// Top edge, CSS px from the canvas' top.
    pub y_css: f64,
    /// Width in CSS px.
    pub width_css: f64,
    /// An ancestor of the zoomed frame, drawn full width and dimmed.
    pub is_ancestor: bool,
}

impl Bar {
    /// Whether the bar stands for a single frame (not a merged run).
    pub fn is_frame(&self) -> bool {
        self.merged == 0
    }
}

/// Total height of the content (all rows), at least the viewport's height.
pub fn content_height_css(profile: &Profile, viewport: &Viewport, opts: &LayoutOptions) -> f64 {
    let rows = if profile.is_empty() {
        0
    } else {
        profile.max_depth() + 1
    };
    (f64::from(rows) * opts.row_height_css).max(viewport.height_css)
}

/// Top of a row in viewport CSS px (may be outside the viewport).
pub fn row_top_css(
    profile: &Profile,
    depth: u32,
    viewport: &Viewport,
    opts: &LayoutOptions,
) -> f64 {
    let h = opts.row_height_css;
    match opts.orientation {
        Orientation::Icicle => f64::from(depth) * h - viewport.scroll_top_css,
        Orientation::Flame => {
            content_height_css(profile, viewport, opts)
                - f64::from(depth + 1) * h
                - viewport.scroll_top_css
        }
    }
}

/// The depth of the row under viewport y, if any row is there (inverse of [`row_top_css`]).
pub fn depth_at_css(
    profile: &Profile,
    y_css: f64,
    viewport: &Viewport,
    opts: &LayoutOptions,
) -> Option<u32> {
    let h = opts.row_height_css;
    let from_top = y_css + viewport.scroll_top_css;
    let d = match opts.orientation {
        Orientation::Icicle => (from_top / h).floor(),
        Orientation::Flame => {
            ((content_height_css(profile, viewport, opts) - from_top) / h).ceil() - 1.0
        }
    };
    (d >= 0.0 && d <= f64::from(profile.max_depth()) && !profile.is_empty()).then_some(d as u32)
}

/// Lays out the visible bars for a zoom on `zoom` (the root for no zoom) into `out`, sorted by
/// depth then x. `out` is cleared first, so a caller can reuse its allocation every frame.
pub fn layout(
    profile: &Profile,
    zoom: NodeId,
    viewport: &Viewport,
    opts: &LayoutOptions,
    out: &mut Vec<Bar>,
) {
    out.clear();
    if profile.is_empty() || viewport.width_css <= 0.0 || (zoom as usize) >= profile.node_count() {
        return;
    }
    let zoom_total = profile.total(zoom).max(1);
    let scale = viewport.width_css / zoom_total as f64;
    let zoom_depth = profile.depth(zoom);
    let ancestors = profile.path_to(zoom);
    for depth in 0..=profile.max_depth() {
        let y = row_top_css(profile, depth, viewport, opts);
        if y + opts.row_height_css <= 0.0 || y >= viewport.height_css {
            continue;
        }
        if depth < zoom_depth {
            out.push(Bar {
                node: ancestors[depth as usize],
                merged: 0,
                depth,
                x_css: 0.0,
                y_css: y,
                width_css: viewport.width_css,
                is_ancestor: true,
            });
            continue;
        }
        let row = RowCtx {
            profile,
            zoom,
            scale,
            depth,
            y,
            opts,
        };
        row.lay_out(out);
    }
}

/// One row's worth of layout state.
struct RowCtx<'a> {
    profile: &'a Profile,
    zoom: NodeId,
    scale: f64,
    depth: u32,
    y: f64,
    opts: &'a LayoutOptions,
}

impl RowCtx<'_> {
    fn x_of(&self, node: NodeId) -> f64 {
        (self.profile.start(node) - self.profile.start(self.zoom)) as f64 * self.scale
    }

    fn width_of(&self, node: NodeId) -> f64 {
        self.profile.total(node) as f64 * self.scale
    }

    fn bar(&self, node: NodeId, merged: u32, x: f64, width: f64) -> Bar {
        Bar {
            node,
            merged,
            depth: self.depth,
            x_css: x,
            y_css: self.y,
            width_css: width,
            is_ancestor: false,
        }
    }

    fn lay_out(&self, out: &mut Vec<Bar>) {
        let row = self.profile.row(self.depth);
        // The zoomed subtree is the preorder range zoom..end, and rows are in preorder.
        let end = self.profile.subtree_end(self.zoom);
        let lo = row.partition_point(|&n| n < self.zoom);
        let hi = row.partition_point(|&n| n < end);
        let min_w = self.opts.min_bar_width_css;
        let mut i = lo;
        while i < hi {
            let node = row[i];
            let (x, w) = (self.x_of(node), self.width_of(node));
            i += 1;
            if w >= min_w {
                out.push(self.bar(node, 0, x, w));
                continue;
            }
            // A run of narrow, adjacent frames becomes one bar.
            let mut run_end = x + w;
            let mut count = 1u32;
            while i < hi {
                let next = row[i];
                let (nx, nw) = (self.x_of(next), self.width_of(next));
                if nw >= min_w || nx - run_end > min_w {
                    break;
                }
                run_end = nx + nw;
                count += 1;
                i += 1;
            }
            let run_w = run_end - x;
            if run_w >= self.opts.min_merged_width_css {
                out.push(self.bar(node, count, x, run_w));
            }
        }
    }
}

/// The bar under a point, searching the bars of the last [`layout`] (same geometry as drawn).
pub fn hit_test(
    bars: &[Bar],
    profile: &Profile,
    x_css: f64,
    y_css: f64,
    viewport: &Viewport,
    opts: &LayoutOptions,
) -> Option<Bar> {
    let depth = depth_at_css(profile, y_css, viewport, opts)?;
    let first = bars.partition_point(|b| {
        b.depth < depth || (b.depth == depth && b.x_css + b.width_css <= x_css)
    });
    bars.get(first)
        .filter(|b| b.depth == depth && b.x_css <= x_css && x_css < b.x_css + b.width_css)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::build::TreeBuilder;

    fn profile() -> Profile {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["main", "a"], 60);
        b.add_stack(["main", "b", "c"], 40);
        b.finish()
    }

    fn vp(w: f64, h: f64) -> Viewport {
        Viewport {
            width_css: w,
            height_css: h,
            scroll_top_css: 0.0,
        }
    }

    fn run(p: &Profile, zoom: NodeId, v: &Viewport, o: &LayoutOptions) -> Vec<Bar> {
        let mut out = Vec::new();
        layout(p, zoom, v, o, &mut out);
        out
    }

    #[test]
    fn widths_are_proportional_to_total() {
        let p = profile();
        let o = LayoutOptions::default();
        let bars = run(&p, 0, &vp(1000.0, 500.0), &o);
        let names: Vec<_> = bars
            .iter()
            .map(|b| (p.name(b.node), b.x_css, b.width_css, b.y_css))
            .collect();
        assert_eq!(
            names,
            [
                ("app", 0.0, 1000.0, 0.0),
                ("main", 0.0, 1000.0, 18.0),
                ("a", 0.0, 600.0, 36.0),
                ("b", 600.0, 400.0, 36.0),
                ("c", 600.0, 400.0, 54.0)
            ]
        );
    }

    #[test]
    fn zoom_fills_the_width_and_keeps_ancestors_dimmed() {
        let p = profile();
        let o = LayoutOptions::default();
        let b_node = p.nodes().find(|&n| p.name(n) == "b").unwrap();
        let bars = run(&p, b_node, &vp(1000.0, 500.0), &o);
        let view: Vec<_> = bars
            .iter()
            .map(|b| (p.name(b.node), b.width_css, b.is_ancestor))
            .collect();
        assert_eq!(
            view,
            [
                ("app", 1000.0, true),
                ("main", 1000.0, true),
                ("b", 1000.0, false),
                ("c", 1000.0, false)
            ]
        );
    }

    #[test]
    fn flame_orientation_puts_the_root_at_the_bottom() {
        let p = profile();
        let o = LayoutOptions {
            orientation: Orientation::Flame,
            ..LayoutOptions::default()
        };
        let v = vp(100.0, 200.0);
        let bars = run(&p, 0, &v, &o);
        assert_eq!(bars[0].y_css, 200.0 - 18.0);
        let hit = hit_test(&bars, &p, 10.0, 190.0, &v, &o).unwrap();
        assert_eq!(hit.node, 0);
    }

    #[test]
    fn only_visible_rows_are_laid_out() {
        let p = profile();
        let o = LayoutOptions::default();
        let v = Viewport {
            width_css: 100.0,
            height_css: 18.0,
            scroll_top_css: 36.0,
        };
        let bars = run(&p, 0, &v, &o);
        assert!(bars.iter().all(|b| b.depth == 2), "{bars:?}");
        assert_eq!(bars[0].y_css, 0.0);
    }

    #[test]
    fn narrow_frames_merge_into_one_bar() {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["big"], 10_000);
        for i in 0..500 {
            b.add_stack([format!("tiny{i:03}").as_str()], 1);
        }
        let p = b.finish();
        let bars = run(&p, 0, &vp(1000.0, 100.0), &LayoutOptions::default());
        let row1: Vec<_> = bars.iter().filter(|b| b.depth == 1).collect();
        assert_eq!(row1.len(), 2, "{row1:?}");
        assert_eq!(row1[0].merged, 0);
        assert_eq!(p.name(row1[0].node), "big");
        assert_eq!(row1[1].merged, 500);
        assert!((row1[1].width_css - 1000.0 * 500.0 / 10_500.0).abs() < 1e-6);
    }

    #[test]
    fn hit_test_finds_exactly_the_drawn_bar() {
        let p = profile();
        let o = LayoutOptions::default();
        let v = vp(1000.0, 500.0);
        let bars = run(&p, 0, &v, &o);
        let at = |x, y| hit_test(&bars, &p, x, y, &v, &o).map(|b| p.name(b.node));
        assert_eq!(at(5.0, 5.0), Some("app"));
        assert_eq!(at(599.9, 40.0), Some("a"));
        assert_eq!(at(600.0, 40.0), Some("b"));
        assert_eq!(at(100.0, 60.0), None, "no bar under a at depth 3");
        assert_eq!(at(700.0, 60.0), Some("c"));
        assert_eq!(at(700.0, 400.0), None);
        assert_eq!(at(-1.0, 5.0), None);
    }
}
