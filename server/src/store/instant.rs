//! Instants on the SQLite store: in-use event types ([`is_instant`]) are read as the latest
//! upload of each process, summed over processes, never as the sum of every upload in the range.
//!
//! A *process* is what DeepFlow's `(agent_id, process_id)` is here: app_service, language, event
//! type and batch tag set (host, agent, pod, gprocess, ...). When the selection's conditions are
//! all series conditions (the usual case), a process's uploads over the range are read from the
//! one-second rollup in one range read per series (`rollup_1s_by_series`, schema version 7): the
//! latest second with rows in each bucket is that bucket's upload, and its rows are the upload's
//! per-thread sums. A per-sample filter (a stack or function condition) needs the samples: the
//! latest upload in a window is then found by one backward seek of the samples' index
//! (`ORDER BY time DESC LIMIT 1` under the leading `(app_service, language, event type)`
//! columns), walked back from the range's end bucket by bucket, and its stacks are read
//! (`benches/instant_bench.rs` prints what either costs). The summed rollups cannot answer this
//! (a bucket's sum of snapshots is no snapshot) and are not read for instants.
//!
//! DeepFlow's querier takes `Last(profile_value)` per stack, agent and process; Embers takes
//! the whole latest upload of each process, so a stack absent from it (freed since) reads as
//! gone rather than at its older value. With one stack per upload the two agree.

use std::collections::HashMap;

use rusqlite::Connection;

use super::saturate::SAT_SUM;
use super::sql::{common_where, needs_samples, Sql};
use super::StoreError;
use embers_model::contract::event::{is_instant, INSTANT_EVENT_TYPES};
use embers_model::contract::explore::bucket_start;
use embers_model::contract::selection::Selection;

/// The index of schema version 7: the one-second rollup by series, covering its sums, so a
/// process's uploads over a range are one range read per series (a few threads) instead of a
/// seek of the samples and a lookup of the rollup per bucket.
pub(crate) const V7_SQL: &str = "CREATE INDEX profile.rollup_1s_by_series \
     ON rollup_1s (series_id, time, profile_value, samples);";

/// Every second of one process's series in `[?1, ?2]` with its sum per thread: its series by
/// the series' unique index, then each one's range of `rollup_1s_by_series`.
const THREADS_OVER: &str = "SELECT se.thread, r.time, r.profile_value, r.samples \
     FROM profile.series AS se JOIN profile.rollup_1s AS r \
       ON r.series_id = se.id AND r.time >= ?1 AND r.time <= ?2 \
     WHERE se.app_service = ?3 AND se.profile_language_type = ?4 \
       AND se.profile_event_type = ?5 AND se.tagset_id = ?6";

/// `(thread, value, samples)` of each thread of one upload.
pub(crate) type Threads = Vec<(String, i64, i64)>;

/// One upload per bucket: `(bucket start, second, its threads)`.
pub(crate) type Uploads = Vec<(i64, i64, Threads)>;

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
        if !needs_samples(&sel.filter) {
            let uploads = self.rollup_uploads(conn, sel, interval)?;
            return Ok(uploads.into_iter().map(|(b, at, _)| (b, at)).collect());
        }
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

    /// The latest upload in each bucket of `interval` over `sel`'s range (the whole range as
    /// bucket 0 without an interval) with its per-thread sums, read from the one-second rollup
    /// in one range read per series, newest bucket first. Only for selections whose conditions
    /// are all series conditions, which the rollup can answer (a second holds at most one
    /// upload of a process, so its rollup rows are that upload's sums).
    pub(crate) fn rollup_uploads(
        &self,
        conn: &Connection,
        sel: &Selection,
        interval: Option<i64>,
    ) -> Result<Uploads, StoreError> {
        let interval = interval.filter(|i| *i > 0);
        let mut range = (sel.time_start, sel.time_end);
        if interval.is_none() {
            // One bucket: its upload is found by one seek, then read at that second only.
            let Some(at) = self.latest(conn, sel, range)? else {
                return Ok(Vec::new());
            };
            range = (at, at);
        }
        let mut stmt = conn.prepare_cached(THREADS_OVER)?;
        let [app, language, event] = &self.names;
        let params = rusqlite::params![range.0, range.1, app, language, event, self.tagset_id];
        let mut rows = stmt.query(params)?;
        // Per bucket, the latest second seen so far and its threads' sums: rows come series
        // by series, so an older second of one thread is dropped when a newer one arrives.
        let mut buckets: HashMap<i64, (i64, Threads)> = HashMap::new();
        while let Some(row) = rows.next()? {
            let time: i64 = row.get(1)?;
            let bucket = interval.map_or(0, |i| bucket_start(time, i));
            let latest = buckets.entry(bucket).or_insert((time, Vec::new()));
            if time < latest.0 {
                continue;
            }
            if time > latest.0 {
                *latest = (time, Vec::new());
            }
            latest.1.push((row.get(0)?, row.get(2)?, row.get(3)?));
        }
        let mut out: Uploads = buckets
            .into_iter()
            .map(|(bucket, (at, threads))| (bucket, at, threads))
            .collect();
        out.sort_unstable_by_key(|u| std::cmp::Reverse(u.0));
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

    /// A process's uploads are one range read of `rollup_1s_by_series` per series (found by
    /// the series' unique index), never a scan of the rollup or a sort.
    #[test]
    fn a_process_s_uploads_are_a_range_read_per_series() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("p.db");
        drop(crate::store::Store::open(&path).expect("open"));
        let conn = crate::store::connect(&path).expect("conn");
        let plan = plan(
            &conn,
            THREADS_OVER,
            rusqlite::params![1, 2, "a", "b", "c", 1],
        );
        assert!(
            plan.contains(
                "USING COVERING INDEX rollup_1s_by_series (series_id=? AND time>? AND time<?)"
            ),
            "{plan}"
        );
        assert!(plan.contains("SEARCH se USING"), "{plan}");
        assert!(!plan.contains("SCAN"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
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
