//! The OpenAPI document (`GET /openapi.json`, committed as `docs/openapi.json`) cannot drift:
//! every route the service answers is in it and nothing else, the committed file is the one the
//! code generates (`BLESS=1` rewrites it), every example validates against its schema, and the
//! live service's answers to the examples validate against the documented answers.

use crate::common;

use std::path::PathBuf;

use common::{TempDb, TestServer};
use embers_server::http::guard::rules;
use embers_server::{openapi, route_list, Limits};
use serde_json::{json, Value};

const HOW_TO_ADD: &str = "put #[utoipa::path(<method>, path = \"<path>\", ...)] on the handler \
     (see server/src/http/explore.rs), add the handler to paths(...) in \
     server/src/openapi/mod.rs, then run BLESS=1 cargo test -p embers-server --test integration \
     -- openapi:: to rewrite docs/openapi.json";

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json")
}

/// Every (method, path) the document lists.
fn operations(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            out.push((method.to_uppercase(), path.clone()));
        }
    }
    out
}

/// The operations of `these` that `those` lacks, as `METHOD path`.
fn absent(these: &[(String, String)], those: &[(String, String)]) -> Vec<String> {
    these
        .iter()
        .filter(|op| !those.contains(op))
        .map(|(m, p)| format!("{m} {p}"))
        .collect()
}

#[test]
fn every_route_is_documented_and_every_operation_is_served() {
    let doc = openapi::document();
    let documented = operations(&doc);
    let mut served = Vec::new();
    for route in route_list(Limits::default()) {
        for method in route.methods {
            served.push((method.as_str().to_owned(), route.path.to_owned()));
        }
    }
    let missing = absent(&served, &documented);
    assert!(
        missing.is_empty(),
        "served but not in the OpenAPI document: {missing:?}; for each, {HOW_TO_ADD}"
    );
    let stale = absent(&documented, &served);
    assert!(
        stale.is_empty(),
        "documented but not served (server/src/lib.rs route_list): {stale:?}"
    );
    assert_eq!(doc["openapi"], "3.1.0");
}

/// The guard lets a read through with the query token and the query rules only when its path
/// is listed as a query; a reading endpoint missing from the list would need the write token.
#[test]
fn every_reading_operation_is_a_query_to_the_guard() {
    let doc = openapi::document();
    let reading = ["ProfileTracing", "explore", "mcp"];
    let mut missing = Vec::new();
    for (method, path) in operations(&doc) {
        let tags = &doc["paths"][&path][method.to_lowercase()]["tags"];
        let reads = tags.as_array().is_some_and(|t| {
            t.iter()
                .any(|t| reading.contains(&t.as_str().unwrap_or("")))
        });
        if method == "POST" && reads && !rules::QUERY_PATHS.contains(&path.as_str()) {
            missing.push(path);
        }
    }
    assert!(missing.is_empty(), "reading endpoints the guard treats as writes: {missing:?}; add them to QUERY_PATHS in server/src/http/guard/rules.rs");
}

#[test]
fn the_committed_document_is_the_generated_one() {
    let generated = openapi::text();
    let path = committed_path();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, generated).expect("write docs/openapi.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json differs from the document the code generates: run BLESS=1 cargo \
         test -p embers-server --test integration -- openapi:: and commit the file"
    );
}

/// A validator of `schema` (which may refer to the document's components).
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"],
        "allOf": [schema],
    });
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("schema {schema}: {e}"))
}

