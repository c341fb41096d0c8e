//! Decode + layout of a synthetic 1,000,000-node shape-B response (and shape A for contrast),
//! natively. Prints wall time from criterion and, once, the memory the model keeps and the peak
//! during decoding (via a counting allocator).
//!
//! Run: `cargo bench -p embers-model --bench decode_layout` (EMBERS_BENCH_NODES to resize).

mod common;
use common::nodes;

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use embers_model::contract::event::Quantity;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::view::layout::{layout, LayoutOptions, Viewport};
use embers_model::wire::decode_response;
use embers_model::wire::pprof::{decode, read_profile};
use embers_model::Profile;

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: AllocLayout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: AllocLayout) {
        CURRENT.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

const VIEWPORT: Viewport = Viewport {
    width_css: 1600.0,
    height_css: 900.0,
    scroll_top_css: 0.0,
};

type Group<'a> = BenchmarkGroup<'a, WallTime>;

fn bench(c: &mut Criterion) {
    let synth = SynthProfile::generate(SynthOptions {
        nodes: nodes(),
        ..SynthOptions::default()
    });
    let body_b = synth.to_shape_b_json();
    let body_a = synth.to_shape_a_json();
    drop(synth);
    let profile = first_decode(&body_b);

    let mut g = c.benchmark_group("1M");
    g.sample_size(10);
    decode_benches(&mut g, &body_b, &body_a);
    pprof_benches(&mut g, &profile);
    parts_benches(&mut g, &profile);
    layout_benches(&mut g, &profile);
    analysis_benches(&mut g, &profile);
    g.finish();
}

/// Decodes `body_b` once, printing its size, the time, the memory the model keeps and the peak
/// while decoding, and the bars of the root view.
fn first_decode(body_b: &str) -> Profile {
    let before = CURRENT.load(Relaxed);
    PEAK.store(before, Relaxed);
    let t = Instant::now();
    let profile = decode_response(200, body_b)
        .expect("synthetic body decodes")
        .profile;
    let decode_once = t.elapsed();
    let peak = PEAK.load(Relaxed) - before;
    let kept = CURRENT.load(Relaxed) - before;
    let mut bars = Vec::new();
    layout(&profile, 0, &VIEWPORT, &LayoutOptions::default(), &mut bars);
    println!(
        "shape B: {} nodes, {} functions, depth {}, body {:.1} MiB; first decode {:.0} ms; \
         model keeps {:.1} MiB, decode peak {:.1} MiB above the body; {} bars in a 1600x900 view",
        profile.node_count(),
        profile.function_count(),
        profile.max_depth(),
        mib(body_b.len()),
        decode_once.as_secs_f64() * 1e3,
        mib(kept),
        mib(peak),
        bars.len()
    );
    profile
}

/// Whole decodes of both shapes, and shape B's two stages apart.
fn decode_benches(g: &mut Group<'_>, body_b: &str, body_a: &str) {
    g.bench_function("decode shape B", |b| {
        b.iter(|| decode_response(200, body_b).map(|d| d.profile.node_count()))
    });
    let result_b = body_b
        .find(r#""result":"#)
        .map(|i| &body_b[i + 9..body_b.len() - r#","debug":null}"#.len()])
        .expect("synthetic body has a result");
    g.bench_function("shape B: wire tables only", |b| {
        b.iter(|| embers_model::wire::shape_b::decode(result_b).map(|t| t.len()))
    });
    let table = embers_model::wire::shape_b::decode(result_b).expect("decodes");
    g.bench_function("shape B: tree from table only", |b| {
        b.iter(|| embers_model::Profile::from_table(table.clone()).node_count())
    });
    g.bench_function("decode shape A", |b| {
        b.iter(|| decode_response(200, body_a).map(|d| d.profile.node_count()))
    });
}

/// The same tree as pprof (as Embers exports it): decoded, folded and built, what the viewer's
/// worker does with a `.pb.gz` once gunzipped.
fn pprof_benches(g: &mut Group<'_>, profile: &Profile) {
    let meta = PprofMeta {
        event_type: "on-cpu",
        quantity: Quantity::Microseconds,
        time_nanos: 0,
        duration_nanos: 0,
    };
    let bytes = to_pprof(profile, &meta);
    println!("pprof: {:.1} MiB uncompressed", mib(bytes.len()));
    g.bench_function("decode pprof (read_profile)", |b| {
        b.iter(|| read_profile(&bytes, "app").map(|r| r.profile.node_count()))
    });
    g.bench_function("pprof: wire tables only", |b| {
        b.iter(|| decode(&bytes).map(|p| p.samples.len()))
    });
}

/// Taking a profile apart for the worker's message and putting it back together on the page
/// (the copies in and out of JS are not included: they are the browser's).
fn parts_benches(g: &mut Group<'_>, profile: &Profile) {
    g.bench_function("into_parts", |b| {
        b.iter_batched(
            || profile.clone(),
            |p| p.into_parts().func.len(),
            BatchSize::LargeInput,
        )
    });
    let parts = profile.clone().into_parts();
    g.bench_function("from_parts (copies nothing, checks every column)", |b| {
        b.iter_batched(
            || parts.clone(),
            |p| Profile::from_parts(p).map(|p| p.node_count()),
            BatchSize::LargeInput,
        )
    });
}

/// Layout of the root view and of a view zoomed to the middle of the deepest stack.
fn layout_benches(g: &mut Group<'_>, profile: &Profile) {
    let opts = LayoutOptions::default();
    let mut bars = Vec::new();
    g.bench_function("layout root view", |b| {
        b.iter(|| layout(profile, 0, &VIEWPORT, &opts, &mut bars))
    });
    let deep = profile
        .nodes()
        .max_by_key(|&n| profile.depth(n))
        .unwrap_or(0);
    let mid = profile.path_to(deep)[profile.depth(deep) as usize / 2];
    g.bench_function("layout zoomed mid-stack", |b| {
        b.iter(|| layout(profile, mid, &VIEWPORT, &opts, &mut bars))
    });
}

/// Analysis on the same profile: what a click on a chip, a view switch or a keystroke costs.
fn analysis_benches(g: &mut Group<'_>, profile: &Profile) {
    g.bench_function("search (substring, 2 terms)", |b| {
        let terms = vec!["handle".to_string(), "[k] poll".to_string()];
        b.iter(|| {
            embers_model::tree::search::search(
                profile,
                embers_model::tree::search::substring_matcher(&terms),
            )
            .nodes
            .len()
        })
    });
    g.bench_function("function table stats", |b| {
        b.iter(|| embers_model::tree::stats::function_stats(profile).len())
    });
    g.bench_function("fold threads", |b| {
        b.iter(|| embers_model::tree::transform::fold_threads(profile).node_count())
    });
    g.bench_function("invert (bottom-up)", |b| {
        b.iter(|| {
            embers_model::tree::transform::invert(profile)
                .profile
                .node_count()
        })
    });
    let busiest = embers_model::tree::stats::function_stats(profile)
        .iter()
        .skip(1)
        .max_by_key(|s| s.total)
        .map_or(0, |s| s.func);
    g.bench_function("sandwich of the busiest function", |b| {
        b.iter(|| {
            embers_model::tree::transform::sandwich(profile, busiest)
                .callees
                .node_count()
        })
    });
    // Comparing a profile with itself: the union tree is as big as one side (the worst case
    // for a change between two captures of one service is a little bigger).
    g.bench_function("diff of two 1M profiles (normalised)", |b| {
        b.iter(|| {
            embers_model::tree::diff::Diff::new(
                profile,
                profile,
                embers_model::tree::diff::DiffMode::Normalized,
            )
            .profile
            .node_count()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
