//! Shape B: `functions` + `function_types` + `function_values` + `node_values` tables.
//!
//! Columns are located by name. `node_values.values`, the bulk of the body, is kept raw by serde
//! and then read by the integer-row scanner straight into the table's columns (no per-row or
//! per-cell allocation, no intermediate buffer); unusual rows fall back to serde. Rows may reference parents that come later (stacks are inserted
//! leaf-first); the tree builder handles that. `function_types` is optional (absent before v6.6.x).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use serde_json::value::RawValue;

use super::int_rows::{scan_int_rows, Scanned};
use super::num::deserialize_i64;
use crate::contract::kind::FrameKind;
use crate::tree::table::{NodeTable, NO_PARENT};

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow, default)]
    functions: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    function_types: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    function_values: Option<Columns<'a>>,
    #[serde(borrow, default)]
    node_values: Option<Columns<'a>>,
}

/// A `{columns, values}` table with the values left raw.
#[derive(Deserialize)]
pub(super) struct Columns<'a> {
    #[serde(default)]
    columns: Option<Vec<String>>,
    #[serde(borrow, default)]
    values: Option<&'a RawValue>,
}

/// A JSON array of equally long integer arrays, stored row-major in one vector.
#[derive(Debug, Default)]
struct FlatRows {
    width: usize,
    cells: Vec<i64>,
}

impl FlatRows {
    fn rows(&self) -> usize {
        self.cells.len().checked_div(self.width).unwrap_or(0)
    }
}

impl Columns<'_> {
    /// Feeds every row of `values` to `sink` and returns the row count (0 when absent). The
    /// fast scanner runs first; on anything unusual the sink restarts and serde reads the rows
    /// instead (and reports malformed ones precisely).
    fn read_rows(&self, sink: &mut impl RowSink) -> Result<usize, String> {
        let Some(raw) = self.values else { return Ok(0) };
        if raw.get() == "null" {
            return Ok(0);
        }
        if let Some(scanned) = scan_int_rows(raw.get().as_bytes(), |row| sink.row(row)) {
            return Ok(scanned.rows);
        }
        sink.restart();
        let flat: FlatRows = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        for row in flat.cells.chunks_exact(flat.width.max(1)) {
            sink.row(row);
        }
        Ok(flat.rows())
    }
}

/// Decodes a shape-B `result` object into a node table.
pub fn decode(text: &str) -> Result<NodeTable, String> {
    let wire: Wire = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(nodes) = wire.node_values else {
        return Ok(NodeTable::default());
    };
    let Some(values) = nodes
        .values
        .filter(|v| v.get() != "null" && v.get() != "[]")
    else {
        return Ok(NodeTable::default());
    };
    let mut reader = NodeRows::new(
        wire.functions.as_deref().unwrap_or_default(),
        wire.function_types.as_deref(),
        nodes.columns.as_deref(),
    )?;
    reader
        .table
        .reserve(values.get().len() / ROW_BYTES_ESTIMATE);
    let rows = nodes.read_rows(&mut reader)?;
    reader.finish(rows, wire.function_values.as_ref())
}

/// Reads `node_values` rows into a [`NodeTable`]: set up from the function tables and the
/// node columns, fed rows (by [`Columns::read_rows`] or the one-pass reader), then finished
/// with `function_values`.
pub(super) struct NodeRows {
    table: NodeTable,
    /// Interned id of every wire function id (wire ids may name the same string twice).
    ids: Vec<u32>,
    /// Positions of function_id, parent_node_id, self_value, total_value.
    cols: [usize; 4],
    /// Cells a row needs to have every column.
    needed: usize,
    column_count: usize,
    short_rows: usize,
}

