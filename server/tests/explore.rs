//! The explore endpoints over real HTTP against known data (`common::explore`): exact sums for
//! services and timelines (edges, alignment, the interval ladder, grouping with `other` and
//! `""`, threads, `Total`, every filter operator, per-sample filters read from the samples).
//! Tags, tag values and the 400s are in `explore_tags.rs`; the default grouping in
//! `explore_groups.rs`.

use crate::common;

use common::explore::{points, row, seeded, services, timeline, H};
use serde_json::json;

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
