//! `GET /embers-config.json`: which pages may embed the viewer and drive it with
//! `postMessage`. The service writes it from its `--embed-origin` options (and sends the same
//! list in `frame-ancestors`); a static deployment can put the file next to `index.html`.
//! Without the file only a page of the viewer's own origin is a host.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The page's configuration file.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedConfig {
    /// Origins (`https://portal.example.com`) besides the viewer's own whose pages may embed it.
    #[serde(default)]
    pub embed_origins: Vec<String>,
}

impl EmbedConfig {
    /// Whether a page of `origin` may drive a viewer served from `own_origin`. Opaque origins
    /// (`null`: sandboxed frames, `file:` pages, data URLs) never may: anyone can make one.
    pub fn allows(&self, origin: &str, own_origin: &str) -> bool {
        let Ok(origin) = normalize_origin(origin) else {
            return false;
        };
        // Listed origins are normalised too: a hand-written file may say `https://Portal/`.
        origin == own_origin
            || self
                .embed_origins
                .iter()
                .any(|o| normalize_origin(o).is_ok_and(|o| o == origin))
    }
}

/// Why a text is not an origin.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum OriginError {
    /// Not `http://` or `https://`.
    #[error("{0:?} is not an origin: it must start with http:// or https://")]
    Scheme(String),
    /// Has a path, query, user or nothing after the scheme.
    #[error("{0:?} is not an origin: write only scheme, host and port (https://host:8443)")]
    Shape(String),
}

/// The canonical form of an origin (`scheme://host[:port]`, lower case, no trailing slash, no
/// default port), as browsers write `Origin` headers and `MessageEvent.origin`.
pub fn normalize_origin(text: &str) -> Result<String, OriginError> {
    let lower = text.trim().to_ascii_lowercase();
    let (scheme, rest) = lower
        .split_once("://")
        .filter(|(s, _)| matches!(*s, "http" | "https"))
        .ok_or_else(|| OriginError::Scheme(text.to_string()))?;
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    let bad = authority.is_empty()
        || authority.starts_with(':')
        || authority
            .chars()
            .any(|c| "/?#@ \\".contains(c) || c.is_control());
    if bad {
        return Err(OriginError::Shape(text.to_string()));
    }
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    Ok(format!("{scheme}://{authority}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalised_like_browsers_write_them() {
        for (text, origin) in [
            ("https://Portal.Example.com/", "https://portal.example.com"),
            ("http://127.0.0.1:8090", "http://127.0.0.1:8090"),
            ("https://a.example:443", "https://a.example"),
            ("http://a.example:80/", "http://a.example"),
            ("http://[::1]:9000", "http://[::1]:9000"),
        ] {
            assert_eq!(normalize_origin(text).as_deref(), Ok(origin), "{text}");
        }
        for text in [
            "portal.example.com",
            "ftp://a",
            "null",
            "*",
            "https://",
            "https://a.example/path",
            "https://user@a.example",
            "https://a.example?x",
            "https://:80",
        ] {
            assert!(normalize_origin(text).is_err(), "{text}");
        }
    }

    #[test]
    fn only_the_own_and_listed_origins_may_embed() {
        let own = "http://127.0.0.1:8090";
        let none = EmbedConfig::default();
        assert!(none.allows("http://127.0.0.1:8090", own));
        assert!(!none.allows("http://127.0.0.1:8091", own));
        assert!(!none.allows("null", own));
        let listed = EmbedConfig {
            embed_origins: vec!["https://Portal.example.com/".into()],
        };
        assert!(listed.allows("https://portal.example.com", own));
        assert!(!listed.allows("https://portal.example.com.evil.net", own));
        assert!(!listed.allows("http://portal.example.com", own));
        assert!(listed.allows(own, own));
        let parsed: EmbedConfig =
            serde_json::from_str(r#"{"embed_origins":["https://a.example"]}"#).unwrap();
        assert_eq!(parsed.embed_origins, ["https://a.example"]);
        assert_eq!(serde_json::from_str::<EmbedConfig>("{}").unwrap(), none);
    }
}
