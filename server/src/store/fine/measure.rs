//! The cost of event times on SQLite, measured (`cargo test -p embers-server --lib --release
//! store::fine::measure -- --ignored --nocapture`; docs/time-inside-a-range.md has the numbers):
//! one hour of one process at 99 Hz (20 distinct stacks a second, 4 threads), stored with and
//! without event times — file growth per sample and per hour, ingest time, and the heatmap of
//! the hour at 50 slots.

use std::time::Instant;

use embers_model::contract::detail::{SampleDetail, TimedEvent};
use embers_model::contract::fine::heatmap::parse_heatmap_body;

use crate::store::{Batch, BatchMeta, Sample, Store, Tags};

const T0: i64 = 1_700_000_000;
const HZ: u64 = 99;
const STACKS: u64 = 20;

/// A minute of samples from `minute`, with event times when `timed`.
fn minute(minute: i64, timed: bool) -> Batch {
    let mut samples = Vec::new();
    for s in 0..60 {
        let second = T0 + minute * 60 + s;
        let mut per_stack: Vec<Vec<TimedEvent>> = vec![Vec::new(); STACKS as usize];
        for i in 0..HZ {
            // A stack chosen by a cheap hash of the sample, skewed to the first few.
            let h = (second as u64).wrapping_mul(31).wrapping_add(i * 7919) % (STACKS * STACKS);
            let stack = (h as f64).sqrt() as usize;
            per_stack[stack].push(TimedEvent {
                offset_ms: (i * 1000 / HZ) as u16,
                tid: 4000 + (i % 4) as u32,
                weight: 10101,
            });
        }
        for (k, events) in per_stack.into_iter().enumerate() {
            if events.is_empty() {
                continue;
            }
            samples.push(Sample {
                time: second,
                stack: format!("[t] worker;main;run;handler_{k};leaf_{k}"),
                value: 10101 * events.len() as u64,
                detail: timed.then(|| {
                    Box::new(SampleDetail {
                        lines: vec![],
                        events,
                    })
                }),
            });
        }
    }
    Batch {
        meta: BatchMeta {
            app_service: "app".into(),
            language: "eBPF".into(),
            event_type: "on-cpu".into(),
            unit: "microseconds".into(),
            tags: Tags::new(),
        },
        samples,
    }
}

fn file_bytes(store: &Store) -> u64 {
    store
        .sqlite()
        .expect("sqlite")
        .with_reader(|c| {
            let pages: i64 = c.query_row("PRAGMA profile.page_count", [], |r| r.get(0))?;
            let size: i64 = c.query_row("PRAGMA profile.page_size", [], |r| r.get(0))?;
            Ok::<_, crate::store::StoreError>((pages * size) as u64)
        })
        .expect("size")
}

/// (bytes, ingest seconds, rows) of an hour stored.
fn hour(timed: bool) -> (tempfile::TempDir, Store, u64, f64, u64) {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("p.db")).expect("open");
    let batches: Vec<Batch> = (0..60).map(|m| minute(m, timed)).collect();
    let rows: u64 = batches.iter().map(|b| b.samples.len() as u64).sum();
    let started = Instant::now();
    for b in &batches {
        store.insert(std::slice::from_ref(b)).expect("insert");
    }
    let took = started.elapsed().as_secs_f64();
    let bytes = file_bytes(&store);
    (dir, store, bytes, took, rows)
}

#[test]
#[ignore = "a measurement: run it with --ignored --nocapture (release)"]
fn an_hour_at_99_hz_with_and_without_event_times() {
    let samples = 3600 * HZ;
    let (_a, _plain, plain_bytes, plain_s, rows) = hour(false);
    let (_b, timed, timed_bytes, timed_s, _) = hour(true);
    let fine = timed_bytes.saturating_sub(plain_bytes);
    println!(
        "an hour at {HZ} Hz: {samples} samples in {rows} rows; file {plain_bytes} B without \
         event times, {timed_bytes} B with: +{fine} B/h, {:.2} B per sample",
        fine as f64 / samples as f64
    );
    println!(
        "ingest: {:.0} samples/s without, {:.0} with ({:+.1}%)",
        samples as f64 / plain_s,
        samples as f64 / timed_s,
        (plain_s / timed_s - 1.0) * 100.0
    );
    let body = format!(
        r#"{{"app_service":"app","profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":{T0},"time_end":{}}}"#,
        T0 + 3599
    );
    let q = parse_heatmap_body(body.as_bytes()).expect("body");
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let map = timed.heatmap(&q).expect("heatmap");
        best = best.min(started.elapsed().as_secs_f64());
        let n: u64 = map.values.iter().flatten().sum();
        assert_eq!(n, samples);
    }
    println!(
        "heatmap of 1 h x 50 slots: {:.1} ms (best of 5)",
        best * 1000.0
    );
}
