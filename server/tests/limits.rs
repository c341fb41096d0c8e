//! The cost limits over real HTTP: stacks refused at ingest with nothing written, answers cut to
//! the node limit with a notice, the per-query time limit, the concurrency gate, and a query
//! whose client went away stopping (its turn comes back long before it would have finished).

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{description, folded_of, query_for, with, TempDb, TestServer, T0};
use embers_model::tree::truncate::TRUNCATED_FRAME;
use embers_server::limits::{Caps, Limiter, StackLimits};
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};
use serde_json::{json, Value};

/// Start a server with `caps`; returns its limiter too, to watch the gate.
async fn server_with(db: &TempDb, caps: Caps) -> (TestServer, Arc<Limiter>) {
    let limiter = Arc::new(Limiter::new(caps));
    let shared = limiter.clone();
    let server = TestServer::start_with(&db.path(), move |s| s.limiter = shared).await;
    (server, limiter)
}

#[tokio::test]
async fn stacks_over_the_limits_reject_the_whole_request_naming_the_limit() {
    let db = TempDb::new();
    let caps = Caps {
        stacks: StackLimits {
            max_frames: 3,
            max_frame_bytes: 5,
        },
        ..Caps::default()
    };
    let (server, _) = server_with(&db, caps).await;
    let body = json!({"batches": [
        {"app_service": "web", "time": T0, "folded": "a;b;c 1\n"},
        {"app_service": "web", "time": T0, "folded": "a;b 1\na;b;c;d 2\n"},
    ]});
    let (status, envelope) = server.post("/v1/profile/ingest", &body).await;
    assert_eq!(status, 400, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    assert_eq!(
        description(&envelope),
        "batch 2: line 2: the stack has 4 frames, over the limit of 3 frames per stack \
         (--max-stack-frames)"
    );
    let (status, text) = server
        .post_raw(
            "/v1/profile/ingest?app_service=web&time=1700000000",
            "application/octet-stream",
            b"a;b 1\nok;abcdef 2\n".to_vec(),
        )
        .await;
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("line 2: frame 2 is 6 bytes long, over the limit of 5 bytes per frame (--max-frame-bytes)"),
        "{text}"
    );
    // Within the limits, the same service takes them.
    server
        .ingest(json!({"app_service": "web", "time": T0, "folded": "a;b;c 1\nab;abcde 2\n"}))
        .await;
    server.stop().await;
    let store = Store::open(&db.path()).expect("reopen");
    assert_eq!(
        store.sample_count().expect("count"),
        2,
        "nothing half-written"
    );
}

#[tokio::test]
async fn big_trees_are_cut_to_their_heaviest_part_with_a_notice() {
    let db = TempDb::new();
    let caps = Caps {
        max_answer_nodes: 6,
        ..Caps::default()
    };
    let (server, _) = server_with(&db, caps).await;
    server
        .ingest(json!({"app_service": "web", "time": T0, "folded":
            "main;hot;x 50\nmain;hot;y 30\nmain;warm 15\nmain;cold;z 4\nmain;cold;w 1\n"}))
        .await;
    for shape in ["A", "B"] {
        let (status, envelope) = server
            .query(&with(query_for("web"), json!({"result_shape": shape})))
            .await;
        assert_eq!(status, 200, "{envelope}");
        assert_eq!(envelope["OPT_STATUS"], "SUCCESS");
        assert_eq!(description(&envelope), "truncated: 6 of 9 nodes", "{shape}");
        let decoded = embers_model::decode_response(200, &envelope.to_string()).expect("decode");
        assert_eq!(decoded.profile.node_count(), 6);
        assert_eq!(
            decoded.profile.root_total(),
            100,
            "cut parts are still counted"
        );
        assert_eq!(
            decoded.notice.as_deref(),
            Some("truncated: 6 of 9 nodes"),
            "the viewer's decoder reads the notice"
        );
        assert_eq!(
            folded_of(&envelope),
            format!("web;main;{TRUNCATED_FRAME} 20\nweb;main;hot;x 50\nweb;main;hot;y 30\n")
        );
    }
    // A tree that fits says nothing.
    let (_, envelope) = server
        .query(&with(query_for("web"), json!({"tag_filter": "pod='none'"})))
        .await;
    assert_eq!(description(&envelope), "");
}

#[tokio::test]
async fn a_query_out_of_time_is_a_503_naming_the_limit() {
    let db = TempDb::new();
    let caps = Caps {
        query_timeout: Some(Duration::from_nanos(1)),
        ..Caps::default()
    };
    let (server, limiter) = server_with(&db, caps).await;
    server
        .ingest(json!({"app_service": "web", "time": T0, "folded": "a;b 1\n"}))
        .await;
    for path in ["/v1/profile/ProfileTracing", "/v1/profile/services"] {
        let (status, envelope) = server.post(path, &query_for("web")).await;
        assert_eq!(status, 503, "{path}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "FAIL");
        assert!(
            description(&envelope).contains("time limit of 1ns (--query-timeout)"),
            "{envelope}"
        );
    }
    assert_eq!(limiter.running(), 0);
}

/// `n` samples of distinct stacks, written straight to the store (faster than HTTP).
fn fill(db: &TempDb, n: usize) {
    let store = Store::open(&db.path()).expect("open");
    let samples = (0..n)
        .map(|i| Sample {
            time: T0 + (i % 60) as i64,
            stack: format!("main;a{};b{};c{i}", i % 1000, i % 7000),
            value: 1,
            detail: None,
        })
        .collect();
    let meta = BatchMeta {
        app_service: "slow".into(),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags: Tags::new(),
    };
    store.insert(&[Batch { meta, samples }]).expect("fill");
}

async fn wait_until(what: &str, within: Duration, cond: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < within,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    start.elapsed()
}

#[tokio::test]
async fn a_full_gate_answers_503_at_once_and_an_abandoned_query_stops() {
    let db = TempDb::new();
    fill(&db, 100_000);
    let caps = Caps {
        max_concurrent_queries: 1,
        max_queued_queries: 0,
        max_answer_nodes: 10_000_000,
        query_timeout: None,
        ..Caps::default()
    };
    let (server, limiter) = server_with(&db, caps).await;
    let slow = query_for("slow");
    let started = Instant::now();
    let (status, _) = server.query(&slow).await;
    assert_eq!(status, 200);
    let full = started.elapsed();

    let client = server.client.clone();
    let url = format!("{}/v1/profile/ProfileTracing", server.base);
    let body = slow.to_string();
    let abandoned = tokio::spawn(async move {
        client
            .post(url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
    });
    wait_until("the query starting", full, || limiter.running() == 1).await;

    let asked = Instant::now();
    let response = server
        .client
        .post(format!("{}/v1/profile/services", server.base))
        .json(&query_for("slow"))
        .send()
        .await
        .expect("request");
    assert!(asked.elapsed() < full / 2, "refused at once, not queued");
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(
        response.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );
    let envelope: Value = response.json().await.expect("envelope");
    assert!(
        description(&envelope).contains("1 running and 0 waiting"),
        "{envelope}"
    );

    // The client goes away: the request future is dropped, the blocking work is interrupted
    // and gives its turn back long before the query would have finished.
    abandoned.abort();
    let stopped = wait_until("the abandoned query stopping", full, || {
        limiter.running() == 0
    })
    .await;
    assert!(
        stopped < full / 2,
        "stopped after {stopped:?}; the whole query takes {full:?}"
    );
    let (status, _) = server
        .post("/v1/profile/services", &query_for("slow"))
        .await;
    assert_eq!(status, 200, "the service goes on");
}
