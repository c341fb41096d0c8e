//! Building the diff of two profiles on the benchmark's 1,000,000-node profile, natively: the
//! browser benchmark's comparison (both sides the same answer) and two different sides (the
//! same generator with 10 % fewer nodes, so most of the trees match and some frames are new).
//!
//! Run: `cargo bench -p embers-model --bench diff` (EMBERS_BENCH_NODES to resize).

use criterion::{criterion_group, criterion_main, Criterion};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::tree::diff::{Diff, DiffMode};
use embers_model::wire::decode_response;
use embers_model::Profile;

fn nodes() -> usize {
    std::env::var("EMBERS_BENCH_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn profile(nodes: usize) -> Profile {
    let body = SynthProfile::generate(SynthOptions {
        nodes,
        functions: Some(self::nodes() / 18),
        ..SynthOptions::default()
    })
    .to_shape_b_json();
    decode_response(200, &body)
        .expect("synthetic body decodes")
        .profile
}

fn bench(c: &mut Criterion) {
    let comparison = profile(nodes());
    let smaller = profile(nodes() * 9 / 10);
    let mut g = c.benchmark_group("diff 1M");
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
