//! The functions endpoints' data set and its exact answers, run against any server (SQLite in
//! `functions.rs`, ClickHouse on one node and two shards in `clickhouse.rs`): recursion counted
//! once, shares, places per function, tag filters and groups, `Total`, baselines and change,
//! search, paging, limits, empty ranges, bad input, a range read from whole hours, whole ten
//! minutes and samples at both edges, and function timelines.

use embers_model::contract::explore::{FunctionTimelineAnswer, FunctionsAnswer};
use serde_json::{json, Value};

use super::{batch, with, TestServer, T0};

/// The hour holding T0 starts here.
pub const H: i64 = T0 - 800;

/// The range of the "now" samples.
pub fn now() -> Value {
    json!({"time_start": T0 - 100, "time_end": T0 + 100, "profile_event_type": "on-cpu"})
}

/// The six-hour bucket [`wide`] holds whole.
pub const W: i64 = H + 8 * 3600;

/// A range over a whole six-hour bucket (ClickHouse keeps those), whole hours either side and
/// single seconds at both ends.
pub fn wide() -> Value {
    json!({"time_start": W - 3605, "time_end": W + 6 * 3600 + 3605, "profile_event_type": "on-cpu"})
}

/// A range over whole hours, whole ten minutes and single seconds at both ends.
pub fn long() -> Value {
    json!({"time_start": H - 601, "time_end": H + 8434, "profile_event_type": "on-cpu"})
}

/// Near T0: redis-server on two pods (with recursion), nginx, `Total`, another event type, and
/// samples just outside [T0-100, T0+100]; an hour earlier, the baseline's; and samples for the
/// long range in a whole hour, a whole ten minutes, at both edges and just outside them; and
/// for the wide range in and around a whole six-hour bucket.
pub fn batches() -> Value {
    let a = json!({"host": "node-a", "pod": "redis-0", "k8s.label.app": "redis"});
    let b = json!({"host": "node-b", "pod": "redis-1", "k8s.label.app": "redis"});
    let n = json!({"host": "node-a", "pod": "nginx-0", "k8s.label.app": "nginx"});
    let cron = |t: i64, tags: &Value, v: u64| {
        batch(
            "redis-server",
            "on-cpu",
            t,
            tags.clone(),
            &format!("[t] redis-server;main;serverCron {v}\n"),
        )
    };
    json!({"batches": [
        batch("redis-server", "on-cpu", T0 + 10, a.clone(), "\
[t] redis-server;main;aeMain;dictFind 40
[t] redis-server;main;aeMain 5
[t] redis-server;main;rec;rec;rec 7
"),
        batch("redis-server", "on-cpu", T0 + 20, b.clone(), "[t] redis-server;main;aeMain;dictFind 10\n"),
        batch("nginx", "on-cpu", T0 + 30, n, "[t] nginx;main;ngx_process;[k] ep_poll 20\n"),
        batch("Total", "on-cpu", T0 + 10, json!({"host": "node-a"}), "[p] redis-server 62\n"),
        batch("redis-server", "mem-alloc", T0 + 5, a.clone(), "[t] redis-server;main;zmalloc 4096\n"),
        batch("redis-server", "on-cpu", T0 + 101, a.clone(), "[t] redis-server;main;after 1000\n"),
        batch("redis-server", "on-cpu", T0 - 101, a.clone(), "[t] redis-server;main;before 1000\n"),
        batch("redis-server", "on-cpu", T0 - 3600, a.clone(),
            "[t] redis-server;main;aeMain;dictFind 10\n[t] redis-server;main;aeMain 30\n"),
        cron(H + 3605, &a, 300),
        cron(H + 7801, &b, 200),
        cron(H + 8430, &a, 100),
        cron(H + 8435, &a, 9999),
        cron(H - 601, &a, 50),
        cron(H - 602, &a, 7777),
        cron(W - 3606, &a, 9999),
        cron(W - 3605, &a, 11),
        cron(W - 1800, &b, 13),
        cron(W + 100, &a, 17),
        cron(W + 6 * 3600 - 1, &b, 19),
        cron(W + 6 * 3600 + 1000, &a, 23),
        cron(W + 6 * 3600 + 3605, &a, 29),
        cron(W + 6 * 3600 + 3606, &a, 7777),
    ]})
}

/// POSTs a functions body: status and envelope.
pub async fn post(server: &TestServer, body: Value) -> (u16, Value) {
    server.post("/v1/profile/functions", &body).await
}

/// A successful functions answer, read with the contract's own types.
pub async fn answer(server: &TestServer, body: Value) -> FunctionsAnswer {
    let (status, envelope) = post(server, body.clone()).await;
    assert_eq!(status, 200, "{body}: {envelope}");
    serde_json::from_value(envelope["result"].clone()).expect("a functions answer")
}

/// `(function, self, total)` of each row.
pub fn rows(a: &FunctionsAnswer) -> Vec<(&str, u64, u64)> {
    a.values
        .iter()
        .map(|r| (r.function.as_str(), r.self_value, r.total))
        .collect()
}

/// The row of `name`.
pub fn row<'a>(
    a: &'a FunctionsAnswer,
    name: &str,
) -> &'a embers_model::contract::explore::FunctionRow {
    a.values
        .iter()
        .find(|r| r.function == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", rows(a)))
}

