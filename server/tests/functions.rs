//! The functions endpoints on the SQLite store over real HTTP, against known data
//! (`common::functions`, which `clickhouse.rs` runs on ClickHouse too): exact sums, and the
//! function rollup kept through a restart, a process deletion and retention.

use crate::common;

use std::sync::Arc;

use common::functions::{answer, batches, check, long, now, rows, H};
use common::{TempDb, TestServer, T0};
use embers_server::retention;

#[tokio::test]
async fn functions_answer_exactly() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server.ingest(batches()).await;
    check(&server).await;
    server.stop().await;
}

/// Ingest split over many calls (so rollup rows are merged), a restart, and the same answers.
#[tokio::test]
async fn the_rollup_adds_up_across_calls_and_restarts() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let all = batches();
    for b in all["batches"].as_array().expect("batches") {
        server.ingest(b.clone()).await;
    }
    let before = answer(&server, long()).await;
    server.stop().await;
    let server = TestServer::start(&db.path()).await;
    assert_eq!(answer(&server, long()).await, before);
    check(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn deleting_a_process_and_retention_remove_its_functions() {
    let db = TempDb::new();
    let mut store = None;
    let server = TestServer::start_with(&db.path(), |s| store = Some(Arc::clone(&s.store))).await;
    let store = store.expect("the store");
    server.ingest(batches()).await;
    let (status, deleted) = server.delete("/v1/profile/processes/nginx").await;
    assert_eq!(status, 200, "{deleted}");
    assert!(
        deleted["result"]["rollup_rows_deleted"]
            .as_u64()
            .unwrap_or(0)
            > 0
    );
    let a = answer(&server, now()).await;
    assert_eq!(a.value, 62);
    assert!(rows(&a)
        .iter()
        .all(|(f, _, _)| !f.contains("ngx") && *f != "[t] nginx"));
    // A cutoff on a whole hour: H's hour and everything before it go, buckets and samples.
    retention::pass_before(&store, H + 3600)
        .await
        .expect("a retention pass");
    let a = answer(&server, long()).await;
    assert_eq!(a.value, 600, "serverCron 300 + 200 + 100 after the cutoff");
    assert_eq!(
        rows(&a),
        [
            ("serverCron", 600, 600),
            ("[t] redis-server", 0, 600),
            ("main", 0, 600)
        ]
    );
    retention::pass_before(&store, T0 + 100_000)
        .await
        .expect("a retention pass");
    let a = answer(&server, long()).await;
    assert_eq!((a.value, a.rows), (0, 0));
    let rollup_rows: i64 = rusqlite::Connection::open(db.path())
        .expect("open")
        .query_row(
            "SELECT (SELECT COUNT(*) FROM functions_1h) + (SELECT COUNT(*) FROM functions_10m)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(rollup_rows, 0, "every function rollup row expired");
    server.stop().await;
}
