//! The upstream proxy's bounds against stub queriers over real HTTP: answer size (a 502 naming
//! the limit, or a cut transfer once streaming), big answers streamed (the client has the
//! start before the querier sent the end), redirects not followed, connect and read timeouts,
//! and `X-Org-Id` sent only as configured.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use common::http::{proxying, serve_stub as stub};
use common::{query_for, TestServer};
use embers_server::http::upstream::UpstreamOptions;
use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};
use tokio::sync::Notify;

const TRACING: &str = "/v1/profile/ProfileTracing";
const MIB: usize = 1 << 20;

/// Posts the ProfileTracing query of process `web`; the answer as it streams.
async fn post_tracing(server: &TestServer) -> reqwest::Response {
    server
        .client
        .post(format!("{}{TRACING}", server.base))
        .json(&query_for("web"))
        .send()
        .await
        .expect("send")
}

fn limit(max_bytes: u64) -> UpstreamOptions {
    UpstreamOptions {
        max_bytes,
        ..UpstreamOptions::default()
    }
}

/// A chunked body (no Content-Length) of `chunks` chunks of `size` bytes of `b`.
fn chunked(chunks: usize, size: usize, b: u8) -> Body {
    Body::from_stream(stream::iter(
        (0..chunks).map(move |_| Ok::<_, std::io::Error>(Bytes::from(vec![b; size]))),
    ))
}

fn bad_gateway(status: u16, envelope: &Value, needle: &str) {
    assert_eq!(status, 502, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
    assert!(description.contains(needle), "{needle}: {envelope}");
}

#[tokio::test]
async fn answers_over_the_limit_are_a_502_naming_it() {
    // Announced size over the limit, and an unannounced one that crosses it early.
    let base = stub(Router::new().route(TRACING, post(|| async { vec![b'x'; 5000] }))).await;
    let (_db, server) = proxying(&base, limit(4096)).await;
    let (status, envelope) = server.query(&query_for("web")).await;
    bad_gateway(
        status,
        &envelope,
        "larger than 4096 bytes (--upstream-max-bytes)",
    );
    let base = stub(Router::new().route(TRACING, post(|| async { chunked(5, 1000, b'x') }))).await;
    let (_db, server) = proxying(&base, limit(4096)).await;
    let (status, envelope) = server.query(&query_for("web")).await;
    bad_gateway(status, &envelope, "--upstream-max-bytes");
    // At the limit is fine.
    let base = stub(Router::new().route(TRACING, post(|| async { chunked(4, 1024, b'y') }))).await;
    let (_db, server) = proxying(&base, limit(4096)).await;
    let (status, text) = server
        .post_raw(
            TRACING,
            "application/json",
            query_for("w").to_string().into(),
        )
        .await;
    assert_eq!((status, text.len()), (200, 4096));
}

#[tokio::test]
async fn big_answers_stream_and_are_cut_at_the_limit() {
    // The querier holds back its end until the client has the start: only a relay that
    // streams can finish this.
    let release = Arc::new(Notify::new());
    let held = release.clone();
    let handler = move || {
        let held = held.clone();
        async move {
            let head = stream::once(async {
                Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; 3 * MIB / 2]))
            });
            let tail = stream::once(async move {
                held.notified().await;
                Ok(Bytes::from(vec![b'b'; MIB]))
            });
            Body::from_stream(head.chain(tail))
        }
    };
    let base = stub(Router::new().route(TRACING, post(handler))).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let mut response = post_tracing(&server).await;
    assert_eq!(response.status().as_u16(), 200);
    let mut got = Vec::new();
    let start = tokio::time::timeout(Duration::from_secs(20), async {
        while got.len() < 3 * MIB / 2 {
            got.extend_from_slice(&response.chunk().await.expect("chunk").expect("more"));
        }
    });
    start
        .await
        .expect("the start arrives before the querier sent the end");
    release.notify_one();
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        got.extend_from_slice(&chunk);
    }
    assert_eq!(got.len(), 5 * MIB / 2);
    assert!(
        got[..3 * MIB / 2].iter().all(|&b| b == b'a')
            && got[3 * MIB / 2..].iter().all(|&b| b == b'b')
    );

    // Past the first MiB the status is out: an answer over the limit is cut there.
    let base =
        stub(Router::new().route(TRACING, post(|| async { chunked(12, 256 * 1024, b'z') }))).await;
    let (_db, server) = proxying(&base, limit(2 * MIB as u64)).await;
    let mut response = post_tracing(&server).await;
    assert_eq!(response.status().as_u16(), 200);
    let (mut received, mut failed) = (0, false);
    loop {
        match response.chunk().await {
            Ok(Some(c)) => received += c.len(),
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the transfer is cut, not completed");
    assert!(received <= 2 * MIB, "{received} bytes relayed");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let target = stub(Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { "{}" }
    }))
    .await;
    let to = format!("{target}/v1/profile/ProfileTracing");
    let to_sql = format!("{target}/v1/query/");
    let redirect = |location: String, status: StatusCode| {
        move || async move { (status, [(header::LOCATION, location)]).into_response() }
    };
    let base = stub(
        Router::new()
            .route(TRACING, post(redirect(to.clone(), StatusCode::FOUND)))
            .route(
                "/v1/query/",
                post(redirect(to_sql, StatusCode::TEMPORARY_REDIRECT)),
            ),
    )
    .await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let (status, envelope) = server.query(&query_for("web")).await;
    bad_gateway(
        status,
        &envelope,
        &format!("HTTP 302 (a redirect to {to}); Embers follows no redirects"),
    );
    let (status, envelope) = server
        .post(
            "/v1/profile/services",
            &json!({"time_start": 1, "time_end": 2}),
        )
        .await;
    bad_gateway(status, &envelope, "HTTP 307");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the redirect target was never asked"
    );
}

