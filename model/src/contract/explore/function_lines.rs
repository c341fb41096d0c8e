//! `POST /v1/profile/function_lines`: where inside one function the time goes — its source
//! lines with their self and total, hottest first (docs/design/lines-and-time.md). The body is
//! ProfileTracing's query fields plus `function` (a frame's name as in `profile_location_str`);
//! the result is a `{columns, values}` table like the other explore answers, plus what the
//! viewer needs to explain an empty one in words.
//!
//! A line's `self_value` sums the samples whose last frame is the function at that line; its
//! `total_value` the samples whose stack runs the function at that line anywhere (once per
//! sample however often it recurs there). Inlined functions are their own frames at their own
//! lines (as `addr2line -i` reports them), so a function's lines are the lines *it* owns.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::function_sums::SelfTotal;
use super::functions::function_member;
use crate::contract::body::{parse_tracing_body, Members, RequestError};
use crate::contract::request::ProfileRequest;
use crate::contract::selection::Selection;

/// Most lines one answer lists (the hottest); the rest are counted in `omitted`.
pub const MAX_FUNCTION_LINES: usize = 1000;

/// Body of `POST /v1/profile/function_lines`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionLinesRequest {
    /// The samples, as for ProfileTracing (`max_kernel_stack_depth` is ignored).
    #[serde(flatten)]
    pub profile: ProfileRequest,
    /// The function's name as it appears in frames (`main.hot`, `[k] vfs_read`, ...).
    pub function: String,
}

/// A `function_lines` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionLinesQuery {
    /// The samples (`app_service: None`: every process except `Total`).
    pub selection: Selection,
    /// The function.
    pub function: String,
}

/// Reads `POST /v1/profile/function_lines`: ProfileTracing's rules for the common fields, and a
/// required `function`.
pub fn parse_function_lines_body(body: &[u8]) -> Result<FunctionLinesQuery, RequestError> {
    let function = function_member(&Members::parse(body)?)?;
    let tracing = parse_tracing_body(body)?;
    Ok(FunctionLinesQuery {
        selection: tracing.selection(),
        function,
    })
}

/// One line of the function: `[file, line, self_value, total_value]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(String, u32, u64, u64)", into = "(String, u32, u64, u64)")]
pub struct LineRow {
    /// The file as the producer named it.
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    /// Samples ending in the function at this line.
    pub self_value: u64,
    /// Samples running the function at this line.
    pub total_value: u64,
}

impl From<(String, u32, u64, u64)> for LineRow {
    fn from((file, line, self_value, total_value): (String, u32, u64, u64)) -> Self {
        LineRow {
            file,
            line,
            self_value,
            total_value,
        }
    }
}

impl From<LineRow> for (String, u32, u64, u64) {
    fn from(r: LineRow) -> Self {
        (r.file, r.line, r.self_value, r.total_value)
    }
}

/// Whether the answer has lines.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinesState {
    /// At least one line.
    Some,
    /// No line: `reason` says why.
    None,
}

/// Why an answer has no lines, for the viewer to say in words.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoLines {
    /// No selected sample runs the function (wrong name, range or filter).
    NoSamples,
    /// The function's samples carry no line information: their producer gave none (the
    /// collector on a binary without debug information, `perf script` without `srcline`, an
    /// SDK format without lines).
    NoLineInfo,
}

impl NoLines {
    /// The reason in words.
    pub fn describe(self) -> &'static str {
        match self {
            NoLines::NoSamples => "no selected sample runs this function",
            NoLines::NoLineInfo => {
                "this function's samples carry no line information (a binary without debug \
                 information, or a producer that does not record lines)"
            }
        }
    }
}

/// The `function_lines` result.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionLinesAnswer {
    /// The function asked about.
    pub function: String,
    /// `["file", "line", "self_value", "total_value"]`.
    pub columns: Vec<String>,
    /// Lines by total, then self, highest first (at most [`MAX_FUNCTION_LINES`]).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<(String, u32, u64, u64)>))]
    pub values: Vec<LineRow>,
    /// `some` or `none`.
    pub lines: LinesState,
    /// Why there are no lines (only with `lines: none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<NoLines>,
    /// The function's self over every selected sample, with or without lines: what the lines'
    /// self values are a part of.
    pub function_self_value: u64,
    /// The function's total over every selected sample.
    pub function_total_value: u64,
    /// Lines beyond [`MAX_FUNCTION_LINES`] left out.
    #[serde(default)]
    pub omitted: usize,
}

/// The answer's column names.
pub const LINE_COLUMNS: [&str; 4] = ["file", "line", "self_value", "total_value"];

impl FunctionLinesAnswer {
    /// The answer for `function` from line rows in any order, with repeats (added up), and the
    /// function's own sums over every selected sample.
    pub fn finish(function: &str, rows: Vec<LineRow>, whole: SelfTotal) -> FunctionLinesAnswer {
        let mut sums: HashMap<(String, u32), SelfTotal> = HashMap::new();
        for r in rows {
            sums.entry((r.file, r.line)).or_default().add(SelfTotal {
                self_value: r.self_value,
                total: r.total_value,
            });
        }
        let mut values: Vec<LineRow> = sums
            .into_iter()
            .filter(|(_, v)| v.total > 0 || v.self_value > 0)
            .map(|((file, line), v)| LineRow {
                file,
                line,
                self_value: v.self_value,
                total_value: v.total,
            })
            .collect();
        values.sort_by(|a, b| {
            (b.total_value, b.self_value)
                .cmp(&(a.total_value, a.self_value))
                .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
        });
        let omitted = values.len().saturating_sub(MAX_FUNCTION_LINES);
        values.truncate(MAX_FUNCTION_LINES);
        let (lines, reason) = match (values.is_empty(), whole.total > 0) {
            (false, _) => (LinesState::Some, None),
            (true, true) => (LinesState::None, Some(NoLines::NoLineInfo)),
            (true, false) => (LinesState::None, Some(NoLines::NoSamples)),
        };
        FunctionLinesAnswer {
            function: function.to_owned(),
            columns: LINE_COLUMNS.map(str::to_owned).to_vec(),
            values,
            lines,
            reason,
            function_self_value: whole.self_value,
            function_total_value: whole.total,
            omitted,
        }
    }
}

#[cfg(test)]
#[path = "function_lines_tests.rs"]
mod tests;
