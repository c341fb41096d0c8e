//! A store that cannot serve is answered 503 with `Retry-After` and a message naming it, and
//! `GET /readyz` says so; a bad batch stays a 400; `/healthz` (liveness) stays 200. Over real
//! HTTP: the binary pointed at a ClickHouse port nobody listens on, and a SQLite store whose
//! file was removed or whose write lock another process holds.

use crate::common;

use std::time::{Duration, Instant};

use common::http::{send, Answer};
use common::process::spawn_serve_args;
use common::{query_for, TempDb, TestServer, T0};
use reqwest::Method;
use serde_json::{json, Value};

const INGEST: &str = "/v1/profile/ingest";
const JSON: (&str, &str) = ("content-type", "application/json");

/// A one-sample OTLP/JSON export for `web`.
fn otlp_body() -> String {
    json!({
        "resourceProfiles": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]},
            "scopeProfiles": [{"profiles": [{
                "timeUnixNano": (T0 * 1_000_000_000).to_string(),
                "sampleType": {"typeStrindex": 1, "unitStrindex": 2},
                "samples": [{"stackIndex": 1, "values": ["1000000"]}]
            }]}]
        }],
        "dictionary": {
            "stringTable": ["", "cpu", "nanoseconds", "main"],
            "functionTable": [{}, {"nameStrindex": 3}],
            "locationTable": [{}, {"lines": [{"functionIndex": 1}]}],
            "stackTable": [{}, {"locationIndices": [1]}]
        }
    })
    .to_string()
}

fn batch() -> String {
    json!({"app_service": "web", "time": T0, "folded": "[t] web;main;work 5\n"}).to_string()
}

async fn get(base: &str, path: &str) -> (u16, String, Value) {
    answer(reqwest::Client::new().get(format!("{base}{path}"))).await
}

async fn post(base: &str, path: &str, body: String) -> (u16, String, Value) {
    let request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body);
    answer(request).await
}

/// Status, `Retry-After` (empty when absent) and JSON body of the answer to `request`.
async fn answer(request: reqwest::RequestBuilder) -> (u16, String, Value) {
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, retry, response.json().await.expect("JSON"))
}

/// A loopback port nobody listens on.
fn closed_port() -> u16 {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    socket.local_addr().expect("addr").port()
}

#[tokio::test]
async fn clickhouse_unreachable_is_503_with_retry_after_and_not_ready() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    // The service starts although ClickHouse cannot be reached.
    let (mut child, base) = spawn_serve_args(&["--clickhouse-url", &url]).await;
    let (status, retry, body) = post(&base, INGEST, batch()).await;
    assert_eq!((status, retry.as_str()), (503, "5"), "{body}");
    let description = body["DESCRIPTION"].as_str().expect("DESCRIPTION");
    assert!(
        description
            .starts_with("the ClickHouse store is unavailable: ClickHouse cannot be reached"),
        "{description}"
    );
    assert!(
        !description.contains(&url),
        "no URL for clients: {description}"
    );
    // A bad batch is still the sender's fault, whatever the store's state.
    let (status, retry, body) = post(&base, INGEST, r#"{"time": 5}"#.to_owned()).await;
    assert_eq!((status, retry.as_str()), (400, ""), "{body}");
    // Queries too, ProfileTracing with its empty tree.
    let (status, retry, body) = post(
        &base,
        "/v1/profile/ProfileTracing",
        query_for("web").to_string(),
    )
    .await;
    assert_eq!((status, retry.as_str()), (503, "5"), "{body}");
    assert!(body["result"].is_object(), "{body}");
    let range = json!({"time_start": T0, "time_end": T0 + 60}).to_string();
    let (status, _, body) = post(&base, "/v1/profile/services", range).await;
    assert_eq!(status, 503, "{body}");
    let (status, retry, ready) = get(&base, "/readyz").await;
    assert_eq!((status, retry.as_str()), (503, "5"), "{ready}");
    assert_eq!(ready["status"], "unavailable");
    assert_eq!(ready["store"], "clickhouse");
    assert!(
        ready["reason"]
            .as_str()
            .is_some_and(|r| r.contains("ClickHouse cannot be reached")),
        "{ready}"
    );
    let (status, _, health) = get(&base, "/healthz").await;
    assert_eq!((status, &health["status"]), (200, &json!("ok")));
    child.kill().await.expect("kill");
}

