//! The guard's rules as pure functions of a request's method, path and headers: which API
//! requests write, which `Host` names are ours, whether a browser sent the request from
//! another site, and which content types a write may have.

use std::net::IpAddr;

use axum::http::{header, HeaderMap, Method};
use embers_model::contract::embed::normalize_origin;

/// Whether a request reads or changes what the service holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A query: `GET`, or a `POST` to one of [`QUERY_PATHS`].
    Read,
    /// Everything else under `/v1/`: ingest, saving and deleting snapshots, any delete.
    Write,
}

/// The `POST` endpoints that only read. Any other `POST` under `/v1/` counts as a write, so an
/// endpoint added later is guarded as one until it is listed here. `/mcp` (the MCP tools) only
/// reads too.
pub const QUERY_PATHS: [&str; 12] = [
    "/v1/profile/ProfileTracing",
    "/v1/profile/pprof",
    "/v1/profile/services",
    "/v1/profile/timeline",
    "/v1/profile/tags",
    "/v1/profile/tag_values",
    "/v1/profile/functions",
    "/v1/profile/function_timeline",
    "/v1/profile/function_lines",
    "/v1/profile/heatmap",
    "/v1/profile/samples",
    "/mcp",
];

/// The content types a write may have. Browsers send `text/plain`, form and multipart bodies
/// (and bodies without a type) to any site without asking it first; these two need a CORS
/// preflight, which the service answers only for `--allow-origin` pages.
/// OTLP's protobuf types belong here for the same reason.
pub const WRITE_TYPES: [&str; 4] = [
    "application/json",
    "application/octet-stream",
    "application/x-protobuf",
    "application/protobuf",
];

/// The paths other profilers' senders post to, outside `/v1/` because they chose them:
/// Pyroscope's ingest (its own path and DeepFlow's agent's) and push. They are API paths, and
/// writes; being programs' endpoints, they take the content types those programs send
/// (multipart, `binary/octet-stream`, `application/proto`, ...), which is safe because a
/// browser's cross-site request is still refused by [`cross_site`] and tokens still apply.
pub const SENDER_PATHS: [&str; 3] = [
    "/ingest",
    "/api/v1/profile/ingest",
    crate::http::connect::PATH,
];

/// Whether `path` is the API (answered with envelopes, or OTLP's answers under
/// `/v1development/`, or the senders' own answers; guarded with tokens and the cross-site
/// rules) rather than the page: everything under `/v1/` and `/v1development/`, the senders'
/// paths and `/mcp`.
pub fn is_api(path: &str) -> bool {
    path == "/v1"
        || path.starts_with("/v1/")
        || path.starts_with("/v1development/")
        || path == "/mcp"
        || SENDER_PATHS.contains(&path)
}

/// Methods that change nothing (browsers send them anywhere; their answers stay unreadable to
/// other sites without CORS).
pub fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// What an API request does.
pub fn access(method: &Method, path: &str) -> Access {
    if is_safe(method) || (*method == Method::POST && QUERY_PATHS.contains(&path)) {
        Access::Read
    } else {
        Access::Write
    }
}

/// Which `Host` names the service answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hosts {
    /// Any (`--allowed-host '*'`: a proxy in front checks it).
    Any,
    /// These names (lower case, no port), and every IP address.
    Names(Vec<String>),
}

impl Hosts {
    /// Whether a request naming `host` (a [`host_name`]) is for us. IP addresses always are:
    /// DNS rebinding needs a name the attacker controls, and a page whose origin is an IP
    /// address was served by whoever listens there.
    pub fn allows(&self, host: &str) -> bool {
        match self {
            Hosts::Any => true,
            Hosts::Names(names) => {
                host.parse::<IpAddr>().is_ok() || names.iter().any(|n| n == host)
            }
        }
    }
}

/// The name in a `Host` header or an `--allowed-host` value: no port, no IPv6 brackets, lower
/// case, no trailing dot; `None` when it is not a host.
pub fn host_name(value: &str) -> Option<String> {
    let value = value.trim();
    let (name, port) = if let Some(rest) = value.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        (ip, after.strip_prefix(':'))
    } else {
        match value.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (value, None),
        }
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    (port_ok && name_ok).then_some(name)
}

/// A header's value as text, when present and readable.
pub fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether a browser sent this state-changing request from a page of another origin that is
/// not in `allowed` (normalised origins). `Sec-Fetch-Site` decides when the browser sends it;
/// otherwise `Origin` is compared with `Host`. Requests with neither come from programs, not
/// pages, and pass. `Err` says why the request is refused.
pub fn cross_site(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let origin = header_text(headers, header::ORIGIN);
    if origin
        .and_then(|o| normalize_origin(o).ok())
        .is_some_and(|o| allowed.contains(&o))
    {
        return Ok(());
    }
    let from = origin.unwrap_or("another site");
    let refused = |why: String| {
        Err(format!(
            "cross-site request refused: {why}; only pages of the service's own origin{} may \
             send it (start the service with --allow-origin {from} to allow that page)",
            if allowed.is_empty() {
                ""
            } else {
                " and of --allow-origin"
            },
        ))
    };
    match header_text(headers, "sec-fetch-site").map(str::to_ascii_lowercase) {
        Some(site) if site == "same-origin" || site == "none" => Ok(()),
        Some(site) => refused(format!(
            "the browser says it comes from {from} (Sec-Fetch-Site: {site})"
        )),
        None => match origin {
            None => Ok(()),
            Some(o) if same_origin_as_host(o, header_text(headers, header::HOST)) => Ok(()),
            Some(o) => refused(format!("Origin {o} is not this service")),
        },
    }
}

