//! Sums that cannot fail: profile values are SQLite integers (`i64`), and each ingested value
//! is at most `i64::MAX`, but several can add up past it. SQLite's `SUM` then raises "integer
//! overflow" and `a + b` silently becomes a float, either of which would make every later query
//! of the process fail. The store holds such sums at `i64::MAX` instead (ingest accepts each
//! value on its own; a sum at the limit is 292,000 years of CPU microseconds, so only broken or
//! hostile data gets there).
//!
//! Reads run with SQLite's own `SUM` (fast, native) and, only when it overflows, again with
//! [`SAT_SUM`], an aggregate registered on every connection that saturates.

use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::Connection;

use super::StoreError;

/// The saturating aggregate's SQL name.
pub(crate) const SAT_SUM: &str = "sat_sum";

/// `column = column + excluded.column` held at `i64::MAX` (both sides are non-negative), for
/// an upsert's `DO UPDATE SET`.
pub(crate) fn add_excluded(column: &str) -> String {
    format!(
        "{column} = CASE WHEN {column} > 9223372036854775807 - excluded.{column} \
         THEN 9223372036854775807 ELSE {column} + excluded.{column} END"
    )
}

/// `SUM` that saturates at the `i64` limits; NULL over no rows, as `SUM`.
struct SatSum;

impl Aggregate<i64, Option<i64>> for SatSum {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<i64> {
        Ok(0)
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut i64) -> rusqlite::Result<()> {
        let value: Option<i64> = ctx.get(0)?;
        *acc = acc.saturating_add(value.unwrap_or(0));
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, acc: Option<i64>) -> rusqlite::Result<Option<i64>> {
        Ok(acc)
    }
}

/// Register [`SAT_SUM`] on `conn`.
pub(crate) fn register(conn: &Connection) -> Result<(), StoreError> {
    conn.create_aggregate_function(
        SAT_SUM,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        SatSum,
    )?;
    Ok(())
}

/// Whether `e` is SQLite's `SUM` overflowing.
fn is_overflow(e: &StoreError) -> bool {
    matches!(e, StoreError::Sqlite(rusqlite::Error::SqliteFailure(_, Some(m))) if m == "integer overflow")
}

/// Run `read` with `"SUM"` as its sum function and, if that overflows, once more with
/// [`SAT_SUM`].
pub(crate) fn summing<T, E>(mut read: impl FnMut(&str) -> Result<T, E>) -> Result<T, E>
where
    E: Overflow,
{
    match read("SUM") {
        Err(e) if e.is_overflow() => read(SAT_SUM),
        other => other,
    }
}

/// Errors that can say they are a `SUM` overflow.
pub(crate) trait Overflow {
    fn is_overflow(&self) -> bool;
}

impl Overflow for StoreError {
    fn is_overflow(&self) -> bool {
        is_overflow(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        register(&conn).expect("register");
        conn.execute_batch(
            "CREATE TABLE t (g INTEGER, v INTEGER);
             INSERT INTO t VALUES (1, 9223372036854775807), (1, 1), (2, 5), (2, 6);",
        )
        .expect("table");
        conn
    }

    fn sums(conn: &Connection, sum: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = conn.prepare(&format!("SELECT {sum}(v) FROM t GROUP BY g ORDER BY g"))?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    #[test]
    fn sum_overflows_and_the_retry_saturates() {
        let conn = conn();
        let e = sums(&conn, "SUM").expect_err("SQLite's SUM overflows");
        assert!(is_overflow(&e), "{e}");
        let mut tried = Vec::new();
        let out = summing(|f| {
            tried.push(f.to_owned());
            sums(&conn, f)
        })
        .expect("saturated");
        assert_eq!(out, [i64::MAX, 11]);
        assert_eq!(tried, ["SUM", SAT_SUM]);
        let none: Option<i64> = conn
            .query_row("SELECT sat_sum(v) FROM t WHERE g = 3", [], |r| r.get(0))
            .expect("empty");
        assert_eq!(none, None);
    }

    #[test]
    fn upserts_hold_at_the_limit() {
        let conn = conn();
        conn.execute_batch("CREATE TABLE u (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
            .expect("u");
        let upsert = format!(
            "INSERT INTO u (k, v) VALUES (1, ?1) ON CONFLICT (k) DO UPDATE SET {}",
            add_excluded("v")
        );
        for v in [i64::MAX - 1, 1, 1, i64::MAX] {
            conn.execute(&upsert, [v]).expect("upsert");
        }
        let (v, kind): (i64, String) = conn
            .query_row("SELECT v, typeof(v) FROM u", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("row");
        assert_eq!((v, kind.as_str()), (i64::MAX, "integer"));
    }
}
