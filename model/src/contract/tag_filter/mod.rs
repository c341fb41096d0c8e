//! Parser for the ProfileTracing `tag_filter` string.
//!
//! DeepFlow pastes this string into SQL; Embers parses it with a small grammar into typed
//! [`Condition`]s, which a store turns into SQL with bound parameters. The text of the filter
//! never becomes SQL text. The viewer's builder writes filters with [`render_tag_filter`], which
//! this parser reads back (tested both ways).
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

use thiserror::Error;

use crate::contract::fields::FieldRef;

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

/// One `name = 'value'` row of the tag-filter builder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagCondition {
    /// Tag name, e.g. `pod` or `k8s.label.app`.
    pub name: String,
    /// Raw value; quoting is applied by [`render_tag_filter`].
    pub value: String,
    /// `!=` instead of `=`.
    pub negated: bool,
}

/// Quotes a value for a tag filter: single quotes, with `\` and `'` escaped by a backslash
/// (what both ClickHouse and [`parse`] read).
pub fn quote_tag_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Writes a tag name so that [`parse`] reads back exactly that name: bare when it is one
/// word, in backticks otherwise (open-family keys may hold spaces, quotes, `AND`...). The
/// grammar cannot quote a backtick, and writing such a name bare or in backticks could read
/// back as other conditions; it is written as a quoted value instead, which [`parse`]
/// refuses, so the filter fails loudly rather than meaning something else.
fn render_tag_name(name: &str) -> String {
    let word = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(lex::is_word_char);
    if word {
        name.to_owned()
    } else if !name.contains('`') {
        format!("`{name}`")
    } else {
        quote_tag_value(name)
    }
}

/// Renders builder rows as `name='value' AND ...`, skipping rows without a name.
pub fn render_tag_filter(rows: &[TagCondition]) -> String {
    rows.iter()
        .filter(|r| !r.name.trim().is_empty())
        .map(|r| {
            format!(
                "{}{}{}",
                render_tag_name(r.name.trim()),
                if r.negated { "!=" } else { "=" },
                quote_tag_value(&r.value)
            )
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

#[cfg(test)]
mod tests;
