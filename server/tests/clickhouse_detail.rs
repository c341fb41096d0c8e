//! The detail below a sample on ClickHouse against SQLite (issues 36 and 37): the same ingest
//! with source lines and event times into a SQLite store and into ClickHouse (one node, and two
//! shards behind a Distributed table) gives byte-identical answers to `function_lines`, the
//! heatmap, the samples, ProfileTracing narrowed to a millisecond window and the pprof export
//! (its `Line`s), also after the fine retention emptied the times of a straddled hour and of
//! whole hours; and a store made before those columns is migrated when a server opens it, its
//! old samples answering as before and without lines or times.
//!
//! Needs the local ClickHouse of `scripts/clickhouse.sh single` and `cluster` (see
//! `common::clickhouse` for how an absent one is treated).

use crate::common;

use common::clickhouse::{self as ch, Layout, Pair};
use common::differential::answers;
use common::{with, TestServer, T0};
use embers_server::store::Store;
use serde_json::{json, Value};

fn at(file: &str, line: u32) -> Value {
    json!({"file": file, "line": line})
}

fn ev(offset_ms: u16, tid: u32, weight: u64) -> Value {
    json!({"offset_ms": offset_ms, "tid": tid, "weight": weight})
}

fn one(app: &str, time: i64, tags: Value, folded: &str, details: Value) -> Value {
    json!({"app_service": app, "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "profile_value_unit": "microseconds", "time": time, "tags": tags, "folded": folded,
        "details": details})
}

/// Two processes over three seconds: samples with lines and times, with lines only, with times
/// only, with neither; recursion at two lines; a frame without a line; two hosts.
fn batches() -> Value {
    json!({"batches": [
        one("c", T0, json!({"host": "node-a"}), "main;work;spin 30\nmain;work 20\nmain;idle 10\n", json!([
            {"sample": 0, "lines": [at("m.c", 3), at("m.c", 9), at("m.c", 20)],
             "events": [ev(10, 7, 10), ev(510, 7, 10), ev(900, 8, 10)]},
            {"sample": 1, "lines": [at("m.c", 3), at("m.c", 11)], "events": [ev(100, 7, 20)]},
        ])),
        one("c", T0 + 1, json!({"host": "node-b"}), "main;work;spin 40\nmain;work;work 5\nmain;idle 4\n", json!([
            {"sample": 0, "lines": [at("m.c", 4), at("m.c", 9), at("m.c", 21)],
             "events": [ev(0, 7, 20), ev(600, 9, 20)]},
            {"sample": 1, "lines": [at("m.c", 3), at("m.c", 11), at("m.c", 12)]},
            {"sample": 2, "events": [ev(999, 7, 4)]},
        ])),
        one("d", T0 + 1, json!({"host": "node-a"}), "main;work 8\n", json!([
            {"sample": 0, "lines": [null, at("d.go", 5)], "events": [ev(250, 1, 8)]},
        ])),
        one("c", T0 + 2, json!({"host": "node-a"}), "main;work;spin 6\n", json!([])),
    ]})
}

