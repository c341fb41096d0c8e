//! Explore benchmark: ingest rate with the rollup, and the median latency of `services`,
//! `timeline` (plain, grouped by pod, by thread, all services by app_service), `tags` and
//! `tag_values` over a synthetic data set (default 1,000,000 samples over 6 hours: 20 services ×
//! 3 pods × 4 threads, 16,000 distinct stacks), the way the viewer asks: whole span, last hour,
//! last 15 minutes, ranges not aligned to minutes. Each request is timed twice: on the store
//! alone (the parsed query in, the answer's rows out), and end to end over HTTP (the service's
//! router on a loopback port: the JSON body in, the whole JSON answer read by the client).
//!
//! Run: `cargo bench -p embers-server --bench explore_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_SAMPLES` (e.g. 10000000), `EMBERS_BENCH_HOURS`, `EMBERS_BENCH_SERVICES`,
//! `EMBERS_BENCH_PODS`, `EMBERS_BENCH_THREADS`; `EMBERS_BENCH_RUNS` (timed runs per query).

use std::sync::Arc;
use std::time::{Duration, Instant};

use embers_model::contract::explore::{
    parse_services_body, parse_tag_values_body, parse_tags_body, parse_timeline_body,
};
use embers_server::demo::Rng;
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};
use serde_json::{json, Value};

mod common;

use common::env_usize as env;

/// A minute-aligned start; queries start a few seconds off it, as "now"-based ranges do.
const T0: i64 = 1_700_000_040;
/// Samples per ingest transaction.
const TX_SAMPLES: usize = 50_000;

/// The data set's size and shape.
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
                detail: None,
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

/// The store-only run of a request: the summary of its answer.
type OnStore = Box<dyn Fn(&Store) -> Result<String, String>>;

/// A request as the viewer sends it: its endpoint, its JSON body, and the same query run on
/// the store directly (parsed once, beforehand), summarising the answer.
struct Case {
    label: String,
    endpoint: &'static str,
    body: Vec<u8>,
    on_store: OnStore,
}

impl Case {
    fn new(
        label: String,
        endpoint: &'static str,
        body: &Value,
        on_store: impl Fn(&Store) -> Result<String, String> + 'static,
    ) -> Case {
        Case {
            label,
            endpoint,
            body: body.to_string().into_bytes(),
            on_store: Box::new(on_store),
        }
    }
}

/// `base` with `extra`'s members set.
fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(o), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    base
}

/// Every request, per range: services, five timelines, two tag_values, tags.
fn cases(spec: &Spec) -> Vec<Case> {
    let end = T0 + spec.seconds - 1;
    let ranges = [
        ("whole span", T0 + 7, end),
        ("last hour", end - 3600 + 1, end),
        ("last 15 min", end - 900 + 1, end),
    ];
    let mut out = Vec::new();
    for (name, start, stop) in ranges {
        let range = json!({"time_start": start, "time_end": stop});
        let q = parse_services_body(range.to_string().as_bytes()).map_err(|e| e.0);
        out.push(Case::new(
            format!("services, {name}"),
            "services",
            &range,
            move |store| {
                let t = store.services(&q.clone()?).map_err(|e| e.to_string())?;
                let bytes = serde_json::to_string(&t).map_or(0, |s| s.len());
                Ok(format!("{} rows, {bytes} B", t.values.len()))
            },
        ));
        out.extend(timelines(name, start, stop));
        for (what, extra) in [
            ("tag_values pod", json!({"tag": "pod"})),
            (
                "tag_values app_service prefix",
                json!({"tag": "app_service", "prefix": "SVC-1"}),
            ),
        ] {
            let b = with(range.clone(), extra);
            let q = parse_tag_values_body(b.to_string().as_bytes()).map_err(|e| e.0);
            out.push(Case::new(
                format!("{what}, {name}"),
                "tag_values",
                &b,
                move |store| {
                    let t = store.tag_values(&q.clone()?).map_err(|e| e.to_string())?;
                    Ok(format!("{} values", t.values.len()))
                },
            ));
        }
        let q = parse_tags_body(range.to_string().as_bytes()).map_err(|e| e.0);
        out.push(Case::new(
            format!("tags, {name}"),
            "tags",
            &range,
            move |store| {
                let t = store.tags(&q.clone()?).map_err(|e| e.to_string())?;
                Ok(format!("{} tags", t.values.len()))
            },
        ));
    }
    out
}

