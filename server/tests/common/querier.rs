//! A stub DeepFlow querier for the upstream tests: its SQL API (`/v1/query/`) accepts only the
//! statement templates Embers' explore endpoints may send (anything else is recorded as a
//! violation and refused) and answers them from fixed tables, with or without
//! `in_process_metrics`, or with a given failure; its ProfileTracing records the bodies it gets.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use regex::Regex;
use serde_json::{json, Value};

/// The hour-aligned base time of the stub's answers.
pub const H: i64 = 1_699_999_200;

/// The tag columns the tags statement groups by (the template is part of the contract).
pub const TAG_COLUMNS: &str = "app_instance, region, az, host, chost, vpc, router, dhcpgw, lb, \
    lb_listener, natgw, redis, rds, pod_cluster, pod_ns, pod_node, pod_ingress, pod_service, \
    pod_group, pod, service, gprocess, host_ip, host_hostname, chost_ip, chost_hostname, \
    pod_node_ip, pod_node_hostname, ip, agent, `k8s.label`, `k8s.annotation`, `k8s.env`, \
    `cloud.tag`";

/// Which template a statement follows, with its group column where it has one.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Services,
    /// Services read per process: in-use types' last values (`both`: also every type's sums).
    ServicesPerProcess {
        both: bool,
    },
    Timeline(Option<String>),
    /// An in-use type's timeline: each process's last value per bucket.
    InUseTimeline,
    Tags,
    TagValues(String),
}

/// The statement templates, as regular expressions.
pub struct Templates {
    services: Regex,
    services_per_process: Regex,
    timeline: Regex,
    in_use_timeline: Regex,
    tags: Regex,
    tag_values: Regex,
}

impl Templates {
    pub fn new() -> Templates {
        let lit = r"(?:'(?:[^'\\]|\\.)*'|-?\d+)";
        // Backtick identifiers only of the open-family key charset: no backslash, quote,
        // space or backtick can reach the querier inside one.
        let name = r"(?:[a-z_][a-z0-9_]*|`[A-Za-z0-9._/-]+`)";
        let cond = format!(r"{name}(?:=|!=| ILIKE ){lit}|{name} (?:NOT )?IN \({lit}(?:, {lit})*\)");
        let w = format!(r"time>=-?\d+ AND time<=-?\d+(?: AND (?:{cond}))*");
        let t = "(?:in_process_metrics|in_process)";
        let re = |s: String| Regex::new(&format!("^{s}$")).expect("template regex");
        let keys = "app_service, profile_language_type, profile_event_type";
        let cols = regex::escape(TAG_COLUMNS);
        let stack = "(?:, profile_location_str)?";
        Templates {
            services: re(format!(
                r"SELECT {keys}, Sum\(profile_value\) AS v FROM {t} WHERE {w} GROUP BY {keys} ORDER BY v DESC LIMIT 1000"
            )),
            services_per_process: re(format!(
                r"SELECT {keys}, agent, process_id, (Sum\(profile_value\) AS v, )?Last\(profile_value\) AS [vl]{stack} FROM {t} WHERE {w} GROUP BY {keys}, agent, process_id{stack} LIMIT 200000"
            )),
            timeline: re(format!(
                r"SELECT time\(time, [1-9]\d*\) AS toi(?:, ({name}))?, Sum\(profile_value\) AS v FROM {t} WHERE {w} GROUP BY toi(?:, ({name}))? ORDER BY toi LIMIT 200000"
            )),
            in_use_timeline: re(format!(
                r"SELECT time\(time, [1-9]\d*\) AS toi, agent, process_id, Last\(profile_value\) AS v{stack} FROM {t} WHERE {w} GROUP BY toi, agent, process_id{stack} ORDER BY toi LIMIT 200000"
            )),
            tags: re(format!(
                r"SELECT {cols}, Count\(row\) AS n FROM {t} WHERE {w} GROUP BY {cols} LIMIT 10000"
            )),
            tag_values: re(format!(
                r"SELECT ({name}), Count\(row\) AS n FROM {t} WHERE {w} GROUP BY ({name}) ORDER BY n DESC LIMIT 10000"
            )),
        }
    }

