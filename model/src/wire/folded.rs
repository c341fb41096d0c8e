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
    fn errors_carry_line_numbers() {
        let err = parse_folded("a 1\n\nb nope\n", "app").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().starts_with("line 3:"));
    }
}