/// The timelines of one range: svc-00 plain, by pod, by thread, filtered; all by app_service.
fn timelines(name: &str, start: i64, stop: i64) -> Vec<Case> {
    let mut out = Vec::new();
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
        let base = json!({"app_service": "svc-00", "profile_language_type": "eBPF",
            "profile_event_type": "on-cpu", "time_start": start, "time_end": stop});
        let b = with(base, extra);
        let q = parse_timeline_body(b.to_string().as_bytes()).map_err(|e| e.0);
        out.push(Case::new(
            format!("{what}, {name}"),
            "timeline",
            &b,
            move |store| {
                let a = store.timeline(&q.clone()?).map_err(|e| e.to_string())?;
                Ok(format!(
                    "interval {} s, {} points",
                    a.interval,
                    a.values.len()
                ))
            },
        ));
    }
    out
}

/// The service's router on a loopback port, and a client.
struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    base: String,
}

impl Http {
    fn start(store: Arc<Store>) -> Result<Http, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .map_err(|e| e.to_string())?;
        let base = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let router = embers_server::app(embers_server::AppState::new(store));
        runtime.spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let client = reqwest::Client::new();
        Ok(Http {
            runtime,
            client,
            base,
        })
    }

    /// POSTs `case`'s body to its endpoint and reads the whole answer; its size.
    fn post(&self, case: &Case) -> Result<String, String> {
        let url = format!("{}/v1/profile/{}", self.base, case.endpoint);
        self.runtime.block_on(async {
            let response = self
                .client
                .post(url)
                .header("content-type", "application/json")
                .body(case.body.clone())
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            let body = response.bytes().await.map_err(|e| e.to_string())?;
            if !status.is_success() {
                return Err(format!("{status}: {}", String::from_utf8_lossy(&body)));
            }
            Ok(format!("{} B", body.len()))
        })
    }
}

/// Runs `f` once to warm up, then `runs` times; the first run's summary, the median and the
/// slowest time.
fn time(runs: usize, f: impl Fn() -> Result<String, String>) -> Result<(String, f64, f64), String> {
    let first = f()?;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = f();
            ms(t.elapsed())
        })
        .collect();
    times.sort_by(f64::total_cmp);
    Ok((first, times[times.len() / 2], times[times.len() - 1]))
}

/// Times every case on the store and over HTTP; prints a line each and returns the medians.
fn run(store: &Store, http: &Http, cases: &[Case], runs: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for case in cases {
        let label = &case.label;
        let direct = time(runs, || (case.on_store)(store));
        let served = time(runs, || http.post(case));
        match (direct, served) {
            (Ok((summary, median, max)), Ok((size, http_median, http_max))) => {
                println!(
                    "{label:<44} store median {median:7.1} ms  max {max:7.1} ms | HTTP median \
                     {http_median:7.1} ms  max {http_max:7.1} ms  ({summary}; {size})"
                );
                out.push((median, http_median));
            }
            (Err(e), _) | (_, Err(e)) => {
                println!("{label:<44} FAILED: {e}");
                out.push((f64::NAN, f64::NAN));
            }
        }
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
        Ok(s) => Arc::new(s),
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
    let http = match Http::start(store.clone()) {
        Ok(h) => h,
        Err(e) => return eprintln!("server: {e}"),
    };
    let medians = run(&store, &http, &cases(&spec), runs);
    let worst = |pick: fn(&(f64, f64)) -> f64| medians.iter().map(pick).fold(0.0f64, f64::max);
    println!(
        "slowest median over {} queries: store {:.1} ms, HTTP {:.1} ms",
        medians.len(),
        worst(|m| m.0),
        worst(|m| m.1)
    );
}
