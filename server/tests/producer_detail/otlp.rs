//! OTLP built by the official Python package (`tests/otlp_py/otlp_detail.py`) and sent over
//! real HTTP: each `Line` of a location (its function's file and line number) is kept per
//! frame, each `timestamps_unix_nano` as the sample's millisecond and `thread.id`.

use serde_json::{json, Value};

use super::{body, heatmap, hottest_line, samples};
use crate::common::otlp::{python, script, OtlpServer};

#[tokio::test]
async fn otlp_lines_name_the_hot_loop_and_timestamps_keep_their_millisecond() {
    let Some(python) = python() else {
        return;
    };
    let server = OtlpServer::open().await;
    let out = script(&python, "otlp_detail.py", &[&server.http.base]).await;
    assert_eq!(out["answer"]["status"], 200, "{out}");
    let t0 = out["time_start"].as_i64().expect("time_start");
    let query = |more: Value| body("lines-demo", "eBPF", "on-cpu", t0, t0 + 2, more);

    let (file, line) = hottest_line(&server.http, &query(json!({})), "hot_loop").await;
    assert_eq!(json!([file, line]), out["hot"]);
    // A frame whose function names no file has no line: none is made up.
    let (status, envelope) = server
        .http
        .post(
            "/v1/profile/function_lines",
            &query(json!({"function": "idle"})),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["result"]["reason"], "no_line_info", "{envelope}");

    let expected = out["samples"].as_array().expect("samples");
    let rows = samples(&server.http, &query(json!({}))).await;
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for ((time, thread, frames, value), want) in rows.iter().zip(expected) {
        assert_eq!(Some(*time), want[0].as_i64());
        assert_eq!(Some(*thread), want[1].as_u64());
        assert_eq!(frames.last().map(String::as_str), want[2].as_str());
        assert_eq!(*value, 50_000, "one 20 Hz sample, in µs");
    }
    let times: Vec<i64> = expected.iter().filter_map(|e| e[0].as_i64()).collect();
    let map = heatmap(&server.http, &query(json!({"slots_per_second": 50}))).await;
    assert_eq!(map, super::expected_heatmap(&times, t0, 3, 50));

    // [t0+1 s + 40 ms, t0+1 s + 300 ms): two samples of line 13 and two of line 14.
    let (from, to) = (t0 * 1000 + 1040, t0 * 1000 + 1300);
    let inside = times.iter().filter(|&&t| (from..to).contains(&t)).count() as u64;
    assert_eq!(inside, 4);
    let window = query(json!({"time_start_ms": from, "time_end_ms": to}));
    let (status, envelope) = server.http.query(&window).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["DESCRIPTION"], "", "every sample had its time");
    let tree = embers_model::decode_response(200, &envelope.to_string()).expect("tree");
    assert_eq!(tree.profile.root_total(), inside * 50_000);
    server.stop().await;
}
