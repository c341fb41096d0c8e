//! Snapshots on ClickHouse: saved answers in `snapshots`, kept whole on every node (they are
//! few and read by id), deleted by a tombstone in `snapshot_deletions` — which every read
//! honours at once — and an `ALTER TABLE ... DELETE` mutation that frees the space in the
//! background (ClickHouse has no transactional delete). A stored answer is read whole and handed
//! on in chunks: at most the snapshot limit (`--max-snapshot-bytes`) in memory.

use clickhouse::Row;
use serde::Deserialize;

use super::row_binary::{send, RowBinary};
use super::sql::ChSql;
use super::{ch_err, ClickHouseStore};
use crate::store::ingest::now_micros;
use crate::store::snapshots::new_id;
use crate::store::{NewSnapshot, StoreError};
use embers_model::contract::snapshot::SnapshotMeta;

/// Bytes handed on per chunk.
const CHUNK_BYTES: usize = 256 << 10;

/// The DDL of the two tables (every node); `db` is a checked identifier.
pub(crate) fn ddl(db: &str) -> [String; 2] {
    [
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.snapshots (`id` String, `name` String, \
             `request` String, `size` UInt64, `saved_at` Int64, `seq` Int64, `response` String) \
             ENGINE = MergeTree() ORDER BY id"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.snapshot_deletions (`id` String) \
             ENGINE = MergeTree() ORDER BY id"
        ),
    ]
}

#[derive(Debug, Row, Deserialize)]
struct Meta {
    id: String,
    name: String,
    request: String,
    size: u64,
    saved_at: i64,
}

#[derive(Debug, Row, Deserialize)]
struct Response {
    response: String,
}

fn meta(row: Meta) -> Result<SnapshotMeta, StoreError> {
    let request = serde_json::from_str(&row.request).map_err(|e| {
        StoreError::Schema(format!(
            "snapshot {}: the stored request is unreadable: {e}",
            row.id
        ))
    })?;
    Ok(SnapshotMeta {
        id: row.id,
        name: row.name,
        request,
        size: row.size,
        saved_at: row.saved_at,
    })
}

impl ClickHouseStore {
    /// `SELECT <meta> FROM snapshots WHERE <not deleted>` and `extra`.
    fn meta_sql(&self, extra: &str) -> ChSql {
        let mut sql = ChSql::new("SELECT id, name, request, size, saved_at FROM ");
        sql.push(&self.table_named("snapshots"))
            .push(" WHERE id NOT IN (SELECT id FROM ")
            .push(&self.table_named("snapshot_deletions"))
            .push(")")
            .push(extra);
        sql
    }

    fn lookup(&self, id: &str) -> Result<Option<SnapshotMeta>, StoreError> {
        let mut sql = self.meta_sql(" AND id = ");
        sql.bind(id.to_owned()).push(" LIMIT 1");
        let rows: Vec<Meta> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        rows.into_iter().next().map(meta).transpose()
    }

    /// Store a snapshot under a new random id (on every node).
    pub fn save_snapshot(&self, new: &NewSnapshot<'_>) -> Result<SnapshotMeta, StoreError> {
        let request = serde_json::to_string(new.request)
            .map_err(|e| StoreError::Invalid(format!("the request cannot be stored: {e}")))?;
        let response = std::str::from_utf8(new.response)
            .map_err(|e| StoreError::Invalid(format!("the answer is not UTF-8: {e}")))?;
        // 128 random bits: a drawn id that exists is not worth a round trip to rule out.
        let id = new_id()?;
        let size = new.response.len() as u64;
        let mut row = RowBinary::default();
        row.string(&id);
        row.string(new.name);
        row.string(&request);
        row.u64(size);
        row.i64(new.saved_at);
        row.i64(now_micros());
        row.string(response);
        let sql = format!(
            "INSERT INTO {} (id, name, request, size, saved_at, seq, response) FORMAT RowBinary",
            self.table_named("snapshots")
        );
        self.block_on(async {
            for node in self.nodes() {
                send(node, &sql, row.buf.clone()).await?;
            }
            Ok::<_, StoreError>(())
        })?;
        Ok(SnapshotMeta {
            id,
            name: new.name.to_owned(),
            request: new.request.clone(),
            size,
            saved_at: new.saved_at,
        })
    }

    /// Every snapshot, newest first.
    pub fn snapshots(&self) -> Result<Vec<SnapshotMeta>, StoreError> {
        let sql = self.meta_sql(" ORDER BY saved_at DESC, seq DESC");
        let rows: Vec<Meta> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        rows.into_iter().map(meta).collect()
    }

    /// Delete a snapshot; its metadata, or `None` when there is no such snapshot.
    pub fn delete_snapshot(&self, id: &str) -> Result<Option<SnapshotMeta>, StoreError> {
        let Some(found) = self.lookup(id)? else {
            return Ok(None);
        };
        let mut tombstone = RowBinary::default();
        tombstone.string(id);
        let insert = format!(
            "INSERT INTO {} (id) FORMAT RowBinary",
            self.table_named("snapshot_deletions")
        );
        let mut mutation = ChSql::new("ALTER TABLE ");
        mutation
            .push(&self.table_named("snapshots"))
            .push(" DELETE WHERE id = ")
            .bind(id.to_owned());
        self.block_on(async {
            for node in self.nodes() {
                send(node, &insert, tombstone.buf.clone()).await?;
                mutation.query(node).execute().await.map_err(ch_err)?;
            }
            Ok::<_, StoreError>(())
        })?;
        Ok(Some(found))
    }

    /// Read a snapshot: `head` gets its metadata and says whether to go on, then `chunk` gets
    /// the stored answer piece by piece until it returns false.
    pub fn read_snapshot(
        &self,
        id: &str,
        head: impl FnOnce(Option<SnapshotMeta>) -> bool,
        mut chunk: impl FnMut(&[u8]) -> bool,
    ) -> Result<(), StoreError> {
        let found = self.lookup(id)?;
        let exists = found.is_some();
        if !head(found) || !exists {
            return Ok(());
        }
        let mut sql = ChSql::new("SELECT response FROM ");
        sql.push(&self.table_named("snapshots"))
            .push(" WHERE id = ")
            .bind(id.to_owned())
            .push(" LIMIT 1");
        let rows: Vec<Response> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        let Some(stored) = rows.into_iter().next() else {
            // Deleted between the two reads: the answer ends short, as the caller expects of
            // a vanished row.
            return Err(StoreError::Invalid(format!(
                "snapshot {id} was deleted while read"
            )));
        };
        for piece in stored.response.as_bytes().chunks(CHUNK_BYTES) {
            if !chunk(piece) {
                break;
            }
        }
        Ok(())
    }
}
