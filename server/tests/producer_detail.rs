//! What other producers know below a sample, end to end (issues 36 and 37): real output of
//! `perf script` with `srcline` and per-sample times, of the JDK's Flight Recorder and of the
//! official OTLP client, imported or sent, then `function_lines` names each workload's hot loop
//! as its function's hottest line, and the heatmap, the samples and millisecond windows answer
//! at millisecond resolution with times that follow the recording's own clock.

mod jfr;
mod otlp;
mod perf;

use crate::common::TestServer;
use serde_json::{json, Value};

/// ProfileTracing's fields for `app` and `event` over `[start, end]` seconds, with `more`.
pub fn body(app: &str, language: &str, event: &str, start: i64, end: i64, more: Value) -> Value {
    let mut body = json!({"app_service": app, "profile_language_type": language,
        "profile_event_type": event, "time_start": start, "time_end": end});
    if let (Some(b), Some(m)) = (body.as_object_mut(), more.as_object()) {
        b.extend(m.clone());
    }
    body
}

/// `function`'s hottest line as `(file, line)` (`function_lines`, hottest first).
pub async fn hottest_line(server: &TestServer, query: &Value, function: &str) -> (String, u64) {
    let mut query = query.clone();
    query["function"] = json!(function);
    let (status, envelope) = server.post("/v1/profile/function_lines", &query).await;
    assert_eq!(status, 200, "{envelope}");
    let result = &envelope["result"];
    assert_eq!(result["lines"], "some", "{result}");
    let top = &result["values"][0];
    let file = top[0].as_str().expect("file").to_owned();
    (file, top[1].as_u64().expect("line"))
}

/// The samples answer's rows as `(time_ms, thread, stack frames, value)`, checked to be at
/// millisecond resolution and in time order.
pub async fn samples(server: &TestServer, query: &Value) -> Vec<(i64, u64, Vec<String>, u64)> {
    let (status, envelope) = server.post("/v1/profile/samples", query).await;
    assert_eq!(status, 200, "{envelope}");
    let answer = &envelope["result"];
    assert_eq!(answer["resolution"], "ms", "{answer}");
    let stacks = answer["stacks"].as_array().expect("stacks");
    let mut rows = Vec::new();
    for row in answer["values"].as_array().expect("values") {
        let stack = &stacks[row[2].as_u64().expect("stack") as usize];
        let frames = stack
            .as_array()
            .expect("frames")
            .iter()
            .map(|f| f.as_str().unwrap_or_default().to_owned())
            .collect();
        let thread = row[1].as_u64().expect("a thread");
        rows.push((
            row[0].as_i64().expect("time_ms"),
            thread,
            frames,
            row[3].as_u64().expect("value"),
        ));
    }
    assert!(rows.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
    rows
}

/// The heatmap's counts per second and slot, checked to be at millisecond resolution.
pub async fn heatmap(server: &TestServer, query: &Value) -> Vec<Vec<u64>> {
    let (status, envelope) = server.post("/v1/profile/heatmap", query).await;
    assert_eq!(status, 200, "{envelope}");
    let map = &envelope["result"];
    assert_eq!(map["resolution"], "ms", "{map}");
    assert_eq!(map["value_kind"], "samples", "{map}");
    map["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("slots")
                .iter()
                .filter_map(Value::as_u64)
                .collect()
        })
        .collect()
}

/// The expected heatmap of events at `times` (Unix ms) from second `start`, `slots` a second.
pub fn expected_heatmap(times: &[i64], start: i64, seconds: usize, slots: usize) -> Vec<Vec<u64>> {
    let mut map = vec![vec![0u64; slots]; seconds];
    for &t in times {
        let second = usize::try_from(t.div_euclid(1000) - start).expect("in range");
        let slot = usize::try_from(t.rem_euclid(1000)).expect("ms") * slots / 1000;
        map[second][slot] += 1;
    }
    map
}

/// The line of `file` (under `tests/data`) that holds `marker`, counted from 1.
pub fn line_of(file: &str, marker: &str) -> u64 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("source");
    let at = text
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker");
    at as u64 + 1
}
