//! The fleet's function sums on ClickHouse (`functions_fleet`, what a question about every
//! process is ranked by): they are really read, a process deleted from the store is no longer
//! counted though its samples are still summed in them, and a store written before they
//! existed is answered from the rollup per process — each time exactly as SQLite answers.
//!
//! Needs the local ClickHouse of `scripts/clickhouse.sh single` and `cluster`.

use crate::common;

use common::batch;
use common::clickhouse::{self as ch, Layout, Pair};
use common::functions::{answer, long, now, places, wide, wide_range};
use embers_server::store::Store;
use serde_json::{json, Value};

/// A second process inside the six-hour bucket of [`wide`] and in the long range's hours.
fn memcached() -> Value {
    let tags = json!({"host": "node-c", "pod": "memcached-0"});
    json!({"batches": [
        batch("memcached", "on-cpu", common::functions::W + 200, tags.clone(),
            "[t] memcached;main;serverCron 5\n"),
        batch("memcached", "on-cpu", common::functions::H + 3700, tags,
            "[t] memcached;main;slab_rebalance 7\n"),
    ]})
}

/// The functions answers of the three ranges on both servers, which must be equal.
async fn same(pair: &Pair, when: &str) -> Vec<String> {
    let mut out = Vec::new();
    for range in [now(), long(), wide()] {
        for extra in [
            json!({}),
            json!({"metric": "total", "limit": 2, "offset": 1}),
        ] {
            let body = common::with(range.clone(), extra);
            let (_, want) = common::functions::post(&pair.sqlite, body.clone()).await;
            let (_, got) = common::functions::post(&pair.clickhouse, body.clone()).await;
            assert_eq!(want, got, "{when}: {body}");
            out.push(want.to_string());
        }
    }
    out
}

async fn deleting_a_process(layout: Layout, name: &str) {
    let Some(pair) = Pair::start(layout, name).await else {
        return;
    };
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(common::functions::batches()).await;
        server.ingest(memcached()).await;
    }
    let before = same(&pair, "with memcached").await;
    let a = answer(&pair.clickhouse, wide()).await;
    assert_eq!(
        a.value,
        11 + 13 + 17 + 19 + 23 + 29 + 5,
        "memcached counted"
    );
    assert_eq!(places(&a, "serverCron").len(), 2, "and listed");
    let (status, deleted) = pair
        .clickhouse
        .delete("/v1/profile/processes/memcached")
        .await;
    assert_eq!(status, 200, "{deleted}");
    pair.sqlite.delete("/v1/profile/processes/memcached").await;
    let after = same(&pair, "after deleting memcached").await;
    assert_ne!(before, after, "the delete changed answers");
    // Its five are still summed in the fleet's six-hour bucket: read, they would show here.
    wide_range(&pair.clickhouse).await;
    // Samples after the delete are ranked from the fleet's sums again, exactly.
    let later = common::functions::W + 3 * 86_400;
    let fresh = json!({"batches": [batch("memcached", "on-cpu", later + 30,
        json!({"host": "node-c"}), "[t] memcached;main;serverCron 3\n")]});
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(fresh.clone()).await;
    }
    let range = json!({"time_start": later - 3600, "time_end": later + 7200,
        "profile_event_type": "on-cpu"});
    let a = answer(&pair.clickhouse, range.clone()).await;
    assert_eq!((a.value, a.values.len()), (3, 3), "{a:?}");
    // That range from the fleet's sums; one from before the delete to after it, ranked from
    // the rollup per process up to the record and from the fleet's sums after it.
    let across = json!({"time_start": common::functions::W - 3605, "time_end": later + 7200,
        "profile_event_type": "on-cpu"});
    for body in [range.clone(), across] {
        let (_, want) = common::functions::post(&pair.sqlite, body.clone()).await;
        let (_, got) = common::functions::post(&pair.clickhouse, body.clone()).await;
        assert_eq!(want, got, "{body}");
    }
    if let (Layout::Single, Store::ClickHouse(store)) = (layout, pair.store.as_ref()) {
        // Really from the fleet's sums: without its rows there, the answer loses them.
        let db = store.database().to_owned();
        let sql = format!(
            "ALTER TABLE {db}.functions_fleet DELETE WHERE time >= {}",
            later - 3600
        );
        ch::mutate(&reqwest::Client::new(), &db, sql).await;
        assert_eq!(answer(&pair.clickhouse, range).await.value, 0);
    }
    pair.finish().await;
}