impl NodeRows {
    /// Interns `functions` (kinds from `function_types` when given) and locates the columns.
    pub(super) fn new(
        functions: &[Cow<'_, str>],
        function_types: Option<&[Cow<'_, str>]>,
        columns: Option<&[String]>,
    ) -> Result<NodeRows, String> {
        let col = |name| index_of(columns, "node_values", name);
        let cols = [
            col("function_id")?,
            col("parent_node_id")?,
            col("self_value")?,
            col("total_value")?,
        ];
        let mut table = NodeTable::default();
        let ids: Vec<u32> = functions
            .iter()
            .map(|f| table.functions.intern(f))
            .collect();
        for (id, letter) in ids.iter().zip(function_types.unwrap_or_default()) {
            if let Some(kind) = FrameKind::from_type_letter(letter) {
                table.functions.set_kind(*id, kind);
            }
        }
        Ok(NodeRows {
            table,
            ids,
            needed: 1 + cols.iter().max().copied().unwrap_or(0),
            cols,
            column_count: columns.map_or(0, <[String]>::len),
            short_rows: 0,
        })
    }

    /// Reads rows with the fast scanner only, from the array at the start of `bytes`; `None`
    /// when it is not plain integer rows (nothing is kept then).
    pub(super) fn scan(&mut self, bytes: &[u8]) -> Option<Scanned> {
        // A row is at least `[f,p,s,t],` (10 bytes); real ones run 20–30. Reserving for the
        // typical size avoids copying the columns several times while they grow (an upper
        // bound of the array's length: the bytes after it are few).
        self.table.reserve(bytes.len() / ROW_BYTES_ESTIMATE);
        let scanned = scan_int_rows(bytes, |row| self.row(row));
        if scanned.is_none() {
            self.restart();
        }
        scanned
    }

    /// Checks what was read and adds the server's per-function sums.
    pub(super) fn finish(
        mut self,
        rows: usize,
        function_values: Option<&Columns<'_>>,
    ) -> Result<NodeTable, String> {
        if self.short_rows > 0 {
            return Err(format!(
                "`node_values` rows have fewer cells than its {} columns",
                self.column_count
            ));
        }
        if self.ids.is_empty() && rows > 0 {
            return Err("`node_values` has rows but `functions` is empty".to_string());
        }
        self.table.server_function_values = function_values
            .and_then(|fv| server_function_values(fv, &self.ids, self.table.functions.len()));
        Ok(self.table)
    }
}

/// Index of a named column, or an error naming the table and the missing column.
fn index_of(columns: Option<&[String]>, table: &str, name: &str) -> Result<usize, String> {
    let cols = columns.unwrap_or_default();
    cols.iter()
        .position(|c| c == name)
        .ok_or_else(|| format!("`{table}.columns` has no `{name}` column (it has {cols:?})"))
}

/// Receives the rows of a `values` table.
trait RowSink {
    /// Forget the rows received so far (the slow path starts over).
    fn restart(&mut self);
    /// One row's cells.
    fn row(&mut self, cells: &[i64]);
}

/// Appends `node_values` rows to the table, mapping functions to interned ids. A bad function
/// id keeps a placeholder row (so row indices stay valid) that the builder finds unreachable.
impl RowSink for NodeRows {
    fn restart(&mut self) {
        self.table.clear_rows();
        self.table.issues.bad_function_ids = 0;
        self.short_rows = 0;
    }

    fn row(&mut self, cells: &[i64]) {
        if cells.len() < self.needed {
            self.short_rows += 1;
            return;
        }
        let [c_func, c_parent, c_self, c_total] = self.cols;
        let Some(&func) = usize::try_from(cells[c_func])
            .ok()
            .and_then(|f| self.ids.get(f))
        else {
            self.table.issues.bad_function_ids += 1;
            self.table.push(0, UNKNOWN_PARENT, 0, 0);
            return;
        };
        let parent = match cells[c_parent] {
            -1 => NO_PARENT,
            // Indices past the table are caught by the builder (unreachable rows).
            p if (0..i64::from(UNKNOWN_PARENT)).contains(&p) => p as u32,
            _ => UNKNOWN_PARENT,
        };
        self.table.push(func, parent, cells[c_self], cells[c_total]);
    }
}

/// Sums `function_values` rows (one per wire function) per interned function.
struct FunctionValuesSink<'t> {
    ids: &'t [u32],
    cols: [usize; 2],
    out: Vec<(i64, i64)>,
    wire_row: usize,
}

impl RowSink for FunctionValuesSink<'_> {
    fn restart(&mut self) {
        self.out.iter_mut().for_each(|v| *v = (0, 0));
        self.wire_row = 0;
    }

    fn row(&mut self, cells: &[i64]) {
        let [c_self, c_total] = self.cols;
        if let (Some(&id), Some(&s), Some(&t)) = (
            self.ids.get(self.wire_row),
            cells.get(c_self),
            cells.get(c_total),
        ) {
            let slot = &mut self.out[id as usize];
            slot.0 = slot.0.saturating_add(s);
            slot.1 = slot.1.saturating_add(t);
        }
        self.wire_row += 1;
    }
}

