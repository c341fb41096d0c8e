//! `--upstream` and the functions endpoints, against the stub querier: top functions are summed
//! from the ProfileTracing answers of the range's busiest services (at most `--upstream-fanout`,
//! `Total` never), the answer says which services it covers, every statement sent is one of the
//! templates and every ProfileTracing body the validated request (a service whose stored name
//! the querier would paste into SQL unescaped is counted, never asked for); grouping and the
//! function timeline, which a querier cannot answer, are a 501 saying so.

use crate::common;

use common::http::proxying;
use common::querier::{start_stub, statements, stub, H};
use embers_model::contract::explore::FunctionsAnswer;
use embers_server::http::upstream::UpstreamOptions;
use serde_json::{json, Value};

fn body(extra: Value) -> Value {
    common::with(
        json!({"time_start": H, "time_end": H + 59, "profile_event_type": "on-cpu",
               "tag_filter": "pod_ns='team-o''brien'"}),
        extra,
    )
}

fn rows(a: &FunctionsAnswer) -> Vec<(&str, u64, u64)> {
    a.values
        .iter()
        .map(|r| (r.function.as_str(), r.self_value, r.total))
        .collect()
}

async fn functions(server: &common::TestServer, extra: Value) -> FunctionsAnswer {
    let envelope = common::ok(server, "/v1/profile/functions", body(extra)).await;
    serde_json::from_value(envelope["result"].clone()).expect("a functions answer")
}

#[tokio::test]
async fn the_busiest_services_are_read_and_the_answer_says_so() {
    let (base, stub) = start_stub(stub(true)).await;
    let options = UpstreamOptions {
        fanout: 2,
        ..UpstreamOptions::default()
    };
    let (_db, server) = proxying(&base, options).await;
    let a = functions(&server, json!({})).await;
    // Every service but Total counts in the shares (187 + 155 + 28); nginx's functions do not.
    assert_eq!(a.value, 370);
    assert_eq!(
        rows(&a),
        [
            ("json.Marshal", 150, 150),
            ("dictFind", 100, 100),
            ("aeMain", 87, 87),
            ("[t] main", 5, 342)
        ]
    );
    assert_eq!(a.values[0].self_share, 150.0 * 100.0 / 370.0);
    let coverage = a.coverage.expect("a coverage note");
    assert_eq!(coverage.services, ["redis-server", "api"]);
    assert_eq!(coverage.services_in_range, 3);
    assert!(
        coverage.note.contains("the 2 busiest of 3 services")
            && coverage.note.contains("--upstream-fanout 2")
            && coverage.note.contains("not counted"),
        "{}",
        coverage.note
    );
    let sent = statements(&stub);
    assert_eq!(sent.len(), 1, "one services statement: {sent:#?}");
    let bodies = stub.seen.lock().expect("lock").tracing_bodies.clone();
    assert_eq!(bodies.len(), 2);
    for (b, app) in bodies.iter().zip(["redis-server", "api"]) {
        let sent: Value = serde_json::from_str(b).expect("json");
        assert_eq!(sent["app_service"], app);
        assert_eq!(sent["profile_language_type"], "eBPF");
        assert_eq!(
            sent["tag_filter"], "pod_ns='team-o\\'brien'",
            "rendered again: {sent}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn all_services_within_the_fanout_and_baselines() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let a = functions(&server, json!({"search": "N", "metric": "total"})).await;
    assert_eq!(
        rows(&a),
        [
            ("[t] main", 5, 342),
            ("json.Marshal", 150, 150),
            ("dictFind", 100, 100),
            ("aeMain", 87, 87),
            ("[t] nginx", 0, 28)
        ],
        "every name with an n, by total"
    );
    let coverage = a.coverage.expect("a coverage note");
    assert_eq!(coverage.services, ["redis-server", "api", "nginx"]);
    assert!(
        coverage.note.contains("all 3 services"),
        "{}",
        coverage.note
    );
    let named = functions(&server, json!({"app_service": "nginx"})).await;
    assert_eq!((named.value, rows(&named).len()), (28, 2));
    let b = functions(
        &server,
        json!({"baseline_time_start": H - 60, "baseline_time_end": H - 1, "order_by": "change"}),
    )
    .await;
    assert_eq!(b.baseline_value, Some(370));
    assert!(
        b.values.iter().all(|r| r.change == Some(0.0)),
        "the stub answers alike"
    );
    statements(&stub);
    server.stop().await;
}

#[tokio::test]
async fn groups_and_function_timelines_need_the_store() {
    let (base, _stub) = start_stub(stub(true)).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let (status, envelope) = server
        .post("/v1/profile/functions", &body(json!({"group_by": "pod"})))
        .await;
    assert_eq!(status, 501, "{envelope}");
    assert!(common::description(&envelope).contains("group_by ('pod') needs Embers' own store"));
    let timeline = json!({"profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": H, "time_end": H + 59, "function": "main"});
    let (status, envelope) = server
        .post("/v1/profile/function_timeline", &timeline)
        .await;
    assert_eq!(status, 501, "{envelope}");
    assert!(common::description(&envelope).contains("function_timeline needs Embers' own store"));
    // Bad input is still a 400 naming the member, before anything is asked upstream.
    let (status, envelope) = server
        .post("/v1/profile/functions", &body(json!({"limit": 5000})))
        .await;
    assert_eq!(status, 400, "{envelope}");
    assert!(common::description(&envelope).contains("limit must be 1 to 1000"));
    server.stop().await;
}

/// A service the querier names with a quote (whoever sent its profiles chose the name) is the
/// busiest, yet no ProfileTracing question names it: its value counts, its functions do not.
#[tokio::test]
async fn a_service_named_with_a_quote_is_never_asked_for() {
    let mut hostile = stub(true);
    hostile.extra_services = vec![
        json!(["x' OR 1=1 --", "eBPF", "on-cpu", 500]),
        json!(["web", "eBPF'", "on-cpu", 400]),
    ];
    let (base, stub) = start_stub(hostile).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let a = functions(&server, json!({})).await;
    assert_eq!(a.value, 370 + 500 + 400);
    let coverage = a.coverage.expect("a coverage note");
    assert_eq!(coverage.services, ["redis-server", "api", "nginx"]);
    assert_eq!(coverage.services_in_range, 5);
    let bodies = stub.seen.lock().expect("lock").tracing_bodies.clone();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    for body in &bodies {
        let sent: Value = serde_json::from_str(body).expect("json");
        assert!(!body.contains("OR 1=1"), "{body}");
        assert_eq!(sent["profile_language_type"], "eBPF", "{body}");
    }
    server.stop().await;
}
