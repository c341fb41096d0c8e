//! ProfileTracing on ClickHouse: the same two steps as the SQLite store (find the app_services
//! when none is named, then sum values per distinct stack), the same errors and limits.

use std::time::Instant;

use clickhouse::Row;
use serde::Deserialize;

use super::sql::{common_where, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::query::MAX_AUTO_APP_SERVICES;
use crate::store::{QueryError, QueryOutput, StoreError};
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::selection::Selection;

#[derive(Debug, Row, Deserialize)]
struct StackRow {
    stack: String,
    total: i64,
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
        let mut sql =
            ChSql::new("SELECT profile_location_str AS stack, sum(profile_value) AS total FROM ");
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, q);
        sql.push(" AND app_service").in_list(&services);
        sql.push(" GROUP BY profile_location_str");
        let rows: Vec<StackRow> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        let mut stacks = Vec::with_capacity(rows.len());
        for row in rows {
            let total = u64::try_from(row.total).map_err(|_| {
                StoreError::Invalid(format!("negative total {} for a stored stack", row.total))
            })?;
            stacks.push((row.stack, total));
        }
        statements.push(sql.text);
        Ok(QueryOutput {
            root: services.join(", "),
            stacks,
            statements,
            elapsed: started.elapsed(),
        })
    }

    /// Find the app_services (other than `Total`) matching a query without one: 1 to 10, sorted.
    fn discover(
        &self,
        q: &Selection,
        statements: &mut Vec<String>,
    ) -> Result<Vec<String>, QueryError> {
        let mut sql = ChSql::new("SELECT DISTINCT app_service AS name FROM ");
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, q);
        sql.push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned());
        sql.push(" ORDER BY app_service LIMIT ")
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
