//! The OpenAPI 3.1 document of every endpoint, served at `GET /openapi.json` and committed as
//! `docs/openapi.json`. It is generated from the handlers' `#[utoipa::path]` attributes and the
//! request and answer types (the contract's, in `model/src/contract/`, with the model's
//! `openapi` feature), then [`errors`] adds the failures each endpoint can answer (from the
//! guard's own rules) and [`examples`] adds examples written by the real serialisers.
//!
//! **Adding an endpoint**: put `#[utoipa::path(...)]` on its handler (see
//! `http/explore.rs`) and add the handler to `paths(...)` below — one line. The test
//! `server/tests/openapi.rs` fails while a route of [`crate::router::route_list`] is missing here, the
//! committed file differs (`BLESS=1` rewrites it) or an example does not match its schema.

mod errors;
mod examples;
mod fine_examples;

use std::sync::OnceLock;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};
use utoipa::OpenApi;

use crate::error::json_response;
use crate::http;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Embers",
        description = "Embers' HTTP API: DeepFlow's ProfileTracing interface over Embers' own store \
                       (SQLite or ClickHouse) or a DeepFlow querier, with the endpoints the viewer \
                       explores, ingests and saves snapshots with. Every /v1 answer is the \
                       envelope {OPT_STATUS, DESCRIPTION, result, debug}; docs/api.md explains \
                       each member and what the interface leaves open.",
        license(name = "MIT OR Apache-2.0"),
    ),
    paths(
        http::profile_tracing::handle,
        http::explore::services,
        http::explore::timeline,
        http::explore::tags,
        http::explore::tag_values,
        http::explore::functions,
        http::explore::function_timeline,
        http::explore::function_lines,
        http::fine::heatmap,
        http::fine::samples,
        http::ingest::handle,
        http::otlp::handle,
        http::pprof::handle,
        http::pyroscope::handle,
        http::push::handle,
        http::processes::delete,
        http::snapshots::list,
        http::snapshots::save::handle,
        http::snapshots::fetch,
        http::snapshots::delete,
        http::health::handle,
        http::health::ready,
        http::alerts::dry_run,
        http::guard::page::embed_config,
        http::source::config,
        http::source::text,
        handle,
        crate::mcp::handle,
    ),
    // PlaceValue is named by FunctionRow's hand-written schema, which utoipa cannot follow.
    components(schemas(
        crate::api_types::Failure,
        embers_model::contract::explore::PlaceValue
    )),
    tags(
        (name = "ProfileTracing", description = "DeepFlow's interface: a flame graph of the selected samples."),
        (name = "explore", description = "Which services and functions burn CPU, when, and with which tags."),
        (name = "ingest", description = "Writing and deleting samples."),
        (name = "snapshots", description = "Saved answers that outlive the retention."),
        (name = "health", description = "Liveness and readiness probes."),
        (name = "alerts", description = "Alert rules over the function rollup: what would fire now."),
        (name = "page", description = "What the viewer reads besides the API."),
        (name = "source", description = "Source text under --source-dir, and the link template the browser opens."),
        (name = "mcp", description = "The Model Context Protocol for assistants (docs/api.md)."),
    ),
)]
struct ApiDoc;

/// The document as JSON, with the failures, the token scheme, the version and the examples.
pub fn document() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    doc["info"]["version"] = json!(env!("CARGO_PKG_VERSION"));
    doc["components"]["securitySchemes"]["token"] = json!({
        "type": "http",
        "scheme": "bearer",
        "description": "Only when the service runs with --token-file (writes) or \
                        --query-token-file (queries): `Authorization: Bearer <token>`."
    });
    // Without tokens no credentials are needed; with them, the bearer token.
    doc["security"] = json!([{}, {"token": []}]);
    // Pyroscope's ingest has DeepFlow's agent's path too: the same operation.
    let ingest = doc["paths"]["/ingest"].clone();
    doc["paths"]["/api/v1/profile/ingest"] = ingest;
    doc["paths"]["/api/v1/profile/ingest"]["post"]["operationId"] = json!("deepflow_ingest");
    errors::add(&mut doc);
    examples::add(&mut doc);
    doc
}

/// The document as served and committed: pretty JSON with a final newline.
pub fn text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
        text.push('\n');
        text
    })
}

/// `GET /openapi.json`.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "page",
    summary = "This document",
    responses((status = 200, description = "The OpenAPI 3.1 document of every endpoint.", content_type = "application/json", body = Object)),
)]
pub async fn handle() -> Response {
    json_response(StatusCode::OK, text().to_owned())
}
