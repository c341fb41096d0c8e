//! Instants on the SQLite store: in-use event types ([`is_instant`]) are read as the latest
//! upload of each process, summed over processes, never as the sum of every upload in the range.
//!
//! A *process* is what DeepFlow's `(agent_id, process_id)` is here: app_service, language, event
//! type and batch tag set (host, agent, pod, gprocess, ...). Its latest upload in a window is the
//! latest second with matching samples, found by one backward seek of the samples' index
//! (`ORDER BY time DESC LIMIT 1` under the leading `(app_service, language, event type)`
//! columns); a timeline walks back from the range's end, so only buckets with an upload cost a
//! seek. An upload's per-thread sums are point lookups of the one-second rollup (its stacks are
//! read only for per-sample filters), so the cost is a few seeks per process and bucket with an
//! upload, however many stacks or uploads the range holds (`benches/instant_bench.rs`). The summed rollups cannot answer this (a bucket's sum of snapshots is
//! no snapshot) and are not read for instants.
//!
//! DeepFlow's querier takes `Last(profile_value)` per stack, agent and process; Embers takes
//! the whole latest upload of each process, so a stack absent from it (freed since) reads as
//! gone rather than at its older value. With one stack per upload the two agree.

use std::collections::HashMap;

use rusqlite::Connection;

use super::saturate::SAT_SUM;
use super::sql::{common_where, Sql};
use super::StoreError;
use embers_model::contract::event::{is_instant, INSTANT_EVENT_TYPES};
use embers_model::contract::explore::bucket_start;
use embers_model::contract::selection::Selection;

/// The rows of one second's rollup of one process: its series (a few threads) by the series'
/// unique index, then each one's row by the rollup's key `(time, series_id)`.
const THREADS_AT: &str = "SELECT se.thread, r.profile_value, r.samples \
     FROM profile.series AS se JOIN profile.rollup_1s AS r \
       ON r.time = ?1 AND r.series_id = se.id \
     WHERE se.app_service = ?2 AND se.profile_language_type = ?3 \
       AND se.profile_event_type = ?4 AND se.tagset_id = ?5";

/// A process of an instant event type: `[app_service, language, event type]` and its tag set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Process {
    pub(crate) names: [String; 3],
    pub(crate) tagset_id: i64,
}

impl Process {
    /// `sel` narrowed to this process over `[from, to]` (its tag filter kept whole).
    fn selection(&self, sel: &Selection, (from, to): (i64, i64)) -> Selection {
        Selection {
            app_service: Some(self.names[0].clone()),
            language: Some(self.names[1].clone()),
            event_type: Some(self.names[2].clone()),
            time_start: from,
            time_end: to,
            filter: sel.filter.clone(),
        }
    }

    /// `SELECT <columns> FROM profile.in_process WHERE <this process in sel over [from, to]>`.
    fn statement(&self, columns: &str, sel: &Selection, window: (i64, i64)) -> Sql {
        let mut sql = Sql::new("SELECT ");
        sql.push(columns).push(" FROM profile.in_process WHERE ");
        common_where(&mut sql, &self.selection(sel, window));
        sql.push(" AND app_service = ")
            .bind(self.names[0].clone())
            .push(" AND tagset_id = ")
            .bind(self.tagset_id);
        sql
    }

    /// The second of this process's latest upload in `window` matching `sel`, if any.
    pub(crate) fn latest(
        &self,
        conn: &Connection,
        sel: &Selection,
        window: (i64, i64),
    ) -> Result<Option<i64>, StoreError> {
        let mut sql = self.statement("time", sel, window);
        sql.push(" ORDER BY time DESC LIMIT 1");
        let mut stmt = conn.prepare_cached(&sql.text)?;
        let mut rows = stmt.query(sql.params())?;
        Ok(match rows.next()? {
            Some(row) => Some(row.get(0)?),
            None => None,
        })
    }

    /// The latest upload in each bucket of `interval` over `sel`'s range that has one:
    /// `(bucket start, second)`, the whole range as bucket 0 without an interval. Walked back
    /// from the range's end, one seek per bucket with an upload (the next seek starts below
    /// the bucket just found), so buckets without uploads cost nothing.
    pub(crate) fn latest_per_bucket(
        &self,
        conn: &Connection,
        sel: &Selection,
        interval: Option<i64>,
    ) -> Result<Vec<(i64, i64)>, StoreError> {
        let (start, mut end) = (sel.time_start, sel.time_end);
        let mut out = Vec::new();
        while end >= start {
            let Some(at) = self.latest(conn, sel, (start, end))? else {
                break;
            };
            let Some(interval) = interval.filter(|i| *i > 0) else {
                out.push((0, at));
                break;
            };
            let bucket = bucket_start(at, interval);
            out.push((bucket, at));
            end = bucket.saturating_sub(1);
        }
        Ok(out)
    }

