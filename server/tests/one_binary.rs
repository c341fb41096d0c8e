//! One binary: the real `embers-server`, started from an empty directory without
//! `--static-dir`, serves the viewer built into it (types, compression, caching, entity tags);
//! `import --to URL` sends files to it through the ingest API (the profile is then queryable
//! there), and a wrong token, a service that is not there, or an oversized request fails with a
//! message naming the URL and the status.
//!
//! The binary carries the viewer when `dist/` (or `EMBERS_VIEWER_DIST`) held a built one when
//! it was compiled. Without one the viewer test says so and skips, except under `CI=true`:
//! `scripts/test.sh` builds the viewer before the tests, so there a missing viewer is a failure.

use std::path::Path;

use serde_json::json;

use crate::common::process::{spawn_serve, spawn_serve_in, BIN};
use crate::common::{folded_of, query_at};

/// GET `path` with `headers`; the response.
async fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    // No automatic decompression: the test sees the bytes as sent.
    let mut request = reqwest::Client::new().get(format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("GET")
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Whether the page is the note of a binary built without the viewer (then: skip, or fail in CI).
fn without_viewer(page: &str) -> bool {
    if !page.contains("built without it") {
        return false;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !ci,
        "CI=true but embers-server was built without the viewer: scripts/test.sh must build \
         it (step build) before the tests. The page said: {page}"
    );
    eprintln!("SKIPPED: embers-server was built without the viewer (build dist/ first): {page}");
    true
}

#[tokio::test]
async fn serve_without_static_dir_serves_the_viewer_built_in_from_any_directory() {
    let empty = tempfile::tempdir().expect("dir");
    let db = empty.path().join("embers.db");
    let (mut child, base) =
        spawn_serve_in(empty.path(), &["--db", db.to_str().expect("UTF-8")]).await;
    let page = get(&base, "/", &[]).await;
    assert_eq!(page.status(), 200);
    let csp = header(&page, "content-security-policy").to_owned();
    let (page_type, page_cache) = (
        header(&page, "content-type").to_owned(),
        header(&page, "cache-control").to_owned(),
    );
    let html = page.text().await.expect("page");
    if without_viewer(&html) {
        return;
    }
    assert_eq!(page_type, "text/html; charset=utf-8");
    assert_eq!(page_cache, "no-cache");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    // A client route is the page too.
    let route = get(&base, "/some/client/route", &[]).await;
    assert_eq!(header(&route, "content-type"), "text/html; charset=utf-8");
    assert_eq!(route.text().await.expect("route"), html);

    let wasm = wasm_path(&html);
    let plain = get(&base, &wasm, &[]).await;
    assert_eq!(plain.status(), 200);
    assert_eq!(header(&plain, "content-type"), "application/wasm");
    assert_eq!(
        header(&plain, "cache-control"),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(header(&plain, "content-encoding"), "");
    let raw = plain.bytes().await.expect("wasm");
    assert!(raw.starts_with(b"\0asm"), "a WebAssembly module");

    let br = get(&base, &wasm, &[("accept-encoding", "gzip, deflate, br")]).await;
    assert_eq!(header(&br, "content-encoding"), "br");
    assert_eq!(header(&br, "vary"), "accept-encoding");
    let etag = header(&br, "etag").to_owned();
    let packed = br.bytes().await.expect("brotli");
    assert!(
        packed.len() < raw.len() / 2,
        "brotli {} of {} bytes",
        packed.len(),
        raw.len()
    );
    let gz = get(&base, &wasm, &[("accept-encoding", "gzip")]).await;
    assert_eq!(header(&gz, "content-encoding"), "gzip");
    assert_ne!(header(&gz, "etag"), etag, "each coding is its own entity");

    let again = get(
        &base,
        &wasm,
        &[("accept-encoding", "br"), ("if-none-match", &etag)],
    )
    .await;
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.expect("empty").is_empty());
    let css = css_path(&html);
    let style = get(&base, &css, &[]).await;
    assert_eq!(header(&style, "content-type"), "text/css; charset=utf-8");
    let missing = get(&base, "/embers-0123456789abcdef.js", &[]).await;
    assert_eq!(missing.status(), 404);
    child.kill().await.expect("stop");
}

/// The page's own (content-hashed) wasm, as index.html preloads it.
fn wasm_path(html: &str) -> String {
    href(html, "/embers-", "_bg.wasm")
}

fn css_path(html: &str) -> String {
    href(html, "/", ".css")
}

/// The first `href="…"` of `html` starting with `prefix` and ending in `suffix`.
fn href(html: &str, prefix: &str, suffix: &str) -> String {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.starts_with(prefix) && href.ends_with(suffix))
        .unwrap_or_else(|| panic!("no {prefix}…{suffix} in the page: {html}"))
        .to_owned()
}

