//! Each transform on the benchmark's 1,000,000-node profile, natively, against the issue's
//! ≤ 300 ms per transform (the browser benchmark times the same steps in the page:
//! `bench/lib/embers.mjs`), and the wall-clock view's merge of two such profiles. The function a
//! step acts on is the root's widest child's (what the page's keys act on after ↓ from the root)
//! or, for recursion, the most frequent function.
//!
//! Run: `cargo bench -p embers-model --bench transforms` (EMBERS_BENCH_NODES to resize).

mod common;
use common::nodes;

use criterion::{criterion_group, criterion_main, Criterion};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::tree::diff::wall::wall;
use embers_model::tree::transform::idle::{drop_idle, IdleClass};
use embers_model::tree::transform::{
    collapse_library, collapse_recursion, drop_stacks_through, focus_function, func_set,
    hide_functions, keep_stacks_through, FuncSet, Libraries,
};
use embers_model::wire::decode_response;
use embers_model::{NodeId, Profile};

fn profile(nodes: usize, seed: u64) -> Profile {
    let body = SynthProfile::generate(SynthOptions {
        nodes,
        seed,
        ..SynthOptions::default()
    })
    .to_shape_b_json();
    decode_response(200, &body)
        .expect("synthetic body decodes")
        .profile
}

/// The function with the most nodes (recursion and merging have the most to do there).
fn busiest(p: &Profile) -> u32 {
    let mut count = vec![0u32; p.function_count()];
    for n in p.nodes().skip(1) {
        count[p.func(n) as usize] += 1;
    }
    (0..count.len() as u32)
        .max_by_key(|&f| count[f as usize])
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let n = nodes();
    let p = profile(n, 1);
    let widest: NodeId = p.children(0).max_by_key(|&c| p.total(c)).unwrap_or(0);
    let one = |f: u32| -> FuncSet { (0..p.function_count() as u32).map(|g| g == f).collect() };
    let (thread, busy) = (one(p.func(widest)), one(busiest(&p)));
    let name = p.function_name(busiest(&p)).to_string();
    let mut g = c.benchmark_group(format!("transforms {n} nodes"));
    g.sample_size(10);
    g.bench_function("drop (widest child)", |b| {
        b.iter(|| drop_stacks_through(&p, &thread))
    });
    g.bench_function("keep only through (widest child)", |b| {
        b.iter(|| keep_stacks_through(&p, &thread))
    });
    g.bench_function("merge (busiest function)", |b| {
        b.iter(|| hide_functions(&p, &busy))
    });
    g.bench_function("focus as root (busiest function)", |b| {
        b.iter(|| focus_function(&p, &busy, &name))
    });
    g.bench_function("collapse recursion (busiest function)", |b| {
        b.iter(|| collapse_recursion(&p, Some(&busy)))
    });
    g.bench_function("collapse all recursion", |b| {
        b.iter(|| collapse_recursion(&p, None))
    });
    g.bench_function("collapse every library", |b| {
        b.iter(|| collapse_library(&p, Libraries::All))
    });
    g.bench_function("idle waits preset", |b| {
        b.iter(|| drop_idle(&p, IdleClass::Wait))
    });
    g.bench_function("idle spin preset", |b| {
        b.iter(|| drop_idle(&p, IdleClass::Spin))
    });
    g.bench_function("name set of a function (per step)", |b| {
        b.iter(|| func_set(&p, |f| f == name))
    });
    let other = profile(n, 2);
    g.bench_function("wall-clock view of two profiles", |b| {
        b.iter(|| wall(&p, &other))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