/// `(app_service, group, self, total)` of `name`'s places.
pub fn places(a: &FunctionsAnswer, name: &str) -> Vec<(String, Option<String>, u64, u64)> {
    row(a, name)
        .places
        .iter()
        .map(|p| {
            (
                p.app_service.clone(),
                p.group.clone(),
                p.self_value,
                p.total,
            )
        })
        .collect()
}

pub fn place(app: &str, group: Option<&str>, s: u64, t: u64) -> (String, Option<String>, u64, u64) {
    (app.to_owned(), group.map(str::to_owned), s, t)
}

/// Every exact answer of the data set.
pub async fn check(server: &TestServer) {
    ranks_and_shares(server).await;
    filters_groups_and_total(server).await;
    baselines(server).await;
    pages_limits_and_bad_input(server).await;
    long_range(server).await;
    wide_range(server).await;
    timelines(server).await;
}

async fn ranks_and_shares(server: &TestServer) {
    let a = answer(server, now()).await;
    assert_eq!(
        (a.value, a.rows, a.offset, a.baseline_value),
        (82, 8, 0, None)
    );
    assert!(a.coverage.is_none());
    assert_eq!(
        rows(&a),
        [
            ("dictFind", 50, 50),
            ("[k] ep_poll", 20, 20),
            ("rec", 7, 7),
            ("aeMain", 5, 55),
            ("[t] nginx", 0, 20),
            ("[t] redis-server", 0, 62),
            ("main", 0, 82),
            ("ngx_process", 0, 20),
        ],
        "by self, then name; recursion counted once (rec: 7, not 21)"
    );
    let d = row(&a, "dictFind");
    assert_eq!(
        (d.self_share, d.total_share),
        (50.0 * 100.0 / 82.0, 50.0 * 100.0 / 82.0)
    );
    assert_eq!((d.change, d.ratio, d.baseline_self), (None, None, None));
    assert_eq!(row(&a, "main").total_share, 100.0);
    assert_eq!(
        places(&a, "main"),
        [
            place("nginx", None, 0, 20),
            place("redis-server", None, 0, 62)
        ],
        "by self (0 both), then name"
    );
    assert_eq!(row(&a, "main").place_count, 2);
    let t = answer(server, with(now(), json!({"metric": "total"}))).await;
    assert_eq!(
        rows(&t)[..3],
        [
            ("main", 0, 82),
            ("[t] redis-server", 0, 62),
            ("aeMain", 5, 55)
        ]
    );
    assert_eq!(
        places(&t, "main"),
        [
            place("redis-server", None, 0, 62),
            place("nginx", None, 0, 20)
        ],
        "by total"
    );
    let s = answer(server, with(now(), json!({"search": "N"}))).await;
    let names: Vec<&str> = s.values.iter().map(|r| r.function.as_str()).collect();
    assert_eq!(
        names,
        ["dictFind", "aeMain", "[t] nginx", "main", "ngx_process"]
    );
    assert_eq!(s.rows, 5);
}

