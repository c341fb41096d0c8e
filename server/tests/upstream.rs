//! `--upstream` against a stub querier (an axum server on 127.0.0.1:0) that checks every statement
//! it receives against the allowed templates — any other statement fails the test — and answers
//! in the querier's format: `{"OPT_STATUS","DESCRIPTION","result":{"columns","values"},"debug"}`,
//! including the failure of a querier without `in_process_metrics` (DeepFlow before v7.1).

use crate::common;

use common::http::proxying;
use common::querier::{result, start_stub, statements, stub, stub_with, tl, Kind, Templates, H};
use embers_server::http::upstream::UpstreamOptions;
use serde_json::{json, Value};

#[tokio::test]
async fn explore_answers_come_from_in_process_metrics() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let filter = r"pod_ns='team-o''brien' AND k8s.label.app IN ('a', 'b\\c') AND vtap!='x'";
    let services = json!({"time_start": H, "time_end": H + 59, "profile_event_type": "on-cpu",
                          "tag_filter": filter});
    assert_eq!(
        result(&server, "/v1/profile/services", services).await["values"],
        json!([
            ["redis-server", "eBPF", "on-cpu", 187],
            ["Total", "eBPF", "on-cpu", 155],
            ["api", "eBPF", "on-cpu", 155],
            ["nginx", "eBPF", "on-cpu", 28]
        ])
    );
    assert_eq!(
        result(&server, "/v1/profile/timeline", tl(json!({}))).await,
        json!({"interval": 60, "columns": ["time", "value"], "values": [[H, 130], [H + 60, 57]]})
    );
    let grouped = tl(json!({"group_by": "k8s.label.app", "group_limit": 2}));
    assert_eq!(
        result(&server, "/v1/profile/timeline", grouped).await,
        json!({"interval": 60, "columns": ["time", "k8s.label.app", "value"],
               "values": [[H, "a", 10], [H, "b", 7], [H + 60, "a", 5], [H + 60, "other", 4]]})
    );
    let range = json!({"time_start": H, "time_end": H + 3599});
    assert_eq!(
        result(&server, "/v1/profile/tags", range.clone()).await["values"],
        json!([
            ["host", 7],
            ["k8s.label.app", 5],
            ["pod", 5],
            ["cloud.tag.team", 2]
        ])
    );
    let values = common::with(
        range,
        json!({"tag": "pod", "prefix": "WEB", "app_service": "x-y"}),
    );
    assert_eq!(
        result(&server, "/v1/profile/tag_values", values).await["values"],
        json!([["web-1", 5], ["Web-2", 3]])
    );
    let sent = statements(&stub);
    assert_eq!(sent.len(), 5, "{sent:#?}");
    assert!(
        sent.iter().all(|s| s.contains(" FROM in_process_metrics ")),
        "{sent:#?}"
    );
    assert_eq!(
        sent[0],
        format!(
            r"SELECT app_service, profile_language_type, profile_event_type, Sum(profile_value) AS v FROM in_process_metrics WHERE time>={H} AND time<={} AND profile_event_type='on-cpu' AND pod_ns='team-o\'brien' AND `k8s.label.app` IN ('a', 'b\\c') AND agent!='x' GROUP BY app_service, profile_language_type, profile_event_type ORDER BY v DESC LIMIT 1000",
            H + 59
        )
    );
    assert!(sent[1].contains("app_service='api' AND profile_language_type='eBPF'"));
    assert!(
        sent[4].contains(r"app_service='x-y' AND pod ILIKE 'WEB%' GROUP BY pod ORDER BY n DESC")
    );
    server.stop().await;
}

#[tokio::test]
async fn older_queriers_are_asked_for_in_process() {
    let (base, stub) = start_stub(stub(false)).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    for _ in 0..2 {
        assert_eq!(
            result(&server, "/v1/profile/timeline", tl(json!({}))).await["values"],
            json!([[H, 130], [H + 60, 57]])
        );
    }
    let sent = statements(&stub);
    let tables: Vec<bool> = sent
        .iter()
        .map(|s| s.contains("FROM in_process_metrics"))
        .collect();
    // Tried once, then remembered: the second request goes straight to in_process.
    assert_eq!(tables, [true, false, false], "{sent:#?}");
    assert_eq!(sent[0].replace("in_process_metrics", "in_process"), sent[1]);
    server.stop().await;
}

#[tokio::test]
async fn thread_grouping_and_per_sample_filters_read_in_process() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    assert_eq!(
        result(
            &server,
            "/v1/profile/timeline",
            tl(json!({"group_by": "thread"}))
        )
        .await["values"],
        json!([[H, "", 2], [H, "[t] io", 3], [H, "[t] main", 15]])
    );
    let traced = json!({"tag_filter": "trace_id='abc'"});
    result(&server, "/v1/profile/timeline", tl(traced)).await;
    let sent = statements(&stub);
    assert!(sent[0].starts_with(
        "SELECT time(time, 60) AS toi, profile_location_str, Sum(profile_value) AS v FROM in_process WHERE"
    ), "{}", sent[0]);
    assert!(sent[1].contains("FROM in_process WHERE") && sent[1].ends_with("LIMIT 200000"));
    assert!(sent[1].contains("trace_id='abc'"));
    server.stop().await;

    // Stacks zstd-compressed by DeepFlow's ingester arrive mangled: say so.
    let mut compressed = stub_with(true, None);
    compressed.stacks = vec![("(\u{FFFD}/\u{FFFD}\u{FFFD}", 5)];
    let (base, _stub) = start_stub(compressed).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let (status, envelope) = server
        .post("/v1/profile/timeline", &tl(json!({"group_by": "thread"})))
        .await;
    assert_eq!(status, 502, "{envelope}");
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains("profile-compression-algorithm"));
    server.stop().await;
}

