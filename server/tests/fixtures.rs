//! The shared ProfileTracing fixtures (copied into `model/tests/data/fixtures`): ingest each
//! successful case's canonical stacks, query them back in the case's shape, and compare the tree,
//! the node count and (shape B) each function's type, self and total with `expected.json`.

use crate::common;

use common::{folded_of, TempDb, TestServer, T0};
use embers_model::testkit::fixtures;
use serde_json::{json, Value};

#[tokio::test]
async fn fixtures_round_trip_through_the_store() {
    let mut checked = 0;
    for fixture in fixtures() {
        let name = &fixture.name;
        let expected = &fixture.expected;
        let folded = fixture.expected_folded();
        if fixture.expects_error() || folded.trim().is_empty() {
            continue;
        }
        let root = folded.split(';').next().expect("root").to_owned();
        let body: String = folded
            .split('\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.split_once(';')
                    .map_or(String::new(), |(_, rest)| format!("{rest}\n"))
            })
            .collect();
        let event = expected["event_type"].as_str().unwrap_or("on-cpu");
        let shape = fixture.shape();

        let db = TempDb::new();
        let server = TestServer::start(&db.path()).await;
        server
            .ingest(json!({"app_service": root, "profile_event_type": event, "time": T0, "folded": body}))
            .await;
        let query = json!({
            "app_service": root, "profile_language_type": "eBPF", "profile_event_type": event,
            "time_start": T0, "time_end": T0, "result_shape": shape,
        });
        let (status, envelope) = server.query(&query).await;
        assert_eq!(status, 200, "{name}: {envelope}");
        assert_eq!(folded_of(&envelope), folded, "{name}");

        let result = &envelope["result"];
        let node_count = expected["node_count"].as_u64().unwrap_or(0) as usize;
        if shape == "A" {
            assert_eq!(result.as_array().map_or(0, Vec::len), node_count, "{name}");
        } else {
            assert_eq!(
                result["node_values"]["values"]
                    .as_array()
                    .map_or(0, Vec::len),
                node_count,
                "{name}"
            );
            let functions = result["functions"].as_array().expect("functions");
            let values = result["function_values"]["values"]
                .as_array()
                .expect("values");
            for (i, f) in functions.iter().enumerate() {
                let f = f.as_str().unwrap_or("");
                let want = &expected["functions"][f];
                assert_eq!(
                    result["function_types"][i], want["type"],
                    "{name}: type of {f}"
                );
                assert_eq!(values[i][0], want["self"], "{name}: self of {f}");
                let total = if want["server_total"].is_null() {
                    &want["total"]
                } else {
                    &want["server_total"]
                };
                assert_eq!(&values[i][1], total, "{name}: total of {f}");
            }
            assert_eq!(
                functions.len(),
                expected["functions"].as_object().map_or(0, |o| o.len()),
                "{name}"
            );
        }
        assert_eq!(
            result_total(result),
            expected["root_total"].as_u64(),
            "{name}"
        );
        server.stop().await;
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} fixtures checked");
}

fn result_total(result: &Value) -> Option<u64> {
    match result {
        Value::Array(nodes) => nodes.first().and_then(|n| n["total_value"].as_u64()),
        _ => result["node_values"]["values"][0][3].as_u64(),
    }
}
