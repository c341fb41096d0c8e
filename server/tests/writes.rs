//! The write gate over real HTTP: ingest bodies reserve their bytes before they are read, and a
//! request that would pass `--max-ingest-in-flight-bytes` gets 503 with `Retry-After` on every
//! ingest route (in its own protocol's form); snapshot saves and deletes take bounded turns;
//! snapshots are capped in count and bytes (409 naming the option) and expire with
//! `--snapshot-ttl` through the maintenance loop. On the real binary, the options (and
//! `--allow-debug`) reach the service, and an in-flight bound below one body is refused at start.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::http::send;
use common::snapshots::{save_body, SNAPSHOTS};
use common::{TempDb, TestServer, T0};
use embers_server::limits::writes::{WriteCaps, WriteGate};
use embers_server::store::Store;
use reqwest::Method;
use serde_json::json;
use tokio::io::AsyncWriteExt;

const ANSWER: &str = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":[{"profile_location_str":"web","node_id":"","parent_node_id":"-1","self_value":0,"total_value":1}],"debug":null}"#;

/// A server whose ingest bodies may be `ingest` bytes, under a gate with `caps`; the gate and
/// the store too.
async fn gated(
    db: &TempDb,
    ingest: usize,
    caps: WriteCaps,
) -> (TestServer, Arc<WriteGate>, Arc<Store>) {
    let gate = Arc::new(WriteGate::new(caps));
    let store = Arc::new(Store::open(&db.path()).expect("open"));
    let shared = gate.clone();
    let server = TestServer::start_over(store.clone(), db.dir.path().join("none"), move |s| {
        s.limits.ingest = ingest;
        s.writes = shared;
    })
    .await;
    (server, gate, store)
}

fn folded(bytes: usize) -> String {
    let mut body = String::new();
    while body.len() < bytes {
        body.push_str("[t] web;main;work 1\n");
    }
    body
}

