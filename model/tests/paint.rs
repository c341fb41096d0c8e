//! Paint snapshots: for every fixture, the draw list of the root view (and of a view with a
//! search, a selection, keyboard focus and a hovered bar) as text, one line per operation.
//! Regenerate with `BLESS=1 cargo test -p embers-model --test paint` and review the diff.

use std::fmt::Write;

use embers_model::testkit::{check_snapshot, data_dir, fixtures};
use embers_model::tree::search::search;
use embers_model::view::layout::{layout, Bar, LayoutOptions, Viewport};
use embers_model::view::paint::{paint, DrawList, Fill, Marks, Metric, PaintInput};
use embers_model::{decode_response, Profile};

fn draw(p: &Profile, metric: Metric, marks: Marks<'_>, bars: &[Bar]) -> DrawList {
    let input = PaintInput {
        profile: p,
        row_height_css: LayoutOptions::default().row_height_css,
        metric,
        char_width_css: 7.2,
        marks,
        diff: None,
        wall: None,
    };
    let mut out = DrawList::default();
    paint(bars, &input, &mut out);
    out
}

fn fill_text(p: &Profile, fill: Fill) -> String {
    match fill {
        Fill::Function(f) => format!("fn:{}", p.function_name(f)),
        Fill::Root => "root".into(),
        Fill::Merged => "merged".into(),
        Fill::Rgb(c) => c.css(),
    }
}

fn snapshot(p: &Profile, list: &DrawList) -> String {
    let mut s = String::new();
    for r in &list.rects {
        let _ = writeln!(
            s,
            "rect {:>8.2} {:>6.1} {:>8.2} {:>4.1} a{:.2} {}",
            r.x,
            r.y,
            r.w,
            r.h,
            r.alpha,
            fill_text(p, r.fill)
        );
    }
    let l = &list.labels;
    for i in 0..l.len() {
        let _ = writeln!(
            s,
            "text {:>8.2} {:>6.1} a{:.2} {:?}",
            l.xs[i],
            l.ys[i],
            l.alphas[i],
            l.get(i)
        );
    }
    for o in &list.outlines {
        let _ = writeln!(
            s,
            "line {:>8.2} {:>6.1} {:>8.2} {:>4.1} w{} {:?}",
            o.x, o.y, o.w, o.h, o.line_width, o.mark
        );
    }
    s
}

#[test]
fn paint_snapshots_match() {
    let vp = Viewport {
        width_css: 900.0,
        height_css: 300.0,
        scroll_top_css: 0.0,
    };
    for f in fixtures() {
        let Ok(d) = decode_response(f.http_status(), &f.response()) else {
            continue;
        };
        let p = d.profile;
        let mut bars = Vec::new();
        layout(&p, 0, &vp, &LayoutOptions::default(), &mut bars);
        let mut text = snapshot(&p, &draw(&p, Metric::Total, Marks::default(), &bars));
        if p.node_count() > 2 {
            // A search for the second-level frames' first letter, the deepest frame's function
            // selected, node 1 focused, the last bar hovered, Self shading.
            let term: String = p.name(1).chars().take(3).collect();
            let found = search(&p, |n| n.contains(term.as_str()));
            let marks = Marks {
                search: Some(&found),
                selected: Some(p.func(p.node_count() as u32 - 1)),
                highlighted: None,
                focused: Some(1),
                hovered: bars.last().copied(),
            };
            text.push_str("--- self, search, marks\n");
            text.push_str(&snapshot(&p, &draw(&p, Metric::Self_, marks, &bars)));
        }
        check_snapshot(
            &data_dir().join("paint").join(format!("{}.txt", f.name)),
            &text,
        );
    }
}
