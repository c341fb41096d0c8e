//! Who may use the service, over real HTTP: cross-site writes (foreign `Origin`, simple content
//! types) refused with a 403 envelope and nothing written, `--allow-origin` pages answered with
//! CORS, the `Host` check, bearer tokens for writes and queries.

use crate::common;

use std::sync::Arc;

use common::http::{send, Answer};
use common::{query_for, TempDb, TestServer, T0};
use embers_server::http::guard::args::GuardArgs;
use reqwest::Method;
use serde_json::{json, Value};

const INGEST: &str = "/v1/profile/ingest";
const PUSH: &str = "/push.v1.PusherService/Push";
const BATCH: &str = r#"{"app_service":"web","time":1700000000,"folded":"[t] web;main 5\n"}"#;
const JSON: &str = "application/json";

async fn start(db: &TempDb, args: GuardArgs) -> TestServer {
    let guard = args.guard("127.0.0.1:0").expect("guard");
    TestServer::start_with(&db.path(), |s| s.guard = Arc::new(guard)).await
}

/// The folded text stored for `web`, empty when nothing is.
async fn stored(server: &TestServer) -> String {
    let (status, envelope) = server.query(&query_for("web")).await;
    assert_eq!(status, 200, "{envelope}");
    if envelope["result"]["functions"].is_null() {
        String::new()
    } else {
        common::folded_of(&envelope)
    }
}

fn refused(answer: &Answer, needle: &str) {
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(answer.body["OPT_STATUS"], "FAIL", "{}", answer.body);
    assert!(
        answer.description().contains(needle),
        "{needle}: {}",
        answer.body
    );
    assert_eq!(answer.body["result"], Value::Null);
}

#[tokio::test]
async fn cross_site_writes_are_refused_and_write_nothing() {
    let db = TempDb::new();
    let server = start(&db, GuardArgs::default()).await;
    let evil = [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ];
    let folded = "/v1/profile/ingest?app_service=web";

    // What a page on another site can send without asking: a text/plain, form or
    // multipart POST, or one without a type; JSON needs a preflight nobody answers.
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let a = send(
            &server,
            Method::POST,
            folded,
            &[("content-type", ct)],
            "[t] web;main 5",
        )
        .await;
        refused(&a, "needs Content-Type: application/json");
        assert!(a.description().contains(ct), "{}", a.body);
    }
    let a = send(&server, Method::POST, folded, &[], "[t] web;main 5").await;
    refused(&a, "got none");
    let a = send(
        &server,
        Method::POST,
        INGEST,
        &[&evil[..], &[("content-type", JSON)]].concat(),
        BATCH,
    )
    .await;
    refused(&a, "cross-site request refused");
    assert!(
        a.description().contains("http://evil.example"),
        "{}",
        a.body
    );
    // A browser without Sec-Fetch-Site: Origin is compared with Host.
    let other = [("origin", "http://127.0.0.1:1"), ("content-type", JSON)];
    refused(
        &send(&server, Method::POST, INGEST, &other, BATCH).await,
        "is not this service",
    );
    let null = [("origin", "null"), ("content-type", JSON)];
    refused(
        &send(&server, Method::POST, INGEST, &null, BATCH).await,
        "cross-site",
    );
    // Any delete, and queries too (they cost work even when their answer is unreadable).
    let a = send(
        &server,
        Method::DELETE,
        "/v1/profile/snapshots/x",
        &evil,
        "",
    )
    .await;
    refused(&a, "cross-site request refused");
    let q = query_for("web").to_string();
    let a = send(
        &server,
        Method::POST,
        "/v1/profile/ProfileTracing",
        &[&evil[..], &[("content-type", "text/plain")]].concat(),
        &q,
    )
    .await;
    refused(&a, "cross-site request refused");
    assert_eq!(stored(&server).await, "", "nothing was written");

    // The page itself, programs (no Origin), and folded text as octet-stream are fine.
    let same = [("origin", server.base.as_str()), ("content-type", JSON)];
    assert_eq!(
        send(&server, Method::POST, INGEST, &same, BATCH)
            .await
            .status,
        200
    );
    let fetch = [
        ("origin", "http://x"),
        ("sec-fetch-site", "same-origin"),
        ("content-type", JSON),
    ];
    assert_eq!(
        send(&server, Method::POST, INGEST, &fetch, BATCH)
            .await
            .status,
        200
    );
    let bin = [("content-type", "application/octet-stream")];
    let url = format!("{folded}&time={T0}");
    assert_eq!(
        send(&server, Method::POST, &url, &bin, "[t] web;main 5")
            .await
            .status,
        200
    );
    let a = send(
        &server,
        Method::POST,
        "/v1/profile/ProfileTracing",
        &[("content-type", "text/plain")],
        &q,
    )
    .await;
    assert_eq!(a.status, 200, "curl's queries need no type: {}", a.body);
    assert_eq!(stored(&server).await, "web;[t] web;main 15\n");
    server.stop().await;
}

