//! Retention and deletion over real HTTP and the real store: expired samples and their rollup
//! buckets go (by a direct pass and by the background task, while ingest and queries go on),
//! the space comes back, recent data stays; `DELETE /v1/profile/processes/{app_service}` and
//! `embers-server delete` remove exactly one process; snapshots stay.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{query_for, with, TempDb, TestServer, T0};
use embers_server::retention;
use embers_server::store::Store;
use serde_json::json;

const DAY: i64 = 86_400;

fn now() -> i64 {
    embers_server::store::ingest::now_micros() / 1_000_000
}

/// Start a server and keep its store.
async fn start(db: &TempDb) -> (TestServer, Arc<Store>) {
    let mut store = None;
    let server = TestServer::start_with(&db.path(), |s| store = Some(s.store.clone())).await;
    (server, store.expect("store"))
}

/// `n` samples of `app` at `time`, `per_batch` lines per request.
async fn fill(server: &TestServer, app: &str, time: i64, n: usize) {
    for chunk in 0..n.div_ceil(500) {
        let lines: String = (chunk * 500..((chunk + 1) * 500).min(n))
            .map(|i| format!("[t] w;main;f{} 1\n", i % 50))
            .collect();
        server
            .ingest(json!({"app_service": app, "time": time, "folded": lines}))
            .await;
    }
}

