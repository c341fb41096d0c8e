//! Source lines on ClickHouse (`POST /v1/profile/function_lines`, the pprof export's `Line`s):
//! each sample row names its line-level stack (`line_stack_id`, 0 without lines) beside its
//! stack, and `line_stacks` holds each such stack once with every frame's function, file and
//! line. A function's lines over a selection are one aggregation of the selected rows whose
//! line stack runs the function (a column scan, as ProfileTracing is on ClickHouse, rather
//! than SQLite's ten-minute sums: the filter's tag conditions apply per row alike), then each
//! line stack's frames of the function counted once, self for its last frame — the rule of
//! the SQLite store (`store::lines`), so both answer the same table.

use std::collections::HashMap;

use clickhouse::Row;
use embers_model::contract::detail::{DetailError, SourceLine};
use embers_model::contract::explore::{FunctionLinesQuery, LineRow};
use embers_model::contract::selection::Selection;
use embers_model::export::pprof_lines::StackLines;
use serde::Deserialize;

use super::row_binary::RowBinary;
use super::sql::{app_condition, common_where, id_list, ChSql};
use super::{ch_err, ClickHouseStore};
use crate::store::{Batch, StoreError};

/// Line stack ids per lookup statement (each id is about 21 characters of SQL).
const IDS_PER_LOOKUP: usize = 20_000;

/// Refuses a sample whose lines are neither none nor one per frame (as the SQLite store does).
pub(super) fn check_details(batches: &[Batch]) -> Result<(), StoreError> {
    for s in batches.iter().flat_map(|b| &b.samples) {
        let Some(d) = s.detail.as_deref().filter(|d| !d.lines.is_empty()) else {
            continue;
        };
        let frames = s.stack.split(';').count();
        if d.lines.len() != frames {
            let e = DetailError::LineCount {
                lines: d.lines.len(),
                frames,
            };
            return Err(StoreError::Invalid(e.to_string()));
        }
    }
    Ok(())
}

/// The id of the line stack of `stack` at `lines` (one per frame): the xxh3 of both, never 0;
/// 0 when no frame has a line.
pub(super) fn line_stack_id(stack: &str, lines: &[Option<SourceLine>]) -> u64 {
    if lines.iter().all(Option::is_none) {
        return 0;
    }
    // One buffer hashed once: this runs for every sample with lines, and one call over the
    // bytes costs less than a streaming update per frame.
    let mut bytes = Vec::with_capacity(stack.len() + lines.len() * 48);
    bytes.extend_from_slice(stack.as_bytes());
    for line in lines {
        match line {
            // Separators no file name or stack holds, so distinct lists hash apart.
            Some(l) => {
                bytes.push(0xff);
                bytes.extend_from_slice(l.file.as_bytes());
                bytes.push(0xfe);
                bytes.extend_from_slice(&l.line.to_le_bytes());
            }
            None => bytes.push(0xfd),
        }
    }
    xxhash_rust::xxh3::xxh3_64(&bytes).max(1)
}

/// A `line_stacks` row: per frame of `stack`, its name, file and line (`''`, 0 unknown).
pub(super) fn encode_line_stack(
    out: &mut RowBinary,
    id: u64,
    stack: &str,
    lines: &[Option<SourceLine>],
) {
    out.u64(id);
    let names: Vec<&str> = stack.split(';').collect();
    out.strings(names.iter().copied());
    out.strings(
        lines
            .iter()
            .map(|l| l.as_ref().map_or("", |l| l.file.as_str())),
    );
    out.array(lines, |o, l| o.u32(l.as_ref().map_or(0, |l| l.line)));
}

#[derive(Debug, Row, Deserialize)]
struct IdSum {
    id: u64,
    total: i64,
}

#[derive(Debug, Row, Deserialize)]
struct LineStack {
    id: u64,
    functions: Vec<String>,
    files: Vec<String>,
    lines: Vec<u32>,
}

