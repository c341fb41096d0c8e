//! The requests of the differential tests (`clickhouse.rs`, `clickhouse_retention.rs`): batches
//! covering every kind of tag and time edge, and the ProfileTracing and explore requests both
//! backends must answer byte for byte alike.

use serde_json::{json, Value};

use super::{batch, query_for, with, TestServer, T0};

/// Batches over two processes (also the seed of `query.rs`), `Total`, two events, fixed and open tags (with a quote), and
/// samples on and just outside the query's time edges.
pub fn batches() -> Value {
    let a = json!({"host": "node-a", "host_ip": "10.0.0.1", "pod": "redis-0", "pod_ns": "cache",
        "region": "r1", "k8s.label.app": "redis", "vtap": "agent-a", "is_ipv4": "1"});
    let b = json!({"host": "node-b", "host_ip": "10.0.0.2", "pod": "redis-1",
        "pod_ns": "team-o'brien", "region": "r1", "k8s.label.app": "redis", "agent": "agent-b"});
    json!({"batches": [
        batch("redis-server", "on-cpu", T0 + 10, a.clone(), "\
[t] redis-server;main;aeMain;[k] entry_SYSCALL_64;[k] do_syscall_64;[k] ep_poll 100
[t] redis-server;main;aeMain;dictFind 40
[t] redis-server;main;aeMain 5
[t] io_thd_1;[l] start_thread;readQuery;[l] read;[k] entry_SYSCALL_64;[k] vfs_read 30
[t] redis-server;main;aeMain;dictFind 10
"),
        batch("redis-server", "on-cpu", T0, b, "[t] redis-server;main;aeMain;dictFind 7\n"),
        batch("redis-server", "on-cpu", T0 + 60, a.clone(), "[t] redis-server;main;serverCron 3\n"),
        batch("redis-server", "on-cpu", T0 + 61, a.clone(), "[t] redis-server;main;after 1000\n"),
        batch("redis-server", "on-cpu", T0 - 1, a.clone(), "[t] redis-server;main;before 1000\n"),
        batch("redis-server", "mem-alloc", T0 + 5, a, "[t] redis-server;main;zmalloc;[l] malloc 4096\n"),
        batch("nginx", "on-cpu", T0 + 20, json!({"host": "node-a", "pod": "nginx-0", "k8s.label.app": "nginx"}),
            "[t] nginx;ngx_worker_process_cycle;[k] ep_poll 20\n"),
        batch("Total", "on-cpu", T0 + 10, json!({"host": "node-a"}),
            "[p] redis-server;[t] io_thd_1 30\n[p] redis-server 155\n[p] nginx;[t] nginx 20\n"),
        batch("Total", "on-cpu", T0, json!({"host": "node-b"}), "[p] redis-server 7\n"),
    ]})
}

/// The ProfileTracing requests both backends must answer identically.
pub fn queries() -> Vec<Value> {
    let redis = query_for("redis-server");
    let mut out = vec![
        redis.clone(),
        with(redis.clone(), json!({"result_shape": "A"})),
        query_for("Total"),
        with(
            query_for("Total"),
            json!({"result_shape": "A", "tag_filter": "host='node-b'"}),
        ),
        with(
            redis.clone(),
            json!({"profile_event_type": "mem-alloc", "profile_value_unit": "bytes"}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 + 60, "time_end": T0 + 60}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 - 1, "time_end": T0 - 1}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 + 1000, "time_end": T0 + 2000}),
        ),
        with(
            redis.clone(),
            json!({"time_start": T0 - 100, "time_end": T0 + 100}),
        ),
        query_for("nope"),
        with(redis.clone(), json!({"app_service": null})),
        with(
            redis.clone(),
            json!({"app_service": null, "tag_filter": "pod='nginx-0'"}),
        ),
        with(
            redis.clone(),
            json!({"app_service": null, "tag_filter": "pod='none'"}),
        ),
    ];
    for depth in [0, 1, 2, -1] {
        out.push(with(
            redis.clone(),
            json!({"max_kernel_stack_depth": depth}),
        ));
    }
    for filter in [
        "pod='redis-0'",
        "pod!='redis-0'",
        "pod IN ('redis-1', 'nginx-0')",
        "pod NOT IN ('redis-1')",
        "pod_ns='team-o''brien'",
        "k8s.label.app='redis'",
        "k8s.label.app!='redis'",
        "k8s.label.app IN ('nginx', 'x')",
        "k8s.label.team NOT IN ('x')",
        "k8s.label.team='x'",
        "is_ipv4=1",
        "is_ipv4 NOT IN (1)",
        "host='node-a' AND region='r1' AND pod_ns!='cache'",
        "time=1700000010",
        "time IN (1700000000, 1700000060)",
        "profile_create_timestamp!=1700000010000000",
        "vtap='agent-a'",
        "agent='agent-b'",
    ] {
        out.push(with(redis.clone(), json!({"tag_filter": filter})));
    }
    out
}

