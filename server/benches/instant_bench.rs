//! In-use (instant) reads at fleet size: the services list, the timeline at its automatic
//! interval and at the most buckets a request may ask for, and the same grouped by
//! app_service, over Go heap uploads (`inuse_space`: every process uploads its live heap every
//! 10 s; each upload's stacks over two threads). Instants are read as each process's latest
//! upload per bucket (`server/src/store/instant.rs`), so their cost grows with processes ×
//! buckets, not with samples: this prints what that costs on the store alone.
//!
//! Run: `cargo bench -p embers-server --bench instant_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_PROCESSES` (default 300), `EMBERS_BENCH_HOURS` (default 2),
//! `EMBERS_BENCH_STACKS` (stacks per upload, default 20), `EMBERS_BENCH_RUNS`.

use std::time::Instant;

use embers_model::contract::explore::{parse_services_body, parse_timeline_body};
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};
use serde_json::json;

mod common;

use common::env_usize as env;

/// A minute-aligned start.
const T0: i64 = 1_700_000_040;
/// Seconds between two uploads of one process (Go's pyroscope SDK default).
const UPLOAD_EVERY: i64 = 10;

fn meta(process: usize) -> BatchMeta {
    let tags = Tags::new()
        .with("host", &format!("node-{}", process % 16))
        .and_then(|t| t.with("pod", &format!("api-{process:03}")))
        .unwrap_or_default();
    BatchMeta {
        app_service: format!("api-{:02}", process % 30),
        language: "Golang".into(),
        event_type: "inuse_space".into(),
        unit: "bytes".into(),
        tags,
    }
}

/// Every process's uploads, one transaction per upload round.
fn ingest(store: &Store, processes: usize, seconds: i64, stacks: usize) -> Result<u64, String> {
    let mut written = 0;
    for round in 0..seconds / UPLOAD_EVERY {
        let time = T0 + round * UPLOAD_EVERY;
        let batches: Vec<Batch> = (0..processes)
            .map(|p| Batch {
                meta: meta(p),
                samples: (0..stacks)
                    .map(|s| Sample {
                        time,
                        stack: format!("[t] thread-{};main;cache.Fill;alloc_{s}", s % 2),
                        value: 1024 * (1 + (s as u64 + round as u64) % 7),
                        detail: None,
                    })
                    .collect(),
            })
            .collect();
        written += store.insert(&batches).map_err(|e| e.to_string())?.samples;
    }
    Ok(written)
}

/// The median of `runs` timings of `f`, in ms, and what its last run said.
fn median(runs: usize, f: impl Fn() -> Result<String, String>) -> Result<(f64, String), String> {
    let mut times = Vec::with_capacity(runs);
    let mut said = String::new();
    for _ in 0..runs {
        let t = Instant::now();
        said = f()?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], said))
}

fn main() {
    let processes = env("EMBERS_BENCH_PROCESSES", 300).max(1);
    let seconds = i64::try_from(env("EMBERS_BENCH_HOURS", 4))
        .unwrap_or(4)
        .max(1)
        * 3600;
    let stacks = env("EMBERS_BENCH_STACKS", 20).max(1);
    let runs = env("EMBERS_BENCH_RUNS", 3).max(1);
    let Ok(dir) = tempfile::tempdir() else {
        return eprintln!("no temporary directory");
    };
    let store = match Store::open(&dir.path().join("instant.db")) {
        Ok(s) => s,
        Err(e) => return eprintln!("open: {e}"),
    };
    let t = Instant::now();
    let written = match ingest(&store, processes, seconds, stacks) {
        Ok(n) => n,
        Err(e) => return eprintln!("ingest: {e}"),
    };
    println!(
        "embers instant bench: {processes} processes uploading inuse_space every {UPLOAD_EVERY} s \
         for {} h ({stacks} stacks each): {written} samples in {:.1} s",
        seconds / 3600,
        t.elapsed().as_secs_f64()
    );
    let end = T0 + seconds - 1;
    let range = json!({"time_start": T0, "time_end": end, "profile_event_type": "inuse_space",
        "profile_language_type": "Golang"});
    let services = parse_services_body(range.to_string().as_bytes()).map_err(|e| e.0);
    let timeline = |extra: serde_json::Value| {
        let mut body = range.clone();
        if let (Some(o), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        parse_timeline_body(body.to_string().as_bytes()).map_err(|e| e.0)
    };
    let most = (seconds / embers_model::contract::explore::MAX_BUCKETS + 1).max(1);
    let cases = [
        (
            "timeline api-00, automatic interval",
            timeline(json!({"app_service": "api-00"})),
        ),
        (
            "timeline all by app_service, automatic",
            timeline(json!({"group_by": "app_service"})),
        ),
        (
            "timeline all by app_service, most buckets",
            timeline(json!({"group_by": "app_service", "interval": most})),
        ),
    ];
    let report = |name: &str, r: Result<(f64, String), String>| match r {
        Ok((ms, said)) => println!("  {name:<45} {ms:>9.1} ms  ({said})"),
        Err(e) => println!("  {name:<45} failed: {e}"),
    };
    report(
        "services, whole range",
        median(runs, || {
            let q = services.clone()?;
            let t = store.services(&q).map_err(|e| e.to_string())?;
            Ok(format!("{} rows", t.values.len()))
        }),
    );
    for (name, q) in cases {
        report(
            name,
            median(runs, || {
                let a = store.timeline(&q.clone()?).map_err(|e| e.to_string())?;
                Ok(format!(
                    "interval {} s, {} points",
                    a.interval,
                    a.values.len()
                ))
            }),
        );
    }
}