/// Every request both backends must answer alike.
fn queries() -> Vec<(&'static str, Value)> {
    let c = json!({"app_service": "c", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": T0, "time_end": T0 + 60});
    let all = with(c.clone(), json!({"app_service": null}));
    let ms = T0 * 1000;
    let mut out = Vec::new();
    for (base, function) in [
        (&c, "work"),
        (&c, "spin"),
        (&c, "main"),
        (&c, "idle"),
        (&c, "nope"),
        (&all, "work"),
    ] {
        out.push((
            "function_lines",
            with(base.clone(), json!({"function": function})),
        ));
    }
    for extra in [
        json!({"tag_filter": "host='node-b'"}),
        json!({"time_start": T0 + 1, "time_end": T0 + 1}),
        json!({"time_start": T0 + 2, "time_end": T0 + 9}),
    ] {
        out.push((
            "function_lines",
            with(c.clone(), with(extra, json!({"function": "work"}))),
        ));
    }
    let near = with(c.clone(), json!({"time_end": T0 + 2}));
    for extra in [
        json!({"slots_per_second": 10}),
        json!({"slots_per_second": 1000, "app_service": null}),
        json!({"slots_per_second": 4, "tag_filter": "host='node-a'"}),
        json!({"time_start_ms": ms + 50, "time_end_ms": ms + 1700}),
    ] {
        out.push(("heatmap", with(near.clone(), extra)));
    }
    for extra in [
        json!({}),
        json!({"app_service": null}),
        json!({"time_start_ms": ms + 50, "time_end_ms": ms + 1700}),
    ] {
        out.push(("samples", with(near.clone(), extra)));
    }
    for extra in [
        json!({"time_start_ms": ms + 50, "time_end_ms": ms + 1550}),
        json!({"time_start_ms": ms + 50, "time_end_ms": ms + 1550, "result_shape": "A"}),
        json!({"time_start_ms": ms + 500, "time_end_ms": ms + 1000, "app_service": null}),
        json!({"time_start_ms": ms, "time_end_ms": ms + 2000}),
        json!({"time_start_ms": ms + 1990, "time_end_ms": ms + 2010}),
    ] {
        out.push(("ProfileTracing", with(c.clone(), extra)));
    }
    for extra in [
        json!({}),
        json!({"time_start_ms": ms + 50, "time_end_ms": ms + 1550}),
    ] {
        out.push(("pprof", with(c.clone(), extra)));
    }
    out
}

/// Asks every request of [`queries`] of both servers and requires the same answers.
async fn same_answers(pair: &Pair, when: &str) -> Vec<(u16, String)> {
    let queries = queries();
    let want = answers(&pair.sqlite, &queries).await;
    let got = answers(&pair.clickhouse, &queries).await;
    for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
        assert_eq!(w, g, "{when}: the backends differ on {} {}", q.0, q.1);
    }
    want
}

async fn detail(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(batches()).await;
    }
    let want = same_answers(&pair, "after ingest").await;
    assert!(want.iter().all(|(s, _)| *s == 200), "{want:?}");
    // The answers hold what the data says, not only the same on both.
    let lines: Value = serde_json::from_str(&want[0].1).expect("json");
    assert_eq!(
        lines["result"]["values"],
        json!([["m.c", 9, 0, 70], ["m.c", 11, 20, 25], ["m.c", 12, 5, 5]]),
        "{lines}"
    );
    let heatmap: Value = serde_json::from_str(&want[9].1).expect("json");
    assert_eq!(heatmap["result"]["resolution"], "ms", "{heatmap}");
    // The fine retention: the straddled hour's older rows (a mutation), then whole hours
    // (cleared partitions) lose their times on both alike.
    for (cutoff, what) in [(T0 + 1, "a second"), (T0 + 3 * 3600, "whole hours")] {
        let removed: Vec<u64> = [&pair.sqlite_store, &pair.store]
            .iter()
            .map(|s| s.expire_fine_step(cutoff, 10_000).expect("fine retention"))
            .collect();
        assert!(removed.iter().all(|n| *n > 0), "{what}: {removed:?}");
        let again = pair.store.expire_fine_step(cutoff, 10_000).expect("again");
        assert_eq!(again, 0, "{what}: a second step finds nothing left");
        same_answers(&pair, what).await;
    }
    let (_, after) =
        answers(&pair.clickhouse, &[("heatmap", queries()[9].1.clone())]).await[0].clone();
    assert!(after.contains(r#""resolution":"s""#), "{after}");
    pair.finish().await;
}

#[tokio::test]
async fn lines_and_times_answer_alike_on_one_node() {
    detail(Layout::Single, "detail_single").await;
}

#[tokio::test]
async fn lines_and_times_answer_alike_on_two_shards() {
    detail(Layout::TwoShards, "detail_shards").await;
}

/// Runs `sql` on the single node; its answer.
async fn run(client: &reqwest::Client, sql: String) -> String {
    let answer = client.post(ch::SINGLE).body(sql.clone()).send().await;
    let answer = answer.expect("ClickHouse");
    let ok = answer.status().is_success();
    let text = answer.text().await.expect("body");
    assert!(ok, "{sql}: {text}");
    text
}

#[tokio::test]
async fn a_store_made_before_lines_and_times_is_migrated_on_open() {
    let Some(store) = ch::store(Layout::Single, "detail_migrate") else {
        return;
    };
    let Store::ClickHouse(c) = store.as_ref() else {
        unreachable!("a ClickHouse store")
    };
    let db = c.database().to_owned();
    let old = TestServer::start_over(store.clone(), "none".into(), |_| {}).await;
    let plain =
        json!({"batches": [one("c", T0, json!({}), "main;work 5\nmain;idle 2\n", json!([]))]});
    old.ingest(plain).await;
    let client = old.client.clone();
    let tracing = queries()
        .into_iter()
        .filter(|(e, _)| *e == "ProfileTracing")
        .collect::<Vec<_>>();
    let before = answers(&old, &tracing).await;
    old.stop().await;
    // The table as servers before lines and times made it.
    run(
        &client,
        format!("ALTER TABLE {db}.in_process DROP COLUMN line_stack_id, DROP COLUMN events"),
    )
    .await;
    let new = ch::reopened(db.clone()).await;
    let columns = run(
        &client,
        format!(
            "SELECT name FROM system.columns WHERE database = '{db}' AND table = 'in_process' \
             AND name IN ('line_stack_id', 'events') ORDER BY name"
        ),
    )
    .await;
    assert_eq!(columns, "events\nline_stack_id\n");
    assert_eq!(answers(&new, &tracing).await, before);
    let lines = with(queries()[0].1.clone(), json!({}));
    let (_, answer) = new.post("/v1/profile/function_lines", &lines).await;
    assert_eq!(answer["result"]["reason"], "no_line_info", "{answer}");
    let heatmap = queries()[9].1.clone();
    let (_, answer) = new.post("/v1/profile/heatmap", &heatmap).await;
    assert_eq!(answer["result"]["resolution"], "s", "{answer}");
    // New samples keep their detail beside the old ones.
    new.ingest(batches()).await;
    let (_, answer) = new.post("/v1/profile/function_lines", &lines).await;
    assert_eq!(
        answer["result"]["values"][0],
        json!(["m.c", 9, 0, 70]),
        "{answer}"
    );
    new.stop().await;
    ch::drop_database(&store);
}
