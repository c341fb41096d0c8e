//! The ClickHouse backend: the same store API over a ClickHouse server or cluster, through the
//! `clickhouse` client crate over HTTP (validation off and `?` binds, which ClickHouse 18.16
//! needs: it has neither `RowBinaryWithNamesAndTypes` schema checks nor server-side parameters).
//!
//! The store API blocks (async callers use `crate::blocking::run`), the client is async: the store owns a
//! small runtime of its own and waits on it, so it works the same from the service's blocking
//! pool, from `import` and from plain test threads.

mod compact;
mod explore;
mod fine;
mod fleet;
mod fn_ingest;
mod functions;
mod ingest;
mod instant;
mod lines;
mod migrate;
mod query;
mod raw_rows;
mod ready;
mod retention;
mod rollup_read;
mod row_binary;
pub(crate) mod schema;
mod snapshots;
pub(crate) mod sql;
mod wide;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use clickhouse::{Client, Compression};
use rustc_hash::FxHashSet;
use serde::Deserialize;

use super::functions::FrameCache;
use super::StoreError;

/// Where and how to reach ClickHouse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClickHouseConfig {
    /// HTTP URLs; the first one takes the queries and inserts. With a cluster, list one node of
    /// every shard: each gets the shard-local table (DDL without ZooKeeper goes node by node).
    pub urls: Vec<String>,
    /// The database holding the tables (created when missing).
    pub database: String,
    /// The `remote_servers` cluster to shard over; `None` for one server.
    pub cluster: Option<String>,
    /// User name (`default` when not set).
    pub user: Option<String>,
    /// Password.
    pub password: Option<String>,
}

/// Most entries each of the store's id caches keeps; past that one starts over.
const MAX_CACHED: usize = 200_000;

/// What the store remembers between calls: dictionary ids known to be written (so a repeated
/// stack or tag set is not written again) and stack texts already read. The ids are xxh3
/// hashes, evenly spread already: the cheap Fx hash suits them (looked up once per sample).
#[derive(Debug, Default)]
pub(crate) struct Caches {
    pub(crate) stacks_written: FxHashSet<u64>,
    pub(crate) tagsets_written: FxHashSet<u64>,
    pub(crate) functions_written: FxHashSet<u64>,
    pub(crate) line_stacks_written: FxHashSet<u64>,
    pub(crate) stack_text: HashMap<u64, String>,
}

impl Caches {
    /// Forget everything once any cache is full (entries stay valid: ids never change meaning).
    pub(crate) fn bound(&mut self) {
        let full = |n: usize| n > MAX_CACHED;
        if full(self.stacks_written.len()) {
            self.stacks_written.clear();
        }
        if full(self.tagsets_written.len()) {
            self.tagsets_written.clear();
        }
        if full(self.functions_written.len()) {
            self.functions_written.clear();
        }
        if full(self.line_stacks_written.len()) {
            self.line_stacks_written.clear();
        }
        if full(self.stack_text.len()) {
            self.stack_text.clear();
        }
    }
}

/// The ClickHouse store.
pub struct ClickHouseStore {
    runtime: Option<tokio::runtime::Runtime>,
    client: Client,
    /// One client per node, for what every node keeps whole (the dictionaries).
    nodes: Vec<Client>,
    config: ClickHouseConfig,
    caches: RwLock<Caches>,
    /// Whether the database and tables are known to exist (checked once, at start or, when
    /// ClickHouse was down then, on first use).
    schema_ready: AtomicBool,
    /// Held while the schema is being created, so two first uses do not both run the DDL.
    schema_lock: Mutex<()>,
    /// Each stack's functions and the functions' names.
    pub(crate) frames: Mutex<FrameCache>,
}

impl std::fmt::Debug for ClickHouseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClickHouseStore")
            .field("urls", &self.config.urls)
            .field("database", &self.config.database)
            .field("cluster", &self.config.cluster)
            .finish_non_exhaustive()
    }
}

