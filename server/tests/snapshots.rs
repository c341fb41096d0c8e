//! Snapshots over real HTTP and the real SQLite store: save, list, fetch and delete answers of
//! both shapes; a fetched snapshot is the saved answer byte for byte with the snapshot member
//! first, and decodes to the same tree; snapshots survive a restart and a migration from schema
//! version 2, stream whole while being deleted, and live in the local store with `--upstream`.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::Uri;
use axum::Router;
use common::snapshots::{big_answer, save_body, SNAPSHOTS};
use common::{folded_of, query_for, with, TempDb, TestServer, T0};
use embers_model::contract::snapshot::{is_valid_id, SnapshotMeta};
use embers_model::export::folded::to_folded;
use embers_server::store::schema;
use serde_json::{json, Value};

/// A saved snapshot's metadata, checked to be a successful answer.
async fn save(server: &TestServer, response: &str, name: Option<&str>) -> SnapshotMeta {
    let (status, envelope) = server
        .save_snapshot(save_body(&query_for("web"), response, name))
        .await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "SUCCESS");
    serde_json::from_value(envelope["result"].clone()).expect("SnapshotMeta")
}

/// Fetches a snapshot and checks it is `response` with the member first and an exact length.
async fn fetch_exact(server: &TestServer, meta: &SnapshotMeta, response: &str) -> String {
    let url = format!("{}{SNAPSHOTS}/{}", server.base, meta.id);
    let answer = server.client.get(url).send().await.expect("get");
    assert_eq!(answer.status().as_u16(), 200);
    let content_type = answer.headers()["content-type"].to_str().expect("ascii");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let length = answer.content_length();
    let body = answer.text().await.expect("body");
    assert_eq!(length, Some(body.len() as u64), "Content-Length");
    let want = expected(meta, response);
    let head = want.len() - response.len() + 1;
    assert_eq!(
        &body[..head.min(body.len())],
        &want[..head],
        "the snapshot member first"
    );
    assert_eq!(&body[head..], &response[1..], "the answer as it was saved");
    body
}

/// `{"snapshot":{meta},` and the saved answer after its `{`.
fn expected(meta: &SnapshotMeta, response: &str) -> String {
    let meta = serde_json::to_string(meta).expect("json");
    format!("{{\"snapshot\":{meta},{}", &response[1..])
}

async fn ingest_web(server: &TestServer) {
    server
        .ingest(json!({"app_service": "web", "time": T0 + 5,
            "folded": "[t] web;main;a 2\n[t] web;main;b 3\n[t] web;io 1\n"}))
        .await;
}

#[tokio::test]
async fn save_list_fetch_and_delete_in_both_shapes() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    ingest_web(&server).await;
    let mut saved = Vec::new();
    for shape in ["A", "B"] {
        let query = with(query_for("web"), json!({"result_shape": shape}));
        let (status, answer) = server
            .post_raw(
                "/v1/profile/ProfileTracing",
                "application/json",
                query.to_string().into(),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        let meta = save(&server, &answer, None).await;
        assert!(is_valid_id(&meta.id), "{}", meta.id);
        assert_eq!(meta.name, "web, 2023-11-14 22:13:20–22:14:20 UTC");
        assert_eq!(meta.size, answer.len() as u64);
        let request = serde_json::to_value(&meta.request).expect("json");
        assert_eq!(request, with(query_for("web"), json!({"tag_filter": ""})));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64;
        assert!(
            (now - 60..=now).contains(&meta.saved_at),
            "{}",
            meta.saved_at
        );

        let body = fetch_exact(&server, &meta, &answer).await;
        let original: Value = serde_json::from_str(&answer).expect("json");
        let decoded = embers_model::decode_response(200, &body).expect("decodes");
        assert_eq!(
            to_folded(&decoded.profile),
            folded_of(&original),
            "same tree"
        );
        assert_eq!(
            decoded.shape.map(|s| format!("{s:?}")).as_deref(),
            Some(shape)
        );
        let whole: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(
            whole["snapshot"],
            serde_json::to_value(&meta).expect("json")
        );
        saved.push(meta);
    }
    let listed: Vec<SnapshotMeta> = server
        .snapshot_list()
        .await
        .into_iter()
        .map(|m| serde_json::from_value(m).expect("meta"))
        .collect();
    assert_eq!(
        listed,
        vec![saved[1].clone(), saved[0].clone()],
        "newest first"
    );

    let one = format!("{SNAPSHOTS}/{}", saved[0].id);
    let (status, envelope) = server.delete(&one).await;
    assert_eq!((status, &envelope["OPT_STATUS"]), (200, &json!("SUCCESS")));
    assert_eq!(
        envelope["result"],
        serde_json::to_value(&saved[0]).expect("json")
    );
    let (status, _, text) = server.get(&one).await;
    assert_eq!(status, 404, "{text}");
    let envelope: Value = serde_json::from_str(&text).expect("envelope");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains(&saved[0].id));
    assert_eq!(server.delete(&one).await.0, 404, "deleted once");
    assert_eq!(server.snapshot_list().await.len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn answers_are_kept_byte_for_byte_with_their_name() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    // Spacing, member order and escapes a re-serialisation would change.
    let answer = "{ \"result\" : [ {\"profile_location_str\":\"w\\u00e9b\",\"node_id\":\"\",\
        \"parent_node_id\":\"-1\",\"self_value\":0,\"total_value\":3},\n {\"profile_location_str\":\
        \"main\",\"node_id\":\"x\",\"parent_node_id\":\"\",\"self_value\":3,\"total_value\":3} ],\
        \"DESCRIPTION\" : \"\", \"OPT_STATUS\":\"SUCCESS\" }";
    let meta = save(&server, answer, Some("  before the fix ")).await;
    assert_eq!(meta.name, "before the fix");
    let body = fetch_exact(&server, &meta, answer).await;
    let decoded = embers_model::decode_response(200, &body).expect("decodes");
    assert_eq!(to_folded(&decoded.profile), "wéb;main 3\n");
    server.stop().await;
}

