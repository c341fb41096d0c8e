//! Command line: `serve` (the default), `import` (folded stacks, pprof, `perf script`, JFR),
//! `delete` (one process's data), `mcp` (the MCP tools over stdio) and `diff` (two profiles
//! compared, the CI regression gate).
//!
//! ```text
//! embers-server [serve] [--listen 127.0.0.1:8080] [--db PATH] [--static-dir DIR]
//!               [--upstream http://querier:20416] [--result-shape a|b] [--demo [--demo-live]]
//!               [--max-ingest-bytes N] [--max-request-memory N] [--max-query-bytes N]
//!               [--max-snapshot-bytes N]
//!               [--otlp-grpc-listen ADDR]
//!               [--clickhouse-url URL... [--clickhouse-database embers]
//!                [--clickhouse-cluster NAME] [--clickhouse-password-file PATH]]
//!               [--allowed-host NAME]... [--allow-origin ORIGIN]... [--embed-origin ORIGIN]...
//!               [--token-file FILE] [--query-token-file FILE]
//!               [--upstream-max-bytes N] [--upstream-connect-timeout 10s]
//!               [--upstream-read-timeout 120s] [--org-id N] [--allow-org-id N]...
//!               [--allow-debug] [--max-ingest-in-flight-bytes N] [--max-concurrent-saves 2]
//!               [--max-concurrent-deletes 2] [--max-snapshots 1000]
//!               [--max-snapshot-total-bytes N] [--snapshot-ttl 0]
//!               [limits] [--retention 72h] [--synchronous normal|full]
//!               [--profile-host [--profile-host-interval 10s] [--profile-host-off-cpu]
//!                [--profile-host-kernel-threads]]
//!               [--header-read-timeout 10s] [--idle-timeout 60s] [--max-connections 1024]
//!               [--body-read-timeout 60s] [--write-timeout 60s] [--max-connections-per-ip N]
//! embers-server mcp [--db PATH | --clickhouse-url URL...] [--upstream URL] [limits]
//! embers-server import [--format auto|folded|pprof|perf|jfr] [--app-service NAME] [--db PATH]
//!               [--language eBPF] [--event-type on-cpu] [--unit microseconds]
//!               [--sample-type TYPE] [--max-file-bytes N] [--time SECS] [--tag NAME=VALUE]...
//!               [--to URL [--token-file FILE]] FILE...   (- = stdin)
//! embers-server delete --app-service NAME [--db PATH | --clickhouse-url URL...]
//! embers-server diff [BASE] [NEW] [--base-range RANGE] [--new-range RANGE] [--app-service NAME]
//!               [--db PATH | --clickhouse-url URL... | --url URL] [--format text|markdown|json]
//!               [--max-growth PCT] [--max-total-growth PCT] [--min-samples N] [--link URL]
//! ```
//! The limits (`--max-stack-frames`, `--query-timeout`, ...) are in [`crate::limits::options`];
//! `--retention`, `--synchronous` and `delete` in [`crate::retention`]; `mcp` in
//! [`crate::mcp::stdio`]; `diff` (the CI gate) in [`diff`].

pub mod diff;
mod import;
mod read;
mod send;

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use embers_model::contract::shape::ResultShape;

use crate::demo::live::Feeder;
use crate::host_profile::{self, HostProfileArgs};
use crate::http::guard::args::GuardArgs;
use crate::http::upstream::{Upstream, UpstreamArgs};
pub use import::{import, FormatArg, ImportArgs};

use crate::demo;
use crate::http::state::AppState;
use crate::limits::options::LimitArgs;
use crate::limits::sizes::Limits;
use crate::limits::writes::WriteGate;
use crate::limits::Limiter;
use crate::listen::{self, ConnArgs};
use crate::retention::{DeleteArgs, StorageArgs};
use crate::router::app;
use crate::store::Store;
pub use crate::store_args::default_db_path;
use crate::store_args::{open_serving_store, ClickHouseArgs};

/// The line the run scripts grep for; keep this prefix.
pub const RUNNING_PREFIX: &str = "Embers is running at ";
/// The line after it with `--otlp-grpc-listen`: the gRPC receiver's address.
pub const OTLP_GRPC_PREFIX: &str = "OTLP profiles over gRPC at ";

/// Embers service: stores eBPF profiles and answers ProfileTracing.
#[derive(Debug, Parser)]
#[command(
    name = "embers-server",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `serve` when no subcommand is given.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API and the viewer (the default).
    Serve(Box<ServeArgs>),
    /// Import folded-stack, pprof, `perf script` or JFR files into the database (one
    /// transaction per file).
    Import(ImportArgs),
    /// Delete every sample of one process (app_service) from the database.
    Delete(DeleteArgs),
    /// Serve the MCP tools for assistants over standard input and output.
    Mcp(crate::mcp::stdio::McpArgs),
    /// Compare two profiles (files or stored ranges): what grew, and with --max-growth a gate
    /// for CI (exit 1 when a function's share grew past it significantly, 2 on an error).
    Diff(Box<diff::DiffArgs>),
}