fn problems(doc: &Value, schema: &Value, value: &Value) -> Vec<String> {
    validator(doc, schema)
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Every `content` of the document with an example: (where, schema, example).
fn examples(doc: &Value) -> Vec<(String, Value, Value)> {
    let mut out = Vec::new();
    for (method, path) in operations(doc) {
        let op = &doc["paths"][&path][method.to_lowercase()];
        let mut contents = vec![("request".to_owned(), &op["requestBody"]["content"])];
        for (status, response) in op["responses"].as_object().into_iter().flatten() {
            contents.push((status.clone(), &response["content"]));
        }
        for (what, content) in contents {
            for (media, body) in content.as_object().into_iter().flatten() {
                if let Some(example) = body.get("example") {
                    let place = format!("{method} {path} {what} {media}");
                    out.push((place, body["schema"].clone(), example.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn every_example_validates_against_its_schema() {
    let doc = openapi::document();
    let all = examples(&doc);
    // Every operation with a JSON body and every 200 JSON answer of the API has one.
    assert!(all.len() >= 18, "only {} examples", all.len());
    for (place, schema, example) in all {
        let found = problems(&doc, &schema, &example);
        assert!(found.is_empty(), "{place}: {found:?}\nexample: {example}");
    }
}

#[test]
fn an_answer_that_breaks_the_schema_is_caught() {
    // The validation above would catch drift: a row with a member too many, a failure
    // without its description.
    let doc = openapi::document();
    let services = &doc["paths"]["/v1/profile/services"]["post"]["responses"];
    let mut example = services["200"]["content"]["application/json"]["example"].clone();
    example["result"]["values"][0] = json!(["nginx", "eBPF", "on-cpu", 1, "extra"]);
    let schema = &services["200"]["content"]["application/json"]["schema"];
    assert!(!problems(&doc, schema, &example).is_empty());
    let failure = &services["400"]["content"]["application/json"]["schema"];
    let empty = json!({"OPT_STATUS": "INVALID_POST_DATA", "DESCRIPTION": "", "result": null, "debug": null});
    assert!(!problems(&doc, failure, &empty).is_empty());
}

/// The schema of `status`'s JSON answer of an operation.
fn answer_schema(doc: &Value, method: &str, path: &str, status: u16) -> Value {
    doc["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]
        ["schema"]
        .clone()
}

#[tokio::test]
async fn the_service_answers_its_examples_as_documented() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let (status, _, served) = server.get("/openapi.json").await;
    assert_eq!((status, served.as_str()), (200, openapi::text()));
    let doc: Value = serde_json::from_str(&served).expect("JSON");
    // Ingest first, so the queries that follow find the examples' samples.
    let order = [
        "/v1/profile/ingest",
        "/v1/profile/ProfileTracing",
        "/v1/profile/services",
        "/v1/profile/timeline",
        "/v1/profile/tags",
        "/v1/profile/tag_values",
        "/v1/profile/snapshots",
    ];
    for path in order {
        let body =
            &doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"];
        let (status, answer) = server.post(path, body).await;
        assert_eq!(status, 200, "{path}: {answer}");
        let found = problems(&doc, &answer_schema(&doc, "post", path, 200), &answer);
        assert!(found.is_empty(), "{path}: {found:?}\n{answer}");
        if path == "/v1/profile/ProfileTracing" {
            assert!(answer["result"]["functions"]
                .as_array()
                .is_some_and(|f| f.len() > 3));
        }
    }
    for path in [
        "/healthz",
        "/readyz",
        "/embers-config.json",
        "/v1/profile/snapshots",
    ] {
        let (status, _, text) = server.get(path).await;
        let answer: Value = serde_json::from_str(&text).expect("JSON");
        let found = problems(&doc, &answer_schema(&doc, "get", path, status), &answer);
        assert!(found.is_empty(), "{path}: {found:?}\n{answer}");
    }
    let (status, failure) = server
        .post("/v1/profile/services", &json!({"time_start": 5}))
        .await;
    assert_eq!(status, 400);
    let found = problems(
        &doc,
        &answer_schema(&doc, "post", "/v1/profile/services", 400),
        &failure,
    );
    assert!(found.is_empty(), "{found:?}\n{failure}");
    server.stop().await;
}

/// A method a route does not answer is a 405 envelope naming the right ones, with `Allow`
/// (schemathesis found the GET-only routes answering an empty 405).
#[tokio::test]
async fn every_route_answers_a_wrong_method_with_the_envelope() {
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    for route in route_list(Limits::default()) {
        let path = route
            .path
            .replace("{app_service}", "web")
            .replace("{id}", "Q2ZJMNXWFWKE5GPYUHMB6ZP4TQ");
        let answer = common::http::send(&server, reqwest::Method::TRACE, &path, &[], "").await;
        assert_eq!(answer.status, 405, "TRACE {path}: {}", answer.body);
        assert_eq!(answer.body["OPT_STATUS"], "FAIL", "TRACE {path}");
        assert!(
            answer.description().contains("use "),
            "{}",
            answer.description()
        );
        for method in route.methods {
            assert!(
                answer.header("allow").contains(method.as_str()),
                "TRACE {path}: Allow {}",
                answer.header("allow")
            );
        }
    }
    server.stop().await;
}