/// The explore requests both backends must answer identically: every endpoint, grouped by each
/// kind of dimension, with filters, limits, prefixes, odd intervals, edges and empty ranges.
pub fn explore_queries() -> Vec<(&'static str, Value)> {
    let range = json!({"time_start": T0 - 100, "time_end": T0 + 100});
    let r = |extra: Value| with(range.clone(), extra);
    let mut out = vec![
        ("services", r(json!({}))),
        (
            "services",
            r(json!({"profile_event_type": "on-cpu", "tag_filter": "host='node-a'"})),
        ),
        (
            "services",
            json!({"time_start": T0 + 500, "time_end": T0 + 900}),
        ),
        ("tags", r(json!({}))),
        ("tags", r(json!({"app_service": "nginx"}))),
        (
            "tags",
            json!({"time_start": T0 + 500, "time_end": T0 + 900}),
        ),
    ];
    for (interval, extra) in [
        (1, json!({})),
        (7, json!({"app_service": "redis-server"})),
        (60, json!({"group_by": "thread"})),
        (60, json!({"group_by": "pod", "group_limit": 1})),
        (10, json!({"group_by": "k8s.label.app"})),
        (
            3600,
            json!({"group_by": "app_service", "tag_filter": "pod!='redis-0'"}),
        ),
        (
            5,
            json!({"group_by": "is_ipv4", "profile_event_type": "on-cpu"}),
        ),
        (30, json!({"group_by": "host", "app_service": "Total"})),
    ] {
        let ebpf = json!({"interval": interval, "profile_language_type": "eBPF",
            "profile_event_type": "on-cpu"});
        out.push(("timeline", r(with(ebpf, extra))));
    }
    out.push((
        "timeline",
        json!({"time_start": T0 + 61, "time_end": T0 + 61, "interval": 1,
        "profile_language_type": "eBPF", "profile_event_type": "on-cpu"}),
    ));
    out.extend(function_queries());
    for extra in [
        json!({"tag": "pod"}),
        json!({"tag": "pod", "prefix": "redis", "limit": 1}),
        json!({"tag": "k8s.label.app"}),
        json!({"tag": "thread", "app_service": "redis-server"}),
        json!({"tag": "app_service"}),
        json!({"tag": "pod_ns", "tag_filter": "k8s.label.app IN ('redis')"}),
    ] {
        out.push(("tag_values", r(extra)));
    }
    out
}

/// The functions requests both backends must answer identically: ranges read from samples
/// only and from whole hours and ten minutes, every filter kind, groups, baselines, `Total`,
/// paging, and function timelines.
pub fn function_queries() -> Vec<(&'static str, Value)> {
    let near =
        json!({"time_start": T0 - 100, "time_end": T0 + 100, "profile_event_type": "on-cpu"});
    // The hour of T0 starts at T0 - 800: this range holds it whole, ten minutes before it
    // whole and single seconds at both ends.
    let wide =
        json!({"time_start": T0 - 1401, "time_end": T0 + 3405, "profile_event_type": "on-cpu"});
    let mut out = Vec::new();
    for (range, extra) in [
        (&near, json!({})),
        (&wide, json!({})),
        (&wide, json!({"metric": "total", "limit": 3, "offset": 1})),
        (&wide, json!({"group_by": "pod"})),
        (
            &wide,
            json!({"group_by": "k8s.label.app", "app_service": "redis-server"}),
        ),
        (&wide, json!({"tag_filter": "pod_ns='team-o''brien'"})),
        (
            &wide,
            json!({"tag_filter": "k8s.label.app NOT IN ('nginx')"}),
        ),
        (
            &wide,
            json!({"tag_filter": "time IN (1700000000, 1700000060)"}),
        ),
        (&wide, json!({"app_service": "Total"})),
        (
            &wide,
            json!({"profile_event_type": "mem-alloc", "search": "MALLOC"}),
        ),
        (
            &near,
            json!({"baseline_time_start": T0 + 60, "baseline_time_end": T0 + 61,
            "order_by": "change"}),
        ),
        (
            &wide,
            json!({"baseline_tag_filter": "host='node-b'", "order_by": "change",
            "metric": "total"}),
        ),
    ] {
        out.push(("functions", with(range.clone(), extra)));
    }
    let t = json!({"profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": T0 - 1401, "time_end": T0 + 3405});
    for extra in [
        json!({"function": "dictFind"}),
        json!({"function": "main", "group_by": "pod", "interval": 60}),
        json!({"function": "aeMain", "group_by": "thread", "interval": 3600}),
        json!({"function": "[k] entry_SYSCALL_64", "group_by": "app_service", "tag_filter": "host='node-a'"}),
    ] {
        out.push(("function_timeline", with(t.clone(), extra)));
    }
    out
}

pub async fn answers(server: &TestServer, queries: &[(&str, Value)]) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    for (endpoint, q) in queries {
        let (status, body) = server
            .post_raw(
                &format!("/v1/profile/{endpoint}"),
                "application/json",
                q.to_string().into_bytes(),
            )
            .await;
        out.push((status, body));
    }
    out
}

/// Every request of [`queries`] (as ProfileTracing) and [`explore_queries`].
pub fn all_queries() -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&str, Value)> = queries()
        .into_iter()
        .map(|q| ("ProfileTracing", q))
        .collect();
    out.extend(explore_queries());
    out
}