/// Options of `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port (the chosen one is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// SQLite database file [default: $XDG_DATA_HOME/embers/embers.db or
    /// ~/.local/share/embers/embers.db].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Directory of a built viewer to serve at `/` instead of the one built into the binary
    /// (for development: `trunk build` output is served as it changes).
    #[arg(long)]
    pub static_dir: Option<PathBuf>,
    /// Answer ProfileTracing and the explore endpoints from this querier instead of the local
    /// store (e.g. http://deepflow-server:20416).
    #[arg(long)]
    pub upstream: Option<String>,
    /// Shape of `result` unless the request asks otherwise with "result_shape".
    #[arg(long, default_value = "b", value_parser = ResultShape::from_str)]
    pub result_shape: ResultShape,
    /// Fill an empty database with six hours of deterministic demo profiles ending now.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: keep adding demo profiles as time passes, a minute at a time, so "the last
    /// hour" stays current while the service runs (scripts/run.sh turns it on).
    #[arg(long, requires = "demo")]
    pub demo_live: bool,
    /// Also receive OTLP profiles over gRPC (ProfilesService/Export) at this address, e.g.
    /// 0.0.0.0:4317; off unless given. Tokens and --max-ingest-bytes apply as on HTTP.
    #[arg(long, value_name = "ADDR")]
    pub otlp_grpc_listen: Option<String>,
    /// Body size limit of ingest requests, bytes.
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_INGEST_LIMIT)]
    pub max_ingest_bytes: usize,
    /// What one ingest request may expand to in memory while it is read (gunzipped, decoded,
    /// its stacks named), bytes: at most this, and for a body of N bytes at most 32 MiB + 64 ×
    /// N; past it the request is answered 413.
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_REQUEST_MEMORY)]
    pub max_request_memory: usize,
    /// Body size limit of query requests, bytes.
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_QUERY_LIMIT)]
    pub max_query_bytes: usize,
    /// Cost limits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Retention and durability.
    #[command(flatten)]
    pub storage: StorageArgs,
    /// Size limit of the answer a snapshot saves, bytes.
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_SNAPSHOT_LIMIT)]
    pub max_snapshot_bytes: usize,
    /// What writes may hold at once; what snapshots may add up to.
    #[command(flatten)]
    pub writes: crate::limits::write_options::WriteArgs,
    /// The ClickHouse store, instead of --db.
    #[command(flatten)]
    pub clickhouse: ClickHouseArgs,
    /// Who may use the service (hosts, origins, tokens).
    #[command(flatten)]
    pub guard: GuardArgs,
    /// How the upstream querier is asked.
    #[command(flatten)]
    pub upstream_options: UpstreamArgs,
    /// Profiling this host (`--profile-host`); boxed, so `Command` stays small.
    #[command(flatten)]
    pub host_profile: Box<HostProfileArgs>,
    /// How long clients may hold connections, and how many.
    #[command(flatten)]
    pub connections: ConnArgs,
    /// Alert rules, their schedule and webhook (docs/alerts.md).
    #[command(flatten)]
    pub alerts: crate::alerts::AlertArgs,
    /// Source text and links beside a profile's lines.
    #[command(flatten)]
    pub source: crate::http::source::SourceArgs,
}

impl ServeArgs {
    /// The body size limits the options set.
    fn body_limits(&self) -> Limits {
        Limits {
            ingest: self.max_ingest_bytes,
            query: self.max_query_bytes,
            snapshot: self.max_snapshot_bytes,
            request_memory: self.max_request_memory,
        }
    }
}

/// Run `serve` until Ctrl-C or SIGTERM.
pub async fn serve(args: ServeArgs) -> Result<(), String> {
    // Options are checked before anything is opened.
    let write_caps = args.writes.caps(args.max_ingest_bytes)?;
    let store = open_serving_store(
        args.db.as_deref(),
        &args.clickhouse,
        args.storage.synchronous,
    )?;
    start_retention(&store, &args, write_caps.snapshot_ttl);
    if args.demo {
        start_demo(&store, args.demo_live).await?;
    }
    // Kept until the server stops; dropping it stores the window in progress.
    let profiler = host_profile::start_or_say_why(
        &args.host_profile,
        store.clone(),
        args.limits.caps().stacks,
    );
    let upstream = upstream_of(&args)?;
    let alerts = args
        .alerts
        .start(&args.listen, args.db.as_deref(), &store)?;
    let state = AppState {
        alerts,
        store,
        default_shape: args.result_shape,
        upstream,
        static_dir: args.static_dir.clone(),
        limits: args.body_limits(),
        limiter: Arc::new(Limiter::new(args.limits.caps())),
        guard: Arc::new(args.guard.guard(&args.listen)?),
        collector: profiler.as_ref().map(host_profile::HostProfiler::status),
        writes: Arc::new(WriteGate::new(write_caps)),
        allow_debug: args.guard.allow_debug,
        sources: args.source.sources()?,
    };
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?;
    if let Some(warning) = crate::http::guard::exposure_warning(&addr, &args.guard) {
        tracing::warn!("{warning}");
    }
    crate::http::static_files::warn_without_viewer(args.static_dir.as_deref());
    let shutdown = shutdown_signal()?;
    let grpc = match &args.otlp_grpc_listen {
        Some(at) => Some(
            crate::http::otlp::grpc::Running::start(at, state.clone(), args.connections.limits())
                .await?,
        ),
        None => None,
    };
    println!("{RUNNING_PREFIX}http://{addr}/");
    if let Some(grpc) = &grpc {
        println!("{OTLP_GRPC_PREFIX}{}", grpc.addr());
    }
    listen::serve(listener, app(state), args.connections.limits(), shutdown)
        .await
        .map_err(|e| format!("server error: {e}"))?;
    if let Some(grpc) = grpc {
        grpc.stop().await?;
    }
    tracing::info!("shut down");
    Ok(())
}