#[derive(Debug, Row, Deserialize)]
struct StackLineSum {
    stack: u64,
    lines: u64,
    total: i64,
}

/// Self and total per (file, line) of one function.
type PlaceSums = HashMap<(String, u32), (i64, i64)>;

/// Adds `value` of a line stack to the sums of `function`'s places in it: total once per
/// distinct place, self when its last frame is the function at a known line.
fn add_stack(sums: &mut PlaceSums, ls: &LineStack, function: &str, value: i64) {
    let mut seen: Vec<(&str, u32)> = Vec::new();
    let n = ls.functions.len().min(ls.files.len()).min(ls.lines.len());
    for i in 0..n {
        let place = (ls.files[i].as_str(), ls.lines[i]);
        if ls.functions[i] != function || place.1 == 0 || seen.contains(&place) {
            continue;
        }
        seen.push(place);
        let sum = sums.entry((place.0.to_owned(), place.1)).or_default();
        sum.1 = sum.1.saturating_add(value);
    }
    if let Some(i) = n.checked_sub(1) {
        if ls.functions[i] == function && ls.lines[i] != 0 {
            let sum = sums.entry((ls.files[i].clone(), ls.lines[i])).or_default();
            sum.0 = sum.0.saturating_add(value);
        }
    }
}

impl ClickHouseStore {
    /// One function's lines over `q`'s selection, unsorted.
    pub fn line_sums(&self, q: &FunctionLinesQuery) -> Result<Vec<LineRow>, StoreError> {
        let sel = &q.selection;
        let mut sql = ChSql::new("SELECT line_stack_id AS id, sum(profile_value) AS total FROM ");
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, sel, &self.table_named("tagsets"));
        app_condition(&mut sql, sel, true);
        // `line_stacks` is whole on every node: each shard answers the condition locally.
        sql.push(" AND line_stack_id IN (SELECT id FROM ")
            .push(&self.table_named("line_stacks"))
            .push(" WHERE has(functions, ")
            .bind(q.function.clone())
            .push(")) GROUP BY line_stack_id");
        let found: Vec<IdSum> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        let stacks = self.line_stacks(found.iter().map(|s| s.id))?;
        let mut sums = PlaceSums::new();
        for row in &found {
            let ls = stacks.get(&row.id).ok_or_else(|| missing(row.id))?;
            add_stack(&mut sums, ls, &q.function, row.total);
        }
        Ok(sums
            .into_iter()
            .map(|((file, line), (self_value, total))| LineRow {
                file,
                line,
                self_value: u64::try_from(self_value).unwrap_or(0),
                total_value: u64::try_from(total).unwrap_or(0),
            })
            .collect())
    }

    /// The stacks of `sel` (one process) with their source lines, for the pprof export;
    /// `None` when no selected sample has lines.
    pub fn line_samples(&self, sel: &Selection) -> Result<Option<Vec<StackLines>>, StoreError> {
        let Some(app) = &sel.app_service else {
            return Ok(None);
        };
        let mut sql = ChSql::new(
            "SELECT stack_id AS stack, line_stack_id AS lines, sum(profile_value) AS total FROM ",
        );
        sql.push(&self.table()).push(" WHERE ");
        common_where(&mut sql, sel, &self.table_named("tagsets"));
        sql.push(" AND app_service = ").bind(app.clone());
        sql.push(" GROUP BY stack_id, line_stack_id");
        let found: Vec<StackLineSum> = self
            .block_on(sql.query(self.client()).fetch_all())
            .map_err(ch_err)?;
        if found.iter().all(|r| r.lines == 0) {
            return Ok(None);
        }
        let texts = self.stack_texts(found.iter().map(|r| r.stack), &mut Vec::new())?;
        let stacks = self.line_stacks(found.iter().map(|r| r.lines).filter(|&id| id != 0))?;
        let mut out = Vec::with_capacity(found.len());
        for row in found {
            let text = texts.get(&row.stack).ok_or_else(|| {
                StoreError::ClickHouse(format!(
                    "stack {} is missing from the stacks table",
                    row.stack
                ))
            })?;
            let at = match row.lines {
                0 => Vec::new(),
                id => {
                    let ls = stacks.get(&id).ok_or_else(|| missing(id))?;
                    let places = ls.files.iter().zip(&ls.lines);
                    places
                        .map(|(file, &line)| {
                            (line != 0).then(|| SourceLine {
                                file: file.clone(),
                                line,
                            })
                        })
                        .collect()
                }
            };
            out.push((text.clone(), at, u64::try_from(row.total).unwrap_or(0)));
        }
        out.sort_unstable_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        Ok(Some(out))
    }

    /// The line stacks `ids`, by id.
    fn line_stacks(
        &self,
        ids: impl Iterator<Item = u64>,
    ) -> Result<HashMap<u64, LineStack>, StoreError> {
        let mut ids: Vec<u64> = ids.collect();
        ids.sort_unstable();
        ids.dedup();
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_LOOKUP) {
            let mut sql = ChSql::new("SELECT id, functions, files, lines FROM ");
            // Integers the store produced: formatted, not request data.
            sql.push(&self.table_named("line_stacks"))
                .push(" WHERE id IN (")
                .push(&id_list(chunk))
                .push(") LIMIT 1 BY id");
            let rows: Vec<LineStack> = self
                .block_on(
                    sql.query(self.client())
                        .with_setting("max_query_size", "2000000")
                        .fetch_all(),
                )
                .map_err(ch_err)?;
            out.extend(rows.into_iter().map(|r| (r.id, r)));
        }
        Ok(out)
    }
}

