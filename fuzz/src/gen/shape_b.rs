//! Near-valid shape-B answers: function tables, `function_types` letters, `function_values`,
//! and `node_values` whose columns are permuted, missing, repeated or padded and whose rows
//! reference functions and parents in and out of range (cycles, orphans, leaf-first order),
//! with ragged rows and every awkward number.

use arbitrary::Arbitrary;

use super::{apply_edits, key, string, Edit, Envelope, Name, Num};

/// The four columns a node row needs.
const NODE_COLUMNS: [&str; 4] = ["function_id", "parent_node_id", "self_value", "total_value"];
/// Padding columns added by the slow rendering: rows wider than the integer scanner's limit
/// (16 cells) go to serde, and extra columns mean nothing to the decoder.
const SLOW_PADDING: usize = 17;

/// A `function_types` entry.
#[derive(Arbitrary, Debug, Clone)]
pub enum TypeLetter {
    Known(u8),
    Text(String),
}

/// A cell that references a row or function: mostly in range, sometimes anything.
#[derive(Arbitrary, Debug, Clone)]
pub enum Ref {
    Index(u8),
    MinusOne,
    Any(Num),
}

/// One `node_values` row.
#[derive(Arbitrary, Debug, Clone)]
pub struct Row {
    function: Ref,
    parent: Ref,
    self_value: Num,
    total_value: Num,
    /// Extra cells: rows of different lengths are ragged.
    extra: Vec<Num>,
}

/// How `node_values.values` is written.
#[derive(Arbitrary, Debug, Clone)]
pub enum Values {
    Rows,
    Null,
    Missing,
    Other(Num),
}

/// A whole answer.
#[derive(Arbitrary, Debug, Clone)]
pub struct Answer {
    envelope: Envelope,
    functions: Option<Vec<Name>>,
    function_types: Option<Vec<TypeLetter>>,
    /// `function_values` rows, `(self, total)`; the flag drops the `total_value` column.
    function_values: Option<(Vec<(Num, Num)>, bool)>,
    /// Column order: a rotation and a swap of the four node columns.
    rotate: u8,
    swap: bool,
    /// Drops one node column (0..4), if in range.
    drop_column: u8,
    /// Padding columns in the fast rendering too.
    padding: u8,
    values: Values,
    rows: Vec<Row>,
    /// `node_values` before `functions` (the one-pass reader leaves that to serde).
    node_values_first: bool,
    edits: Vec<Edit>,
}

impl Answer {
    /// The answer's body; `slow` escapes keys and pads rows past the integer scanner's width,
    /// which is the same answer to a JSON parser but sends every reader to its serde fallback.
    pub fn render(&self, slow: bool) -> Vec<u8> {
        let mut members: Vec<String> = Vec::new();
        let mut member = |name: &str, value: String| {
            let mut m = String::new();
            key(&mut m, name, slow);
            m.push_str(&value);
            members.push(m);
        };
        if let Some(functions) = &self.functions {
            member("functions", list(functions, |n, out| n.write(out)));
        }
        if let Some(types) = &self.function_types {
            member("function_types", list(types, write_type));
        }
        if let Some((rows, no_total)) = &self.function_values {
            member("function_values", function_values(rows, *no_total, slow));
        }
        member("node_values", self.node_values(slow));
        if self.node_values_first {
            members.rotate_right(1);
        }
        let result = format!("{{{}}}", members.join(","));
        let mut bytes = self.envelope.wrap(&result, slow).into_bytes();
        if !slow {
            apply_edits(&mut bytes, &self.edits);
        }
        bytes
    }

    /// Whether byte edits make the two renderings incomparable.
    pub fn edited(&self) -> bool {
        !self.edits.is_empty()
    }

