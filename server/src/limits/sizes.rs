//! Request body size limits (`--max-ingest-bytes`, `--max-query-bytes`,
//! `--max-snapshot-bytes`) and the cap of an ingest request's memory budget
//! (`--max-request-memory`), with their defaults.

/// Default body limit of `POST /v1/profile/ingest` (64 MiB).
pub const DEFAULT_INGEST_LIMIT: usize = 64 * 1024 * 1024;
/// Default body limit of `POST /v1/profile/ProfileTracing` and the explore endpoints (256 KiB).
pub const DEFAULT_QUERY_LIMIT: usize = 256 * 1024;
/// Default size limit of a saved snapshot's answer (64 MiB).
pub const DEFAULT_SNAPSHOT_LIMIT: usize = 64 * 1024 * 1024;
/// Default cap of one ingest request's memory budget (1 GiB): what the largest body
/// (`--max-ingest-bytes`) may expand to while it is read; a small body's budget is far less
/// (see [`embers_model::budget`]).
pub const DEFAULT_REQUEST_MEMORY: usize = 1024 * 1024 * 1024;

/// Request body size limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For ingest requests.
    pub ingest: usize,
    /// For query requests.
    pub query: usize,
    /// For the answer a snapshot saves (its body may be
    /// [`crate::http::snapshots::BODY_HEADROOM`] more).
    pub snapshot: usize,
    /// The cap of an ingest request's memory budget (`--max-request-memory`).
    pub request_memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingest: DEFAULT_INGEST_LIMIT,
            query: DEFAULT_QUERY_LIMIT,
            snapshot: DEFAULT_SNAPSHOT_LIMIT,
            request_memory: DEFAULT_REQUEST_MEMORY,
        }
    }
}
