//! Reading stacks for a ProfileTracing query from `profile.in_process`.
//!
//! The SQL text is assembled only from fixed fragments and field-table column names; every value
//! from the request (app_service, language, event type, times, tag values, open-tag names) is a
//! bound parameter.

use std::time::{Duration, Instant};

use rusqlite::Connection;
use thiserror::Error;

use super::sql::{common_where, Sql};
use super::StoreError;
use super::{instant, saturate};
use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};
use embers_model::contract::selection::Selection;

/// Most app_services an unnamed query may match (and name its root after).
pub const MAX_AUTO_APP_SERVICES: usize = 10;

/// The matching stacks, summed per distinct stack.
#[derive(Debug, Clone, Default)]
pub struct QueryOutput {
    /// Name of the root: the app_service, or the matched ones joined by `", "`.
    pub root: String,
    /// `(profile_location_str, summed value)` per distinct stack.
    pub stacks: Vec<(String, u64)>,
    /// The SQL statements run (placeholders, not values), for `debug`.
    pub statements: Vec<String>,
    /// Time spent in SQLite.
    pub elapsed: Duration,
}

/// Why a query could not be answered.
#[derive(Debug, Error)]
pub enum QueryError {
    /// `app_service` was omitted and nothing matched the other conditions.
    #[error(
        "app_service was not given and no app_service matches the other conditions; \
         set app_service"
    )]
    NoAppService,
    /// `app_service` was omitted and more than [`MAX_AUTO_APP_SERVICES`] matched (first 11 given).
    #[error(
        "app_service was not given and more than {MAX_AUTO_APP_SERVICES} app_services \
         match ({}, ...); set app_service or narrow tag_filter",
        first_names(.0)
    )]
    TooManyAppServices(Vec<String>),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn first_names(names: &[String]) -> String {
    names
        .iter()
        .take(MAX_AUTO_APP_SERVICES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

impl saturate::Overflow for QueryError {
    fn is_overflow(&self) -> bool {
        matches!(self, QueryError::Store(e) if e.is_overflow())
    }
}

impl From<rusqlite::Error> for QueryError {
    fn from(e: rusqlite::Error) -> Self {
        QueryError::Store(StoreError::from(e))
    }
}

/// Run the query: resolve the app_service(s), then sum values per distinct stack (for an
/// instant event type, of each process's latest upload).
pub fn run(conn: &Connection, q: &Selection) -> Result<QueryOutput, QueryError> {
    let started = Instant::now();
    let mut statements = Vec::new();
    let services = match &q.app_service {
        Some(name) => vec![name.clone()],
        None => discover(conn, q, &mut statements)?,
    };

    let stacks = if q.event_type.as_deref().is_some_and(is_instant) {
        // An instant is each process's latest upload, not the range's sum (see `instant`).
        statements.push("SELECT time ... ORDER BY time DESC LIMIT 1 (per process)".to_owned());
        latest_stacks(conn, q, &services)?
    } else {
        // SQLite's SUM first; a process whose values add up past i64::MAX again with sat_sum.
        let (sql, stacks) = saturate::summing(|sum| {
            let sql = main_statement(q, &services, sum);
            let stacks = stacks_of(conn, &sql)?;
            Ok::<_, QueryError>((sql, stacks))
        })?;
        statements.push(sql.text);
        stacks
    };
    Ok(QueryOutput {
        root: services.join(", "),
        stacks,
        statements,
        elapsed: started.elapsed(),
    })
}

/// The rows of the main statement: `(stack, summed value)`.
fn stacks_of(conn: &Connection, sql: &Sql) -> Result<Vec<(String, u64)>, QueryError> {
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(sql.params.iter()))?;
    let mut stacks = Vec::new();
    while let Some(row) = rows.next()? {
        let stack: String = row.get(0)?;
        let total: i64 = row.get(1)?;
        let total = u64::try_from(total).map_err(|_| {
            StoreError::Invalid(format!("negative total {total} for a stored stack"))
        })?;
        stacks.push((stack, total));
    }
    Ok(stacks)
}

/// The stacks of each process's latest upload in the range, with their texts.
fn latest_stacks(
    conn: &Connection,
    q: &Selection,
    services: &[String],
) -> Result<Vec<(String, u64)>, QueryError> {
    let sums = instant::stacks(conn, q, services)?;
    let mut text = conn.prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?;
    let mut stacks = Vec::with_capacity(sums.len());
    for (id, value) in sums {
        let stack: String = text.query_row([id], |r| r.get(0))?;
        stacks.push((stack, u64::try_from(value).unwrap_or(0)));
    }
    Ok(stacks)
}

/// The main statement: per distinct stack of the matching samples, its text and summed value.
/// SQLite sums over the covering index, then looks each distinct stack up once.
/// `sum` is the aggregate (`SUM` or the saturating one).
fn main_statement(q: &Selection, services: &[String], sum: &str) -> Sql {
    let mut sql = Sql::new("SELECT st.location_str, agg.total FROM (SELECT stack_id, ");
    sql.push(sum)
        .push("(profile_value) AS total FROM profile.in_process WHERE ");
    common_where(&mut sql, q);
    sql.push(" AND app_service IN (");
    for (i, name) in services.iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.bind(name.clone());
    }
    sql.push(") GROUP BY stack_id) AS agg JOIN profile.stacks AS st ON st.id = agg.stack_id");
    sql
}

/// Find the app_services (other than `Total`) matching a query without one: 1 to 10, sorted.
pub(crate) fn discover(
    conn: &Connection,
    q: &Selection,
    statements: &mut Vec<String>,
) -> Result<Vec<String>, QueryError> {
    let mut sql = Sql::new("SELECT DISTINCT app_service FROM profile.in_process WHERE ");
    common_where(&mut sql, q);
    sql.push(" AND app_service != ")
        .bind(TOTAL_APP_SERVICE.to_owned());
    sql.push(" ORDER BY app_service LIMIT ")
        .bind(i64::try_from(MAX_AUTO_APP_SERVICES + 1).unwrap_or(11));
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let names: Vec<String> = stmt
        .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| {
            row.get(0)
        })?
        .collect::<Result<_, _>>()?;
    statements.push(sql.text);
    match names.len() {
        0 => Err(QueryError::NoAppService),
        n if n > MAX_AUTO_APP_SERVICES => Err(QueryError::TooManyAppServices(names)),
        _ => Ok(names),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sql::tests::query;

    /// The main statement must read only the covering index of `samples` (no per-row lookups of
    /// stacks or tag sets) and look each distinct stack up once.
    #[test]
    fn main_query_uses_the_covering_index() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("p.db");
        drop(crate::store::Store::open(&path).expect("open"));
        let conn = crate::store::connect(&path).expect("conn");
        let mut sql = Sql::new("EXPLAIN QUERY PLAN ");
        sql.push(&main_statement(&query(""), &["app".to_owned()], "SUM").text);
        let q = main_statement(&query(""), &["app".to_owned()], "SUM");
        let mut stmt = conn.prepare(&sql.text).expect("prepare");
        let plan: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(q.params.iter()), |r| {
                r.get::<_, String>(3)
            })
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("rows");
        let plan = plan.join("\n");
        assert!(
            plan.contains("USING COVERING INDEX samples_by_query"),
            "{plan}"
        );
        assert_eq!(plan.matches("SEARCH st").count(), 1, "{plan}");
        assert!(!plan.contains("tagsets"), "{plan}");
    }
}
