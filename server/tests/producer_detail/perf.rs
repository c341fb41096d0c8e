//! `perf script -F comm,pid,tid,time,period,event,ip,sym,srcline` of a C program built with
//! `-g` (`tests/data/perf/hot-lines.c`, recorded with `perf record -k CLOCK_REALTIME -F 99 -g`
//! on this kind of machine): `import` keeps each frame's line and each sample's time.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{body, expected_heatmap, heatmap, hottest_line, line_of, samples};
use crate::common::process::run_ok;
use crate::common::{TempDb, TestServer};

fn capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/hot-lines.perf.gz")
}

/// Each sample of the capture as perf printed it: (Unix ms, leaf function).
fn perf_samples() -> Vec<(i64, String)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(capture()).expect("capture"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(time) = line
            .split_whitespace()
            .find(|t| t.ends_with(':') && t.contains('.'))
        else {
            continue;
        };
        let (secs, micros) = time
            .trim_end_matches(':')
            .split_once('.')
            .expect("secs.micros");
        let ms =
            secs.parse::<i64>().expect("secs") * 1000 + micros[..3].parse::<i64>().expect("ms");
        let leaf = lines
            .peek()
            .and_then(|f| f.split_whitespace().nth(1))
            .unwrap_or("");
        out.push((ms, leaf.to_owned()));
    }
    out
}

/// A database with the capture imported (its own Unix times: no `--time`).
fn imported(db: &TempDb) {
    let out = run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db.path().as_os_str(),
        capture().as_os_str(),
    ]);
    assert!(out.contains("imported 139 samples of hot-lines"), "{out}");
}

fn query(start: i64, end: i64, more: serde_json::Value) -> serde_json::Value {
    body("hot-lines", "eBPF", "on-cpu", start, end, more)
}

#[tokio::test]
async fn perf_srclines_name_the_hot_loop_and_samples_keep_perf_s_clock() {
    let db = TempDb::new();
    imported(&db);
    let server = TestServer::start(&db.path()).await;
    let expected = perf_samples();
    let (first, last) = (expected[0].0, expected[expected.len() - 1].0);
    let (start, end) = (first.div_euclid(1000), last.div_euclid(1000));

    let whole = query(start, end, json!({}));
    let (file, line) = hottest_line(&server, &whole, "hot").await;
    assert_eq!(
        (file.as_str(), line),
        ("hot-lines.c", line_of("perf/hot-lines.c", "hot loop body"))
    );
    let (_, warm) = hottest_line(&server, &whole, "warm").await;
    assert_eq!(warm, line_of("perf/hot-lines.c", "warm loop body"));

    // Every sample at perf's own millisecond, on its thread, with its leaf.
    let rows = samples(&server, &whole).await;
    let times: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let perf_times: Vec<i64> = expected.iter().map(|e| e.0).collect();
    assert_eq!(times, perf_times, "the service's times are perf's");
    for ((_, thread, frames, value), (_, leaf)) in rows.iter().zip(&expected) {
        assert_eq!(*thread, 2978, "the program's one thread");
        assert_eq!(frames.last(), Some(leaf), "{frames:?}");
        assert_eq!(*value, 10_102, "10101010 ns of cpu-clock in µs");
    }

    let map = heatmap(&server, &query(start, end, json!({"slots_per_second": 20}))).await;
    let seconds = usize::try_from(end - start + 1).expect("seconds");
    assert_eq!(map, expected_heatmap(&perf_times, start, seconds, 20));

    // A 300 ms window holds exactly the samples perf timed in it.
    let (from, to) = (first + 200, first + 500);
    let window = query(
        start,
        end,
        json!({"time_start_ms": from, "time_end_ms": to}),
    );
    let (status, envelope) = server.query(&window).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["DESCRIPTION"], "", "every sample had its time");
    let inside = perf_times
        .iter()
        .filter(|&&t| (from..to).contains(&t))
        .count() as u64;
    let root = embers_model::decode_response(200, &envelope.to_string())
        .expect("tree")
        .profile
        .root_total();
    assert!(inside > 0, "the window holds samples");
    assert_eq!(root, inside * 10_102, "{envelope}");
    server.stop().await;
}
