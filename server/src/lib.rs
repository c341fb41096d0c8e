//! Embers service: stores eBPF profiles (in SQLite, or in ClickHouse with `--clickhouse-url`)
//! and answers DeepFlow's ProfileTracing interface and the explore endpoints from them (or from
//! a DeepFlow querier with `--upstream`), takes other profilers' formats (pprof, JFR, OTLP,
//! Pyroscope, push), offers the MCP tools, and serves the viewer on the same origin.
//!
//! [`app`] ([`router`]) builds the axum router from an [`AppState`] ([`http::state`]);
//! `main.rs` only parses arguments ([`cli`]), sets up logging and runs the command. This file
//! only names the modules and re-exports what the binaries and tests use.

pub mod alerts;
pub mod api_types;
pub mod blocking;
pub mod cli;
pub mod demo;
pub mod diagnostics;
pub mod error;
pub mod formats;
pub mod host_profile;
pub mod http;
pub mod input;
pub mod limits;
pub mod listen;
pub mod mcp;
pub mod openapi;
pub mod retention;
pub mod router;
pub mod store;
pub mod store_args;
pub mod tree;

pub use error::Error;
pub use http::state::AppState;
pub use limits::sizes::{
    Limits, DEFAULT_INGEST_LIMIT, DEFAULT_QUERY_LIMIT, DEFAULT_REQUEST_MEMORY,
    DEFAULT_SNAPSHOT_LIMIT,
};
pub use router::{app, internal_app, route_list};