async fn filters_groups_and_total(server: &TestServer) {
    let pod = answer(server, with(now(), json!({"tag_filter": "pod='redis-1'"}))).await;
    assert_eq!(pod.value, 10);
    assert_eq!(rows(&pod)[0], ("dictFind", 10, 10));
    let app = answer(
        server,
        with(now(), json!({"tag_filter": "k8s.label.app!='redis'"})),
    )
    .await;
    assert_eq!((app.value, rows(&app)[0]), (20, ("[k] ep_poll", 20, 20)));
    let grouped = answer(server, with(now(), json!({"group_by": "pod"}))).await;
    assert_eq!(grouped.value, 82);
    assert_eq!(
        places(&grouped, "dictFind"),
        [
            place("redis-server", Some("redis-0"), 40, 40),
            place("redis-server", Some("redis-1"), 10, 10)
        ]
    );
    assert_eq!(row(&grouped, "main").place_count, 3);
    let named = answer(server, with(now(), json!({"app_service": "nginx"}))).await;
    assert_eq!((named.value, named.rows), (20, 4));
    let total = answer(server, with(now(), json!({"app_service": "Total"}))).await;
    assert_eq!(rows(&total), [("[p] redis-server", 62, 62)]);
    let mem = answer(
        server,
        with(now(), json!({"profile_event_type": "mem-alloc"})),
    )
    .await;
    assert_eq!(rows(&mem)[0], ("zmalloc", 4096, 4096));
    let per_sample = answer(
        server,
        with(now(), json!({"tag_filter": "time=1700000020"})),
    )
    .await;
    assert_eq!(
        (per_sample.value, rows(&per_sample)[0]),
        (10, ("dictFind", 10, 10))
    );
}

async fn baselines(server: &TestServer) {
    let earlier = json!({"baseline_time_start": T0 - 3700, "baseline_time_end": T0 - 3500});
    let a = answer(
        server,
        with(now(), with(earlier.clone(), json!({"order_by": "change"}))),
    )
    .await;
    assert_eq!(a.baseline_value, Some(40));
    let near = |x: Option<f64>, y: f64| x.is_some_and(|x| (x - y).abs() < 1e-9);
    // The change inside the processes on both sides (redis-server: 62 now, 40 before); nginx
    // is new, listed apart, and its functions are not growth.
    let d = row(&a, "dictFind");
    assert_eq!((d.baseline_self, d.baseline_total), (Some(10), Some(10)));
    let share = 50.0 * 100.0 / 62.0;
    assert!(near(d.change, share - 25.0), "{d:?}");
    assert!(near(d.ratio, share / 25.0), "{d:?}");
    // A few µs are no samples: the rule cannot call it a change.
    assert_eq!(d.significant, Some(false));
    let ae = row(&a, "aeMain");
    assert!(
        near(ae.change, 5.0 * 100.0 / 62.0 - 75.0),
        "aeMain's self shrank"
    );
    assert_eq!(a.values[0].function, "dictFind", "what grew most first");
    assert_eq!(a.values.last().map(|r| r.function.as_str()), Some("aeMain"));
    assert!(
        a.values.iter().all(|r| r.function != "[k] ep_poll"),
        "only in nginx"
    );
    let new = a.new_processes.as_ref().expect("new processes");
    assert_eq!(new.len(), 1);
    assert_eq!((new[0].app_service.as_str(), new[0].value), ("nginx", 20));
    assert_eq!(new[0].functions[0].function, "[k] ep_poll");
    assert_eq!(a.vanished_processes.as_deref(), Some(&[][..]));
    // Inside each service: redis-server's aeMain went from 30 of 40 to 5 of 62 (self).
    let inside = answer(
        server,
        with(now(), with(earlier, json!({"order_by": "place_change"}))),
    )
    .await;
    let ae = row(&inside, "aeMain");
    assert_eq!(ae.place_change, Some(5.0 * 100.0 / 62.0 - 75.0));
    assert_eq!(ae.places[0].baseline_self, Some(30));
    assert_eq!(
        row(&inside, "[k] ep_poll").place_change,
        None,
        "nginx is new: its functions did not grow from nothing"
    );
    assert_eq!(inside.values[0].function, "dictFind");
    assert_eq!(
        row(&inside, "dictFind").place_change,
        Some(50.0 * 100.0 / 62.0 - 25.0)
    );
    // A baseline tag filter over the same range: pod redis-0 against pod redis-1.
    let pods = json!({"tag_filter": "pod='redis-0'", "baseline_tag_filter": "pod='redis-1'"});
    let p = answer(server, with(now(), pods)).await;
    assert_eq!((p.value, p.baseline_value), (52, Some(10)));
    assert_eq!(row(&p, "dictFind").baseline_self, Some(10));
    assert!(near(
        row(&p, "dictFind").change,
        40.0 * 100.0 / 52.0 - 100.0
    ));
    assert_eq!(p.new_processes, None, "two sets of samples: nothing apart");
}

