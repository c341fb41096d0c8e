//! Hostile senders against a real service process: each small request that used to cost
//! gigabytes (issue table: forged pprof, a push of such profiles, OTLP of millions of empty
//! messages, over HTTP and over gRPC without the token) gets its 4xx, and the service's peak
//! resident memory (`VmHWM`) grows by less than [`MAX_GROWTH`] while it is refused. A fresh
//! service per case, so one case's peak cannot hide another's.

use std::io::Write;
use std::time::Duration;

use embers_model::wire::protobuf::{put_bytes, put_packed, put_uint};
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::common::process::{peak_and_rss, spawn_serve_reading};
use crate::common::TempDb;

/// What refusing one of these may cost at peak.
const MAX_GROWTH: u64 = 100 << 20;

/// A service process and how to read its memory.
struct Service {
    child: tokio::process::Child,
    url: String,
    _db: TempDb,
}

impl Service {
    async fn start(extra: &[&str]) -> Service {
        let db = TempDb::new();
        let (child, url, _) = spawn_serve_reading(&db.path(), extra, 0).await;
        let s = Service {
            child,
            url,
            _db: db,
        };
        // Warm: the first request's allocations are not the attack's.
        let client = reqwest::Client::new();
        let healthz = client.get(format!("{}/healthz", s.url)).send().await;
        assert!(healthz.expect("healthz").status().is_success());
        s
    }

    /// `VmHWM` and `VmRSS` of the process, bytes.
    fn memory(&self) -> (u64, u64) {
        peak_and_rss(self.child.id().expect("running"))
    }
}

/// Sends `request` to a fresh service and checks the status and the peak's growth.
async fn refused_within_budget(
    extra: &[&str],
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    status: u16,
) -> String {
    let s = Service::start(extra).await;
    let (_, rss_before) = s.memory();
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", s.url))
        .timeout(Duration::from_secs(120))
        .body(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("answered");
    let got = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let (peak, _) = s.memory();
    let growth = peak.saturating_sub(rss_before);
    eprintln!("{path}: {got}, peak grew {} MiB", growth >> 20);
    assert_eq!(got, status, "{text}");
    assert!(
        growth < MAX_GROWTH,
        "{path}: the peak grew {} MiB",
        growth >> 20
    );
    text
}

/// A pprof of `types` identical `samples/count` sample types and 15 stacks of ~4,000 frames,
/// every frame the same 4,000-byte name: ~63 KB that names 240 MB of stack text per type.
fn forged_pprof(types: usize) -> Vec<u8> {
    let name = "x".repeat(4000);
    let strings = ["", "samples", "count", name.as_str()];
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for _ in 0..types {
        let mut t = Vec::new();
        put_uint(&mut t, 1, 1);
        put_uint(&mut t, 2, 2);
        put_bytes(&mut out, 1, &t);
    }
    for i in 0..15u64 {
        let mut sample = Vec::new();
        let ids = vec![1u64; 3987 + i as usize];
        put_packed(&mut sample, 1, &ids, &mut scratch);
        put_packed(&mut sample, 2, &vec![1u64; types], &mut scratch);
        put_bytes(&mut out, 2, &sample);
    }
    let mut line = Vec::new();
    put_uint(&mut line, 1, 1);
    let mut location = Vec::new();
    put_uint(&mut location, 1, 1);
    put_bytes(&mut location, 4, &line);
    put_bytes(&mut out, 4, &location);
    let mut function = Vec::new();
    put_uint(&mut function, 1, 1);
    put_uint(&mut function, 2, 3);
    put_bytes(&mut out, 5, &function);
    for s in strings {
        put_bytes(&mut out, 6, s.as_bytes());
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

/// 30M empty `ResourceProfiles` (`0a 00`), gzipped: 60 MB that decode into 3 GB.
fn empty_resource_profiles() -> Vec<u8> {
    gzip(&[0x0a, 0x00].repeat(30_000_000))
}

#[tokio::test]
async fn a_forged_pprof_of_eight_sample_types_is_refused_within_the_budget() {
    let body = forged_pprof(8);
    assert!(body.len() < 70_000, "{}", body.len());
    let text =
        refused_within_budget(&[], "/ingest?name=hostile&format=pprof", &[], body, 413).await;
    assert!(text.contains("--max-request-memory"), "{text}");
}

#[tokio::test]
async fn a_push_of_eight_forged_profiles_is_refused_within_the_budget() {
    let profile = forged_pprof(1);
    let mut sample = Vec::new();
    put_bytes(&mut sample, 1, &profile);
    let mut series = Vec::new();
    for (k, v) in [("__name__", "process_cpu"), ("service_name", "hostile")] {
        let mut label = Vec::new();
        put_bytes(&mut label, 1, k.as_bytes());
        put_bytes(&mut label, 2, v.as_bytes());
        put_bytes(&mut series, 1, &label);
    }
    for _ in 0..8 {
        put_bytes(&mut series, 2, &sample);
    }
    let mut push = Vec::new();
    put_bytes(&mut push, 1, &series);
    let text = refused_within_budget(
        &[],
        "/push.v1.PusherService/Push",
        &[("content-type", "application/proto")],
        push,
        413,
    )
    .await;
    assert!(text.contains("resource_exhausted"), "{text}");
}

#[tokio::test]
async fn otlp_of_millions_of_empty_messages_is_refused_within_the_budget() {
    let body = empty_resource_profiles();
    assert!(body.len() < 100_000, "{}", body.len());
    refused_within_budget(
        &[],
        "/v1development/profiles",
        &[
            ("content-type", "application/x-protobuf"),
            ("content-encoding", "gzip"),
        ],
        body,
        413,
    )
    .await;
}

#[tokio::test]
async fn a_batch_body_of_empty_objects_is_refused_within_the_budget() {
    // 20M `{}` samples: 60 MB of JSON that decode into gigabytes.
    let mut body = br#"{"app_service":"x","samples":["#.to_vec();
    body.extend(b"{},".repeat(20_000_000));
    body.extend(br#"{}]}"#);
    refused_within_budget(
        &["--max-ingest-bytes", "80000000"],
        "/v1/profile/ingest",
        &[("content-type", "application/json")],
        body,
        413,
    )
    .await;
}

#[tokio::test]
async fn a_jfr_recording_of_empty_values_is_refused_within_the_budget() {
    // 9 KB gzipped, 8.4 MB raw: its constant arrays claim ~1G values of a class without
    // fields, which take no bytes (written by the model's `write_hostile_jfr`).
    let body = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hostile/empty-values.jfr.gz"
    ))
    .expect("fixture");
    let text = refused_within_budget(&[], "/ingest?name=hostile&format=jfr", &[], body, 413).await;
    assert!(text.contains("JFR values"), "{text}");
}

#[tokio::test]
async fn events_of_weight_zero_piled_on_one_sample_are_refused() {
    // 30,000 weightless events and one of weight 1 on a sample of value 1 (~1 MB): without the
    // rule they add up to the value and were all stored.
    let mut events = vec![serde_json::json!({"offset_ms": 1, "tid": 1, "weight": 0}); 30_000];
    events.push(serde_json::json!({"offset_ms": 2, "tid": 1, "weight": 1}));
    let body = serde_json::json!({"app_service": "x", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time": 1_700_000_000, "folded": "main;spin 1\n",
        "details": [{"sample": 0, "events": events}]});
    let text = refused_within_budget(
        &[],
        "/v1/profile/ingest",
        &[("content-type", "application/json")],
        body.to_string().into_bytes(),
        400,
    )
    .await;
    assert!(text.contains("event 1 has weight 0"), "{text}");
}
