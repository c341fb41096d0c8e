//! In-use event types are instants (`inuse_space`, `inuse_objects`, `goroutines`, `mem-inuse`):
//! every reader of a range takes each process's latest upload and sums over processes, never
//! the sum of every upload — on SQLite, on ClickHouse (one node and two shards), and through
//! MCP, for graphs, services, timelines, functions and one function's timeline; with
//! `--upstream`, services and timelines ask the querier for each process's last value (as
//! DeepFlow's own querier reads in-use types) and sum those. Process `web`
//! on host a uploads 100 bytes, then 300 a minute later; on host b (another
//! process) 40 + 10 in between; an on-CPU control over the same times is summed.

use crate::common;

use common::clickhouse::{Layout, Pair};
use common::http::send;
use common::{ok, with, TempDb, TestServer, T0};
use reqwest::Method;
use serde_json::{json, Value};

/// One upload of Go heap profile `folded` (bytes in use) of `web` at `time` on `host`.
fn heap(event: &str, time: i64, host: &str, folded: &str) -> Value {
    json!({
        "app_service": "web", "profile_language_type": "Golang", "profile_event_type": event,
        "profile_value_unit": "bytes", "time": time, "tags": {"host": host}, "folded": folded,
    })
}

fn uploads() -> Value {
    json!({"batches": [
        heap("inuse_space", T0, "a", "main;cache.Fill 100\n"),
        heap("inuse_space", T0 + 60, "a", "main;cache.Fill 300\n"),
        heap("inuse_space", T0 + 30, "b", "main;cache.Fill 40\nmain;other 10\n"),
        heap("alloc_space", T0, "a", "main;cache.Fill 100\n"),
        heap("alloc_space", T0 + 60, "a", "main;cache.Fill 300\n"),
    ]})
}

/// A request for `web`'s `event` over `[start, end]`.
fn asked(event: &str, start: i64, end: i64) -> Value {
    json!({"app_service": "web", "profile_language_type": "Golang", "profile_event_type": event,
           "time_start": start, "time_end": end})
}

/// The flame graph's total (the root's value) in both result shapes, which must agree.
async fn total(server: &TestServer, body: Value) -> u64 {
    let mut totals = Vec::new();
    for shape in ["A", "B"] {
        let request = with(body.clone(), json!({"result_shape": shape}));
        let envelope = ok(server, "/v1/profile/ProfileTracing", request).await;
        let decoded = embers_model::decode_response(200, &envelope.to_string()).expect("decode");
        totals.push(decoded.profile.root_total());
    }
    assert_eq!(totals[0], totals[1], "the shapes agree");
    totals[0]
}

/// `column` of each row of an explore answer.
fn column(envelope: &Value, name: &str) -> Vec<Value> {
    let result = &envelope["result"];
    let columns = result["columns"].as_array().expect("columns");
    let at = columns.iter().position(|c| c == name).expect(name);
    let rows = result["values"].as_array().expect("values");
    rows.iter().map(|r| r[at].clone()).collect()
}