fn missing(id: u64) -> StoreError {
    StoreError::ClickHouse(format!(
        "line stack {id} is missing from the line_stacks table"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32) -> Option<SourceLine> {
        Some(SourceLine {
            file: file.into(),
            line,
        })
    }

    #[test]
    fn a_line_stack_is_named_by_its_stack_and_lines() {
        let a = line_stack_id("main;work", &[at("m.c", 3), at("m.c", 9)]);
        assert_ne!(a, 0);
        assert_eq!(a, line_stack_id("main;work", &[at("m.c", 3), at("m.c", 9)]));
        assert_ne!(
            a,
            line_stack_id("main;work", &[at("m.c", 3), at("m.c", 10)])
        );
        assert_ne!(a, line_stack_id("main;work", &[None, at("m.c", 9)]));
        assert_ne!(a, line_stack_id("main;wor", &[at("m.c", 3), at("km.c", 9)]));
        assert_eq!(line_stack_id("main;work", &[None, None]), 0);
        assert_eq!(line_stack_id("main;work", &[]), 0);
    }

    #[test]
    fn a_function_s_places_count_once_per_stack_and_self_at_the_leaf() {
        let ls = LineStack {
            id: 1,
            functions: ["main", "work", "work", "work"].map(String::from).to_vec(),
            files: ["m.c", "m.c", "m.c", ""].map(String::from).to_vec(),
            lines: vec![3, 9, 9, 0],
        };
        let mut sums = PlaceSums::new();
        add_stack(&mut sums, &ls, "work", 5);
        // Recursion at one line counts once; the unknown leaf line adds no self.
        assert_eq!(sums, HashMap::from([(("m.c".to_owned(), 9), (0, 5))]));
        let leaf = LineStack {
            lines: vec![3, 9, 9, 11],
            files: ["m.c"; 4].map(String::from).to_vec(),
            ..ls
        };
        add_stack(&mut sums, &leaf, "work", 2);
        assert_eq!(sums[&("m.c".to_owned(), 9)], (0, 7));
        assert_eq!(sums[&("m.c".to_owned(), 11)], (2, 2));
    }
}