    pub fn kind(&self, sql: &str) -> Option<Kind> {
        let group = |c: &regex::Captures<'_>, i| c.get(i).map(|m| m.as_str().to_owned());
        if self.services.is_match(sql) {
            return Some(Kind::Services);
        }
        if let Some(c) = self.services_per_process.captures(sql) {
            return Some(Kind::ServicesPerProcess {
                both: c.get(1).is_some(),
            });
        }
        if self.in_use_timeline.is_match(sql) {
            return Some(Kind::InUseTimeline);
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
pub struct Seen {
    pub statements: Vec<String>,
    pub violations: Vec<String>,
    pub tracing_bodies: Vec<String>,
    pub org: Vec<String>,
}

/// The stub querier: its templates, what it saw, and how it answers.
pub struct Stub {
    pub templates: Templates,
    pub seen: Mutex<Seen>,
    /// Whether the querier knows `in_process_metrics` (DeepFlow ≥ v7.1).
    pub metrics_table: bool,
    /// Answer every statement with this failure instead.
    pub fail: Option<&'static str>,
    /// The stack text of thread-grouping answers.
    pub stacks: Vec<(&'static str, u64)>,
    /// Pad tags and tag-values answers to this many rows (a querier's answer at the limit).
    pub rows: usize,
    /// The profiles ProfileTracing answers (shape B), as folded stacks per app_service; any
    /// other request is answered with an empty result.
    pub profiles: Vec<(&'static str, &'static str)>,
    /// Rows answered first to the services statement (e.g. a service whose stored name is
    /// hostile).
    pub extra_services: Vec<Value>,
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
        Kind::Services => {
            let mut rows = stub.extra_services.clone();
            rows.extend([
                json!(["redis-server", "eBPF", "on-cpu", 187]),
                json!(["Total", "eBPF", "on-cpu", 155]),
                json!(["nginx", "eBPF", "on-cpu", 28.0]),
                json!(["api", "eBPF", "on-cpu", 155]),
            ]);
            let columns = [
                "app_service",
                "profile_language_type",
                "profile_event_type",
                "v",
            ];
            table(&columns, Value::Array(rows))
        }
        // Go heaps of one service on two processes: the querier's last values (300 and 40;
        // their sums, 999 and 50, are what a sum would read).
        Kind::ServicesPerProcess { both } => {
            let keys = ["app_service", "profile_language_type", "profile_event_type"];
            let per = ["agent", "process_id"];
            let mut columns: Vec<&str> = keys.iter().chain(&per).copied().collect();
            let (heap_a, heap_b) = if both {
                columns.extend(["v", "l"]);
                (json!([999, 300]), json!([50, 40]))
            } else {
                columns.push("v");
                (json!([300]), json!([40]))
            };
            let row = |cells: Value, values: &Value| {
                let mut cells = cells.as_array().cloned().unwrap_or_default();
                cells.extend(values.as_array().cloned().unwrap_or_default());
                Value::Array(cells)
            };
            let mut rows = vec![
                row(
                    json!(["heap-app", "Golang", "inuse_space", "a", 7]),
                    &heap_a,
                ),
                row(
                    json!(["heap-app", "Golang", "inuse_space", "b", 8]),
                    &heap_b,
                ),
            ];
            if both {
                rows.push(json!(["redis-server", "eBPF", "on-cpu", "a", 1, 150, 3]));
                rows.push(json!(["redis-server", "eBPF", "on-cpu", "b", 2, 37, 9]));
            }
            table(&columns, Value::Array(rows))
        }
        // One process's heap at 100 then 300 bytes, another's at 40: per bucket, per process.
        Kind::InUseTimeline => table(
            &["toi", "agent", "process_id", "v"],
            json!([[H, "a", 7, 100], [H, "b", 8, 40], [H + 60, "a", 7, 300]]),
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
    let result = pad(result, stub.rows);
    answer(StatusCode::OK, "SUCCESS", "", result)
}

/// `result` with its last row repeated (count 1, distinct text) up to `rows` rows.
fn pad(mut result: Value, rows: usize) -> Value {
    if let Some(values) = result["values"].as_array_mut() {
        let last = values.last().cloned().unwrap_or(Value::Null);
        let mut i = 0;
        while values.len() < rows {
            let mut row = last.clone();
            if let Some(cells) = row.as_array_mut() {
                let n = cells.len();
                cells[0] = json!(format!("pad-{i}"));
                cells[n - 1] = json!(1);
            }
            values.push(row);
            i += 1;
        }
    }
    result
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
    stub.seen
        .lock()
        .expect("lock")
        .tracing_bodies
        .push(body.clone());
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let app = request["app_service"].as_str().unwrap_or("");
    let Some((_, folded)) = stub.profiles.iter().find(|(a, _)| *a == app) else {
        return answer(StatusCode::OK, "SUCCESS", "", Value::Null);
    };
    let profile = embers_model::wire::folded::parse_folded(folded, app).expect("stub profile");
    let result = embers_model::export::encode::encode_result(
        Some(&profile),
        embers_model::contract::shape::ResultShape::B,
        "on-cpu",
    );
    let result = serde_json::to_value(&result).expect("encodes");
    answer(StatusCode::OK, "SUCCESS", "", result)
}

pub async fn start_stub(stub: Stub) -> (String, Arc<Stub>) {
    let stub = Arc::new(stub);
    let router = Router::new()
        .route("/v1/query/", post(query))
        .route("/v1/profile/ProfileTracing", post(tracing))
        .with_state(stub.clone());
    (super::http::serve_stub(router).await, stub)
}

pub fn stub(metrics_table: bool) -> Stub {
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
        rows: 0,
        profiles: vec![
            (
                "redis-server",
                "[t] main;dictFind 100\n[t] main;aeMain 87\n",
            ),
            ("api", "[t] main;json.Marshal 150\n[t] main 5\n"),
            ("nginx", "[t] nginx;ep_poll 28\n"),
        ],
        extra_services: Vec::new(),
    }
}

pub fn statements(stub: &Stub) -> Vec<String> {
    let seen = stub.seen.lock().expect("lock");
    assert_eq!(
        seen.violations,
        Vec::<String>::new(),
        "statements outside the templates"
    );
    seen.statements.clone()
}

pub fn stub_with(metrics_table: bool, fail: Option<&'static str>) -> Stub {
    Stub {
        fail,
        ..stub(metrics_table)
    }
}

/// The `result` of a successful answer to `body` at `path`.
pub async fn result(server: &super::TestServer, path: &str, body: Value) -> Value {
    super::ok(server, path, body).await["result"].clone()
}

/// A ProfileTracing (and timeline) body for `api` over the hour from `H`, with `extra`'s members.
pub fn tl(extra: Value) -> Value {
    super::with(
        json!({"app_service": "api", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
               "time_start": H, "time_end": H + 3599, "interval": 60}),
        extra,
    )
}