/// The answers a store must give; every one would read more on a sum.
async fn reads_the_latest_upload(server: &TestServer) {
    server.ingest(uploads()).await;
    let range = (T0, T0 + 60);
    // 300 (host a's latest) + 50 (host b's only), not 100 + 300 + 50.
    assert_eq!(
        total(server, asked("inuse_space", range.0, range.1)).await,
        350
    );
    let one = with(
        asked("inuse_space", T0, T0 + 60),
        json!({"tag_filter": "host='a'"}),
    );
    assert_eq!(total(server, one).await, 300, "two uploads, a minute apart");
    assert_eq!(total(server, asked("inuse_space", T0, T0 + 59)).await, 150);
    assert_eq!(
        total(server, asked("alloc_space", T0, T0 + 60)).await,
        400,
        "summed"
    );
    let services = ok(
        server,
        "/v1/profile/services",
        json!({"time_start": T0, "time_end": T0 + 60}),
    )
    .await;
    let events = column(&services, "profile_event_type");
    let values = column(&services, "value");
    let value_of = |e: &str| values[events.iter().position(|v| v == e).expect(e)].clone();
    assert_eq!(value_of("inuse_space"), json!(350));
    assert_eq!(value_of("alloc_space"), json!(400));
    // Minutes (T0 is 20 s into one): the value at each bucket's end, per process, summed.
    let minutes = with(asked("inuse_space", T0, T0 + 60), json!({"interval": 60}));
    let timeline = ok(server, "/v1/profile/timeline", minutes).await;
    assert_eq!(column(&timeline, "time"), [json!(T0 - 20), json!(T0 + 40)]);
    assert_eq!(column(&timeline, "value"), [json!(150), json!(300)]);
    // One function's timeline: in each bucket, what each process's latest upload there holds
    // of it (host a's 100 and host b's 40, then host a's 300), not the sum of uploads.
    let fill = with(
        asked("inuse_space", T0, T0 + 60),
        json!({"interval": 60, "function": "cache.Fill"}),
    );
    let timeline = ok(server, "/v1/profile/function_timeline", fill).await;
    assert_eq!(column(&timeline, "time"), [json!(T0 - 20), json!(T0 + 40)]);
    assert_eq!(column(&timeline, "total"), [json!(140), json!(300)]);
    // Host a's two uploads in one bucket: its latest (300) and host b's (40), not 440.
    let fill = with(
        asked("inuse_space", T0, T0 + 60),
        json!({"interval": 300, "function": "cache.Fill"}),
    );
    let timeline = ok(server, "/v1/profile/function_timeline", fill).await;
    assert_eq!(column(&timeline, "total"), [json!(340)]);
    let five = with(asked("inuse_space", T0, T0 + 60), json!({"interval": 300}));
    let timeline = ok(server, "/v1/profile/timeline", five).await;
    assert_eq!(column(&timeline, "value"), [json!(350)]);
    let functions = with(asked("inuse_space", T0, T0 + 60), json!({"rows": 5}));
    let answer = common::functions::answer(server, functions).await;
    let rows = common::functions::rows(&answer);
    assert!(rows.contains(&("cache.Fill", 340, 340)), "{rows:?}");
    assert!(rows.contains(&("other", 10, 10)), "{rows:?}");
    // pprof out: the same snapshot, in bytes.
    let pprof = with(
        asked("inuse_space", T0, T0 + 60),
        json!({"tag_filter": "host='a'"}),
    );
    let (status, body) = server
        .post_raw(
            "/v1/profile/pprof",
            "application/json",
            pprof.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn sqlite_reads_in_use_as_the_latest_upload_of_each_process() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    reads_the_latest_upload(&server).await;
    server.stop().await;
}

async fn on_clickhouse(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    reads_the_latest_upload(&pair.clickhouse).await;
    pair.finish().await;
}

#[tokio::test]
async fn clickhouse_reads_in_use_as_the_latest_upload_of_each_process() {
    on_clickhouse(Layout::Single, "instants_single").await;
}

#[tokio::test]
async fn a_clickhouse_cluster_reads_in_use_as_the_latest_upload_over_its_shards() {
    on_clickhouse(Layout::TwoShards, "instants_shards").await;
}

#[tokio::test]
async fn mcp_reads_in_use_as_the_latest_upload() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server.ingest(uploads()).await;
    let args = json!({"app_service": "web", "event_type": "inuse_space", "language": "Golang",
                      "tag_filter": "host='a'", "time_start": T0, "time_end": T0 + 60});
    let params = json!({"name": "summarize_profile", "arguments": args});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let headers = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];
    let answer = send(&server, Method::POST, "/mcp", &headers, &body.to_string()).await;
    let text = answer.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("Total: 300 B"), "{text}");
    assert!(text.contains("live at 2023-11-14 22:14:20 UTC"), "{text}");
    server.stop().await;
}

/// `--upstream`: the querier is asked for each process's `Last(profile_value)` (per bucket for a
/// timeline), never a sum, and the answer sums those over processes: the heap service is
/// 300 + 40, not its uploads' sums (999 + 50); on-CPU beside it is summed; a heap timeline is
/// 100 + 40 at the first bucket and 300 at the second.
#[tokio::test]
async fn upstream_asks_for_each_process_s_last_value_and_sums_those() {
    use common::querier::{result, start_stub, statements, stub, H};
    use embers_server::http::upstream::UpstreamOptions;

    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = common::http::proxying(&base, UpstreamOptions::default()).await;
    let range = json!({"time_start": H, "time_end": H + 3599});
    assert_eq!(
        result(&server, "/v1/profile/services", range.clone()).await["values"],
        json!([
            ["heap-app", "Golang", "inuse_space", 340],
            ["redis-server", "eBPF", "on-cpu", 187]
        ])
    );
    let heap = with(range, json!({"profile_event_type": "inuse_space"}));
    assert_eq!(
        result(&server, "/v1/profile/services", heap.clone()).await["values"],
        json!([["heap-app", "Golang", "inuse_space", 340]])
    );
    let timeline = with(
        heap,
        json!({"app_service": "heap-app", "profile_language_type": "Golang", "interval": 60}),
    );
    assert_eq!(
        result(&server, "/v1/profile/timeline", timeline).await,
        json!({"interval": 60, "columns": ["time", "value"], "values": [[H, 140], [H + 60, 300]]})
    );
    let sent = statements(&stub);
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(
        sent[0].contains("Sum(profile_value) AS v, Last(profile_value) AS l"),
        "{}",
        sent[0]
    );
    assert!(
        sent[1..].iter().all(
            |s| s.contains("agent, process_id, Last(profile_value) AS v") && !s.contains("Sum(")
        ),
        "{sent:#?}"
    );
    server.stop().await;
}
