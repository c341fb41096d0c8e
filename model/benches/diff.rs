//! Building the diff of two profiles on the benchmark's 1,000,000-node profile, natively: the
//! browser benchmark's comparison (both sides the same answer) and two different sides (the
//! same generator with 10 % fewer nodes, so most of the trees match and some frames are new).
//!
//! Run: `cargo bench -p embers-model --bench diff` (EMBERS_BENCH_NODES to resize).

mod common;
use common::nodes;

use criterion::{criterion_group, criterion_main, Criterion};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::tree::diff::{Diff, DiffMode};
use embers_model::wire::decode_response;
use embers_model::Profile;

/// A profile of `nodes` nodes over `functions` functions (both sides of a diff share the
/// function count, so most frames match).
fn profile(nodes: usize, functions: usize) -> Profile {
    let body = SynthProfile::generate(SynthOptions {
        nodes,
        functions: Some(functions),
        ..SynthOptions::default()
    })
    .to_shape_b_json();
    decode_response(200, &body)
        .expect("synthetic body decodes")
        .profile
}

fn bench(c: &mut Criterion) {
    let (n, functions) = (nodes(), nodes() / 18);
    let comparison = profile(n, functions);
    let smaller = profile(n * 9 / 10, functions);
    let mut g = c.benchmark_group(format!("diff {n} nodes"));
    g.sample_size(10);
    g.bench_function("same answer on both sides", |b| {
        b.iter(|| Diff::new(&comparison, &comparison, DiffMode::Normalized))
    });
    g.bench_function("90 % vs 100 % of the generator", |b| {
        b.iter(|| Diff::new(&smaller, &comparison, DiffMode::Normalized))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
