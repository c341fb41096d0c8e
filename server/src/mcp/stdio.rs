//! `embers-server mcp`: the MCP tools over standard input and output, for an assistant that
//! starts the server itself. It reads the same store a `serve` would (the same `--db` default,
//! or `--clickhouse-url`), or a DeepFlow querier with `--upstream`; logs go to standard error.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use clap::Args;

use crate::http::state::AppState;
use crate::http::upstream::{Upstream, UpstreamArgs};
use crate::limits::options::LimitArgs;
use crate::limits::Limiter;
use crate::store::Synchronous;
use crate::store_args::{open_serving_store, ClickHouseArgs};

/// Options of `mcp`.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    /// SQLite database file [default: as for serve].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The ClickHouse store, instead of --db.
    #[command(flatten)]
    pub clickhouse: ClickHouseArgs,
    /// Answer from this DeepFlow querier instead of the local store (snapshots stay local).
    #[arg(long)]
    pub upstream: Option<String>,
    /// How the upstream querier is asked.
    #[command(flatten)]
    pub upstream_options: UpstreamArgs,
    /// Cost limits of the queries the tools make.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Serve the tools on stdio until the client closes them; they call the routes `internal_app`
/// makes of the state.
pub async fn run(args: McpArgs, internal_app: fn(AppState) -> Router) -> Result<(), String> {
    let store = open_serving_store(args.db.as_deref(), &args.clickhouse, Synchronous::Normal)?;
    let mut state = AppState::new(store);
    state.limiter = Arc::new(Limiter::new(args.limits.caps()));
    if let Some(url) = &args.upstream {
        let upstream = Upstream::with_options(url, args.upstream_options.options()?)?;
        state.upstream = Some(Arc::new(upstream));
    }
    tracing::info!("serving the MCP tools on standard input and output");
    super::serve_stdio(internal_app(state)).await
}
