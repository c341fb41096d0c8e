//! `POST /mcp` over real HTTP: raw JSON-RPC messages of the streamable HTTP transport get the
//! tools and their texts, and the endpoint sits behind the same guard as the API — a foreign
//! `Host` and a cross-site request are refused, and the query token is needed when set. (The
//! official Python MCP client exercises both transports in `scripts/mcp_test.py`.)

use crate::common;

use std::sync::Arc;

use common::http::{send, Answer};
use common::{TempDb, TestServer, T0};
use embers_server::http::guard::args::GuardArgs;
use reqwest::Method;
use serde_json::{json, Value};

const MCP: &str = "/mcp";
const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("content-type", "application/json");

fn rpc(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn call(server: &TestServer, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut all = vec![ACCEPT, JSON];
    all.extend_from_slice(headers);
    send(server, Method::POST, MCP, &all, body).await
}

/// The text of a `tools/call` answer, and whether it is a tool error.
fn tool_text(answer: &Answer) -> (bool, String) {
    let result = &answer.body["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    (result["isError"] == json!(true), text.to_owned())
}

#[tokio::test]
async fn tools_answer_over_http_from_the_store() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server
        .ingest(json!({"app_service": "web", "time": T0,
                       "folded": "[t] web;main;render;json.Marshal 75\n[t] web;main;read 25\n"}))
        .await;
    let list = call(&server, &[], &rpc(1, "tools/list", json!({}))).await;
    assert_eq!(list.status, 200, "{}", list.body);
    let names: Vec<&str> = list.body["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "compare_profiles",
            "function_lines",
            "list_services",
            "list_snapshots",
            "read_snapshot",
            "summarize_profile",
            "timeline",
            "top_functions"
        ]
    );
    let args = json!({"app_service": "web", "time_start": T0, "time_end": T0 + 60, "rows": 2});
    let params = json!({"name": "summarize_profile", "arguments": args});
    let (error, text) = tool_text(&call(&server, &[], &rpc(2, "tools/call", params)).await);
    assert!(!error, "{text}");
    assert!(
        text.starts_with(
            "web, on-cpu (eBPF), 2023-11-14 22:13:20–22:14:20 UTC\nTotal: 100 µs of CPU time"
        ),
        "{text}"
    );
    assert!(
        text.contains("  1.    75%       75 µs  json.Marshal\n"),
        "{text}"
    );
    let bad = json!({"name": "summarize_profile", "arguments": {"app_service": "web", "time_start": T0 + 9, "time_end": T0}});
    let (error, text) = tool_text(&call(&server, &[], &rpc(3, "tools/call", bad)).await);
    assert!(error && text.contains("is after time_end"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn top_functions_list_the_hottest_and_what_grew() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    server
        .ingest(json!({"app_service": "web", "time": T0 - 30,
                       "folded": "[t] web;main;render;json.Marshal 10\n[t] web;main;read 90\n"}))
        .await;
    server
        .ingest(json!({"app_service": "web", "time": T0 + 10,
                       "folded": "[t] web;main;render;json.Marshal 75\n[t] web;main;read 25\n"}))
        .await;
    let ask = |id, args: Value| {
        rpc(
            id,
            "tools/call",
            json!({"name": "top_functions", "arguments": args}),
        )
    };
    let range = json!({"time_start": T0, "time_end": T0 + 59, "limit": 2});
    let (error, text) = tool_text(&call(&server, &[], &ask(1, range.clone())).await);
    assert!(!error, "{text}");
    let expected = "\
Top functions, by self CPU time: every service, on-cpu (eBPF), 2023-11-14 22:13:20–22:14:19 UTC
Total: 100 µs of CPU time.
5 functions; 1 to 2 below.
  #   self%       self    total%      total  function
  1.    75%      75 µs       75%      75 µs  json.Marshal
       in web 75 µs
  2.    25%      25 µs       25%      25 µs  read
       in web 25 µs
";
    assert_eq!(text, expected);
    let mut grew = range;
    grew["baseline"] = json!("previous");
    let (error, text) = tool_text(&call(&server, &[], &ask(2, grew)).await);
    assert!(!error, "{text}");
    assert!(
        text.contains("Baseline: 2023-11-14 22:12:20–22:13:19 UTC, 100 µs of CPU time."),
        "{text}"
    );
    assert!(
        text.contains("  1.   +65 pp     10% → 75%          75 µs  json.Marshal\n       in web +65 pp (75 µs)\n"),
        "{text}"
    );
    let bad = ask(3, json!({"limit": 51}));
    let (error, text) = tool_text(&call(&server, &[], &bad).await);
    assert!(error && text == "limit must be 1 to 50, got 51", "{text}");
    server.stop().await;
}

#[tokio::test]
async fn mcp_sits_behind_the_guard() {
    let db = TempDb::new();
    let dir = tempfile::tempdir().expect("dir");
    let token = dir.path().join("read");
    std::fs::write(&token, "read-s3cret\n").expect("write");
    let args = GuardArgs {
        query_token_file: Some(token),
        ..GuardArgs::default()
    };
    let guard = args.guard("127.0.0.1:0").expect("guard");
    let server = TestServer::start_with(&db.path(), |s| s.guard = Arc::new(guard)).await;
    let list = rpc(1, "tools/list", json!({}));
    let bearer = ("authorization", "Bearer read-s3cret");
    let missing = call(&server, &[], &list).await;
    assert_eq!(missing.status, 401, "{}", missing.body);
    assert!(missing.header("www-authenticate").starts_with("Bearer"));
    let foreign = call(&server, &[bearer, ("host", "evil.example")], &list).await;
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert!(
        foreign.description().contains("--allowed-host"),
        "{}",
        foreign.body
    );
    let cross_site = [
        bearer,
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ];
    let refused = call(&server, &cross_site, &list).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.description().contains("cross-site"),
        "{}",
        refused.body
    );
    let ok = call(&server, &[bearer], &list).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.body["result"]["tools"].as_array().map(Vec::len), Some(8));
    server.stop().await;
}

/// `/mcp` holds the body limit of the other query routes (`--max-query-bytes`): a 2 MB message
/// is a 413 envelope naming the limit, and a message within it is read.
#[tokio::test]
async fn a_body_over_the_query_limit_is_413() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let padding = "x".repeat(2 << 20);
    let big = rpc(1, "tools/list", json!({ "padding": padding }));
    let answer = call(&server, &[], &big).await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(answer.body["OPT_STATUS"], "FAIL");
    let limit = embers_server::DEFAULT_QUERY_LIMIT.to_string();
    assert!(answer.description().contains(&limit), "{}", answer.body);
    let small = call(&server, &[], &rpc(2, "tools/list", json!({}))).await;
    assert_eq!(small.status, 200, "{}", small.body);
    server.stop().await;
}
