//! Bringing a store made by an older server up to the current sample columns: the columns it
//! lacks ([`schema::ADDED_SAMPLE_COLUMNS`]: source lines and event times) are added to the
//! node's samples table and, on a cluster, to the Distributed table over it. Old rows read the
//! column's default (no lines, no times); nothing is rewritten (18.16 adds a column as
//! metadata). 18.16 has no `ADD COLUMN IF NOT EXISTS`, so `system.columns` is asked first:
//! a second server opening the store meanwhile at worst meets "column already exists", and
//! the next open finds nothing to do.

use serde::Deserialize;

use super::sql::ChSql;
use super::{ch_err, schema, ClickHouseStore};
use crate::store::StoreError;

#[derive(Debug, clickhouse::Row, Deserialize)]
struct Column {
    name: String,
}

impl ClickHouseStore {
    /// Adds the missing sample columns on `node`: to the local table first, then to the
    /// Distributed one (its rows are the local tables').
    pub(super) async fn add_sample_columns(
        &self,
        node: &clickhouse::Client,
    ) -> Result<(), StoreError> {
        let mut tables = vec![self.local_name()];
        if self.local_name() != "in_process" {
            tables.push("in_process");
        }
        for table in tables {
            let mut sql = ChSql::new("SELECT name FROM system.columns WHERE database = ");
            sql.bind(self.database().to_owned())
                .push(" AND table = ")
                .bind(table.to_owned());
            let have: Vec<Column> = sql.query(node).fetch_all().await.map_err(ch_err)?;
            for (name, ty, default) in schema::ADDED_SAMPLE_COLUMNS {
                if have.iter().any(|c| c.name == name) {
                    continue;
                }
                // Fixed names and types: nothing from a request is pasted here.
                let alter = format!(
                    "ALTER TABLE {} ADD COLUMN `{name}` {ty} DEFAULT {default}",
                    self.table_named(table)
                );
                node.query(&alter).execute().await.map_err(ch_err)?;
                tracing::info!(
                    table = %self.table_named(table),
                    column = name,
                    "ClickHouse store migrated: column added (older rows read its default)"
                );
            }
        }
        Ok(())
    }
}
