//! Store benchmark: ingest rate and ProfileTracing query latency over a large synthetic data set
//! (default 1,000,000 samples over 100,000 distinct stacks), and the same folding done in memory
//! by `embers-model` and by the `inferno` crate for comparison.
//!
//! Run: `cargo bench -p embers-server --bench store_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_SAMPLES`, `EMBERS_BENCH_STACKS` (e.g. 100000 / 10000 for a quick run).

use std::collections::HashSet;
use std::io::{BufReader, Cursor};
use std::time::{Duration, Instant};

use embers_model::contract::selection::Selection;
use embers_model::contract::shape::ResultShape;
use embers_model::contract::tag_filter;
use embers_model::export::encode::encode_result;
use embers_server::demo::Rng;
use embers_server::store::budget::Budget;
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};
use embers_server::tree;
use inferno::collapse::Collapse;

mod common;

use common::env_usize;

/// Start of the synthetic hour.
const T0: i64 = 1_700_000_000;
/// Samples per ingest transaction.
const BATCH: usize = 50_000;
/// Hosts the samples are spread over (one tag set each).
const HOSTS: usize = 4;
/// Query repetitions (the minimum is reported).
const REPEAT: usize = 3;

/// `n` distinct stacks with realistic shared prefixes: each new stack extends a random prefix of
/// an earlier one. No frame repeats its parent (so inferno's recursion folding changes nothing).
fn make_stacks(rng: &mut Rng, n: usize) -> Vec<String> {
    let vocabulary: Vec<String> = (0..3000)
        .map(|i| match i % 10 {
            0..=5 => format!("app::module{}::function_{i}", i % 97),
            6 | 7 => format!("[l] libfn_{i}"),
            _ => format!("[k] kernel_fn_{i}"),
        })
        .collect();
    let threads: Vec<String> = (0..16).map(|i| format!("[t] worker-{i}")).collect();
    let mut seen = HashSet::with_capacity(n);
    let mut stacks: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (mut frames, extra): (Vec<usize>, u64) = if stacks.is_empty() || rng.chance(2) {
            (
                vec![rng.below(threads.len() as u64) as usize],
                8 + rng.below(16),
            )
        } else {
            let base = &stacks[rng.below(stacks.len() as u64) as usize];
            let keep = 1 + rng.below(base.len() as u64) as usize;
            (base[..keep].to_vec(), 1 + rng.below(10))
        };
        for _ in 0..extra {
            if frames.len() >= 60 {
                break;
            }
            let mut next = rng.below(vocabulary.len() as u64) as usize;
            if frames.len() > 1 && frames.last() == Some(&next) {
                next = (next + 1) % vocabulary.len();
            }
            frames.push(next);
        }
        let text: String = std::iter::once(threads[frames[0]].as_str())
            .chain(frames[1..].iter().map(|&f| vocabulary[f].as_str()))
            .collect::<Vec<_>>()
            .join(";");
        if seen.insert(text.clone()) {
            stacks.push(frames);
            out.push(text);
        }
    }
    out
}

/// `(stack index, time, value, host)` per sample, in time order as agents report them; every
/// stack appears at least once, the rest follow a skewed (hot-spot) distribution.
fn make_samples(rng: &mut Rng, n: usize, stacks: usize) -> Vec<(usize, i64, u64, usize)> {
    let mut samples: Vec<_> = (0..n)
        .map(|i| {
            let stack = if i < stacks {
                i
            } else {
                let u = rng.below(1 << 20) as f64 / f64::from(1 << 20);
                ((u * u * u) * stacks as f64) as usize % stacks
            };
            let time = T0 + rng.below(3600) as i64;
            (
                stack,
                time,
                10_101 * (1 + rng.below(3)),
                rng.below(HOSTS as u64) as usize,
            )
        })
        .collect();
    samples.sort_by_key(|s| s.1);
    samples
}

