//! Explore benchmark: ingest rate with the rollup, and the median latency of `services`,
//! `timeline` (plain, grouped by pod, by thread, all services by app_service), `tags` and
//! `tag_values` over a synthetic data set (default 1,000,000 samples over 6 hours: 20 services ×
//! 3 pods × 4 threads, 16,000 distinct stacks), the way the viewer asks: whole span, last hour,
//! last 15 minutes, ranges not aligned to minutes.
//!
//! Run: `cargo bench -p embers-server --bench explore_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_SAMPLES` (e.g. 10000000), `EMBERS_BENCH_HOURS`, `EMBERS_BENCH_SERVICES`,
//! `EMBERS_BENCH_PODS`, `EMBERS_BENCH_THREADS`; `EMBERS_BENCH_RUNS` (timed runs per query).

use std::time::{Duration, Instant};

use embers_model::contract::explore::{
    parse_services_body, parse_tag_values_body, parse_tags_body, parse_timeline_body,
};
use embers_server::demo::Rng;
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};
use serde_json::{json, Value};

/// A minute-aligned start; queries start a few seconds off it, as "now"-based ranges do.
const T0: i64 = 1_700_000_040;
/// Samples per ingest transaction.
const TX_SAMPLES: usize = 50_000;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Spec {
    samples: usize,
    seconds: i64,
    services: usize,
    pods: usize,
    threads: usize,
    stacks_per_thread: usize,
}

fn meta(service: usize, pod: usize) -> BatchMeta {
    let tags = Tags::new()
        .with("host", &format!("node-{}", (service * 3 + pod) % 8))
        .and_then(|t| t.with("pod", &format!("svc-{service:02}-{pod}")))
        .and_then(|t| t.with("pod_ns", &format!("ns-{}", service % 5)))
        .and_then(|t| t.with("k8s.label.app", &format!("svc-{service:02}")))
        .unwrap_or_default();
    BatchMeta {
        app_service: format!("svc-{service:02}"),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags,
    }
}

/// Write the data set in time order, `TX_SAMPLES` per transaction; returns samples written.
fn ingest(store: &Store, spec: &Spec, rng: &mut Rng) -> Result<u64, String> {
    let pool: Vec<Vec<String>> = (0..spec.threads)
        .map(|t| {
            (0..spec.stacks_per_thread)
                .map(|j| {
                    format!(
                        "[t] worker-{t};[l] start_thread;main;mod{}::run;mod{}::step_{};[k] fn_{}",
                        j % 7,
                        j % 13,
                        j,
                        j % 97
                    )
                })
                .collect()
        })
        .collect();
    let per_second = spec.samples as f64 / spec.seconds as f64;
    let mut written = 0u64;
    let mut owed = 0.0;
    let mut batches: Vec<Batch> = Vec::new();
    let mut pending = 0usize;
    for second in 0..spec.seconds {
        owed += per_second;
        while owed >= 1.0 {
            owed -= 1.0;
            // Skewed towards the first services: a few burn most of the CPU.
            let u = rng.below(1 << 16) as f64 / 65536.0;
            let service = ((u * u) * spec.services as f64) as usize % spec.services;
            let pod = rng.below(spec.pods as u64) as usize;
            let thread = rng.below(spec.threads as u64) as usize;
            let stack = pool[thread][rng.below(spec.stacks_per_thread as u64) as usize].clone();
            let slot = service * spec.pods + pod;
            if batches.is_empty() {
                batches = (0..spec.services * spec.pods)
                    .map(|i| Batch {
                        meta: meta(i / spec.pods, i % spec.pods),
                        samples: Vec::new(),
                    })
                    .collect();
            }
            batches[slot].samples.push(Sample {
                time: T0 + second,
                stack,
                value: 10_101 * (1 + rng.below(3)),
            });
            pending += 1;
        }
        if pending >= TX_SAMPLES || second + 1 == spec.seconds {
            batches.retain(|b| !b.samples.is_empty());
            written += store.insert(&batches).map_err(|e| e.to_string())?.samples;
            batches.clear();
            pending = 0;
        }
    }
    Ok(written)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Run `f` once to warm up, then `runs` times; print the median and the slowest.
fn time(label: &str, runs: usize, mut f: impl FnMut() -> Result<String, String>) -> f64 {
    let first = match f() {
        Ok(summary) => summary,
        Err(e) => {
            println!("{label:<58} FAILED: {e}");
            return f64::NAN;
        }
    };
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = f();
            ms(t.elapsed())
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{label:<58} median {median:7.1} ms  max {:7.1} ms  ({first})",
        times[times.len() - 1]
    );
    median
}

