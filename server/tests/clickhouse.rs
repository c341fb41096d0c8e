//! The differential test of the two backends: the same ingest into a SQLite store and into
//! ClickHouse (one node, and two shards behind a Distributed table) must give byte-identical
//! HTTP answers to ProfileTracing (both shapes, `Total`, every tag-filter operator on fixed and
//! open tags, kernel depth, time edges, empty ranges, app_service discovery and its errors) and
//! to the explore endpoints (services, timeline, tags, tag_values); snapshots behave the same.
//!
//! Needs the local ClickHouse of `scripts/clickhouse.sh single` and `cluster` (see
//! `common::clickhouse` for how an absent one is treated).

mod common;

use std::sync::Arc;

use common::clickhouse::{self as ch, Layout};
use common::{query_for, with, TempDb, TestServer, T0};
use embers_server::store::Store;
use serde_json::{json, Value};

fn batch(app: &str, event: &str, time: i64, tags: Value, folded: &str) -> Value {
    json!({
        "app_service": app, "profile_language_type": "eBPF", "profile_event_type": event,
        "profile_value_unit": "microseconds", "time": time, "tags": tags, "folded": folded,
    })
}

/// Batches over two processes, `Total`, two events, fixed and open tags (with a quote), and
/// samples on and just outside the query's time edges.
fn batches() -> Value {
    let a = json!({"host": "node-a", "host_ip": "10.0.0.1", "pod": "redis-0", "pod_ns": "cache",
        "region": "r1", "k8s.label.app": "redis", "vtap": "agent-a", "is_ipv4": "1"});
    let b = json!({"host": "node-b", "host_ip": "10.0.0.2", "pod": "redis-1",
        "pod_ns": "team-o'brien", "region": "r1", "k8s.label.app": "redis", "agent": "agent-b"});
    json!({"batches": [
        batch("redis-server", "on-cpu", T0 + 10, a.clone(), "\
[t] redis-server;main;aeMain;[k] entry_SYSCALL_64;[k] do_syscall_64;[k] ep_poll 100
[t] redis-server;main;aeMain;dictFind 40
[t] redis-server;main;aeMain 5
[t] io_thd_1;[l] start_thread;readQuery;[l] read;[k] entry_SYSCALL_64;[k] vfs_read 30
[t] redis-server;main;aeMain;dictFind 10
"),
        batch("redis-server", "on-cpu", T0, b, "[t] redis-server;main;aeMain;dictFind 7\n"),
        batch("redis-server", "on-cpu", T0 + 60, a.clone(), "[t] redis-server;main;serverCron 3\n"),
        batch("redis-server", "on-cpu", T0 + 61, a.clone(), "[t] redis-server;main;after 1000\n"),
        batch("redis-server", "on-cpu", T0 - 1, a.clone(), "[t] redis-server;main;before 1000\n"),
        batch("redis-server", "mem-alloc", T0 + 5, a, "[t] redis-server;main;zmalloc;[l] malloc 4096\n"),
        batch("nginx", "on-cpu", T0 + 20, json!({"host": "node-a", "pod": "nginx-0", "k8s.label.app": "nginx"}),
            "[t] nginx;ngx_worker_process_cycle;[k] ep_poll 20\n"),
        batch("Total", "on-cpu", T0 + 10, json!({"host": "node-a"}),
            "[p] redis-server;[t] io_thd_1 30\n[p] redis-server 155\n[p] nginx;[t] nginx 20\n"),
        batch("Total", "on-cpu", T0, json!({"host": "node-b"}), "[p] redis-server 7\n"),
    ]})
}

/// The ProfileTracing requests both backends must answer identically.
fn queries() -> Vec<Value> {
    let redis = query_for("redis-server");
    let mut out = vec![
        redis.clone(),
        with(redis.clone(), json!({"result_shape": "A"})),
        query_for("Total"),
        with(
            query_for("Total"),
            json!({"result_shape": "A", "tag_filter": "host='node-b'"}),
        ),
        with(
            redis.clone(),
            json!({"profile_event_type": "mem-alloc", "profile_value_unit": "bytes"}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 + 60, "time_end": T0 + 60}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 - 1, "time_end": T0 - 1}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 + 1000, "time_end": T0 + 2000}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 - 100, "time_end": T0 + 100}),
        ),
        query_for("nope"),
        with(redis.clone(), json!({"app_service": null})),
        with(
            redis.clone(),
            json!({"app_service": null, "tag_filter": "pod='nginx-0'"}),
        ),
        with(
            redis.clone(),
            json!({"app_service": null, "tag_filter": "pod='none'"}),
        ),
    ];
    for depth in [0, 1, 2, -1] {
        out.push(with(
            redis.clone(),
            json!({"max_kernel_stack_depth": depth}),
        ));
    }
    for filter in [
        "pod='redis-0'",
        "pod!='redis-0'",
        "pod IN ('redis-1', 'nginx-0')",
        "pod NOT IN ('redis-1')",
        "pod_ns='team-o''brien'",
        "k8s.label.app='redis'",
        "k8s.label.app!='redis'",
        "k8s.label.app IN ('nginx', 'x')",
        "k8s.label.team NOT IN ('x')",
        "k8s.label.team='x'",
        "is_ipv4=1",
        "is_ipv4 NOT IN (1)",
        "host='node-a' AND region='r1' AND pod_ns!='cache'",
        "time=1700000010",
        "time IN (1700000000, 1700000060)",
        "profile_create_timestamp!=1700000010000000",
        "vtap='agent-a'",
        "agent='agent-b'",
    ] {
        out.push(with(redis.clone(), json!({"tag_filter": filter})));
    }
    out
}

