//! `--upstream` against a stub querier (an axum server on 127.0.0.1:0) that checks every statement
//! it receives against the allowed templates — any other statement fails the test — and answers
//! in the querier's format: `{"OPT_STATUS","DESCRIPTION","result":{"columns","values"},"debug"}`,
//! including the failure of a querier without `in_process_metrics` (DeepFlow before v7.1.2).

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use common::http::proxying;
use common::TestServer;
use embers_server::http::upstream::UpstreamOptions;
use regex::Regex;
use serde_json::{json, Value};

const H: i64 = 1_699_999_200;

/// The tag columns the tags statement groups by (the template is part of the contract).
const TAG_COLUMNS: &str = "region, az, host, chost, vpc, router, dhcpgw, lb, natgw, redis, rds, \
    pod_cluster, pod_ns, pod_node, pod_service, pod_group, pod, service, gprocess, host_ip, \
    host_hostname, chost_ip, chost_hostname, pod_node_ip, pod_node_hostname, ip, app_instance, \
    agent, `k8s.label`, `k8s.annotation`, `k8s.env`, `cloud.tag`";

/// Which template a statement follows, with its group column where it has one.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Services,
    Timeline(Option<String>),
    Tags,
    TagValues(String),
}

struct Templates {
    services: Regex,
    timeline: Regex,
    tags: Regex,
    tag_values: Regex,
}

impl Templates {
    fn new() -> Templates {
        let lit = r"(?:'(?:[^'\\]|\\.)*'|-?\d+)";
        let name = r"(?:[a-z_][a-z0-9_]*|`[^`\x00-\x1f]+`)";
        let cond = format!(r"{name}(?:=|!=){lit}|{name} (?:NOT )?IN \({lit}(?:, {lit})*\)");
        let w = format!(r"time>=-?\d+ AND time<=-?\d+(?: AND (?:{cond}))*");
        let t = "(?:in_process_metrics|in_process)";
        let re = |s: String| Regex::new(&format!("^{s}$")).expect("template regex");
        let keys = "app_service, profile_language_type, profile_event_type";
        let cols = regex::escape(TAG_COLUMNS);
        Templates {
            services: re(format!(
                r"SELECT {keys}, Sum\(profile_value\) AS v FROM {t} WHERE {w} GROUP BY {keys} ORDER BY v DESC LIMIT 1000"
            )),
            timeline: re(format!(
                r"SELECT time\(time, [1-9]\d*\) AS toi(?:, ({name}))?, Sum\(profile_value\) AS v FROM {t} WHERE {w} GROUP BY toi(?:, ({name}))? ORDER BY toi LIMIT 200000"
            )),
            tags: re(format!(
                r"SELECT {cols}, Count\(row\) AS n FROM {t} WHERE {w} GROUP BY {cols} LIMIT 10000"
            )),
            tag_values: re(format!(
                r"SELECT ({name}), Count\(row\) AS n FROM {t} WHERE {w} GROUP BY ({name}) ORDER BY n DESC LIMIT 10000"
            )),
        }
    }

    fn kind(&self, sql: &str) -> Option<Kind> {
        let group = |c: &regex::Captures<'_>, i| c.get(i).map(|m| m.as_str().to_owned());
        if self.services.is_match(sql) {
            return Some(Kind::Services);
        }
        if self.tags.is_match(sql) {
            return Some(Kind::Tags);
        }
        if let Some(c) = self.timeline.captures(sql) {
            return (group(&c, 1) == group(&c, 2)).then(|| Kind::Timeline(group(&c, 1)));
        }
        let c = self.tag_values.captures(sql)?;
        (group(&c, 1) == group(&c, 2)).then(|| Kind::TagValues(group(&c, 1).unwrap_or_default()))
    }
}

/// What the stub saw and how it behaves.
#[derive(Default)]
struct Seen {
    statements: Vec<String>,
    violations: Vec<String>,
    tracing_bodies: Vec<String>,
    org: Vec<String>,
}

