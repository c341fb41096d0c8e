//! The service's integration tests, one module per subject, built as one test binary: forty
//! binaries each linked the whole service (about 100 MB apiece, built twice in a CI run), which
//! made linking the slowest part of a build and filled a CI machine's disk. Each module's `//!`
//! header says what it covers; `common` holds what they share.
//!
//! One module alone: `cargo test -p embers-server --test integration -- snapshots::`.

mod common;

mod alerts;
mod arithmetic;
mod availability;
mod clickhouse;
mod clickhouse_detail;
mod clickhouse_detail_cost;
mod clickhouse_fleet;
mod clickhouse_retention;
mod connections;
mod connections_bounds;
mod connections_grpc;
mod connections_load;
mod diff_gate;
mod durability;
mod explore;
mod explore_groups;
mod explore_tags;
mod fixtures;
mod formats_go;
mod formats_input;
mod formats_jfr;
mod formats_perf;
mod functions;
mod guard;
mod guard_cli;
mod guard_snapshots;
mod hostile;
mod hostile_grpc;
mod instants;
mod limits;
mod lines;
mod mcp;
mod migration;
mod offered_tags;
mod one_binary;
mod openapi;
mod otlp;
mod otlp_python;
mod page;
mod persistence;
mod producer_detail;
mod query;
mod retention;
mod safety;
mod snapshot_errors;
mod snapshots;
mod upstream;
mod upstream_bounds;
mod upstream_fields;
mod upstream_functions;
mod upstream_input;
mod what_grew;
mod writes;
// The collector on real programs needs eBPF and the agent (scripts/test.sh runs it on its own,
// so that no other test shares the CPU with its sampled workloads).
#[cfg(feature = "profile-host")]
mod host_profile;
