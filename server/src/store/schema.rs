//! The on-disk schema and its migrations (versioned with `PRAGMA profile.user_version`).
//!
//! The database file is attached as schema `profile`, so SQL says `profile.in_process` as
//! DeepFlow's does. Storage is normalised for size and speed:
//!
//! - `profile.stacks` holds each distinct `;`-joined stack once;
//! - `profile.tagsets` holds each distinct set of per-batch tags (host, pod, ..., unit) once, and
//!   `profile.tagset_tags` its open-family tags (`k8s.label.app`, `cloud.tag.team`, ...) as
//!   `(tagset_id, name, value)` rows;
//! - `profile.samples` holds one row per sample: time, app_service, language, event type, value and
//!   the ids of its stack and tagset, indexed on the query access path
//!   `(app_service, profile_language_type, profile_event_type, time)` and covering the columns the
//!   query reads.
//!
//! `profile.in_process` is a **view** putting the three back together into DeepFlow's flat row
//! (including `profile_location_str`), so ad-hoc SQL and the service's own queries read the
//! familiar table. Stack and tag columns are scalar subqueries on primary keys, which SQLite
//! evaluates only when a query reads them (a `LEFT JOIN` would be walked for every row even when
//! unused, e.g. under `GROUP BY`). Absent tags are stored as `''` (ClickHouse's default), so `pod != 'x'` holds for
//! samples without a pod.
//!
//! Version 2 adds the rollup the explore endpoints read (see [`super::rollup`]): `profile.series`,
//! `profile.rollup_1s` ... `profile.rollup_1h` and the view `profile.in_process_metrics`, filled
//! from the samples already stored when an existing file is migrated.
//!
//! Version 3 adds `profile.snapshots`, saved answers kept until deleted (see
//! [`super::snapshots`]).
//!
//! Version 4 adds the function rollup the functions endpoint reads (see [`super::fn_rollup`]):
//! `profile.functions`, `profile.function_series`, `profile.functions_1h` and
//! `profile.functions_10m`, filled from the samples already stored when an existing file is
//! migrated.
//!
//! Version 5 adds source lines (see [`super::lines`]): `profile.frames_at`,
//! `profile.line_stacks`, `samples.line_stack_id` and `profile.lines_10m`; old samples have none.
//!
//! Version 6 adds event times (see [`super::fine`]): `profile.sample_times` and the trigger that
//! drops a sample's times with it; old samples have none.
//!
//! Version 7 keys `profile.frames_at` by the ids of its function and file (`profile.files`),
//! the rows carried over under their own ids (see [`super::lines`]), and indexes the one-second
//! rollup by series, so an in-use timeline reads each series' range once (see
//! [`super::instant`]).

use rusqlite::Connection;

use super::{fine, fn_rollup, instant, lines, rollup, saturate, snapshots, StoreError};
use embers_model::contract::fields::{self, FieldKind};

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = 7;

/// Bring the attached `profile` schema up to [`CURRENT_VERSION`], one transaction per step.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, CURRENT_VERSION)
}

/// Bring the schema up to `target` (at most [`CURRENT_VERSION`]); tests use it to build files
/// of an older version.
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<(), StoreError> {
    // The rollup's backfill sums with it.
    saturate::register(conn)?;
    let version: i64 = conn.query_row("PRAGMA profile.user_version", [], |row| row.get(0))?;
    if version > CURRENT_VERSION {
        return Err(StoreError::Schema(format!(
            "the database has schema version {version}, newer than this build understands \
             ({CURRENT_VERSION}); use a newer embers-server or another --db file"
        )));
    }
    for step in version + 1..=target.min(CURRENT_VERSION) {
        let tx = conn.transaction()?;
        match step {
            1 => tx.execute_batch(&v1_sql())?,
            2 => {
                tx.execute_batch(&rollup::v2_sql())?;
                rollup::backfill(&tx)?;
            }
            3 => tx.execute_batch(snapshots::V3_SQL)?,
            4 => {
                tx.execute_batch(&fn_rollup::v4_sql())?;
                fn_rollup::backfill(&tx)?;
            }
            5 => tx.execute_batch(lines::V5_SQL)?,
            6 => tx.execute_batch(fine::V6_SQL)?,
            7 => {
                lines::v7::migrate(&tx)?;
                tx.execute_batch(instant::V7_SQL)?;
            }
            other => {
                return Err(StoreError::Schema(format!(
                    "no migration to version {other}"
                )))
            }
        }
        // PRAGMA does not take bound parameters; `step` is an integer we produced.
        tx.execute_batch(&format!("PRAGMA profile.user_version = {step}"))?;
        tx.commit()?;
        tracing::info!(version = step, "migrated profile schema");
    }
    Ok(())
}

