//! OTLP profiles built by the official `opentelemetry-proto` Python package (PyPI), sent over
//! real HTTP (protobuf, OTLP/JSON, gzip) and real gRPC (grpcio, gzip), land with the mapped
//! tags, threads, trace ids and times: every ProfileTracing answer equals the answer of a
//! service that ingested the client's hand-written expected stacks as folded text. Bad requests
//! are refused naming the field, with nothing stored; tokens guard both receivers.
//!
//! Needs the venv of `scripts/setup.sh --test` (see `common::otlp::python`).

use crate::common;

use common::otlp::{client, query, reference, OtlpServer};
use common::{folded_of, TempDb, TestServer};
use embers_server::http::guard::args::GuardArgs;
use serde_json::Value;

/// The queries both services must answer alike: each batch's process and event, tag filters
/// on mapped tags and the trace id, and one-second windows that show where samples are in time.
fn queries() -> Vec<Value> {
    let trace = "trace_id='101112131415161718191a1b1c1d1e1f'";
    vec![
        query("redis-server", "on-cpu", 0, 60, ""),
        query("redis-server", "off-cpu", 0, 60, ""),
        query("checkout", "on-cpu", 0, 60, ""),
        query("redis-server", "on-cpu", 0, 60, trace),
        query(
            "redis-server",
            "on-cpu",
            0,
            60,
            "span_name='abababababababab'",
        ),
        query(
            "redis-server",
            "on-cpu",
            0,
            60,
            "host='node-a' AND k8s.label.app='redis'",
        ),
        query(
            "redis-server",
            "on-cpu",
            0,
            60,
            "pod_cluster='prod' AND pod_node='node-a'",
        ),
        query(
            "checkout",
            "on-cpu",
            0,
            60,
            "pod_group='checkout' AND region='eu-west-1'",
        ),
        query(
            "checkout",
            "on-cpu",
            0,
            60,
            "app_instance='checkout-1' AND az='eu-west-1a'",
        ),
        query("redis-server", "on-cpu", 1, 1, ""),
        query("redis-server", "on-cpu", 30, 30, ""),
        query("checkout", "on-cpu", 20, 20, ""),
        query("Total", "on-cpu", 0, 60, ""),
    ]
}

/// The folded answer of `q`, or `""` for an empty one.
async fn answer(server: &TestServer, q: &Value) -> String {
    let (status, envelope) = server.query(q).await;
    assert_eq!(status, 200, "{q}: {envelope}");
    let empty = envelope["result"]["functions"].is_null();
    if empty {
        String::new()
    } else {
        folded_of(&envelope)
    }
}

/// Send the good request with `args` (after the transport and address) and hold the service's
/// answers to the reference's.
async fn lands_as_expected(transport: &str, args: &[&str]) {
    let Some(python) = common::otlp::python() else {
        return;
    };
    let server = OtlpServer::open().await;
    let address = if transport == "http" {
        server.http.base.clone()
    } else {
        server.grpc.clone()
    };
    let mut all = vec![transport, address.as_str()];
    all.extend(args);
    let out = client(&python, &all).await;
    let ok = if transport == "http" { "200" } else { "\"OK\"" };
    assert_eq!(out["answer"]["status"].to_string(), ok, "{out}");
    let (_db, reference) = reference(&out["expected"]).await;
    for q in queries() {
        let (got, want) = (answer(&server.http, &q).await, answer(&reference, &q).await);
        assert_eq!(got, want, "{transport} {args:?}: {q}");
    }
    // Not vacuous: the answers hold the mapped threads, kinds and the trace's own stack.
    let redis = answer(&server.http, &queries()[0]).await;
    for line in [
        "redis-server;[t] io-1;main;[l] __libc_read;[k] ksys_read 150000",
        "redis-server;[t] main;main;processCommand;[libjemalloc.so.2] +0x1a2b 50000",
        "redis-server;[t] io-2;main;caller;inl_leaf 50000",
    ] {
        assert!(redis.lines().any(|l| l == line), "{line} in\n{redis}");
    }
    let traced = answer(&server.http, &queries()[3]).await;
    assert_eq!(
        traced.trim(),
        "redis-server;[t] io-2;main;caller;inl_leaf 50000"
    );
    let off = answer(&server.http, &queries()[1]).await;
    assert_eq!(
        off.trim(),
        "redis-server;[t] main;main;[l] epoll_wait;[k] schedule 5000"
    );
    // 4 rows of redis on-CPU, 1 off-CPU, 2 of checkout.
    assert_eq!(server.store.sample_count().expect("count"), 7);
    reference.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn http_protobuf_lands_with_mapped_tags_threads_and_trace_ids() {
    lands_as_expected("http", &[]).await;
}

#[tokio::test]
async fn http_gzip_and_json_land_the_same() {
    lands_as_expected("http", &["--gzip"]).await;
    lands_as_expected("http", &["--json"]).await;
    lands_as_expected("http", &["--json", "--gzip"]).await;
}

#[tokio::test]
async fn grpc_with_and_without_gzip_lands_the_same() {
    lands_as_expected("grpc", &["--gzip"]).await;
    lands_as_expected("grpc", &[]).await;
}

#[tokio::test]
async fn a_bad_index_is_refused_naming_the_field_and_nothing_is_stored() {
    let Some(python) = common::otlp::python() else {
        return;
    };
    let server = OtlpServer::open().await;
    let field = "resource_profiles[1].scope_profiles[0].profiles[0].samples[1].stack_index: \
                 index 999 is out of range: dictionary.stack_table has";
    let base = server.http.base.clone();
    for args in [
        vec!["http", &base, "--scenario", "bad"],
        vec!["http", &base, "--scenario", "bad", "--json"],
        vec!["grpc", &server.grpc, "--scenario", "bad"],
    ] {
        let out = client(&python, &args).await;
        let answer = &out["answer"];
        let status = answer["status"].to_string();
        assert!(status == "400" || status == "\"INVALID_ARGUMENT\"", "{out}");
        let message = answer["message"].as_str().unwrap_or("");
        assert!(message.contains(field), "{args:?}: {message}");
    }
    assert_eq!(server.store.sample_count().expect("count"), 0);
    server.stop().await;
}

#[tokio::test]
async fn tokens_guard_both_receivers() {
    let Some(python) = common::otlp::python() else {
        return;
    };
    let db = TempDb::new();
    let token = db.dir.path().join("token");
    std::fs::write(&token, "s3cret\n").expect("token");
    let guard = GuardArgs {
        token_file: Some(token),
        ..GuardArgs::default()
    };
    let server = OtlpServer::start(guard, embers_server::DEFAULT_INGEST_LIMIT).await;
    let base = server.http.base.clone();
    let refused = client(&python, &["http", &base]).await;
    assert_eq!(refused["answer"]["status"], 401, "{refused}");
    let refused = client(&python, &["grpc", &server.grpc, "--token", "wrong"]).await;
    assert_eq!(refused["answer"]["status"], "UNAUTHENTICATED", "{refused}");
    assert!(
        refused["answer"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not valid")),
        "{refused}"
    );
    assert_eq!(server.store.sample_count().expect("count"), 0);
    let ok = client(&python, &["http", &base, "--token", "s3cret"]).await;
    assert_eq!(ok["answer"]["status"], 200, "{ok}");
    let ok = client(&python, &["grpc", &server.grpc, "--token", "s3cret"]).await;
    assert_eq!(ok["answer"]["status"], "OK", "{ok}");
    assert_eq!(server.store.sample_count().expect("count"), 14);
    server.stop().await;
}
