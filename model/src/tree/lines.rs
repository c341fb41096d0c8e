//! The source lines of a profile's functions, summed: for each function, each `(file, line)` it
//! was executing with its self value (samples whose leaf frame was this line) and its total
//! (samples with this function at this line anywhere on their stack, counted once per sample).
//! A file reader builds it beside the tree ([`LineSums`], e.g. pprof's `Line` records); the
//! viewer's Source panel reads one function's rows ([`LineTable::of`]). Lines are detail below
//! a frame, never frames: the tree is the same with or without them.

use rustc_hash::FxHashMap;

use super::table::Interner;

/// One line of one function, summed over the profile.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineStat {
    /// The file as the producer names it (a build path, a package path).
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    /// Value of the samples that were executing this line themselves.
    pub self_value: u64,
    /// Value of the samples with this line on their stack.
    pub total_value: u64,
}

/// Every function's lines, each function's rows hottest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineTable {
    /// Function names, sorted (looked up by binary search).
    functions: Vec<Box<str>>,
    /// Function `i`'s rows are `rows[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    files: Vec<Box<str>>,
    rows: Vec<Row>,
    /// Why the table is empty, in words, when the reader knows (no `Line.line` in the file, a
    /// format whose lines are not read).
    pub why_none: Option<String>,
}

/// A row: a file index, a line and its sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Row {
    file: u32,
    line: u32,
    self_value: u64,
    total_value: u64,
}

impl LineTable {
    /// A table without lines, saying why.
    pub fn none(why: impl Into<String>) -> LineTable {
        LineTable {
            why_none: Some(why.into()),
            ..LineTable::default()
        }
    }

    /// Whether no function has a line.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// How many functions have lines.
    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    /// The lines of `function`, hottest first (empty when it has none).
    pub fn of(&self, function: &str) -> Vec<LineStat> {
        let Ok(i) = self.functions.binary_search_by(|f| (**f).cmp(function)) else {
            return Vec::new();
        };
        let range = self.starts[i] as usize..self.starts[i + 1] as usize;
        self.rows[range]
            .iter()
            .map(|r| LineStat {
                file: self.files[r.file as usize].to_string(),
                line: r.line,
                self_value: r.self_value,
                total_value: r.total_value,
            })
            .collect()
    }

    /// Every sum mapped through `f` (a unit's scale; it keeps the order).
    pub fn scale(&mut self, f: impl Fn(u64) -> u64) {
        for r in &mut self.rows {
            r.self_value = f(r.self_value);
            r.total_value = f(r.total_value);
        }
    }

    /// The table as flat columns (what a worker sends the page).
    pub fn into_parts(self) -> LineParts {
        let mut texts = Vec::new();
        let mut text_ends = Vec::new();
        for t in self.functions.iter().chain(self.files.iter()) {
            texts.extend_from_slice(t.as_bytes());
            text_ends.push(texts.len() as u32);
        }
        LineParts {
            texts,
            text_ends,
            function_count: self.functions.len() as u32,
            starts: self.starts,
            file: self.rows.iter().map(|r| r.file).collect(),
            line: self.rows.iter().map(|r| r.line).collect(),
            self_value: self.rows.iter().map(|r| r.self_value).collect(),
            total_value: self.rows.iter().map(|r| r.total_value).collect(),
            why_none: self.why_none,
        }
    }

    /// The table back from its columns, every index checked.
    pub fn from_parts(p: LineParts) -> Result<LineTable, LinePartsError> {
        let mut texts = Vec::with_capacity(p.text_ends.len());
        let mut at = 0usize;
        for &end in &p.text_ends {
            let bytes = p
                .texts
                .get(at..end as usize)
                .ok_or(LinePartsError("text"))?;
            let text = std::str::from_utf8(bytes).map_err(|_| LinePartsError("text"))?;
            texts.push(Box::<str>::from(text));
            at = end as usize;
        }
        let n = p.function_count as usize;
        if n > texts.len() || p.starts.len() != if n == 0 { 0 } else { n + 1 } {
            return Err(LinePartsError("functions"));
        }
        let files = texts.split_off(n);
        let len = p.file.len();
        let same = [p.line.len(), p.self_value.len(), p.total_value.len()];
        if same.iter().any(|&l| l != len)
            || p.starts.windows(2).any(|w| w[0] > w[1])
            || p.starts.last().is_some_and(|&l| l as usize != len)
            || p.file.iter().any(|&f| f as usize >= files.len())
        {
            return Err(LinePartsError("rows"));
        }
        let rows = (0..len)
            .map(|i| Row {
                file: p.file[i],
                line: p.line[i],
                self_value: p.self_value[i],
                total_value: p.total_value[i],
            })
            .collect();
        Ok(LineTable {
            functions: texts,
            starts: p.starts,
            files,
            rows,
            why_none: p.why_none,
        })
    }
}

/// A [`LineTable`] as columns: function names then file names in `texts` (ends in
/// `text_ends`), the first `function_count` of them functions; rows as in the table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineParts {
    pub texts: Vec<u8>,
    pub text_ends: Vec<u32>,
    pub function_count: u32,
    pub starts: Vec<u32>,
    pub file: Vec<u32>,
    pub line: Vec<u32>,
    pub self_value: Vec<u64>,
    pub total_value: Vec<u64>,
    pub why_none: Option<String>,
}

