//! Parser for the ProfileTracing `tag_filter` string.
//!
//! DeepFlow pastes this string into SQL; Embers parses it with a small grammar into typed
//! [`Condition`]s, which the store turns into SQL with bound parameters. The text of the filter
//! never becomes SQL text.
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
//! Names come from the seed's field table ([`crate::fields`]), `vtap` is an alias of `agent`, and
//! `k8s.label.*`, `k8s.annotation.*`, `k8s.env.*`, `cloud.tag.*` are open families.

use std::fmt;

use crate::fields::{self, FieldKind, FieldRef, ResolveError};

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
    /// Integer (for [`FieldKind::Int`] fields).
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
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid tag_filter at character {} (byte {}): {}",
            self.char_pos, self.byte_pos, self.message
        )?;
        if self.near.is_empty() {
            write!(f, " (at end of input)")
        } else {
            write!(f, " (near \"{}\")", self.near)
        }
    }
}

impl std::error::Error for ParseError {}

/// Parse a filter; an empty or blank string gives no conditions.
pub fn parse(input: &str) -> Result<TagFilter, ParseError> {
    let tokens = lex(input)?;
    Parser {
        input,
        tokens,
        pos: 0,
    }
    .filter()
}

/// A lexical token kind.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A bare word: identifier, keyword or integer.
    Word(String),
    /// A backtick-quoted name.
    Quoted(String),
    /// A single-quoted string, unescaped.
    Str(String),
    Eq,
    Ne,
    LParen,
    RParen,
    Comma,
    /// End of input.
    End,
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    at: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | ':')
}

fn error_at(input: &str, at: usize, message: impl Into<String>) -> ParseError {
    let at = at.min(input.len());
    let char_pos = input.get(..at).map_or(0, |s| s.chars().count()) + 1;
    let near: String = input.get(at..).unwrap_or("").chars().take(20).collect();
    ParseError {
        char_pos,
        byte_pos: at,
        message: message.into(),
        near,
    }
}

fn lex(input: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let tok = match c {
            '=' => {
                chars.next();
                // Accept `==` as a synonym of `=`, as ClickHouse does.
                if matches!(chars.peek(), Some(&(_, '='))) {
                    chars.next();
                }
                Tok::Eq
            }
            '!' => {
                chars.next();
                match chars.next() {
                    Some((_, '=')) => Tok::Ne,
                    _ => return Err(error_at(input, at, "expected '!=' ")),
                }
            }
            '<' => {
                chars.next();
                match chars.next() {
                    Some((_, '>')) => Tok::Ne,
                    _ => {
                        return Err(error_at(
                            input,
                            at,
                            "unsupported operator; use =, !=, <>, IN or NOT IN",
                        ))
                    }
                }
            }
            '(' => {
                chars.next();
                Tok::LParen
            }
            ')' => {
                chars.next();
                Tok::RParen
            }
            ',' => {
                chars.next();
                Tok::Comma
            }
            '\'' => {
                chars.next();
                Tok::Str(lex_string(input, at, &mut chars)?)
            }
            '`' => {
                chars.next();
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some((_, '`')) => break,
                        Some((_, ch)) => name.push(ch),
                        None => return Err(error_at(input, at, "unterminated `quoted` tag name")),
                    }
                }
                Tok::Quoted(name)
            }
            c if is_word_char(c) => {
                let mut word = String::new();
                while let Some(&(_, ch)) = chars.peek() {
                    if !is_word_char(ch) {
                        break;
                    }
                    word.push(ch);
                    chars.next();
                }
                Tok::Word(word)
            }
            '"' => {
                return Err(error_at(
                    input,
                    at,
                    "values must be in single quotes ('value'), not double quotes",
                ))
            }
            other => {
                return Err(error_at(
                    input,
                    at,
                    format!("unexpected character '{other}'"),
                ))
            }
        };
        tokens.push(Token { tok, at });
    }
    tokens.push(Token {
        tok: Tok::End,
        at: input.len(),
    });
    Ok(tokens)
}