/// Whether `origin` names the host and port the request was sent to.
fn same_origin_as_host(origin: &str, host: Option<&str>) -> bool {
    let (Ok(origin), Some(host)) = (normalize_origin(origin), host) else {
        return false;
    };
    let authority = origin.split_once("://").map_or("", |(_, a)| a);
    let scheme_port = if origin.starts_with("https://") {
        ":443"
    } else {
        ":80"
    };
    let host = host.trim().to_ascii_lowercase();
    authority == host.strip_suffix(scheme_port).unwrap_or(&host)
}

/// Whether a write's body has one of the [`WRITE_TYPES`]; `Err` says what it has instead.
pub fn write_content_type(headers: &HeaderMap) -> Result<(), String> {
    let given = header_text(headers, header::CONTENT_TYPE);
    let media = given
        .and_then(|ct| ct.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    if media.is_some_and(|m| WRITE_TYPES.contains(&m.as_str())) {
        return Ok(());
    }
    Err(format!(
        "this request changes stored data, so it needs Content-Type: application/json, \
         application/octet-stream for folded text, or application/x-protobuf for OTLP (got \
         {}): browsers send other types to any site without asking it, so the service refuses \
         them here",
        given.map_or_else(|| "none".to_owned(), |g| format!("'{g}'"))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn queries_read_and_everything_else_writes() {
        assert_eq!(
            access(&Method::POST, "/v1/profile/ProfileTracing"),
            Access::Read
        );
        assert_eq!(access(&Method::GET, "/v1/profile/snapshots"), Access::Read);
        assert_eq!(access(&Method::POST, "/v1/profile/ingest"), Access::Write);
        assert_eq!(
            access(&Method::POST, "/v1/profile/snapshots"),
            Access::Write
        );
        assert_eq!(
            access(&Method::DELETE, "/v1/profile/snapshots/ab"),
            Access::Write
        );
        assert_eq!(
            access(&Method::POST, "/v1/profile/ProfileTracing/"),
            Access::Write
        );
        assert!(is_api("/v1") && is_api("/v1/x") && !is_api("/v10") && !is_api("/"));
        assert!(is_api("/ingest") && is_api("/push.v1.PusherService/Push"));
        assert_eq!(access(&Method::POST, "/ingest"), Access::Write);
        assert_eq!(access(&Method::POST, "/v1/profile/pprof"), Access::Read);
    }

    #[test]
    fn host_names_lose_port_brackets_case_and_trailing_dot() {
        for (value, name) in [
            ("localhost:8080", "localhost"),
            ("Embers.Example.", "embers.example"),
            ("[::1]:9000", "::1"),
            ("[::1]", "::1"),
            ("127.0.0.1", "127.0.0.1"),
        ] {
            assert_eq!(host_name(value).as_deref(), Some(name), "{value}");
        }
        for value in ["", ":80", "a:b", "a b", "[::1", "evil.example:80/x", "a@b"] {
            assert_eq!(host_name(value), None, "{value}");
        }
        let hosts = Hosts::Names(vec!["localhost".into(), "embers.example".into()]);
        assert!(hosts.allows("localhost") && hosts.allows("embers.example"));
        assert!(hosts.allows("10.1.2.3") && hosts.allows("::1"));
        assert!(!hosts.allows("evil.example") && !hosts.allows("localhost.evil.example"));
        assert!(Hosts::Any.allows("evil.example"));
    }

    #[test]
    fn cross_site_requests_are_told_apart_from_same_origin_and_programs() {
        let none: [String; 0] = [];
        assert!(cross_site(&headers(&[]), &none).is_ok(), "curl");
        assert!(cross_site(&headers(&[("sec-fetch-site", "same-origin")]), &none).is_ok());
        assert!(cross_site(&headers(&[("sec-fetch-site", "none")]), &none).is_ok());
        let evil = [
            ("origin", "http://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ];
        let e = cross_site(&headers(&evil), &none).unwrap_err();
        assert!(
            e.contains("http://evil.example") && e.contains("--allow-origin"),
            "{e}"
        );
        let sibling = [
            ("origin", "http://127.0.0.1:9"),
            ("sec-fetch-site", "same-site"),
        ];
        assert!(
            cross_site(&headers(&sibling), &none).is_err(),
            "another port is another origin"
        );
        assert!(cross_site(&headers(&sibling), &["http://127.0.0.1:9".to_owned()]).is_ok());
        // Browsers without Sec-Fetch-Site: Origin against Host.
        let same = [
            ("origin", "http://127.0.0.1:8080"),
            ("host", "127.0.0.1:8080"),
        ];
        assert!(cross_site(&headers(&same), &none).is_ok());
        let tls = [
            ("origin", "https://Embers.example"),
            ("host", "embers.example:443"),
        ];
        assert!(cross_site(&headers(&tls), &none).is_ok());
        let other = [
            ("origin", "http://127.0.0.1:8081"),
            ("host", "127.0.0.1:8080"),
        ];
        assert!(cross_site(&headers(&other), &none).is_err());
        assert!(cross_site(&headers(&[("origin", "null"), ("host", "a")]), &none).is_err());
    }

    #[test]
    fn writes_need_a_type_browsers_cannot_send_cross_site() {
        for ct in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/octet-stream",
        ] {
            assert!(
                write_content_type(&headers(&[("content-type", ct)])).is_ok(),
                "{ct}"
            );
        }
        for ct in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "text/json",
        ] {
            let e = write_content_type(&headers(&[("content-type", ct)])).unwrap_err();
            assert!(e.contains(ct), "{e}");
        }
        assert!(write_content_type(&headers(&[]))
            .unwrap_err()
            .contains("got none"));
    }
}
