//! The time views' pure work at issue 37's sizes: the heatmap of an hour at 50 slots a second
//! (target: drawn ≤ 100 ms — here its image, the part that grows with the grid) and the stack
//! chart of 100,000 samples (target: drawn ≤ 100 ms, panned at 60 fps = 16.7 ms a frame —
//! here building its spans once, then a frame's layout + paint of the whole range and of a
//! panned window).
//!
//! Run: `cargo bench -p embers-model --bench time_views`.

use criterion::{criterion_group, criterion_main, Criterion};
use embers_model::view::draw_list::DrawList;
use embers_model::view::heatmap::{fill_rgba, HeatScale, Heatmap};
use embers_model::view::stack_chart::layout::{layout, pan, TimeViewport};
use embers_model::view::stack_chart::paint::{paint, ChartMarks};
use embers_model::view::stack_chart::{StackChart, TimedSample};

/// An hour of seconds × 50 slots with a pattern and noise (a cheap deterministic generator).
fn hour_grid() -> Vec<Vec<u64>> {
    let mut x = 0x9e37_79b9_u64;
    (0..3600)
        .map(|_| {
            (0..50)
                .map(|slot| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 8) + if slot < 25 { 20 } else { 0 }
                })
                .collect()
        })
        .collect()
}

/// 100,000 samples at 99 Hz-like spacing over 4 threads and 2,000 stacks of depth 8–40.
fn samples() -> (Vec<Vec<String>>, Vec<String>, Vec<TimedSample>) {
    let mut x = 0x2545_f491_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let stacks: Vec<Vec<String>> = (0..2000)
        .map(|i| {
            let depth = 8 + (i % 33);
            (0..depth)
                .map(|d| format!("pkg{}.fn_{}", d % 7, (i / (d + 1)) % 97))
                .collect()
        })
        .collect();
    let threads: Vec<String> = (0..4).map(|t| format!("worker-{t}")).collect();
    let mut stack = 0u32;
    let samples = (0..100_000)
        .map(|i| {
            // Stacks repeat in runs, as a thread stays in a function for a while.
            if next() % 8 == 0 {
                stack = (next() % 2000) as u32;
            }
            TimedSample {
                time_ms: 1_700_000_000_000 + (i as i64 / 4) * 10,
                thread: (i % 4) as u32,
                stack,
                weight: 1,
            }
        })
        .collect();
    (stacks, threads, samples)
}

fn bench(c: &mut Criterion) {
    let grid = hour_grid();
    let mut g = c.benchmark_group("heatmap 3600 s x 50 slots");
    g.sample_size(20);
    let map = Heatmap::new(0, 50, &grid).expect("grid");
    let scale = HeatScale::new(map.max(), false);
    let mut px = Vec::new();
    g.bench_function("grid from the answer", |b| {
        b.iter(|| Heatmap::new(0, 50, &grid))
    });
    g.bench_function("image (one pixel a cell)", |b| {
        b.iter(|| fill_rgba(&map, &scale, &mut px))
    });
    g.finish();

    let (stacks, threads, samples) = samples();
    let mut g = c.benchmark_group("stack chart 100k samples");
    g.sample_size(10);
    g.bench_function("build (call tree + spans)", |b| {
        b.iter(|| StackChart::build("app", &stacks, &threads, &samples))
    });
    // One thread holds all 100k samples: the worst case for a frame.
    let one: Vec<TimedSample> = samples
        .iter()
        .map(|s| TimedSample { thread: 0, ..*s })
        .collect();
    let chart = StackChart::build("app", &stacks, &threads, &one).expect("chart");
    let track = &chart.tracks()[0];
    let full = TimeViewport {
        start_ms: chart.start_ms() as f64,
        end_ms: chart.end_ms() as f64,
        width_css: 1600.0,
        height_css: 900.0,
        scroll_top_css: 0.0,
    };
    let (mut bars, mut list) = (Vec::new(), DrawList::default());
    let marks = ChartMarks::default();
    g.bench_function("frame: whole range (layout + paint)", |b| {
        b.iter(|| {
            layout(track, &full, &mut bars);
            paint(&bars, chart.profile(), &marks, 7.2, &mut list);
        })
    });
    let zoomed = TimeViewport {
        end_ms: full.start_ms + 5_000.0,
        ..full
    };
    let mut dx = 0.0;
    g.bench_function("frame: pan a 5 s window by 3 px", |b| {
        b.iter(|| {
            dx += 3.0;
            let (start_ms, end_ms) = pan(&zoomed, dx, full.start_ms, full.end_ms);
            let vp = TimeViewport {
                start_ms,
                end_ms,
                ..zoomed
            };
            layout(track, &vp, &mut bars);
            paint(&bars, chart.profile(), &marks, 7.2, &mut list);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
