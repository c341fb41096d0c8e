//! Snapshot calls as the viewer makes them: the answer goes back as the bytes it arrived in,
//! written into the save body piecewise, never re-encoded.

use serde_json::{json, Value};

use super::TestServer;

/// The snapshots API path.
pub const SNAPSHOTS: &str = "/v1/profile/snapshots";

/// A save body around `response` (JSON text, embedded as is).
pub fn save_body(request: &Value, response: &str, name: Option<&str>) -> Vec<u8> {
    let name = name.map_or_else(String::new, |n| format!(",\"name\":{}", json!(n)));
    format!("{{\"request\":{request},\"response\":{response}{name}}}").into_bytes()
}

/// A shape-A answer of a root and `nodes` children with long names (~150 bytes each).
pub fn big_answer(nodes: usize) -> String {
    let mut rows = vec![
        json!({"profile_location_str": "web", "node_id": "", "parent_node_id": "-1",
        "self_value": 0, "total_value": nodes}),
    ];
    for i in 0..nodes {
        rows.push(json!({
            "profile_location_str": format!("com.example.service.handlers.Function{i:08}.run"),
            "node_id": format!("n{i}"), "parent_node_id": "", "self_value": 1, "total_value": 1,
        }));
    }
    json!({"OPT_STATUS": "SUCCESS", "DESCRIPTION": "", "result": rows, "debug": null}).to_string()
}

impl TestServer {
    /// POST a save body; status and envelope.
    pub async fn save_snapshot(&self, body: Vec<u8>) -> (u16, Value) {
        let (status, text) = self.post_raw(SNAPSHOTS, "application/json", body).await;
        let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, value)
    }

    /// The snapshot list, which must be answered.
    pub async fn snapshot_list(&self) -> Vec<Value> {
        let (status, _, text) = self.get(SNAPSHOTS).await;
        let envelope: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(
            (status, &envelope["OPT_STATUS"]),
            (200, &json!("SUCCESS")),
            "{text}"
        );
        envelope["result"].as_array().cloned().expect("a list")
    }
}
