//! What source lines and event times cost on ClickHouse, measured (`cargo test -p
//! embers-server --test integration clickhouse_detail_cost -- --ignored --nocapture`;
//! docs/time-inside-a-range.md has the numbers, from a debug build): one
//! hour of one process at 99 Hz (20 distinct stacks a second of 8 to 27 frames, 4 threads, as
//! `store::fine::measure` on SQLite) stored four ways — plain, with lines, with event times,
//! with both — and the compressed bytes each takes once merged (`system.columns`, every table
//! of the database), per sample, with the ingest rate.

use crate::common;

use std::time::Instant;

use common::clickhouse::{self as ch, Layout};
use embers_model::contract::detail::{SampleDetail, SourceLine, TimedEvent};
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};

const T0: i64 = 1_700_000_000;
const HZ: u64 = 99;
const STACKS: u64 = 20;

/// Stack `k`: 8 + k frames, each at a line of its own file.
fn stack(k: usize) -> (String, Vec<Option<SourceLine>>) {
    let depth = 8 + k;
    let names: Vec<String> = (0..depth)
        .map(|d| format!("pkg{}.fn_{k}_{d}", d % 5))
        .collect();
    let lines = (0..depth)
        .map(|d| {
            Some(SourceLine {
                file: format!("/src/project/pkg{}/file_{d}.go", d % 5),
                line: (10 + 7 * d + k) as u32,
            })
        })
        .collect();
    (format!("[t] worker;{}", names.join(";")), lines)
}

/// A minute of samples from `minute`, with lines and event times as asked.
fn minute(minute: i64, lines: bool, timed: bool) -> Batch {
    let mut samples = Vec::new();
    for s in 0..60 {
        let second = T0 + minute * 60 + s;
        let mut per_stack: Vec<Vec<TimedEvent>> = vec![Vec::new(); STACKS as usize];
        for i in 0..HZ {
            let h = (second as u64).wrapping_mul(31).wrapping_add(i * 7919) % (STACKS * STACKS);
            per_stack[(h as f64).sqrt() as usize].push(TimedEvent {
                offset_ms: (i * 1000 / HZ) as u16,
                tid: 4000 + (i % 4) as u32,
                weight: 10101,
            });
        }
        for (k, events) in per_stack.into_iter().enumerate() {
            if events.is_empty() {
                continue;
            }
            let (text, at) = stack(k);
            // The thread frame has no line.
            let at: Vec<Option<SourceLine>> = std::iter::once(None).chain(at).collect();
            let detail = SampleDetail {
                lines: if lines { at } else { Vec::new() },
                events: if timed { events.clone() } else { Vec::new() },
            };
            samples.push(Sample {
                time: second,
                stack: text,
                value: 10101 * events.len() as u64,
                detail: (!detail.is_empty()).then(|| Box::new(detail)),
            });
        }
    }
    let meta = BatchMeta {
        app_service: "app".into(),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags: Tags::new(),
    };
    Batch { meta, samples }
}

/// Runs `sql` on the single node; its answer.
async fn run(client: &reqwest::Client, sql: &str) -> String {
    let answer = client.post(ch::SINGLE).body(sql.to_owned()).send().await;
    let text = answer.expect("ClickHouse").text().await.expect("body");
    text.trim().to_owned()
}

/// Compressed bytes of every table of `db`, of its two detail columns, and the ingest seconds.
async fn stored(lines: bool, timed: bool, name: &str) -> Option<(u64, u64, u64, f64)> {
    let store = ch::store(Layout::Single, name)?;
    let Store::ClickHouse(c) = store.as_ref() else {
        unreachable!("a ClickHouse store")
    };
    let db = c.database().to_owned();
    let batches: Vec<Batch> = (0..60).map(|m| minute(m, lines, timed)).collect();
    let started = Instant::now();
    for b in &batches {
        store.insert(std::slice::from_ref(b)).expect("insert");
    }
    let took = started.elapsed().as_secs_f64();
    let client = reqwest::Client::new();
    for table in ["in_process", "stacks", "line_stacks", "functions_rollup"] {
        run(&client, &format!("OPTIMIZE TABLE {db}.{table} FINAL")).await;
    }
    let sum = |cond: &str| {
        format!(
            "SELECT sum(data_compressed_bytes) FROM system.columns WHERE database = '{db}'{cond}"
        )
    };
    let all: u64 = run(&client, &sum("")).await.parse().expect("bytes");
    let lines_col: u64 = run(&client, &sum(" AND name = 'line_stack_id'"))
        .await
        .parse()
        .expect("n");
    let events_col: u64 = run(&client, &sum(" AND name = 'events'"))
        .await
        .parse()
        .expect("n");
    ch::drop_database(&store);
    Some((all, lines_col, events_col, took))
}

#[tokio::test]
#[ignore = "a measurement: run it with --ignored --nocapture"]
async fn an_hour_at_99_hz_with_and_without_lines_and_times() {
    let samples = (3600 * HZ) as f64;
    let mut plain = 0;
    for (lines, timed, name) in [
        (false, false, "cost_plain"),
        (true, false, "cost_lines"),
        (false, true, "cost_times"),
        (true, true, "cost_both"),
    ] {
        let Some((all, line_col, events_col, took)) = stored(lines, timed, name).await else {
            return;
        };
        if name == "cost_plain" {
            plain = all;
        }
        println!(
            "{name}: {all} B in every table ({:.2} B/sample, {:+.2} over plain); line_stack_id \
             {line_col} B ({:.2} B/sample), events {events_col} B ({:.2} B/sample); ingest \
             {:.0} samples/s",
            all as f64 / samples,
            (all as f64 - plain as f64) / samples,
            line_col as f64 / samples,
            events_col as f64 / samples,
            samples / took
        );
    }
}
