//! The explore tests' data set (`explore.rs`, `explore_tags.rs`) and the helpers that read the
//! answers with the contract's own row types, as the viewer decodes them.

use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{ServiceRow, TimelineAnswer, ValueCount};
use serde_json::{json, Value};

use super::{batch, ok, seeded_with, with, TempDb, TestServer};

/// An hour-aligned base time.
pub const H: i64 = 1_699_999_200;

pub async fn seeded() -> (TempDb, TestServer) {
    let a = json!({"host": "node-a", "pod": "redis-0", "pod_ns": "cache",
                   "k8s.label.app": "redis", "vtap": "agent-a"});
    let b = json!({"host": "node-b", "pod": "redis-1", "pod_ns": "team-o'brien",
                   "k8s.label.app": "redis"});
    let nginx = json!({"host": "node-a", "pod": "nginx-0", "k8s.label.app": "nginx"});
    let mut py = batch("py", "on-cpu", H + 20, json!({}), "[t] py;f 9\n");
    py["profile_language_type"] = json!("python");
    let batches = json!({"batches": [
        batch("redis-server", "on-cpu", H + 10, a.clone(),
              "[t] redis-server;main;a 100\n[t] io_thd_1;start;b 30\n"),
        batch("redis-server", "on-cpu", H + 70, a.clone(), "[t] redis-server;main;a 50\n"),
        batch("redis-server", "on-cpu", H + 75, b, "[t] redis-server;main;c 7\n"),
        batch("redis-server", "mem-alloc", H + 10, a.clone(), "[t] redis-server;zmalloc 4096\n"),
        batch("redis-server", "on-cpu", H - 1, a.clone(), "[t] redis-server;before 1000\n"),
        batch("redis-server", "on-cpu", H + 3600, a, "[t] redis-server;after 1000\n"),
        batch("nginx", "on-cpu", H + 130, nginx, "[t] nginx;worker 20\n[t] nginx;worker 5\n"),
        batch("nginx", "on-cpu", H + 3599, json!({"pod": "web_1%"}), "nginx_main 3\n"),
        batch("Total", "on-cpu", H + 10, json!({"host": "node-a"}),
              "[p] redis-server;[t] io_thd_1 30\n[p] redis-server 100\n"),
        batch("Total", "on-cpu", H + 130, json!({"host": "node-a"}), "[p] nginx;[t] nginx 25\n"),
        py,
    ]});
    seeded_with(batches).await
}

/// The `result` of a successful explore answer, which carries no notice and no debug member.
pub async fn result(server: &TestServer, path: &str, body: Value) -> Value {
    let mut envelope = ok(server, path, body).await;
    assert_eq!(envelope["DESCRIPTION"], "", "{envelope}");
    assert_eq!(envelope["debug"], Value::Null, "{envelope}");
    envelope["result"].take()
}

/// `services` as `(app, language, event, value)`.
pub async fn services(server: &TestServer, extra: Value) -> Vec<(String, String, String, u64)> {
    let body = with(json!({"time_start": H, "time_end": H + 3599}), extra);
    let result = result(server, "/v1/profile/services", body).await;
    let table: Table<ServiceRow> = serde_json::from_value(result).expect("services table");
    assert_eq!(
        table.columns,
        [
            "app_service",
            "profile_language_type",
            "profile_event_type",
            "value"
        ]
    );
    table.values.into_iter().map(Into::into).collect()
}

pub fn row(app: &str, event: &str, value: u64) -> (String, String, String, u64) {
    let language = if app == "py" { "python" } else { "eBPF" };
    (app.into(), language.into(), event.into(), value)
}

/// `timeline` over the first hour for `extra` (redis-server on-CPU unless overridden).
pub async fn timeline(server: &TestServer, extra: Value) -> TimelineAnswer {
    let base = json!({"app_service": "redis-server", "profile_language_type": "eBPF",
                      "profile_event_type": "on-cpu", "time_start": H, "time_end": H + 3599});
    let result = result(server, "/v1/profile/timeline", with(base, extra)).await;
    serde_json::from_value(result).expect("timeline answer")
}

/// Timeline rows as `(time offset from H, group, value)`.
pub fn points(a: &TimelineAnswer) -> Vec<(i64, Option<&str>, u64)> {
    a.values
        .iter()
        .map(|r| (r.time - H, r.group.as_deref(), r.value))
        .collect()
}

pub async fn counts(server: &TestServer, path: &str, body: Value) -> Vec<(String, u64)> {
    let table: Table<ValueCount> =
        serde_json::from_value(result(server, path, body).await).expect("table");
    assert_eq!(table.columns, ["value", "count"]);
    table.values.into_iter().map(Into::into).collect()
}

pub fn pairs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected
        .iter()
        .map(|(v, c)| ((*v).to_owned(), *c))
        .collect()
}
