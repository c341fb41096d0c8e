//! Reading the functions bodies: defaults, every member's checks (each message names its
//! member), baselines, and the viewer's requests read back as sent.

use super::*;
use crate::contract::explore::tests::err;

const RANGE: &str = r#""time_start":1000,"time_end":4599,"profile_event_type":"on-cpu""#;

fn functions(extra: &str) -> Result<FunctionsQuery, RequestError> {
    parse_functions_body(format!("{{{RANGE}{extra}}}").as_bytes())
}

#[test]
fn stacks_count_each_function_once_and_end_in_their_self() {
    let (names, leaf) = stack_functions("[t] w;main;f;g;f;[k] x");
    assert_eq!(names, ["[t] w", "main", "f", "g", "[k] x"]);
    assert_eq!(leaf, Some("[k] x"));
    let (names, leaf) = stack_functions("a;b;a");
    assert_eq!((names, leaf), (vec!["a", "b"], Some("a")));
    assert_eq!(stack_functions(""), (vec![], None));
}

#[test]
fn defaults_and_members() {
    let q = functions("").unwrap();
    assert_eq!((q.limit, q.offset), (100, 0));
    assert_eq!(
        (q.metric, q.order),
        (FunctionMetric::SelfValue, FunctionOrder::Value)
    );
    assert!(q.skips_total() && q.baseline.is_none() && q.group_by.is_none());
    assert_eq!(q.selection.event_type.as_deref(), Some("on-cpu"));
    assert_eq!(q.selection.language, None);
    let q = functions(
        r#","app_service":"redis","metric":"total","limit":1000,"offset":20,"search":"Dict","group_by":"pod","profile_language_type":"eBPF""#,
    )
    .unwrap();
    assert_eq!(
        (q.limit, q.offset, q.metric),
        (1000, 20, FunctionMetric::Total)
    );
    assert_eq!(
        q.search.as_deref(),
        Some("dict"),
        "searched case-insensitively"
    );
    assert!(!q.skips_total());
    assert_eq!(q.group_by.map(|(n, _)| n).as_deref(), Some("pod"));
}

#[test]
fn every_bad_member_is_named() {
    for (extra, want) in [
        (r#","limit":0"#, "limit must be 1 to 1000, got 0"),
        (r#","limit":1001"#, "limit must be 1 to 1000, got 1001"),
        (r#","limit":"5""#, "limit must be an integer"),
        (r#","offset":-1"#, "offset must be 0 or more, got -1"),
        (
            r#","metric":"avg""#,
            "metric must be \"self\" or \"total\", got \"avg\"",
        ),
        (
            r#","order_by":"size""#,
            "order_by must be \"value\", \"change\" or \"place_change\"",
        ),
        (
            r#","order_by":"place_change""#,
            "order_by \"place_change\" needs a baseline",
        ),
        (
            r#","order_by":"change""#,
            "order_by \"change\" needs a baseline",
        ),
        (r#","group_by":"thread""#, "group_by must be a tag"),
        (r#","group_by":"app_service""#, "group_by must be a tag"),
        (r#","group_by":"colour""#, "unknown tag 'colour'"),
        (r#","tag_filter":"pod=""#, "tag_filter"),
        (
            r#","baseline_time_start":5"#,
            "baseline_time_end is required",
        ),
        (
            r#","baseline_time_end":5"#,
            "baseline_time_start is required",
        ),
        (
            r#","baseline_time_start":9,"baseline_time_end":5"#,
            "baseline: time_start (9) is after time_end (5)",
        ),
        (
            r#","baseline_tag_filter":"pod OR 1""#,
            "baseline_tag_filter: ",
        ),
    ] {
        let e = err(functions(extra));
        assert!(e.contains(want), "{extra}: {e}");
    }
    let e = err(parse_functions_body(br#"{"time_start":1,"time_end":2}"#));
    assert!(e.contains("profile_event_type is required"), "{e}");
    let e = err(parse_functions_body(br#"{"profile_event_type":"on-cpu"}"#));
    assert!(e.contains("time_start is required"), "{e}");
}

#[test]
fn baselines_default_to_the_range_and_filter() {
    let q = functions(r#","tag_filter":"pod='a'","baseline_time_start":10,"baseline_time_end":20,"order_by":"change""#)
        .unwrap();
    let b = q.baseline.unwrap();
    assert_eq!((b.time_start, b.time_end), (10, 20));
    assert_eq!(b.filter, q.selection.filter, "the request's filter");
    assert_eq!(q.order, FunctionOrder::Change);
    let q = functions(r#","baseline_tag_filter":"pod='b'""#).unwrap();
    let b = q.baseline.unwrap();
    assert_eq!(
        (b.time_start, b.time_end),
        (1000, 4599),
        "the request's range"
    );
    assert_eq!(b.filter.conditions.len(), 1);
    assert_ne!(b.filter, q.selection.filter);
}

#[test]
fn function_timeline_bodies() {
    let body = |extra: &str| {
        format!(
            r#"{{"profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":1000,"time_end":4599{extra}}}"#
        )
    };
    let q = parse_function_timeline_body(body(r#","function":"main","group_by":"pod""#).as_bytes())
        .unwrap();
    assert_eq!(q.function, "main");
    assert_eq!((q.timeline.interval, q.timeline.group_limit), (30, 10));
    let e = err(parse_function_timeline_body(body("").as_bytes()));
    assert!(e.contains("function is required"), "{e}");
    let e = err(parse_function_timeline_body(
        body(r#","function":"a;b""#).as_bytes(),
    ));
    assert!(e.contains("without ';'"), "{e}");
    let e = err(parse_function_timeline_body(
        body(r#","function":"a","interval":0"#).as_bytes(),
    ));
    assert!(e.contains("interval must be a positive"), "{e}");
}

#[test]
fn the_viewers_requests_are_what_the_service_reads() {
    let sent = FunctionsRequest {
        time_start: 10,
        time_end: 20,
        profile_event_type: "on-cpu".into(),
        metric: Some(FunctionMetric::Total),
        order_by: Some(FunctionOrder::Change),
        baseline_time_start: Some(1),
        baseline_time_end: Some(9),
        search: Some("json".into()),
        ..FunctionsRequest::default()
    };
    let json = serde_json::to_string(&sent).unwrap();
    assert!(json.contains(r#""metric":"total""#) && json.contains(r#""order_by":"change""#));
    let read = parse_functions_body(json.as_bytes()).unwrap();
    assert_eq!(
        (read.metric, read.order),
        (FunctionMetric::Total, FunctionOrder::Change)
    );
    assert_eq!(
        read.baseline.map(|b| (b.time_start, b.time_end)),
        Some((1, 9))
    );
    let self_metric = serde_json::to_string(&FunctionMetric::SelfValue).unwrap();
    assert_eq!(self_metric, r#""self""#);
    let timeline = FunctionTimelineRequest {
        timeline: TimelineRequest {
            profile: crate::contract::request::ProfileRequest {
                profile_language_type: "eBPF".into(),
                profile_event_type: "on-cpu".into(),
                time_start: 10,
                time_end: 20,
                ..Default::default()
            },
            group_by: Some("app_service".into()),
            ..TimelineRequest::default()
        },
        function: "[k] vfs_read".into(),
    };
    let read = parse_function_timeline_body(&serde_json::to_vec(&timeline).unwrap()).unwrap();
    assert_eq!(read.function, "[k] vfs_read");
    assert_eq!(
        read.timeline.group_by.map(|(_, d)| d),
        Some(Dimension::AppService)
    );
}
