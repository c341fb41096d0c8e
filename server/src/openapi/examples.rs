//! The document's examples, written by the code that writes real requests and answers: request
//! bodies from the contract's types, answers through the handlers' own envelope functions and
//! the model's encoder, the timeline through the real parser and finishing step. The OpenAPI
//! test validates every one against its schema, so a schema that no longer says what the code
//! writes fails there.

use std::collections::HashMap;

use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::explore::{
    parse_function_timeline_body, parse_functions_body, parse_timeline_body, rank_counts,
    rank_services, stack_functions, FunctionOrder, FunctionPoint, FunctionSums,
    FunctionTimelineAnswer, FunctionTimelineRequest, FunctionsAnswer, FunctionsRequest, SelfTotal,
    ServiceRow, ServicesRequest, TagValuesRequest, TagsRequest, TimelineAnswer, TimelineRequest,
    TimelineRow,
};
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::schema::TracingBody;
use embers_model::contract::shape::ResultShape;
use embers_model::contract::snapshot::SnapshotMeta;
use embers_model::export::encode::encode_result;
use serde::Serialize;
use serde_json::{json, Value};

use crate::error::envelope_json;
use crate::http::explore::success;
use crate::http::ingest::Ingested;
use crate::http::processes::Deleted;
use crate::store::budget::Budget;

const T0: i64 = 1_700_000_000;
const JSON: &str = "application/json";

/// What the examples' stacks look like: an nginx worker, from the process root down.
const STACKS: [(&str, u64); 3] = [
    ("[t] nginx;main;ngx_process_events;[k] epoll_wait", 600),
    (
        "[t] nginx;main;ngx_http_handler;ngx_http_gzip_body_filter;[l] deflate",
        300,
    ),
    (
        "[t] nginx;main;ngx_http_handler;ngx_http_write_filter;[k] tcp_sendmsg",
        100,
    ),
];

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// A success envelope as the handlers write it, around `result`.
fn answer(result: &impl Serialize) -> Value {
    serde_json::from_str(&success(result)).unwrap_or_default()
}

fn request() -> ProfileRequest {
    ProfileRequest {
        app_service: Some("nginx".into()),
        profile_language_type: "eBPF".into(),
        profile_event_type: "on-cpu".into(),
        tag_filter: "host='node-a'".into(),
        time_start: T0,
        time_end: T0 + 3600,
        max_kernel_stack_depth: None,
    }
}

/// The ProfileTracing answer for [`STACKS`] in shape B.
fn profile_answer() -> Value {
    let profile = crate::tree::build_profile("nginx", STACKS, -1, &Budget::new(None));
    let profile = profile.ok().flatten();
    let result = encode_result(profile.as_ref(), ResultShape::B, "on-cpu");
    serde_json::from_str(&envelope_json(SUCCESS, "", result, Value::Null)).unwrap_or_default()
}

fn meta() -> SnapshotMeta {
    SnapshotMeta {
        id: "Q2ZJMNXWFWKE5GPYUHMB6ZP4TQ".into(),
        name: "nginx, 2023-11-14 22:13:20–23:13:20 UTC".into(),
        request: request(),
        size: 1843,
        saved_at: T0 + 4000,
    }
}

fn timeline_body() -> TimelineRequest {
    TimelineRequest {
        profile: ProfileRequest {
            tag_filter: String::new(),
            ..request()
        },
        interval: Some(60),
        group_by: Some("host".into()),
        group_limit: None,
    }
}

fn timeline() -> (Value, Value) {
    let request = to_json(&timeline_body());
    let points = [(T0, "node-a", 5_000_000), (T0, "node-b", 2_500_000)]
        .into_iter()
        .map(|(time, group, value)| TimelineRow {
            time,
            group: Some(group.into()),
            value,
        })
        .collect();
    let answer_value = parse_timeline_body(request.to_string().as_bytes())
        .map(|q| answer(&TimelineAnswer::finish(&q, points)))
        .unwrap_or_default();
    (request, answer_value)
}

/// (method, path, request example, 200 answer example).
type Example = (&'static str, &'static str, Option<Value>, Value);

/// The examples of every operation with a body or a JSON answer.
fn examples() -> Vec<Example> {
    let mut all = explore_examples();
    all.extend(function_examples());
    all.extend(super::fine_examples::examples(request()));
    let tracing = TracingBody {
        request: request(),
        bounds: Default::default(),
        result_shape: Some("B"),
        debug: None,
    };
    let ingested = Ingested {
        batches: 1,
        new_stacks: 3,
        samples: 3,
    };
    let deleted = Deleted {
        app_service: "nginx".into(),
        rollup_rows_deleted: 12,
        samples_deleted: 3,
    };
    let save = json!({"request": request(), "response": profile_answer(), "name": meta().name});
    all.extend([
        (
            "post",
            "/v1/profile/ProfileTracing",
            Some(to_json(&tracing)),
            profile_answer(),
        ),
        (
            "post",
            "/v1/profile/ingest",
            Some(ingest_body()),
            answer(&ingested),
        ),
        (
            "delete",
            "/v1/profile/processes/{app_service}",
            None,
            answer(&deleted),
        ),
        ("get", "/v1/profile/snapshots", None, answer(&vec![meta()])),
        ("post", "/v1/profile/snapshots", Some(save), answer(&meta())),
        (
            "delete",
            "/v1/profile/snapshots/{id}",
            None,
            answer(&meta()),
        ),
        ("get", "/v1/profile/snapshots/{id}", None, stored()),
    ]);
    all
}

