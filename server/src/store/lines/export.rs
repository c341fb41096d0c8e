//! A selection's stacks with their source lines (SQLite), for the pprof export: every sample
//! summed per (stack, line stack), each frame's line read from `frames_at`; `None` when no
//! selected sample has lines (the export then writes the tree as before).

use std::collections::HashMap;

use embers_model::contract::detail::SourceLine;
use embers_model::contract::selection::Selection;
use embers_model::export::pprof_lines::StackLines;
use rusqlite::{Connection, OptionalExtension};

use crate::store::sql::{common_where, Sql};
use crate::store::StoreError;

/// The stacks of `sel` (one process) with their lines, or `None` when none has lines.
pub(crate) fn line_samples(
    conn: &Connection,
    sel: &Selection,
) -> Result<Option<Vec<StackLines>>, StoreError> {
    let Some(app) = &sel.app_service else {
        return Ok(None);
    };
    let mut sql = Sql::new(
        "SELECT stack_id, (SELECT s.line_stack_id FROM profile.samples AS s WHERE s.id = _id), \
         profile_value FROM profile.in_process WHERE ",
    );
    common_where(&mut sql, sel);
    sql.push(" AND app_service = ").bind(app.clone());
    let mut sums: HashMap<(i64, Option<i64>), i64> = HashMap::new();
    {
        let mut stmt = conn.prepare_cached(&sql.text)?;
        let mut rows = stmt.query(sql.params())?;
        while let Some(row) = rows.next()? {
            let sum = sums.entry((row.get(0)?, row.get(1)?)).or_default();
            *sum = sum.saturating_add(row.get::<_, i64>(2)?);
        }
    }
    if sums.keys().all(|(_, lines)| lines.is_none()) {
        return Ok(None);
    }
    let mut stack_text =
        conn.prepare_cached("SELECT location_str FROM profile.stacks WHERE id = ?1")?;
    let mut line_text =
        conn.prepare_cached("SELECT frames FROM profile.line_stacks WHERE id = ?1")?;
    let mut frame = conn.prepare_cached(
        "SELECT p.path, f.line FROM profile.frames_at AS f \
         JOIN profile.files AS p ON p.id = f.file_id WHERE f.id = ?1",
    )?;
    let mut places: HashMap<i64, Option<SourceLine>> = HashMap::new();
    let mut out = Vec::with_capacity(sums.len());
    for ((stack, lines), value) in sums {
        let text: String = stack_text.query_row([stack], |r| r.get(0))?;
        let mut at = Vec::new();
        if let Some(id) = lines {
            let ids: String = line_text.query_row([id], |r| r.get(0))?;
            for id in ids.split(';').filter_map(|f| f.parse::<i64>().ok()) {
                if let std::collections::hash_map::Entry::Vacant(e) = places.entry(id) {
                    let place = frame
                        .query_row([id], |r| {
                            Ok(SourceLine {
                                file: r.get(0)?,
                                line: r.get(1)?,
                            })
                        })
                        .optional()?;
                    e.insert(place);
                }
                at.push(places.get(&id).cloned().flatten());
            }
        }
        out.push((text, at, u64::try_from(value).unwrap_or(0)));
    }
    out.sort_unstable_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    Ok(Some(out))
}