fn meta(host: usize) -> BatchMeta {
    let tags = Tags::new()
        .with("host", &format!("node-{host}"))
        .and_then(|t| t.with("k8s.label.app", "bench"))
        .unwrap_or_default();
    BatchMeta {
        app_service: "bench-app".into(),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Run a query `REPEAT` times; report the fastest split into SQL, tree building and encoding.
fn time_query(store: &Store, label: &str, q: &Selection) {
    let mut best: Option<(Duration, Duration, Duration, Duration, usize, usize, usize)> = None;
    for _ in 0..REPEAT {
        let start = Instant::now();
        let out = match store.query(q) {
            Ok(out) => out,
            Err(e) => {
                println!("{label}: query failed: {e}");
                return;
            }
        };
        let sql = start.elapsed();
        let t = Instant::now();
        let profile = match tree::build_profile(
            &out.root,
            out.stacks.iter().map(|(s, v)| (s.as_str(), *v)),
            -1,
            &Budget::new(None),
        ) {
            Ok(profile) => profile,
            Err(e) => {
                println!("{label}: tree failed: {e}");
                return;
            }
        };
        let build = t.elapsed();
        let t = Instant::now();
        let body =
            serde_json::to_string(&encode_result(profile.as_ref(), ResultShape::B, "on-cpu"))
                .unwrap_or_default();
        let encode = t.elapsed();
        let total = start.elapsed();
        let nodes = profile.as_ref().map_or(0, |p| p.node_count());
        if best.is_none_or(|b| total < b.0) {
            best = Some((
                total,
                sql,
                build,
                encode,
                out.stacks.len(),
                nodes,
                body.len(),
            ));
        }
    }
    if let Some((total, sql, build, encode, stacks, nodes, bytes)) = best {
        println!(
            "{label}: {} total = SQL {} + tree {} + shape-B JSON {} ({stacks} stacks, {nodes} nodes, {:.1} MB JSON)",
            ms(total),
            ms(sql),
            ms(build),
            ms(encode),
            bytes as f64 / 1e6
        );
    }
}

fn main() {
    let n_samples = env_usize("EMBERS_BENCH_SAMPLES", 1_000_000);
    let n_stacks = env_usize("EMBERS_BENCH_STACKS", 100_000)
        .min(n_samples)
        .max(1);
    let mut rng = Rng::new(42);
    let t = Instant::now();
    let stacks = make_stacks(&mut rng, n_stacks);
    let samples = make_samples(&mut rng, n_samples, n_stacks);
    let avg_depth =
        stacks.iter().map(|s| s.split(';').count()).sum::<usize>() as f64 / n_stacks as f64;
    println!(
        "embers store bench: {n_samples} samples, {n_stacks} distinct stacks (avg depth {avg_depth:.1}), \
         {HOSTS} hosts; generated in {}",
        ms(t.elapsed())
    );

    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("tempdir: {e}");
            return;
        }
    };
    let store = match Store::open(&dir.path().join("bench.db")) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("open: {e}");
            return;
        }
    };
    let (written, ingest) = match ingest(&store, &stacks, &samples) {
        Ok(done) => done,
        Err(e) => {
            eprintln!("insert: {e}");
            return;
        }
    };
    println!(
        "ingest: {written} samples in {:.2} s = {:.0} samples/s ({} transactions of up to {BATCH}); db {:.0} MB",
        ingest.as_secs_f64(),
        written as f64 / ingest.as_secs_f64(),
        n_samples.div_ceil(BATCH),
        std::fs::metadata(dir.path().join("bench.db")).map_or(0.0, |m| m.len() as f64 / 1e6)
    );
    time_queries(&store);
    in_memory(&stacks, &samples);
}

/// Ingests `samples` in transactions of [`BATCH`] samples, one `Batch` per host within each;
/// returns the samples written and the time taken.
fn ingest(
    store: &Store,
    stacks: &[String],
    samples: &[(usize, i64, u64, usize)],
) -> Result<(u64, Duration), embers_server::store::StoreError> {
    let t = Instant::now();
    let mut written = 0u64;
    for chunk in samples.chunks(BATCH) {
        let mut batches: Vec<Batch> = (0..HOSTS)
            .map(|h| Batch {
                meta: meta(h),
                samples: Vec::new(),
            })
            .collect();
        for &(stack, time, value, host) in chunk {
            batches[host].samples.push(Sample {
                time,
                stack: stacks[stack].clone(),
                value,
                detail: None,
            });
        }
        written += store.insert(&batches)?.samples;
    }
    Ok((written, t.elapsed()))
}

/// The ProfileTracing queries: the whole hour, one host, a 5-minute window.
fn time_queries(store: &Store) {
    let query = |filter: &str, start: i64, end: i64| Selection {
        app_service: Some("bench-app".into()),
        language: Some("eBPF".into()),
        event_type: Some("on-cpu".into()),
        time_start: start,
        time_end: end,
        filter: tag_filter::parse(filter).unwrap_or_default(),
    };
    time_query(
        store,
        "query whole hour (all samples)",
        &query("", T0, T0 + 3600),
    );
    time_query(
        store,
        "query host='node-1' (1/4 of samples)",
        &query("host='node-1'", T0, T0 + 3600),
    );
    time_query(
        store,
        "query 5-minute window",
        &query("", T0 + 600, T0 + 899),
    );
}

/// The same folding in memory, from folded lines, for comparison: the model's parser, inferno's
/// collapse and inferno's flame graph.
fn in_memory(stacks: &[String], samples: &[(usize, i64, u64, usize)]) {
    let n_samples = samples.len();
    let lines: Vec<String> = samples
        .iter()
        .map(|&(stack, _, value, _)| format!("{} {value}", stacks[stack]))
        .collect();
    let text = lines.join("\n");

    let t = Instant::now();
    let profile = embers_model::wire::folded::parse_folded(&text, "bench-app");
    let model_time = t.elapsed();
    println!(
        "embers-model parse_folded (parse + merge into a tree) of the same {n_samples} lines: {} ({} nodes)",
        ms(model_time),
        profile.map_or(0, |p| p.node_count())
    );

    let t = Instant::now();
    let mut merged = Vec::new();
    let mut folder = inferno::collapse::recursive::Folder::default();
    let ok = folder.collapse(BufReader::new(Cursor::new(text.as_bytes())), &mut merged);
    println!(
        "inferno collapse::recursive::Folder (merge folded lines → folded) of the same lines: {} ({} merged lines{})",
        ms(t.elapsed()),
        merged.iter().filter(|&&b| b == b'\n').count(),
        if ok.is_err() { ", FAILED" } else { "" }
    );

    let t = Instant::now();
    let mut options = inferno::flamegraph::Options::default();
    let svg = inferno::flamegraph::from_lines(
        &mut options,
        lines.iter().map(String::as_str),
        std::io::sink(),
    );
    println!(
        "inferno flamegraph::from_lines (merge + layout + SVG to a sink) of the same lines: {}{}",
        ms(t.elapsed()),
        if svg.is_err() { " (FAILED)" } else { "" }
    );
}
