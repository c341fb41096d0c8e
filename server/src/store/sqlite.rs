//! The embedded profile store: a SQLite file attached as schema `profile`, holding
//! `profile.in_process` (see [`schema`](super::schema) for the layout).
//!
//! One writer connection (SQLite allows one writer at a time) and a small pool of reader
//! connections; the file is in WAL mode so queries run while a batch is being written. All calls
//! block: async callers run them on tokio's blocking threads (`crate::blocking::run`), and
//! bound reads with a [`budget`](super::budget).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, TryLockError};

use embers_model::contract::selection::Selection;
use rusqlite::Connection;

use super::functions::FrameCache;
use super::lines::ingest::LineIds;
use super::{
    budget, fn_rollup, ingest, query, rollup, saturate, schema, Batch, InsertStats, Outage,
    QueryError, QueryOutput, StoreError, Synchronous,
};

/// Most idle reader connections kept for reuse.
const MAX_IDLE_READERS: usize = 4;

/// How long the readiness probe waits for the write lock: longer than any of our own
/// transactions keeps it would only delay the answer.
const PROBE_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// What the service is told when its database file is no longer the one it opened.
const FILE_GONE: &str =
    "the database file was removed or replaced while the service ran (restore it and restart the service)";

/// Which file a path names: device and inode, so a file removed (its open handles still write
/// to the unlinked inode) or replaced under the service is noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId(u64, u64);

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileId(meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        {
            Some(FileId(0, u64::from(meta.is_file())))
        }
    }
}

/// The writer connection and what it remembers between transactions.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) conn: Connection,
    stacks: ingest::StackIds,
    series: rollup::SeriesIds,
    functions: fn_rollup::FnState,
    lines: LineIds,
}

/// The SQLite profile store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    /// The file opened (`None` for an in-memory path).
    file: Option<FileId>,
    writer: Mutex<Writer>,
    readers: Mutex<Vec<Connection>>,
    /// Each stack's functions and the functions' names, for ingest and reads alike.
    pub(super) frames: Mutex<FrameCache>,
}