/// Services of `[from, to]` as `(app, value)`.
async fn services(server: &TestServer, from: i64, to: i64) -> Vec<(String, u64)> {
    let (status, envelope) = server
        .post(
            "/v1/profile/services",
            &json!({"time_start": from, "time_end": to}),
        )
        .await;
    assert_eq!(status, 200, "{envelope}");
    let rows = envelope["result"]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    rows.iter()
        .map(|r| {
            (
                r[0].as_str().unwrap_or("").to_owned(),
                r[3].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The file's pages in use (page_count - freelist_count) and its page count.
fn pages(path: &Path) -> (i64, i64) {
    let conn = rusqlite::Connection::open(path).expect("open");
    let count: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .expect("pages");
    let free: i64 = conn
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .expect("free");
    (count - free, count)
}

fn checkpoint(path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
}

#[tokio::test]
async fn a_pass_removes_expired_samples_and_gives_the_space_back() {
    let db = TempDb::new();
    let (server, store) = start(&db).await;
    assert!(
        store
            .sqlite()
            .expect("sqlite")
            .reclaims_space()
            .expect("mode"),
        "new files vacuum incrementally"
    );
    let recent = now() - 3600;
    fill(&server, "old", T0, 20_000).await;
    fill(&server, "mix", T0 + 60, 5_000).await;
    fill(&server, "mix", recent, 300).await;
    // A snapshot of the old data: retention never touches snapshots.
    let body =
        common::snapshots::save_body(&query_for("old"), &common::snapshots::big_answer(3), None);
    let (status, saved) = server.save_snapshot(body).await;
    assert_eq!(status, 200, "{saved}");
    checkpoint(&db.path());
    let (_, before) = pages(&db.path());

    let removed = retention::pass(&store, Duration::from_secs(72 * 3600))
        .await
        .expect("pass");
    assert_eq!(removed.samples, 25_000);
    assert!(removed.rollup_rows > 0);
    assert_eq!(store.sample_count().expect("count"), 300);
    checkpoint(&db.path());
    let (used, after) = pages(&db.path());
    assert!(after < before * 2 / 3, "file {before} -> {after} pages");
    assert_eq!(used, after, "no free pages left in the file");

    // Expired data is gone from every read; recent data answers as before.
    assert_eq!(services(&server, T0 - DAY, T0 + DAY).await, vec![]);
    let old = with(query_for("old"), json!({"time_end": T0 + 3600}));
    let (status, envelope) = server.query(&old).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(common::folded_of(&envelope), "");
    let (status, envelope) = server
        .post(
            "/v1/profile/timeline",
            &with(query_for("mix"), json!({"time_end": T0 + 3600})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(envelope["result"]["values"], json!([]));
    assert_eq!(
        services(&server, recent - 10, recent + 10).await,
        vec![("mix".to_owned(), 300)]
    );
    let q = with(
        query_for("mix"),
        json!({"time_start": recent, "time_end": recent}),
    );
    assert_eq!(server.folded(&q).await.lines().count(), 50);
    let list = server.snapshot_list().await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], saved["result"]["id"]);
    // Nothing left to do.
    let again = retention::pass(&store, Duration::from_secs(72 * 3600))
        .await
        .expect("pass");
    assert_eq!(again, Default::default());
    server.stop().await;
}

#[tokio::test]
async fn the_background_task_expires_data_while_ingest_and_queries_go_on() {
    let db = TempDb::new();
    let (server, store) = start(&db).await;
    fill(&server, "old", T0, 30_000).await;
    let task = tokio::spawn(retention::run(
        store.clone(),
        Some(Duration::from_secs(3600)),
        Duration::from_millis(50),
    ));
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut rounds = 0u64;
    // Until only this loop's own samples are left.
    while store.sample_count().expect("count") > rounds {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "retention did not finish"
        );
        let t = Instant::now();
        server
            .ingest(json!({"app_service": "new", "time": now(), "folded": "[t] w;a 1\n"}))
            .await;
        let range = json!({"time_start": now() - 60, "time_end": now() + 60});
        let (status, _) = server.post("/v1/profile/services", &range).await;
        assert_eq!(status, 200);
        slowest = slowest.max(t.elapsed());
        rounds += 1;
    }
    task.abort();
    assert!(
        slowest < Duration::from_secs(2),
        "an ingest + query took {slowest:?}"
    );
    let left = services(&server, now() - 120, now() + 120).await;
    assert_eq!(left, vec![("new".to_owned(), rounds)]);
    server.stop().await;
}

#[tokio::test]
async fn deleting_a_process_over_http_removes_exactly_that_process() {
    let db = TempDb::new();
    let (server, store) = start(&db).await;
    fill(&server, "gone", T0, 1200).await;
    server
        .ingest(
            json!({"app_service": "gone", "time": T0, "profile_event_type": "mem-alloc",
            "folded": "[t] w;malloc 4096\n"}),
        )
        .await;
    fill(&server, "kept", T0, 100).await;
    let (status, envelope) = server.delete("/v1/profile/processes/gone").await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "SUCCESS");
    assert_eq!(envelope["result"]["samples_deleted"], 1201);
    assert_eq!(store.sample_count().expect("count"), 100);
    assert_eq!(
        services(&server, T0 - 10, T0 + 10).await,
        vec![("kept".to_owned(), 100)]
    );
    assert_eq!(server.folded(&query_for("gone")).await, "");
    assert_eq!(server.folded(&query_for("kept")).await.lines().count(), 50);
    // Idempotent; other methods are refused with the envelope.
    let (status, envelope) = server.delete("/v1/profile/processes/gone").await;
    assert_eq!(
        (status, envelope["result"]["samples_deleted"].clone()),
        (200, json!(0))
    );
    let (status, _, body) = server.get("/v1/profile/processes/kept").await;
    assert_eq!(status, 405, "{body}");
    assert!(body.contains("use DELETE"), "{body}");
    // Ingest into the deleted process works again, explore included.
    fill(&server, "gone", T0, 10).await;
    assert_eq!(
        services(&server, T0 - 10, T0 + 10).await,
        vec![("kept".to_owned(), 100), ("gone".to_owned(), 10)]
    );
    server.stop().await;
}

#[tokio::test]
async fn the_delete_subcommand_removes_one_process() {
    let db = TempDb::new();
    let (server, _) = start(&db).await;
    fill(&server, "a", T0, 700).await;
    fill(&server, "b", T0, 30).await;
    server.stop().await;
    let path = db.path();
    let stdout = common::process::run_ok(
        ["delete", "--app-service", "a", "--db"]
            .map(std::ffi::OsStr::new)
            .into_iter()
            .chain([path.as_os_str()]),
    );
    assert!(stdout.starts_with("deleted 700 samples and "), "{stdout}");
    let (server, store) = start(&db).await;
    assert_eq!(store.sample_count().expect("count"), 30);
    assert_eq!(
        services(&server, T0 - 10, T0 + 10).await,
        vec![("b".to_owned(), 30)]
    );
    server.stop().await;
}
