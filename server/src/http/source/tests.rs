//! `--source-dir` lookups, and every way out of the roots refused: `..`, absolute paths, a
//! symlink out, a symlink inside pointing outside, a symlinked directory, a FIFO, a huge file,
//! binary files; and the endpoints' answers.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use embers_model::contract::source::MAX_SOURCE_BYTES;
use serde_json::Value;
use tower::ServiceExt;

use super::find::{find, open_root, SourceError};
use super::SourceArgs;
use crate::http::state::AppState;

/// A root with `repo/src/hot.c`, a secret beside it (outside the root) and traps inside.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().join("root");
        let write = |p: &Path, text: &[u8]| {
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        write(
            &root.join("repo/src/hot.c"),
            b"int main(void)\n{\n\treturn 0;\n}\n",
        );
        write(&root.join("other/src/hot.c"), b"// the shorter match\n");
        write(&dir.path().join("secret.txt"), b"outside the root\n");
        write(&root.join("repo/blob.bin"), b"ELF\0\x01\x02");
        write(&root.join("repo/latin1.c"), b"caf\xe9\n");
        let huge = std::fs::File::create(root.join("repo/huge.c")).expect("huge");
        huge.set_len(MAX_SOURCE_BYTES + 1).expect("len");
        symlink(dir.path().join("secret.txt"), root.join("repo/link_out.c")).expect("link");
        symlink("../../secret.txt", root.join("repo/src/rel_out.c")).expect("link");
        symlink("hot.c", root.join("repo/src/link_in.c")).expect("link");
        symlink(dir.path(), root.join("up")).expect("dir link");
        let fifo = std::ffi::CString::new(root.join("repo/fifo.c").to_str().expect("utf-8"))
            .expect("c path");
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        Tree { dir }
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("root")
    }

    fn find(&self, file: &str) -> Result<super::find::Found, SourceError> {
        find(&[open_root(&self.root()).expect("root")], file)
    }
}

#[test]
fn a_stored_path_is_found_by_its_longest_suffix() {
    let tree = Tree::new();
    let found = tree.find("/home/ci/build/repo/src/hot.c").expect("found");
    assert_eq!(found.matched, "repo/src/hot.c");
    assert!(found.text.starts_with("int main"));
    // Suffixes are of the stored path, relative to the root: `src/hot.c` is not at the
    // root's top, nor is `hot.c`.
    assert!(matches!(
        tree.find("src/hot.c"),
        Err(SourceError::NotFound { refused: false, .. })
    ));
    assert!(matches!(
        tree.find("/x/other/src/hot.c"),
        Ok(f) if f.text.starts_with("// the shorter")
    ));
}

#[test]
fn every_way_out_of_the_roots_is_refused() {
    let tree = Tree::new();
    for escape in ["../secret.txt", "repo/../../secret.txt", "/../secret.txt"] {
        assert!(
            matches!(tree.find(escape), Err(SourceError::BadPath(_))),
            "{escape}"
        );
    }
    // Absolute paths are suffixes under the roots, never the host's files.
    assert!(matches!(
        tree.find(&tree.dir.path().join("secret.txt").display().to_string()),
        Err(SourceError::NotFound { .. })
    ));
    assert!(matches!(
        tree.find("/etc/passwd"),
        Err(SourceError::NotFound { .. })
    ));
    for link in [
        "repo/link_out.c",
        "repo/src/rel_out.c",
        "repo/src/link_in.c",
        "up/secret.txt",
        "repo/fifo.c",
    ] {
        match tree.find(link) {
            Err(SourceError::NotFound { refused: true, .. }) => {}
            other => panic!("{link}: {other:?}"),
        }
    }
    assert!(matches!(
        tree.find("repo/huge.c"),
        Err(SourceError::TooLarge { size, .. }) if size == MAX_SOURCE_BYTES + 1
    ));
    assert!(
        matches!(tree.find("repo/blob.bin"), Err(SourceError::NotText { why, .. }) if why.contains("NUL"))
    );
    assert!(
        matches!(tree.find("repo/latin1.c"), Err(SourceError::NotText { why, .. }) if why.contains("UTF-8"))
    );
    for bad in ["", "a\0b", "/", "./."] {
        assert!(
            matches!(tree.find(bad), Err(SourceError::BadPath(_))),
            "{bad:?}"
        );
    }
}

async fn get(state: &AppState, uri: &str) -> (StatusCode, Value) {
    let router = crate::router::app(state.clone());
    let request = Request::get(uri)
        .header("host", "127.0.0.1")
        .body(Body::empty())
        .expect("request");
    let response = router.oneshot(request).await.expect("infallible");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn the_endpoints_answer_text_config_and_specific_errors() {
    let tree = Tree::new();
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(crate::store::Store::open(&db.path().join("e.db")).expect("store"));
    let mut state = AppState::new(store);
    let (status, body) = get(&state, "/v1/profile/source?file=a.c").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(body["DESCRIPTION"]
        .as_str()
        .is_some_and(|d| d.contains("--source-dir")));
    let (_, config) = get(&state, "/v1/profile/source_config").await;
    assert_eq!(config["result"]["source_dirs_configured"], false);
    state.sources = SourceArgs {
        source_dirs: vec![tree.root()],
        source_url: Some("https://github.com/o/r/blob/main/{path}#L{line}".into()),
        source_url_strip: vec!["/home/ci/".into()],
    }
    .sources()
    .expect("sources");
    let (_, config) = get(&state, "/v1/profile/source_config").await;
    assert_eq!(config["result"]["source_dirs_configured"], true);
    assert_eq!(config["result"]["source_url_strip"][0], "/home/ci/");
    let (status, body) = get(&state, "/v1/profile/source?file=%2Fb%2Frepo%2Fsrc%2Fhot.c").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["matched"], "repo/src/hot.c");
    assert_eq!(body["result"]["line_count"], 4);
    for (uri, want) in [
        ("/v1/profile/source", StatusCode::BAD_REQUEST),
        (
            "/v1/profile/source?file=..%2Fsecret.txt",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/profile/source?file=repo%2Fblob.bin",
            StatusCode::BAD_REQUEST,
        ),
        (
            "/v1/profile/source?file=repo%2Flink_out.c",
            StatusCode::NOT_FOUND,
        ),
    ] {
        let (status, body) = get(&state, uri).await;
        assert_eq!(status, want, "{uri}: {body}");
        assert!(body["DESCRIPTION"].as_str().is_some_and(|d| !d.is_empty()));
    }
    let bad = SourceArgs {
        source_url: Some("javascript:alert(1)//{path}".into()),
        ..SourceArgs::default()
    };
    assert!(bad.sources().is_err());
}