/// Read a single-quoted string after its opening quote; `''` and `\'` are quotes, `\\` a backslash.
fn lex_string(
    input: &str,
    start: usize,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Result<String, ParseError> {
    let mut value = String::new();
    loop {
        match chars.next() {
            None => {
                return Err(error_at(
                    input,
                    start,
                    "unterminated string: missing closing quote (')",
                ))
            }
            Some((_, '\'')) => {
                if matches!(chars.peek(), Some(&(_, '\''))) {
                    chars.next();
                    value.push('\'');
                } else {
                    return Ok(value);
                }
            }
            Some((_, '\\')) => match chars.peek() {
                Some(&(_, '\'')) => {
                    chars.next();
                    value.push('\'');
                }
                Some(&(_, '\\')) => {
                    chars.next();
                    value.push('\\');
                }
                _ => value.push('\\'),
            },
            Some((_, ch)) => value.push(ch),
        }
    }
}

struct Parser<'a> {
    input: &'a str,
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // The token list always ends with `End`, and `pos` never moves past it.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::End {
            self.pos += 1;
        }
        token
    }

    fn err(&self, at: usize, message: impl Into<String>) -> ParseError {
        error_at(self.input, at, message)
    }

    fn is_keyword(tok: &Tok, keyword: &str) -> bool {
        matches!(tok, Tok::Word(w) if w.eq_ignore_ascii_case(keyword))
    }

    fn filter(mut self) -> Result<TagFilter, ParseError> {
        let mut conditions = Vec::new();
        if self.peek().tok == Tok::End {
            return Ok(TagFilter { conditions });
        }
        loop {
            if conditions.len() >= MAX_CONDITIONS {
                let at = self.peek().at;
                return Err(self.err(
                    at,
                    format!("too many conditions (at most {MAX_CONDITIONS})"),
                ));
            }
            conditions.push(self.condition()?);
            let next = self.bump();
            match &next.tok {
                Tok::End => return Ok(TagFilter { conditions }),
                t if Self::is_keyword(t, "AND") => continue,
                t if Self::is_keyword(t, "OR") => {
                    return Err(self.err(
                        next.at,
                        "OR is not supported: conditions can only be joined by AND",
                    ))
                }
                _ => return Err(self.err(next.at, "expected AND or the end of the filter")),
            }
        }
    }

    fn condition(&mut self) -> Result<Condition, ParseError> {
        let name_tok = self.bump();
        let name = match &name_tok.tok {
            Tok::Word(w) if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                w.clone()
            }
            Tok::Quoted(n) => n.clone(),
            Tok::End => return Err(self.err(name_tok.at, "expected a tag name")),
            Tok::Str(_) => {
                return Err(self.err(name_tok.at, "expected a tag name, found a quoted value"))
            }
            _ => return Err(self.err(name_tok.at, "expected a tag name")),
        };
        let field = fields::resolve(&name).map_err(|e| match e {
            ResolveError::Unknown => self.err(
                name_tok.at,
                format!(
                    "unknown tag '{name}'; known tags: {}, vtap, and k8s.label.<key>, \
                     k8s.annotation.<key>, k8s.env.<key>, cloud.tag.<key>",
                    fields::FIELDS
                        .iter()
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            ResolveError::MissingKey(family) => self.err(
                name_tok.at,
                format!(
                    "tag family '{}' needs a key, e.g. {}.app",
                    family.base(),
                    family.base()
                ),
            ),
        })?;

        let op_tok = self.bump();
        let op = match &op_tok.tok {
            Tok::Eq => Op::Eq,
            Tok::Ne => Op::Ne,
            t if Self::is_keyword(t, "IN") => Op::In,
            t if Self::is_keyword(t, "NOT") => {
                let in_tok = self.bump();
                if !Self::is_keyword(&in_tok.tok, "IN") {
                    return Err(self.err(in_tok.at, "expected IN after NOT"));
                }
                Op::NotIn
            }
            _ => {
                return Err(self.err(
                    op_tok.at,
                    format!("expected an operator (=, !=, <>, IN, NOT IN) after '{name}'"),
                ))
            }
        };

        let values = match op {
            Op::Eq | Op::Ne => vec![self.value(&field)?],
            Op::In | Op::NotIn => self.value_list(&field)?,
        };
        Ok(Condition { field, op, values })
    }

    fn value_list(&mut self, field: &FieldRef) -> Result<Vec<Value>, ParseError> {
        let open = self.bump();
        if open.tok != Tok::LParen {
            return Err(self.err(open.at, "expected '(' to start the IN list"));
        }
        let mut values = vec![self.value(field)?];
        loop {
            let next = self.bump();
            match next.tok {
                Tok::Comma => {
                    if values.len() >= MAX_IN_VALUES {
                        return Err(self.err(
                            next.at,
                            format!("too many values in IN list (at most {MAX_IN_VALUES})"),
                        ));
                    }
                    values.push(self.value(field)?);
                }
                Tok::RParen => return Ok(values),
                _ => return Err(self.err(next.at, "expected ',' or ')' in the IN list")),
            }
        }
    }

    fn value(&mut self, field: &FieldRef) -> Result<Value, ParseError> {
        let tok = self.bump();
        let raw = match &tok.tok {
            Tok::Str(s) => s.clone(),
            Tok::Word(w) if w.parse::<i64>().is_ok() => w.clone(),
            Tok::End => {
                return Err(self.err(tok.at, "expected a value in single quotes, e.g. 'web-1'"))
            }
            _ => return Err(self.err(tok.at, "expected a value in single quotes, e.g. 'web-1'")),
        };
        match field.kind() {
            FieldKind::Text => Ok(Value::Text(raw)),
            FieldKind::Int => raw.trim().parse::<i64>().map(Value::Int).map_err(|_| {
                self.err(
                    tok.at,
                    format!("tag '{}' takes an integer value", field.name()),
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Text(s.to_owned())
    }

    fn one(filter: &str) -> Condition {
        let parsed = parse(filter).unwrap_or_else(|e| panic!("{filter}: {e}"));
        assert_eq!(parsed.conditions.len(), 1, "{filter}");
        parsed
            .conditions
            .into_iter()
            .next()
            .unwrap_or_else(|| unreachable!())
    }

    #[test]
    fn empty_and_blank_filters_have_no_conditions() {
        assert_eq!(parse(""), Ok(TagFilter::default()));
        assert_eq!(parse("  \t\n"), Ok(TagFilter::default()));
    }

    #[test]
    fn simple_equality_and_and() {
        let f = parse("pod='web-1' AND host_ip='10.0.0.1'").expect("parses");
        assert_eq!(f.conditions.len(), 2);
        assert_eq!(f.conditions[0].field.name(), "pod");
        assert_eq!(f.conditions[0].op, Op::Eq);
        assert_eq!(f.conditions[0].values, vec![text("web-1")]);
        assert_eq!(f.conditions[1].field.name(), "host_ip");
        assert_eq!(f.conditions[1].values, vec![text("10.0.0.1")]);
    }

    #[test]
    fn and_is_case_insensitive_and_spacing_is_free() {
        let f = parse("  pod = 'a'and host!='b'   aNd az<>'c' ").expect("parses");
        let ops: Vec<Op> = f.conditions.iter().map(|c| c.op).collect();
        assert_eq!(ops, vec![Op::Eq, Op::Ne, Op::Ne]);
    }

    #[test]
    fn escaped_quotes() {
        assert_eq!(
            one("pod_ns='team-o''brien'").values,
            vec![text("team-o'brien")]
        );
        assert_eq!(
            one(r"pod_ns='team-o\'brien'").values,
            vec![text("team-o'brien")]
        );
        assert_eq!(one(r"pod='a\\b'").values, vec![text(r"a\b")]);
        assert_eq!(one(r"pod='a\nb'").values, vec![text(r"a\nb")]);
        assert_eq!(one("pod=''").values, vec![text("")]);
        assert_eq!(one("pod=''''").values, vec![text("'")]);
    }

    #[test]
    fn unicode_values_and_positions() {
        assert_eq!(one("pod='wéb-ü'").values, vec![text("wéb-ü")]);
        let e = parse("pod='éé' OR 1=1").expect_err("OR");
        assert_eq!(e.char_pos, 10);
        assert_eq!(e.byte_pos, 11);
    }

    #[test]
    fn in_and_not_in() {
        let c = one("pod IN ('a', 'b','c')");
        assert_eq!(c.op, Op::In);
        assert_eq!(c.values, vec![text("a"), text("b"), text("c")]);
        let c = one("pod not in ('a')");
        assert_eq!(c.op, Op::NotIn);
        assert!(parse("pod IN 'a'").is_err());
        assert!(parse("pod IN ('a',)").is_err());
        assert!(parse("pod IN ('a'").is_err());
    }

    #[test]
    fn open_families_aliases_and_backticks() {
        assert_eq!(one("k8s.label.app='web'").field.name(), "k8s.label.app");
        assert_eq!(
            one("`k8s.label.app.kubernetes.io/name`='web'").field.name(),
            "k8s.label.app.kubernetes.io/name"
        );
        assert_eq!(one("cloud.tag.team='x'").field.name(), "cloud.tag.team");
        assert_eq!(one("vtap='agent-1'").field.name(), "agent");
    }

    #[test]
    fn integer_fields_are_typed() {
        assert_eq!(one("is_ipv4=1").values, vec![Value::Int(1)]);
        assert_eq!(
            one("time='1700000000'").values,
            vec![Value::Int(1_700_000_000)]
        );
        let e = parse("time='yesterday'").expect_err("not an int");
        assert!(e.message.contains("integer"), "{e}");
        assert_eq!(e.char_pos, 6);
    }

    #[test]
    fn unknown_tag_points_at_it() {
        let e = parse("pod='a' AND colour='red'").expect_err("unknown");
        assert_eq!(e.char_pos, 13);
        assert!(e.message.contains("unknown tag 'colour'"), "{e}");
        let e = parse("k8s.label='x'").expect_err("no key");
        assert!(e.message.contains("needs a key"), "{e}");
    }

    #[test]
    fn injection_attempts_are_syntax_errors() {
        let e = parse("pod='x' OR 1=1").expect_err("OR");
        assert_eq!(e.char_pos, 9);
        assert!(e.message.contains("OR is not supported"), "{e}");
        let e = parse("pod='x'; DROP TABLE profile.in_process").expect_err("semicolon");
        assert_eq!(e.char_pos, 8);
        assert!(parse("pod='x' --").is_err());
        assert!(parse("pod=x").is_err());
        assert!(parse("1=1").is_err());
        assert!(parse("pod='x' AND (1=1)").is_err());
        assert!(parse("pod=(SELECT 1)").is_err());
    }

    #[test]
    fn quote_tricks_stay_inside_the_value() {
        let c = one("pod='x''; DROP TABLE profile.in_process; --'");
        assert_eq!(
            c.values,
            vec![text("x'; DROP TABLE profile.in_process; --")]
        );
        let c = one(r"pod='x\' OR 1=1 --'");
        assert_eq!(c.values, vec![text("x' OR 1=1 --")]);
    }

    #[test]
    fn syntax_errors_report_positions() {
        let e = parse("pod='unterminated").expect_err("unterminated");
        assert_eq!(e.char_pos, 5);
        assert!(e.message.contains("unterminated"), "{e}");
        let e = parse("pod 'a'").expect_err("no op");
        assert_eq!(e.char_pos, 5);
        assert!(e.message.contains("operator"), "{e}");
        let e = parse("pod=").expect_err("no value");
        assert_eq!(e.char_pos, 5);
        let e = parse("pod='a' host='b'").expect_err("missing AND");
        assert_eq!(e.char_pos, 9);
        let e = parse("pod=\"a\"").expect_err("double quotes");
        assert!(e.message.contains("single quotes"), "{e}");
        let e = parse("pod='a' AND").expect_err("dangling AND");
        assert!(e.to_string().contains("end of input"), "{e}");
        let e = parse("pod > 'a'").expect_err("unsupported op");
        assert_eq!(e.char_pos, 5);
    }

    #[test]
    fn too_many_conditions_is_an_error() {
        let many = vec!["pod='a'"; MAX_CONDITIONS + 1].join(" AND ");
        assert!(parse(&many).is_err());
        let ok = vec!["pod='a'"; MAX_CONDITIONS].join(" AND ");
        assert!(parse(&ok).is_ok());
    }
}