/// The explore endpoints' examples.
fn explore_examples() -> Vec<Example> {
    let range = ServicesRequest {
        time_start: T0,
        time_end: T0 + 3600,
        profile_language_type: Some("eBPF".into()),
        profile_event_type: None,
        tag_filter: String::new(),
    };
    let services = rank_services(vec![
        ServiceRow::from(("nginx".into(), "eBPF".into(), "on-cpu".into(), 36_000_000)),
        ServiceRow::from((
            "redis-server".into(),
            "eBPF".into(),
            "on-cpu".into(),
            9_000_000,
        )),
    ]);
    let counts = |pairs: &[(&str, u64)]| {
        let map: HashMap<String, u64> = pairs.iter().map(|(k, v)| ((*k).into(), *v)).collect();
        answer(&rank_counts(map, None, 100))
    };
    let (timeline_request, timeline_answer) = timeline();
    let tags = TagsRequest {
        time_start: T0,
        time_end: T0 + 3600,
        app_service: Some("nginx".into()),
        ..TagsRequest::default()
    };
    let values = TagValuesRequest {
        tag: "host".into(),
        time_start: T0,
        time_end: T0 + 3600,
        ..TagValuesRequest::default()
    };
    let tag_counts = counts(&[("host", 120), ("pod", 120), ("region", 60)]);
    let value_counts = counts(&[("node-a", 80), ("node-b", 40)]);
    vec![
        (
            "post",
            "/v1/profile/services",
            Some(to_json(&range)),
            answer(&services),
        ),
        (
            "post",
            "/v1/profile/timeline",
            Some(timeline_request),
            timeline_answer,
        ),
        ("post", "/v1/profile/tags", Some(to_json(&tags)), tag_counts),
        (
            "post",
            "/v1/profile/tag_values",
            Some(to_json(&values)),
            value_counts,
        ),
    ]
}

/// The example stacks summed as a store sums them for the functions endpoints, with the gzip
/// path's value divided by `gzip_divisor` (a baseline where it was smaller).
fn function_sums(gzip_divisor: u64) -> FunctionSums {
    let mut sums = FunctionSums::default();
    let place = sums.place(&("nginx".into(), None));
    for (stack, value) in STACKS {
        let value = match stack.contains("gzip") {
            true => value / gzip_divisor,
            false => value,
        };
        sums.all += value;
        sums.add_all(place, value);
        let (functions, leaf) = stack_functions(stack);
        for function in functions {
            let self_value = if leaf == Some(function) { value } else { 0 };
            let total = value;
            sums.add(function, place, SelfTotal { self_value, total });
        }
    }
    sums
}

/// `functions` against the hour before (what grew) and one function's timeline, through the
/// real parsers and finishing steps.
fn function_examples() -> Vec<Example> {
    let functions = FunctionsRequest {
        time_start: T0,
        time_end: T0 + 3600,
        profile_event_type: "on-cpu".into(),
        profile_language_type: Some("eBPF".into()),
        order_by: Some(FunctionOrder::Change),
        limit: Some(3),
        baseline_time_start: Some(T0 - 3600),
        baseline_time_end: Some(T0 - 1),
        ..FunctionsRequest::default()
    };
    let functions = to_json(&functions);
    let ranked = parse_functions_body(functions.to_string().as_bytes())
        .map(|q| {
            answer(&FunctionsAnswer::finish(
                &q,
                function_sums(1),
                Some(function_sums(3)),
            ))
        })
        .unwrap_or_default();
    let timeline = FunctionTimelineRequest {
        timeline: timeline_body(),
        function: "ngx_http_handler".into(),
    };
    let timeline = to_json(&timeline);
    let points = [(T0, "node-a", 100, 400), (T0 + 60, "node-b", 0, 250)]
        .into_iter()
        .map(|(time, group, self_value, total)| FunctionPoint {
            time,
            group: Some(group.into()),
            self_value,
            total,
        })
        .collect();
    let over_time = parse_function_timeline_body(timeline.to_string().as_bytes())
        .map(|q| answer(&FunctionTimelineAnswer::finish(&q.timeline, points)))
        .unwrap_or_default();
    vec![
        ("post", "/v1/profile/functions", Some(functions), ranked),
        (
            "post",
            "/v1/profile/function_timeline",
            Some(timeline),
            over_time,
        ),
    ]
}

/// A JSON ingest body, as an agent posts it.
fn ingest_body() -> Value {
    let folded: String = STACKS
        .iter()
        .map(|(stack, value)| format!("{stack} {value}\n"))
        .collect();
    json!({
        "app_service": "nginx",
        "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu",
        "profile_value_unit": "microseconds",
        "time": T0,
        "tags": {"host": "node-a", "k8s.label.app": "nginx"},
        "folded": folded,
    })
}

/// A fetched snapshot: the stored answer with its metadata first, as the service splices it.
fn stored() -> Value {
    let mut spliced = serde_json::Map::new();
    spliced.insert("snapshot".into(), to_json(&meta()));
    if let Value::Object(answer) = profile_answer() {
        spliced.extend(answer);
    }
    Value::Object(spliced)
}

/// Puts the examples into `doc`'s operations (those it has).
pub fn add(doc: &mut Value) {
    for (method, path, body, ok) in examples() {
        let Some(operation) = doc.pointer_mut(&format!("/paths/{}/{method}", escape(path))) else {
            continue;
        };
        if let (Some(body), Some(content)) = (
            body,
            operation.pointer_mut(&format!("/requestBody/content/{}", escape(JSON))),
        ) {
            content["example"] = body;
        }
        if let Some(content) =
            operation.pointer_mut(&format!("/responses/200/content/{}", escape(JSON)))
        {
            content["example"] = ok;
        }
    }
}

/// `text` as one JSON pointer token.
fn escape(text: &str) -> String {
    text.replace('~', "~0").replace('/', "~1")
}