    fn node_values(&self, slow: bool) -> String {
        let mut columns: Vec<&str> = NODE_COLUMNS.to_vec();
        columns.rotate_left(usize::from(self.rotate) % 4);
        if self.swap {
            columns.swap(0, 3);
        }
        if usize::from(self.drop_column) < columns.len() {
            columns.remove(usize::from(self.drop_column));
        }
        let pad = usize::from(self.padding % 4) + if slow { SLOW_PADDING } else { 0 };
        let mut out = String::from("{");
        key(&mut out, "columns", slow);
        let names: Vec<String> = columns
            .iter()
            .map(|c| (*c).to_string())
            .chain((0..pad).map(|i| format!("pad{i}")))
            .collect();
        out.push_str(&serde_json::Value::from(names).to_string());
        match &self.values {
            Values::Missing => {}
            Values::Null => {
                out.push(',');
                key(&mut out, "values", slow);
                out.push_str("null");
            }
            Values::Other(n) => {
                out.push(',');
                key(&mut out, "values", slow);
                n.write(&mut out);
            }
            Values::Rows => {
                out.push(',');
                key(&mut out, "values", slow);
                let rows = self.rows.iter().map(|r| self.row(r, &columns, pad));
                out.push_str(&format!("[{}]", rows.collect::<Vec<_>>().join(",")));
            }
        }
        out.push('}');
        out
    }

    /// A row's cells in column order, then the extras and `pad` zero cells.
    fn row(&self, row: &Row, columns: &[&str], pad: usize) -> String {
        let mut out = String::from("[");
        let mut cells = 0;
        let mut cell = |out: &mut String, write: &dyn Fn(&mut String)| {
            if cells > 0 {
                out.push(',');
            }
            write(out);
            cells += 1;
        };
        let functions = self.functions.as_ref().map_or(0, Vec::len);
        for column in columns {
            match *column {
                "function_id" => cell(&mut out, &|o| write_ref(&row.function, functions, o)),
                "parent_node_id" => cell(&mut out, &|o| write_ref(&row.parent, self.rows.len(), o)),
                "self_value" => cell(&mut out, &|o| row.self_value.write(o)),
                _ => cell(&mut out, &|o| row.total_value.write(o)),
            }
        }
        for extra in &row.extra {
            cell(&mut out, &|o| extra.write(o));
        }
        for _ in 0..pad {
            cell(&mut out, &|o| o.push('0'));
        }
        out.push(']');
        out
    }
}

fn list<T>(items: &[T], write: impl Fn(&T, &mut String)) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(item, &mut out);
    }
    out.push(']');
    out
}

fn write_type(letter: &TypeLetter, out: &mut String) {
    const LETTERS: [&str; 10] = ["H", "A", "K", "L", "O", "T", "P", "C", "?", ""];
    match letter {
        TypeLetter::Known(i) => string(out, LETTERS[usize::from(*i) % LETTERS.len()]),
        TypeLetter::Text(s) => string(out, s),
    }
}

fn write_ref(r: &Ref, len: usize, out: &mut String) {
    match r {
        // One past the end now and then: an index just out of range.
        Ref::Index(k) => out.push_str(&(usize::from(*k) % (len + 1)).to_string()),
        Ref::MinusOne => out.push_str("-1"),
        Ref::Any(n) => n.write(out),
    }
}

fn function_values(rows: &[(Num, Num)], no_total: bool, slow: bool) -> String {
    let mut out = String::from("{");
    key(&mut out, "columns", slow);
    out.push_str(if no_total {
        "[\"self_value\"]"
    } else {
        "[\"self_value\",\"total_value\"]"
    });
    out.push(',');
    key(&mut out, "values", slow);
    let pad = if slow { SLOW_PADDING } else { 0 };
    out.push_str(&list(rows, |(s, t), o| {
        o.push('[');
        s.write(o);
        if !no_total {
            o.push(',');
            t.write(o);
        }
        for _ in 0..pad {
            o.push_str(",0");
        }
        o.push(']');
    }));
    out.push('}');
    out
}
