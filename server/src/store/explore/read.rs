//! Summed points of the matching series over a range: read from the rollup (coarse buckets for
//! the whole ones inside the range, finer ones for its edges), or from the samples themselves
//! when the tag filter names a per-sample field (`_id`, `time`, the timestamps).

use std::collections::HashMap;

use rusqlite::Connection;

use super::super::cover::cover;
use super::super::rollup::{Level, LEVELS};
use super::super::sql::{common_where, conditions_where, needs_samples, Sql};
use super::super::{saturate, StoreError};
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{bucket_start, thread_of};
use embers_model::contract::selection::Selection;

/// What the samples of a series share.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Series {
    pub(super) app_service: String,
    pub(super) language: String,
    pub(super) event_type: String,
    pub(super) tagset_id: i64,
    pub(super) thread: String,
}

/// One summed point: a bucket (or the whole range) of one series.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    /// Start of the bucket, or 0 for whole-range sums.
    pub(super) time: i64,
    /// Index into [`Points::series`].
    pub(super) series: usize,
    pub(super) value: i64,
    pub(super) samples: i64,
}

/// Points and the series they index.
#[derive(Debug, Default)]
pub(super) struct Points {
    pub(super) series: Vec<Series>,
    pub(super) points: Vec<Point>,
}

/// Which samples to read.
pub(super) struct Read<'a> {
    pub(super) selection: &'a Selection,
    /// Leave out the `Total` pseudo-process (when no process is named).
    pub(super) skip_total: bool,
    /// Bucket length; `None` sums the whole range.
    pub(super) interval: Option<i64>,
}

impl Read<'_> {
    /// Append ` AND ...` for the process (or for leaving `Total` out).
    fn app_condition(&self, sql: &mut Sql) {
        match &self.selection.app_service {
            Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
            None if self.skip_total => sql
                .push(" AND app_service != ")
                .bind(TOTAL_APP_SERVICE.to_owned()),
            None => sql,
        };
    }

    /// Append ` AND ...` for the process and every other condition series share.
    fn series_conditions(&self, sql: &mut Sql) {
        self.app_condition(sql);
        conditions_where(sql, self.selection);
    }

    /// The bucket of a row's `time`: itself when a level's buckets are the interval's.
    fn bucket(&self, sql: &mut Sql, level_seconds: i64) {
        match self.interval {
            None => sql.push("0"),
            Some(i) if i == level_seconds => sql.push("time"),
            // floor(time / i) * i, also for negative times.
            Some(i) => sql
                .push("time - ((time % ")
                .bind(i)
                .push(") + ")
                .bind(i)
                .push(") % ")
                .bind(i),
        };
    }
}

/// Read the points of `r`: each `(bucket, series)` once.
pub(super) fn read(conn: &Connection, r: &Read<'_>) -> Result<Points, StoreError> {
    if needs_samples(&r.selection.filter) {
        return read_samples(conn, r);
    }
    let mut out = Points::default();
    // Series ids are small dense integers (a rowid), so a vector maps them to indexes.
    let mut index: Vec<Option<usize>> = Vec::new();
    let mut sql = Sql::new(
        "SELECT id, app_service, profile_language_type, profile_event_type, tagset_id, thread \
         FROM profile.series WHERE TRUE",
    );
    r.series_conditions(&mut sql);
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let mut rows = stmt.query(sql.params())?;
    while let Some(row) = rows.next()? {
        let id = usize::try_from(row.get::<_, i64>(0)?).unwrap_or(0);
        if index.len() <= id {
            index.resize(id + 1, None);
        }
        index[id] = Some(out.series.len());
        out.series.push(Series {
            app_service: row.get(1)?,
            language: row.get(2)?,
            event_type: row.get(3)?,
            tagset_id: row.get(4)?,
            thread: row.get(5)?,
        });
    }
    if out.series.is_empty() {
        return Ok(out);
    }
    // Every stored series matches: no need to test each rollup row's series.
    let filtered = !sql.params.is_empty();
    // Summed here rather than by SQL's GROUP BY, which would sort every row in a temporary
    // B-tree first; the rows arrive in key order and a hash map takes them as they come.
    let mut sums: HashMap<(i64, usize), (i64, i64)> = HashMap::new();
    let (start, end) = (r.selection.time_start, r.selection.time_end);
    for (level, from, to) in plan(start, end, r.interval) {
        // `level.table` is a fixed identifier of LEVELS.
        let mut sql = Sql::new("SELECT time, series_id, profile_value, samples FROM ");
        sql.push(level.table)
            .push(" WHERE time >= ")
            .bind(from)
            .push(" AND time <= ")
            .bind(to);
        if filtered {
            sql.push(" AND series_id IN (SELECT id FROM profile.series WHERE TRUE");
            r.series_conditions(&mut sql);
            sql.push(")");
        }
        let mut stmt = conn.prepare_cached(&sql.text)?;
        let mut rows = stmt.query(sql.params())?;
        while let Some(row) = rows.next()? {
            let id = usize::try_from(row.get::<_, i64>(1)?).unwrap_or(usize::MAX);
            let Some(&Some(series)) = index.get(id) else {
                continue;
            };
            let time: i64 = row.get(0)?;
            let time = r.interval.map_or(0, |i| bucket_start(time, i));
            let sum = sums.entry((time, series)).or_default();
            sum.0 = sum.0.saturating_add(row.get(2)?);
            sum.1 = sum.1.saturating_add(row.get(3)?);
        }
    }
    out.points = sums
        .into_iter()
        .map(|((time, series), (value, samples))| Point {
            time,
            series,
            value,
            samples,
        })
        .collect();
    Ok(out)
}

