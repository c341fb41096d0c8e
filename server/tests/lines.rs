//! Source lines end to end (issue 36): a real Go program's CPU profile (`runtime/pprof`,
//! `tests/data/go/hot`) imported, then `POST /v1/profile/function_lines` names its hot loop's
//! line as `hotLoop`'s hottest; the pprof export keeps the lines (`go tool pprof -list` shows
//! the same line weights on the export as on the original); the endpoint's rules (400 without
//! a function, an empty table that says why); and ProfileTracing answers the same bytes with or
//! without lines.

use crate::common;
use crate::formats_go::profile_time;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::golang::{cpu_profile, go_available};
use common::process::run_ok;
use common::{TempDb, TestServer};
use serde_json::{json, Value};

/// The line of `hot/main.go` holding the hot loop's body.
fn hot_loop_line() -> u64 {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/go/hot/main.go");
    let text = std::fs::read_to_string(source).expect("source");
    let at = text
        .lines()
        .position(|l| l.contains("x = x*6364136223846793005"))
        .expect("the loop body");
    at as u64 + 1
}

/// A database with the Go program's CPU profile imported as `hot`, and the profile's file.
fn imported(db: &TempDb) -> (std::path::PathBuf, i64) {
    let file = cpu_profile(db.dir.path());
    let t = profile_time(&std::fs::read(&file).expect("profile"));
    run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db.path().as_os_str(),
        "--app-service".as_ref(),
        "hot".as_ref(),
        "--language".as_ref(),
        "Golang".as_ref(),
        file.as_os_str(),
    ]);
    (file, t)
}

fn lines_body(function: &str, t: i64) -> Value {
    json!({"app_service": "hot", "profile_language_type": "Golang", "profile_event_type": "cpu",
           "time_start": t - 60, "time_end": t + 60, "function": function})
}

#[tokio::test]
async fn the_go_hot_loop_is_hot_loops_hottest_line() {
    let db = TempDb::new();
    let (_, t) = imported(&db);
    let server = TestServer::start(&db.path()).await;
    let (status, envelope) = server
        .post("/v1/profile/function_lines", &lines_body("main.hotLoop", t))
        .await;
    assert_eq!(status, 200, "{envelope}");
    let result = &envelope["result"];
    assert_eq!(result["lines"], "some", "{result}");
    assert_eq!(
        result["columns"],
        json!(["file", "line", "self_value", "total_value"])
    );
    let top = &result["values"][0];
    assert!(
        top[0].as_str().is_some_and(|f| f.ends_with("/hot/main.go")),
        "{top}"
    );
    assert_eq!(top[1].as_u64(), Some(hot_loop_line()), "{result}");
    let hottest = top[3].as_u64().expect("total");
    let whole = result["function_total_value"].as_u64().expect("function");
    assert!(
        hottest * 2 > whole,
        "the loop body is most of hotLoop: {result}"
    );
    // main.main's lines: the calls, hotLoop's the hottest.
    let (_, main) = server
        .post("/v1/profile/function_lines", &lines_body("main.main", t))
        .await;
    assert!(main["result"]["values"]
        .as_array()
        .is_some_and(|v| !v.is_empty()));
    server.stop().await;
}

#[tokio::test]
async fn function_lines_refuses_no_function_and_explains_no_lines() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server
        .ingest(
            json!({"app_service": "hot", "profile_language_type": "Golang",
            "profile_event_type": "cpu", "profile_value_unit": "samples", "time": common::T0,
            "folded": "main;work 5\n"}),
        )
        .await;
    let mut body = lines_body("main", common::T0);
    body.as_object_mut().expect("object").remove("function");
    let (status, envelope) = server.post("/v1/profile/function_lines", &body).await;
    assert_eq!(status, 400, "{envelope}");
    assert!(common::description(&envelope).contains("function is required"));
    let (status, envelope) = server
        .post(
            "/v1/profile/function_lines",
            &lines_body("work", common::T0),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    let r = &envelope["result"];
    assert_eq!(
        (r["lines"].as_str(), r["reason"].as_str()),
        (Some("none"), Some("no_line_info"))
    );
    assert_eq!(r["values"], json!([]));
    assert_eq!(r["function_self_value"], 5);
    let (_, envelope) = server
        .post(
            "/v1/profile/function_lines",
            &lines_body("elsewhere", common::T0),
        )
        .await;
    assert_eq!(envelope["result"]["reason"], "no_samples");
    server.stop().await;
}

