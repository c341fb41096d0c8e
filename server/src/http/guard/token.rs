//! Bearer tokens: `--token-file` (writes) and `--query-token-file` (queries). A request shows
//! one as `Authorization: Bearer <token>`; it is compared in constant time, length included:
//! the SHA-256 digests of both are compared ([`subtle`]), so the time depends neither on where
//! the first difference is nor on how long either token is.
//!
//! | configured | writes need | queries need |
//! |---|---|---|
//! | neither | nothing | nothing |
//! | `--token-file W` | W | nothing |
//! | `--query-token-file R` | R | R |
//! | both | W | R or W |

use std::path::Path;

use axum::http::{header, HeaderMap};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::rules::{header_text, Access};

/// A secret token (never printed), kept as its SHA-256 digest.
pub struct Token([u8; 32]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// The token in `text`, without surrounding white space; it must be non-empty and a
    /// valid header value.
    pub fn new(text: &str) -> Result<Token, String> {
        let token = text.trim();
        if token.is_empty() {
            return Err("the token is empty".into());
        }
        if token.chars().any(|c| !c.is_ascii_graphic()) {
            return Err("the token must be printable ASCII without spaces".into());
        }
        Ok(Token(digest(token.as_bytes())))
    }

    /// The token in the file at `path` (one line; a trailing newline is ignored).
    pub fn read(path: &Path) -> Result<Token, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
        Token::new(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Whether `presented` is this token. `subtle` compares slices of different lengths in no
    /// time at all, which would tell an attacker the token's length: both sides are digests of
    /// the same size instead.
    fn matches(&self, presented: &[u8]) -> bool {
        self.0.ct_eq(&digest(presented)).into()
    }
}

/// The SHA-256 digest of `bytes`.
fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Why a request's token was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that is not one of those accepted here.
    Wrong,
}

/// The configured tokens.
#[derive(Debug, Default)]
pub struct Tokens {
    /// `--token-file`.
    pub write: Option<Token>,
    /// `--query-token-file`.
    pub read: Option<Token>,
}

impl Tokens {
    /// Whether any request needs a token.
    pub fn any(&self) -> bool {
        self.write.is_some() || self.read.is_some()
    }

    /// Whether a request with `headers` may do `access`.
    pub fn check(&self, access: Access, headers: &HeaderMap) -> Result<(), TokenError> {
        let accepted: Vec<&Token> = match access {
            // Protecting queries never leaves writes open.
            Access::Write => self.write.iter().chain(self.read.iter()).take(1).collect(),
            Access::Read if self.read.is_some() => {
                self.read.iter().chain(self.write.iter()).collect()
            }
            Access::Read => Vec::new(),
        };
        if accepted.is_empty() {
            return Ok(());
        }
        let presented = bearer(headers).ok_or(TokenError::Missing)?;
        // Compare with every accepted token, so the time does not say which one matched.
        let matched = accepted
            .iter()
            .fold(false, |any, token| token.matches(presented) | any);
        if matched {
            Ok(())
        } else {
            Err(TokenError::Wrong)
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme in any case).
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = header_text(headers, header::AUTHORIZATION)?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    fn token(text: &str) -> Option<Token> {
        Some(Token::new(text).unwrap())
    }

    #[test]
    fn tokens_are_trimmed_and_checked() {
        assert!(Token::new(" s3cret\n").is_ok());
        assert!(Token::new("\n").is_err());
        assert!(Token::new("two words").is_err());
        assert_eq!(
            format!("{:?}", Token::new("s3cret").unwrap()),
            "Token(<redacted>)"
        );
    }

    #[test]
    fn only_the_whole_token_matches() {
        let t = Token::new("s3cret").unwrap();
        assert!(t.matches(b"s3cret"));
        // A wrong last byte, a prefix, an extension, another case: all refused by the same
        // constant-time comparison (`subtle`), which does not stop at the first difference.
        for wrong in [&b"s3crex"[..], b"s3cre", b"s3crets", b"S3CRET", b""] {
            assert!(!t.matches(wrong), "{wrong:?}");
        }
    }

    #[test]
    fn the_comparison_does_the_same_work_whatever_the_length() {
        // What is compared is always 32 bytes, so `subtle` never takes its early exit for
        // slices of different lengths.
        let t = Token::new("s3cret").unwrap();
        for presented in [&b""[..], b"s", b"s3cret", &[b'x'; 4096]] {
            assert_eq!(digest(presented).len(), t.0.len());
        }
        assert_eq!(t.0, digest(b"s3cret"));
    }

    #[test]
    fn who_needs_which_token() {
        let none = HeaderMap::new();
        let (w, r) = (with_auth("Bearer W"), with_auth("bearer  R "));
        let open = Tokens::default();
        assert_eq!(open.check(Access::Write, &none), Ok(()));
        let writes = Tokens {
            write: token("W"),
            read: None,
        };
        assert_eq!(writes.check(Access::Write, &none), Err(TokenError::Missing));
        assert_eq!(writes.check(Access::Write, &r), Err(TokenError::Wrong));
        assert_eq!(writes.check(Access::Write, &w), Ok(()));
        assert_eq!(writes.check(Access::Read, &none), Ok(()));
        let reads = Tokens {
            write: None,
            read: token("R"),
        };
        assert_eq!(reads.check(Access::Read, &none), Err(TokenError::Missing));
        assert_eq!(reads.check(Access::Read, &r), Ok(()));
        assert_eq!(
            reads.check(Access::Write, &r),
            Ok(()),
            "the only token guards writes too"
        );
        assert_eq!(reads.check(Access::Write, &none), Err(TokenError::Missing));
        let both = Tokens {
            write: token("W"),
            read: token("R"),
        };
        assert_eq!(both.check(Access::Read, &r), Ok(()));
        assert_eq!(both.check(Access::Read, &w), Ok(()));
        assert_eq!(both.check(Access::Write, &r), Err(TokenError::Wrong));
        assert_eq!(both.check(Access::Write, &w), Ok(()));
        assert_eq!(
            both.check(Access::Read, &with_auth("Basic Ug==")),
            Err(TokenError::Missing)
        );
        assert_eq!(
            both.check(Access::Read, &with_auth("Bearer RR")),
            Err(TokenError::Wrong)
        );
    }
}
