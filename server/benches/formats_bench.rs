//! Ingest throughput of pprof against folded stacks: the same synthetic profiles (the model's
//! generator: threads, long chains, kernel/library/application names) sent as folded text and
//! as gzipped pprof (as Embers and Go write it), each parsed into batches by the service's own
//! code (`input::parse_samples`; `formats::pprof`, gunzip included) and written to a fresh
//! SQLite store, request after request. Prints stored samples (distinct stacks with a value)
//! per second for both and whether pprof is within 2× of folded (the target).
//!
//! Run: `cargo bench -p embers-server --bench formats_bench`
//! Sizes: `EMBERS_BENCH_NODES` (tree nodes per request, default 20000), `EMBERS_BENCH_REQUESTS`
//! (default 10), `EMBERS_BENCH_DEPTH` (deepest stack, default 60).

use std::time::{Duration, Instant};

use embers_model::budget::Budget;
use embers_model::contract::event::Quantity;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_server::formats::gzip::{gzip, maybe_gunzip_within};
use embers_server::formats::pprof::{batches, Selection, Target};
use embers_server::input::parse_samples;
use embers_server::limits::StackLimits;
use embers_server::store::{Batch, BatchMeta, Store, Tags};
use embers_server::{DEFAULT_INGEST_LIMIT, DEFAULT_REQUEST_MEMORY};

mod common;

use common::env_usize;

const LIMITS: StackLimits = StackLimits {
    max_frames: 4096,
    max_frame_bytes: 4096,
};
const T0: i64 = 1_700_000_000;

/// One request's profile in both forms.
struct Request {
    folded: String,
    pprof_gz: Vec<u8>,
}

fn requests(n: usize, nodes: usize, depth: u32) -> Vec<Request> {
    (0..n)
        .map(|i| {
            let synth = SynthProfile::generate(SynthOptions {
                nodes,
                max_depth: depth,
                seed: i as u64 + 1,
                ..SynthOptions::default()
            });
            let profile = embers_model::decode_response(200, &synth.to_shape_b_json())
                .expect("synthetic answer")
                .profile;
            let meta = PprofMeta {
                event_type: "on-cpu",
                quantity: Quantity::Microseconds,
                time_nanos: T0 * 1_000_000_000,
                duration_nanos: 0,
            };
            Request {
                folded: synth.to_folded(),
                pprof_gz: gzip(&to_pprof(&profile, &meta)),
            }
        })
        .collect()
}

fn meta() -> BatchMeta {
    BatchMeta {
        app_service: "bench-app".into(),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags: Tags::new(),
    }
}

/// Parses and stores every request with `parse`; returns (parse time, write time, samples).
fn run(
    label: &str,
    reqs: &[Request],
    parse: impl Fn(&Request) -> Vec<Batch>,
) -> (Duration, Duration, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("bench.db")).expect("store");
    let (mut parsing, mut writing, mut samples) = (Duration::ZERO, Duration::ZERO, 0);
    for r in reqs {
        let t = Instant::now();
        let batches = parse(r);
        parsing += t.elapsed();
        let t = Instant::now();
        samples += store.insert(&batches).expect("insert").samples;
        writing += t.elapsed();
    }
    let total = parsing + writing;
    println!(
        "{label:<8} {samples:>9} samples in {:>8.1} ms (parse {:>7.1} ms, write {:>7.1} ms): {:>9.0} samples/s",
        total.as_secs_f64() * 1e3,
        parsing.as_secs_f64() * 1e3,
        writing.as_secs_f64() * 1e3,
        samples as f64 / total.as_secs_f64()
    );
    (parsing, writing, samples)
}

fn main() {
    let nodes = env_usize("EMBERS_BENCH_NODES", 20_000);
    let n = env_usize("EMBERS_BENCH_REQUESTS", 10);
    let depth = env_usize("EMBERS_BENCH_DEPTH", 60) as u32;
    let reqs = requests(n, nodes, depth);
    let folded_bytes: usize = reqs.iter().map(|r| r.folded.len()).sum();
    let pprof_bytes: usize = reqs.iter().map(|r| r.pprof_gz.len()).sum();
    println!(
        "{n} requests of a {nodes}-node profile (depth <= {depth}): folded {:.1} MiB, pprof.gz {:.1} MiB",
        folded_bytes as f64 / 1048576.0,
        pprof_bytes as f64 / 1048576.0
    );
    let tags = Tags::new();
    let folded = run("folded", &reqs, |r| {
        let samples = parse_samples(&r.folded, T0, &LIMITS).expect("folded");
        vec![Batch {
            meta: meta(),
            samples,
        }]
    });
    let pprof = run("pprof", &reqs, |r| {
        // As the service reads a request: one budget, sized from the bytes sent.
        let budget = Budget::for_input(r.pprof_gz.len(), DEFAULT_REQUEST_MEMORY);
        let bytes =
            maybe_gunzip_within(&r.pprof_gz, DEFAULT_INGEST_LIMIT, &budget).expect("gunzip");
        let target = Target {
            app_service: "bench-app",
            language: Some("eBPF"),
            time: Some(T0),
            tags: &tags,
            selection: Selection::Default,
            unit: None,
            budget: &budget,
        };
        batches(&bytes, None, &target, &LIMITS).expect("pprof")
    });
    // The generator may give two siblings one name; the tree merges them, folded text does not.
    assert!(
        folded.2.abs_diff(pprof.2) * 1000 < folded.2,
        "both store the same samples"
    );
    let ratio = (pprof.0 + pprof.1).as_secs_f64() / (folded.0 + folded.1).as_secs_f64();
    println!(
        "pprof ingest takes {ratio:.2}x the time of folded ingest: {} (target <= 2x)",
        if ratio <= 2.0 { "PASS" } else { "FAIL" }
    );
}
