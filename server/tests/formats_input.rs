//! `perf script` captures of real workloads (`perf record -g -- <command>` and `perf record -a
//! -g`, committed in `tests/data/perf/`, and a fresh capture when `perf` may record here) and
//! bad input of every kind through the senders' endpoints: a 400 (413 past the size limit)
//! that names the problem, and nothing written.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::process::{run_fails, run_ok};
use common::{folded_of, TempDb, TestServer, T0};
use embers_model::wire::protobuf::{put_bytes, put_packed, put_uint};
use serde_json::{json, Value};

fn data(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/perf")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).expect("write");
    e.finish().expect("gzip")
}

async fn services(server: &TestServer) -> Vec<String> {
    let (status, body) = server
        .post(
            "/v1/profile/services",
            &json!({"time_start": T0 - 10, "time_end": T0 + 10}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["values"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r[0].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn on_cpu(app: &str) -> Value {
    json!({"app_service": app, "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": T0 - 10, "time_end": T0 + 10})
}

#[tokio::test]
async fn perf_script_of_a_real_workload_imports_per_process_with_deepflow_frames() {
    let db = TempDb::new();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/workload-g.txt");
    let printed = run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db.path().as_os_str(),
        "--time".as_ref(),
        T0.to_string().as_ref(),
        file.as_os_str(),
    ]);
    // 165 perf samples of six processes (equal stacks of a process merged).
    assert!(printed.ends_with("in 6 batches\n"), "{printed}");
    let server = TestServer::start(&db.path()).await;
    let apps = services(&server).await;
    for app in ["gzip", "head", "python3"] {
        assert!(apps.contains(&app.to_owned()), "{app} in {apps:?}");
    }
    let gzip_tree = server.folded(&on_cpu("gzip")).await;
    assert!(gzip_tree.starts_with("gzip;[t] gzip;"), "{gzip_tree}");
    assert!(
        gzip_tree.contains("[/usr/bin/gzip]"),
        "unsymbolized frames keep their file"
    );
    let head = server.folded(&on_cpu("head")).await;
    assert!(head.contains(";[k] "), "kernel frames: {head}");
    // 3344481 ns a sample: 3345 µs each, 27 samples of python3.
    let (_, envelope) = server.query(&on_cpu("python3")).await;
    let profile = embers_model::decode_response(200, &envelope.to_string())
        .expect("tree")
        .profile;
    assert_eq!(profile.root_total(), 27 * 3345);

    // The same text posted to the ingest API, whole host: `[p] process` layers under Total.
    let url = format!("/ingest?name=Total&format=perf&from={T0}");
    let (status, body) = server
        .post_raw(&url, "text/plain", data("system-a-g.txt"))
        .await;
    assert_eq!(status, 200, "{body}");
    let total = server.folded(&on_cpu("Total")).await;
    for layer in [
        "Total;[p] rustc;[t] rustc;",
        "Total;[p] gzip;[t] gzip;",
        "[l] read",
    ] {
        assert!(total.contains(layer), "{layer}");
    }
    server.stop().await;
}

/// A fresh capture where `perf record` works (root, as on these machines); else nothing to do.
/// `perf script | gzip` imports as the text does (told apart once decompressed).
#[test]
fn a_gzipped_perf_script_imports_as_perf() {
    let db = TempDb::new();
    let text = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/workload-g.txt");
    let file = db.dir.path().join("workload.txt.gz");
    std::fs::write(&file, gzip(&std::fs::read(text).expect("read"))).expect("write");
    let db_path = db.path();
    let args = [
        "import".as_ref(),
        "--db".as_ref(),
        db_path.as_os_str(),
        file.as_os_str(),
    ];
    let printed = run_ok(args);
    assert!(printed.ends_with("in 6 batches\n"), "{printed}");
}

#[tokio::test]
async fn a_fresh_perf_capture_imports_too() {
    let dir = TempDb::new();
    let data = dir.dir.path().join("perf.data");
    let recorded = std::process::Command::new("perf")
        .args(["record", "-F", "499", "-g", "-o"])
        .arg(&data)
        .args([
            "--",
            "sh",
            "-c",
            "head -c 8000000 /dev/urandom | gzip -1 > /dev/null",
        ])
        .output();
    if !recorded.is_ok_and(|o| o.status.success()) {
        eprintln!("perf record is not allowed here: the committed captures stand in");
        return;
    }
    let script = std::process::Command::new("perf")
        .args(["script", "-i"])
        .arg(&data)
        .output()
        .expect("perf script");
    let text = dir.dir.path().join("perf.txt");
    std::fs::write(&text, &script.stdout).expect("write");
    let printed = run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        dir.path().as_os_str(),
        "--format".as_ref(),
        "perf".as_ref(),
        text.as_os_str(),
    ]);
    assert!(printed.contains("imported"), "{printed}");
    let server = TestServer::start(&dir.path()).await;
    let now = embers_server::formats::now_seconds();
    let (status, body) = server
        .post(
            "/v1/profile/services",
            &json!({"time_start": now - 60, "time_end": now + 60}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.to_string().contains("\"gzip\""),
        "the workload's gzip: {body}"
    );
    server.stop().await;
}

/// A pprof profile of one sample type and one sample `main;work` with `value`, with
/// `string_table` replaced when `strings` is given.
fn pprof(value: i64, strings: Option<&[&str]>) -> Vec<u8> {
    let (mut out, mut m, mut s, mut scratch) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    put_uint(&mut m, 1, 1);
    put_uint(&mut m, 2, 2);
    put_bytes(&mut out, 1, &m);
    m.clear();
    put_packed(&mut m, 1, &[2, 1], &mut scratch);
    put_packed(&mut m, 2, &[value as u64], &mut scratch);
    put_bytes(&mut out, 2, &m);
    for (id, name) in [(1u64, 3u64), (2, 4)] {
        m.clear();
        put_uint(&mut m, 1, id);
        s.clear();
        put_uint(&mut s, 1, id);
        put_bytes(&mut m, 4, &s);
        put_bytes(&mut out, 4, &m);
        m.clear();
        put_uint(&mut m, 1, id);
        put_uint(&mut m, 2, name);
        put_bytes(&mut out, 5, &m);
    }
    for text in strings.unwrap_or(&["", "samples", "count", "main", "work"]) {
        put_bytes(&mut out, 6, text.as_bytes());
    }
    out
}

#[tokio::test]
async fn bad_input_is_a_400_naming_the_problem_and_writes_nothing() {
    let db = TempDb::new();
    let server = TestServer::start_with(&db.path(), |s| s.limits.ingest = 1 << 20).await;
    let url = format!("/ingest?name=bad&format=pprof&spyName=gospy&from={T0}");
    let bomb = gzip(&vec![0u8; 8 << 20]);
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (bomb, 413, "the gzip data decompresses to more than 1048576 bytes (--max-ingest-bytes)"),
        (pprof(5, Some(&["", "samples", "count", "main"])), 400, "function 2 name refers to string 4, but string_table has 4 entries"),
        (pprof(-5, None), 400, "sample 1 has the negative value -5 for samples/count"),
        (pprof(5, Some(&["", "wall", "nanoseconds", "main", "work"])), 400, "unknown sample types: the profile has wall/nanoseconds; none of them is one Embers stores by default"),
        (gzip(b"\x0a\x05\x08"), 400, "not a pprof profile (profile.proto): the message ends inside a field at byte 0"),
        (b"\x1f\x8b\x08\x00garbage".to_vec(), 400, "the gzip data is corrupt"),
    ];
    for (body, status, message) in cases {
        let (got, text) = server
            .post_raw(&url, "application/octet-stream", body)
            .await;
        let envelope: Value = serde_json::from_str(&text).expect("envelope");
        assert_eq!(got, status, "{text}");
        let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
        assert!(description.starts_with(message), "{description}");
    }
    // A declared-cumulative type without its previous profile.
    let form = reqwest::multipart::Form::new()
        .part("profile", reqwest::multipart::Part::bytes(pprof(5, None)))
        .text(
            "sample_type_config",
            r#"{"samples": {"display-name": "cpu", "cumulative": true}}"#,
        );
    let response = server
        .client
        .post(format!("{}/ingest?name=bad&from={T0}", server.base))
        .multipart(form)
        .send()
        .await
        .expect("multipart");
    assert_eq!(response.status().as_u16(), 400);
    let text = response.text().await.unwrap_or_default();
    assert!(
        text.contains("cpu is cumulative (sample_type_config) but the request has no prev_profile"),
        "{text}"
    );
    // Nothing of any of them was written.
    assert!(services(&server).await.is_empty());
    // And the same profile, sound, is stored.
    let (got, text) = server
        .post_raw(&url, "application/octet-stream", gzip(&pprof(5, None)))
        .await;
    assert_eq!(got, 200, "{text}");
    let q = json!({"app_service": "bad", "profile_language_type": "Golang", "profile_event_type": "cpu",
        "time_start": T0, "time_end": T0});
    assert_eq!(server.folded(&q).await, "bad;main;work 5\n");
    let envelope = server.query(&q).await.1;
    assert_eq!(folded_of(&envelope), "bad;main;work 5\n");
    server.stop().await;
}