impl Drop for ClickHouseStore {
    fn drop(&mut self) {
        // The store may be dropped inside the service's runtime, where a blocking shutdown
        // would panic.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

pub(crate) fn ch_err(e: clickhouse::error::Error) -> StoreError {
    match super::outage::clickhouse(&e) {
        Some(outage) => StoreError::Unavailable {
            outage,
            detail: e.to_string(),
        },
        None => StoreError::ClickHouse(e.to_string()),
    }
}

/// `e` with `what` (a URL) in front of its text, keeping what kind of failure it is.
fn in_context(e: StoreError, what: &str) -> StoreError {
    match e {
        StoreError::ClickHouse(text) => StoreError::ClickHouse(format!("{what}: {text}")),
        StoreError::Unavailable { outage, detail } => StoreError::Unavailable {
            outage,
            detail: format!("{what}: {detail}"),
        },
        other => other,
    }
}

fn client_for(url: &str, config: &ClickHouseConfig) -> Client {
    let mut client = Client::default()
        .with_url(url)
        .with_validation(false)
        // 18.16 answers HTTP compression only as gzip/deflate when asked; lz4 is not offered.
        .with_compression(Compression::None);
    if let Some(user) = &config.user {
        client = client.with_user(user);
    }
    if let Some(password) = &config.password {
        client = client.with_password(password);
    }
    client
}

#[derive(Debug, clickhouse::Row, Deserialize)]
struct Count {
    n: u64,
}

impl ClickHouseStore {
    /// Connect, create the database and tables where missing and check every shard has them;
    /// fails when ClickHouse cannot be reached (what `import` and `delete` want).
    pub fn open(config: &ClickHouseConfig) -> Result<ClickHouseStore, StoreError> {
        let store = ClickHouseStore::connect(config)?;
        store.ensure_schema()?;
        Ok(store)
    }

    /// The client and its runtime, with the names checked; no request is made.
    pub(crate) fn connect(config: &ClickHouseConfig) -> Result<ClickHouseStore, StoreError> {
        let first = config.urls.first().ok_or_else(|| {
            StoreError::Invalid("no ClickHouse URL given (--clickhouse-url)".into())
        })?;
        for (what, name) in [
            ("database", Some(&config.database)),
            ("cluster", config.cluster.as_ref()),
        ] {
            if let Some(name) = name.filter(|n| !schema::is_identifier(n)) {
                return Err(StoreError::Invalid(format!(
                    "ClickHouse {what} name '{name}' must be letters, digits and _, not starting with a digit"
                )));
            }
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| StoreError::ClickHouse(format!("cannot start a runtime: {e}")))?;
        Ok(ClickHouseStore {
            runtime: Some(runtime),
            client: client_for(first, config),
            nodes: config.urls.iter().map(|u| client_for(u, config)).collect(),
            config: config.clone(),
            caches: RwLock::new(Caches::default()),
            schema_ready: AtomicBool::new(false),
            schema_lock: Mutex::new(()),
            frames: Mutex::new(FrameCache::default()),
        })
    }

    /// Wait for `fut` on the store's runtime. A thread inside another runtime (an async test,
    /// the service's blocking pool) may not block on a runtime itself, so it waits from a
    /// scoped helper thread; a plain thread waits directly.
    pub(crate) fn block_on<F>(&self, fut: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let Some(rt) = &self.runtime else {
            unreachable!("the runtime lives until drop")
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return rt.block_on(fut);
        }
        std::thread::scope(|scope| match scope.spawn(|| rt.block_on(fut)).join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn nodes(&self) -> &[Client] {
        &self.nodes
    }

    /// The caches, to change them (a poisoned lock is still usable: they only ever hold valid
    /// entries).
    pub(crate) fn caches(&self) -> RwLockWriteGuard<'_, Caches> {
        self.caches.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The caches, to read them: concurrent ingest calls encode side by side.
    pub(crate) fn caches_read(&self) -> RwLockReadGuard<'_, Caches> {
        self.caches.read().unwrap_or_else(|p| p.into_inner())
    }

    /// `db.name` of one of the store's tables.
    pub(crate) fn table_named(&self, name: &str) -> String {
        format!("{}.{name}", self.config.database)
    }

    /// `db.in_process`: the table (or, on a cluster, the Distributed table) every read uses.
    pub(crate) fn table(&self) -> String {
        format!("{}.in_process", self.config.database)
    }

    /// `db.in_process_local` on a cluster, `db.in_process` on one server: the table of samples
    /// each node stores itself, which mutations and partition drops act on.
    pub(crate) fn local_table(&self) -> String {
        self.table_named(self.local_name())
    }

    /// The name of [`Self::local_table`] without its database.
    pub(crate) fn local_name(&self) -> &'static str {
        match self.config.cluster {
            Some(_) => "in_process_local",
            None => "in_process",
        }
    }

    /// The node-local table of the function rollup (`functions_rollup_local` on a cluster).
    pub(crate) fn local_functions(&self) -> &'static str {
        match self.config.cluster {
            Some(_) => "functions_rollup_local",
            None => "functions_rollup",
        }
    }

    /// The node-local table of the fleet's function sums (`functions_fleet_local` on a
    /// cluster).
    pub(crate) fn local_fleet(&self) -> &'static str {
        match self.config.cluster {
            Some(_) => "functions_fleet_local",
            None => "functions_fleet",
        }
    }

