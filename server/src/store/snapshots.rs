//! Snapshots: ProfileTracing answers saved byte for byte in `profile.snapshots` (schema
//! version 3), kept until deleted — retention of samples never touches this table — and read
//! back as a stream through SQLite's incremental blob I/O, so a 64 MiB answer is never held in
//! memory twice.
//!
//! Ids are 16 random bytes from the operating system in base32 (see
//! [`embers_model::contract::snapshot::is_valid_id`]): a permalink cannot be guessed from
//! another one.

use std::io::Read;

use embers_model::contract::request::ProfileRequest;
use embers_model::contract::snapshot::SnapshotMeta;
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::{SqliteStore, StoreError};

/// The DDL of schema version 3. `response` is the last column so listing reads none of its
/// overflow pages; `seq` is the rowid the blob is opened by, and orders equal `saved_at`s.
pub(super) const V3_SQL: &str = "CREATE TABLE profile.snapshots (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  request TEXT NOT NULL,
  size INTEGER NOT NULL,
  saved_at INTEGER NOT NULL,
  response BLOB NOT NULL
);";

/// Bytes read from the blob per chunk handed on.
const CHUNK_BYTES: usize = 256 << 10;

/// How often a fresh id is drawn when the drawn one exists (128 random bits: never, in practice).
const ID_ATTEMPTS: usize = 3;

const META_COLUMNS: &str = "id, name, request, size, saved_at";

/// A snapshot to store.
#[derive(Debug, Clone, Copy)]
pub struct NewSnapshot<'a> {
    /// Its readable name.
    pub name: &'a str,
    /// What the answer answers.
    pub request: &'a ProfileRequest,
    /// The answer, stored as given.
    pub response: &'a [u8],
    /// Unix seconds.
    pub saved_at: i64,
}

impl SqliteStore {
    /// Store a snapshot under a new random id, in one statement (all or nothing).
    pub fn save_snapshot(&self, new: &NewSnapshot<'_>) -> Result<SnapshotMeta, StoreError> {
        let request = serde_json::to_string(new.request)
            .map_err(|e| StoreError::Invalid(format!("the request cannot be stored: {e}")))?;
        let size = new.response.len() as u64;
        let writer = self.writer();
        for _ in 0..ID_ATTEMPTS {
            let id = new_id()?;
            let inserted = writer.conn.execute(
                "INSERT INTO profile.snapshots (id, name, request, size, saved_at, response)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO NOTHING",
                params![id, new.name, request, size, new.saved_at, new.response],
            )?;
            if inserted == 1 {
                return Ok(SnapshotMeta {
                    id,
                    name: new.name.to_owned(),
                    request: new.request.clone(),
                    size,
                    saved_at: new.saved_at,
                });
            }
        }
        Err(StoreError::Invalid(
            "could not draw an unused snapshot id".into(),
        ))
    }

    /// Every snapshot, newest first.
    pub fn snapshots(&self) -> Result<Vec<SnapshotMeta>, StoreError> {
        self.with_reader(|conn| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {META_COLUMNS} FROM profile.snapshots ORDER BY saved_at DESC, seq DESC"
            ))?;
            let rows = stmt.query_map([], |row| Ok(meta_at(row, 0)))?;
            let mut out = Vec::new();
            for row in rows {
                out.push(row??);
            }
            Ok(out)
        })
    }

    /// Delete a snapshot; its metadata, or `None` when there is no such snapshot.
    pub fn delete_snapshot(&self, id: &str) -> Result<Option<SnapshotMeta>, StoreError> {
        let writer = self.writer();
        let meta = writer
            .conn
            .query_row(
                &format!("DELETE FROM profile.snapshots WHERE id = ?1 RETURNING {META_COLUMNS}"),
                [id],
                |row| Ok(meta_at(row, 0)),
            )
            .optional()?;
        meta.transpose()
    }

    /// Read a snapshot: `head` gets its metadata (`None`: no such id) and says whether to go
    /// on; then `chunk` gets the stored answer piece by piece until it returns false. Everything
    /// is read from one read transaction, so a concurrent delete does not cut the answer short.
    pub fn read_snapshot(
        &self,
        id: &str,
        head: impl FnOnce(Option<SnapshotMeta>) -> bool,
        mut chunk: impl FnMut(&[u8]) -> bool,
    ) -> Result<(), StoreError> {
        self.with_reader(|conn| {
            conn.execute_batch("BEGIN")?;
            let out = stream(conn, id, head, &mut chunk);
            // Only a read: ending it cannot lose anything, and the connection goes back to
            // the pool clean.
            let end = conn.execute_batch("COMMIT");
            out.and(end.map_err(StoreError::from))
        })
    }
}

