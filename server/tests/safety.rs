//! Hostile and malformed requests: SQL injection attempts, bad bodies, size limits, wrong
//! methods and paths, server failures, the static viewer, the upstream proxy and health.

use crate::common;

use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use common::{description, folded_of, query_for, seeded_with, with, TempDb, TestServer, T0};
use serde_json::{json, Value};

const GOOD: &str = "web;[t] web;main;work 5\n";

async fn seeded() -> (TempDb, TestServer) {
    seeded_with(
        json!({"app_service": "web", "time": T0, "tags": {"pod": "web-1"},
        "folded": "[t] web;main;work 5\n"}),
    )
    .await
}

#[tokio::test]
async fn injection_in_tag_filter_is_rejected_or_harmless() {
    let (db, server) = seeded().await;
    let q = |filter: &str| with(query_for("web"), json!({"tag_filter": filter}));

    // Syntax that would widen or chain SQL is a parse error pointing at the offending token.
    for (filter, position) in [
        ("pod='x' OR 1=1", "character 9"),
        ("pod='x'; DROP TABLE profile.samples", "character 8"),
        ("pod='x' --", "character 9"),
        ("pod=x", "character 5"),
        ("1=1", "character 1"),
        ("pod='x' AND (SELECT 1)='1'", "character 13"),
        ("pod='x' UNION SELECT 1", "character 9"),
    ] {
        let (status, envelope) = server.query(&q(filter)).await;
        assert_eq!(status, 400, "{filter}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
        assert!(
            description(&envelope).contains(position),
            "{filter}: {envelope}"
        );
        assert_eq!(envelope["result"], Value::Null);
    }

    // Quote tricks stay inside the value: no match, nothing dropped.
    for filter in [
        "pod='x''; DROP TABLE profile.samples; --'",
        r"pod='x\' OR 1=1 --'",
        "pod='web-1'' OR ''1''=''1'",
        "k8s.label.app='x'' OR 1=1 --'",
    ] {
        let (status, envelope) = server.query(&q(filter)).await;
        assert_eq!(status, 200, "{filter}: {envelope}");
        assert_eq!(envelope["result"]["functions"], Value::Null, "{filter}");
    }

    // Hostile values in other fields are bound parameters too.
    for (field, value) in [
        ("app_service", "web' OR '1'='1"),
        ("app_service", "web'; DROP TABLE profile.stacks; --"),
        ("profile_event_type", "on-cpu' OR 1=1 --"),
        (
            "profile_language_type",
            "eBPF\"; DROP VIEW profile.in_process; --",
        ),
    ] {
        let (status, envelope) = server
            .query(&with(query_for("web"), json!({ field: value })))
            .await;
        assert_eq!(status, 200, "{field}={value}: {envelope}");
        assert_eq!(
            envelope["result"]["functions"],
            Value::Null,
            "{field}={value}"
        );
    }

    // Everything is still there.
    assert_eq!(server.folded(&query_for("web")).await, GOOD);
    assert_eq!(server.folded(&q("pod='web-1'")).await, GOOD);
    server.stop().await;
    let store = embers_server::store::Store::open(&db.path()).expect("reopen");
    assert_eq!(store.sample_count().expect("count"), 1);
    assert_eq!(store.stack_count().expect("count"), 1);
}

#[tokio::test]
async fn malformed_requests_get_400_with_a_useful_description() {
    let (_db, server) = seeded().await;
    let (status, text) = server
        .post_raw(
            "/v1/profile/ProfileTracing",
            "application/json",
            b"{not json".to_vec(),
        )
        .await;
    assert_eq!(status, 400);
    let envelope: Value = serde_json::from_str(&text).expect("envelope");
    assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    assert!(
        description(&envelope).contains("not valid JSON"),
        "{envelope}"
    );
    assert_eq!(envelope["result"], Value::Null);
    assert_eq!(envelope["debug"], Value::Null);

    let mut missing = query_for("web");
    missing.as_object_mut().map(|o| o.remove("time_start"));
    let (status, envelope) = server.query(&missing).await;
    assert_eq!(status, 400);
    assert!(description(&envelope).starts_with(
        "Key: 'Profile.TimeStart' Error:Field validation for 'TimeStart' failed on the 'required' tag"
    ), "{envelope}");

    let cases = [
        (
            json!({"time_start": T0 + 10, "time_end": T0}),
            "after time_end",
        ),
        (
            json!({"time_start": "yesterday"}),
            "time_start must be an integer",
        ),
        (json!({"profile_event_type": ""}), "ProfileEventType"),
        (
            json!({"tag_filter": "colour='red'"}),
            "unknown tag 'colour'",
        ),
        (json!({"tag_filter": "pod='unterminated"}), "unterminated"),
        (json!({"tag_filter": 5}), "tag_filter must be a string"),
        (json!({"result_shape": "C"}), "result_shape"),
        (
            json!({"max_kernel_stack_depth": "deep"}),
            "max_kernel_stack_depth",
        ),
    ];
    for (extra, needle) in cases {
        let (status, envelope) = server.query(&with(query_for("web"), extra.clone())).await;
        assert_eq!(status, 400, "{extra}: {envelope}");
        assert!(
            description(&envelope).contains(needle),
            "{extra}: {envelope}"
        );
    }
    let (status, _) = server
        .post("/v1/profile/ProfileTracing", &json!([1, 2]))
        .await;
    assert_eq!(status, 400);
    server.stop().await;
}

#[tokio::test]
async fn oversized_bodies_get_413_envelopes() {
    let db = TempDb::new();
    let server = TestServer::start_with(&db.path(), |s| {
        s.limits.query = 1024;
        s.limits.ingest = 4096;
    })
    .await;
    let big_filter = format!("pod='{}'", "x".repeat(2000));
    let (status, envelope) = server
        .query(&with(query_for("web"), json!({"tag_filter": big_filter})))
        .await;
    assert_eq!(status, 413);
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(description(&envelope).contains("1024"), "{envelope}");
    let folded = "[t] a;b 1\n".repeat(1000);
    let (status, envelope) = server
        .post(
            "/v1/profile/ingest",
            &json!({"app_service": "a", "folded": folded}),
        )
        .await;
    assert_eq!(status, 413);
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    server.stop().await;
}

#[tokio::test]
async fn wrong_methods_and_paths_get_envelopes() {
    let (_db, server) = seeded().await;
    let (status, _, body) = server.get("/v1/profile/ProfileTracing").await;
    assert_eq!(status, 405);
    let envelope: Value = serde_json::from_str(&body).expect("envelope");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    let (status, envelope) = server.post("/v1/profile/Nope", &json!({})).await;
    assert_eq!(status, 404);
    assert!(description(&envelope).contains("/v1/profile/Nope"));
    server.stop().await;
}

#[tokio::test]
async fn server_failures_are_500_fail_without_internals_unless_debug_is_allowed() {
    let (db, server) = seeded().await;
    // Break the schema behind the server's back.
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    conn.execute_batch("DROP VIEW in_process")
        .expect("drop view");
    drop(conn);

    let (status, envelope) = server.query(&query_for("web")).await;
    assert_eq!(status, 500, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(!description(&envelope).contains("in_process"), "{envelope}");
    assert_eq!(envelope["debug"], Value::Null);
    assert_eq!(
        envelope["result"],
        json!({"functions": null, "function_types": null,
               "function_values": {"columns": null, "values": null},
               "node_values": {"columns": null, "values": null}})
    );
    let (_, a) = server
        .query(&with(query_for("web"), json!({"result_shape": "A"})))
        .await;
    assert_eq!(a["result"], Value::Null);

    // `debug` shows the detail only when the operator allows it (--allow-debug).
    let asked = with(query_for("web"), json!({"debug": true}));
    let (status, envelope) = server.query(&asked).await;
    assert_eq!(status, 500);
    assert_eq!(envelope["debug"], Value::Null);
    assert!(!envelope.to_string().contains("in_process"), "{envelope}");
    server.stop().await;
    let server = TestServer::start_with(&db.path(), |s| s.allow_debug = true).await;
    // Opening the store may have mended the view: break it again.
    let conn = rusqlite::Connection::open(db.path()).expect("open");
    conn.execute_batch("DROP VIEW IF EXISTS in_process")
        .expect("drop view");
    drop(conn);
    let (status, envelope) = server.query(&asked).await;
    assert_eq!(status, 500);
    let error = envelope["debug"]["error"].as_str().unwrap_or("");
    assert!(error.contains("in_process"), "{envelope}");
    server.stop().await;
}

#[tokio::test]
async fn static_viewer_and_fallbacks() {
    let db = TempDb::new();
    // No viewer built: a plain-text note at `/`.
    let server = TestServer::start(&db.path()).await;
    let (status, ct, body) = server.get("/").await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/plain"), "{ct}");
    assert!(
        body.contains("not built") && body.contains("trunk build"),
        "{body}"
    );
    server.stop().await;

    let dist = db.dir.path().join("dist");
    std::fs::create_dir_all(dist.join("assets")).expect("mkdir");
    std::fs::write(
        dist.join("index.html"),
        "<!doctype html><title>Embers</title>",
    )
    .expect("write");
    std::fs::write(dist.join("assets/app.js"), "console.log(1)").expect("write");
    let server = TestServer::start_with(&db.path(), |s| s.static_dir = Some(dist.clone())).await;
    let (status, ct, body) = server.get("/").await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/html"), "{ct}");
    assert!(body.contains("<title>Embers</title>"));
    let (status, ct, body) = server.get("/assets/app.js").await;
    assert_eq!(status, 200);
    assert!(ct.contains("javascript"), "{ct}");
    assert_eq!(body, "console.log(1)");
    let (status, _, body) = server.get("/some/client/route?x=1").await;
    assert_eq!(status, 200);
    assert!(body.contains("<title>Embers</title>"));
    let (status, ct, _) = server.get("/v1/unknown").await;
    assert_eq!(status, 404);
    assert!(ct.starts_with("application/json"));
    let (status, ct, body) = server.get("/healthz").await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("application/json"));
    let health: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(health["status"], "ok");
    server.stop().await;
}

/// A fake querier that echoes what it received, with status 299 so relaying is visible.
async fn fake_querier() -> (String, tokio::task::JoinHandle<()>) {
    async fn echo(headers: HeaderMap, body: String) -> (axum::http::StatusCode, String) {
        let org = headers
            .get("x-org-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let answer = json!({"OPT_STATUS": "SUCCESS", "DESCRIPTION": "", "result": null,
            "debug": {"org": org, "body": body}});
        (
            axum::http::StatusCode::from_u16(299).unwrap_or(axum::http::StatusCode::OK),
            answer.to_string(),
        )
    }
    let router = Router::new().route("/v1/profile/ProfileTracing", post(echo));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (base, task)
}