#[tokio::test]
async fn slow_and_stalled_queriers_time_out() {
    let slow = || async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "{}"
    };
    let stalled = || async {
        let head =
            stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"{\"OPT_STATUS\"")) });
        let never = stream::once(async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(Bytes::from_static(b":\"SUCCESS\"}"))
        });
        Body::from_stream(head.chain(never))
    };
    let quick = UpstreamOptions {
        read_timeout: Duration::from_millis(300),
        ..UpstreamOptions::default()
    };
    for (router, needle) in [
        (
            Router::new().route(TRACING, post(slow)),
            "sent nothing for 300ms (--upstream-read-timeout)",
        ),
        (
            Router::new().route(TRACING, post(stalled)),
            "reading the answer failed: it sent nothing for 300ms",
        ),
    ] {
        let base = stub(router).await;
        let (_db, server) = proxying(&base, quick.clone()).await;
        let started = Instant::now();
        let (status, envelope) = server.query(&query_for("web")).await;
        bad_gateway(status, &envelope, needle);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn connecting_times_out() {
    // A listener whose accept queue is full drops further connection attempts unanswered.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let listener = socket.listen(1).expect("listen");
    let addr = listener.local_addr().expect("addr");
    let mut held = Vec::new();
    for _ in 0..8 {
        match tokio::time::timeout(
            Duration::from_millis(300),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            Ok(Ok(stream)) => held.push(stream),
            _ => break,
        }
    }
    let options = UpstreamOptions {
        connect_timeout: Duration::from_millis(300),
        ..UpstreamOptions::default()
    };
    let (_db, server) = proxying(&format!("http://{addr}"), options).await;
    let started = Instant::now();
    let (status, envelope) = server.query(&query_for("web")).await;
    bad_gateway(
        status,
        &envelope,
        "no connection within 300ms (--upstream-connect-timeout)",
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    drop((held, listener));
}

#[tokio::test]
async fn the_org_header_is_sent_only_as_configured() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = |seen: Arc<Mutex<Vec<String>>>, answer: Value| {
        move |headers: HeaderMap| async move {
            let org = headers
                .get("x-org-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            seen.lock().expect("lock").push(org.to_owned());
            answer.to_string()
        }
    };
    let table = json!({"OPT_STATUS": "SUCCESS", "DESCRIPTION": "", "debug": null,
        "result": {"columns": ["app_service", "profile_language_type", "profile_event_type", "v"], "values": []}});
    let tree = json!({"OPT_STATUS": "SUCCESS", "DESCRIPTION": "", "result": null, "debug": null});
    let base = stub(
        Router::new()
            .route(TRACING, post(record(seen.clone(), tree)))
            .route("/v1/query/", post(record(seen.clone(), table))),
    )
    .await;
    let ask = |server: &TestServer, path: &'static str, org: Option<&'static str>| {
        let body = if path == TRACING {
            query_for("web")
        } else {
            json!({"time_start": 1, "time_end": 2})
        };
        let mut request = server
            .client
            .post(format!("{}{path}", server.base))
            .json(&body);
        if let Some(org) = org {
            request = request.header("X-Org-Id", org);
        }
        async move {
            let response = request.send().await.expect("send");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.expect("json"))
        }
    };
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    assert_eq!(ask(&server, TRACING, None).await.0, 200);
    let (status, envelope) = ask(&server, TRACING, Some("7")).await;
    assert_eq!(status, 403, "{envelope}");
    assert!(
        envelope["DESCRIPTION"]
            .as_str()
            .unwrap_or("")
            .contains("--allow-org-id"),
        "{envelope}"
    );
    assert_eq!(ask(&server, "/v1/profile/services", Some("7")).await.0, 403);
    assert_eq!(
        *seen.lock().expect("lock"),
        ["-"],
        "nothing chosen by the client went upstream"
    );

    let options = UpstreamOptions {
        org_id: Some(4),
        allow_org_ids: vec![9],
        ..UpstreamOptions::default()
    };
    let (_db, server) = proxying(&base, options).await;
    seen.lock().expect("lock").clear();
    assert_eq!(ask(&server, TRACING, None).await.0, 200);
    assert_eq!(ask(&server, TRACING, Some("9")).await.0, 200);
    assert_eq!(ask(&server, "/v1/profile/services", Some("4")).await.0, 200);
    assert_eq!(ask(&server, "/v1/profile/services", Some("8")).await.0, 403);
    assert_eq!(
        *seen.lock().expect("lock"),
        ["4", "9", "4"],
        "the refused one never went upstream"
    );
}
