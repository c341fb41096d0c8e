//! Reading folded stacks (`frame;frame;frame value`), the lingua franca of `perf script`
//! collapsers, py-spy and async-profiler, for imports and the service's ingest. Writing them
//! is [`crate::export::folded`].

use thiserror::Error;

use crate::tree::build::TreeBuilder;
use crate::tree::profile::Profile;

/// Why a folded line could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FoldedError {
    /// The line has no space-separated value at its end.
    #[error("expected `frame;frame;... value` but found no value after the stack")]
    MissingValue,
    /// The value is not a non-negative integer.
    #[error("the value {0:?} is not a non-negative integer")]
    BadValue(String),
    /// A frame between two `;` is empty.
    #[error("the stack has an empty frame (`;;`)")]
    EmptyFrame,
}

/// A folded-stacks error with the 1-based line it occurred on.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("line {line}: {error}")]
pub struct FoldedLineError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub error: FoldedError,
}

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
    let value = parse_count(value.trim())?;
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

/// A sample count: ASCII digits only (`u64::from_str` would also take a leading `+`, which no
/// folding tool writes).
fn parse_count(text: &str) -> Result<u64, FoldedError> {
    let bad = || FoldedError::BadValue(text.to_string());
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    text.parse::<u64>().map_err(|_| bad())
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

/// A parsed two-column line (flamegraph.pl's `difffolded.pl`): frames, baseline value,
/// comparison value.
pub type DiffStack<'a> = (Vec<&'a str>, u64, u64);

/// Parses one two-column line `frame;frame baseline comparison`. Blank lines and `#` comments
/// give `Ok(None)`.
pub fn parse_diff_line(line: &str) -> Result<Option<DiffStack<'_>>, FoldedError> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.trim().is_empty() || line.trim_start().starts_with('#') {
        return Ok(None);
    }
    let (rest, second) = line
        .trim_end()
        .rsplit_once([' ', '\t'])
        .ok_or(FoldedError::MissingValue)?;
    let comparison = parse_count(second)?;
    match parse_folded_line(rest)? {
        Some((frames, baseline)) => Ok(Some((frames, baseline, comparison))),
        None => Err(FoldedError::MissingValue),
    }
}

/// Whether `text` is two-column folded stacks: its first stack line ends in two numbers.
pub fn is_diff_folded(text: &str) -> bool {
    text.split('\n')
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| parse_diff_line(l).is_ok_and(|s| s.is_some()))
}

/// Parses two-column folded stacks into the baseline and the comparison profile, both rooted at
/// `root_name`.
pub fn parse_diff_folded(
    text: &str,
    root_name: &str,
) -> Result<(Profile, Profile), FoldedLineError> {
    let mut baseline = TreeBuilder::new(root_name);
    let mut comparison = TreeBuilder::new(root_name);
    for (i, line) in text.split('\n').enumerate() {
        match parse_diff_line(line) {
            Ok(Some((frames, b, c))) => {
                if b > 0 {
                    baseline.add_stack(frames.iter().copied(), b);
                }
                if c > 0 {
                    comparison.add_stack(frames, c);
                }
            }
            Ok(None) => {}
            Err(error) => return Err(FoldedLineError { line: i + 1, error }),
        }
    }
    Ok((baseline.finish(), comparison.finish()))
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
        assert_eq!(
            parse_folded_line("a;b +3").unwrap_err(),
            FoldedError::BadValue("+3".into())
        );
        assert_eq!(
            parse_diff_line("a;b 1 +3").unwrap_err(),
            FoldedError::BadValue("+3".into())
        );
        assert_eq!(
            parse_folded_line("a 18446744073709551616").unwrap_err(),
            FoldedError::BadValue("18446744073709551616".into())
        );
    }

    #[test]
    fn errors_carry_line_numbers() {
        let err = parse_folded("a 1\n\nb nope\n", "app").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().starts_with("line 3:"));
    }

    #[test]
    fn two_column_lines_carry_both_sides() {
        assert_eq!(
            parse_diff_line("a;b 3 5").unwrap(),
            Some((vec!["a", "b"], 3, 5))
        );
        assert_eq!(parse_diff_line("# x").unwrap(), None);
        assert!(parse_diff_line("a;b 3").is_err(), "one column is not two");
        assert!(parse_diff_line("a;b x 5").is_err());
        assert!(is_diff_folded("# header\na;b 1 2\n"));
        assert!(!is_diff_folded("a;b 1\n"));
        let (b, c) = parse_diff_folded("main;a 2 0\nmain;b 0 7\n", "app").unwrap();
        assert_eq!((b.root_total(), c.root_total()), (2, 7));
        let err = parse_diff_folded("a 1 1\nb 1\n", "app").unwrap_err();
        assert_eq!(err.line, 2);
    }
}
