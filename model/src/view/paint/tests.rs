//! Unit tests of painting (`super`): labels, fills, marks and the wall view's split bars.
use super::*;
use crate::tree::build::TreeBuilder;
use crate::view::layout::{layout, LayoutOptions, Viewport};

fn painted(metric: Metric, width: f64, marks: Marks<'_>, p: &Profile) -> DrawList {
    let mut bars = Vec::new();
    let vp = Viewport {
        width_css: width,
        height_css: 200.0,
        scroll_top_css: 0.0,
    };
    layout(p, 0, &vp, &LayoutOptions::default(), &mut bars);
    let input = PaintInput {
        profile: p,
        row_height_css: 18.0,
        metric,
        char_width_css: 7.0,
        marks,
        diff: None,
        wall: None,
    };
    let mut out = DrawList::default();
    paint(&bars, &input, &mut out);
    out
}

fn sample() -> Profile {
    let mut b = TreeBuilder::new("app");
    b.add_stack(["main", "compute_checksum"], 60);
    b.add_stack(["main", "idle"], 40);
    b.finish()
}

#[test]
fn labels_fit_their_bars_or_elide_the_name() {
    let p = sample();
    let out = painted(Metric::Total, 200.0, Marks::default(), &p);
    let labels: Vec<&str> = (0..out.labels.len()).map(|i| out.labels.get(i)).collect();
    assert_eq!(
        labels,
        ["app (100%)", "main (100%)", "compute_checks…", "idle (40%)"]
    );
    assert_eq!(out.labels.utf16_ends.last(), Some(&46));
}

#[test]
fn fills_follow_the_metric() {
    let p = sample();
    let total = painted(Metric::Total, 500.0, Marks::default(), &p);
    assert_eq!(total.rects[0].fill, Fill::Root);
    assert!(matches!(total.rects[1].fill, Fill::Function(_)));
    let own = painted(Metric::Self_, 500.0, Marks::default(), &p);
    assert_eq!(own.rects[2].fill, Fill::Rgb(self_heat(1.0)));
}

#[test]
fn marks_outline_and_search_dims() {
    let p = sample();
    let main = p.function_id("main");
    let search = crate::tree::search::search(&p, |n| n == "idle");
    let marks = Marks {
        selected: main,
        focused: Some(0),
        search: Some(&search),
        ..Marks::default()
    };
    let out = painted(Metric::Total, 500.0, marks, &p);
    let kinds: Vec<Mark> = out.outlines.iter().map(|o| o.mark).collect();
    assert_eq!(kinds, [Mark::Focus, Mark::Selected]);
    let alphas: Vec<f64> = out.rects.iter().map(|r| r.alpha).collect();
    assert_eq!(
        alphas,
        [NON_MATCH_ALPHA, NON_MATCH_ALPHA, NON_MATCH_ALPHA, 1.0]
    );
}

#[test]
fn wall_bars_split_into_running_and_waiting() {
    use crate::tree::diff::wall::wall;
    use crate::view::color::wall_color;
    let mut on = TreeBuilder::new("app");
    on.add_stack(["main", "work"], 75);
    on.add_stack(["main", "read"], 10);
    let mut off = TreeBuilder::new("app");
    off.add_stack(["main", "work"], 25);
    off.add_stack(["main", "read"], 90);
    let w = wall(&on.finish(), &off.finish());
    let mut bars = Vec::new();
    let vp = Viewport {
        width_css: 401.0,
        height_css: 200.0,
        scroll_top_css: 0.0,
    };
    layout(&w.profile, 0, &vp, &LayoutOptions::default(), &mut bars);
    let input = PaintInput {
        profile: &w.profile,
        row_height_css: 18.0,
        metric: Metric::Total,
        char_width_css: 7.0,
        marks: Marks::default(),
        diff: None,
        wall: Some(WallPaint {
            values: &w.values,
            palette: Palette::Classic,
        }),
    };
    let mut out = DrawList::default();
    paint(&bars, &input, &mut out);
    // "work" (100 wide of 200, 2 px per unit): 75 % running on the left, 25 % waiting.
    let work_bar = bars
        .iter()
        .find(|b| w.profile.name(b.node) == "work")
        .unwrap();
    let parts: Vec<&Rect> = out
        .rects
        .iter()
        .filter(|r| {
            (r.y - work_bar.y_css).abs() < 1e-9
                && r.x >= work_bar.x_css - 1e-9
                && r.x < work_bar.x_css + work_bar.width_css
        })
        .collect();
    assert_eq!(parts.len(), 2);
    let width = work_bar.width_css - 1.0;
    assert!((parts[0].w - width * 0.75).abs() < 1e-9);
    assert!((parts[0].x + parts[0].w - parts[1].x).abs() < 1e-9);
    assert!((parts[1].x + parts[1].w - (work_bar.x_css + width)).abs() < 1e-9);
    assert_eq!(
        parts[0].fill,
        Fill::Rgb(wall_color(true, "work", Palette::Classic))
    );
    assert_eq!(
        parts[1].fill,
        Fill::Rgb(wall_color(false, "work", Palette::Classic))
    );
}
