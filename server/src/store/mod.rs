//! The profile store behind every endpoint, chosen at start: the embedded SQLite file
//! ([`SqliteStore`], the default) or a ClickHouse server or cluster ([`ClickHouseStore`], for
//! fleets that outgrow one machine).
//!
//! [`Store`] is an enum over the two rather than a trait object: the set of backends is closed,
//! and each method is one `match` that hands the contract's checked query to the backend and
//! returns the contract's answer type, so both backends answer the same way. All calls block:
//! async callers run them on tokio's blocking threads (`crate::blocking::run`, or the query
//! gate's `Limiter::run_blocking`), and bound SQLite reads with a [`budget`].

mod bound_sql;
pub mod budget;
pub mod clickhouse;
mod cover;
mod explore;
pub mod fine;
mod fn_rollup;
mod functions;
pub mod ingest;
mod instant;
mod lines;
pub mod outage;
pub mod query;
pub mod retention;
mod rollup;
mod saturate;
pub mod schema;
pub mod snapshots;
pub(crate) mod sql;
mod sqlite;

use std::path::Path;

use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{
    FunctionLinesAnswer, FunctionLinesQuery, FunctionSums, FunctionTimelineAnswer,
    FunctionTimelineQuery, FunctionsAnswer, FunctionsQuery, SelfTotal, ServiceRow, ServicesQuery,
    TagValuesQuery, TagsQuery, TimelineAnswer, TimelineQuery, ValueCount,
};
use embers_model::contract::selection::Selection;
use embers_model::contract::snapshot::SnapshotMeta;
use embers_model::export::pprof_lines::StackLines;
use thiserror::Error;

pub use self::clickhouse::{ClickHouseConfig, ClickHouseStore};
pub use ingest::{Batch, BatchMeta, InsertStats, Sample, Tags};
pub use outage::{Backend, Outage};
pub use query::{QueryError, QueryOutput};
pub use snapshots::NewSnapshot;
#[cfg(test)]
pub(crate) use sqlite::connect;
pub use sqlite::SqliteStore;

/// A store failure.
#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(rusqlite::Error),
    /// The read ran out of its [`budget::Budget`] (time limit or cancellation).
    #[error("stopped: the query's time ran out or its caller went away")]
    Interrupted,
    /// ClickHouse reported an error (or could not be reached).
    #[error("clickhouse: {0}")]
    ClickHouse(String),
    /// The database file's schema is not one this build can use.
    #[error("schema: {0}")]
    Schema(String),
    /// The data handed to the store is not valid (a caller's mistake, not the server's).
    #[error("{0}")]
    Invalid(String),
    /// The database path is not usable.
    #[error("database path: {0}")]
    Path(String),
    /// The store cannot serve now but may shortly (ClickHouse down or overloaded); the text
    /// is the client's error, for the log.
    #[error("{}: {detail}", outage.describe())]
    Unavailable {
        /// What clients are told.
        outage: Outage,
        /// The failure's own text.
        detail: String,
    },
}

impl StoreError {
    /// The outage this failure is, when it is the store's passing state rather than the
    /// request's fault or a bug.
    pub fn outage(&self) -> Option<Outage> {
        match self {
            StoreError::Sqlite(e) => outage::sqlite(e),
            StoreError::Unavailable { outage, .. } => Some(outage.clone()),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        if budget::is_interrupt(&e) {
            StoreError::Interrupted
        } else {
            StoreError::Sqlite(e)
        }
    }
}

/// How far a commit is on disk when ingest acknowledges it (SQLite's `synchronous`, in WAL mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Synchronous {
    /// Survives the process being killed (the WAL is written before the answer); the last
    /// commits may be lost if the machine loses power.
    #[default]
    Normal,
    /// Also survives power loss: the WAL is synced on every commit (slower ingest).
    Full,
}

/// The profile store. Cheap to share behind an `Arc`.
// One store lives per process behind an `Arc`: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Store {
    /// The embedded SQLite file.
    Sqlite(SqliteStore),
    /// A ClickHouse server or cluster.
    ClickHouse(ClickHouseStore),
}

/// Call `$method` on whichever backend `$store` is (on ClickHouse once its schema exists:
/// it may have been down at start).
macro_rules! dispatch {
    ($store:expr, $method:ident ( $($arg:expr),* )) => {
        match $store {
            Store::Sqlite(s) => s.$method($($arg),*),
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.$method($($arg),*)
            }
        }
    };
}

