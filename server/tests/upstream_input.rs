//! `--upstream` and untrusted input: hostile open-family keys never reach the querier, a
//! `tag_values` prefix narrows the statement, answers at a statement's row limit are not cut
//! silently, and ProfileTracing forwards only the request the contract read and checked. The
//! stub querier (`common::querier`) fails the test on any statement outside its templates.

use crate::common;

use common::http::proxying;
use common::querier::{result, start_stub, statements, stub, tl, H};
use common::TestServer;
use embers_server::http::upstream::UpstreamOptions;
use serde_json::{json, Value};

async fn embers(base: &str) -> (common::TempDb, TestServer) {
    proxying(base, UpstreamOptions::default()).await
}

/// Open-family keys outside the Kubernetes key charset (a backslash would escape the closing
/// backtick of a ClickHouse identifier) are refused before anything reaches the querier, on
/// every endpoint that takes a tag name.
#[tokio::test]
async fn hostile_tag_keys_never_reach_the_querier() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = embers(&base).await;
    for key in [
        r"k8s.label.a\",
        "k8s.label.a`b",
        "k8s.label.a b",
        "k8s.annotation.x'y",
        "cloud.tag.a)--",
        "k8s.env.é",
    ] {
        // The filter grammar cannot quote a backtick: such a name is written as a string,
        // which the parser refuses for its own reason.
        let quoted = if key.contains('`') {
            format!("'{key}'")
        } else {
            format!("`{key}`")
        };
        for (path, body) in [
            ("/v1/profile/timeline", tl(json!({ "group_by": key }))),
            (
                "/v1/profile/tag_values",
                json!({"tag": key, "time_start": H, "time_end": H}),
            ),
            (
                "/v1/profile/services",
                json!({"time_start": H, "time_end": H, "tag_filter": format!("{quoted}='v'")}),
            ),
            (
                "/v1/profile/ProfileTracing",
                tl(json!({ "tag_filter": format!("{quoted}='v'") })),
            ),
        ] {
            let (status, envelope) = server.post(path, &body).await;
            assert_eq!(status, 400, "{path} {key}: {envelope}");
            assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
            let description = envelope["DESCRIPTION"].as_str().unwrap_or("");
            let named = description.contains("key may hold only letters, digits")
                || (key.contains('`') && description.contains("expected a tag name"));
            assert!(named, "{path} {key}: {description}");
        }
    }
    let (statements_seen, bodies_seen) = {
        let seen = stub.seen.lock().expect("lock");
        (seen.statements.clone(), seen.tracing_bodies.len())
    };
    assert!(statements_seen.is_empty(), "{statements_seen:?}");
    assert_eq!(bodies_seen, 0);
    // A key of the charset goes through, in backticks.
    let ok = tl(json!({"group_by": "k8s.annotation.example.com/a-b_c"}));
    result(&server, "/v1/profile/timeline", ok).await;
    assert!(statements(&stub)[0].contains("GROUP BY toi, `k8s.annotation.example.com/a-b_c`"));
    server.stop().await;
}

/// The prefix of tag_values narrows the statement (escaped for LIKE and for the string), and
/// the exact ASCII-case-insensitive test still applies to the answer.
#[tokio::test]
async fn tag_value_prefixes_are_applied_in_sql() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = embers(&base).await;
    let range = json!({"time_start": H, "time_end": H + 3599});
    let values = common::with(range.clone(), json!({"tag": "pod", "prefix": "WEB"}));
    assert_eq!(
        result(&server, "/v1/profile/tag_values", values).await["values"],
        json!([["web-1", 5], ["Web-2", 3]])
    );
    let hostile = common::with(range.clone(), json!({"tag": "pod", "prefix": r"a%_\'"}));
    assert_eq!(
        result(&server, "/v1/profile/tag_values", hostile).await["values"],
        json!([])
    );
    let thread = common::with(range, json!({"tag": "thread", "prefix": "[t] m"}));
    result(&server, "/v1/profile/tag_values", thread).await;
    let sent = statements(&stub);
    assert!(
        sent[0].contains(" AND pod ILIKE 'WEB%' GROUP BY pod "),
        "{}",
        sent[0]
    );
    assert!(
        sent[1].contains(r" AND pod ILIKE 'a\\%\\_\\\\\'%' GROUP BY pod "),
        "{}",
        sent[1]
    );
    // A thread is a part of the stack text: its prefix cannot narrow the column.
    assert!(!sent[2].contains("ILIKE"), "{}", sent[2]);
    server.stop().await;
}

/// An answer at the statement's row limit is refused where the sums would be incomplete (the
/// tags list, thread values) instead of being cut silently; a plain tag's values keep the
/// most frequent ones, which is what was asked for.
#[tokio::test]
async fn answers_at_the_row_limit_are_not_cut_silently() {
    let mut full = stub(true);
    full.rows = 10_000;
    let (base, _stub) = start_stub(full).await;
    let (_db, server) = embers(&base).await;
    let range = json!({"time_start": H, "time_end": H + 3599});
    for body in [
        range.clone(),
        common::with(range.clone(), json!({"tag": "thread"})),
    ] {
        let path = if body.get("tag").is_some() {
            "/v1/profile/tag_values"
        } else {
            "/v1/profile/tags"
        };
        let (status, envelope) = server.post(path, &body).await;
        assert_eq!(status, 502, "{path}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "FAIL");
        assert!(
            envelope["DESCRIPTION"]
                .as_str()
                .unwrap_or("")
                .contains("reached 10000 rows"),
            "{envelope}"
        );
    }
    let values = common::with(range, json!({"tag": "pod", "limit": 3}));
    assert_eq!(
        result(&server, "/v1/profile/tag_values", values).await["values"],
        json!([["db", 9], ["web-1", 5], ["Web-2", 3]])
    );
    server.stop().await;
}

/// The forwarded ProfileTracing body is the request the contract read and checked,
/// re-serialised: the same rules as without `--upstream`, nothing else passed through (`debug`
/// neither, without `--allow-debug`: see `upstream_fields`).
#[tokio::test]
async fn profile_tracing_forwards_the_checked_request() {
    let (base, stub) = start_stub(stub(true)).await;
    let (_db, server) = embers(&base).await;
    for bad in [
        tl(json!({"max_kernel_stack_depth": -5})),
        tl(json!({"app_service": "Total", "profile_event_type": "off-cpu"})),
        tl(json!({"time_start": -3})),
    ] {
        let (status, envelope) = server.post("/v1/profile/ProfileTracing", &bad).await;
        assert_eq!(status, 400, "{bad}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
    }
    let body = tl(
        json!({"max_kernel_stack_depth": -1, "debug": true, "sql": "DROP TABLE x",
                         "result_shape": "A", "tag_filter": "vtap='a'"}),
    );
    let (status, _) = server.post("/v1/profile/ProfileTracing", &body).await;
    assert_eq!(status, 200);
    let forwarded = stub.seen.lock().expect("lock").tracing_bodies.clone();
    assert_eq!(forwarded.len(), 1, "{forwarded:?}");
    let forwarded: Value = serde_json::from_str(&forwarded[0]).expect("json");
    assert_eq!(
        forwarded,
        json!({"app_service": "api", "profile_language_type": "eBPF",
               "profile_event_type": "on-cpu", "tag_filter": "agent='a'", "time_start": H,
               "time_end": H + 3599, "max_kernel_stack_depth": -1})
    );
    server.stop().await;
}
