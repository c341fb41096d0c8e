//! The explore endpoints over real HTTP against known data: exact sums for services, timelines
//! (edges, alignment, the interval ladder, grouping with `other` and `""`, threads, `Total`, every
//! filter operator, per-sample filters read from the samples), tags and tag values, empty
//! ranges, and every 400. Answers are decoded with the contract's own row types, as the viewer
//! decodes them.

mod common;

use common::{batch, ok, seeded_with, TempDb, TestServer};
use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{ServiceRow, TimelineAnswer, ValueCount};
use serde_json::{json, Value};

/// An hour-aligned base time.
const H: i64 = 1_699_999_200;

async fn seeded() -> (TempDb, TestServer) {
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
async fn result(server: &TestServer, path: &str, body: Value) -> Value {
    let mut envelope = ok(server, path, body).await;
    assert_eq!(envelope["DESCRIPTION"], "", "{envelope}");
    assert_eq!(envelope["debug"], Value::Null, "{envelope}");
    envelope["result"].take()
}

/// `services` as `(app, language, event, value)`.
async fn services(server: &TestServer, extra: Value) -> Vec<(String, String, String, u64)> {
    let body = common::with(json!({"time_start": H, "time_end": H + 3599}), extra);
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

fn row(app: &str, event: &str, value: u64) -> (String, String, String, u64) {
    let language = if app == "py" { "python" } else { "eBPF" };
    (app.into(), language.into(), event.into(), value)
}

/// `timeline` over the first hour for `extra` (redis-server on-CPU unless overridden).
async fn timeline(server: &TestServer, extra: Value) -> TimelineAnswer {
    let base = json!({"app_service": "redis-server", "profile_language_type": "eBPF",
                      "profile_event_type": "on-cpu", "time_start": H, "time_end": H + 3599});
    let result = result(server, "/v1/profile/timeline", common::with(base, extra)).await;
    serde_json::from_value(result).expect("timeline answer")
}

/// Timeline rows as `(time offset from H, group, value)`.
fn points(a: &TimelineAnswer) -> Vec<(i64, Option<&str>, u64)> {
    a.values
        .iter()
        .map(|r| (r.time - H, r.group.as_deref(), r.value))
        .collect()
}

async fn counts(server: &TestServer, path: &str, body: Value) -> Vec<(String, u64)> {
    let table: Table<ValueCount> =
        serde_json::from_value(result(server, path, body).await).expect("table");
    assert_eq!(table.columns, ["value", "count"]);
    table.values.into_iter().map(Into::into).collect()
}

fn pairs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected
        .iter()
        .map(|(v, c)| ((*v).to_owned(), *c))
        .collect()
}

#[tokio::test]
async fn services_rank_every_service_of_the_range() {
    let (_db, server) = seeded().await;
    let all = vec![
        row("redis-server", "mem-alloc", 4096),
        row("redis-server", "on-cpu", 187),
        row("Total", "on-cpu", 155),
        row("nginx", "on-cpu", 28),
        row("py", "on-cpu", 9),
    ];
    assert_eq!(services(&server, json!({})).await, all);
    // Inclusive edges, single seconds.
    let at = |s: i64, e: i64| json!({"time_start": s, "time_end": e});
    assert_eq!(
        services(&server, at(H + 10, H + 10)).await,
        vec![
            row("redis-server", "mem-alloc", 4096),
            row("Total", "on-cpu", 130),
            row("redis-server", "on-cpu", 130),
        ],
        "ties by name (bytes: 'T' < 'r')"
    );
    assert_eq!(
        services(&server, at(H + 3599, H + 3600)).await,
        vec![
            row("redis-server", "on-cpu", 1000),
            row("nginx", "on-cpu", 3)
        ]
    );
    // Partial minutes at both ends (seconds from the 1 s rollup, whole minutes from the 1 min).
    assert_eq!(
        services(
            &server,
            json!({"time_start": H + 9, "time_end": H + 74, "profile_event_type": "on-cpu"})
        )
        .await,
        vec![
            row("redis-server", "on-cpu", 180),
            row("Total", "on-cpu", 130),
            row("py", "on-cpu", 9)
        ]
    );
    assert_eq!(services(&server, at(H + 21, H + 69)).await, vec![]);
    let ebpf = json!({"profile_language_type": "eBPF", "profile_event_type": "on-cpu"});
    assert_eq!(services(&server, ebpf).await, all[1..4].to_vec());
    server.stop().await;
}

#[tokio::test]
async fn every_filter_operator_selects_exactly() {
    let (_db, server) = seeded().await;
    let f = |filter: &str| json!({"tag_filter": filter});
    assert_eq!(
        services(&server, f("pod='redis-1'")).await,
        vec![row("redis-server", "on-cpu", 7)]
    );
    assert_eq!(
        services(&server, f("pod_ns='team-o''brien'")).await,
        vec![row("redis-server", "on-cpu", 7)]
    );
    assert_eq!(
        services(&server, f("pod!='redis-1'")).await,
        vec![
            row("redis-server", "mem-alloc", 4096),
            row("redis-server", "on-cpu", 180),
            row("Total", "on-cpu", 155),
            row("nginx", "on-cpu", 28),
            row("py", "on-cpu", 9),
        ]
    );
    assert_eq!(
        services(&server, f("pod IN ('redis-0', 'nginx-0')")).await,
        vec![
            row("redis-server", "mem-alloc", 4096),
            row("redis-server", "on-cpu", 180),
            row("nginx", "on-cpu", 25),
        ]
    );
    assert_eq!(
        services(&server, f("pod NOT IN ('redis-0')")).await,
        vec![
            row("Total", "on-cpu", 155),
            row("nginx", "on-cpu", 28),
            row("py", "on-cpu", 9),
            row("redis-server", "on-cpu", 7),
        ]
    );
    assert_eq!(
        services(&server, f("k8s.label.app='redis' AND vtap='agent-a'")).await,
        vec![
            row("redis-server", "mem-alloc", 4096),
            row("redis-server", "on-cpu", 180),
        ]
    );
    assert_eq!(
        services(&server, f("app_service='nginx'")).await,
        vec![row("nginx", "on-cpu", 28)]
    );
    // Per-sample fields are answered from the samples themselves.
    assert_eq!(
        services(&server, f(&format!("time='{}'", H + 70))).await,
        vec![row("redis-server", "on-cpu", 50)]
    );
    let created = (H + 75) * 1_000_000;
    assert_eq!(
        services(&server, f(&format!("profile_create_timestamp={created}"))).await,
        vec![row("redis-server", "on-cpu", 7)]
    );
    assert_eq!(
        services(&server, f("_id != 0")).await,
        services(&server, json!({})).await
    );
    server.stop().await;
}

#[tokio::test]
async fn timelines_bucket_sum_and_pick_intervals() {
    let (_db, server) = seeded().await;
    let a = timeline(&server, json!({})).await;
    assert_eq!(a.interval, 30, "an hour: 10 s would give 360 buckets");
    assert_eq!(a.columns, ["time", "value"]);
    assert_eq!(points(&a), vec![(0, None, 130), (60, None, 57)]);
    let a = timeline(&server, json!({"time_end": H + 119, "interval": 1})).await;
    assert_eq!(
        points(&a),
        vec![(10, None, 130), (70, None, 50), (75, None, 7)]
    );
    // An odd interval: buckets are multiples of 7 counted from the epoch.
    let a = timeline(&server, json!({"interval": 7})).await;
    let b7 = |t: i64| (t.div_euclid(7) * 7) - H;
    assert_eq!(
        points(&a),
        vec![
            (b7(H + 10), None, 130),
            (b7(H + 70), None, 50),
            (b7(H + 75), None, 7)
        ]
    );
    // Partial minutes at both ends with a 60 s interval.
    let a = timeline(
        &server,
        json!({"time_start": H + 9, "time_end": H + 74, "interval": 60}),
    )
    .await;
    assert_eq!(points(&a), vec![(0, None, 130), (60, None, 50)]);
    // The ladder: 300 one-second buckets fit, 301 do not.
    let a = timeline(&server, json!({"time_start": H + 1, "time_end": H + 300})).await;
    assert_eq!(a.interval, 1);
    let a = timeline(&server, json!({"time_start": H, "time_end": H + 300})).await;
    assert_eq!(a.interval, 5);
    let a = timeline(&server, json!({"time_end": H + 6 * 3600})).await;
    assert_eq!(a.interval, 300);
    assert_eq!(
        points(&a),
        vec![(0, None, 187), (3600, None, 1000)],
        "buckets without samples are left out"
    );
    let empty = timeline(&server, json!({"time_start": H + 11, "time_end": H + 69})).await;
    assert_eq!((empty.interval, empty.values.len()), (1, 0));
    server.stop().await;
}

#[tokio::test]
async fn grouped_timelines() {
    let (_db, server) = seeded().await;
    let a = timeline(&server, json!({"interval": 60, "group_by": "thread"})).await;
    assert_eq!(a.columns, ["time", "thread", "value"]);
    assert_eq!(
        points(&a),
        vec![
            (0, Some("[t] io_thd_1"), 30),
            (0, Some("[t] redis-server"), 100),
            (60, Some("[t] redis-server"), 57),
        ]
    );
    let a = timeline(&server, json!({"interval": 60, "group_by": "pod"})).await;
    assert_eq!(
        points(&a),
        vec![
            (0, Some("redis-0"), 130),
            (60, Some("redis-0"), 50),
            (60, Some("redis-1"), 7)
        ]
    );
    let a = timeline(
        &server,
        json!({"interval": 60, "group_by": "pod", "group_limit": 1}),
    )
    .await;
    assert_eq!(
        points(&a),
        vec![
            (0, Some("redis-0"), 130),
            (60, Some("other"), 7),
            (60, Some("redis-0"), 50)
        ]
    );
    // Every process but Total; samples without the label group under "".
    let all = json!({"app_service": null, "interval": 60, "group_by": "k8s.label.app"});
    let a = timeline(&server, all).await;
    assert_eq!(a.columns, ["time", "k8s.label.app", "value"]);
    assert_eq!(
        points(&a),
        vec![
            (0, Some("redis"), 130),
            (60, Some("redis"), 57),
            (120, Some("nginx"), 25),
            (3540, Some(""), 3),
        ]
    );
    let by_app = json!({"app_service": null, "interval": 3600, "group_by": "app_service"});
    assert_eq!(
        points(&timeline(&server, by_app).await),
        vec![(0, Some("nginx"), 28), (0, Some("redis-server"), 187)]
    );
    let vtap = json!({"interval": 3600, "group_by": "vtap"});
    assert_eq!(
        points(&timeline(&server, vtap).await),
        vec![(0, Some(""), 7), (0, Some("agent-a"), 180)]
    );
    // Total: the per-host stacks, grouped by their thread frame ("" for `[p] proc` alone).
    let total = json!({"app_service": "Total", "interval": 60, "group_by": "thread"});
    assert_eq!(
        points(&timeline(&server, total).await),
        vec![
            (0, Some(""), 100),
            (0, Some("[t] io_thd_1"), 30),
            (120, Some("[t] nginx"), 25)
        ]
    );
    // Per-sample filters with grouping come from the samples, with the same answer.
    let raw = json!({"interval": 60, "group_by": "thread", "tag_filter": "_id != 0"});
    let rolled = json!({"interval": 60, "group_by": "thread"});
    assert_eq!(
        timeline(&server, raw).await,
        timeline(&server, rolled).await
    );
    let filtered = json!({"interval": 60, "tag_filter": "pod NOT IN ('redis-1')"});
    assert_eq!(
        points(&timeline(&server, filtered).await),
        vec![(0, None, 130), (60, None, 50)]
    );
    server.stop().await;
}

#[tokio::test]
async fn tags_and_tag_values() {
    let (_db, server) = seeded().await;
    let range = json!({"time_start": H, "time_end": H + 3599});
    assert_eq!(
        counts(&server, "/v1/profile/tags", range.clone()).await,
        pairs(&[
            ("host", 10),
            ("pod", 8),
            ("k8s.label.app", 7),
            ("pod_ns", 5),
            ("agent", 4)
        ])
    );
    let nginx = common::with(range.clone(), json!({"app_service": "nginx"}));
    assert_eq!(
        counts(&server, "/v1/profile/tags", nginx).await,
        pairs(&[("pod", 3), ("host", 2), ("k8s.label.app", 2)])
    );
    let values = |extra: Value| {
        let body = common::with(range.clone(), extra);
        let server = &server;
        async move { counts(server, "/v1/profile/tag_values", body).await }
    };
    assert_eq!(
        values(json!({"tag": "pod"})).await,
        pairs(&[
            ("redis-0", 4),
            ("nginx-0", 2),
            ("redis-1", 1),
            ("web_1%", 1)
        ])
    );
    assert_eq!(
        values(json!({"tag": "pod", "prefix": "REDIS"})).await,
        pairs(&[("redis-0", 4), ("redis-1", 1)])
    );
    assert_eq!(
        values(json!({"tag": "pod", "limit": 1})).await,
        pairs(&[("redis-0", 4)])
    );
    // LIKE wildcards in a prefix are plain characters.
    assert_eq!(
        values(json!({"tag": "pod", "prefix": "web_"})).await,
        pairs(&[("web_1%", 1)])
    );
    assert_eq!(values(json!({"tag": "pod", "prefix": "w_b"})).await, vec![]);
    assert_eq!(values(json!({"tag": "pod", "prefix": "%"})).await, vec![]);
    assert_eq!(
        values(json!({"tag": "app_service"})).await,
        pairs(&[("redis-server", 5), ("Total", 3), ("nginx", 3), ("py", 1)])
    );
    assert_eq!(
        values(json!({"tag": "app_service", "prefix": "RED"})).await,
        pairs(&[("redis-server", 5)])
    );
    assert_eq!(
        values(json!({"tag": "thread", "app_service": "redis-server"})).await,
        pairs(&[("[t] redis-server", 4), ("[t] io_thd_1", 1)])
    );
    assert_eq!(
        values(json!({"tag": "vtap"})).await,
        pairs(&[("agent-a", 4)])
    );
    let empty = json!({"time_start": H + 11, "time_end": H + 69});
    assert_eq!(
        counts(&server, "/v1/profile/tags", empty.clone()).await,
        vec![]
    );
    let empty_values = common::with(empty, json!({"tag": "pod"}));
    assert_eq!(
        counts(&server, "/v1/profile/tag_values", empty_values).await,
        vec![]
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_requests_are_400_naming_the_problem() {
    let (_db, server) = seeded().await;
    let tl = json!({"app_service": "redis-server", "profile_language_type": "eBPF",
                    "profile_event_type": "on-cpu", "time_start": H, "time_end": H + 3599});
    let range = json!({"time_start": H, "time_end": H + 3599});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "timeline",
            common::with(tl.clone(), json!({"group_by": "colour"})),
            "unknown tag 'colour'",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"group_by": "_id"})),
            "differs per sample",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"interval": 0})),
            "positive",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"interval": -60})),
            "positive",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"interval": "60"})),
            "interval must be an integer",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"interval": 1})),
            "3600 buckets",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"group_limit": 0})),
            "group_limit must be 1 to 50",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"group_limit": 51})),
            "group_limit must be 1 to 50",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"time_start": H + 5, "time_end": H})),
            "after time_end",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"profile_event_type": null})),
            "ProfileEventType",
        ),
        (
            "timeline",
            common::with(tl.clone(), json!({"tag_filter": "pod='a' OR 1=1"})),
            "OR is not supported",
        ),
        ("services", json!({"time_end": H}), "time_start is required"),
        (
            "services",
            json!({"time_start": H + 1, "time_end": H}),
            "after time_end",
        ),
        (
            "services",
            common::with(range.clone(), json!({"tag_filter": "colour='x'"})),
            "unknown tag 'colour'",
        ),
        ("tags", json!({"time_start": H}), "time_end is required"),
        (
            "tags",
            common::with(range.clone(), json!({"app_service": 5})),
            "app_service must be a string",
        ),
        ("tag_values", range.clone(), "tag is required"),
        (
            "tag_values",
            common::with(range.clone(), json!({"tag": "colour"})),
            "unknown tag 'colour'",
        ),
        (
            "tag_values",
            common::with(range.clone(), json!({"tag": "k8s.label"})),
            "needs a key",
        ),
        (
            "tag_values",
            common::with(range.clone(), json!({"tag": "pod", "limit": 0})),
            "limit must be 1 to 1000",
        ),
        (
            "tag_values",
            common::with(range.clone(), json!({"tag": "pod", "limit": 1001})),
            "limit must be 1 to 1000",
        ),
        (
            "tag_values",
            json!({"tag": "pod", "time_start": H + 1, "time_end": H}),
            "after time_end",
        ),
    ];
    for (endpoint, body, needle) in cases {
        let (status, envelope) = server.post(&format!("/v1/profile/{endpoint}"), &body).await;
        assert_eq!(status, 400, "{endpoint} {body}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
        let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
        assert!(
            description.contains(needle),
            "{endpoint} {body}: {description}"
        );
        assert_eq!(envelope["result"], Value::Null);
    }
    for endpoint in ["services", "timeline", "tags", "tag_values"] {
        let path = format!("/v1/profile/{endpoint}");
        let (status, body) = server
            .post_raw(&path, "application/json", b"{".to_vec())
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("not valid JSON"), "{body}");
        let (status, _, _) = server.get(&path).await;
        assert_eq!(status, 405);
    }
    server.stop().await;
}