impl SqliteStore {
    /// Open (creating if needed) the database file at `path` and migrate its schema, with
    /// `synchronous = NORMAL`.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, Synchronous::Normal)
    }

    /// [`SqliteStore::open`] with the writer's `synchronous` setting chosen.
    pub fn open_with(path: &Path, synchronous: Synchronous) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::Path(format!("cannot create {}: {e}", dir.display())))?;
        }
        let mut writer = connect(path)?;
        if synchronous == Synchronous::Full {
            writer.execute_batch("PRAGMA profile.synchronous = FULL")?;
        }
        schema::migrate(&mut writer)?;
        Ok(SqliteStore {
            path: path.to_owned(),
            file: FileId::of(path),
            writer: Mutex::new(Writer {
                conn: writer,
                stacks: ingest::StackIds::default(),
                series: rollup::SeriesIds::default(),
                functions: fn_rollup::FnState::default(),
                lines: LineIds::default(),
            }),
            readers: Mutex::new(Vec::new()),
            frames: Mutex::new(FrameCache::default()),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lock the writer connection (a poisoned lock is still usable: SQLite rolled back).
    pub(super) fn writer(&self) -> MutexGuard<'_, Writer> {
        self.writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `Err` when the file at the path is no longer the one opened: writes would go to a
    /// removed file and new readers would open another (one stat, microseconds).
    fn check_file(&self) -> Result<(), StoreError> {
        match self.file {
            Some(opened) if FileId::of(&self.path) != Some(opened) => {
                Err(StoreError::Unavailable {
                    outage: Outage::sqlite(FILE_GONE),
                    detail: format!("{} is not the file opened at start", self.path.display()),
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether the store can serve now: its file is the one opened, and the write lock can
    /// be taken and the tables read (when our own writer is busy, it has the lock: ready).
    /// The writer's connection is used: opening a new one waits for another process's lock.
    pub fn probe(&self) -> Result<(), StoreError> {
        self.check_file()?;
        let writer = match self.writer.try_lock() {
            Ok(writer) => writer,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Ok(()),
        };
        writer.conn.busy_timeout(PROBE_BUSY_TIMEOUT)?;
        let probed = writer
            .conn
            .execute_batch("BEGIN IMMEDIATE; SELECT id FROM profile.stacks LIMIT 1; ROLLBACK");
        writer.conn.busy_timeout(BUSY_TIMEOUT)?;
        probed.map_err(StoreError::from)
    }

    /// Run `f` on a reader connection from the pool, within the thread's budget (if any).
    pub(super) fn with_reader<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        self.check_file()?;
        let pooled = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => connect(&self.path)?,
        };
        budget::install(&conn);
        let out = f(&conn);
        budget::uninstall(&conn);
        let mut idle = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
        out
    }

    /// Number of stored samples.
    pub fn sample_count(&self) -> Result<u64, StoreError> {
        self.with_reader(|conn| {
            let n: i64 = conn
                .query_row("SELECT COUNT(*) FROM profile.samples", [], |r| r.get(0))
                .map_err(StoreError::from)?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    /// Number of distinct stored stacks.
    pub fn stack_count(&self) -> Result<u64, StoreError> {
        self.with_reader(|conn| {
            let n: i64 = conn
                .query_row("SELECT COUNT(*) FROM profile.stacks", [], |r| r.get(0))
                .map_err(StoreError::from)?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
    }

    /// Whether the store holds no samples.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.with_reader(|conn| {
            match conn.query_row("SELECT 1 FROM profile.samples LIMIT 1", [], |_| Ok(())) {
                Ok(()) => Ok(false),
                Err(rusqlite::Error::QueryReturnedNoRows) => Ok(true),
                Err(other) => Err(StoreError::from(other)),
            }
        })
    }

    /// Write `batches` in one transaction: all of them or, on any error, none.
    pub fn insert(&self, batches: &[Batch]) -> Result<InsertStats, StoreError> {
        self.check_file()?;
        let mut writer = self.writer();
        let Writer {
            conn,
            stacks,
            series,
            functions,
            lines,
        } = &mut *writer;
        let memory = ingest::Memory {
            stacks,
            series,
            functions,
            lines,
            frames: &self.frames,
        };
        ingest::insert(conn, memory, batches)
    }

    /// Answer a ProfileTracing query with the matching stacks, summed per distinct stack.
    pub fn query(&self, q: &Selection) -> Result<QueryOutput, QueryError> {
        self.with_reader(|conn| query::run(conn, q))
    }
}

/// How long a statement waits for another process's lock (an `import` writing) before it
/// fails busy.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Open a connection: an in-memory main schema with the database file attached as `profile`.
pub(crate) fn connect(path: &Path) -> Result<Connection, StoreError> {
    let path_str = path
        .to_str()
        .ok_or_else(|| StoreError::Path(format!("{} is not valid UTF-8", path.display())))?;
    let conn = Connection::open_in_memory()?;
    conn.execute("ATTACH DATABASE ?1 AS profile", [path_str])?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    saturate::register(&conn)?;
    // Takes effect only on a new, empty file (before WAL writes its header), where it lets
    // retention give space back; on an existing file it changes nothing.
    conn.execute_batch("PRAGMA profile.auto_vacuum = INCREMENTAL")?;
    // journal_mode returns a row, so read it rather than execute it.
    let mode: String = conn.query_row("PRAGMA profile.journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        tracing::warn!(mode, "could not switch the database to WAL mode");
    }
    conn.execute_batch(
        "PRAGMA profile.synchronous = NORMAL;
         PRAGMA profile.cache_size = -32768;
         PRAGMA temp_store = MEMORY;",
    )?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{BatchMeta, Sample, Tags};

    fn batch(stacks: &[&str]) -> Batch {
        Batch {
            meta: BatchMeta {
                app_service: "app".into(),
                language: "eBPF".into(),
                event_type: "on-cpu".into(),
                unit: "microseconds".into(),
                tags: Tags::new(),
            },
            samples: stacks
                .iter()
                .map(|s| Sample {
                    time: 1,
                    stack: (*s).to_owned(),
                    value: 1,
                    detail: None,
                })
                .collect(),
        }
    }

    #[test]
    fn stacks_are_stored_once_across_transactions_and_reopens() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        let store = SqliteStore::open(&path).expect("open");
        let first = store
            .insert(&[batch(&["a;b", "a;c", "a;b"])])
            .expect("insert");
        assert_eq!(
            first,
            InsertStats {
                samples: 3,
                new_stacks: 2
            }
        );
        let again = store.insert(&[batch(&["a;b", "a;d"])]).expect("insert");
        assert_eq!(
            again,
            InsertStats {
                samples: 2,
                new_stacks: 1
            }
        );
        // A rejected batch (empty frame) writes nothing and remembers nothing.
        assert!(store.insert(&[batch(&["a;e"]), batch(&["a;;f"])]).is_err());
        drop(store);
        let store = SqliteStore::open(&path).expect("reopen");
        let third = store.insert(&[batch(&["a;c", "a;e"])]).expect("insert");
        assert_eq!(
            third,
            InsertStats {
                samples: 2,
                new_stacks: 1
            }
        );
        assert_eq!(store.stack_count().expect("count"), 4);
        assert_eq!(store.sample_count().expect("count"), 7);
        assert!(!store.is_empty().expect("empty"));
    }

    /// A statement that would never end stops when its budget is cancelled from another
    /// thread, and the connection is usable (without a handler) afterwards.
    #[test]
    fn a_cancelled_budget_interrupts_a_running_statement() {
        let dir = tempfile::tempdir().expect("dir");
        let store = SqliteStore::open(&dir.path().join("s.db")).expect("open");
        let b = budget::Budget::new(None);
        let canceller = b.clone();
        let cancel = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            canceller.cancel();
        });
        let started = std::time::Instant::now();
        let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                       SELECT COUNT(*) FROM c";
        let out: Result<i64, StoreError> = budget::within(&b, || {
            store.with_reader(|conn| Ok(conn.query_row(endless, [], |r| r.get(0))?))
        });
        cancel.join().expect("join");
        assert!(matches!(out, Err(StoreError::Interrupted)), "{out:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Back in the pool without the handler: an unbudgeted read runs normally.
        assert_eq!(store.sample_count().expect("count"), 0);
        let spent = budget::Budget::until(Some(std::time::Instant::now()));
        let long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) \
                    SELECT COUNT(*) FROM c";
        let out: Result<i64, StoreError> = budget::within(&spent, || {
            store.with_reader(|conn| Ok(conn.query_row(long, [], |r| r.get(0))?))
        });
        assert!(matches!(out, Err(StoreError::Interrupted)), "{out:?}");
        let out: Result<i64, StoreError> =
            store.with_reader(|conn| Ok(conn.query_row(long, [], |r| r.get(0))?));
        assert_eq!(out.expect("unbudgeted"), 100_000);
    }

    #[test]
    fn synchronous_full_is_set_on_the_writer_and_new_files_vacuum_incrementally() {
        let dir = tempfile::tempdir().expect("dir");
        for (mode, expected) in [(Synchronous::Normal, 1), (Synchronous::Full, 2)] {
            let store = SqliteStore::open_with(&dir.path().join("s.db"), mode).expect("open");
            let level: i64 = store
                .writer()
                .conn
                .query_row("PRAGMA profile.synchronous", [], |r| r.get(0))
                .expect("pragma");
            assert_eq!(level, expected, "{mode:?}");
            assert!(store.reclaims_space().expect("auto_vacuum"));
        }
    }
}
