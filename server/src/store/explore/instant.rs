//! Explore points of instant event types (in-use memory, goroutines): each series' summed
//! points are replaced by the value of its process's latest upload in each bucket (the whole
//! range for services, each bucket for a timeline: the value at the bucket's end), summed over
//! processes by the callers as any other points. See [`crate::store::instant`].

use std::collections::HashMap;

use rusqlite::Connection;

use super::super::instant::{may_match, processes, Process};
use super::super::sql::needs_samples;
use super::super::StoreError;
use super::read::{stack_thread, Point, Points, Read, Series};
use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};

/// Replace the points of instant series in `out` by their processes' latest uploads.
pub(super) fn replace(conn: &Connection, r: &Read<'_>, out: &mut Points) -> Result<(), StoreError> {
    if !may_match(r.selection) {
        return Ok(());
    }
    let series = &out.series;
    out.points
        .retain(|p| !is_instant(&series[p.series].event_type));
    let named = r.selection.app_service.clone().map(|a| vec![a]);
    let skip = (named.is_none() && r.skip_total).then_some(TOTAL_APP_SERVICE);
    let mut index: HashMap<Series, usize> = out
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone(), i))
        .collect();
    let mut threads: HashMap<i64, String> = HashMap::new();
    for process in processes(conn, r.selection, named.as_deref(), skip)? {
        for (bucket, sums) in uploads(conn, r, &process, &mut threads)? {
            for (thread, (value, samples)) in sums {
                let key = Series {
                    app_service: process.names[0].clone(),
                    language: process.names[1].clone(),
                    event_type: process.names[2].clone(),
                    tagset_id: process.tagset_id,
                    thread,
                };
                let next = out.series.len();
                let series = *index.entry(key.clone()).or_insert(next);
                if series == next {
                    out.series.push(key);
                }
                out.points.push(Point {
                    time: bucket,
                    series,
                    value,
                    samples,
                });
            }
        }
    }
    Ok(())
}

/// `thread -> (value, samples)` of one upload.
type ThreadSums = HashMap<String, (i64, i64)>;

/// The latest upload of `process` in each bucket, summed per thread: `(bucket, thread ->
/// (value, samples))`; from the rollup when the filter has series conditions only, else from
/// each upload's samples.
fn uploads(
    conn: &Connection,
    r: &Read<'_>,
    process: &Process,
    threads: &mut HashMap<i64, String>,
) -> Result<Vec<(i64, ThreadSums)>, StoreError> {
    let sum_into = |out: &mut HashMap<String, (i64, i64)>, thread: String, value, samples| {
        let sum: &mut (i64, i64) = out.entry(thread).or_default();
        sum.0 = sum.0.saturating_add(value);
        sum.1 = sum.1.saturating_add(samples);
    };
    let mut all = Vec::new();
    if !needs_samples(&r.selection.filter) {
        for (bucket, _, rows) in process.rollup_uploads(conn, r.selection, r.interval)? {
            let mut out = HashMap::new();
            for (thread, value, samples) in rows {
                sum_into(&mut out, thread, value, samples);
            }
            all.push((bucket, out));
        }
        return Ok(all);
    }
    for (bucket, at) in process.latest_per_bucket(conn, r.selection, r.interval)? {
        let mut out = HashMap::new();
        for (stack, value, samples) in process.upload(conn, r.selection, at)? {
            let thread = stack_thread(conn, threads, stack)?;
            sum_into(&mut out, thread, value, samples);
        }
        all.push((bucket, out));
    }
    Ok(all)
}