#[tokio::test]
async fn the_sender_paths_sit_behind_the_guard() {
    let db = TempDb::new();
    let server = TestServer::start_with(&db.path(), |s| s.limits.ingest = 1 << 20).await;
    let response = server
        .client
        .post(format!("{}/ingest?name=x&from={T0}", server.base))
        .header("content-type", "text/plain")
        .header("origin", "http://evil.example")
        .header("sec-fetch-site", "cross-site")
        .body("a;b 1")
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 403);
    let (status, text) = server
        .post_raw(
            "/push.v1.PusherService/Push",
            "application/proto",
            vec![0u8; 2 << 20],
        )
        .await;
    assert_eq!(status, 413, "{text}");
    let (status, _, _) = server.get("/ingest").await;
    assert_eq!(status, 405);
    server.stop().await;
}

/// `import` of a pprof file: `--event-type` alone is refused (which sample type would it name?),
/// and a gzipped file past `--max-file-bytes` names that flag; within it, the file imports, and
/// with `--sample-type` its samples go under the event type given.
#[tokio::test]
async fn import_says_which_flag_a_pprof_file_needs() {
    let db = TempDb::new();
    let file = db.dir.path().join("profile.pb.gz");
    std::fs::write(&file, gzip(&pprof(5, None))).expect("write");
    let args = |extra: &[&str]| {
        let mut out: Vec<std::ffi::OsString> = vec![
            "import".into(),
            "--db".into(),
            db.path().into(),
            "--app-service".into(),
            "app".into(),
            "--time".into(),
            T0.to_string().into(),
        ];
        out.extend(extra.iter().map(|a| a.into()));
        out.push(file.clone().into());
        out
    };
    let said = run_fails(args(&["--event-type", "itimer"]));
    assert!(said.contains("--event-type needs --sample-type"), "{said}");
    let said = run_fails(args(&["--max-file-bytes", "10"]));
    assert!(
        said.contains("more than 10 bytes (raise --max-file-bytes)"),
        "{said}"
    );
    let printed = run_ok(args(&["--max-file-bytes", "100000"]));
    assert!(printed.contains("imported 1 samples"), "{printed}");
    run_ok(args(&[
        "--sample-type",
        "samples",
        "--event-type",
        "itimer",
    ]));
    let server = TestServer::start(&db.path()).await;
    let mut body = on_cpu("app");
    body["profile_event_type"] = json!("itimer");
    // Not eBPF nor Go by its frames.
    body["profile_language_type"] = json!("unknown");
    assert_eq!(server.folded(&body).await, "app;main;work 5\n");
    server.stop().await;
}

