//! ProfileTracing on ClickHouse: the same two steps as the SQLite store (find the app_services
//! when none is named, then sum values per distinct stack), the same errors and limits. Values
//! are summed per `stack_id`; the texts of the stacks come from the `stacks` dictionary (those
//! read before from the store's cache).

use std::collections::HashMap;
use std::time::Instant;

use clickhouse::Row;
use serde::Deserialize;

use super::instant::latest_only;
use super::sql::{common_where, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::query::MAX_AUTO_APP_SERVICES;
use crate::store::{QueryError, QueryOutput, StoreError};
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::selection::Selection;

/// Stack ids per lookup statement (each id is about 21 characters of SQL).
const IDS_PER_LOOKUP: usize = 20_000;

#[derive(Debug, Row, Deserialize)]
struct StackSum {
    id: u64,
    total: i64,
}

#[derive(Debug, Row, Deserialize)]
struct StackText {
    id: u64,
    text: String,
}

#[derive(Debug, Row, Deserialize)]
struct Name {
    name: String,
}

impl ClickHouseStore {
    /// Answer a ProfileTracing query with the matching stacks, summed per distinct stack.
    pub fn query(&self, q: &Selection) -> Result<QueryOutput, QueryError> {
        let started = Instant::now();
        let mut statements = Vec::new();
        let services = match &q.app_service {
            Some(name) => vec![name.clone()],
            None => self.discover(q, &mut statements)?,
        };
        let from_where = |sql: &mut ChSql| {
            sql.push(" FROM ").push(&self.table()).push(" WHERE ");
            common_where(sql, q, &self.table_named("tagsets"));
            sql.push(" AND app_service").in_list(&services);
        };
        let mut sql = ChSql::new("SELECT stack_id AS id, sum(profile_value) AS total");
        from_where(&mut sql);
        // An instant is each process's latest upload, not the range's sum.
        latest_only(&mut sql, q, None, from_where);
        sql.push(" GROUP BY stack_id");
        let sums: Vec<StackSum> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        statements.push(sql.text);
        let texts = self.stack_texts(sums.iter().map(|s| s.id), &mut statements)?;
        let mut stacks = Vec::with_capacity(sums.len());
        for row in sums {
            let total = u64::try_from(row.total).map_err(|_| {
                StoreError::Invalid(format!("negative total {} for a stored stack", row.total))
            })?;
            let text = texts.get(&row.id).ok_or_else(|| {
                StoreError::ClickHouse(format!("stack {} is missing from the stacks table", row.id))
            })?;
            stacks.push((text.clone(), total));
        }
        Ok(QueryOutput {
            root: services.join(", "),
            stacks,
            statements,
            elapsed: started.elapsed(),
        })
    }

    /// The texts of `ids`: from the cache, the rest read from `stacks` (and then cached).
    pub(super) fn stack_texts(
        &self,
        ids: impl Iterator<Item = u64>,
        statements: &mut Vec<String>,
    ) -> Result<HashMap<u64, String>, StoreError> {
        let mut out = HashMap::new();
        let mut missing = Vec::new();
        {
            let caches = self.caches_read();
            for id in ids {
                match caches.stack_text.get(&id) {
                    Some(text) => {
                        out.insert(id, text.clone());
                    }
                    None => missing.push(id),
                }
            }
        }
        for ids in missing.chunks(IDS_PER_LOOKUP) {
            let mut sql = ChSql::new("SELECT id, location_str AS text FROM ");
            sql.push(&self.table_named("stacks")).push(" WHERE id IN (");
            // Integers the store produced: formatted, not request data.
            let list: Vec<String> = ids.iter().map(u64::to_string).collect();
            sql.push(&list.join(",")).push(") LIMIT 1 BY id");
            let rows: Vec<StackText> = self
                .block_on(
                    sql.query(self.client())
                        .with_setting("max_query_size", "2000000")
                        .fetch_all(),
                )
                .map_err(ch_err)?;
            statements.push(format!(
                "SELECT id, location_str FROM stacks WHERE id IN (... {} ids)",
                ids.len()
            ));
            let mut caches = self.caches();
            for row in rows {
                caches.stack_text.insert(row.id, row.text.clone());
                out.insert(row.id, row.text);
            }
            caches.bound();
        }
        Ok(out)
    }

    /// Find the app_services (other than `Total`) matching a query without one: 1 to 10, sorted.
    pub(super) fn discover(
        &self,
        q: &Selection,
        statements: &mut Vec<String>,
    ) -> Result<Vec<String>, QueryError> {
        // GROUP BY, not DISTINCT: 18.16 can answer `SELECT DISTINCT ... ORDER BY` with a name
        // twice when its rows come from several parts (seen with one app in two batches).
        let mut sql = ChSql::new("SELECT app_service AS name FROM ");
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, q, &self.table_named("tagsets"));
        sql.push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned());
        sql.push(" GROUP BY app_service ORDER BY app_service LIMIT ")
            .bind(i64::try_from(MAX_AUTO_APP_SERVICES + 1).unwrap_or(11));
        let names: Vec<Name> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        statements.push(sql.text);
        let names: Vec<String> = names.into_iter().map(|n| n.name).collect();
        match names.len() {
            0 => Err(QueryError::NoAppService),
            n if n > MAX_AUTO_APP_SERVICES => Err(QueryError::TooManyAppServices(names)),
            _ => Ok(names),
        }
    }
}