impl Store {
    /// Open (creating if needed) the SQLite database file at `path` and migrate its schema.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        SqliteStore::open(path).map(Store::Sqlite)
    }

    /// [`Store::open`] with the writer's `synchronous` setting chosen.
    pub fn open_with(path: &Path, synchronous: Synchronous) -> Result<Store, StoreError> {
        SqliteStore::open_with(path, synchronous).map(Store::Sqlite)
    }

    /// The SQLite store, for what only it does (giving freed pages back).
    pub fn sqlite(&self) -> Result<&SqliteStore, StoreError> {
        match self {
            Store::Sqlite(s) => Ok(s),
            Store::ClickHouse(_) => Err(StoreError::Invalid(
                "this is for the SQLite store only".to_owned(),
            )),
        }
    }

    /// One step of retention: remove samples with `time < before` — on SQLite at most `limit`
    /// per process and rollup level (call again while it removes anything), on ClickHouse all
    /// of them (dropped hour partitions, then a mutation for the hour straddling `before`).
    pub fn expire_step(&self, before: i64, limit: usize) -> Result<retention::Removed, StoreError> {
        match self {
            Store::Sqlite(s) => s.expire_step(before, limit),
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.expire(before)
            }
        }
    }

    /// Merge what is settled of the function rollup at `now` (Unix seconds), so reads of the
    /// past see one row per key: ClickHouse's partitions in several parts (see
    /// `clickhouse::compact`); SQLite's rollup is merged as it is written. How many merged.
    pub fn compact(&self, now: i64) -> Result<u64, StoreError> {
        match self {
            Store::Sqlite(_) => Ok(0),
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.compact_rollup(now)
            }
        }
    }

    /// Delete every sample of `app_service` (all languages and event types) and its rollup
    /// rows, and give the space back; `batch` samples per SQLite transaction.
    pub fn delete_app(
        &self,
        app_service: &str,
        batch: usize,
    ) -> Result<retention::Removed, StoreError> {
        match self {
            Store::Sqlite(s) => {
                let removed = s.delete_app(app_service, batch)?;
                s.reclaim(u32::MAX)?;
                Ok(removed)
            }
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.delete_app(app_service)
            }
        }
    }

    /// Connect to ClickHouse and create the schema where it is missing.
    pub fn open_clickhouse(config: &ClickHouseConfig) -> Result<Store, StoreError> {
        ClickHouseStore::open(config).map(Store::ClickHouse)
    }

    /// [`Store::open_clickhouse`] that starts even while ClickHouse cannot be reached
    /// ([`ClickHouseStore::open_lazily`]).
    pub fn open_clickhouse_lazily(config: &ClickHouseConfig) -> Result<Store, StoreError> {
        ClickHouseStore::open_lazily(config).map(Store::ClickHouse)
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Store::Sqlite(_) => Backend::Sqlite,
            Store::ClickHouse(_) => Backend::ClickHouse,
        }
    }

    /// Whether the store can serve now (`GET /readyz`): SQLite's file is still the one opened
    /// and its write lock can be taken; ClickHouse answers a read of every shard.
    pub fn probe(&self) -> Result<(), StoreError> {
        match self {
            Store::Sqlite(s) => s.probe(),
            Store::ClickHouse(c) => c.probe(),
        }
    }

    /// Which backend this is and where, for logs.
    pub fn describe(&self) -> String {
        match self {
            Store::Sqlite(s) => format!("sqlite {}", s.path().display()),
            Store::ClickHouse(c) => c.describe(),
        }
    }

    /// Number of stored samples.
    pub fn sample_count(&self) -> Result<u64, StoreError> {
        dispatch!(self, sample_count())
    }

    /// Number of distinct stored stacks.
    pub fn stack_count(&self) -> Result<u64, StoreError> {
        dispatch!(self, stack_count())
    }

    /// Whether the store holds no samples.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        dispatch!(self, is_empty())
    }

    /// Write `batches`: all of them or, on any error, none.
    pub fn insert(&self, batches: &[Batch]) -> Result<InsertStats, StoreError> {
        dispatch!(self, insert(batches))
    }

    /// Answer a ProfileTracing query with the matching stacks, summed per distinct stack.
    pub fn query(&self, q: &Selection) -> Result<QueryOutput, QueryError> {
        dispatch!(self, query(q))
    }

    /// `POST /v1/profile/services`.
    pub fn services(&self, q: &ServicesQuery) -> Result<Table<ServiceRow>, StoreError> {
        dispatch!(self, services(q))
    }

    /// `POST /v1/profile/timeline`.
    pub fn timeline(&self, q: &TimelineQuery) -> Result<TimelineAnswer, StoreError> {
        dispatch!(self, timeline(q))
    }

    /// `POST /v1/profile/functions`: the range's sums and the baseline's, finished by the
    /// contract's one step, so both backends answer alike (ClickHouse ranks a question about
    /// every process from the fleet's sums, the same answer in two steps: `fleet`).
    pub fn functions(&self, q: &FunctionsQuery) -> Result<FunctionsAnswer, StoreError> {
        if let Store::ClickHouse(c) = self {
            c.ensure_schema()?;
            if let Some(answer) = c.fleet_functions(q)? {
                return Ok(answer);
            }
        }
        let group = q.group_by.as_ref().map(|(_, d)| d);
        let sums = |sel| dispatch!(self, function_sums(sel, q.skips_total(), group));
        let now = sums(&q.selection)?;
        let base = q.baseline.as_ref().map(sums).transpose()?;
        Ok(FunctionsAnswer::finish(q, now, base))
    }

    /// One side's function sums (`sel`'s samples, every process but `Total` with
    /// `skip_total`), each function's places by process: what `functions` finishes, and what
    /// alert rules read (`alerts::eval`).
    pub fn function_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
    ) -> Result<FunctionSums, StoreError> {
        if let Store::ClickHouse(c) = self {
            c.ensure_schema()?;
        }
        dispatch!(self, function_sums(sel, skip_total, None))
    }

    /// `POST /v1/profile/function_timeline`.
    pub fn function_timeline(
        &self,
        q: &FunctionTimelineQuery,
    ) -> Result<FunctionTimelineAnswer, StoreError> {
        dispatch!(self, function_timeline(q))
    }

    /// `POST /v1/profile/function_lines`: the function's lines (from the line sums, both
    /// backends alike) beside its own self and total over every selected sample (from the
    /// function rollup), finished by the contract so an empty answer says why.
    pub fn function_lines(
        &self,
        q: &FunctionLinesQuery,
    ) -> Result<FunctionLinesAnswer, StoreError> {
        let rows = dispatch!(self, line_sums(q))?;
        let sums = self.function_sums(&q.selection, q.selection.app_service.is_none())?;
        let mut whole = SelfTotal::default();
        for (_, v) in sums.functions.get(&q.function).into_iter().flatten() {
            whole.self_value = whole.self_value.saturating_add(v.self_value);
            whole.total = whole.total.saturating_add(v.total);
        }
        Ok(FunctionLinesAnswer::finish(&q.function, rows, whole))
    }

    /// The stacks of `sel` (one process) with their source lines, for the pprof export;
    /// `None` when no selected sample has lines.
    pub fn line_samples(&self, sel: &Selection) -> Result<Option<Vec<StackLines>>, StoreError> {
        dispatch!(self, line_samples(sel))
    }

    /// `POST /v1/profile/tags`.
    pub fn tags(&self, q: &TagsQuery) -> Result<Table<ValueCount>, StoreError> {
        dispatch!(self, tags(q))
    }

    /// `POST /v1/profile/tag_values`.
    pub fn tag_values(&self, q: &TagValuesQuery) -> Result<Table<ValueCount>, StoreError> {
        dispatch!(self, tag_values(q))
    }

    /// Store a snapshot under a new random id.
    pub fn save_snapshot(&self, new: &NewSnapshot<'_>) -> Result<SnapshotMeta, StoreError> {
        dispatch!(self, save_snapshot(new))
    }

    /// Every snapshot, newest first.
    pub fn snapshots(&self) -> Result<Vec<SnapshotMeta>, StoreError> {
        dispatch!(self, snapshots())
    }

    /// Delete a snapshot; its metadata, or `None` when there is no such snapshot.
    pub fn delete_snapshot(&self, id: &str) -> Result<Option<SnapshotMeta>, StoreError> {
        dispatch!(self, delete_snapshot(id))
    }

    /// Read a snapshot: `head` gets its metadata and says whether to go on, then `chunk` gets
    /// the stored answer piece by piece until it returns false.
    pub fn read_snapshot(
        &self,
        id: &str,
        head: impl FnOnce(Option<SnapshotMeta>) -> bool,
        chunk: impl FnMut(&[u8]) -> bool,
    ) -> Result<(), StoreError> {
        dispatch!(self, read_snapshot(id, head, chunk))
    }
}
