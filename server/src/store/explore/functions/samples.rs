//! The functions endpoints' reads of the samples themselves: a range's edges (what no rollup
//! bucket covers whole), a whole range under a filter on per-sample fields, and one
//! function's timeline (in-use ones at each bucket's latest upload). Samples are read per process (the leading columns of the samples'
//! index), summed per stack in Rust, and each distinct stack's functions added once.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use rusqlite::Connection;

use super::super::super::functions::{function_id, Frames, IdSums};
use super::super::super::instant;
use super::super::super::sql::{common_where, Sql};
use super::super::super::{SqliteStore, StoreError};
use super::super::labels;
use super::super::read::Series;
use super::Listed;
use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};
use embers_model::contract::explore::{
    bucket_start, thread_of, Dimension, FunctionPoint, FunctionTimelineQuery,
};
use embers_model::contract::selection::Selection;

/// One sample row: its time, tag set, stack and value.
type Row = (i64, i64, i64, i64);

/// The samples of `process` in `sel` over `[from, to]`, filtered by the whole tag filter;
/// with `function`, only stacks whose text contains it (the exact test follows in Rust).
fn rows_of(
    conn: &Connection,
    sel: &Selection,
    process: &[String; 3],
    (from, to): (i64, i64),
    function: Option<&str>,
) -> Result<Vec<Row>, StoreError> {
    let one = Selection {
        app_service: Some(process[0].clone()),
        language: Some(process[1].clone()),
        event_type: Some(process[2].clone()),
        time_start: from,
        time_end: to,
        filter: sel.filter.clone(),
    };
    let mut sql =
        Sql::new("SELECT time, tagset_id, stack_id, profile_value FROM profile.in_process WHERE ");
    common_where(&mut sql, &one);
    sql.push(" AND app_service = ").bind(process[0].clone());
    if let Some(f) = function {
        sql.push(" AND stack_id IN (SELECT id FROM profile.stacks WHERE instr(location_str, ")
            .bind(f.to_owned())
            .push(") > 0)");
    }
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let rows = stmt.query_map(sql.params(), |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl SqliteStore {
    /// The functions of stack `id`, its text read when the cache does not know it.
    fn frames_of(&self, conn: &Connection, id: i64) -> Result<Arc<Frames>, StoreError> {
        let key = id as u64;
        if let Some(f) = self
            .frames
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .known(key)
        {
            return Ok(f);
        }
        let text: String = conn
            .prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?
            .query_row([id], |r| r.get(0))?;
        let mut cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
        Ok(cache.frames(key, &text))
    }
}

/// Adds the samples of `ranges` to `sums`, at the places of `listed` (by process, and by tag
/// set when the listed series are per tag set).
pub(super) fn read(
    store: &SqliteStore,
    conn: &Connection,
    sel: &Selection,
    listed: &[Listed],
    ranges: &[(i64, i64)],
    sums: &mut IdSums,
) -> Result<(), StoreError> {
    if ranges.is_empty() {
        return Ok(());
    }
    let mut by_process: HashMap<&[String; 3], HashMap<i64, usize>> = HashMap::new();
    for l in listed {
        by_process
            .entry(&l.process)
            .or_default()
            .insert(l.tagset_id, l.place);
    }
    for (process, places) in by_process {
        // Tag set 0 is the process's own series: every sample counts there.
        let whole = places.get(&0).copied();
        let mut per_stack: HashMap<(usize, i64), i64> = HashMap::new();
        for &range in ranges {
            for (_, tagset, stack, value) in rows_of(conn, sel, process, range, None)? {
                let Some(place) = whole.or_else(|| places.get(&tagset).copied()) else {
                    continue;
                };
                let sum = per_stack.entry((place, stack)).or_default();
                *sum = sum.saturating_add(value);
            }
        }
        for ((place, stack), value) in per_stack {
            let frames = store.frames_of(conn, stack)?;
            sums.add_stack(place, &frames, value);
        }
    }
    Ok(())
}

/// Adds, for each of `listed` (series of instant event types), the latest upload in `sel`'s
/// range of each of its processes (every tag set of it, or the listed one), at its place.
pub(super) fn read_latest(
    store: &SqliteStore,
    conn: &Connection,
    sel: &Selection,
    listed: &[Listed],
    sums: &mut IdSums,
) -> Result<(), StoreError> {
    for l in listed {
        let app = [l.process[0].clone()];
        let one = Selection {
            language: Some(l.process[1].clone()),
            event_type: Some(l.process[2].clone()),
            ..sel.clone()
        };
        for p in instant::processes(conn, &one, Some(&app), None)? {
            if l.tagset_id != 0 && p.tagset_id != l.tagset_id {
                continue;
            }
            let Some(at) = p.latest(conn, sel, (sel.time_start, sel.time_end))? else {
                continue;
            };
            for (stack, value, _) in p.upload(conn, sel, at)? {
                let frames = store.frames_of(conn, stack)?;
                sums.add_stack(l.place, &frames, value);
            }
        }
    }
    Ok(())
}

/// The processes of a timeline's samples: the one named, or every one except `Total`.
fn processes(conn: &Connection, sel: &Selection) -> Result<Vec<[String; 3]>, StoreError> {
    let mut sql = Sql::new(
        "SELECT DISTINCT app_service, profile_language_type, profile_event_type \
         FROM profile.function_series WHERE tagset_id = 0",
    );
    match &sel.app_service {
        Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
        None => sql
            .push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned()),
    };
    if let Some(language) = &sel.language {
        sql.push(" AND profile_language_type = ")
            .bind(language.clone());
    }
    if let Some(event) = &sel.event_type {
        sql.push(" AND profile_event_type = ").bind(event.clone());
    }
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let rows = stmt.query_map(sql.params(), |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One function's self and total per bucket and group, from the samples.
pub(super) fn timeline(
    store: &SqliteStore,
    conn: &Connection,
    q: &FunctionTimelineQuery,
) -> Result<Vec<FunctionPoint>, StoreError> {
    let t = &q.timeline;
    let id = function_id(&q.function);
    let dimension = t.group_by.as_ref().map(|(_, d)| d);
    let sel = &t.selection;
    let mut points = Vec::new();
    for process in processes(conn, sel)? {
        let mut rows = rows_of(
            conn,
            sel,
            &process,
            (sel.time_start, sel.time_end),
            Some(&q.function),
        )?;
        if is_instant(&process[2]) {
            let latest = latest_uploads(conn, sel, &process, t.interval)?;
            rows.retain(|&(time, tagset, _, _)| {
                latest.contains(&(bucket_start(time, t.interval), tagset, time))
            });
        }
        let mut per_stack: HashMap<(i64, i64, i64), i64> = HashMap::new();
        for (time, tagset, stack, value) in rows {
            let sum = per_stack
                .entry((bucket_start(time, t.interval), tagset, stack))
                .or_default();
            *sum = sum.saturating_add(value);
        }
        let tagsets: BTreeSet<i64> = per_stack.keys().map(|(_, ts, _)| *ts).collect();
        let names = group_names(conn, &process, &tagsets, dimension)?;
        for ((time, tagset, stack), value) in per_stack {
            let frames = store.frames_of(conn, stack)?;
            if !frames.ids.contains(&id) {
                continue;
            }
            let group = match dimension {
                Some(Dimension::Thread) => Some(thread_name(conn, stack)?),
                Some(_) => names.get(&tagset).cloned(),
                None => None,
            };
            let value = u64::try_from(value).unwrap_or(0);
            points.push(FunctionPoint {
                time,
                group,
                self_value: if frames.leaf == id { value } else { 0 },
                total: value,
            });
        }
    }
    Ok(points)
}

/// `(bucket, tag set, second)` of the latest upload in each bucket of every process (tag set)
/// of instant triple `process`: an in-use function's value in a bucket is what that upload
/// holds of it (nothing when it was freed by then), never a sum of uploads.
fn latest_uploads(
    conn: &Connection,
    sel: &Selection,
    process: &[String; 3],
    interval: i64,
) -> Result<HashSet<(i64, i64, i64)>, StoreError> {
    let one = Selection {
        language: Some(process[1].clone()),
        event_type: Some(process[2].clone()),
        ..sel.clone()
    };
    let mut out = HashSet::new();
    for p in instant::processes(conn, &one, Some(&[process[0].clone()]), None)? {
        for (bucket, at) in p.latest_per_bucket(conn, sel, Some(interval))? {
            out.insert((bucket, p.tagset_id, at));
        }
    }
    Ok(out)
}

/// The group name of each tag set of `process` under `dimension` (not the thread, which is
/// per stack).
fn group_names(
    conn: &Connection,
    process: &[String; 3],
    tagsets: &BTreeSet<i64>,
    dimension: Option<&Dimension>,
) -> Result<HashMap<i64, String>, StoreError> {
    let Some(d) = dimension.filter(|d| **d != Dimension::Thread) else {
        return Ok(HashMap::new());
    };
    let series: Vec<Series> = tagsets
        .iter()
        .map(|ts| Series {
            app_service: process[0].clone(),
            language: process[1].clone(),
            event_type: process[2].clone(),
            tagset_id: *ts,
            thread: String::new(),
        })
        .collect();
    let names = labels::labels(conn, &series, d)?;
    Ok(tagsets.iter().copied().zip(names).collect())
}

/// The thread of stack `id`.
fn thread_name(conn: &Connection, id: i64) -> Result<String, StoreError> {
    let text: String = conn
        .prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?;
    Ok(thread_of(&text).to_owned())
}