fn body(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn queries(store: &Store, spec: &Spec, runs: usize) -> Vec<(String, f64)> {
    let end = T0 + spec.seconds - 1;
    let ranges = [
        ("whole span", T0 + 7, end),
        ("last hour", end - 3600 + 1, end),
        ("last 15 min", end - 900 + 1, end),
    ];
    let mut out = Vec::new();
    let mut record = |label: String, median: f64| out.push((label, median));
    for (name, start, stop) in ranges {
        let range = json!({"time_start": start, "time_end": stop});
        let services = parse_services_body(&body(&range)).map_err(|e| e.0);
        let label = format!("services, {name}");
        record(
            label.clone(),
            time(&label, runs, || {
                let q = services.clone()?;
                let t = store.services(&q).map_err(|e| e.to_string())?;
                Ok(format!(
                    "{} rows, {} B",
                    t.values.len(),
                    serde_json::to_string(&t).map_or(0, |s| s.len())
                ))
            }),
        );
        for (what, extra) in [
            ("timeline svc-00", json!({})),
            ("timeline svc-00 by pod", json!({"group_by": "pod"})),
            ("timeline svc-00 by thread", json!({"group_by": "thread"})),
            (
                "timeline all by app_service",
                json!({"app_service": null, "group_by": "app_service"}),
            ),
            (
                "timeline svc-00, filter pod",
                json!({"tag_filter": "pod IN ('svc-00-0','svc-00-1')"}),
            ),
        ] {
            let mut b = json!({"app_service": "svc-00", "profile_language_type": "eBPF",
                "profile_event_type": "on-cpu", "time_start": start, "time_end": stop});
            if let (Some(o), Some(e)) = (b.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            let q = parse_timeline_body(&body(&b)).map_err(|e| e.0);
            let label = format!("{what}, {name}");
            record(
                label.clone(),
                time(&label, runs, || {
                    let q = q.clone()?;
                    let a = store.timeline(&q).map_err(|e| e.to_string())?;
                    Ok(format!(
                        "interval {} s, {} points",
                        a.interval,
                        a.values.len()
                    ))
                }),
            );
        }
        for (what, extra) in [
            ("tag_values pod", json!({"tag": "pod"})),
            (
                "tag_values app_service prefix",
                json!({"tag": "app_service", "prefix": "SVC-1"}),
            ),
        ] {
            let mut b = range.clone();
            if let (Some(o), Some(e)) = (b.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            let q = parse_tag_values_body(&body(&b)).map_err(|e| e.0);
            let label = format!("{what}, {name}");
            record(
                label.clone(),
                time(&label, runs, || {
                    let t = store.tag_values(&q.clone()?).map_err(|e| e.to_string())?;
                    Ok(format!("{} values", t.values.len()))
                }),
            );
        }
        let q = parse_tags_body(&body(&range)).map_err(|e| e.0);
        let label = format!("tags, {name}");
        record(
            label.clone(),
            time(&label, runs, || {
                let t = store.tags(&q.clone()?).map_err(|e| e.to_string())?;
                Ok(format!("{} tags", t.values.len()))
            }),
        );
    }
    out
}

fn main() {
    let spec = Spec {
        samples: env("EMBERS_BENCH_SAMPLES", 1_000_000),
        seconds: i64::try_from(env("EMBERS_BENCH_HOURS", 6)).unwrap_or(6) * 3600,
        services: env("EMBERS_BENCH_SERVICES", 20).max(1),
        pods: env("EMBERS_BENCH_PODS", 3).max(1),
        threads: env("EMBERS_BENCH_THREADS", 4).max(1),
        stacks_per_thread: 4000,
    };
    let runs = env("EMBERS_BENCH_RUNS", 7).max(1);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => return eprintln!("tempdir: {e}"),
    };
    let path = dir.path().join("explore.db");
    let store = match Store::open(&path) {
        Ok(s) => s,
        Err(e) => return eprintln!("open: {e}"),
    };
    let t = Instant::now();
    let written = match ingest(&store, &spec, &mut Rng::new(7)) {
        Ok(n) => n,
        Err(e) => return eprintln!("ingest: {e}"),
    };
    let took = t.elapsed().as_secs_f64();
    println!(
        "embers explore bench: {written} samples over {} h, {} services x {} pods x {} threads; \
         ingest {took:.1} s = {:.0} samples/s (rollup included); db {:.0} MB",
        spec.seconds / 3600,
        spec.services,
        spec.pods,
        spec.threads,
        written as f64 / took,
        std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / 1e6),
    );
    let results = queries(&store, &spec, runs);
    let worst = results.iter().map(|(_, m)| *m).fold(0.0f64, f64::max);
    println!(
        "slowest median: {worst:.1} ms over {} queries",
        results.len()
    );
}