/// Run `embers-server import ARGS` in `cwd`; (success, stdout, stderr).
fn import(cwd: &Path, args: &[&str], token: Option<&str>) -> (bool, String, String) {
    let mut command = std::process::Command::new(BIN);
    command.current_dir(cwd).arg("import").args(args);
    command.env_remove("EMBERS_TOKEN");
    if let Some(token) = token {
        command.env("EMBERS_TOKEN", token);
    }
    let out = command.output().expect("run import");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const FOLDED: &str = "main;serve;parse 120\nmain;serve;render 300\nmain;idle 50\n";

#[tokio::test]
async fn import_to_a_running_service_makes_the_profile_queryable_there() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("served.db");
    let (mut child, base) = spawn_serve(&db, &[]).await;
    let work = tempfile::tempdir().expect("empty cwd");
    std::fs::write(work.path().join("myapp.folded"), FOLDED).expect("write");
    let args = [
        "--to",
        &base,
        "--app-service",
        "x",
        "--time",
        "1700000000",
        "--tag",
        "host=node-a",
        "myapp.folded",
    ];
    let (ok, out, err) = import(work.path(), &args, None);
    assert!(ok, "{out}{err}");
    assert!(out.contains("myapp.folded: imported 3 samples"), "{out}");
    // Nothing was written where a local import would have written.
    assert!(!work.path().join("embers.db").exists());
    let query = json!({
        "app_service": "x", "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": 1_699_999_990, "time_end": 1_700_000_010,
    });
    let envelope = query_at(&reqwest::Client::new(), &base, &query).await;
    let folded = folded_of(&envelope);
    for line in [
        "x;main;serve;parse 120",
        "x;main;serve;render 300",
        "x;main;idle 50",
    ] {
        assert!(folded.contains(line), "{line} in {folded}");
    }
    // The same file in the same format errors as a local import would: no app, no send.
    std::fs::write(work.path().join("bare.folded"), FOLDED).expect("write");
    let (ok, _, err) = import(work.path(), &["--to", &base, "bare.folded"], None);
    assert!(!ok);
    assert!(
        err.contains("bare.folded: folded stacks need --app-service"),
        "{err}"
    );
    child.kill().await.expect("stop");

    // Nothing listening there any more: the URL and why.
    let (ok, _, err) = import(work.path(), &args, None);
    assert!(!ok);
    assert!(
        err.contains(&format!("cannot connect to {base}/v1/profile/ingest")),
        "{err}"
    );
    assert!(
        err.contains("Connection refused"),
        "the cause, not a layer: {err}"
    );
}

#[tokio::test]
async fn import_to_with_a_wrong_token_fails_naming_the_url_and_the_status() {
    let dir = tempfile::tempdir().expect("dir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").expect("write");
    let db = dir.path().join("served.db");
    let (mut child, base) =
        spawn_serve(&db, &["--token-file", token_file.to_str().expect("UTF-8")]).await;
    std::fs::write(dir.path().join("a.folded"), FOLDED).expect("write");
    let args = ["--to", &base, "--app-service", "x", "a.folded"];
    let (ok, out, err) = import(dir.path(), &args, Some("not-the-token"));
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!("{base}/v1/profile/ingest: 401 Unauthorized")),
        "{err}"
    );
    assert!(err.contains("--token-file"), "{err}");
    let (ok, _, err) = import(dir.path(), &args, None);
    assert!(!ok && err.contains("401"), "no token: {err}");
    // The right token, from the environment and from a file.
    let (ok, out, err) = import(dir.path(), &args, Some("s3cret-token"));
    assert!(ok, "{out}{err}");
    let mut with_file = args.to_vec();
    with_file.extend(["--token-file", token_file.to_str().expect("UTF-8")]);
    let (ok, out, err) = import(dir.path(), &with_file, Some("not-the-token"));
    assert!(ok, "--token-file wins over EMBERS_TOKEN: {out}{err}");
    child.kill().await.expect("stop");
}

#[tokio::test]
async fn import_to_a_service_with_a_small_ingest_limit_names_the_413() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("served.db");
    let (mut child, base) = spawn_serve(&db, &["--max-ingest-bytes", "200"]).await;
    let big: String = (0..50).map(|i| format!("main;f{i} {i}\n")).collect();
    std::fs::write(dir.path().join("big.folded"), big).expect("write");
    let args = ["--to", &base, "--app-service", "x", "big.folded"];
    let (ok, _, err) = import(dir.path(), &args, None);
    assert!(!ok);
    assert!(
        err.contains(&format!("{base}/v1/profile/ingest: 413 Payload Too Large")),
        "{err}"
    );
    assert!(err.contains("--max-ingest-bytes"), "{err}");
    child.kill().await.expect("stop");
}
