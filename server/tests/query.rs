//! Ingest → ProfileTracing over real HTTP: exact trees per process and per host, tag filters
//! (with escaped quotes), inclusive time edges, kernel depth, shapes A and B, app_service
//! discovery and empty matches.

use crate::common;

use common::{
    batch, differential, folded_of, query_for, seeded_with, with, TempDb, TestServer, T0,
};
use serde_json::{json, Value};

/// Sorted `root;...;leaf self` lines, as `to_folded` writes them.
fn lines(rows: &[&str]) -> String {
    let mut v: Vec<&str> = rows.to_vec();
    v.sort_unstable();
    let mut out = v.join("\n");
    out.push('\n');
    out
}

async fn seeded() -> (TempDb, TestServer) {
    seeded_with(differential::batches()).await
}

const REDIS_ALL: [&str; 5] = [
    "redis-server;[t] io_thd_1;[l] start_thread;readQuery;[l] read;[k] entry_SYSCALL_64;[k] vfs_read 30",
    "redis-server;[t] redis-server;main;aeMain 5",
    "redis-server;[t] redis-server;main;aeMain;[k] entry_SYSCALL_64;[k] do_syscall_64;[k] ep_poll 100",
    "redis-server;[t] redis-server;main;aeMain;dictFind 57",
    "redis-server;[t] redis-server;main;serverCron 3",
];

#[tokio::test]
async fn per_process_tree_is_exact() {
    let (_db, server) = seeded().await;
    let (status, envelope) = server.query(&query_for("redis-server")).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["OPT_STATUS"], "SUCCESS");
    assert_eq!(envelope["DESCRIPTION"], "");
    assert_eq!(envelope["debug"], Value::Null);
    assert_eq!(folded_of(&envelope), lines(&REDIS_ALL));
    // Shape B by default: root first, named after app_service, total = everything.
    let result = &envelope["result"];
    assert_eq!(result["functions"][0], "redis-server");
    assert_eq!(result["function_types"][0], "P");
    assert_eq!(result["node_values"]["values"][0], json!([0, -1, 0, 195]));
    assert_eq!(
        result["node_values"]["columns"],
        json!(["function_id", "parent_node_id", "self_value", "total_value"])
    );
    server.stop().await;
}

#[tokio::test]
async fn per_host_total_tree_is_exact() {
    let (_db, server) = seeded().await;
    let (status, envelope) = server.query(&query_for("Total")).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(
        folded_of(&envelope),
        lines(&[
            "Total;[p] nginx;[t] nginx 20",
            "Total;[p] redis-server 162",
            "Total;[p] redis-server;[t] io_thd_1 30",
        ])
    );
    assert_eq!(envelope["result"]["functions"][0], "Total");
    assert_eq!(envelope["result"]["function_types"][0], "H");
    let node_b = with(query_for("Total"), json!({"tag_filter": "host='node-b'"}));
    assert_eq!(
        server.folded(&node_b).await,
        lines(&["Total;[p] redis-server 7"])
    );
    server.stop().await;
}

