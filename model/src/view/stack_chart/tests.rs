//! Tests of the stack chart: spans from samples, layout in a window, painting, zoom and pan.

use super::layout::{self, format_offset, hit_test, pan, ticks, zoom, TimeViewport};
use super::paint::{paint, ChartMarks};
use super::*;
use crate::tree::search::{search, substring_matcher};
use crate::view::draw_list::{DrawList, Fill, Mark};

fn stacks() -> Vec<Vec<&'static str>> {
    vec![
        vec!["main", "work", "spin"],
        vec!["main", "work", "hash"],
        vec!["main", "idle"],
    ]
}

fn sample(time_ms: i64, thread: u32, stack: u32) -> TimedSample {
    TimedSample {
        time_ms,
        thread,
        stack,
        weight: 1,
    }
}

/// Thread 0 every 10 ms: spin ×3, hash ×2, a 100 ms gap, spin; thread 1 idles twice.
fn chart() -> StackChart {
    let samples = [
        sample(1000, 0, 0),
        sample(1010, 0, 0),
        sample(1020, 0, 0),
        sample(1030, 0, 1),
        sample(1040, 0, 1),
        sample(1140, 0, 0),
        sample(1005, 1, 2),
        sample(1015, 1, 2),
    ];
    let threads = vec!["main".to_owned(), "bg".to_owned()];
    StackChart::build("app", &stacks(), &threads, &samples).expect("valid samples")
}

fn spans(chart: &StackChart, track: usize, depth: usize) -> Vec<(String, i64, i64)> {
    let p = chart.profile();
    chart.tracks()[track].depths[depth]
        .iter()
        .map(|s| (p.name(s.node).to_owned(), s.start_ms, s.end_ms))
        .collect()
}

#[test]
fn runs_of_the_same_frame_become_one_span_and_gaps_stay_empty() {
    let c = chart();
    let t = &c.tracks()[0];
    assert_eq!((t.name.as_str(), t.samples, t.interval_ms), ("main", 6, 10));
    let s = |n: &str, a, b| (n.to_owned(), a, b);
    assert_eq!(
        spans(&c, 0, 0),
        [s("main", 1000, 1050), s("main", 1140, 1150)]
    );
    assert_eq!(
        spans(&c, 0, 1),
        [s("work", 1000, 1050), s("work", 1140, 1150)]
    );
    assert_eq!(
        spans(&c, 0, 2),
        [
            s("spin", 1000, 1030),
            s("hash", 1030, 1050),
            s("spin", 1140, 1150)
        ]
    );
    assert_eq!(c.tracks()[1].name, "bg");
    assert_eq!(spans(&c, 1, 1), [s("idle", 1005, 1025)]);
    assert_eq!((c.start_ms(), c.end_ms()), (1000, 1150));
    // The call tree counts every sample once, under the same names as a flame graph.
    assert_eq!(c.profile().root_total(), 8);
    let spin = c.profile().find_path(&["main", "work", "spin"]);
    assert_eq!(c.profile().total(spin), 4);
}