async fn call(server: &TestServer, method: Method, path: &str, body: &str) -> Answer {
    send(
        server,
        method,
        path,
        &[("content-type", "application/json")],
        body,
    )
    .await
}

#[tokio::test]
async fn a_removed_sqlite_database_is_503_and_not_ready() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    assert_eq!(
        call(&server, Method::POST, INGEST, &batch()).await.status,
        200
    );
    let ready = call(&server, Method::GET, "/readyz", "").await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.body["status"], "ready");
    assert_eq!(ready.body["store"], "sqlite");
    assert_eq!(ready.header("retry-after"), "");
    // The directory goes away under the running service (a volume unmounted, a cleanup job):
    // the open handles would go on writing to the removed file and acknowledging data no one
    // will ever read.
    std::fs::remove_dir_all(db.dir.path()).expect("remove");
    let ingest = call(&server, Method::POST, INGEST, &batch()).await;
    assert_eq!(
        (ingest.status, ingest.header("retry-after")),
        (503, "5"),
        "{}",
        ingest.body
    );
    assert!(
        ingest
            .description()
            .starts_with("the SQLite store is unavailable: the database file was removed"),
        "{}",
        ingest.description()
    );
    assert!(
        !ingest.description().contains("embers.db"),
        "no path for clients"
    );
    // OTLP says it in its own terms: 503, Retry-After, google.rpc.Status UNAVAILABLE (14).
    let otlp = send(
        &server,
        Method::POST,
        "/v1development/profiles",
        &[JSON],
        &otlp_body(),
    )
    .await;
    assert_eq!(
        (otlp.status, otlp.header("retry-after")),
        (503, "5"),
        "{}",
        otlp.body
    );
    assert_eq!(otlp.body["code"], 14, "{}", otlp.body);
    let message = otlp.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the SQLite store is unavailable"),
        "{message}"
    );
    let query = call(
        &server,
        Method::POST,
        "/v1/profile/ProfileTracing",
        &query_for("web").to_string(),
    )
    .await;
    assert_eq!((query.status, query.header("retry-after")), (503, "5"));
    let ready = call(&server, Method::GET, "/readyz", "").await;
    assert_eq!((ready.status, ready.header("retry-after")), (503, "5"));
    assert_eq!(ready.body["status"], "unavailable");
    assert_eq!(call(&server, Method::GET, "/healthz", "").await.status, 200);
    server.stop().await;
}

#[tokio::test]
async fn a_sqlite_write_lock_held_elsewhere_is_503_busy_and_not_ready() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    assert_eq!(
        call(&server, Method::POST, INGEST, &batch()).await.status,
        200
    );
    // Another process (an `embers-server import`, a backup tool) holds the write lock.
    let other = rusqlite::Connection::open(db.path()).expect("open");
    other.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let started = Instant::now();
    let ready = call(&server, Method::GET, "/readyz", "").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the probe waits briefly"
    );
    assert_eq!(
        (ready.status, ready.header("retry-after")),
        (503, "1"),
        "{}",
        ready.body
    );
    assert!(
        ready.body["reason"]
            .as_str()
            .is_some_and(|r| r.contains("locked by another writer")),
        "{}",
        ready.body
    );
    // Ingest waits for the lock (the store's 10 s busy timeout), then says busy.
    let ingest = call(&server, Method::POST, INGEST, &batch()).await;
    assert_eq!(
        (ingest.status, ingest.header("retry-after")),
        (503, "1"),
        "{}",
        ingest.body
    );
    assert!(
        ingest.description().contains("SQLite store"),
        "{}",
        ingest.description()
    );
    other.execute_batch("ROLLBACK").expect("unlock");
    assert_eq!(call(&server, Method::GET, "/readyz", "").await.status, 200);
    assert_eq!(
        call(&server, Method::POST, INGEST, &batch()).await.status,
        200
    );
    server.stop().await;
}