#[tokio::test]
async fn allowed_origins_get_cors_and_may_write() {
    let db = TempDb::new();
    let args = GuardArgs {
        allow_origins: vec!["http://portal.example".into()],
        ..GuardArgs::default()
    };
    let server = start(&db, args).await;
    let preflight = |origin: &'static str| {
        [
            ("origin", origin),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "content-type,authorization",
            ),
        ]
    };
    let a = send(
        &server,
        Method::OPTIONS,
        INGEST,
        &preflight("http://portal.example"),
        "",
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.header("access-control-allow-origin"),
        "http://portal.example"
    );
    assert!(a
        .header("access-control-allow-headers")
        .contains("authorization"));
    let a = send(
        &server,
        Method::OPTIONS,
        INGEST,
        &preflight("http://evil.example"),
        "",
    )
    .await;
    assert_eq!(
        a.header("access-control-allow-origin"),
        "",
        "no CORS for other pages"
    );
    let portal = [
        ("origin", "http://portal.example"),
        ("sec-fetch-site", "cross-site"),
        ("content-type", JSON),
    ];
    let a = send(&server, Method::POST, INGEST, &portal, BATCH).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.header("access-control-allow-origin"),
        "http://portal.example"
    );
    let evil = [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
        ("content-type", JSON),
    ];
    let a = send(&server, Method::POST, INGEST, &evil, BATCH).await;
    refused(&a, "--allow-origin http://evil.example");
    assert_eq!(stored(&server).await, "web;[t] web;main 5\n");
    server.stop().await;
}

#[tokio::test]
async fn requests_for_foreign_host_names_are_refused() {
    let db = TempDb::new();
    let args = GuardArgs {
        allowed_hosts: vec!["embers.example".into()],
        ..GuardArgs::default()
    };
    let server = start(&db, args).await;
    let host = |h: &'static str| [("host", h)];
    for path in ["/", "/v1/profile/snapshots", "/embers-config.json"] {
        let a = send(&server, Method::GET, path, &host("evil.example:8080"), "").await;
        refused(&a, "requests for host 'evil.example:8080' are refused");
        assert!(a.description().contains("--allowed-host"), "{}", a.body);
    }
    let q = query_for("web").to_string();
    let rebinding = [("host", "localhost.evil.example"), ("content-type", JSON)];
    refused(
        &send(
            &server,
            Method::POST,
            "/v1/profile/ProfileTracing",
            &rebinding,
            &q,
        )
        .await,
        "refused",
    );
    for ok in [
        "localhost:8080",
        "embers.example",
        "EMBERS.example.:443",
        "10.1.2.3:80",
        "[::1]:8080",
    ] {
        let a = send(&server, Method::GET, "/embers-config.json", &host(ok), "").await;
        assert_eq!(a.status, 200, "{ok}: {}", a.body);
    }
    // Probes address the pod however they like.
    let a = send(
        &server,
        Method::GET,
        "/healthz",
        &host("pod-7.internal"),
        "",
    )
    .await;
    assert_eq!(a.status, 200);
    server.stop().await;
}

