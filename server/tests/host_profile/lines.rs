//! Source lines from the collector, end to end (issue 36): `agent/tests/workloads/lines.c`,
//! built with `-g` but without frame pointers, profiled live by `serve --profile-host`, shows
//! its hot loop's line as `hot_loop`'s hottest line in `POST /v1/profile/function_lines`, and
//! the function inlined into it (`step`) as a frame of its own, at its own line.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use clap::Parser;
use embers_server::host_profile::{self, HostProfileArgs};
use embers_server::store::Store;
use serde_json::{json, Value};

use super::common::{TempDb, TestServer};
use super::{allowed, graph_of, now, run_to_end, SERIAL};

/// `serve`'s host profiling options, as the command line gives them.
#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    host: HostProfileArgs,
}

/// The line of `lines.c` whose text ends with `marker`.
fn line_of(source: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(source).expect("lines.c");
    let at = text.lines().position(|l| l.trim_end().ends_with(marker));
    at.expect("marker") as u64 + 1
}

/// `function`'s lines in `range`, hottest first: (file, line, self, total).
async fn lines_of(server: &TestServer, function: &str, range: (i64, i64)) -> Vec<Value> {
    let body = json!({"app_service": "embers-lines", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "tag_filter": "", "time_start": range.0,
        "time_end": range.1, "function": function});
    let (status, answer) = server.post("/v1/profile/function_lines", &body).await;
    assert_eq!(status, 200, "{answer}");
    let result = &answer["result"];
    assert_eq!(
        result["columns"],
        json!(["file", "line", "self_value", "total_value"])
    );
    result["values"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hot_loop_s_line_is_its_function_s_hottest_line() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/workloads/lines.c");
    let bin = dir.path().join("embers-lines");
    let built = Command::new("cc")
        .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&source)
        .status()
        .expect("cc");
    assert!(built.success(), "building lines.c failed");
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let args = Serve::parse_from(["serve", "--profile-host", "--profile-host-interval", "1s"]).host;
    let start = now() - 1;
    let profiler = host_profile::start(&args, store.clone(), Default::default())
        .expect("starts")
        .expect("asked for");
    let server = TestServer::start_over(store, dir.path().join("no-viewer"), |_| {}).await;
    let child = Command::new(&bin)
        .arg("2.5")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start");
    run_to_end(child, profiler).await;
    let range = (start, now() + 1);
    let graph = graph_of(&server, "embers-lines", "on-cpu", range).await;
    assert!(
        graph.contains(";hot_loop;step "),
        "step, inlined into hot_loop, is a frame of its own:\n{graph}"
    );
    let hot = lines_of(&server, "hot_loop", range).await;
    let first = hot
        .first()
        .unwrap_or_else(|| panic!("hot_loop has no lines"));
    assert!(
        first[0].as_str().is_some_and(|f| f.ends_with("lines.c")),
        "{hot:?}"
    );
    assert_eq!(
        first[1],
        line_of(&source, "/* HOT */"),
        "hottest line of hot_loop: {hot:?}"
    );
    let self_total: u64 = hot.iter().filter_map(|r| r[2].as_u64()).sum();
    let hottest = first[2].as_u64().unwrap_or(0);
    assert!(
        hottest as f64 >= 0.6 * self_total as f64,
        "the hot line has {hottest} of hot_loop's {self_total} µs of self time: {hot:?}"
    );
    let step = lines_of(&server, "step", range).await;
    assert_eq!(
        step.first().map(|r| r[1].clone()),
        Some(json!(line_of(&source, "/* INLINED */"))),
        "step's hottest line: {step:?}"
    );
    server.stop().await;
}