/// Columns that do not make a table (a message altered on its way); names the column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the line table's {0} columns do not fit together")]
pub struct LinePartsError(pub &'static str);

/// Sums lines sample by sample: each sample's frames, root first, as `(function, file, line)`
/// ids ([`LineSums::function`], [`LineSums::file`]), `None` where a frame has no line.
#[derive(Default)]
pub struct LineSums {
    functions: Interner,
    files: Interner,
    sums: FxHashMap<(u32, u32, u32), (u64, u64)>,
    seen: Vec<(u32, u32, u32)>,
}

/// A frame's line as [`LineSums`] ids: `(function, file, line)`.
pub type FrameLine = (u32, u32, u32);

impl LineSums {
    /// The id of function `name`.
    pub fn function(&mut self, name: &str) -> u32 {
        self.functions.intern(name)
    }

    /// The id of file `name`.
    pub fn file(&mut self, name: &str) -> u32 {
        self.files.intern(name)
    }

    /// Adds one sample of `value` whose frames (root first) are `frames`.
    pub fn add(&mut self, frames: impl Iterator<Item = Option<FrameLine>>, value: u64) {
        self.seen.clear();
        let mut leaf = None;
        for frame in frames {
            leaf = frame;
            let Some(key) = frame else { continue };
            // A recursive function at the same line counts once in the total.
            if self.seen.contains(&key) {
                continue;
            }
            self.seen.push(key);
            let sum = self.sums.entry(key).or_default();
            sum.1 = sum.1.saturating_add(value);
        }
        if let Some(key) = leaf {
            let sum = self.sums.entry(key).or_default();
            sum.0 = sum.0.saturating_add(value);
        }
    }

    /// The table: functions sorted by name, each one's rows hottest first (total, then self,
    /// then file and line, so equal profiles give equal tables): a caller's hottest line is
    /// the call that costs most, a leaf's the line that burns.
    pub fn finish(self, why_none: impl FnOnce() -> String) -> LineTable {
        if self.sums.is_empty() {
            return LineTable::none(why_none());
        }
        let mut keyed: Vec<_> = self.sums.into_iter().collect();
        let name = |f: u32| self.functions.name(f);
        let file = |f: u32| self.files.name(f);
        keyed.sort_by(|((fa, ia, la), (sa, ta)), ((fb, ib, lb), (sb, tb))| {
            name(*fa)
                .cmp(name(*fb))
                .then(tb.cmp(ta))
                .then(sb.cmp(sa))
                .then(file(*ia).cmp(file(*ib)))
                .then(la.cmp(lb))
        });
        let mut functions: Vec<Box<str>> = Vec::new();
        let (mut starts, mut rows) = (Vec::new(), Vec::new());
        for ((f, file, line), (self_value, total_value)) in keyed {
            if functions.last().is_none_or(|last| **last != *name(f)) {
                functions.push(Box::from(name(f)));
                starts.push(rows.len() as u32);
            }
            rows.push(Row {
                file,
                line,
                self_value,
                total_value,
            });
        }
        starts.push(rows.len() as u32);
        let (files, _) = self.files.into_columns();
        LineTable {
            functions,
            starts,
            files,
            rows,
            why_none: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> LineTable {
        let mut s = LineSums::default();
        let (main, work) = (s.function("main"), s.function("work"));
        let (m, w) = (s.file("main.go"), s.file("work.go"));
        // main:3 calls work, which runs line 10 (5) and line 12 (2); main:4 runs itself (1).
        s.add([Some((main, m, 3)), Some((work, w, 10))].into_iter(), 5);
        s.add([Some((main, m, 3)), Some((work, w, 12))].into_iter(), 2);
        s.add([Some((main, m, 4))].into_iter(), 1);
        // Recursion: work:10 twice on one stack counts once in its total.
        s.add(
            [Some((work, w, 10)), Some((work, w, 10)), None].into_iter(),
            3,
        );
        s.finish(String::new)
    }

    fn stat(file: &str, line: u32, self_value: u64, total_value: u64) -> LineStat {
        LineStat {
            file: file.into(),
            line,
            self_value,
            total_value,
        }
    }

    #[test]
    fn each_function_lists_its_lines_hottest_first() {
        let t = table();
        assert_eq!(
            t.of("work"),
            [stat("work.go", 10, 5, 8), stat("work.go", 12, 2, 2)]
        );
        assert_eq!(
            t.of("main"),
            [stat("main.go", 3, 0, 7), stat("main.go", 4, 1, 1)]
        );
        assert!(t.of("absent").is_empty());
        assert_eq!(t.function_count(), 2);
        assert_eq!(t.why_none, None);
    }

    #[test]
    fn a_table_survives_its_columns_and_bad_columns_are_refused() {
        let t = table();
        let back = LineTable::from_parts(t.clone().into_parts()).expect("round trip");
        assert_eq!(back, t);
        let none = LineSums::default().finish(|| "no Line.line".into());
        assert!(none.is_empty());
        let back = LineTable::from_parts(none.clone().into_parts()).expect("empty");
        assert_eq!(back.why_none.as_deref(), Some("no Line.line"));
        let mut bad = t.clone().into_parts();
        bad.file[0] = 99;
        assert_eq!(LineTable::from_parts(bad), Err(LinePartsError("rows")));
        let mut bad = t.clone().into_parts();
        bad.line.pop();
        assert_eq!(LineTable::from_parts(bad), Err(LinePartsError("rows")));
        let mut bad = t.into_parts();
        bad.text_ends[0] = 1000;
        assert_eq!(LineTable::from_parts(bad), Err(LinePartsError("text")));
    }
}
