//! Schema version 7 for lines: `profile.frames_at` keyed by ids instead of texts. Version 5
//! stored each (function, file, line) with its function name and file path in the row *and*
//! again in its unique index, so a function's name was written twice per line it ran at
//! (+85 % bytes per sample with lines, mostly there). Now a frame at a line is
//! `(function_id, file_id, line)`: the function's id is the one the function rollup already
//! gives it (a hash of its name, named once in `profile.functions`), the file's a hash of its
//! path, named once in `profile.files` (no index on the text: the id is the lookup). Frame ids
//! are kept, so `line_stacks` and `lines_10m` are carried over untouched.

use rusqlite::{params, Transaction};

use crate::store::fn_rollup::stored_id;
use crate::store::functions::function_id;
use crate::store::StoreError;

/// The tables of version 7 (the copy of version 5's rows is [`migrate`]).
const V7_SQL: &str = "
CREATE TABLE profile.files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL
);
CREATE TABLE profile.frames_at_v7 (
  id INTEGER PRIMARY KEY,
  function_id INTEGER NOT NULL,
  file_id INTEGER NOT NULL,
  line INTEGER NOT NULL,
  UNIQUE (function_id, file_id, line)
);
";

/// The stored id of the file `path` (as [`function_id`] is a function's).
pub(crate) fn file_id(path: &str) -> i64 {
    stored_id(xxhash_rust::xxh3::xxh3_64(path.as_bytes()).max(1))
}

/// Names a function and a file by their ids (both kept if already there); what a new
/// `frames_at` row refers to.
pub(crate) fn name_ids(
    tx: &Transaction<'_>,
    function: &str,
    file: &str,
) -> Result<(i64, i64), StoreError> {
    let ids = (stored_id(function_id(function)), file_id(file));
    tx.prepare_cached("INSERT OR IGNORE INTO profile.functions (id, name) VALUES (?1, ?2)")?
        .execute(params![ids.0, function])?;
    tx.prepare_cached("INSERT OR IGNORE INTO profile.files (id, path) VALUES (?1, ?2)")?
        .execute(params![ids.1, file])?;
    Ok(ids)
}

/// Step 7 of the lines: the new tables, version 5's frames copied under their own ids, the
/// old table dropped.
pub(crate) fn migrate(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tx.execute_batch(V7_SQL)?;
    {
        let mut old = tx.prepare("SELECT id, function, file, line FROM profile.frames_at")?;
        // Two names hashing alike would make two frames one key: the later is left out
        // (its lines read as unknown) rather than failing the migration.
        let mut add = tx.prepare(
            "INSERT OR IGNORE INTO profile.frames_at_v7 (id, function_id, file_id, line) \
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut rows = old.query([])?;
        while let Some(row) = rows.next()? {
            let (id, function, file, line): (i64, String, String, i64) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            let (function_id, file_id) = name_ids(tx, &function, &file)?;
            add.execute(params![id, function_id, file_id, line])?;
        }
    }
    tx.execute_batch(
        "DROP TABLE profile.frames_at;
         ALTER TABLE profile.frames_at_v7 RENAME TO frames_at;",
    )?;
    Ok(())
}