/// The reads covering `[start, end]`: `(level, first bucket, last bucket)` with every bucket
/// inside the range, coarse levels for the middle and finer ones for the edges. A level is used
/// only when `interval` (if any) is a multiple of its buckets; the last level (one second) is
/// always usable, so nothing is left over.
pub(super) fn plan(start: i64, end: i64, interval: Option<i64>) -> Vec<(Level, i64, i64)> {
    let usable: Vec<Level> = LEVELS
        .iter()
        .filter(|l| interval.is_none_or(|i| i % l.seconds == 0))
        .copied()
        .collect();
    let sizes: Vec<i64> = usable.iter().map(|l| l.seconds).collect();
    let (pieces, _) = cover(start, end, &sizes);
    pieces
        .into_iter()
        .map(|(at, a, b)| (usable[at], a, b))
        .collect()
}

/// Read the samples themselves (for filters on per-sample fields): the same points, with each
/// distinct stack's thread looked up once.
fn read_samples(conn: &Connection, r: &Read<'_>) -> Result<Points, StoreError> {
    // SQLite's SUM first; values adding up past i64::MAX again with the saturating sum.
    saturate::summing(|sum| read_samples_with(conn, r, sum))
}

/// [`read_samples`] with `sum` as the aggregate.
fn read_samples_with(conn: &Connection, r: &Read<'_>, sum: &str) -> Result<Points, StoreError> {
    let mut sql = Sql::new("SELECT ");
    r.bucket(&mut sql, 1);
    sql.push(", app_service, profile_language_type, profile_event_type, tagset_id, stack_id, ");
    sql.push(sum)
        .push("(profile_value), COUNT(*) FROM profile.in_process WHERE ");
    common_where(&mut sql, r.selection);
    r.app_condition(&mut sql);
    sql.push(" GROUP BY 1, 2, 3, 4, 5, 6");
    let mut threads: HashMap<i64, String> = HashMap::new();
    let mut index: HashMap<Series, usize> = HashMap::new();
    let mut out = Points::default();
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let mut rows = stmt.query(sql.params())?;
    while let Some(row) = rows.next()? {
        let thread = stack_thread(conn, &mut threads, row.get(5)?)?;
        let key = Series {
            app_service: row.get(1)?,
            language: row.get(2)?,
            event_type: row.get(3)?,
            tagset_id: row.get(4)?,
            thread,
        };
        let next = index.len();
        let series = *index.entry(key.clone()).or_insert(next);
        if series == out.series.len() {
            out.series.push(key);
        }
        out.points.push(Point {
            time: row.get(0)?,
            series,
            value: row.get(6)?,
            samples: row.get(7)?,
        });
    }
    Ok(out)
}

/// The thread of stored stack `id` (its first `[t] ` frame), each stack's text read once.
pub(super) fn stack_thread(
    conn: &Connection,
    threads: &mut HashMap<i64, String>,
    id: i64,
) -> Result<String, StoreError> {
    if let Some(t) = threads.get(&id) {
        return Ok(t.clone());
    }
    let stack: String = conn
        .prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?;
    let t = thread_of(&stack).to_owned();
    threads.insert(id, t.clone());
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(start: i64, end: i64, interval: Option<i64>) -> Vec<(i64, i64, i64)> {
        let mut p: Vec<_> = plan(start, end, interval)
            .into_iter()
            .map(|(l, a, b)| (l.seconds, a, b))
            .collect();
        p.sort_unstable();
        p
    }

    #[test]
    fn plans_use_whole_minutes_and_seconds_at_the_edges() {
        assert_eq!(
            pieces(52, 250, None),
            vec![
                (1, 52, 54),
                (1, 250, 250),
                (5, 55, 55),
                (10, 240, 240),
                (60, 60, 180)
            ]
        );
        assert_eq!(pieces(60, 179, None), vec![(60, 60, 120)]);
        assert_eq!(pieces(3600, 7199, None), vec![(3600, 3600, 3600)]);
        assert_eq!(pieces(-61, -1, None), vec![(1, -61, -61), (60, -60, -60)]);
        // Only levels that divide the interval: 30 s cannot use minutes, 300 s can.
        assert_eq!(
            pieces(50, 250, Some(30)),
            vec![(1, 250, 250), (10, 50, 50), (10, 240, 240), (30, 60, 210)]
        );
        assert_eq!(pieces(0, 3599, Some(300)), vec![(300, 0, 3300)]);
        assert_eq!(pieces(0, 599, Some(60)), vec![(60, 0, 540)]);
        assert_eq!(pieces(0, 20, Some(7)), vec![(1, 0, 20)]);
        assert_eq!(pieces(5, 5, Some(1)), vec![(1, 5, 5)]);
        let extreme = pieces(i64::MAX - 100, i64::MAX, None);
        assert_eq!(extreme.iter().map(|p| p.2 - p.1 + p.0).sum::<i64>(), 101);
    }
}
