//! Golden tests of the diff: a two-column folded file (`tests/data/diff/*.difffolded`) reads
//! into two profiles, diffs, and writes back byte for byte; its painted root view is a
//! snapshot (`tests/data/paint/diff-*.txt`, regenerate with `BLESS=1`).

use std::fmt::Write;
use std::fs;

use embers_model::export::folded::to_diff_folded;
use embers_model::testkit::{check_snapshot, data_dir};
use embers_model::tree::diff::{Diff, DiffMode};
use embers_model::view::color::Palette;
use embers_model::view::layout::{layout, LayoutOptions, Viewport};
use embers_model::view::paint::{paint, DiffPaint, DrawList, Fill, Marks, Metric, PaintInput};
use embers_model::wire::folded::parse_diff_folded;

fn diff_of(name: &str) -> (String, Diff) {
    let path = data_dir().join("diff").join(format!("{name}.difffolded"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (b, c) = parse_diff_folded(&text, "redis-server").expect("two-column stacks");
    (text, Diff::new(&b, &c, DiffMode::Normalized))
}

#[test]
fn two_column_files_round_trip() {
    let (text, diff) = diff_of("redis");
    assert_eq!(to_diff_folded(&diff.profile, &diff.values), text);
}

#[test]
fn the_regression_is_the_reddest_frame_and_gone_work_is_marked() {
    let (_, d) = diff_of("redis");
    let p = &d.profile;
    let hottest = p
        .nodes()
        .skip(1)
        .filter(|&n| p.children(n).next().is_none())
        .max_by(|&a, &b| d.values.change(a).total_cmp(&d.values.change(b)))
        .expect("leaves");
    assert_eq!(p.name(hottest), "dictFind");
    assert!(p.nodes().any(|n| d.values.is_gone(n)), "bio work went away");
    assert!(p
        .nodes()
        .any(|n| d.values.is_new(n) && p.name(n) == "activeDefragCycle"));
}

#[test]
fn diff_paint_snapshot() {
    let (_, d) = diff_of("redis");
    let vp = Viewport {
        width_css: 900.0,
        height_css: 300.0,
        scroll_top_css: 0.0,
    };
    let mut bars = Vec::new();
    layout(&d.profile, 0, &vp, &LayoutOptions::default(), &mut bars);
    let input = PaintInput {
        profile: &d.profile,
        row_height_css: 18.0,
        metric: Metric::Total,
        char_width_css: 7.2,
        marks: Marks::default(),
        diff: Some(DiffPaint {
            diff: &d.values,
            scale: d.values.max_change(),
            palette: Palette::Classic,
        }),
        wall: None,
    };
    let mut list = DrawList::default();
    paint(&bars, &input, &mut list);
    let mut s = String::new();
    for r in &list.rects {
        let fill = match r.fill {
            Fill::Rgb(c) => c.css(),
            other => format!("{other:?}"),
        };
        let _ = writeln!(s, "rect {:>8.2} {:>6.1} {:>8.2} {fill}", r.x, r.y, r.w);
    }
    for i in 0..list.labels.len() {
        let _ = writeln!(s, "text {:?}", list.labels.get(i));
    }
    for o in &list.outlines {
        let _ = writeln!(s, "line {:>8.2} {:>6.1} {:?}", o.x, o.y, o.mark);
    }
    check_snapshot(&data_dir().join("paint").join("diff-redis.txt"), &s);
}