/// When the fleet's sums of an ingest call cannot be written (its rollup rows were), the call
/// fails and its buckets are read per process from then on, as exactly as before.
#[tokio::test]
async fn a_failed_write_of_the_fleets_sums_leaves_answers_exact() {
    let Some(pair) = Pair::start(Layout::Single, "fleet_failed").await else {
        return;
    };
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(common::functions::batches()).await;
    }
    pair.sqlite.ingest(memcached()).await;
    let Store::ClickHouse(store) = pair.store.as_ref() else {
        panic!("a ClickHouse store");
    };
    let db = store.database().to_owned();
    let client = reqwest::Client::new();
    let rename = |from: &str, to: &str| format!("RENAME TABLE {db}.{from} TO {db}.{to}");
    let run = |sql: String| async {
        let answer = client
            .post(ch::SINGLE)
            .body(sql)
            .send()
            .await
            .expect("ClickHouse");
        assert!(answer.status().is_success(), "{:?}", answer.text().await);
    };
    run(rename("functions_fleet", "fleet_away")).await;
    let (status, body) = pair
        .clickhouse
        .post("/v1/profile/ingest", &memcached())
        .await;
    assert_ne!(status, 200, "{body}");
    run(rename("fleet_away", "functions_fleet")).await;
    same(&pair, "after the fleet's write failed").await;
    pair.finish().await;
}

#[tokio::test]
async fn a_deleted_process_is_not_counted_on_one_node() {
    deleting_a_process(Layout::Single, "fleet_delete").await;
}

#[tokio::test]
async fn a_deleted_process_is_not_counted_on_two_shards() {
    deleting_a_process(Layout::TwoShards, "fleet_delete2").await;
}

/// A store written before the fleet's sums existed (emulated: their rows and the record of
/// where they start are removed) is answered from the rollup per process once a server opens
/// it again; before that, the emptied sums are what the answer is ranked by.
#[tokio::test]
async fn a_store_from_before_the_fleets_sums_is_ranked_per_process() {
    let Some(pair) = Pair::start(Layout::Single, "fleet_from").await else {
        return;
    };
    pair.clickhouse.ingest(common::functions::batches()).await;
    wide_range(&pair.clickhouse).await;
    let Store::ClickHouse(store) = pair.store.as_ref() else {
        panic!("a ClickHouse store");
    };
    let db = store.database().to_owned();
    let client = reqwest::Client::new();
    for table in ["functions_fleet", "fleet_from"] {
        ch::mutate(
            &client,
            &db,
            format!("ALTER TABLE {db}.{table} DELETE WHERE 1"),
        )
        .await;
    }
    let emptied = answer(&pair.clickhouse, wide()).await;
    assert_eq!(
        emptied.value,
        11 + 29,
        "only the samples at the edges: the fleet's sums were read"
    );
    let server = ch::reopened(db).await;
    wide_range(&server).await;
    server.stop().await;
    pair.finish().await;
}

/// A function the buckets alone rank far below the page, which the samples at the range's
/// edges lift onto it, is not among those step 2 reads before the edges are in: its places
/// (in the buckets and at the edges) are read once the page is known.
#[tokio::test]
async fn a_function_the_edges_lift_onto_the_page_still_gets_its_places() {
    let Some(pair) = Pair::start(Layout::Single, "fleet_edges").await else {
        return;
    };
    let w = common::functions::W;
    // Twenty functions of 100 in the six-hour bucket rank above `late`'s 1 there.
    let many: String = (0..20).map(|i| format!("[t] spiky;f{i} 100\n")).collect();
    let batches = json!({"batches": [
        batch("spiky", "on-cpu", w + 100, json!({"host": "node-d"}), &many),
        batch("calm", "on-cpu", w + 200, json!({"host": "node-d"}), "[t] calm;late 1\n"),
        batch("spiky", "on-cpu", w - 3605, json!({"host": "node-d"}), "[t] spiky;late 5000\n"),
    ]});
    for server in [&pair.sqlite, &pair.clickhouse] {
        server.ingest(common::functions::batches()).await;
        server.ingest(batches.clone()).await;
    }
    let body = common::with(wide(), json!({"limit": 1}));
    let a = answer(&pair.clickhouse, body.clone()).await;
    assert_eq!(a.values[0].function, "late");
    let place = common::functions::place;
    assert_eq!(
        places(&a, "late"),
        [place("spiky", None, 5000, 5000), place("calm", None, 1, 1)]
    );
    let (_, want) = common::functions::post(&pair.sqlite, body.clone()).await;
    let (_, got) = common::functions::post(&pair.clickhouse, body).await;
    assert_eq!(want, got);
    pair.finish().await;
}