fn stream(
    conn: &Connection,
    id: &str,
    head: impl FnOnce(Option<SnapshotMeta>) -> bool,
    chunk: &mut impl FnMut(&[u8]) -> bool,
) -> Result<(), StoreError> {
    let found = conn
        .query_row(
            &format!("SELECT seq, {META_COLUMNS} FROM profile.snapshots WHERE id = ?1"),
            [id],
            |row| Ok((row.get::<_, i64>(0)?, meta_at(row, 1))),
        )
        .optional()?;
    let Some((seq, meta)) = found else {
        head(None);
        return Ok(());
    };
    if !head(Some(meta?)) {
        return Ok(());
    }
    let mut blob = conn.blob_open("profile", "snapshots", "response", seq, true)?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        let n = blob
            .read(&mut buf)
            .map_err(|e| StoreError::Invalid(format!("reading snapshot {id}: {e}")))?;
        if n == 0 || !chunk(&buf[..n]) {
            return Ok(());
        }
    }
}

/// A snapshot's metadata from [`META_COLUMNS`] starting at column `first`. Wrapped by callers
/// in SQLite's own result: the error here may also be a stored request this build cannot read.
fn meta_at(row: &Row<'_>, first: usize) -> Result<SnapshotMeta, StoreError> {
    let id: String = row.get(first)?;
    let request: String = row.get(first + 2)?;
    let request = serde_json::from_str(&request).map_err(|e| {
        StoreError::Schema(format!(
            "snapshot {id}: the stored request is unreadable: {e}"
        ))
    })?;
    let size: i64 = row.get(first + 3)?;
    Ok(SnapshotMeta {
        name: row.get(first + 1)?,
        request,
        size: u64::try_from(size).unwrap_or(0),
        saved_at: row.get(first + 4)?,
        id,
    })
}

/// A fresh id: 16 bytes from the operating system's generator, base32 without padding.
pub(crate) fn new_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError::Invalid(format!("no random bytes for a snapshot id: {e}")))?;
    Ok(data_encoding::BASE32_NOPAD.encode(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::snapshot::is_valid_id;

    fn request(app: &str) -> ProfileRequest {
        ProfileRequest {
            app_service: Some(app.into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 10,
            time_end: 20,
            ..ProfileRequest::default()
        }
    }

    fn read_all(store: &SqliteStore, id: &str) -> Option<(SnapshotMeta, Vec<u8>)> {
        let mut meta = None;
        let mut bytes = Vec::new();
        store
            .read_snapshot(
                id,
                |m| {
                    meta = m;
                    meta.is_some()
                },
                |c| {
                    bytes.extend_from_slice(c);
                    true
                },
            )
            .expect("read");
        meta.map(|m| (m, bytes))
    }

    #[test]
    fn saves_lists_reads_and_deletes() {
        let dir = tempfile::tempdir().expect("dir");
        let store = SqliteStore::open(&dir.path().join("s.db")).expect("open");
        // Bigger than a chunk, so the stream takes several.
        let big: Vec<u8> = (0..CHUNK_BYTES * 2 + 7).map(|i| (i % 251) as u8).collect();
        let req = request("a");
        let new = |response, saved_at| NewSnapshot {
            name: "n",
            request: &req,
            response,
            saved_at,
        };
        let first = store.save_snapshot(&new(&big, 100)).expect("save");
        let second = store.save_snapshot(&new(b"{}", 100)).expect("save");
        assert!(is_valid_id(&first.id), "{}", first.id);
        assert_ne!(first.id, second.id);
        assert_eq!(first.size, big.len() as u64);
        let listed = store.snapshots().expect("list");
        assert_eq!(listed, vec![second.clone(), first.clone()], "newest first");
        let (meta, bytes) = read_all(&store, &first.id).expect("found");
        assert_eq!((meta, bytes), (first.clone(), big));
        assert_eq!(read_all(&store, "AAAAAAAAAAAAAAAAAAAAAAAAAA"), None);
        assert_eq!(
            store.delete_snapshot(&first.id).expect("delete"),
            Some(first.clone())
        );
        assert_eq!(store.delete_snapshot(&first.id).expect("delete"), None);
        assert_eq!(read_all(&store, &first.id), None);
        assert_eq!(store.snapshots().expect("list"), vec![second]);
    }
}
