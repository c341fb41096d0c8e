//! The two shapes of a ProfileTracing `result`: which one a server answers depends on its
//! version (see `PROFILE_API.md`); readers accept both, writers pick one.

use std::fmt;
use std::str::FromStr;

/// A `result` shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultShape {
    /// An array of node objects with UUID ids (servers up to v6.5).
    A,
    /// Function and node tables (servers from v6.6; what Embers answers by default).
    #[default]
    B,
}

impl ResultShape {
    /// Reads `A`/`a` or `B`/`b` (surrounding blanks ignored).
    pub fn parse(name: &str) -> Option<ResultShape> {
        match name.trim() {
            "A" | "a" => Some(ResultShape::A),
            "B" | "b" => Some(ResultShape::B),
            _ => None,
        }
    }

    /// The shape's letter, as in the status line and `result_shape`.
    pub fn letter(self) -> &'static str {
        match self {
            ResultShape::A => "A",
            ResultShape::B => "B",
        }
    }
}

impl fmt::Display for ResultShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResultShape::A => "shape A (node array)",
            ResultShape::B => "shape B (function/node tables)",
        })
    }
}

impl FromStr for ResultShape {
    type Err = String;

    fn from_str(s: &str) -> Result<ResultShape, String> {
        ResultShape::parse(s).ok_or_else(|| format!("expected A or B, got \"{s}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_either_case() {
        assert_eq!("a".parse(), Ok(ResultShape::A));
        assert_eq!(ResultShape::parse(" B "), Some(ResultShape::B));
        assert!("C".parse::<ResultShape>().is_err());
        assert_eq!(ResultShape::default(), ResultShape::B);
        assert_eq!(ResultShape::A.letter(), "A");
    }
}
