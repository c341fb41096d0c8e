//! The viewer built into the binary (`server/build.rs` embeds it), served from memory when
//! `serve` has no `--static-dir`.
//!
//! Each file carries the brotli and gzip variants the build made (when smaller), chosen by the
//! request's `Accept-Encoding` (brotli first); its `ETag` (a hash of its bytes, one per
//! variant) answers `If-None-Match` with a 304. Paths and caching follow the directory's
//! rules (`super::static_files`): a client route gets `index.html`, a missing file a 404.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;

/// One file of the built viewer.
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its URL path, `/index.html`.
    pub path: &'static str,
    /// A strong entity tag of its bytes, quoted.
    pub etag: &'static str,
    /// The file as built.
    pub raw: &'static [u8],
    /// Brotli-compressed, when that is smaller.
    pub br: Option<&'static [u8]>,
    /// Gzipped, when that is smaller.
    pub gzip: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/viewer.rs"));

/// Whether this binary carries a viewer.
pub fn has_viewer() -> bool {
    VIEWER.is_some()
}

/// Where the build looked for the viewer (for the note a binary without one shows).
pub fn looked_in() -> &'static str {
    LOOKED_IN
}

/// The embedded file at `path`.
pub fn find(path: &str) -> Option<&'static EmbeddedFile> {
    VIEWER?.iter().find(|f| f.path == path)
}

/// The `Content-Type` of a file, by its extension.
pub fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A content coding of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Brotli,
    Gzip,
    Identity,
}

impl Coding {
    fn name(self) -> Option<&'static str> {
        match self {
            Coding::Brotli => Some("br"),
            Coding::Gzip => Some("gzip"),
            Coding::Identity => None,
        }
    }
}

/// Whether `Accept-Encoding` accepts `coding` (listed, or `*`, without `q=0`).
fn accepts(headers: &HeaderMap, coding: &str) -> bool {
    let Some(value) = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let mut star = false;
    for item in value.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if name.eq_ignore_ascii_case(coding) {
            return !refused;
        }
        star |= name == "*" && !refused;
    }
    star
}

/// The bytes and coding of `file` to send for `headers`.
fn pick(file: &EmbeddedFile, headers: &HeaderMap) -> (&'static [u8], Coding) {
    match (file.br, file.gzip) {
        (Some(br), _) if accepts(headers, "br") => (br, Coding::Brotli),
        (_, Some(gz)) if accepts(headers, "gzip") => (gz, Coding::Gzip),
        _ => (file.raw, Coding::Identity),
    }
}

/// The entity tag of one variant: each coding is its own representation.
fn etag_of(file: &EmbeddedFile, coding: Coding) -> String {
    match coding.name() {
        Some(name) => format!("{}-{name}\"", file.etag.trim_end_matches('"')),
        None => file.etag.to_owned(),
    }
}

/// Whether `If-None-Match` names `etag` (or `*`); weak comparison, as RFC 9110 asks for it.
fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

/// The answer for `file` to a GET or HEAD with `headers`, cached as `cache_control` says.
pub fn respond(
    file: &EmbeddedFile,
    method: &Method,
    headers: &HeaderMap,
    cache_control: &'static str,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let (bytes, coding) = pick(file, headers);
    let etag = etag_of(file, coding);
    let fresh = not_modified(headers, &etag);
    let mut response = if fresh {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(Body::from(bytes))
    };
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(file.path)),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    if let Ok(value) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, value);
    }
    if file.br.is_some() || file.gzip.is_some() {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(name) = coding.name() {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
    }
    if !fresh {
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    static FILE: EmbeddedFile = EmbeddedFile {
        path: "/embers-0123456789abcdef_bg.wasm",
        etag: "\"00000000000000ab\"",
        raw: b"raw bytes",
        br: Some(b"br"),
        gzip: Some(b"gz"),
    };

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(name.clone(), HeaderValue::from_static(value));
        }
        h
    }

    #[test]
    fn the_coding_follows_accept_encoding() {
        let ae = |v| headers(&[(header::ACCEPT_ENCODING, v)]);
        assert_eq!(pick(&FILE, &ae("gzip, deflate, br")).1, Coding::Brotli);
        assert_eq!(pick(&FILE, &ae("gzip")).1, Coding::Gzip);
        assert_eq!(pick(&FILE, &ae("br;q=0, gzip")).1, Coding::Gzip);
        assert_eq!(pick(&FILE, &ae("*")).1, Coding::Brotli);
        assert_eq!(pick(&FILE, &ae("identity")).1, Coding::Identity);
        assert_eq!(pick(&FILE, &HeaderMap::new()).1, Coding::Identity);
        let plain = EmbeddedFile { br: None, ..FILE };
        assert_eq!(pick(&plain, &ae("br, gzip")), (&b"gz"[..], Coding::Gzip));
    }

    #[test]
    fn a_matching_etag_is_a_304_and_each_variant_has_its_own() {
        let h = headers(&[
            (header::ACCEPT_ENCODING, "br"),
            (header::IF_NONE_MATCH, "\"x\", \"00000000000000ab-br\""),
        ]);
        let r = respond(&FILE, &Method::GET, &h, "no-cache");
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(r.headers()[header::ETAG], "\"00000000000000ab-br\"");
        // The identity variant's tag does not validate the brotli one.
        let h = headers(&[
            (header::ACCEPT_ENCODING, "br"),
            (header::IF_NONE_MATCH, "\"00000000000000ab\""),
        ]);
        let r = respond(&FILE, &Method::GET, &h, "no-cache");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(r.headers()[header::CONTENT_LENGTH], "2");
        assert_eq!(r.headers()[header::VARY], "accept-encoding");
        let post = respond(&FILE, &Method::POST, &h, "no-cache");
        assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type("/index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("/a.JS"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("/main-1.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("/x_bg.wasm"), "application/wasm");
        assert_eq!(content_type("/LICENSE"), "application/octet-stream");
    }
}
