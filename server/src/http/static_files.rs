//! The built viewer, served at `/` on the same origin as the API (the querier sends no CORS
//! headers, so the page must live beside the API).
//!
//! Unknown non-API paths fall back to `index.html` (the viewer routes on the client), except
//! files ([`is_file_path`]: a content-hashed name or a file extension), which are a 404: a page
//! asking for `embers-<hash>.js` after an upgrade must not get HTML instead. Unknown `/v1/...`
//! paths get a 404 envelope. When the directory has no `index.html`, `/` answers a short
//! plain-text note saying how to build the viewer.
//!
//! Without `--static-dir` the files are the viewer built into the binary ([`super::embedded`]);
//! a binary built without one answers `/` with the same kind of note.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

use super::embedded;
use crate::error::Error;
use crate::http::state::AppState;

/// The fallback handler for every path no route matched.
pub async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    if path == "/v1" || path.starts_with("/v1/") {
        return Error::not_found(&path).into_response();
    }
    match &state.static_dir {
        Some(dir) => from_dir(dir, &path, request).await,
        None => from_binary(&path, &request),
    }
}

/// The viewer built into the binary.
fn from_binary(path: &str, request: &Request) -> Response {
    if !embedded::has_viewer() {
        return not_built(
            path,
            &format!(
                "this embers-server was built without it (no {}/index.html at build time)",
                embedded::looked_in()
            ),
        );
    }
    let wanted = if is_file_path(path) {
        path
    } else {
        "/index.html"
    };
    match embedded::find(wanted) {
        Some(file) => embedded::respond(
            file,
            request.method(),
            request.headers(),
            cache_control(path),
        ),
        None => missing(path),
    }
}

/// The viewer in `dir` (`--static-dir`).
async fn from_dir(dir: &std::path::Path, path: &str, request: Request) -> Response {
    let index = dir.join("index.html");
    if !index.is_file() {
        return not_built(path, &format!("no {}/index.html", dir.display()));
    }
    let files = ServeDir::new(dir);
    let answer = if is_file_path(path) {
        files.oneshot(request).await
    } else {
        files.fallback(ServeFile::new(index)).oneshot(request).await
    };
    let mut response = match answer {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    };
    if response.status() == StatusCode::NOT_FOUND {
        return missing(path);
    }
    if response.status().is_success() {
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control(path)),
        );
    }
    response
}

/// The 404 of a file the viewer does not have.
fn missing(path: &str) -> Response {
    text(
        StatusCode::NOT_FOUND,
        format!("no such file: {path} (if the page asked for it, reload the page)\n"),
    )
}

/// How long browsers may keep a file. Trunk names the page's own files after their content
/// (`embers-<hash>.js`, `snippets/embers-<hash>/…`), so those never change; everything else —
/// `index.html` and the decode worker, whose names the page must know in advance — is checked
/// with the server on every load, so an upgrade never pairs a new page with an old worker.
fn cache_control(path: &str) -> &'static str {
    if path.split('/').any(has_content_hash) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// Extensions of the files a built viewer holds; a path ending in one names a file, never a
/// client route.
const FILE_EXTENSIONS: [&str; 12] = [
    "js", "mjs", "wasm", "css", "map", "json", "html", "ico", "png", "svg", "txt", "woff2",
];

/// Whether `path` names a file rather than a route of the page.
fn is_file_path(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or("");
    has_content_hash(last)
        || last
            .rsplit_once('.')
            .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Whether a path segment is `name-<12+ hex digits>` (before any extension or `_bg` suffix).
/// Trunk writes its 64-bit hash without leading zeros, so one name in 256 has 14 digits.
fn has_content_hash(segment: &str) -> bool {
    let stem = segment.split('.').next().unwrap_or("");
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| hash.len() >= 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A warning when there is no viewer to serve (`/` then shows a note saying how to build one).
pub fn warn_without_viewer(static_dir: Option<&std::path::Path>) {
    match static_dir {
        Some(dir) if !dir.join("index.html").is_file() => {
            tracing::warn!(dir = %dir.display(), "viewer not built; / shows a note")
        }
        None if !embedded::has_viewer() => tracing::warn!(
            "this embers-server was built without the viewer; / shows a note (build it with \
             `trunk build --release`, then build embers-server again)"
        ),
        _ => {}
    }
}

/// The note in place of a viewer that is not there (`why`).
fn not_built(path: &str, why: &str) -> Response {
    let status = if path == "/" {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    let note = format!(
        "Embers: the viewer is not built ({why}).\n\
         Build it with `trunk build --release` (output in dist/) and then embers-server \
         (`cargo build --release -p embers-server` embeds dist/), or start the server with \
         --static-dir DIR pointing at a built viewer.\n\
         The API is available meanwhile: POST /v1/profile/ProfileTracing, POST /v1/profile/ingest, \
         GET /healthz.\n"
    );
    text(status, note)
}

/// A plain-text answer.
fn text(status: StatusCode, text: String) -> Response {
    let mut response = (status, text).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::{cache_control, is_file_path};

    #[test]
    fn files_are_told_apart_from_client_routes() {
        for path in [
            "/embers-ee52d4e313d05d5a.js",
            "/embers-ee52d4e313d05d5a_bg.wasm",
            "/main-2bb08620ee04affc.css",
            "/decode_worker_loader.js",
            "/snippets/embers-06b3f3957067fe8e/inline0.js",
            "/favicon.ico",
        ] {
            assert!(is_file_path(path), "{path}");
        }
        for path in ["/", "/some/client/route", "/profile/redis.server", "/x"] {
            assert!(!is_file_path(path), "{path}");
        }
    }

    #[test]
    fn content_hashed_files_are_immutable_and_the_rest_revalidated() {
        for path in [
            "/embers-ee52d4e313d05d5a.js",
            "/embers-ee52d4e313d05d5a_bg.wasm",
            "/embers-c576ffce998945_bg.wasm",
            "/main-2bb08620ee04affc.css",
            "/snippets/embers-06b3f3957067fe8e/inline0.js",
        ] {
            assert_eq!(
                cache_control(path),
                "public, max-age=31536000, immutable",
                "{path}"
            );
        }
        for path in [
            "/",
            "/index.html",
            "/decode_worker_loader.js",
            "/decode_worker.js",
            "/decode_worker_bg.wasm",
            "/some/client/route",
            "/x-12.js",
        ] {
            assert_eq!(cache_control(path), "no-cache", "{path}");
        }
    }
}
