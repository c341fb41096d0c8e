//! A real Go program's CPU profile (`runtime/pprof`) through every way in — the command line,
//! Pyroscope's `/ingest` with `format=pprof`, its multipart upload, and the push API (encoded
//! by `prost`, not by the service's own protobuf code) — must give the same ProfileTracing tree,
//! whose hot function has the share `go tool pprof -top` reports for the same file; and
//! Embers' pprof export of a stored profile must read in `go tool pprof` with the same totals
//! per function (`-top`) and the same stacks (`-traces`).

use crate::common;

use std::collections::BTreeMap;
use std::io::Read;

use common::golang::{cpu_profile, go_available, pprof_tool, top_percent};
use common::process::run_ok;
use common::{folded_of, TempDb, TestServer};
use prost::Message;
use serde_json::{json, Value};

/// Pyroscope's push messages, encoded by prost.
mod push {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PushRequest {
        #[prost(message, repeated, tag = "1")]
        pub series: Vec<RawProfileSeries>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RawProfileSeries {
        #[prost(message, repeated, tag = "1")]
        pub labels: Vec<LabelPair>,
        #[prost(message, repeated, tag = "2")]
        pub samples: Vec<RawSample>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct LabelPair {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub value: String,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RawSample {
        #[prost(bytes = "vec", tag = "1")]
        pub raw_profile: Vec<u8>,
        #[prost(string, tag = "2")]
        pub id: String,
    }
}

/// A push request of one series with `labels` and one profile.
fn push_body(labels: &[(&str, &str)], raw: &[u8]) -> Vec<u8> {
    push::PushRequest {
        series: vec![push::RawProfileSeries {
            labels: labels
                .iter()
                .map(|(n, v)| push::LabelPair {
                    name: (*n).to_owned(),
                    value: (*v).to_owned(),
                })
                .collect(),
            samples: vec![push::RawSample {
                raw_profile: raw.to_vec(),
                id: "1".to_owned(),
            }],
        }],
    }
    .encode_to_vec()
}

/// The profile's own time, Unix seconds.
pub(crate) fn profile_time(gz: &[u8]) -> i64 {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .expect("gzip");
    embers_model::wire::pprof::decode(&raw)
        .expect("pprof")
        .time_nanos
        / 1_000_000_000
}

/// The tree of `app` as folded lines without the root frame.
async fn tree(server: &TestServer, app: &str, t: i64) -> String {
    let (status, envelope) = server
        .query(&json!({
            "app_service": app, "profile_language_type": "Golang", "profile_event_type": "cpu",
            "time_start": t - 60, "time_end": t + 60,
        }))
        .await;
    assert_eq!(status, 200, "{envelope}");
    folded_of(&envelope)
        .lines()
        .map(|l| l.split_once(';').map_or(l, |(_, rest)| rest).to_owned() + "\n")
        .collect()
}

fn ok(status: u16, body: &str) {
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_go_profile_gives_one_tree_through_every_way_in() {
    let db = TempDb::new();
    let file = cpu_profile(db.dir.path());
    let gz = std::fs::read(&file).expect("profile");
    let t = profile_time(&gz);
    run_ok([
        "import".as_ref(),
        "--db".as_ref(),
        db.path().as_os_str(),
        "--app-service".as_ref(),
        "hot-cli".as_ref(),
        "--language".as_ref(),
        "Golang".as_ref(),
        file.as_os_str(),
    ]);
    let server = TestServer::start(&db.path()).await;
    let url = |app: &str, format: &str| {
        format!(
            "/ingest?name={app}%7Benv%3Dtest%7D&spyName=gospy&from={t}&until={}{format}",
            t + 2
        )
    };
    let (s, body) = server
        .post_raw(
            &url("hot-ingest", "&format=pprof"),
            "binary/octet-stream",
            gz.clone(),
        )
        .await;
    ok(s, &body);
    let form = reqwest::multipart::Form::new().part(
        "profile",
        reqwest::multipart::Part::bytes(gz.clone()).file_name("profile.pprof"),
    );
    let response = server
        .client
        .post(format!("{}{}", server.base, url("hot-multipart", "")))
        .multipart(form)
        .send()
        .await
        .expect("multipart");
    ok(
        response.status().as_u16(),
        &response.text().await.unwrap_or_default(),
    );
    let labels = [
        ("__name__", "process_cpu"),
        ("service_name", "hot-push"),
        ("pyroscope_spy", "gospy"),
        ("namespace", "test"),
    ];
    let (s, body) = server
        .post_raw(
            "/push.v1.PusherService/Push",
            "application/proto",
            push_body(&labels, &gz),
        )
        .await;
    ok(s, &body);
    assert!(body.is_empty(), "an empty PushResponse: {body:?}");

    let reference = tree(&server, "hot-cli", t).await;
    assert!(reference.contains("main.hotLoop"), "{reference}");
    for app in ["hot-ingest", "hot-multipart", "hot-push"] {
        assert_eq!(tree(&server, app, t).await, reference, "{app}");
    }
    // The hot function's share, against go tool pprof's for the same file.
    let (_, envelope) = server
        .query(
            &json!({"app_service": "hot-push", "profile_language_type": "Golang",
            "profile_event_type": "cpu", "time_start": t - 60, "time_end": t + 60}),
        )
        .await;
    let profile = embers_model::decode_response(200, &envelope.to_string())
        .expect("tree")
        .profile;
    let hot: u64 = profile
        .nodes()
        .filter(|&n| profile.name(n) == "main.hotLoop")
        .map(|n| profile.total(n))
        .sum();
    let share = hot as f64 * 100.0 / profile.root_total() as f64;
    let (_, cum) = top_percent(&pprof_tool("top", &file), "main.hotLoop").expect("hotLoop in -top");
    assert!(
        (share - cum).abs() <= 10.0,
        "Embers {share:.1}% vs go tool pprof {cum:.1}%"
    );
    server.stop().await;
}

/// `function → (flat, cum)` in `go tool pprof -top` output, in the unit it prints.
fn top_values(top: &str) -> BTreeMap<String, (f64, f64)> {
    let number = |s: &str| {
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        digits.parse::<f64>().ok()
    };
    top.lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            (cols.len() >= 6 && cols[1].ends_with('%')).then_some(())?;
            Some((cols[5..].join(" "), (number(cols[0])?, number(cols[3])?)))
        })
        .collect()
}

#[tokio::test]
async fn go_tool_pprof_reads_embers_export_with_the_same_totals_and_stacks() {
    if !go_available() {
        return;
    }
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    // Counts (`cpu` samples) so `go tool pprof` prints them unscaled.
    let folded = "main;serve;parse 30\nmain;serve;[k] read 12\nmain;gc 7\nmain;serve 5\n";
    server
        .ingest(
            json!({"app_service": "web", "profile_language_type": "Golang",
            "profile_event_type": "cpu", "profile_value_unit": "samples",
            "time": common::T0, "folded": folded}),
        )
        .await;
    let response = server
        .client
        .post(format!("{}/v1/profile/pprof", server.base))
        .json(
            &json!({"app_service": "web", "profile_language_type": "Golang",
            "profile_event_type": "cpu", "time_start": common::T0, "time_end": common::T0 + 60}),
        )
        .send()
        .await
        .expect("pprof");
    assert_eq!(response.status().as_u16(), 200);
    let file = db.dir.path().join("web.pb.gz");
    std::fs::write(&file, response.bytes().await.expect("bytes")).expect("write");
    let top = top_values(&pprof_tool("top", &file));
    let expected: BTreeMap<String, (f64, f64)> = [
        ("main", (0.0, 54.0)),
        ("serve", (5.0, 47.0)),
        ("parse", (30.0, 30.0)),
        ("[k] read", (12.0, 12.0)),
        ("gc", (7.0, 7.0)),
    ]
    .into_iter()
    .map(|(f, v)| (f.to_owned(), v))
    .collect();
    assert_eq!(top, expected);
    // -traces: each stack once, leaf first, with its value.
    let traces = pprof_tool("traces", &file);
    let mut stacks: Vec<String> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for line in traces.lines().map(str::trim) {
        if line.starts_with("-----") {
            if !current.is_empty() {
                stacks.push(current.join(";"));
            }
            current.clear();
        } else if let Some((value, frame)) = line.split_once(' ').filter(|_| {
            current.is_empty() && line.chars().next().is_some_and(|c| c.is_ascii_digit())
        }) {
            current.push(value.to_owned());
            current.push(frame.trim().to_owned());
        } else if !current.is_empty() && !line.is_empty() {
            current.push(line.to_owned());
        }
    }
    stacks.sort();
    assert_eq!(
        stacks,
        [
            "12;[k] read;serve;main",
            "30;parse;serve;main",
            "5;serve;main",
            "7;gc;main"
        ],
        "{traces}"
    );
    server.stop().await;
}

#[tokio::test]
async fn push_speaks_connect_json_and_names_errors_the_connect_way() {
    let db = TempDb::new();
    let gz = std::fs::read(cpu_profile(db.dir.path())).expect("profile");
    let t = profile_time(&gz);
    let server = TestServer::start(&db.path()).await;
    let body: Value = json!({"series": [{
        "labels": [{"name": "service_name", "value": "hot-json"}, {"name": "__name__", "value": "process_cpu"}],
        "samples": [{"rawProfile": data_encoding::BASE64.encode(&gz)}],
    }]});
    let (s, text) = server
        .post_raw(
            "/push.v1.PusherService/Push",
            "application/json",
            body.to_string().into_bytes(),
        )
        .await;
    assert_eq!((s, text.as_str()), (200, "{}"));
    assert!(
        tree(&server, "hot-json", t).await.contains("main.hotLoop"),
        "stored as Golang cpu"
    );
    let missing = json!({"series": [{"labels": [], "samples": [{"rawProfile": ""}]}]});
    let (s, text) = server
        .post_raw(
            "/push.v1.PusherService/Push",
            "application/json",
            missing.to_string().into_bytes(),
        )
        .await;
    assert_eq!(s, 400);
    let error: Value = serde_json::from_str(&text).expect("connect error");
    assert_eq!(error["code"], "invalid_argument");
    assert_eq!(
        error["message"],
        "series 1 has no service_name label (the app)"
    );
    let (s, _) = server
        .post_raw(
            "/push.v1.PusherService/Push",
            "application/grpc",
            Vec::new(),
        )
        .await;
    assert_eq!(s, 400);
    server.stop().await;
}