#[tokio::test]
async fn tokens_guard_writes_and_optionally_queries() {
    let db = TempDb::new();
    let (w, r) = (db.dir.path().join("write"), db.dir.path().join("read"));
    std::fs::write(&w, "write-s3cret\n").expect("write");
    std::fs::write(&r, "read-s3cret").expect("write");
    let writes_only = GuardArgs {
        token_file: Some(w.clone()),
        ..GuardArgs::default()
    };
    let server = start(&db, writes_only).await;
    let json = ("content-type", JSON);
    let a = send(&server, Method::POST, INGEST, &[json], BATCH).await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["OPT_STATUS"], "FAIL");
    assert!(
        a.description().contains("Authorization: Bearer"),
        "{}",
        a.body
    );
    assert!(
        a.header("www-authenticate").starts_with("Bearer"),
        "{:?}",
        a.headers
    );
    let a = send(
        &server,
        Method::POST,
        INGEST,
        &[json, ("authorization", "Bearer write-s3cre")],
        BATCH,
    )
    .await;
    assert_eq!(a.status, 401);
    assert!(a.description().contains("not valid"), "{}", a.body);
    // Pyroscope's push is a Connect call: refused as Connect's error JSON, which its clients
    // (Grafana Alloy) show.
    let proto = ("content-type", "application/proto");
    let a = send(&server, Method::POST, PUSH, &[proto], "").await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["code"], "unauthenticated", "{}", a.body);
    assert!(
        a.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("Authorization: Bearer"),
        "{}",
        a.body
    );
    let evil = [
        proto,
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ];
    let a = send(&server, Method::POST, PUSH, &evil, "").await;
    assert_eq!(
        (a.status, &a.body["code"]),
        (403, &json!("permission_denied")),
        "{}",
        a.body
    );
    assert_eq!(
        stored(&server).await,
        "",
        "queries are open; nothing written"
    );
    let a = send(
        &server,
        Method::POST,
        INGEST,
        &[json, ("authorization", "Bearer write-s3cret")],
        BATCH,
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    server.stop().await;

    let both = GuardArgs {
        token_file: Some(w),
        query_token_file: Some(r),
        ..GuardArgs::default()
    };
    let server = start(&db, both).await;
    let q = query_for("web").to_string();
    let tracing = "/v1/profile/ProfileTracing";
    let a = send(&server, Method::POST, tracing, &[json], &q).await;
    assert_eq!(a.status, 401);
    assert!(a.description().contains("#token="), "{}", a.body);
    for token in ["Bearer read-s3cret", "Bearer write-s3cret"] {
        let a = send(
            &server,
            Method::POST,
            tracing,
            &[json, ("authorization", token)],
            &q,
        )
        .await;
        assert_eq!(a.status, 200, "{token}: {}", a.body);
        assert_eq!(common::folded_of(&a.body), "web;[t] web;main 5\n");
    }
    let services = json!({"time_start": T0, "time_end": T0 + 60}).to_string();
    assert_eq!(
        send(
            &server,
            Method::POST,
            "/v1/profile/services",
            &[json],
            &services
        )
        .await
        .status,
        401
    );
    let a = send(
        &server,
        Method::POST,
        INGEST,
        &[json, ("authorization", "Bearer read-s3cret")],
        BATCH,
    )
    .await;
    assert_eq!(a.status, 401, "the query token does not write");
    // The page, its configuration and health need no token.
    for path in ["/", "/embers-config.json", "/healthz"] {
        assert_eq!(
            send(&server, Method::GET, path, &[], "").await.status,
            200,
            "{path}"
        );
    }
    server.stop().await;
}
