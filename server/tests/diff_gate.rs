//! `embers-server diff` as a CI job runs it (the real binary, its exit status and output):
//! a planted regression in folded files fails the gate and is named, two noisy runs of the same
//! program pass, mistakes exit 2 naming what is wrong, stored ranges compare through the store
//! and through a running service (with the viewer's link), and a real Go benchmark profiled
//! by `go test -cpuprofile` fails with a planted slowdown and passes unchanged — the worked
//! example of docs/ci-gate.md.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::golang::go_available;
use common::process::{run_ok, BIN};
use common::{TempDb, TestServer, T0};
use embers_model::testkit::sampled_folded;
use serde_json::Value;

/// The program: where its time goes.
const PROGRAM: [(&str, u32); 4] = [
    ("main;serve;parse", 30),
    ("main;serve;handle;compute", 40),
    ("main;serve;handle;encode", 20),
    ("main;runtime.gcBgMarkWorker", 10),
];

/// The same program with a new function taking 27 % of the self time (37 of 137).
fn regressed() -> Vec<(&'static str, u32)> {
    let mut w = PROGRAM.to_vec();
    w.push(("main;serve;handle;checksumAgain", 37));
    w
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Runs `embers-server diff` with `args`.
fn diff(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("diff")
        .args(args)
        .output()
        .expect("run diff")
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_planted_regression_in_folded_files_fails_and_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let base = write(
        dir.path(),
        "main.folded",
        &sampled_folded(&PROGRAM, 5_000, 1),
    );
    let new = write(
        dir.path(),
        "pr.folded",
        &sampled_folded(&regressed(), 5_000, 2),
    );
    let out = diff(&[s(&base), s(&new), "--max-growth", "5"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("FAIL: 1 function grew past the limit:\n  checksumAgain: self time"),
        "{stdout}"
    );
    assert!(
        stderr.contains("checksumAgain: share of self time grew +"),
        "{stderr}"
    );
    // The same as JSON: one breach, the planted function, about 27 points.
    let out = diff(&[s(&base), s(&new), "--max-growth", "5", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let breaches = report["breaches"].as_array().expect("breaches");
    assert_eq!(breaches.len(), 1, "{report}");
    assert_eq!(breaches[0]["function"], "checksumAgain");
    assert_eq!(breaches[0]["metric"], "self_time");
    let points = breaches[0]["change_points"].as_f64().expect("points");
    assert!((points - 27.0).abs() < 2.5, "{points}");
    // Without a limit it only reports.
    let out = diff(&[s(&base), s(&new)]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn noisy_runs_of_the_same_program_pass() {
    let dir = tempfile::tempdir().expect("dir");
    for seed in 0..5 {
        let a = write(
            dir.path(),
            "a.folded",
            &sampled_folded(&PROGRAM, 5_000, seed),
        );
        let b = write(
            dir.path(),
            "b.folded",
            &sampled_folded(&PROGRAM, 5_000, seed + 50),
        );
        let out = diff(&[s(&a), s(&b), "--max-growth", "2", "--max-total-growth", "2"]);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "seed {seed}: {stdout}\n{stderr}"
        );
        assert!(stdout.contains("PASS: "), "{stdout}");
        // The files do differ: the report lists the noise.
        assert!(stdout.contains("noise"), "{stdout}");
    }
}

#[test]
fn mistakes_exit_2_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().expect("dir");
    let good = write(dir.path(), "good.folded", "main;a 10\n");
    let missing = dir.path().join("missing.folded");
    let err = |args: &[&str]| {
        let out = diff(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {:?}", texts(&out));
        texts(&out).1
    };
    let e = err(&[s(&good), s(&missing), "--max-growth", "5"]);
    assert!(
        e.contains(&format!("{}: No such file", missing.display())),
        "{e}"
    );
    let garbage = write(dir.path(), "cpu.pb", "\u{1}\u{2}not a profile");
    let e = err(&[s(&garbage), s(&good)]);
    assert!(e.contains("cpu.pb (pprof): "), "{e}");
    let empty = write(dir.path(), "empty.folded", "");
    let e = err(&[s(&empty), s(&good)]);
    assert!(e.contains("the baseline has no samples"), "{e}");
    let e = err(&[s(&good)]);
    assert!(e.contains("give two profiles"), "{e}");
    let e = err(&[s(&good), "--new-range", "soon", "--app-service", "x"]);
    assert!(e.contains("--new-range: 'soon' is not a duration"), "{e}");
    let e = err(&[s(&good), "--new-range", "1h"]);
    assert!(e.contains("needs --app-service"), "{e}");
    let nowhere = dir.path().join("none.db");
    let e = err(&[
        s(&good),
        "--new-range",
        "1h",
        "--app-service",
        "x",
        "--db",
        s(&nowhere),
    ]);
    assert!(
        e.contains(&format!("no database at {}", nowhere.display())),
        "{e}"
    );
    let e = err(&[s(&good), s(&good), "--max-growth=-1"]);
    assert!(
        e.contains("--max-growth: expected percentage points"),
        "{e}"
    );
}

/// Imports `folded` as `bench`'s on-cpu samples at `time`.
fn import(db: &Path, dir: &Path, folded: &str, time: i64) {
    let file = write(dir, &format!("{time}.folded"), folded);
    run_ok([
        "import",
        "--db",
        s(db),
        "--app-service",
        "bench",
        "--time",
        &time.to_string(),
        s(&file),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_ranges_compare_through_the_store_and_a_running_service() {
    let db = TempDb::new();
    import(
        &db.path(),
        db.dir.path(),
        &sampled_folded(&PROGRAM, 5_000, 1),
        T0,
    );
    import(
        &db.path(),
        db.dir.path(),
        &sampled_folded(&regressed(), 5_000, 2),
        T0 + 60,
    );
    let base = format!("{T0}..{}", T0 + 59);
    let new = format!("{}..{}", T0 + 60, T0 + 119);
    let ranges = [
        "--base-range",
        base.as_str(),
        "--new-range",
        new.as_str(),
        "--app-service",
        "bench",
        // The folded values were counts, not microseconds of 99 Hz samples.
        "--value-per-sample",
        "1",
        "--max-growth",
        "5",
        "--format",
        "markdown",
        "--link",
        "https://embers.example/",
    ];
    let out = diff(&[&ranges[..], &["--db", s(&db.path())]].concat());
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("### Profile diff: failed, 1 function grew past the limit"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| checksumAgain | self time | 0% |"),
        "{stdout}"
    );
    let link = format!(
        "[Open the differential view](https://embers.example/?app_service=bench&\
         profile_language_type=eBPF&profile_event_type=on-cpu&time_start={}&time_end={}&\
         baseline_time_start={T0}&baseline_time_end={}&metric=self&select=checksumAgain)",
        T0 + 60,
        T0 + 119,
        T0 + 59
    );
    assert!(stdout.contains(&link), "{stdout}");
    // The same through a running service.
    let server = TestServer::start(&db.path()).await;
    let out = tokio::process::Command::new(BIN)
        .arg("diff")
        .args(ranges)
        .args(["--url", &server.base])
        .output()
        .await
        .expect("diff --url");
    assert_eq!(out.status.code(), Some(1), "{:?}", texts(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), stdout);
    server.stop().await;
}

/// Builds the Go benchmark of `tests/data/go/gate` (with the planted slowdown when `tags`
/// says) and runs it with `go test`'s CPU profiler into `dir/name`.
fn profile_benchmark(dir: &Path, tags: &str, name: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/go/gate");
    let bin = dir.join(format!("gate{tags}.test"));
    if !bin.exists() {
        let built = Command::new("go")
            .args(["test", "-c", "-tags", tags, "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(source)
            .env("GOCACHE", std::env::temp_dir().join("embers-go-cache"))
            .env("GOFLAGS", "-mod=mod")
            .output()
            .expect("go test -c");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
    let profile = dir.join(name);
    let ran = Command::new(&bin)
        .args([
            "-test.run",
            "^$",
            "-test.bench",
            ".",
            "-test.benchtime",
            "2s",
        ])
        .arg(format!("-test.cpuprofile={}", profile.display()))
        // Go's asynchronous preemption takes the self time of the tight loop it interrupts,
        // by a share that swings with the machine's load: off, as docs/ci-gate.md advises.
        .env("GODEBUG", "asyncpreemptoff=1")
        .current_dir(dir)
        .output()
        .expect("run the benchmark");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    profile
}

#[test]
fn a_real_go_benchmark_with_a_planted_slowdown_fails_the_gate() {
    if !go_available() {
        eprintln!("go is not installed: EMBERS_SKIP_GO=1 skips the real benchmark");
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let main = profile_benchmark(dir.path(), "", "main.pb.gz");
    let again = profile_benchmark(dir.path(), "", "again.pb.gz");
    let slow = profile_benchmark(dir.path(), "slowdown", "pr.pb.gz");
    let gate = ["--max-growth", "5", "--format", "markdown"];
    let out = diff(&[&[s(&main), s(&slow)], &gate[..]].concat());
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("| embers.test/gate.checksumAgain | self time | 0% |"),
        "{stdout}"
    );
    assert!(
        stderr.contains("embers.test/gate.checksumAgain: share of self time grew"),
        "{stderr}"
    );
    let out = diff(&[&[s(&main), s(&again)], &gate[..]].concat());
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("### Profile diff: passed"), "{stdout}");
}
