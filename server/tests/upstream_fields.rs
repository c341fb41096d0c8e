//! `--upstream` and the fields a DeepFlow querier pastes into SQL: a quoted or escaped
//! `app_service`, or a language or event type outside the types' charset, is a 400 naming the
//! field on every endpoint, and nothing reaches the querier (the stub records what it gets);
//! `debug` is neither forwarded nor answered with the querier's detail unless the service runs
//! with `--allow-debug`.

use crate::common;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use common::http::serve_stub;
use common::querier::{start_stub, stub, tl, H};
use common::{TempDb, TestServer};
use embers_server::http::upstream::{Upstream, UpstreamOptions};
use serde_json::{json, Value};

/// An Embers server proxying to `base`, with `--allow-debug` or not.
async fn embers(base: &str, allow_debug: bool) -> (TempDb, TestServer) {
    let db = TempDb::new();
    let up = Arc::new(Upstream::with_options(base, UpstreamOptions::default()).expect("up"));
    let server = TestServer::start_with(&db.path(), |s| {
        s.upstream = Some(up);
        s.allow_debug = allow_debug;
    })
    .await;
    (db, server)
}

#[tokio::test]
async fn quoted_fields_never_reach_the_querier() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = embers(&base, false).await;
    let hostile = [
        ("app_service", r"x' OR 1=1 --"),
        ("app_service", r"x\"),
        ("app_service", "x\"y"),
        ("profile_language_type", "eBPF' OR '1'='1"),
        ("profile_event_type", r"on-cpu\"),
    ];
    let range = json!({"time_start": H, "time_end": H + 3599});
    for (field, value) in hostile {
        let member = json!({ field: value });
        let explore = common::with(range.clone(), member.clone());
        let functions = common::with(
            common::with(range.clone(), json!({"profile_event_type": "on-cpu"})),
            member.clone(),
        );
        let bodies = [
            ("/v1/profile/ProfileTracing", tl(member.clone())),
            ("/v1/profile/pprof", tl(member.clone())),
            ("/v1/profile/timeline", tl(member.clone())),
            ("/v1/profile/services", explore.clone()),
            ("/v1/profile/tags", explore.clone()),
            (
                "/v1/profile/tag_values",
                common::with(explore, json!({"tag": "pod"})),
            ),
            ("/v1/profile/functions", functions),
        ];
        for (path, body) in bodies {
            // Members an endpoint does not take are not sent anywhere either.
            let takes = match path {
                "/v1/profile/services" => field != "app_service",
                "/v1/profile/tag_values" => field == "app_service",
                _ => true,
            };
            if !takes {
                continue;
            }
            let (status, envelope) = server.post(path, &body).await;
            assert_eq!(status, 400, "{path} {field}={value:?}: {envelope}");
            let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
            assert!(description.contains(field), "{path} {field}: {description}");
        }
    }
    let (statements, bodies) = {
        let seen = stub.seen.lock().expect("lock");
        (seen.statements.clone(), seen.tracing_bodies.clone())
    };
    assert!(statements.is_empty(), "{statements:?}");
    assert!(bodies.is_empty(), "{bodies:?}");
    // An ordinary name with spaces, dots and brackets goes through.
    let body = tl(json!({"app_service": "[kworker/0:1] java -jar a.jar"}));
    let (status, envelope) = server.post("/v1/profile/ProfileTracing", &body).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(stub.seen.lock().expect("lock").tracing_bodies.len(), 1);
    server.stop().await;
}

/// A querier that fails every ProfileTracing request with its statements in `debug`, as a
/// DeepFlow querier does, and echoes the body it got in `DESCRIPTION`.
async fn failing_querier() -> String {
    async fn fail(body: String) -> (StatusCode, String) {
        let answer = json!({"OPT_STATUS": "FAIL", "DESCRIPTION": body, "result": null,
            "debug": {"querier_debug": [{"sql": "SELECT secret FROM profile.in_process"}]}});
        (StatusCode::INTERNAL_SERVER_ERROR, answer.to_string())
    }
    serve_stub(Router::new().route("/v1/profile/ProfileTracing", post(fail))).await
}

#[tokio::test]
async fn debug_is_forwarded_and_answered_only_when_allowed() {
    let base = failing_querier().await;
    let asked = tl(json!({"debug": true}));
    for allow in [false, true] {
        let (_db, server) = embers(&base, allow).await;
        let (status, envelope) = server.post("/v1/profile/ProfileTracing", &asked).await;
        assert_eq!(status, 500, "{envelope}");
        let forwarded: Value =
            serde_json::from_str(envelope["DESCRIPTION"].as_str().unwrap_or("")).expect("json");
        if allow {
            assert_eq!(forwarded["debug"], true, "{forwarded}");
            assert!(
                envelope["debug"].to_string().contains("secret"),
                "{envelope}"
            );
        } else {
            assert_eq!(forwarded.get("debug"), None, "{forwarded}");
            assert_eq!(envelope["debug"], Value::Null, "{envelope}");
            assert!(!envelope.to_string().contains("secret"), "{envelope}");
        }
        server.stop().await;
    }
}