async fn pages_limits_and_bad_input(server: &TestServer) {
    let page = answer(server, with(now(), json!({"limit": 2, "offset": 2}))).await;
    assert_eq!(
        (rows(&page), page.rows, page.offset),
        (vec![("rec", 7, 7), ("aeMain", 5, 55)], 8, 2)
    );
    let past = answer(server, with(now(), json!({"offset": 8}))).await;
    assert!(past.values.is_empty() && past.rows == 8);
    let one = answer(server, with(now(), json!({"limit": 1}))).await;
    assert_eq!(rows(&one), [("dictFind", 50, 50)]);
    assert_eq!(
        answer(server, with(now(), json!({"limit": 1000})))
            .await
            .values
            .len(),
        8
    );
    let empty = answer(
        server,
        json!({"time_start": T0 + 500, "time_end": T0 + 900,
        "profile_event_type": "on-cpu"}),
    )
    .await;
    assert_eq!((empty.value, empty.rows, empty.values.len()), (0, 0, 0));
    for (extra, field) in [
        (json!({"limit": 0}), "limit must be 1 to 1000, got 0"),
        (json!({"limit": 1001}), "limit must be 1 to 1000, got 1001"),
        (json!({"offset": -3}), "offset must be 0 or more"),
        (json!({"metric": "mean"}), "metric must be"),
        (
            json!({"order_by": "change"}),
            "order_by \"change\" needs a baseline",
        ),
        (json!({"group_by": "thread"}), "group_by must be a tag"),
        (
            json!({"tag_filter": "pod='a' OR 1=1"}),
            "OR is not supported",
        ),
        (
            json!({"profile_event_type": null}),
            "profile_event_type is required",
        ),
        (
            json!({"baseline_time_start": 5}),
            "baseline_time_end is required",
        ),
    ] {
        let (status, envelope) = post(server, with(now(), extra.clone())).await;
        assert_eq!(status, 400, "{extra}: {envelope}");
        assert_eq!(envelope["OPT_STATUS"], "INVALID_POST_DATA");
        let d = envelope["DESCRIPTION"].as_str().unwrap_or("");
        assert!(d.contains(field), "{extra}: {d}");
    }
}