#[test]
fn samples_that_name_what_is_not_there_are_refused() {
    let threads = vec!["t".to_owned()];
    let err = StackChart::build("app", &stacks(), &threads, &[sample(0, 0, 7)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sample 0 names stack 7, but there are 3 stacks"
    );
    let err = StackChart::build("app", &stacks(), &threads, &[sample(0, 3, 0)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sample 0 names thread 3, but there are 1 threads"
    );
    let empty = StackChart::build::<&str>("app", &[], &[], &[]).expect("nothing is a chart");
    assert!(empty.tracks().is_empty());
}

fn viewport(start_ms: f64, end_ms: f64) -> TimeViewport {
    TimeViewport {
        start_ms,
        end_ms,
        width_css: 150.0,
        height_css: 200.0,
        scroll_top_css: 0.0,
    }
}

#[test]
fn a_window_shows_its_spans_clipped_and_narrow_ones_merged() {
    let c = chart();
    let mut bars = Vec::new();
    layout::layout(&c.tracks()[0], &viewport(1000.0, 1150.0), &mut bars);
    // 1 px per ms: three rows, the leaf row with three bars.
    assert_eq!(bars.len(), 2 + 2 + 3);
    let leaf: Vec<_> = bars
        .iter()
        .filter(|b| b.depth == 2)
        .map(|b| (b.x_css, b.width_css))
        .collect();
    assert_eq!(leaf, [(0.0, 30.0), (30.0, 20.0), (140.0, 10.0)]);
    // Zoomed into 1020..1035: the spin span is clipped at the left edge, hash at the right.
    layout::layout(&c.tracks()[0], &viewport(1020.0, 1035.0), &mut bars);
    let leaf: Vec<_> = bars
        .iter()
        .filter(|b| b.depth == 2)
        .map(|b| (b.x_css, b.width_css))
        .collect();
    assert_eq!(leaf, [(-1.0, 101.0), (100.0, 51.0)]);
    // Zoomed out to 15 s on 150 px: the spans are sub-pixel and merge.
    layout::layout(&c.tracks()[0], &viewport(0.0, 15_000.0), &mut bars);
    assert!(bars.iter().all(|b| b.width_css >= 1.0));
    assert!(bars.iter().any(|b| !b.is_frame()), "{bars:?}");
    // Scrolled past the first row: it is not laid out.
    let scrolled = TimeViewport {
        scroll_top_css: 20.0,
        ..viewport(1000.0, 1150.0)
    };
    layout::layout(&c.tracks()[0], &scrolled, &mut bars);
    assert!(bars.iter().all(|b| b.depth >= 1));
    let hit = hit_test(&bars, 35.0, 2.0 * 18.0 - 20.0 + 5.0).expect("the hash bar");
    assert_eq!(c.profile().name(hit.node), "hash");
    assert_eq!(
        hit_test(&bars, 100.0, 2.0 * 18.0 - 20.0 + 5.0),
        None,
        "the gap"
    );
}

#[test]
fn painting_uses_the_flame_graphs_colours_names_and_search() {
    let c = chart();
    let mut bars = Vec::new();
    layout::layout(&c.tracks()[0], &viewport(1000.0, 1150.0), &mut bars);
    let found = search(c.profile(), substring_matcher(&["spin".to_owned()]));
    let marks = ChartMarks {
        search: Some(&found),
        selected: c.profile().function_id("hash"),
        hovered: bars.first().copied(),
    };
    let mut list = DrawList::default();
    paint(&bars, c.profile(), &marks, 2.0, &mut list);
    assert_eq!(list.rects.len(), bars.len());
    let spin = c.profile().function_id("spin").expect("spin");
    let lit: Vec<_> = list
        .rects
        .iter()
        .filter(|r| r.alpha == 1.0)
        .map(|r| r.fill)
        .collect();
    assert_eq!(lit, [Fill::Function(spin), Fill::Function(spin)]);
    let labels: Vec<_> = (0..list.labels.len()).map(|i| list.labels.get(i)).collect();
    assert!(
        labels.contains(&"main") && labels.contains(&"spin"),
        "{labels:?}"
    );
    let marks: Vec<_> = list.outlines.iter().map(|o| o.mark).collect();
    assert_eq!(marks, [Mark::Selected, Mark::Hover]);
}

#[test]
fn zoom_keeps_the_anchor_and_pan_stays_inside_the_data() {
    let vp = viewport(1000.0, 2000.0);
    let (a, b) = zoom(&vp, 1250.0, 0.5, 0.0, 10_000.0);
    assert_eq!((a, b), (1125.0, 1625.0));
    let (a, b) = zoom(&vp, 1250.0, 100.0, 0.0, 10_000.0);
    assert_eq!((a, b), (0.0, 10_000.0), "out no further than the data");
    let (a, b) = zoom(&vp, 1000.0, 1e-9, 0.0, 10_000.0);
    assert_eq!(b - a, 1.0, "in no further than a millisecond");
    // 150 px for 1000 ms: 15 px is 100 ms.
    assert_eq!(pan(&vp, 15.0, 0.0, 10_000.0), (1100.0, 2100.0));
    assert_eq!(pan(&vp, -1e9, 0.0, 10_000.0), (0.0, 1000.0));
    assert_eq!(pan(&vp, 1e9, 0.0, 10_000.0), (9000.0, 10_000.0));
}

#[test]
fn ticks_are_round_offsets_from_the_start() {
    let vp = viewport(1000.0, 2000.0);
    let t = ticks(&vp, 1000.0, 40.0);
    let labels: Vec<_> = t.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["0", "500 ms", "1 s"]);
    assert_eq!(t[1].x_css, 75.0);
    assert_eq!(format_offset(0.5), "0.5 ms");
    assert_eq!(format_offset(1500.0), "1.5 s");
    assert_eq!(format_offset(125_000.0), "2 min 5 s");
    assert_eq!(format_offset(120_000.0), "2 min");
}

#[test]
fn an_interval_opens_as_the_flame_graph_of_its_samples() {
    let samples = [sample(1000, 0, 0), sample(1010, 0, 1), sample(1020, 0, 1)];
    let p = interval_profile("app", &stacks(), &samples, 1005, 1020);
    assert_eq!(p.root_total(), 1);
    assert_eq!(p.total(p.find_path(&["main", "work", "hash"])), 1);
}