#[tokio::test]
async fn snapshots_survive_a_restart() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let answer = big_answer(50);
    let meta = save(&server, &answer, Some("kept")).await;
    server.stop().await;

    let server = TestServer::start(&db.path()).await;
    let listed = server.snapshot_list().await;
    assert_eq!(listed, vec![serde_json::to_value(&meta).expect("json")]);
    fetch_exact(&server, &meta, &answer).await;
    server.stop().await;
}

#[tokio::test]
async fn a_version_2_file_gains_snapshots() {
    let db = TempDb::new();
    {
        let mut conn = rusqlite::Connection::open_in_memory().expect("open");
        let path = db.path();
        conn.execute(
            "ATTACH DATABASE ?1 AS profile",
            [path.to_str().expect("utf-8")],
        )
        .expect("attach");
        schema::migrate_to(&mut conn, 2).expect("v2 schema");
    }
    let server = TestServer::start(&db.path()).await;
    let answer = big_answer(3);
    let meta = save(&server, &answer, None).await;
    fetch_exact(&server, &meta, &answer).await;
    server.stop().await;
}

#[tokio::test]
async fn a_snapshot_deleted_while_it_streams_arrives_whole() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let answer = big_answer(20_000);
    assert!(answer.len() > 2 << 20, "several chunks: {}", answer.len());
    let meta = save(&server, &answer, None).await;
    let url = format!("{}{SNAPSHOTS}/{}", server.base, meta.id);
    // The headers are sent once the store's read has begun.
    let streaming = server.client.get(url).send().await.expect("get");
    assert_eq!(streaming.status().as_u16(), 200);
    let (status, _) = server.delete(&format!("{SNAPSHOTS}/{}", meta.id)).await;
    assert_eq!(status, 200);
    let body = streaming.text().await.expect("the whole body");
    assert!(
        body == expected(&meta, &answer),
        "{} of {} bytes",
        body.len(),
        expected(&meta, &answer).len()
    );
    let decoded = embers_model::decode_response(200, &body).expect("decodes");
    assert_eq!(decoded.profile.root_total(), 20_000);
    assert!(server.snapshot_list().await.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn upstream_mode_keeps_snapshots_in_the_local_store() {
    // A querier that answers ProfileTracing with a fixed shape-B answer and counts every call.
    const ANSWER: &str = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{"functions":["web","main","a"],"function_types":["P","A","A"],"function_values":{"columns":["self_value","total_value"],"values":[[0,7],[2,7],[5,5]]},"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":[[0,-1,0,7],[1,0,2,7],[2,1,5,5]]}},"debug":null}"#;
    let calls = Arc::new(AtomicUsize::new(0));
    let paths = calls.clone();
    let stub = Router::new().fallback(move |uri: Uri| {
        let paths = paths.clone();
        async move {
            paths.fetch_add(1, Ordering::SeqCst);
            assert_eq!(uri.path(), "/v1/profile/ProfileTracing");
            ANSWER
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, stub).await.expect("stub") });

    let db = TempDb::new();
    let up = embers_server::http::upstream::Upstream::new(&base).expect("upstream");
    let server = TestServer::start_with(&db.path(), |s| s.upstream = Some(Arc::new(up))).await;
    let (status, answer) = server
        .post_raw(
            "/v1/profile/ProfileTracing",
            "application/json",
            query_for("web").to_string().into(),
        )
        .await;
    assert_eq!((status, answer.as_str()), (200, ANSWER));
    let meta = save(&server, &answer, None).await;
    assert_eq!(server.snapshot_list().await.len(), 1);
    let body = fetch_exact(&server, &meta, &answer).await;
    let decoded = embers_model::decode_response(200, &body).expect("decodes");
    assert_eq!(to_folded(&decoded.profile), "web;main 2\nweb;main;a 5\n");
    assert_eq!(
        server.delete(&format!("{SNAPSHOTS}/{}", meta.id)).await.0,
        200
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "only the query went upstream"
    );
    server.stop().await;
}