struct Stub {
    templates: Templates,
    seen: Mutex<Seen>,
    /// Whether the querier knows `in_process_metrics` (DeepFlow ≥ v7.1.2).
    metrics_table: bool,
    /// Answer every statement with this failure instead.
    fail: Option<&'static str>,
    /// The stack text of thread-grouping answers.
    stacks: Vec<(&'static str, u64)>,
}

fn answer(status: StatusCode, opt: &str, description: &str, result: Value) -> (StatusCode, String) {
    let body =
        json!({"OPT_STATUS": opt, "DESCRIPTION": description, "result": result, "debug": null});
    (status, body.to_string())
}

fn table(columns: &[&str], values: Value) -> Value {
    json!({"columns": columns, "values": values})
}

async fn query(
    State(stub): State<Arc<Stub>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> (StatusCode, String) {
    let sql = form.get("sql").cloned().unwrap_or_default();
    let kind = stub.templates.kind(&sql);
    {
        let mut seen = stub.seen.lock().expect("lock");
        if form.get("db").map(String::as_str) != Some("profile") || kind.is_none() {
            seen.violations.push(format!("{form:?}"));
        }
        seen.statements.push(sql.clone());
        let org = headers.get("x-org-id").and_then(|v| v.to_str().ok());
        seen.org.push(org.unwrap_or("").to_owned());
    }
    let Some(kind) = kind else {
        return answer(
            StatusCode::BAD_REQUEST,
            "INVALID_POST_DATA",
            "not a template",
            Value::Null,
        );
    };
    if let Some(description) = stub.fail {
        return answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            "FAIL",
            description,
            Value::Null,
        );
    }
    if !stub.metrics_table && sql.contains(" FROM in_process_metrics ") {
        let d = "Code: 60. DB::Exception: Table profile.in_process_metrics does not exist. (UNKNOWN_TABLE)";
        return answer(StatusCode::INTERNAL_SERVER_ERROR, "FAIL", d, Value::Null);
    }
    let result = match kind {
        Kind::Services => table(
            &[
                "app_service",
                "profile_language_type",
                "profile_event_type",
                "v",
            ],
            json!([
                ["redis-server", "eBPF", "on-cpu", 187],
                ["Total", "eBPF", "on-cpu", 155],
                ["nginx", "eBPF", "on-cpu", 28.0],
                ["api", "eBPF", "on-cpu", 155]
            ]),
        ),
        // Columns in another order than selected, as the querier may answer.
        Kind::Timeline(None) => table(&["v", "toi"], json!([[57, H + 60], [130, H]])),
        Kind::Timeline(Some(g)) if g == "profile_location_str" => {
            let rows: Vec<Value> = stub.stacks.iter().map(|(s, v)| json!([H, s, v])).collect();
            table(&["toi", "profile_location_str", "v"], json!(rows))
        }
        Kind::Timeline(Some(g)) => table(
            &["toi", g.trim_matches('`'), "v"],
            json!([
                [H, "a", 10],
                [H, "b", 7],
                [H + 60, "a", 5],
                [H + 60, "c", 3],
                [H + 60, "", 1]
            ]),
        ),
        Kind::Tags => tags_answer(),
        Kind::TagValues(g) => table(
            &[g.trim_matches('`'), "n"],
            json!([["db", 9], ["web-1", 5], ["", 4], ["Web-2", 3]]),
        ),
    };
    answer(StatusCode::OK, "SUCCESS", "", result)
}

fn tags_answer() -> Value {
    let names: Vec<&str> = TAG_COLUMNS
        .split(", ")
        .map(|c| c.trim_matches('`'))
        .collect();
    let mut columns = names.clone();
    columns.push("n");
    let row = |pairs: &[(&str, &str)], n: u64| {
        let mut cells: Vec<Value> = names
            .iter()
            .map(|c| json!(pairs.iter().find(|(k, _)| k == c).map_or("", |(_, v)| *v)))
            .collect();
        cells.push(json!(n));
        Value::Array(cells)
    };
    let rows = json!([
        row(
            &[
                ("host", "node-a"),
                ("pod", "web-1"),
                ("k8s.label", r#"{"app":"web","tier":""}"#)
            ],
            5
        ),
        row(&[("host", "node-b"), ("cloud.tag", r#"{"team":"x"}"#)], 2),
    ]);
    table(&columns, rows)
}

async fn tracing(State(stub): State<Arc<Stub>>, body: String) -> (StatusCode, String) {
    stub.seen.lock().expect("lock").tracing_bodies.push(body);
    answer(StatusCode::OK, "SUCCESS", "", Value::Null)
}

async fn start_stub(stub: Stub) -> (String, Arc<Stub>) {
    let stub = Arc::new(stub);
    let router = Router::new()
        .route("/v1/query/", post(query))
        .route("/v1/profile/ProfileTracing", post(tracing))
        .with_state(stub.clone());
    (common::http::serve_stub(router).await, stub)
}

fn stub(metrics_table: bool) -> Stub {
    Stub {
        templates: Templates::new(),
        seen: Mutex::new(Seen::default()),
        metrics_table,
        fail: None,
        stacks: vec![
            ("[t] main;a;b", 10),
            ("[t] main;c", 5),
            ("[t] io;x", 3),
            ("orphan", 2),
        ],
    }
}

fn statements(stub: &Stub) -> Vec<String> {
    let seen = stub.seen.lock().expect("lock");
    assert_eq!(
        seen.violations,
        Vec::<String>::new(),
        "statements outside the templates"
    );
    seen.statements.clone()
}

async fn result(server: &TestServer, path: &str, body: Value) -> Value {
    let (status, envelope) = server.post(path, &body).await;
    assert_eq!(status, 200, "{path}: {envelope}");
    envelope["result"].clone()
}

fn tl(extra: Value) -> Value {
    common::with(
        json!({"app_service": "api", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
               "time_start": H, "time_end": H + 3599, "interval": 60}),
        extra,
    )
}

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
        json!({"tag": "pod", "prefix": "WEB", "app_service": "x'y"}),
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
    assert!(sent[4].contains(r"app_service='x\'y' GROUP BY pod ORDER BY n DESC"));
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

fn stub_with(metrics_table: bool, fail: Option<&'static str>) -> Stub {
    Stub {
        fail,
        ..stub(metrics_table)
    }
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