/// Typical bytes per `node_values` row, for reserving the table up front.
const ROW_BYTES_ESTIMATE: usize = 24;

/// Parent placeholder for unknown parents; past any real row, so the builder drops it.
const UNKNOWN_PARENT: u32 = u32::MAX - 1;

/// Reads `function_values` (per wire function) into per-interned-function sums.
fn server_function_values(fv: &Columns, ids: &[u32], count: usize) -> Option<Vec<(i64, i64)>> {
    let columns = fv.columns.as_deref();
    let c_self = index_of(columns, "function_values", "self_value").ok()?;
    let c_total = index_of(columns, "function_values", "total_value").ok()?;
    let mut sink = FunctionValuesSink {
        ids,
        cols: [c_self, c_total],
        out: vec![(0, 0); count],
        wire_row: 0,
    };
    let rows = fv.read_rows(&mut sink).ok()?;
    (rows == ids.len()).then_some(sink.out)
}

impl<'de> Deserialize<'de> for FlatRows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(FlatRowsVisitor)
    }
}

struct FlatRowsVisitor;

impl<'de> Visitor<'de> for FlatRowsVisitor {
    type Value = FlatRows;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of integer rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FlatRows, A::Error> {
        let mut out = FlatRows::default();
        let mut row_index = 0usize;
        while let Some(len) = seq.next_element_seed(RowSeed(&mut out.cells))? {
            if row_index == 0 {
                out.width = len;
            } else if len != out.width {
                return Err(de::Error::custom(format!(
                    "row {row_index} has {len} cells but row 0 has {}",
                    out.width
                )));
            }
            row_index += 1;
        }
        if out.width == 0 && row_index > 0 {
            return Err(de::Error::custom("rows are empty arrays"));
        }
        Ok(out)
    }
}

/// Appends one row's cells to the flat buffer and yields the row's length.
struct RowSeed<'b>(&'b mut Vec<i64>);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row array of numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(v) = seq.next_element_seed(CellSeed)? {
            self.0.push(v);
            n += 1;
        }
        Ok(n)
    }
}

struct CellSeed;

impl<'de> DeserializeSeed<'de> for CellSeed {
    type Value = i64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<i64, D::Error> {
        deserialize_i64(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    #[test]
    fn columns_are_read_by_name_not_position() {
        let text = r#"{"functions":["root","a"],
            "node_values":{"columns":["total_value","self_value","parent_node_id","function_id"],
                           "values":[[5,0,-1,0],[5,5,0,1]]}}"#;
        let p = Profile::from_table(decode(text).unwrap());
        assert_eq!(p.node_count(), 2);
        assert_eq!(p.name(1), "a");
        assert_eq!(p.self_value(1), 5);
    }

    #[test]
    fn ragged_rows_and_missing_columns_are_specific_errors() {
        let ragged = r#"{"functions":["r"],"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":[[0,-1,0,0],[0,0]]}}"#;
        assert!(decode(ragged).unwrap_err().contains("row 1 has 2 cells"));
        let missing = r#"{"functions":["r"],"node_values":{"columns":["function_id","self_value","total_value"],"values":[[0,0,0]]}}"#;
        assert!(decode(missing).unwrap_err().contains("parent_node_id"));
    }

    #[test]
    fn bad_function_ids_and_unknown_parents_are_counted() {
        let text = r#"{"functions":["r","a"],"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],
            "values":[[0,-1,0,3],[7,0,1,1],[1,0,1,1],[1,42,1,1]]}}"#;
        let table = decode(text).unwrap();
        assert_eq!(table.issues.bad_function_ids, 1);
        let p = Profile::from_table(table);
        assert_eq!(p.node_count(), 2);
        assert_eq!(p.warnings().bad_function_ids, 1);
        assert_eq!(p.warnings().unreachable_rows, 1);
    }

    #[test]
    fn all_null_members_are_an_empty_table() {
        let text = r#"{"functions":null,"function_types":null,"function_values":{"columns":null,"values":null},"node_values":{"columns":null,"values":null}}"#;
        assert!(decode(text).unwrap().is_empty());
    }
}
