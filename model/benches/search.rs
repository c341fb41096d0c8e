//! One search keystroke on the benchmark's 1,000,000-node profile, natively: the full search
//! (function set by name, then every matching node in preorder) against the keystroke search
//! (function set from the lower-cased name buffer, count per function, a walk that skips
//! counted subtrees), and what the keystroke search's index costs once per profile.
//!
//! Run: `cargo bench -p embers-model --bench search` (EMBERS_BENCH_NODES to resize).

mod common;
use common::nodes;

use criterion::{criterion_group, criterion_main, Criterion};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::tree::matches::{Matches, SearchIndex};
use embers_model::tree::search::{parse_terms, search_funcs, substring_matcher};
use embers_model::tree::transform::func_set;
use embers_model::wire::decode_response;

fn bench(c: &mut Criterion) {
    let body = SynthProfile::generate(SynthOptions {
        nodes: nodes(),
        ..SynthOptions::default()
    })
    .to_shape_b_json();
    let profile = decode_response(200, &body)
        .expect("synthetic body decodes")
        .profile;
    drop(body);
    let index = SearchIndex::new(&profile);
    // The browser benchmark's terms, and one that matches a single function (the walk's worst
    // case: nothing to skip).
    let rare = profile
        .function_name(profile.function_count() as u32 - 1)
        .to_string();
    let mut g = c.benchmark_group("search 1M");
    g.sample_size(20);
    g.bench_function("index (once per profile)", |b| {
        b.iter(|| SearchIndex::new(&profile))
    });
    for text in ["alloc", "flush", rare.as_str()] {
        let terms = parse_terms(text);
        let label = if text == rare { "rare" } else { text };
        g.bench_function(format!("{label}: names by substring_matcher"), |b| {
            b.iter(|| func_set(&profile, substring_matcher(&terms)))
        });
        g.bench_function(format!("{label}: names by index"), |b| {
            b.iter(|| index.substring_set(&profile, &terms))
        });
        let funcs = index.substring_set(&profile, &terms);
        g.bench_function(format!("{label}: full node list + total"), |b| {
            b.iter(|| search_funcs(&profile, funcs.clone()).nodes.len())
        });
        g.bench_function(format!("{label}: count + skipping total"), |b| {
            b.iter(|| Matches::new(&profile, &index, funcs.clone()).count)
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
