//! The Model Context Protocol interface for assistants, with the official Rust SDK (`rmcp`):
//! `embers-server mcp` over stdio, and streamable HTTP at `POST /mcp` (stateless, JSON
//! answers), which sits behind the same guard as the API (`Host`, cross-site rules, the query
//! token) and the same body limit as the other query routes (`--max-query-bytes`). The tools
//! ([`tools`]) answer deterministic text from the service's own API ([`api`]); no model runs
//! here.

pub(crate) mod api;
pub mod args;
mod error;
mod functions;
mod lines;
pub mod stdio;
mod text;
mod tools;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::response::Response;
use axum::Router;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool_handler, ServerHandler, ServiceExt};
use tower::ServiceExt as _;

use crate::error::Error;
use crate::http::state::AppState;
use api::Api;

/// The path of the streamable HTTP transport.
pub const MCP_PATH: &str = "/mcp";

/// What an assistant is told the server is for.
const INSTRUCTIONS: &str = "Embers holds eBPF CPU profiles (flame graphs) of services. Start with \
list_services to see which services have samples and their names; summarize_profile shows where \
one spends its time; top_functions lists the hottest functions across services, or with a \
baseline (previous, yesterday) what grew in any of them; compare_profiles shows what grew or shrank \
in one service between two time ranges (or against a saved snapshot) — the first 'Grew' line is \
where a regression starts; timeline shows when; function_lines shows which source lines of a hot \
function burn (when the profile has lines). Times are Unix seconds, or `last` such as 20m or 1h ending now.";

/// The MCP server: the tools over the service's API.
#[derive(Clone, Debug)]
pub struct Embers {
    api: Api,
    tool_router: ToolRouter<Embers>,
}

impl Embers {
    /// Tools answering from `router`: the service's routes with their state, without the
    /// guard ([`crate::router::internal_app`]).
    pub fn new(router: Router) -> Embers {
        Embers {
            api: Api::new(router),
            tool_router: Embers::tool_router() + Embers::lines_router(),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Embers {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("embers", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// `POST /mcp`: one JSON-RPC message of the streamable HTTP transport, answered statelessly
/// (the guard has already checked the `Host`, the origin and the token). The tools call the
/// routes `internal_app` makes of the state (the router passes its own: this module is
/// below it).
#[utoipa::path(
    post,
    path = "/mcp",
    tag = "mcp",
    summary = "The Model Context Protocol (streamable HTTP) for assistants",
    description = "JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list, \
                   tools/call (list_services, top_functions, summarize_profile, \
                   compare_profiles, timeline, function_lines, list_snapshots, read_snapshot). Stateless; send `Accept: application/json, \
                   text/event-stream`. Needs the query token when the service has one.",
    request_body(content = Object, content_type = "application/json", description = "A JSON-RPC 2.0 request or notification."),
    responses(
        (status = 200, description = "The JSON-RPC answer.", content_type = "application/json", body = Object),
        (status = 202, description = "A notification was accepted."),
        (status = 400, description = "Not a JSON-RPC message the transport reads (plain text).", content_type = "text/plain", body = String),
        (status = 406, description = "The `Accept` header does not take `application/json` and `text/event-stream` (plain text).", content_type = "text/plain", body = String),
    ),
)]
pub async fn handle(
    State(state): State<AppState>,
    parts: Parts,
    body: Result<Bytes, BytesRejection>,
    internal_app: fn(AppState) -> Router,
) -> Result<Response, Error> {
    // The body is read here, within the route's limit, rather than by the transport, which
    // would read any size.
    let body = crate::http::read_body(body, state.limits.query)?;
    let request = Request::from_parts(parts, Body::from(body));
    let router = internal_app(state);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        // The guard in front of every route checks the Host and the origin.
        .disable_allowed_hosts()
        .disable_allowed_origins();
    let service = StreamableHttpService::new(
        move || Ok(Embers::new(router.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let Ok(response) = service.oneshot(request).await;
    Ok(response.map(Body::new))
}

/// `embers-server mcp`: serve the tools over standard input and output until the client
/// closes them.
pub async fn serve_stdio(router: Router) -> Result<(), String> {
    let running = Embers::new(router)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP over stdio did not start: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("MCP over stdio stopped: {e}"))?;
    Ok(())
}