/// The explore requests both backends must answer identically: every endpoint, grouped by each
/// kind of dimension, with filters, limits, prefixes, odd intervals, edges and empty ranges.
fn explore_queries() -> Vec<(&'static str, Value)> {
    let range = json!({"time_start": T0 - 100, "time_end": T0 + 100});
    let r = |extra: Value| with(range.clone(), extra);
    let mut out = vec![
        ("services", r(json!({}))),
        (
            "services",
            r(json!({"profile_event_type": "on-cpu", "tag_filter": "host='node-a'"})),
        ),
        (
            "services",
            json!({"time_start": T0 + 500, "time_end": T0 + 900}),
        ),
        ("tags", r(json!({}))),
        ("tags", r(json!({"app_service": "nginx"}))),
        (
            "tags",
            json!({"time_start": T0 + 500, "time_end": T0 + 900}),
        ),
    ];
    for (interval, extra) in [
        (1, json!({})),
        (7, json!({"app_service": "redis-server"})),
        (60, json!({"group_by": "thread"})),
        (60, json!({"group_by": "pod", "group_limit": 1})),
        (10, json!({"group_by": "k8s.label.app"})),
        (
            3600,
            json!({"group_by": "app_service", "tag_filter": "pod!='redis-0'"}),
        ),
        (
            5,
            json!({"group_by": "is_ipv4", "profile_event_type": "on-cpu"}),
        ),
        (30, json!({"group_by": "host", "app_service": "Total"})),
    ] {
        let ebpf = json!({"interval": interval, "profile_language_type": "eBPF",
            "profile_event_type": "on-cpu"});
        out.push(("timeline", r(with(ebpf, extra))));
    }
    out.push((
        "timeline",
        json!({"time_start": T0 + 61, "time_end": T0 + 61, "interval": 1,
        "profile_language_type": "eBPF", "profile_event_type": "on-cpu"}),
    ));
    for extra in [
        json!({"tag": "pod"}),
        json!({"tag": "pod", "prefix": "redis", "limit": 1}),
        json!({"tag": "k8s.label.app"}),
        json!({"tag": "thread", "app_service": "redis-server"}),
        json!({"tag": "app_service"}),
        json!({"tag": "pod_ns", "tag_filter": "k8s.label.app IN ('redis')"}),
    ] {
        out.push(("tag_values", r(extra)));
    }
    out
}

async fn answers(server: &TestServer, queries: &[(&str, Value)]) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    for (endpoint, q) in queries {
        let (status, body) = server
            .post_raw(
                &format!("/v1/profile/{endpoint}"),
                "application/json",
                q.to_string().into_bytes(),
            )
            .await;
        out.push((status, body));
    }
    out
}