/// The DDL of schema version 1.
fn v1_sql() -> String {
    let tag_columns: Vec<String> = fields::settable_columns()
        .map(|def| match def.kind {
            FieldKind::Text => format!("  {} TEXT NOT NULL DEFAULT ''", def.name),
            FieldKind::Int => format!("  {} INTEGER NOT NULL DEFAULT 0", def.name),
        })
        .collect();
    // Scalar subqueries rather than joins: SQLite evaluates them only for the columns a query
    // actually reads, so scanning the view costs no more than scanning `samples`.
    let view_tag_columns: Vec<String> = fields::settable_columns()
        .map(|def| {
            format!(
                "(SELECT t.{} FROM tagsets AS t WHERE t.id = s.tagset_id) AS {}",
                def.name, def.name
            )
        })
        .collect();
    format!(
        "CREATE TABLE profile.stacks (
  id INTEGER PRIMARY KEY,
  location_str TEXT NOT NULL UNIQUE
);
CREATE TABLE profile.tagsets (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
{tags}
);
CREATE TABLE profile.tagset_tags (
  tagset_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (tagset_id, name)
) WITHOUT ROWID;
CREATE INDEX profile.tagset_tags_by_name ON tagset_tags (name, value);
CREATE TABLE profile.samples (
  id INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  app_service TEXT NOT NULL,
  profile_language_type TEXT NOT NULL,
  profile_event_type TEXT NOT NULL,
  stack_id INTEGER NOT NULL,
  profile_value INTEGER NOT NULL,
  tagset_id INTEGER NOT NULL,
  profile_create_timestamp INTEGER NOT NULL,
  profile_in_timestamp INTEGER NOT NULL
);
CREATE INDEX profile.samples_by_query ON samples (
  app_service, profile_language_type, profile_event_type, time, tagset_id, stack_id, profile_value
);
CREATE VIEW profile.in_process AS
SELECT
  s.id AS _id,
  s.time AS time,
  s.app_service AS app_service,
  (SELECT st.location_str FROM stacks AS st WHERE st.id = s.stack_id) AS profile_location_str,
  s.profile_value AS profile_value,
  s.profile_event_type AS profile_event_type,
  s.profile_language_type AS profile_language_type,
  s.profile_create_timestamp AS profile_create_timestamp,
  s.profile_in_timestamp AS profile_in_timestamp,
  s.stack_id AS stack_id,
  s.tagset_id AS tagset_id,
  {view_tags}
FROM samples AS s;
",
        tags = tag_columns.join(",\n"),
        view_tags = view_tag_columns.join(",\n  "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attached() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch("ATTACH DATABASE ':memory:' AS profile")
            .expect("attach");
        conn
    }

    #[test]
    fn migrates_once_and_is_idempotent() {
        let mut conn = attached();
        migrate(&mut conn).expect("first");
        migrate(&mut conn).expect("second");
        let v: i64 = conn
            .query_row("PRAGMA profile.user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, CURRENT_VERSION);
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM profile.in_process", [], |r| r.get(0))
            .expect("view readable");
        assert_eq!(n, 0);
    }

    #[test]
    fn refuses_a_newer_schema() {
        let mut conn = attached();
        conn.execute_batch("PRAGMA profile.user_version = 99")
            .expect("set");
        assert!(matches!(migrate(&mut conn), Err(StoreError::Schema(_))));
    }

    #[test]
    fn view_exposes_every_field() {
        let mut conn = attached();
        migrate(&mut conn).expect("migrate");
        for def in fields::FIELDS {
            let sql = format!("SELECT {} FROM profile.in_process LIMIT 1", def.name);
            conn.prepare(&sql)
                .unwrap_or_else(|e| panic!("{}: {e}", def.name));
        }
    }
}