#[tokio::test]
async fn upstream_mode_forwards_and_relays() {
    let (upstream_base, upstream_task) = fake_querier().await;
    let db = TempDb::new();
    let options = embers_server::http::upstream::UpstreamOptions {
        allow_org_ids: vec![7],
        ..Default::default()
    };
    let up = embers_server::http::upstream::Upstream::with_options(
        &format!("{upstream_base}/"),
        options,
    )
    .expect("upstream");
    let server =
        TestServer::start_with(&db.path(), |s| s.upstream = Some(std::sync::Arc::new(up))).await;
    let body = query_for("redis-server").to_string();
    let response = server
        .client
        .post(format!("{}/v1/profile/ProfileTracing", server.base))
        .header("content-type", "application/json")
        .header("X-Org-Id", "7")
        .body(body.clone())
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 299);
    let envelope: Value = response.json().await.expect("json");
    assert_eq!(envelope["debug"]["org"], "7");
    // The forwarded body is the request as the contract read it, re-serialised.
    let forwarded: Value =
        serde_json::from_str(envelope["debug"]["body"].as_str().unwrap_or("")).expect("json");
    let mut sent = query_for("redis-server");
    sent["tag_filter"] = "".into();
    assert_eq!(forwarded, sent);
    server.stop().await;
    upstream_task.abort();

    // Unreachable upstream: 502 FAIL naming it.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let dead = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let up = embers_server::http::upstream::Upstream::new(&dead).expect("upstream");
    let server =
        TestServer::start_with(&db.path(), |s| s.upstream = Some(std::sync::Arc::new(up))).await;
    let (status, envelope) = server.query(&query_for("x")).await;
    assert_eq!(status, 502);
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(description(&envelope).contains(&dead), "{envelope}");
    server.stop().await;
    assert!(embers_server::http::upstream::Upstream::new("https://x").is_err());
}

#[tokio::test]
async fn folded_text_ingest_with_query_string_metadata() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let url = format!("/v1/profile/ingest?app_service=api&time={T0}&host=node-a&k8s.label.app=api");
    let (status, body) = server
        .post_raw(
            &url,
            "application/octet-stream",
            b"[t] api;main 4\n[t] api;main;f 6\n".to_vec(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let q = with(
        query_for("api"),
        json!({"tag_filter": "k8s.label.app='api' AND host='node-a'"}),
    );
    let (_, envelope) = server.query(&q).await;
    assert_eq!(
        folded_of(&envelope),
        "api;[t] api;main 4\napi;[t] api;main;f 6\n"
    );
    let (status, body) = server
        .post_raw(
            "/v1/profile/ingest?time=1",
            "application/octet-stream",
            b"a 1".to_vec(),
        )
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("app_service is required"), "{body}");
    let (status, body) = server
        .post_raw(
            "/v1/profile/ingest?app_service=a&colour=red",
            "application/octet-stream",
            b"a 1".to_vec(),
        )
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("unknown tag 'colour'"), "{body}");
    server.stop().await;
}