async fn differential(layout: Layout, name: &str) {
    let Some(store) = ch::store(layout, name) else {
        return;
    };
    let db = TempDb::new();
    let sqlite = TestServer::start(&db.path()).await;
    let clickhouse =
        TestServer::start_over(store.clone(), db.dir.path().join("none"), |_| {}).await;
    for server in [&sqlite, &clickhouse] {
        server.ingest(batches()).await;
    }
    let mut queries: Vec<(&str, Value)> = queries()
        .into_iter()
        .map(|q| ("ProfileTracing", q))
        .collect();
    queries.extend(explore_queries());
    let want = answers(&sqlite, &queries).await;
    let got = answers(&clickhouse, &queries).await;
    for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
        assert_eq!(w, g, "the backends differ on {} {}", q.0, q.1);
    }
    // The answers are not all alike: the set exercises matches, empty matches and errors.
    assert!(want
        .iter()
        .any(|(s, b)| *s == 200 && b.contains("dictFind")));
    let statuses: Vec<u16> = want.iter().map(|(s, _)| *s).collect();
    assert!(statuses.contains(&400), "{statuses:?}");
    // Only the discovery errors and bad filters fail: the explore requests all succeed.
    assert_eq!(
        statuses.iter().filter(|s| **s != 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(store.sample_count().expect("count"), 15);
    if let (Layout::TwoShards, Store::ClickHouse(c)) = (layout, &*store) {
        spread_over_shards(&sqlite.client, c.database(), 15).await;
    }
    sqlite.stop().await;
    clickhouse.stop().await;
    ch::drop_database(&store);
}

/// Each shard's local table holds some of the rows, and together all of them.
async fn spread_over_shards(client: &reqwest::Client, database: &str, total: u64) {
    let mut counts = Vec::new();
    for shard in ch::SHARDS {
        let sql = format!("SELECT count() FROM {database}.in_process_local");
        let answer = client.post(shard).body(sql).send().await.expect("shard");
        let text = answer.text().await.expect("body");
        counts.push(
            text.trim()
                .parse::<u64>()
                .unwrap_or_else(|e| panic!("{e}: {text}")),
        );
    }
    assert!(counts.iter().all(|n| *n > 0), "{counts:?}");
    assert_eq!(counts.iter().sum::<u64>(), total, "{counts:?}");
}

#[tokio::test]
async fn profile_tracing_answers_match_sqlite_on_one_node() {
    differential(Layout::Single, "single").await;
}

#[tokio::test]
async fn profile_tracing_answers_match_sqlite_on_two_shards() {
    differential(Layout::TwoShards, "shards").await;
}

/// A snapshot's life on one server: save an answer, list it, fetch it, delete it, miss it.
/// Returns what a client sees, with the id and save time (which differ per save) taken out.
async fn snapshot_life(server: &TestServer, answer: &str) -> Vec<Value> {
    let request = query_for("redis-server");
    let body = common::snapshots::save_body(&request, answer, Some("before the fix"));
    let (status, saved) = server.save_snapshot(body).await;
    assert_eq!(status, 200, "{saved}");
    let id = saved["result"]["id"].as_str().expect("an id").to_owned();
    let path = format!("{}/{id}", common::snapshots::SNAPSHOTS);
    let strip = |mut v: Value| {
        for key in ["result", "snapshot"] {
            if let Some(m) = v[key].as_object_mut() {
                m.remove("id");
                m.remove("saved_at");
            }
        }
        v
    };
    let mut seen = vec![strip(saved)];
    let list = server.snapshot_list().await;
    seen.push(json!(list.len()));
    let (status, _, text) = server.get(&path).await;
    seen.push(json!(status));
    seen.push(strip(
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    ));
    let (status, deleted) = server.delete(&path).await;
    seen.extend([json!(status), strip(deleted)]);
    let (status, _, _) = server.get(&path).await;
    seen.push(json!(status));
    let (status, _) = server.delete(&path).await;
    seen.push(json!(status));
    seen.push(json!(server.snapshot_list().await.len()));
    seen
}

/// Snapshots answer the same on both backends (one node and two shards).
#[tokio::test]
async fn snapshots_match_sqlite() {
    for layout in [Layout::Single, Layout::TwoShards] {
        let Some(store) = ch::store(layout, "snaps") else {
            return;
        };
        let db = TempDb::new();
        let sqlite = TestServer::start(&db.path()).await;
        let clickhouse = TestServer::start_over(store.clone(), "none".into(), |_| {}).await;
        sqlite.ingest(batches()).await;
        let request = query_for("redis-server").to_string().into_bytes();
        let (status, answer) = sqlite
            .post_raw("/v1/profile/ProfileTracing", "application/json", request)
            .await;
        assert_eq!(status, 200, "{answer}");
        let want = snapshot_life(&sqlite, &answer).await;
        let got = snapshot_life(&clickhouse, &answer).await;
        assert_eq!(want, got);
        assert_eq!(want[2], json!(200));
        assert_eq!(want[6], json!(404));
        sqlite.stop().await;
        clickhouse.stop().await;
        ch::drop_database(&store);
    }
}

/// Ingest is checked as SQLite checks it, plus the one limit of a `DateTime` column.
#[tokio::test]
async fn bad_ingest_is_refused_with_a_reason() {
    let Some(store) = ch::store(Layout::Single, "refuse") else {
        return;
    };
    let server = TestServer::start_over(Arc::clone(&store), "none".into(), |_| {}).await;
    for (b, want) in [
        (
            batch("a", "on-cpu", 5_000_000_000, json!({}), "x 1\n"),
            "outside what the ClickHouse store keeps",
        ),
        (
            batch("a", "on-cpu", T0, json!({}), "x;;y 1\n"),
            "empty frame",
        ),
    ] {
        let (status, body) = server.post("/v1/profile/ingest", &b).await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["DESCRIPTION"].as_str().unwrap_or("").contains(want),
            "{body}"
        );
    }
    assert_eq!(store.sample_count().expect("count"), 0);
    server.stop().await;
    ch::drop_database(&store);
}