#[tokio::test]
async fn tag_filters_select_exactly() {
    let (_db, server) = seeded().await;
    let q = |filter: &str| with(query_for("redis-server"), json!({"tag_filter": filter}));
    let only_b = lines(&["redis-server;[t] redis-server;main;aeMain;dictFind 7"]);
    let only_a = lines(&[
        REDIS_ALL[0],
        REDIS_ALL[1],
        REDIS_ALL[2],
        "redis-server;[t] redis-server;main;aeMain;dictFind 50",
        REDIS_ALL[4],
    ]);
    // Escaped quotes, both styles.
    assert_eq!(server.folded(&q("pod_ns='team-o''brien'")).await, only_b);
    assert_eq!(server.folded(&q(r"pod_ns='team-o\'brien'")).await, only_b);
    assert_eq!(server.folded(&q("host='node-a'")).await, only_a);
    assert_eq!(server.folded(&q("pod != 'redis-1'")).await, only_a);
    assert_eq!(
        server
            .folded(&q("host_ip='10.0.0.2' and region='r1'"))
            .await,
        only_b
    );
    assert_eq!(
        server.folded(&q("host IN ('node-b', 'node-z')")).await,
        only_b
    );
    assert_eq!(server.folded(&q("host NOT IN ('node-b')")).await, only_a);
    assert_eq!(
        server.folded(&q("k8s.label.app='redis'")).await,
        lines(&REDIS_ALL)
    );
    assert_eq!(server.folded(&q("vtap='agent-b'")).await, only_b);
    assert_eq!(
        server
            .folded(&q("agent='agent-a' AND k8s.label.app != 'nginx'"))
            .await,
        only_a
    );
    assert_eq!(
        server.folded(&q("k8s.label.missing != 'x'")).await,
        lines(&REDIS_ALL)
    );
    assert_eq!(server.folded(&q(&format!("time='{T0}'"))).await, only_b);
    assert_eq!(server.folded(&q("")).await, lines(&REDIS_ALL));
    // No match: success with the empty tree.
    let (status, envelope) = server.query(&q("k8s.label.app='nginx'")).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["result"]["functions"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn time_range_is_inclusive_at_both_ends() {
    let (_db, server) = seeded().await;
    let at = |start: i64, end: i64| {
        with(
            query_for("redis-server"),
            json!({"time_start": start, "time_end": end}),
        )
    };
    assert_eq!(
        server.folded(&at(T0 + 60, T0 + 60)).await,
        lines(&["redis-server;[t] redis-server;main;serverCron 3"])
    );
    assert_eq!(
        server.folded(&at(T0, T0)).await,
        lines(&["redis-server;[t] redis-server;main;aeMain;dictFind 7"])
    );
    let wide = server.folded(&at(T0 - 1, T0 + 61)).await;
    assert!(
        wide.contains("main;before 1000") && wide.contains("main;after 1000"),
        "{wide}"
    );
    let (status, envelope) = server.query(&at(T0 + 1, T0 + 9)).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["result"]["node_values"]["values"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn kernel_depth_trims_kernel_tails() {
    let (_db, server) = seeded().await;
    let depth = |n: i64| {
        with(
            query_for("redis-server"),
            json!({"max_kernel_stack_depth": n}),
        )
    };
    assert_eq!(
        server.folded(&depth(1)).await,
        lines(&[
            "redis-server;[t] io_thd_1;[l] start_thread;readQuery;[l] read;[k] entry_SYSCALL_64 30",
            "redis-server;[t] redis-server;main;aeMain 5",
            "redis-server;[t] redis-server;main;aeMain;[k] entry_SYSCALL_64 100",
            "redis-server;[t] redis-server;main;aeMain;dictFind 57",
            "redis-server;[t] redis-server;main;serverCron 3",
        ])
    );
    assert_eq!(
        server.folded(&depth(0)).await,
        lines(&[
            "redis-server;[t] io_thd_1;[l] start_thread;readQuery;[l] read 30",
            "redis-server;[t] redis-server;main;aeMain 105",
            "redis-server;[t] redis-server;main;aeMain;dictFind 57",
            "redis-server;[t] redis-server;main;serverCron 3",
        ])
    );
    assert_eq!(server.folded(&depth(-1)).await, lines(&REDIS_ALL));
    // The interface defines -1 (keep all) and depths of 0 or more; other negative depths are
    // refused as the viewer's form and snapshot save refuse them, naming the member.
    for n in [-2, -5, i64::MIN] {
        let (status, envelope) = server.query(&depth(n)).await;
        assert_eq!(status, 400, "{n}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
        let d = envelope["DESCRIPTION"].as_str().unwrap_or("");
        assert!(
            d.starts_with("max_kernel_stack_depth: ") && d.contains("-1 (keep all)"),
            "{d}"
        );
    }
    assert_eq!(
        server.folded(&depth(2)).await,
        lines(&[
            REDIS_ALL[0],
            REDIS_ALL[1],
            "redis-server;[t] redis-server;main;aeMain;[k] entry_SYSCALL_64;[k] do_syscall_64 100",
            REDIS_ALL[3],
            REDIS_ALL[4],
        ])
    );
    // Only eBPF stacks are trimmed.
    let mut py_batch = batch("py", "on-cpu", T0, json!({}), "[t] py;f;[k] a;[k] b 4\n");
    py_batch["profile_language_type"] = json!("python");
    server.ingest(py_batch).await;
    let py = with(
        query_for("py"),
        json!({"profile_language_type": "python", "max_kernel_stack_depth": 0}),
    );
    assert_eq!(server.folded(&py).await, "py;[t] py;f;[k] a;[k] b 4\n");
    server.stop().await;
}

#[tokio::test]
async fn shapes_a_and_b_describe_the_same_tree() {
    let (_db, server) = seeded().await;
    for app in ["redis-server", "Total", "nginx"] {
        let (_, b) = server.query(&query_for(app)).await;
        let (_, a) = server
            .query(&with(query_for(app), json!({"result_shape": "A"})))
            .await;
        let (_, a_lower) = server
            .query(&with(query_for(app), json!({"result_shape": "a"})))
            .await;
        assert!(b["result"].is_object(), "{b}");
        let nodes = a["result"].as_array().expect("shape A is an array");
        assert_eq!(nodes[0]["profile_location_str"], app);
        assert_eq!(nodes[0]["node_id"], "");
        assert_eq!(nodes[0]["parent_node_id"], "-1");
        assert_eq!(folded_of(&a), folded_of(&b), "{app}");
        assert_eq!(a, a_lower);
        assert_eq!(
            nodes.len(),
            b["result"]["node_values"]["values"]
                .as_array()
                .map_or(0, Vec::len)
        );
    }
    // Empty match in shape A: result null.
    let (status, a) = server
        .query(&with(query_for("nope"), json!({"result_shape": "A"})))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        a,
        json!({"OPT_STATUS": "SUCCESS", "DESCRIPTION": "", "result": null, "debug": null})
    );
    server.stop().await;
}

#[tokio::test]
async fn server_flag_selects_shape_a_and_request_overrides() {
    let db = TempDb::new();
    let server = TestServer::start_with(&db.path(), |s| {
        s.default_shape = embers_model::contract::shape::ResultShape::A;
    })
    .await;
    server
        .ingest(batch("web", "on-cpu", T0, json!({}), "[t] web;main 3\n"))
        .await;
    let (_, a) = server.query(&query_for("web")).await;
    assert!(a["result"].is_array(), "{a}");
    let (_, b) = server
        .query(&with(query_for("web"), json!({"result_shape": "B"})))
        .await;
    assert!(b["result"].is_object(), "{b}");
    assert_eq!(folded_of(&a), "web;[t] web;main 3\n");
    server.stop().await;
}

#[tokio::test]
async fn empty_match_uses_the_null_forms() {
    let (_db, server) = seeded().await;
    let (status, envelope) = server.query(&query_for("no-such-process")).await;
    assert_eq!(status, 200);
    assert_eq!(
        envelope,
        json!({
            "OPT_STATUS": "SUCCESS",
            "DESCRIPTION": "",
            "result": {
                "functions": null,
                "function_types": null,
                "function_values": {"columns": null, "values": null},
                "node_values": {"columns": null, "values": null},
            },
            "debug": null,
        })
    );
    server.stop().await;
}

#[tokio::test]
async fn app_service_is_discovered_when_absent() {
    let (_db, server) = seeded().await;
    let mut q = query_for("x");
    q.as_object_mut().map(|o| o.remove("app_service"));
    let (status, envelope) = server.query(&q).await;
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["result"]["functions"][0], "nginx, redis-server");
    let nginx_only = with(q.clone(), json!({"tag_filter": "k8s.label.app='nginx'"}));
    assert_eq!(
        server.folded(&nginx_only).await,
        "nginx;[t] nginx;ngx_worker_process_cycle;[k] ep_poll 20\n"
    );
    // None match → 400.
    let none = with(q.clone(), json!({"profile_event_type": "hbm-alloc"}));
    let (status, envelope) = server.query(&none).await;
    assert_eq!(status, 400);
    assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains("no app_service matches"));
    // More than ten → 400.
    let many: Vec<Value> = (0..11)
        .map(|i| {
            batch(
                &format!("svc-{i:02}"),
                "off-cpu",
                T0,
                json!({}),
                "[t] a;b 1\n",
            )
        })
        .collect();
    server.ingest(json!({"batches": many})).await;
    let (status, envelope) = server
        .query(&with(q, json!({"profile_event_type": "off-cpu"})))
        .await;
    assert_eq!(status, 400);
    assert!(
        envelope["DESCRIPTION"]
            .as_str()
            .unwrap_or("")
            .contains("more than 10"),
        "{envelope}"
    );
    server.stop().await;
}

#[tokio::test]
async fn memory_profiles_type_leaves_as_objects() {
    let (_db, server) = seeded().await;
    let q = with(
        query_for("redis-server"),
        json!({"profile_event_type": "mem-alloc"}),
    );
    let (status, envelope) = server.query(&q).await;
    assert_eq!(status, 200);
    assert_eq!(
        folded_of(&envelope),
        "redis-server;[t] redis-server;main;zmalloc;[l] malloc 4096\n"
    );
    let result = &envelope["result"];
    let functions = result["functions"].as_array().expect("functions");
    let i = functions
        .iter()
        .position(|f| f == "[l] malloc")
        .expect("malloc");
    assert_eq!(result["function_types"][i], "O");
    server.stop().await;
}

#[tokio::test]
async fn debug_adds_query_diagnostics_only_when_allowed() {
    let (db, server) = seeded().await;
    let asked = with(query_for("redis-server"), json!({"debug": true}));
    // Without --allow-debug the statements stay internal.
    let (status, envelope) = server.query(&asked).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["debug"], Value::Null);
    server.stop().await;
    let server = TestServer::start_with(&db.path(), |s| s.allow_debug = true).await;
    let (status, envelope) = server.query(&asked).await;
    assert_eq!(status, 200);
    let sql = envelope["debug"]["querier_debug"][0]["sql"]
        .as_str()
        .unwrap_or("");
    assert!(sql.contains("FROM profile.in_process"), "{sql}");
    assert!(
        !sql.contains("redis-server"),
        "values are bound, not inlined: {sql}"
    );
    server.stop().await;
}
