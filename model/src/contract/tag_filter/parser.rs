//! The recursive-descent parser over [`super::lex`]'s tokens: conditions joined by `AND`, each
//! resolved against the field table and typed after its field.

use super::lex::{error_at, Tok, Token};
use super::{Condition, Op, ParseError, TagFilter, Value, MAX_CONDITIONS, MAX_IN_VALUES};
use crate::contract::fields::{self, FieldKind, FieldRef};

pub(super) struct Parser<'a> {
    pub(super) input: &'a str,
    pub(super) tokens: Vec<Token>,
    pub(super) pos: usize,
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

    pub(super) fn filter(mut self) -> Result<TagFilter, ParseError> {
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
        let field = fields::resolve(&name).map_err(|e| self.err(name_tok.at, e.to_string()))?;

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