#[tokio::test]
async fn failures_are_502_and_bad_requests_never_reach_the_querier() {
    let (base, stub) = start_stub(stub_with(true, Some("clickhouse timeout"))).await;
    let (_db, server) = proxying(&base, UpstreamOptions::default()).await;
    let (status, envelope) = server.post("/v1/profile/timeline", &tl(json!({}))).await;
    assert_eq!(status, 502, "{envelope}");
    assert_eq!(envelope["OPT_STATUS"], "FAIL");
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains("clickhouse timeout"));
    assert_eq!(statements(&stub).len(), 1, "not retried on in_process");
    for (path, body) in [
        ("/v1/profile/timeline", tl(json!({"group_by": "colour"}))),
        (
            "/v1/profile/services",
            json!({"time_start": H, "time_end": H, "tag_filter": "pod='a' OR 1=1"}),
        ),
        (
            "/v1/profile/tag_values",
            json!({"tag": "pod", "time_start": H}),
        ),
        (
            "/v1/profile/ProfileTracing",
            tl(json!({"tag_filter": "pod='x'; DROP TABLE t"})),
        ),
    ] {
        let (status, envelope) = server.post(path, &body).await;
        assert_eq!(status, 400, "{path}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    }
    let counts = {
        let seen = stub.seen.lock().expect("lock");
        (seen.statements.len(), seen.tracing_bodies.len())
    };
    assert_eq!(counts, (1, 0));
    server.stop().await;

    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let dead = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let (_db, server) = proxying(&dead, UpstreamOptions::default()).await;
    let (status, envelope) = server
        .post(
            "/v1/profile/services",
            &json!({"time_start": H, "time_end": H}),
        )
        .await;
    assert_eq!(status, 502, "{envelope}");
    assert!(
        envelope["DESCRIPTION"]
            .as_str()
            .unwrap_or("")
            .contains(&dead),
        "{envelope}"
    );
    assert_eq!(envelope["result"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn profile_tracing_forwards_the_canonical_filter() {
    let (base, stub) = start_stub(stub(true)).await;
    let options = UpstreamOptions {
        allow_org_ids: vec![3, 5],
        ..UpstreamOptions::default()
    };
    let (_db, server) = proxying(&base, options).await;
    let body = tl(
        json!({"tag_filter": r"pod = 'a''b' and vtap IN ('x',   'y\\z') AND `k8s.label.app`!='w'"}),
    );
    let response = server
        .client
        .post(format!("{}/v1/profile/ProfileTracing", server.base))
        .header("content-type", "application/json")
        .header("X-Org-Id", "3")
        .body(body.to_string())
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let response = server
        .client
        .post(format!("{}/v1/profile/services", server.base))
        .header("X-Org-Id", "5")
        .json(&json!({"time_start": H, "time_end": H}))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let (forwarded, org) = {
        let seen = stub.seen.lock().expect("lock");
        (seen.tracing_bodies[0].clone(), seen.org.clone())
    };
    let forwarded: Value = serde_json::from_str(&forwarded).expect("json");
    assert_eq!(
        forwarded["tag_filter"],
        r"pod='a\'b' AND agent IN ('x', 'y\\z') AND `k8s.label.app`!='w'"
    );
    assert_eq!(forwarded["app_service"], "api");
    assert_eq!(org, ["5"], "an allowed X-Org-Id reaches the SQL API");
    server.stop().await;
}

#[test]
fn the_stub_refuses_statements_outside_the_templates() {
    let t = Templates::new();
    let ok = "SELECT time(time, 60) AS toi, pod, Sum(profile_value) AS v FROM in_process_metrics \
              WHERE time>=1 AND time<=2 AND pod IN ('a', 'b\\'c') GROUP BY toi, pod ORDER BY toi LIMIT 200000";
    assert_eq!(t.kind(ok), Some(Kind::Timeline(Some("pod".into()))));
    for bad in [
        "SELECT * FROM in_process",
        &ok.replace("pod IN ('a', 'b\\'c')", "pod='a' OR 1=1"),
        &ok.replace("pod IN ('a', 'b\\'c')", "pod='a'' OR ''1'='1'"),
        &ok.replace("GROUP BY toi, pod", "GROUP BY toi, host"),
        &ok.replace("in_process_metrics", "flow_log.l7_flow_log"),
        &format!("{ok}; DROP TABLE in_process"),
    ] {
        assert_eq!(t.kind(bad), None, "{bad}");
    }
}
