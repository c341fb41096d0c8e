//! The differential test of the two backends: the same ingest into a SQLite store and into
//! ClickHouse (one node, and two shards behind a Distributed table) must give byte-identical
//! HTTP answers to ProfileTracing (both shapes, `Total`, every tag-filter operator on fixed and
//! open tags, kernel depth, time edges, empty ranges, app_service discovery and its errors) and
//! to the explore endpoints (services, timeline, tags, tag_values, functions, function_timeline);
//! snapshots behave the same, and the functions endpoints give the same exact sums.
//!
//! Needs the local ClickHouse of `scripts/clickhouse.sh single` and `cluster` (see
//! `common::clickhouse` for how an absent one is treated).

use crate::common;

use std::sync::Arc;

use common::clickhouse::{self as ch, Layout, Pair};
use common::differential::{all_queries, answers, batches};
use common::groups;
use common::{batch, query_for, TestServer, T0};
use embers_server::store::Store;
use serde_json::{json, Value};

async fn differential(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    let (store, sqlite, clickhouse) = (&pair.store, &pair.sqlite, &pair.clickhouse);
    for server in [sqlite, clickhouse] {
        server.ingest(batches()).await;
    }
    let queries = all_queries();
    let want = answers(sqlite, &queries).await;
    let got = answers(clickhouse, &queries).await;
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
    if let (Layout::TwoShards, Store::ClickHouse(c)) = (layout, &**store) {
        spread_over_shards(&sqlite.client, c.database(), 15).await;
    }
    pair.finish().await;
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

/// The functions endpoints' exact answers (`common::functions`), on ClickHouse.
async fn functions_exactly(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    // One call per batch: each writes its own rollup parts.
    let all = common::functions::batches();
    for b in all["batches"].as_array().expect("batches") {
        pair.clickhouse.ingest(json!({"batches": [b]})).await;
    }
    common::functions::check(&pair.clickhouse).await;
    // The maintenance loop's compaction merges the settled partitions' parts: the same sums.
    pair.store.compact(T0 + 86_400).expect("compact");
    if let (Layout::Single, Store::ClickHouse(store)) = (layout, pair.store.as_ref()) {
        let sql = format!(
            "SELECT max(c) FROM (SELECT count() AS c FROM system.parts WHERE active AND \
             database = '{}' AND table = 'functions_rollup' GROUP BY partition_id)",
            store.database()
        );
        let answer = reqwest::Client::new()
            .post(ch::SINGLE)
            .body(sql)
            .send()
            .await;
        let text = answer.expect("parts").text().await.expect("body");
        assert_eq!(text.trim(), "1", "one part per settled partition");
    }
    assert_eq!(pair.store.compact(T0 + 86_400).expect("compact again"), 0);
    common::functions::check(&pair.clickhouse).await;
    pair.finish().await;
}

#[tokio::test]
async fn functions_answer_exactly_on_one_node() {
    functions_exactly(Layout::Single, "fn_single").await;
}

#[tokio::test]
async fn functions_answer_exactly_on_two_shards() {
    functions_exactly(Layout::TwoShards, "fn_shards").await;
}

#[tokio::test]
async fn profile_tracing_answers_match_sqlite_on_one_node() {
    differential(Layout::Single, "single").await;
}

#[tokio::test]
async fn profile_tracing_answers_match_sqlite_on_two_shards() {
    differential(Layout::TwoShards, "shards").await;
}

/// The timeline's default grouping (`common::groups`): ClickHouse answers byte for byte as
/// SQLite, and both answer the ten largest pods by name and the rest as `other`.
async fn default_groups(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    let request = [("timeline", groups::request(json!({})))];
    let mut bodies = Vec::new();
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(groups::batches()).await;
        let (status, body) = answers(server, &request).await.remove(0);
        assert_eq!(status, 200, "{body}");
        let envelope: Value = serde_json::from_str(&body).expect("an envelope");
        groups::check(&serde_json::from_value(envelope["result"].clone()).expect("a timeline"));
        bodies.push(body);
    }
    assert_eq!(bodies[0], bodies[1]);
    pair.finish().await;
}

#[tokio::test]
async fn default_groups_match_sqlite_on_one_node() {
    default_groups(Layout::Single, "groups_single").await;
}

#[tokio::test]
async fn default_groups_match_sqlite_on_two_shards() {
    default_groups(Layout::TwoShards, "groups_shards").await;
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
        let Some(pair) = Pair::start(layout, "snaps").await else {
            return;
        };
        let (sqlite, clickhouse) = (&pair.sqlite, &pair.clickhouse);
        sqlite.ingest(batches()).await;
        let request = query_for("redis-server").to_string().into_bytes();
        let (status, answer) = sqlite
            .post_raw("/v1/profile/ProfileTracing", "application/json", request)
            .await;
        assert_eq!(status, 200, "{answer}");
        let want = snapshot_life(sqlite, &answer).await;
        let got = snapshot_life(clickhouse, &answer).await;
        assert_eq!(want, got);
        assert_eq!(want[2], json!(200));
        assert_eq!(want[6], json!(404));
        pair.finish().await;
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

/// A rollup written before the six-hour level existed (emulated: its six-hour rows and the
/// record of where they start are removed) is read by the hour once a server opens the store
/// again, with the same exact sums; without that record a six-hour bucket would miss them.
#[tokio::test]
async fn a_rollup_older_than_six_hour_buckets_is_read_by_the_hour() {
    let Some(pair) = Pair::start(Layout::Single, "fn_wide_from").await else {
        return;
    };
    pair.clickhouse.ingest(common::functions::batches()).await;
    common::functions::wide_range(&pair.clickhouse).await;
    let Store::ClickHouse(store) = pair.store.as_ref() else {
        panic!("a ClickHouse store");
    };
    let db = store.database().to_owned();
    let client = reqwest::Client::new();
    for table in ["functions_rollup", "functions_fleet"] {
        let sql = format!("ALTER TABLE {db}.{table} DELETE WHERE level = 21600");
        ch::mutate(&client, &db, sql).await;
    }
    ch::mutate(
        &client,
        &db,
        format!("ALTER TABLE {db}.wide_from DELETE WHERE 1"),
    )
    .await;
    let missing = common::functions::answer(&pair.clickhouse, common::functions::wide()).await;
    assert_eq!(
        missing.value,
        11 + 13 + 23 + 29,
        "the emulation took the six-hour bucket's 36 away"
    );
    let server = ch::reopened(db).await;
    common::functions::wide_range(&server).await;
    server.stop().await;
    pair.finish().await;
}
