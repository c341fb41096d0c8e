//! Reading sample rows with their events from SQLite: the selection's rows (the covering index
//! of `samples`), each with its `sample_times` blob looked up by key.

use std::collections::HashMap;

use rusqlite::Connection;

use super::{blob, FineRow, FineRows};
use crate::store::query::QueryError;
use crate::store::sql::{common_where, Sql};
use crate::store::{SqliteStore, StoreError};
use embers_model::contract::selection::Selection;

/// The rows of `sel` of `services`, with stack texts when `texts`.
fn rows(
    conn: &Connection,
    sel: &Selection,
    services: &[String],
    texts: bool,
) -> Result<FineRows, QueryError> {
    let mut sql = Sql::new(
        "SELECT time, stack_id, profile_value, (SELECT ft.events FROM profile.sample_times AS ft \
         WHERE ft.time = in_process.time AND ft.sample_id = in_process._id) \
         FROM profile.in_process WHERE ",
    );
    common_where(&mut sql, sel);
    sql.push(" AND app_service IN (");
    for (i, name) in services.iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.bind(name.clone());
    }
    sql.push(")");
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let mut found = stmt.query(sql.params())?;
    let mut out = FineRows::default();
    while let Some(row) = found.next()? {
        let value: i64 = row.get(2)?;
        let events: Option<Vec<u8>> = row.get(3)?;
        out.rows.push(FineRow {
            time: row.get(0)?,
            stack: row.get::<_, i64>(1)? as u64,
            value: u64::try_from(value).unwrap_or(0),
            events: match events {
                Some(b) => blob::decode(&b)?,
                None => Vec::new(),
            },
        });
    }
    if texts {
        out.stacks = stack_texts(conn, out.rows.iter().map(|r| r.stack))?;
    }
    Ok(out)
}

/// The texts of the stacks `ids`.
fn stack_texts(
    conn: &Connection,
    ids: impl Iterator<Item = u64>,
) -> Result<HashMap<u64, String>, StoreError> {
    let mut text = conn.prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?;
    let mut out = HashMap::new();
    for id in ids {
        if let std::collections::hash_map::Entry::Vacant(slot) = out.entry(id) {
            slot.insert(text.query_row([id as i64], |r| r.get::<_, String>(0))?);
        }
    }
    Ok(out)
}

impl SqliteStore {
    /// The rows of `sel` with their events; `app_service: None` reads the processes
    /// ProfileTracing would find (1 to 10, else its error). The names read come back too.
    pub fn fine_rows(
        &self,
        sel: &Selection,
        texts: bool,
    ) -> Result<(Vec<String>, FineRows), QueryError> {
        self.with_reader(|conn| {
            let services = match &sel.app_service {
                Some(name) => vec![name.clone()],
                None => crate::store::query::discover(conn, sel, &mut Vec::new())?,
            };
            let rows = rows(conn, sel, &services, texts)?;
            Ok((services, rows))
        })
    }
}
