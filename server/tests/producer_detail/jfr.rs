//! A real JFR recording (OpenJDK 17 recording `model/tests/data/jfr/Workload.java`): `import`
//! keeps each frame's line number and each execution sample's time and thread, held to what
//! the JDK's own reader (`jfr print`, written down by `times.py`) says.

use serde_json::json;

use super::{body, heatmap, hottest_line, samples};
use crate::common::process::run_ok;
use crate::common::{TempDb, TestServer};

fn data(name: &str) -> std::path::PathBuf {
    embers_model::testkit::data_dir().join("jfr").join(name)
}

/// The line of `Workload.java` holding `marker`, counted from 1.
fn workload_line(marker: &str) -> u64 {
    let text = std::fs::read_to_string(data("Workload.java")).expect("source");
    text.lines()
        .position(|l| l.contains(marker))
        .expect("marker") as u64
        + 1
}

/// The CPU samples the JDK's reader found: (Unix ms, OS thread id), in time order.
fn jdk_samples() -> Vec<(i64, u64)> {
    let text = std::fs::read_to_string(data("workload.cpu-times.tsv")).expect("times");
    let mut lines = text.lines();
    let first: i64 = lines.next().and_then(|l| l.parse().ok()).expect("first ms");
    lines
        .filter_map(|l| {
            let (ms, tid) = l.split_once('\t')?;
            Some((first + ms.parse::<i64>().ok()?, tid.parse().ok()?))
        })
        .collect()
}

fn query(start: i64, end: i64, more: serde_json::Value) -> serde_json::Value {
    body("workload", "Java", "cpu", start, end, more)
}

/// A boundary near `t` that no sample is within a millisecond of (the JDK and Embers may
/// round a tick to nanoseconds a nanosecond apart).
fn clear_of(times: &[i64], mut t: i64) -> i64 {
    while times.iter().any(|&s| (s - t).abs() <= 1) {
        t += 3;
    }
    t
}

#[tokio::test]
async fn jfr_lines_name_the_hot_loop_and_samples_keep_the_recorder_s_clock() {
    let db = TempDb::new();
    let out = run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db.path().as_os_str(),
        "--app-service".as_ref(),
        "workload".as_ref(),
        data("workload.jfr.gz").as_os_str(),
    ]);
    assert!(out.contains("workload"), "{out}");
    let server = TestServer::start(&db.path()).await;
    let expected = jdk_samples();
    let times: Vec<i64> = expected.iter().map(|e| e.0).collect();
    let (start, end) = (
        times[0].div_euclid(1000),
        times[times.len() - 1].div_euclid(1000),
    );
    let whole = query(start, end, json!({}));

    let (file, line) = hottest_line(&server, &whole, "Workload.spin").await;
    let spin_loop = workload_line("for (long i = 0; i < n; i++) x =");
    assert_eq!((file.as_str(), line), ("Workload", spin_loop));

    let rows = samples(&server, &whole).await;
    assert_eq!(rows.len(), expected.len(), "one row per execution sample");
    for ((time, thread, frames, value), (ms, tid)) in rows.iter().zip(&expected) {
        assert!((time - ms).abs() <= 1, "{time} ms, the JDK says {ms}");
        assert_eq!((*thread, *value), (*tid, 1), "{frames:?}");
    }

    let map = heatmap(&server, &query(start, end, json!({"slots_per_second": 10}))).await;
    let counted: u64 = map.iter().flatten().sum();
    assert_eq!(counted, expected.len() as u64);

    let (from, to) = (
        clear_of(&times, times[0] + 700),
        clear_of(&times, times[0] + 1700),
    );
    let (status, envelope) = server
        .query(&query(
            start,
            end,
            json!({"time_start_ms": from, "time_end_ms": to}),
        ))
        .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["DESCRIPTION"], "", "every sample had its time");
    let inside = times.iter().filter(|&&t| (from..to).contains(&t)).count() as u64;
    let root = embers_model::decode_response(200, &envelope.to_string())
        .expect("tree")
        .profile
        .root_total();
    assert!(inside > 50, "a second of a 4-second run: {inside}");
    assert_eq!(root, inside);
    server.stop().await;
}
