//! Reading one function's lines on SQLite (`POST /v1/profile/function_lines`): the whole
//! ten-minute buckets of `lines_10m` for the tag-set series the selection covers, and the
//! samples with lines at the range's edges (or over the whole range, when the filter names a
//! per-sample field). Both are per `frames_at` id, named once at the end.

use std::collections::HashMap;

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{FunctionLinesQuery, LineRow};
use embers_model::contract::selection::Selection;
use rusqlite::Connection;

use super::BUCKET;
use crate::store::fn_rollup::{horizon, stored_id};
use crate::store::functions::{function_id, plan};
use crate::store::sql::{common_where, conditions_where, needs_samples, series_selection, Sql};
use crate::store::StoreError;

/// Self and total per `frames_at` id.
type FrameSums = HashMap<i64, (i64, i64)>;

/// The function's lines over `q`'s selection, unsorted (the contract's finish orders them).
pub(crate) fn function_lines(
    conn: &Connection,
    q: &FunctionLinesQuery,
) -> Result<Vec<LineRow>, StoreError> {
    let places = frames_of(conn, &q.function)?;
    if places.is_empty() {
        return Ok(Vec::new());
    }
    let sel = &q.selection;
    let mut sums = FrameSums::new();
    if needs_samples(&sel.filter) {
        read_samples(
            conn,
            sel,
            &places,
            &[(sel.time_start, sel.time_end)],
            &mut sums,
        )?;
    } else {
        let plan = plan(sel.time_start, sel.time_end, horizon(conn)?, &[BUCKET]);
        let series = series_of(conn, sel)?;
        read_buckets(conn, &series, &places, &plan.buckets, &mut sums)?;
        read_samples(conn, sel, &places, &plan.samples, &mut sums)?;
    }
    Ok(sums
        .into_iter()
        .filter_map(|(id, (self_value, total))| {
            let (file, line) = places.get(&id)?;
            Some(LineRow {
                file: file.clone(),
                line: *line,
                self_value: u64::try_from(self_value).unwrap_or(0),
                total_value: u64::try_from(total).unwrap_or(0),
            })
        })
        .collect())
}

/// The `frames_at` rows of `function`: id → (file, line).
fn frames_of(conn: &Connection, function: &str) -> Result<HashMap<i64, (String, u32)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.id, p.path, f.line FROM profile.frames_at AS f \
         JOIN profile.files AS p ON p.id = f.file_id WHERE f.function_id = ?1",
    )?;
    let id = stored_id(function_id(function));
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The tag-set function series `sel` covers (every process but `Total` when it names none).
fn series_of(conn: &Connection, sel: &Selection) -> Result<Vec<i64>, StoreError> {
    let mut sql = Sql::new("SELECT id FROM profile.function_series WHERE tagset_id != 0");
    match &sel.app_service {
        Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
        None => sql
            .push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned()),
    };
    conditions_where(&mut sql, &series_selection(sel));
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let rows = stmt.query_map(sql.params(), |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Adds the stored sums of `places` in whole buckets `(level, first, last)` of `series`.
fn read_buckets(
    conn: &Connection,
    series: &[i64],
    places: &HashMap<i64, (String, u32)>,
    buckets: &[(i64, i64, i64)],
    sums: &mut FrameSums,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT frame_id, self_value, total_value FROM profile.lines_10m \
         WHERE series_id = ?1 AND time >= ?2 AND time <= ?3",
    )?;
    for &(_, first, last) in buckets {
        for s in series {
            let mut rows = stmt.query(rusqlite::params![s, first, last])?;
            while let Some(row) = rows.next()? {
                let frame: i64 = row.get(0)?;
                if places.contains_key(&frame) {
                    add(sums, frame, row.get(1)?, row.get(2)?);
                }
            }
        }
    }
    Ok(())
}

fn add(sums: &mut FrameSums, frame: i64, self_value: i64, total: i64) {
    let sum = sums.entry(frame).or_default();
    sum.0 = sum.0.saturating_add(self_value);
    sum.1 = sum.1.saturating_add(total);
}

/// Adds the samples with lines of `ranges` in `sel`: per line stack, then each stack's frames
/// of the function once (self for the last frame).
fn read_samples(
    conn: &Connection,
    sel: &Selection,
    places: &HashMap<i64, (String, u32)>,
    ranges: &[(i64, i64)],
    sums: &mut FrameSums,
) -> Result<(), StoreError> {
    let mut per_stack: HashMap<i64, i64> = HashMap::new();
    for &(from, to) in ranges {
        let one = Selection {
            time_start: from,
            time_end: to,
            ..sel.clone()
        };
        // The view has no line column: the samples' own row, by its id.
        let mut sql = Sql::new(
            "SELECT (SELECT s.line_stack_id FROM profile.samples AS s WHERE s.id = _id) AS ls, \
             profile_value FROM profile.in_process WHERE ",
        );
        common_where(&mut sql, &one);
        match &sel.app_service {
            Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
            None => sql
                .push(" AND app_service != ")
                .bind(TOTAL_APP_SERVICE.to_owned()),
        };
        sql.push(" AND ls IS NOT NULL");
        let mut stmt = conn.prepare_cached(&sql.text)?;
        let mut rows = stmt.query(sql.params())?;
        while let Some(row) = rows.next()? {
            let sum = per_stack.entry(row.get(0)?).or_default();
            *sum = sum.saturating_add(row.get::<_, i64>(1)?);
        }
    }
    let mut text = conn.prepare_cached("SELECT frames FROM profile.line_stacks WHERE id = ?1")?;
    for (stack, value) in per_stack {
        let frames: String = text.query_row([stack], |r| r.get(0))?;
        let ids: Vec<i64> = frames.split(';').filter_map(|f| f.parse().ok()).collect();
        let mut seen: Vec<i64> = Vec::new();
        for id in ids.iter().filter(|id| places.contains_key(id)) {
            if !seen.contains(id) {
                seen.push(*id);
                add(sums, *id, 0, value);
            }
        }
        if let Some(leaf) = ids.last().filter(|id| places.contains_key(id)) {
            add(sums, *leaf, value, 0);
        }
    }
    Ok(())
}