fn save(name: &str) -> Vec<u8> {
    let request = json!({"app_service": "web", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": T0, "time_end": T0 + 60});
    save_body(&request, ANSWER, Some(name))
}

/// A request that announces `length` body bytes and sends none: held open, it holds its
/// reservation.
async fn stalled_ingest(server: &TestServer, length: usize) -> tokio::net::TcpStream {
    let addr = server.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /v1/profile/ingest?app_service=held HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {length}\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.expect("write");
    socket
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn ingest_bytes_in_flight_are_bounded_on_every_ingest_route() {
    let db = TempDb::new();
    let caps = WriteCaps {
        max_ingest_in_flight_bytes: 1500,
        ..WriteCaps::default()
    };
    let (server, gate, _) = gated(&db, 1000, caps).await;
    // A body of 1000 bytes announced, not yet sent: its bytes are reserved before it is read.
    let held = stalled_ingest(&server, 1000).await;
    wait_for("the stalled body's reservation", || {
        gate.in_flight() == 1000
    })
    .await;
    let body = folded(600);
    let refused = [
        (
            "/v1/profile/ingest?app_service=web",
            "application/octet-stream",
        ),
        ("/ingest?name=web&from=1700000000", "text/plain"),
        ("/push.v1.PusherService/Push", "application/json"),
        ("/v1development/profiles", "application/json"),
    ];
    for (path, content_type) in refused {
        let a = send(
            &server,
            Method::POST,
            path,
            &[("content-type", content_type)],
            &body,
        )
        .await;
        assert_eq!(a.status, 503, "{path}: {}", a.body);
        assert_eq!(a.header("retry-after"), "1", "{path}");
        assert!(
            a.body.to_string().contains("--max-ingest-in-flight-bytes"),
            "{path}: {}",
            a.body
        );
    }
    // A body that fits beside the held one is taken.
    let small = send(
        &server,
        Method::POST,
        "/v1/profile/ingest?app_service=web",
        &[("content-type", "application/octet-stream")],
        &folded(300),
    )
    .await;
    assert_eq!(small.status, 200, "{}", small.body);
    // The client goes away: its reservation comes back, and the big body fits.
    drop(held);
    wait_for("the reservation given back", || gate.in_flight() == 0).await;
    let (path, ct) = refused[0];
    let a = send(&server, Method::POST, path, &[("content-type", ct)], &body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(gate.in_flight(), 0);
    server.stop().await;
}

#[tokio::test]
async fn saves_and_deletes_take_bounded_turns() {
    let db = TempDb::new();
    let caps = WriteCaps {
        max_concurrent_saves: 1,
        max_concurrent_deletes: 1,
        ..WriteCaps::default()
    };
    let (server, gate, _) = gated(&db, 1 << 20, caps).await;
    let (status, saved) = server.save_snapshot(save("a")).await;
    assert_eq!(status, 200, "{saved}");
    let id = saved["result"]["id"].as_str().expect("id").to_owned();
    // The only turns, taken: every save and delete is 503 naming its option.
    let (save_turn, delete_turn) = (
        gate.save_turn().expect("turn"),
        gate.delete_turn().expect("turn"),
    );
    let (status, envelope) = server.save_snapshot(save("b")).await;
    assert_eq!(status, 503, "{envelope}");
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains("--max-concurrent-saves"));
    for path in [
        format!("{SNAPSHOTS}/{id}"),
        "/v1/profile/processes/web".to_owned(),
    ] {
        let a = send(&server, Method::DELETE, &path, &[], "").await;
        assert_eq!(a.status, 503, "{path}: {}", a.body);
        assert_eq!(a.header("retry-after"), "1");
        assert!(
            a.description().contains("--max-concurrent-deletes"),
            "{}",
            a.description()
        );
    }
    assert_eq!(
        server.snapshot_list().await.len(),
        1,
        "nothing saved or deleted"
    );
    drop((save_turn, delete_turn));
    assert_eq!(server.save_snapshot(save("b")).await.0, 200);
    assert_eq!(server.delete(&format!("{SNAPSHOTS}/{id}")).await.0, 200);
    assert_eq!(server.delete("/v1/profile/processes/web").await.0, 200);
    server.stop().await;
}

#[tokio::test]
async fn snapshots_are_capped_in_count_and_bytes() {
    let db = TempDb::new();
    let caps = WriteCaps {
        max_snapshots: 2,
        max_snapshot_total_bytes: 3 * ANSWER.len() as u64,
        ..WriteCaps::default()
    };
    let (server, _, _) = gated(&db, 1 << 20, caps).await;
    assert_eq!(server.save_snapshot(save("a")).await.0, 200);
    let (status, second) = server.save_snapshot(save("b")).await;
    assert_eq!(status, 200);
    let (status, envelope) = server.save_snapshot(save("c")).await;
    assert_eq!(status, 409, "{envelope}");
    assert!(
        envelope["DESCRIPTION"]
            .as_str()
            .unwrap_or("")
            .contains("--max-snapshots"),
        "{envelope}"
    );
    let id = second["result"]["id"].as_str().expect("id");
    assert_eq!(server.delete(&format!("{SNAPSHOTS}/{id}")).await.0, 200);
    assert_eq!(server.save_snapshot(save("c")).await.0, 200, "room again");
    server.stop().await;

    // Two answers stored; a third would pass the bytes cap even where the count allows it.
    let db = TempDb::new();
    let caps = WriteCaps {
        max_snapshot_total_bytes: 2 * ANSWER.len() as u64 + 10,
        ..WriteCaps::default()
    };
    let (server, _, _) = gated(&db, 1 << 20, caps).await;
    for name in ["a", "b"] {
        assert_eq!(server.save_snapshot(save(name)).await.0, 200);
    }
    let (status, envelope) = server.save_snapshot(save("c")).await;
    assert_eq!(status, 409, "{envelope}");
    let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
    assert!(
        description.contains("--max-snapshot-total-bytes"),
        "{description}"
    );
    assert_eq!(server.snapshot_list().await.len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn the_maintenance_loop_removes_snapshots_past_their_ttl() {
    let db = TempDb::new();
    let (server, _, store) = gated(&db, 1 << 20, WriteCaps::default()).await;
    assert_eq!(server.save_snapshot(save("old")).await.0, 200);
    // `expire_snapshots` removes what is older than the TTL at the time it is given.
    assert_eq!(
        embers_server::retention::expire_snapshots(&store, Duration::from_secs(3600), T0 * 2)
            .expect("expire"),
        1,
        "a snapshot older than the TTL goes"
    );
    assert_eq!(server.save_snapshot(save("new")).await.0, 200);
    let loop_task = tokio::spawn(embers_server::retention::maintain(
        store.clone(),
        None,
        Some(Duration::from_secs(1)),
        Duration::from_millis(50),
    ));
    let started = Instant::now();
    while !server.snapshot_list().await.is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10), "not expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "removed before its TTL"
    );
    loop_task.abort();
    server.stop().await;
}

/// `serve` with `args`: the child and its base URL.
async fn serve(db: &TempDb, args: &[&str]) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_embers-server"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--static-dir",
            "/nonexistent",
            "--db",
        ])
        .arg(db.path())
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("started")
        .expect("read")
        .expect("line");
    let base = line
        .strip_prefix("Embers is running at ")
        .expect("URL line")
        .trim_end_matches('/')
        .to_owned();
    (child, base)
}

#[tokio::test]
async fn the_binary_takes_the_write_options_and_allow_debug() {
    let db = TempDb::new();
    let (mut child, base) = serve(&db, &["--max-snapshots", "1", "--allow-debug"]).await;
    let client = reqwest::Client::new();
    let post = |path: &str, body: Vec<u8>| {
        client
            .post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let batch = json!({"app_service": "web", "time": T0, "folded": "[t] web;main 5\n"});
    let ingested = post("/v1/profile/ingest", batch.to_string().into_bytes());
    assert_eq!(ingested.await.expect("ingest").status().as_u16(), 200);
    let query = common::with(common::query_for("web"), json!({"debug": true}));
    let answer = post("/v1/profile/ProfileTracing", query.to_string().into_bytes());
    let envelope: serde_json::Value = answer.await.expect("query").json().await.expect("json");
    assert!(envelope["debug"]["querier_debug"].is_array(), "{envelope}");
    assert_eq!(
        post(SNAPSHOTS, save("a"))
            .await
            .expect("save")
            .status()
            .as_u16(),
        200
    );
    let refused = post(SNAPSHOTS, save("b")).await.expect("save");
    assert_eq!(refused.status().as_u16(), 409);
    assert!(refused
        .text()
        .await
        .expect("text")
        .contains("--max-snapshots"));
    child.kill().await.expect("kill");

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_embers-server"))
        .args([
            "serve",
            "--max-ingest-bytes",
            "1000",
            "--max-ingest-in-flight-bytes",
            "999",
            "--db",
        ])
        .arg(db.path())
        .output()
        .expect("run");
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("--max-ingest-in-flight-bytes"), "{stderr}");
}
