//! The explore endpoints `tags` and `tag_values` over real HTTP against known data
//! (`common::explore`): counts per tag and per value, prefixes, limits, families, threads, empty
//! ranges; and every 400 of the explore endpoints, naming the problem.

use crate::common;

use common::explore::{counts, pairs, seeded, H};
use serde_json::{json, Value};

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
