//! Retention and deleting a process on ClickHouse (one node, and two shards), against SQLite:
//! after the same retention pass (a cutoff inside an hour, so whole hour partitions are dropped
//! and the straddling hour is cut by a mutation) and after the same `DELETE
//! /v1/profile/processes/{app_service}`, every differential request answers byte for byte alike
//! and the counts agree; `embers-server delete` works on ClickHouse too.
//!
//! Needs the local ClickHouse of `scripts/clickhouse.sh single` and `cluster`.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::clickhouse::{self as ch, Layout, Pair};
use common::differential::{all_queries, answers, batches};
use common::{batch, query_for, TestServer, T0};
use embers_server::retention;
use embers_server::store::Store;
use serde_json::{json, Value};

/// Inside the hour of T0 (which starts at T0 - 800) and on a minute boundary, so SQLite's
/// rollup buckets up to a minute long end on it.
const CUTOFF: i64 = T0 + 40;

/// Samples one and two hours before T0 (partitions that wholly expire) and some after the
/// cutoff in T0's hour (kept).
fn around_the_cutoff() -> Value {
    let a = json!({"host": "node-a", "pod": "nginx-0", "k8s.label.app": "nginx"});
    json!({"batches": [
        batch("nginx", "on-cpu", T0 - 3600, a.clone(), "[t] nginx;old 9\n"),
        batch("nginx", "on-cpu", T0 - 7300, json!({"host": "node-b"}), "[t] nginx;older 8\n"),
        batch("Total", "on-cpu", T0 + 45, json!({"host": "node-a"}), "[p] nginx;[t] nginx 3\n"),
        batch("nginx", "on-cpu", T0 + 50, a, "[t] nginx;ngx_worker_process_cycle;[k] ep_poll 3\n"),
        batch("redis-server", "on-cpu", T0 + 41, json!({"host": "node-a", "pod": "redis-0"}),
            "[t] redis-server;main;aeMain;dictFind 6\n[t] io_thd_1;readQuery 2\n"),
    ]})
}

async fn same_answers(sqlite: &TestServer, clickhouse: &TestServer, when: &str) -> Vec<String> {
    let queries = all_queries();
    let want = answers(sqlite, &queries).await;
    let got = answers(clickhouse, &queries).await;
    for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
        assert_eq!(w, g, "{when}: the backends differ on {} {}", q.0, q.1);
    }
    want.into_iter().map(|(_, body)| body).collect()
}

async fn delete(server: &TestServer, app: &str) -> Value {
    let (status, envelope) = server.delete(&format!("/v1/profile/processes/{app}")).await;
    assert_eq!(status, 200, "{envelope}");
    envelope["result"].clone()
}

/// Deleted samples of both answers (equal), checking ClickHouse deleted function rollup rows
/// when it deleted samples (its only rollup; their count differs from SQLite's two).
async fn delete_on_both(sqlite: &TestServer, clickhouse: &TestServer, app: &str) -> u64 {
    let (want, got) = (delete(sqlite, app).await, delete(clickhouse, app).await);
    assert_eq!(want["samples_deleted"], got["samples_deleted"], "{app}");
    let samples = got["samples_deleted"].as_u64().unwrap_or(0);
    let rollup = got["rollup_rows_deleted"].as_u64().unwrap_or(0);
    assert_eq!(samples > 0, rollup > 0, "{got}");
    samples
}

async fn retention_and_delete(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    let (store, sqlite_store) = (&pair.store, &pair.sqlite_store);
    let (sqlite, clickhouse) = (&pair.sqlite, &pair.clickhouse);
    for server in [sqlite, clickhouse] {
        server.ingest(batches()).await;
        server.ingest(around_the_cutoff()).await;
    }
    let stores = [sqlite_store, store];
    let before = same_answers(sqlite, clickhouse, "after ingest").await;
    assert_eq!(store.sample_count().expect("count"), 21);

    // A pass drops the two old hours and cuts T0's hour at the cutoff, as SQLite does.
    let mut removed = Vec::new();
    for s in stores {
        removed.push(retention::pass_before(s, CUTOFF).await.expect("pass"));
    }
    assert_eq!(removed[0].samples, removed[1].samples);
    assert_eq!(
        removed[1].samples, 15,
        "all but the 6 samples at T0+41..T0+61"
    );
    assert_eq!(store.sample_count().expect("count"), 6);
    assert_eq!(sqlite_store.sample_count().expect("count"), 6);
    let after = same_answers(sqlite, clickhouse, "after a retention pass").await;
    assert_ne!(before, after, "the pass changed answers");
    let again = retention::pass_before(store, CUTOFF).await.expect("pass");
    assert_eq!(again, Default::default(), "nothing left to expire");

    // Deleting a process, then again (idempotent).
    assert_eq!(delete_on_both(sqlite, clickhouse, "nginx").await, 1);
    let after_delete = same_answers(sqlite, clickhouse, "after deleting nginx").await;
    assert_ne!(after, after_delete, "the delete changed answers");
    assert_eq!(delete_on_both(sqlite, clickhouse, "nginx").await, 0);
    assert_eq!(store.sample_count().expect("count"), 5);

    // 72 hours of retention (the default) expires everything of 2023.
    for s in stores {
        let r = retention::pass(s, Duration::from_secs(72 * 3600)).await;
        assert_eq!(r.expect("pass").samples, 5);
        assert_eq!(s.sample_count().expect("count"), 0);
    }
    same_answers(sqlite, clickhouse, "after everything expired").await;
    pair.finish().await;
}

#[tokio::test]
async fn retention_and_delete_answer_as_sqlite_on_one_node() {
    retention_and_delete(Layout::Single, "ret1").await;
}

#[tokio::test]
async fn retention_and_delete_answer_as_sqlite_on_two_shards() {
    retention_and_delete(Layout::TwoShards, "ret2").await;
}

/// The arguments choosing `store` on the command line.
fn store_args(layout: Layout, store: &Store) -> Vec<String> {
    let Store::ClickHouse(c) = store else {
        panic!("a ClickHouse store");
    };
    let mut args = vec!["--clickhouse-database".to_owned(), c.database().to_owned()];
    let urls = match layout {
        Layout::Single => vec![ch::SINGLE],
        Layout::TwoShards => {
            args.extend(["--clickhouse-cluster".to_owned(), "embers".to_owned()]);
            ch::SHARDS.to_vec()
        }
    };
    for url in urls {
        args.extend(["--clickhouse-url".to_owned(), url.to_owned()]);
    }
    args
}

#[tokio::test]
async fn the_delete_subcommand_deletes_on_clickhouse() {
    for layout in [Layout::Single, Layout::TwoShards] {
        let Some(store) = ch::store(layout, "delcmd") else {
            return;
        };
        let server = TestServer::start_over(Arc::clone(&store), "none".into(), |_| {}).await;
        server.ingest(batches()).await;
        let mut args: Vec<String> = ["delete", "--app-service", "redis-server"]
            .map(str::to_owned)
            .into();
        args.extend(store_args(layout, &store));
        let stdout = common::process::run_ok(args);
        assert!(
            stdout.starts_with("deleted 10 samples and ")
                && stdout.contains(" rollup rows of app_service 'redis-server' from clickhouse")
                && !stdout.contains(" and 0 rollup rows"),
            "{stdout}"
        );
        assert_eq!(store.sample_count().expect("count"), 5);
        assert_eq!(server.folded(&query_for("redis-server")).await, "");
        assert_ne!(server.folded(&query_for("Total")).await, "");
        server.stop().await;
        ch::drop_database(&store);
    }
}