    /// The upload at second `at`: `(stack_id, value, samples)` per stack.
    pub(crate) fn upload(
        &self,
        conn: &Connection,
        sel: &Selection,
        at: i64,
    ) -> Result<Vec<(i64, i64, i64)>, StoreError> {
        let columns = format!("stack_id, {SAT_SUM}(profile_value), COUNT(*)");
        let mut sql = self.statement(&columns, sel, (at, at));
        sql.push(" GROUP BY stack_id");
        let mut stmt = conn.prepare_cached(&sql.text)?;
        let rows = stmt.query_map(sql.params(), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The upload at second `at` summed per thread, from the one-second rollup (a point
    /// lookup per thread rather than a read of every stack): `(thread, value, samples)`. Only
    /// for selections whose conditions are all series conditions, which the rollup can answer
    /// (a second holds at most one upload of a process, so its rollup row is that upload's sum).
    pub(crate) fn threads_at(
        &self,
        conn: &Connection,
        at: i64,
    ) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let mut stmt = conn.prepare_cached(THREADS_AT)?;
        let [app, language, event] = &self.names;
        let rows = stmt.query_map(
            rusqlite::params![at, app, language, event, self.tagset_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Whether `sel` may match samples of an instant event type.
pub(crate) fn may_match(sel: &Selection) -> bool {
    sel.event_type.as_deref().is_none_or(is_instant)
}

/// The processes of instant event types among the series of `app_services` (every one but
/// `skip` when `None`) that `sel`'s language, event type and tag conditions allow.
pub(crate) fn processes(
    conn: &Connection,
    sel: &Selection,
    app_services: Option<&[String]>,
    skip: Option<&str>,
) -> Result<Vec<Process>, StoreError> {
    let mut sql = Sql::new(
        "SELECT DISTINCT app_service, profile_language_type, profile_event_type, tagset_id \
         FROM profile.series WHERE profile_event_type",
    );
    sql.in_list(&INSTANT_EVENT_TYPES.map(str::to_owned));
    if let Some(names) = app_services {
        sql.push(" AND app_service").in_list(names);
    }
    if let Some(name) = skip {
        sql.push(" AND app_service != ").bind(name.to_owned());
    }
    let series_only = super::sql::series_selection(sel);
    super::sql::conditions_where(&mut sql, &series_only);
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let rows = stmt.query_map(sql.params(), |r| {
        Ok(Process {
            names: [r.get(0)?, r.get(1)?, r.get(2)?],
            tagset_id: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The latest upload in the range of every process of `app_services` matching `sel`, summed per
/// stack over processes: `stack_id -> value` (saturating).
pub(crate) fn stacks(
    conn: &Connection,
    sel: &Selection,
    app_services: &[String],
) -> Result<HashMap<i64, i64>, StoreError> {
    let mut out: HashMap<i64, i64> = HashMap::new();
    for p in processes(conn, sel, Some(app_services), None)? {
        let Some(at) = p.latest(conn, sel, (sel.time_start, sel.time_end))? else {
            continue;
        };
        for (stack, value, _) in p.upload(conn, sel, at)? {
            let sum = out.entry(stack).or_default();
            *sum = sum.saturating_add(value);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sql::tests::query;

    /// What SQLite plans for `sql` with `params`, one line per step.
    fn plan(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> String {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("prepare");
        let plan: Vec<String> = stmt
            .query_map(params, |r| r.get::<_, String>(3))
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("rows");
        plan.join("\n")
    }

    /// An upload's threads are point lookups: the series by its unique index, the rollup by
    /// its key, never a scan of every series of that second.
    #[test]
    fn an_uploads_threads_are_point_lookups_of_the_rollup() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("p.db");
        drop(crate::store::Store::open(&path).expect("open"));
        let conn = crate::store::connect(&path).expect("conn");
        let plan = plan(&conn, THREADS_AT, rusqlite::params![1, "a", "b", "c", 1]);
        assert!(
            plan.contains("USING PRIMARY KEY (time=? AND series_id=?)"),
            "{plan}"
        );
        assert!(plan.contains("SEARCH se USING"), "{plan}");
        assert!(!plan.contains("SCAN"), "{plan}");
    }

    /// The latest upload is found by a backward seek of the samples' index, not a sort.
    #[test]
    fn the_latest_upload_is_a_seek_of_the_index() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("p.db");
        drop(crate::store::Store::open(&path).expect("open"));
        let conn = crate::store::connect(&path).expect("conn");
        let p = Process {
            names: ["app".into(), "Golang".into(), "inuse_space".into()],
            tagset_id: 1,
        };
        let mut sql = p.statement("time", &query("pod='a'"), (1, 2));
        sql.push(" ORDER BY time DESC LIMIT 1");
        let plan = plan(&conn, &sql.text, sql.params());
        assert!(plan.contains("INDEX samples_by_query"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }
}