/// The background removal of data past `--retention` (and of snapshots past their time to
/// live) and of event times past `--fine-retention`.
fn start_retention(store: &Arc<Store>, args: &ServeArgs, snapshot_ttl: Option<Duration>) {
    tokio::spawn(crate::retention::maintain(
        store.clone(),
        args.storage.retention(),
        snapshot_ttl,
        crate::retention::EVERY,
    ));
    if let Some(fine) = args.storage.fine_retention() {
        tokio::spawn(crate::retention::maintain_fine(
            store.clone(),
            fine,
            crate::retention::EVERY,
        ));
    }
}

/// The DeepFlow querier `--upstream` names, if any.
fn upstream_of(args: &ServeArgs) -> Result<Option<Arc<Upstream>>, String> {
    let Some(url) = &args.upstream else {
        return Ok(None);
    };
    let up = Upstream::with_options(url, args.upstream_options.options()?)?;
    tracing::info!(url = %up.url(), sql = %up.sql_url(), "answering from the upstream querier");
    Ok(Some(Arc::new(up)))
}

/// `--demo`: fill an empty store, and with `--demo-live` keep a demo this run made going.
async fn start_demo(store: &Arc<Store>, live: bool) -> Result<(), String> {
    let s = store.clone();
    let filled = crate::blocking::run("demo", move || fill_demo(&s)).await??;
    match filled {
        Some(now) if live => {
            tokio::spawn(demo::live::run(store.clone(), Feeder::after_window(now)));
        }
        None if live => {
            tracing::warn!("--demo-live: only a demo this run generated is continued")
        }
        _ => {}
    }
    Ok(())
}

/// Fill an empty store with the demo data and return the time it ends at; leave a non-empty
/// one alone.
fn fill_demo(store: &Store) -> Result<Option<i64>, String> {
    if !store.is_empty().map_err(|e| e.to_string())? {
        tracing::warn!("--demo: the database already holds samples; not adding demo data");
        return Ok(None);
    }
    let now = crate::store::ingest::now_micros() / 1_000_000;
    let batches = demo::generate(now);
    let stats = store
        .insert(&batches)
        .map_err(|e| format!("demo data: {e}"))?;
    tracing::info!(
        samples = stats.samples,
        stacks = stats.new_stacks,
        "demo data loaded"
    );
    Ok(Some(now))
}

/// A future resolving on Ctrl-C or SIGTERM. The handlers are installed *now*, before the URL is
/// printed, so a signal sent right after start-up is not missed.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt =
            signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle Ctrl-C: {e}"))?;
        let mut terminate =
            signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
            tracing::info!("shutdown signal received");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            tracing::info!("shutdown signal received");
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_serve_flags_with_and_without_subcommand() {
        let cli = Cli::parse_from([
            "embers-server",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--result-shape",
            "A",
        ]);
        assert!(cli.command.is_none());
        assert!(cli.serve.demo);
        assert_eq!(cli.serve.result_shape, ResultShape::A);
        let cli = Cli::parse_from(["embers-server", "serve", "--db", "/tmp/x.db"]);
        match cli.command {
            Some(Command::Serve(args)) => {
                assert_eq!(args.db.as_deref(), Some(std::path::Path::new("/tmp/x.db")));
                assert_eq!(args.listen, "127.0.0.1:8080");
                assert_eq!(args.static_dir, None);
                assert_eq!(args.result_shape, ResultShape::B);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_import() {
        let cli = Cli::parse_from([
            "embers-server",
            "import",
            "--app-service",
            "web",
            "--tag",
            "host=a",
            "--tag",
            "k8s.label.app=web",
            "a.folded",
            "-",
        ]);
        match cli.command {
            Some(Command::Import(args)) => {
                assert_eq!(args.tags, vec!["host=a", "k8s.label.app=web"]);
                assert_eq!(args.files.len(), 2);
                assert_eq!(args.event_type, None);
                assert_eq!(args.format, FormatArg(None));
            }
            other => panic!("{other:?}"),
        }
    }
}