#[tokio::test]
async fn profile_tracing_answers_the_same_bytes_with_or_without_lines() {
    let folded = "main;work;spin 7\nmain;work 3\nmain;idle 2\n";
    let details = json!([
        {"sample": 0, "lines": [{"file": "m.c", "line": 3}, {"file": "m.c", "line": 9}, null]},
        {"sample": 1, "lines": [{"file": "m.c", "line": 3}, {"file": "m.c", "line": 11}]},
    ]);
    let mut answers = Vec::new();
    for with in [false, true] {
        let db = TempDb::new();
        let server = TestServer::start(&db.path()).await;
        let mut batch = json!({"app_service": "c", "profile_language_type": "eBPF",
            "profile_event_type": "on-cpu", "time": common::T0, "folded": folded});
        if with {
            batch["details"] = details.clone();
        }
        server.ingest(batch).await;
        let mut both = Vec::new();
        for shape in ["a", "b"] {
            let (s, text) = server
                .post_raw(
                    "/v1/profile/ProfileTracing",
                    "application/json",
                    json!({"app_service": "c", "profile_language_type": "eBPF",
                        "profile_event_type": "on-cpu", "time_start": common::T0,
                        "time_end": common::T0 + 1, "result_shape": shape})
                    .to_string()
                    .into_bytes(),
                )
                .await;
            assert_eq!(s, 200, "{text}");
            both.push(text);
        }
        if with {
            let (_, lines) = server
                .post(
                    "/v1/profile/function_lines",
                    &json!({"app_service": "c", "profile_language_type": "eBPF",
                        "profile_event_type": "on-cpu", "time_start": common::T0,
                        "time_end": common::T0 + 1, "function": "work"}),
                )
                .await;
            assert_eq!(
                lines["result"]["values"],
                json!([["m.c", 9, 0, 7], ["m.c", 11, 3, 3]]),
                "{lines}"
            );
        }
        answers.push(both);
        server.stop().await;
    }
    assert_eq!(answers[0], answers[1]);
}

/// `line → (flat, cum)` of `function` in `go tool pprof -list` output, in the unit it prints.
fn list_weights(
    file: &Path,
    function: &str,
    sample_index: Option<&str>,
) -> BTreeMap<u64, (String, String)> {
    let mut cmd = Command::new("go");
    cmd.args(["tool", "pprof", &format!("-list=^{function}$")]);
    if let Some(index) = sample_index {
        cmd.arg(format!("-sample_index={index}"));
    }
    let out = cmd
        .arg(file)
        .env("GOCACHE", std::env::temp_dir().join("embers-go-cache"))
        .output()
        .expect("go tool pprof");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let line = cols.get(2)?.strip_suffix(':')?.parse().ok()?;
            (cols[0] != "." || cols[1] != ".")
                .then(|| (line, (cols[0].to_owned(), cols[1].to_owned())))
        })
        .collect()
}

#[tokio::test]
async fn the_pprof_export_keeps_the_lines_go_tool_pprof_lists() {
    if !go_available() {
        return;
    }
    let db = TempDb::new();
    let (file, t) = imported(&db);
    let server = TestServer::start(&db.path()).await;
    let response = server
        .client
        .post(format!("{}/v1/profile/pprof", server.base))
        .json(
            &json!({"app_service": "hot", "profile_language_type": "Golang",
            "profile_event_type": "cpu", "time_start": t - 60, "time_end": t + 60}),
        )
        .send()
        .await
        .expect("pprof");
    assert_eq!(response.status().as_u16(), 200);
    let export = db.dir.path().join("export.pb.gz");
    std::fs::write(&export, response.bytes().await.expect("bytes")).expect("write");
    for function in ["main.hotLoop", "main.warmLoop", "main.main"] {
        let original = list_weights(&file, function, Some("samples"));
        let ours = list_weights(&export, function, None);
        assert!(!original.is_empty(), "{function} has lines in the original");
        assert_eq!(ours, original, "{function}");
    }
    server.stop().await;
}

#[tokio::test]
async fn import_to_a_service_carries_the_lines() {
    let db = TempDb::new();
    let file = cpu_profile(db.dir.path());
    let t = profile_time(&std::fs::read(&file).expect("profile"));
    let server = TestServer::start(&db.path()).await;
    let base = server.base.clone();
    // The import blocks: off the runtime that serves it.
    tokio::task::spawn_blocking(move || {
        run_ok([
            "import".as_ref(),
            "--to".as_ref(),
            base.as_ref(),
            "--app-service".as_ref(),
            "hot".as_ref(),
            "--language".as_ref(),
            "Golang".as_ref(),
            file.as_os_str(),
        ])
    })
    .await
    .expect("import");
    let (status, envelope) = server
        .post("/v1/profile/function_lines", &lines_body("main.hotLoop", t))
        .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(
        envelope["result"]["values"][0][1].as_u64(),
        Some(hot_loop_line()),
        "{envelope}"
    );
    server.stop().await;
}