    /// The node-local tables of function sums, kept alike by retention and compaction.
    pub(crate) fn local_rollups(&self) -> [&'static str; 2] {
        [self.local_functions(), self.local_fleet()]
    }

    /// The database holding the tables.
    pub fn database(&self) -> &str {
        &self.config.database
    }

    /// Which backend this is and where, for logs.
    pub fn describe(&self) -> String {
        format!(
            "clickhouse {} database {}{}",
            self.config.urls.join(" "),
            self.config.database,
            self.config
                .cluster
                .as_ref()
                .map(|c| format!(" cluster {c}"))
                .unwrap_or_default()
        )
    }

    /// Run a count statement whose `{t}` is the table.
    async fn count(&self, sql: &str) -> Result<u64, StoreError> {
        let text = sql.replace("{t}", &self.table());
        let row: Count = self.client.query(&text).fetch_one().await.map_err(ch_err)?;
        Ok(row.n)
    }

    /// Number of stored samples.
    pub fn sample_count(&self) -> Result<u64, StoreError> {
        self.block_on(self.count("SELECT count() AS n FROM {t}"))
    }

    /// Number of distinct stored stacks.
    pub fn stack_count(&self) -> Result<u64, StoreError> {
        let sql = format!(
            "SELECT uniqExact(id) AS n FROM {}",
            self.table_named("stacks")
        );
        self.block_on(async {
            let row: Count = self.client.query(&sql).fetch_one().await.map_err(ch_err)?;
            Ok(row.n)
        })
    }

    /// Whether the store holds no samples.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.sample_count()? == 0)
    }

    /// Bytes the tables take on disk, over every node given (compressed, active parts).
    pub fn disk_bytes(&self) -> Result<u64, StoreError> {
        self.sum_over_nodes(
            "SELECT toUInt64(sum(bytes)) AS n FROM system.parts WHERE active AND database = ",
        )
    }

    /// Background merges of the database running now, over every node: benchmarks wait for
    /// none, to time reads of data at rest rather than of a store still merging its ingest.
    pub fn running_merges(&self) -> Result<u64, StoreError> {
        self.sum_over_nodes("SELECT count() AS n FROM system.merges WHERE database = ")
    }

    /// The count `head` (ending in `database = `, bound to ours) asks for, added over nodes.
    fn sum_over_nodes(&self, head: &str) -> Result<u64, StoreError> {
        let mut sql = sql::ChSql::new(head);
        sql.bind(self.config.database.clone());
        self.block_on(async {
            let mut total = 0;
            for url in &self.config.urls {
                let client = client_for(url, &self.config);
                let row: Count = sql.query(&client).fetch_one().await.map_err(ch_err)?;
                total += row.n;
            }
            Ok(total)
        })
    }

    /// Drop the database on every node (what the tests use to clean up after themselves).
    pub fn drop_database(&self) -> Result<(), StoreError> {
        let sql = format!("DROP DATABASE IF EXISTS {}", self.config.database);
        self.block_on(async {
            for url in &self.config.urls {
                let client = client_for(url, &self.config);
                client.query(&sql).execute().await.map_err(ch_err)?;
            }
            Ok(())
        })
    }
}
