//! Parser for the ProfileTracing `tag_filter` string.
//!
//! DeepFlow pastes this string into SQL; Embers parses it with a small grammar into typed
//! [`Condition`]s, which a store turns into SQL with bound parameters. The text of the filter
//! never becomes SQL text. The viewer's builder writes filters with [`render_tag_filter`], which
//! this parser reads back (tested both ways); parsed conditions are written again, as a filter
//! or as the querier's SQL, by [`render_conditions`] (one renderer, two [`Dialect`]s).
//!
//! Grammar (keywords case-insensitive, whitespace free between tokens):
//! ```text
//! filter    := [ condition { AND condition } ]
//! condition := name op operand
//! name      := ident | '`' any-but-backtick '`'      ident: [A-Za-z_][A-Za-z0-9_.:/-]*
//! op        := '=' | '!=' | '<>' | IN | NOT IN
//! operand   := value                                 (for = and !=)
//!            | '(' value { ',' value } ')'           (for IN and NOT IN)
//! value     := '\'' { char | '\'\'' | '\\\'' | '\\\\' } '\''  |  integer
//! ```
//! Names come from the seed's field table ([`crate::contract::fields`]), `vtap` is an alias of `agent`, and
//! `k8s.label.*`, `k8s.annotation.*`, `k8s.env.*`, `cloud.tag.*` are open families.

mod lex;
mod parser;
mod render;

use thiserror::Error;

use crate::contract::fields::FieldRef;
pub use render::{
    quote_tag_value, render_conditions, render_name, render_tag_filter, Dialect, TagCondition,
    UnwritableName,
};

/// Most conditions one filter may hold.
pub const MAX_CONDITIONS: usize = 64;
/// Most values one `IN (...)` list may hold.
pub const MAX_IN_VALUES: usize = 1000;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=` or `<>`
    Ne,
    /// `IN (...)`
    In,
    /// `NOT IN (...)`
    NotIn,
}

/// A typed literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Text, quotes unescaped.
    Text(String),
    /// Integer (for [`crate::contract::fields::FieldKind::Int`] fields).
    Int(i64),
}

/// One `name op value` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The resolved field.
    pub field: FieldRef,
    /// The operator.
    pub op: Op,
    /// One value for `=`/`!=`, one or more for `IN`/`NOT IN`; typed after the field.
    pub values: Vec<Value>,
}

/// A parsed filter: all conditions must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// The conditions, in source order.
    pub conditions: Vec<Condition>,
}

/// A syntax or name error, with its position in the filter text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "invalid tag_filter at character {char_pos} (byte {byte_pos}): {message}{}",
    near_text(.near)
)]
pub struct ParseError {
    /// 1-based character (Unicode scalar) position of the offending token.
    pub char_pos: usize,
    /// 0-based byte offset of the offending token.
    pub byte_pos: usize,
    /// What went wrong.
    pub message: String,
    /// Up to 20 characters of the filter from the offending position.
    pub near: String,
}

fn near_text(near: &str) -> String {
    if near.is_empty() {
        " (at end of input)".to_owned()
    } else {
        format!(" (near \"{near}\")")
    }
}

/// Parse a filter; an empty or blank string gives no conditions.
pub fn parse(input: &str) -> Result<TagFilter, ParseError> {
    let tokens = lex::lex(input)?;
    parser::Parser {
        input,
        tokens,
        pos: 0,
    }
    .filter()
}

#[cfg(test)]
mod tests;
