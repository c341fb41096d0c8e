//! Tokens of a `tag_filter`: words, quoted names and values, operators and punctuation, each
//! with the byte offset where it starts (for error positions).

use super::ParseError;

/// A lexical token kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) at: usize,
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

/// Whether `c` may appear in a bare word (identifiers, keywords, integers).
pub(super) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | ':')
}

/// A [`ParseError`] at byte `at` of `input`, quoting what follows it.
pub(super) fn error_at(input: &str, at: usize, message: impl Into<String>) -> ParseError {
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

/// Splits `input` into tokens, ending with [`Tok::End`].
pub(super) fn lex(input: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let tok = if is_word_char(c) {
            Tok::Word(lex_word(&mut chars))
        } else {
            chars.next();
            lex_symbol(input, at, c, &mut chars)?
        };
        tokens.push(Token { tok, at });
    }
    tokens.push(Token {
        tok: Tok::End,
        at: input.len(),
    });
    Ok(tokens)
}

fn lex_word(chars: &mut Chars<'_>) -> String {
    let mut word = String::new();
    while let Some(&(_, ch)) = chars.peek() {
        if !is_word_char(ch) {
            break;
        }
        word.push(ch);
        chars.next();
    }
    word
}

/// Reads the token that starts with `c` (already consumed) at byte `at`.
fn lex_symbol(input: &str, at: usize, c: char, chars: &mut Chars<'_>) -> Result<Tok, ParseError> {
    Ok(match c {
        '=' => {
            // Accept `==` as a synonym of `=`, as ClickHouse does.
            if matches!(chars.peek(), Some(&(_, '='))) {
                chars.next();
            }
            Tok::Eq
        }
        '!' => match chars.next() {
            Some((_, '=')) => Tok::Ne,
            _ => return Err(error_at(input, at, "expected '!=' ")),
        },
        '<' => match chars.next() {
            Some((_, '>')) => Tok::Ne,
            _ => {
                return Err(error_at(
                    input,
                    at,
                    "unsupported operator; use =, !=, <>, IN or NOT IN",
                ))
            }
        },
        '(' => Tok::LParen,
        ')' => Tok::RParen,
        ',' => Tok::Comma,
        '\'' => Tok::Str(lex_string(input, at, chars)?),
        '`' => Tok::Quoted(lex_quoted_name(input, at, chars)?),
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
    })
}

/// Reads a backtick-quoted name after its opening backtick.
fn lex_quoted_name(input: &str, start: usize, chars: &mut Chars<'_>) -> Result<String, ParseError> {
    let mut name = String::new();
    loop {
        match chars.next() {
            Some((_, '`')) => return Ok(name),
            Some((_, ch)) => name.push(ch),
            None => return Err(error_at(input, start, "unterminated `quoted` tag name")),
        }
    }
}

/// Reads a single-quoted string after its opening quote; `''` and `\'` are quotes, `\\` a
/// backslash.
fn lex_string(input: &str, start: usize, chars: &mut Chars<'_>) -> Result<String, ParseError> {
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
