//! Writing tag filters: names and values in either [`Dialect`] — the `tag_filter` grammar that
//! [`super::parse`] reads (the viewer's builder), or the SQL of DeepFlow's querier (the service's
//! upstream statements, and the `tag_filter` it forwards, which the querier pastes into SQL).
//! One rule set for both, parameterised where the two languages really differ: which names may
//! stand bare, and which may stand in backticks.

use thiserror::Error;

use super::{Condition, Op, TagFilter, Value};
use crate::contract::fields::is_key_char;

/// The language a filter is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The `tag_filter` grammar of [`super::parse`]: bare words may hold `.`, `:`, `/`, `-`;
    /// anything but a backtick may stand in backticks.
    TagFilter,
    /// The querier's SQL (ClickHouse identifiers): bare only `[A-Za-z_][A-Za-z0-9_]*`; in
    /// backticks only the open-family key charset ([`is_key_char`]), since ClickHouse reads
    /// `\` as an escape there.
    Sql,
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dialect::TagFilter => "a tag filter (backticks are not allowed)",
            Dialect::Sql => {
                "the querier's SQL (only letters, digits, '.', '_', '/' and '-' are allowed)"
            }
        })
    }
}

/// A name that cannot be written in a dialect.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("tag name {0:?} cannot be written in {1}")]
pub struct UnwritableName(pub String, pub Dialect);

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

/// Quotes a value: single quotes, with `\` and `'` escaped by a backslash (what both
/// ClickHouse and [`super::parse`] read), so both dialects quote values the same way.
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

/// Writes a tag name so that the dialect reads back exactly that name: bare when it is one
/// word of the dialect, else in backticks when every character may stand there.
pub fn render_name(name: &str, dialect: Dialect) -> Result<String, UnwritableName> {
    let starts = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let (bare, quotable) = match dialect {
        Dialect::TagFilter => (
            starts && name.chars().all(super::lex::is_word_char),
            !name.contains('`'),
        ),
        Dialect::Sql => (
            starts && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            name.chars().all(is_key_char),
        ),
    };
    if bare {
        Ok(name.to_owned())
    } else if quotable && !name.is_empty() {
        Ok(format!("`{name}`"))
    } else {
        Err(UnwritableName(name.to_owned(), dialect))
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::Text(s) => quote_tag_value(s),
        Value::Int(i) => i.to_string(),
    }
}

/// Writes one typed condition.
fn condition(c: &Condition, dialect: Dialect) -> Result<String, UnwritableName> {
    let values: Vec<String> = c.values.iter().map(literal).collect();
    let first = values.first().cloned().unwrap_or_default();
    let op = match c.op {
        Op::Eq => format!("={first}"),
        Op::Ne => format!("!={first}"),
        Op::In => format!(" IN ({})", values.join(", ")),
        Op::NotIn => format!(" NOT IN ({})", values.join(", ")),
    };
    Ok(format!("{}{op}", render_name(c.field.name(), dialect)?))
}

/// The canonical text of parsed conditions, e.g. `pod='a' AND host IN ('x', 'y')`.
pub fn render_conditions(filter: &TagFilter, dialect: Dialect) -> Result<String, UnwritableName> {
    let parts: Result<Vec<String>, _> = filter
        .conditions
        .iter()
        .map(|c| condition(c, dialect))
        .collect();
    Ok(parts?.join(" AND "))
}

/// Renders builder rows as `name='value' AND ...`, skipping rows without a name. A name that
/// cannot be written (one with a backtick: written bare or in backticks it could read back
/// as other conditions) is written as a quoted value instead, which [`super::parse`] refuses,
/// so the filter fails loudly rather than meaning something else.
pub fn render_tag_filter(rows: &[TagCondition]) -> String {
    rows.iter()
        .filter(|r| !r.name.trim().is_empty())
        .map(|r| {
            let name = r.name.trim();
            format!(
                "{}{}{}",
                render_name(name, Dialect::TagFilter).unwrap_or_else(|_| quote_tag_value(name)),
                if r.negated { "!=" } else { "=" },
                quote_tag_value(&r.value)
            )
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}