/// The language of what `user_agent` pushes over Connect (a JSON `PushRequest` of `labels`
/// and one pprof profile), as the services list names it.
async fn pushed_language(server: &TestServer, user_agent: &str, labels: Value) -> String {
    let app = labels[1]["value"]
        .as_str()
        .expect("service_name")
        .to_owned();
    let raw = data_encoding::BASE64.encode(&gzip(&pprof(5, None)));
    let body = json!({"series": [{"labels": labels, "samples": [{"rawProfile": raw}]}]});
    let response = server
        .client
        .post(format!("{}/push.v1.PusherService/Push", server.base))
        .header("content-type", "application/json")
        .header("user-agent", user_agent)
        .body(body.to_string())
        .send()
        .await
        .expect("push");
    assert_eq!(response.status().as_u16(), 200, "{user_agent}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let range = json!({"time_start": now - 3600, "time_end": now + 3600});
    let (_, services) = server.post("/v1/profile/services", &range).await;
    let rows = services["result"]["values"]
        .as_array()
        .expect("rows")
        .clone();
    let row = rows.iter().find(|r| r[0] == json!(app)).expect("the app");
    row[1].as_str().expect("language").to_owned()
}

/// pyroscope-rs SDKs (Python's and Ruby's packages) name their spy only in the user agent: its
/// session sends `pyroscope-rs/<spy>/<spy version> reqwest` (`pyroscope-rs/<spy> reqwest` before
/// versions were added), with labels `__name__`, `service_name`, `otel.scope.name`,
/// `otel.scope.version`, `process.runtime.name` and `process.runtime.version` and no
/// `pyroscope_spy` (grafana/pyroscope-rs, `src/backend/session.rs` or `src/session.rs`). The spy
/// maps to the language by `/ingest`'s `spyName` table; a `pyroscope_spy` label wins, and
/// another agent's user agent says nothing. (The SDK's body is protobuf, gzipped; the push
/// decoding of that is `formats_go`'s test; here it is JSON.)
#[tokio::test]
async fn pushed_profiles_take_their_language_from_the_pyroscope_rs_user_agent() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let labels = |app: &str, runtime: &str| {
        json!([{"name": "__name__", "value": "process_cpu"}, {"name": "service_name", "value": app},
               {"name": "otel.scope.name", "value": format!("com.grafana.pyroscope/{runtime}")},
               {"name": "otel.scope.version", "value": "1.0.12"},
               {"name": "process.runtime.name", "value": runtime},
               {"name": "process.runtime.version", "value": "3.12.4"}])
    };
    let py = pushed_language(
        &server,
        "pyroscope-rs/pyspy/1.0.12 reqwest",
        labels("py-app", "cpython"),
    )
    .await;
    assert_eq!(py, "python");
    let rb = pushed_language(
        &server,
        "pyroscope-rs/rbspy reqwest",
        labels("rb-app", "ruby"),
    )
    .await;
    assert_eq!(rb, "ruby");
    let mut spied = labels("go-app", "go");
    spied
        .as_array_mut()
        .expect("labels")
        .push(json!({"name": "pyroscope_spy", "value": "gospy"}));
    assert_eq!(
        pushed_language(&server, "pyroscope-rs/pyspy/1.0.12 reqwest", spied).await,
        "Golang"
    );
    let other = pushed_language(&server, "Go-http-client/1.1", labels("other-app", "go")).await;
    assert_ne!(other, "python");
    server.stop().await;
}