async fn long_range(server: &TestServer) {
    let a = answer(server, long()).await;
    // 82 near T0, `before` and `after` (1000 each), serverCron 300 + 200 + 100 + 50; not the
    // 9999 and 7777 one second outside either end.
    assert_eq!(a.value, 2732);
    assert_eq!(
        rows(&a)[..3],
        [
            ("after", 1000, 1000),
            ("before", 1000, 1000),
            ("serverCron", 650, 650)
        ]
    );
    assert_eq!(row(&a, "main").total, 2732);
    assert_eq!(row(&a, "[t] redis-server").total, 2712);
    let g = answer(
        server,
        with(long(), json!({"group_by": "pod", "search": "cron"})),
    )
    .await;
    assert_eq!(
        places(&g, "serverCron"),
        [
            place("redis-server", Some("redis-0"), 450, 450),
            place("redis-server", Some("redis-1"), 200, 200)
        ]
    );
    let f = answer(server, with(long(), json!({"tag_filter": "pod='redis-1'"}))).await;
    assert_eq!(f.value, 210);
    assert_eq!(
        rows(&f)[..2],
        [("serverCron", 200, 200), ("dictFind", 10, 10)]
    );
}

/// Across a whole six-hour bucket: the same sums whether a store reads it as one bucket or six.
pub async fn wide_range(server: &TestServer) {
    let a = answer(server, wide()).await;
    assert_eq!(
        a.value,
        11 + 13 + 17 + 19 + 23 + 29,
        "not the 9999 and 7777 just outside"
    );
    assert_eq!(rows(&a)[..1], [("serverCron", 112, 112)]);
    let g = answer(server, with(wide(), json!({"group_by": "pod"}))).await;
    assert_eq!(
        places(&g, "serverCron"),
        [
            place("redis-server", Some("redis-0"), 80, 80),
            place("redis-server", Some("redis-1"), 32, 32)
        ]
    );
}

/// A function timeline answer.
pub async fn timeline(server: &TestServer, body: Value) -> FunctionTimelineAnswer {
    let (status, envelope) = server.post("/v1/profile/function_timeline", &body).await;
    assert_eq!(status, 200, "{body}: {envelope}");
    serde_json::from_value(envelope["result"].clone()).expect("a function timeline")
}

/// `(time - H, group, self, total)` of each point.
pub fn points(a: &FunctionTimelineAnswer) -> Vec<(i64, Option<&str>, u64, u64)> {
    a.values
        .iter()
        .map(|p| (p.time - H, p.group.as_deref(), p.self_value, p.total))
        .collect()
}

async fn timelines(server: &TestServer) {
    let base = json!({"profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": H - 601, "time_end": H + 8434, "function": "serverCron", "interval": 600});
    let t = timeline(server, base.clone()).await;
    assert_eq!(t.columns, ["time", "group", "self", "total"]);
    assert_eq!(
        points(&t),
        [
            (-1200, None, 50, 50),
            (3600, None, 300, 300),
            (7800, None, 200, 200),
            (8400, None, 100, 100)
        ]
    );
    let pods = timeline(
        server,
        with(base.clone(), json!({"group_by": "pod", "interval": 3600})),
    )
    .await;
    assert_eq!(pods.columns, ["time", "pod", "self", "total"]);
    assert_eq!(
        points(&pods),
        [
            (-3600, Some("redis-0"), 50, 50),
            (3600, Some("redis-0"), 300, 300),
            (7200, Some("redis-0"), 100, 100),
            (7200, Some("redis-1"), 200, 200)
        ]
    );
    let main = with(
        base,
        json!({"function": "aeMain", "group_by": "app_service",
        "time_start": T0 - 100, "time_end": T0 + 100, "interval": 10}),
    );
    assert_eq!(
        points(&timeline(server, main).await),
        [
            (810, Some("redis-server"), 5, 45),
            (820, Some("redis-server"), 0, 10)
        ]
    );
    let threads = json!({"profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": T0 - 100, "time_end": T0 + 100, "function": "main", "group_by": "thread",
        "interval": 60});
    assert_eq!(
        points(&timeline(server, threads).await),
        [
            (780, Some("[t] nginx"), 0, 20),
            (780, Some("[t] redis-server"), 0, 62)
        ]
    );
    let (status, envelope) = server
        .post(
            "/v1/profile/function_timeline",
            &json!({"profile_language_type": "eBPF",
            "profile_event_type": "on-cpu", "time_start": T0, "time_end": T0 + 1}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(envelope["DESCRIPTION"]
        .as_str()
        .unwrap_or("")
        .contains("function is required"));
}
