//! Folded stacks (`frame;frame;frame value`), the lingua franca of `perf script` collapsers,
//! py-spy and async-profiler: parsing for import, and writing for export and golden tests.

use std::fmt;

use crate::build::TreeBuilder;
use crate::profile::{NodeId, Profile};

/// Why a folded line could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FoldedError {
    /// The line has no space-separated value at its end.
    MissingValue,
    /// The value is not a non-negative integer.
    BadValue(String),
    /// A frame between two `;` is empty.
    EmptyFrame,
}

impl fmt::Display for FoldedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FoldedError::MissingValue => {
                f.write_str("expected `frame;frame;... value` but found no value after the stack")
            }
            FoldedError::BadValue(v) => write!(f, "the value {v:?} is not a non-negative integer"),
            FoldedError::EmptyFrame => f.write_str("the stack has an empty frame (`;;`)"),
        }
    }
}

impl std::error::Error for FoldedError {}

/// A folded-stacks error with the 1-based line it occurred on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedLineError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub error: FoldedError,
}

impl fmt::Display for FoldedLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error)
    }
}

impl std::error::Error for FoldedLineError {}

/// A parsed folded line: frames root→leaf and the sample value.
pub type FoldedStack<'a> = (Vec<&'a str>, u64);

/// Parses one line. Blank lines and `#` comments give `Ok(None)`.
pub fn parse_folded_line(line: &str) -> Result<Option<FoldedStack<'_>>, FoldedError> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.trim().is_empty() || line.trim_start().starts_with('#') {
        return Ok(None);
    }
    let (stack, value) = line
        .rsplit_once([' ', '\t'])
        .ok_or(FoldedError::MissingValue)?;
    let value = value
        .trim()
        .parse::<u64>()
        .map_err(|_| FoldedError::BadValue(value.to_string()))?;
    let stack = stack.trim_end();
    if stack.is_empty() {
        return Err(FoldedError::MissingValue);
    }
    let frames: Vec<&str> = stack.split(';').collect();
    if frames.iter().any(|f| f.is_empty()) {
        return Err(FoldedError::EmptyFrame);
    }
    Ok(Some((frames, value)))
}

/// Parses a whole folded file into a profile under a root named `root_name`.
pub fn parse_folded(text: &str, root_name: &str) -> Result<Profile, FoldedLineError> {
    let mut builder = TreeBuilder::new(root_name);
    for (i, line) in text.split('\n').enumerate() {
        match parse_folded_line(line) {
            Ok(Some((frames, value))) => builder.add_stack(frames, value),
            Ok(None) => {}
            Err(error) => return Err(FoldedLineError { line: i + 1, error }),
        }
    }
    Ok(builder.finish())
}

/// Writes `root;a;b self` for every node with self > 0, sorted, one per line (the fixtures'
/// canonical form). Names containing `;` would be ambiguous, so they are written with `:`, as
/// DeepFlow stores them.
pub fn to_folded(profile: &Profile) -> String {
    folded_lines(profile, true)
}

/// Like [`to_folded`] but without the root frame: what `perf` collapsers write, and what
/// [`parse_folded`] reads back under a root of the caller's choosing.
pub fn to_folded_stacks(profile: &Profile) -> String {
    folded_lines(profile, false)
}

fn folded_lines(profile: &Profile, with_root: bool) -> String {
    let mut lines = Vec::new();
    let mut path: Vec<String> = Vec::new();
    for node in profile.nodes() {
        let depth = profile.depth(node) as usize;
        path.truncate(depth);
        path.push(profile.name(node).replace(';', ":"));
        if profile.self_value(node) > 0 {
            let frames = if with_root { &path[..] } else { &path[1..] };
            if frames.is_empty() {
                continue;
            }
            lines.push(format!("{} {}", frames.join(";"), profile.self_value(node)));
        }
    }
    lines.sort();
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The folded stack of one node (its path from the root, `;`-joined).
pub fn stack_of(profile: &Profile, node: NodeId) -> String {
    profile
        .path_to(node)
        .iter()
        .map(|&n| profile.name(n))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_comments_and_errors() {
        assert_eq!(
            parse_folded_line("a;b;c 12").unwrap(),
            Some((vec!["a", "b", "c"], 12))
        );
        assert_eq!(
            parse_folded_line("[t] my thread;main 3\r").unwrap(),
            Some((vec!["[t] my thread", "main"], 3))
        );
        assert_eq!(parse_folded_line("  ").unwrap(), None);
        assert_eq!(parse_folded_line("# comment").unwrap(), None);
        assert_eq!(parse_folded_line("a;b"), Err(FoldedError::MissingValue));
        assert_eq!(
            parse_folded_line("a;b x").unwrap_err(),
            FoldedError::BadValue("x".into())
        );
        assert_eq!(
            parse_folded_line("a;;b 1").unwrap_err(),
            FoldedError::EmptyFrame
        );
        assert_eq!(
            parse_folded_line("a;b -3").unwrap_err(),
            FoldedError::BadValue("-3".into())
        );
    }

    #[test]
    fn folded_round_trips() {
        let text = "main;a 2\nmain;b;c 5\nmain 1\n";
        let p = parse_folded(text, "app").unwrap();
        assert_eq!(to_folded(&p), "app;main 1\napp;main;a 2\napp;main;b;c 5\n");
        assert_eq!(stack_of(&p, p.node_count() as u32 - 1), "app;main;b;c");
        assert_eq!(to_folded_stacks(&p), "main 1\nmain;a 2\nmain;b;c 5\n");
        let again = parse_folded(&to_folded_stacks(&p), "app").unwrap();
        assert_eq!(to_folded(&again), to_folded(&p));
    }

    #[test]
    fn errors_carry_line_numbers() {
        let err = parse_folded("a 1\n\nb nope\n", "app").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().starts_with("line 3:"));
    }
}
