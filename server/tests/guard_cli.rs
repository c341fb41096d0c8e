//! The guard's options on the real binary: `--embed-origin` (normalised, and refused when it is
//! not an origin), `--allowed-host`, `--token-file`, and the warning at start when the service
//! listens beyond loopback without a token.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::TempDb;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

const INGEST: &str = "/v1/profile/ingest";
const BATCH: &str = r#"{"app_service":"web","time":1700000000,"folded":"[t] web;main 5\n"}"#;
const JSON: &str = "application/json";

#[tokio::test]
async fn the_binary_takes_the_options() {
    let db = TempDb::new();
    let token = db.dir.path().join("token");
    std::fs::write(&token, "t0ken\n").expect("write");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_embers-server"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--static-dir",
            "/nonexistent",
            "--db",
        ])
        .arg(db.path())
        .args([
            "--embed-origin",
            "HTTP://Portal.example:8443/",
            "--allowed-host",
            "embers.example",
        ])
        .arg("--token-file")
        .arg(&token)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("started")
        .expect("read")
        .expect("line");
    let base = line
        .strip_prefix("Embers is running at ")
        .expect("URL line")
        .trim_end_matches('/')
        .to_owned();
    let client = reqwest::Client::new();
    let config: Value = client
        .get(format!("{base}/embers-config.json"))
        .header("host", "embers.example")
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(
        config,
        json!({"embed_origins": ["http://portal.example:8443"]})
    );
    let ingest = |auth: &'static str| {
        client
            .post(format!("{base}{INGEST}"))
            .header("content-type", JSON)
            .header("authorization", auth)
            .body(BATCH)
            .send()
    };
    assert_eq!(
        ingest("Bearer nope").await.expect("send").status().as_u16(),
        401
    );
    assert_eq!(
        ingest("Bearer t0ken")
            .await
            .expect("send")
            .status()
            .as_u16(),
        200
    );
    child.kill().await.expect("kill");

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_embers-server"))
        .args(["serve", "--embed-origin", "portal.example"])
        .output()
        .expect("run");
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not an origin"),
        "{bad:?}"
    );
}

/// `serve`'s stderr, from the start until it says where it runs, for `listen` and `extra`.
async fn startup_log(listen: &str, extra: &[&std::ffi::OsStr]) -> String {
    let db = TempDb::new();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_embers-server"))
        .args([
            "serve",
            "--listen",
            listen,
            "--static-dir",
            "/nonexistent",
            "--db",
        ])
        .arg(db.path())
        .args(extra)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("started")
        .expect("read")
        .expect("line");
    child.kill().await.expect("kill");
    let output = child.wait_with_output().await.expect("output");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Listening beyond loopback without tokens is warned about at start, naming the option;
/// loopback, or a token, is not.
#[tokio::test]
async fn an_open_port_beyond_loopback_is_warned_about() {
    let log = startup_log("0.0.0.0:0", &[]).await;
    assert!(
        log.contains("beyond loopback") && log.contains("--token-file"),
        "{log}"
    );
    let log = startup_log("127.0.0.1:0", &[]).await;
    assert!(!log.contains("beyond loopback"), "{log}");
    let dir = TempDb::new();
    let token = dir.dir.path().join("token");
    std::fs::write(&token, "t0ken\n").expect("write");
    let log = startup_log("0.0.0.0:0", &["--token-file".as_ref(), token.as_os_str()]).await;
    assert!(!log.contains("beyond loopback"), "{log}");
}
