//! The source text beside a profile's lines (issue 36 item 4): how the viewer learns what the
//! service can show, asks for a file's text, and builds the link a browser opens for code hosted
//! elsewhere.
//!
//! - `GET /v1/profile/source_config` → [`SourceConfig`] in the usual envelope: whether the
//!   service was started with `--source-dir` (so [`SOURCE_PATH`] can answer) and the
//!   `--source-url` template (with the `--source-url-strip` prefixes). A querier without these
//!   routes answers 404: the viewer then offers neither.
//! - `GET /v1/profile/source?file=<stored path>` → [`SourceText`] in the envelope. The stored
//!   path (as a frame's [`super::detail::SourceLine::file`] says) is matched to a file under the
//!   `--source-dir` roots by its longest suffix, never outside them. 404 when no root is
//!   configured or no file matches; 400 when `file` is missing or unusable, or the matched file is
//!   bigger than [`MAX_SOURCE_BYTES`] or not UTF-8 text; `DESCRIPTION` says which.
//! - The template is opened by the *browser* ([`SourceConfig::url`]); the service never fetches
//!   it.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The source text endpoint (`GET`, query `file`).
pub const SOURCE_PATH: &str = "/v1/profile/source";
/// The endpoint that says what source the service can show (`GET`).
pub const SOURCE_CONFIG_PATH: &str = "/v1/profile/source_config";
/// Largest source file answered: bigger ones are refused (400), not cut.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;
/// Longest `file` asked for.
pub const MAX_FILE_PARAM: usize = 4096;

/// What source the service can show; the viewer reads it once per base URL.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceConfig {
    /// `--source-dir` was given: [`SOURCE_PATH`] may answer with text.
    #[serde(default)]
    pub source_dirs_configured: bool,
    /// `--source-url`: a link with `{path}` (and optionally `{line}`) the browser opens, e.g.
    /// `https://github.com/org/repo/blob/main/{path}#L{line}`; `null` when not configured.
    #[serde(default)]
    pub source_url_template: Option<String>,
    /// `--source-url-strip`: build-path prefixes removed from a stored path before it fills
    /// `{path}` (the first that matches), e.g. `/home/ci/work/repo/`.
    #[serde(default)]
    pub source_url_strip: Vec<String>,
}

/// `GET /v1/profile/source`'s query.
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceQuery {
    /// The file as stored with the profile's lines (absolute build path, or relative).
    pub file: String,
}

/// A source file's text.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceText {
    /// The `file` asked for.
    pub file: String,
    /// The suffix of it that matched, relative to the source root it was found under.
    pub matched: String,
    /// The whole text (UTF-8, at most [`MAX_SOURCE_BYTES`]).
    pub text: String,
    /// Lines in `text`.
    pub line_count: u32,
}

/// Why a `--source-url` template is refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TemplateError {
    /// Not an absolute `http://` or `https://` URL with a host before `{path}`.
    #[error("--source-url {0:?} must start with http:// or https:// and a host, then {{path}}")]
    NotHttp(String),
    /// No `{path}` placeholder (a link without the file is no link to it).
    #[error("--source-url {0:?} has no {{path}} placeholder")]
    NoPath(String),
}

impl SourceConfig {
    /// Check a `--source-url` template: an http(s) URL whose host comes before `{path}`, so a
    /// stored path (untrusted text) can never change where the link goes.
    pub fn check_template(template: &str) -> Result<(), TemplateError> {
        let Some(at) = template.find("{path}") else {
            return Err(TemplateError::NoPath(template.to_owned()));
        };
        let before = &template[..at];
        let rest = before
            .strip_prefix("https://")
            .or_else(|| before.strip_prefix("http://"))
            .ok_or_else(|| TemplateError::NotHttp(template.to_owned()))?;
        // A host, then a slash, before the path: `https://{path}` would let the path pick the host.
        match rest.split_once('/') {
            Some((host, _)) if !host.is_empty() && !host.contains(['{', '}']) => Ok(()),
            _ => Err(TemplateError::NotHttp(template.to_owned())),
        }
    }

    /// The link for `file` at `line`, or `None` when no template is configured or the path
    /// cannot be put in a link safely (`..` segments, empty). The path's first matching
    /// strip prefix is removed, leading slashes dropped, and every segment percent-encoded.
    pub fn url(&self, file: &str, line: u32) -> Option<String> {
        let template = self.source_url_template.as_deref()?;
        Self::check_template(template).ok()?;
        let stripped = self
            .source_url_strip
            .iter()
            .filter(|p| !p.is_empty())
            .find_map(|p| file.strip_prefix(p.as_str()))
            .unwrap_or(file);
        let segments: Vec<&str> = stripped.split('/').filter(|s| !s.is_empty()).collect();
        if segments.is_empty() || segments.iter().any(|s| *s == ".." || *s == ".") {
            return None;
        }
        let path: Vec<String> = segments.iter().map(|s| encode_segment(s)).collect();
        Some(
            template
                .replace("{path}", &path.join("/"))
                .replace("{line}", &line.to_string()),
        )
    }
}

/// Percent-encode everything but RFC 3986's unreserved characters.
fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(template: &str, strip: &[&str]) -> SourceConfig {
        SourceConfig {
            source_dirs_configured: false,
            source_url_template: Some(template.to_owned()),
            source_url_strip: strip.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn links_fill_path_and_line_with_the_build_prefix_removed() {
        let c = config(
            "https://github.com/org/repo/blob/main/{path}#L{line}",
            &["/home/ci/work/repo/"],
        );
        assert_eq!(
            c.url("/home/ci/work/repo/src/hot loop.c", 42).as_deref(),
            Some("https://github.com/org/repo/blob/main/src/hot%20loop.c#L42")
        );
        // No prefix matches: the path without its leading slash.
        assert_eq!(
            c.url("/usr/src/x.c", 1).as_deref(),
            Some("https://github.com/org/repo/blob/main/usr/src/x.c#L1")
        );
        assert_eq!(SourceConfig::default().url("a.c", 1), None);
    }

    #[test]
    fn a_stored_path_cannot_leave_the_template_s_site() {
        let c = config("https://git.example/r/{path}?line={line}", &[]);
        assert_eq!(c.url("a/../../x", 1), None);
        assert_eq!(c.url("/", 1), None);
        let odd = c.url("a?b#c@d%e", 3).expect("encoded");
        assert_eq!(odd, "https://git.example/r/a%3Fb%23c%40d%25e?line=3");
        for bad in [
            "ftp://x/{path}",
            "https://{path}",
            "https:///{path}",
            "{path}",
            "https://x/a",
        ] {
            assert!(SourceConfig::check_template(bad).is_err(), "{bad}");
        }
        assert!(SourceConfig::check_template("http://h:8080/{path}#L{line}").is_ok());
    }

    #[test]
    fn the_config_reads_with_members_missing() {
        let c: SourceConfig = serde_json::from_str("{}").expect("json");
        assert_eq!(c, SourceConfig::default());
        let c: SourceConfig = serde_json::from_str(
            r#"{"source_dirs_configured":true,"source_url_template":"https://h/{path}","source_url_strip":[]}"#,
        )
        .expect("json");
        assert!(c.source_dirs_configured);
    }
}
