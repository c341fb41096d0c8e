//! Every tag name the viewer's tag builder offers (`fields::offered_names`, the list its
//! autocomplete shows) works end to end over real HTTP and the real store: a ProfileTracing
//! filter on it, written by the builder's renderer, is accepted (and, for the tags a batch
//! carries, matches the tagged samples), and the explore endpoints take it as `group_by` and
//! `tag`, or refuse a per-sample field by the documented rule.

use crate::common;

use common::{TempDb, TestServer, T0};
use embers_model::contract::fields::{offered_names, resolve, FieldKind, FieldRef, Scope};
use embers_model::contract::tag_filter::{render_tag_filter, TagCondition};
use serde_json::{json, Map, Value};

/// An offered name made complete (families end in `.` for the user to add a key).
fn complete(name: String) -> String {
    if name.ends_with('.') {
        format!("{name}example.com/app")
    } else {
        name
    }
}

fn value_for(name: &str) -> &'static str {
    if name == "profile_value_unit" {
        // Set as the batch's own member, not among its tags.
        return "microseconds";
    }
    match resolve(name).map(|f| f.kind()) {
        Ok(FieldKind::Int) => "1",
        _ => "v-1",
    }
}

/// Whether an ingested batch carries the tag (and so a filter on it matches the batch).
fn settable(name: &str) -> bool {
    match resolve(name) {
        Ok(FieldRef::Column(def)) => def.scope == Scope::Batch,
        Ok(FieldRef::Open { .. }) => true,
        Err(_) => false,
    }
}

#[tokio::test]
async fn every_offered_tag_filters_and_groups_over_http() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let names: Vec<String> = offered_names().into_iter().map(complete).collect();
    let mut tags = Map::new();
    for name in names
        .iter()
        .filter(|n| settable(n) && !["vtap", "profile_value_unit"].contains(&n.as_str()))
    {
        tags.insert(name.clone(), json!(value_for(name)));
    }
    let batch = json!({"batches": [{
        "app_service": "api", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "profile_value_unit": "microseconds", "time": T0 + 10, "tags": tags,
        "folded": "[t] api;main;work 7\n",
    }]});
    server.ingest(batch).await;
    let range = json!({"time_start": T0, "time_end": T0 + 59});
    for name in &names {
        let filter = render_tag_filter(&[TagCondition {
            name: name.clone(),
            value: value_for(name).into(),
            negated: false,
        }]);
        let body = common::with(
            range.clone(),
            json!({"app_service": "api", "profile_language_type": "eBPF",
                   "profile_event_type": "on-cpu", "tag_filter": filter}),
        );
        let (status, envelope) = server.query(&body).await;
        assert_eq!(status, 200, "{name}: {envelope}");
        if settable(name) {
            assert_eq!(
                common::folded_of(&envelope),
                "api;[t] api;main;work 7\n",
                "{name}: the filter matches the tagged batch"
            );
        }
        let per_sample = matches!(resolve(name), Ok(FieldRef::Column(d))
            if d.scope == Scope::Sample
                && !["app_service", "profile_language_type", "profile_event_type"].contains(&d.name));
        for (path, body) in [
            (
                "/v1/profile/timeline",
                common::with(body.clone(), json!({"group_by": name, "interval": 60})),
            ),
            (
                "/v1/profile/tag_values",
                common::with(range.clone(), json!({"tag": name})),
            ),
        ] {
            let (status, envelope) = server.post(path, &body).await;
            if per_sample {
                assert_eq!(status, 400, "{path} {name}: {envelope}");
                let d = envelope["DESCRIPTION"].as_str().unwrap_or("");
                assert!(d.contains("differs per sample"), "{path} {name}: {d}");
                continue;
            }
            assert_eq!(status, 200, "{path} {name}: {envelope}");
            if settable(name) {
                let text = envelope["result"]["values"].to_string();
                assert!(text.contains(value_for(name)), "{path} {name}: {text}");
            }
        }
    }
    let (status, envelope) = server.post("/v1/profile/tags", &range).await;
    assert_eq!(status, 200, "{envelope}");
    let listed: Vec<Value> = envelope["result"]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(listed.len() >= tags.len() - 1, "{listed:?}");
    server.stop().await;
}
