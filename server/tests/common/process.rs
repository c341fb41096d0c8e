//! The real `embers-server` binary as a child process.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

/// The binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_embers-server");

/// Run the binary with `args` to its end; asserts it failed and returns what it said on
/// standard error.
pub fn run_fails<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let out = std::process::Command::new(BIN)
        .args(args)
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Run the binary with `args` to its end; asserts it succeeded and returns what it printed.
pub fn run_ok<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let out = std::process::Command::new(BIN)
        .args(args)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Start `serve` on port 0; returns the child and the printed base URL.
pub async fn spawn_serve(db: &Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let (child, url, _) = spawn_serve_reading(db, extra, 0).await;
    (child, url)
}

/// Start `serve` on port 0 with `args` (choosing the store); returns the child and the
/// printed base URL.
pub async fn spawn_serve_args(args: &[&str]) -> (tokio::process::Child, String) {
    let (child, url, _) = spawn_reading(args, 0).await;
    (child, url)
}

/// [`spawn_serve`], also reading the `more` lines printed after the URL (kept reading to the
/// end in the background, so the child never writes into a closed pipe).
pub async fn spawn_serve_reading(
    db: &Path,
    extra: &[&str],
    more: usize,
) -> (tokio::process::Child, String, Vec<String>) {
    let mut args = vec!["--db", db.to_str().expect("UTF-8 path")];
    args.extend_from_slice(extra);
    spawn_reading(&args, more).await
}

async fn spawn_reading(args: &[&str], more: usize) -> (tokio::process::Child, String, Vec<String>) {
    let mut all = vec!["--static-dir", "/nonexistent-embers-dist"];
    all.extend_from_slice(args);
    read_url(None, &all, more).await
}

/// Start `serve` on port 0 with `args` in the directory `cwd`, serving the viewer built into
/// the binary (no `--static-dir`); returns the child and the printed base URL.
pub async fn spawn_serve_in(cwd: &Path, args: &[&str]) -> (tokio::process::Child, String) {
    let (child, url, _) = read_url(Some(cwd), args, 0).await;
    (child, url)
}

/// Run `serve --listen 127.0.0.1:0 ARGS` (in `cwd`, if given); read the URL it prints and
/// `more` lines after it.
async fn read_url(
    cwd: Option<&Path>,
    args: &[&str],
    more: usize,
) -> (tokio::process::Child, String, Vec<String>) {
    let mut command = tokio::process::Command::new(BIN);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("URL printed in time")
        .expect("read")
        .expect("a line");
    let url = line
        .strip_prefix("Embers is running at ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    assert!(!url.ends_with(":0/"), "the real port is printed: {url}");
    let url = url.trim_end_matches('/').to_owned();
    let mut after = Vec::new();
    for _ in 0..more {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("line printed in time")
            .expect("read")
            .expect("a line");
        after.push(line);
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url, after)
}

/// `VmHWM` (the peak) and `VmRSS` of process `pid`, bytes.
pub fn peak_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("field")
            * 1024
    };
    (field("VmHWM:"), field("VmRSS:"))
}
