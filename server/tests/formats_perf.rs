//! `perf script` of a real multi-threaded program (`tests/data/perf/myapp-threads.c`, whose
//! worker threads rename themselves): `import` says how many perf samples it stored and names
//! the process as its user knows it (`myapp`, its main thread's name, from the task records
//! `perf script --show-task-events` prints), not after a worker thread; when the capture cannot
//! tell, it says which `perf script` options would.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::process::{run_ok, spawn_serve, BIN};
use crate::common::query_at;

/// 325 samples of 10101010 ns: 166 of thread `burner`, 159 of `hasher`, none of the main
/// thread (it waits in pthread_join).
const SAMPLES: u64 = 325;
const MICROS_EACH: u64 = 10_102;

fn capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/myapp-threads.perf.gz")
}

fn capture_text() -> String {
    let mut text = String::new();
    let file = std::fs::File::open(capture()).expect("capture");
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
        .expect("gunzip");
    text
}

fn on_cpu(app: &str) -> serde_json::Value {
    json!({"app_service": app, "profile_language_type": "eBPF", "profile_event_type": "on-cpu",
        "time_start": 1_699_999_990, "time_end": 1_700_000_010})
}

#[tokio::test]
async fn a_real_capture_is_stored_as_its_process_with_its_sample_count() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut child, base) = spawn_serve(&dir.path().join("served.db"), &[]).await;
    let file = capture();
    let out = run_ok([
        "import",
        "--to",
        &base,
        "--time",
        "1700000000",
        file.to_str().expect("UTF-8"),
    ]);
    assert!(
        out.contains(&format!("imported {SAMPLES} samples of myapp as ")),
        "{out}"
    );
    let envelope = query_at(&reqwest::Client::new(), &base, &on_cpu("myapp")).await;
    let profile = embers_model::decode_response(200, &envelope.to_string())
        .expect("tree")
        .profile;
    assert_eq!(profile.root_total(), SAMPLES * MICROS_EACH);
    let folded = crate::common::folded_of(&envelope);
    for stack in [
        "myapp;[t] burner;[l] start_thread;burner;burn;spin ",
        "myapp;[t] hasher;",
    ] {
        assert!(folded.contains(stack), "{stack} in {folded}");
    }
    let burner = query_at(&reqwest::Client::new(), &base, &on_cpu("burner")).await;
    assert!(
        crate::common::folded_of(&burner).is_empty(),
        "no app named after a thread: {burner}"
    );
    child.kill().await.expect("stop");
}

/// `import` of `text` into a fresh database: (stdout, stderr).
fn import_text(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("myapp.perf");
    std::fs::write(&file, text).expect("write");
    let out = std::process::Command::new(BIN)
        .arg("import")
        .arg("--db")
        .arg(dir.path().join("e.db"))
        .arg(&file)
        .output()
        .expect("import");
    assert!(out.status.success(), "{out:?}");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_capture_that_cannot_name_its_process_says_which_perf_script_options_would() {
    let text = capture_text();
    // Plain `perf script`: thread ids only, no task records.
    let plain: String = text
        .lines()
        .filter(|l| !l.contains("PERF_RECORD_"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (out, err) = import_text(&plain);
    assert!(
        out.contains("imported 325 samples of hasher, burner as "),
        "{out}"
    );
    assert!(err.contains("printed thread ids only"), "{err}");
    assert!(err.contains("perf script --show-task-events"), "{err}");
    assert!(err.contains("-F +pid"), "{err}");
    // `-F +pid` without task records: the process is known, its main thread never ran.
    let with_pid = plain
        .replace("burner  5803 ", "burner 5801/5803 ")
        .replace("hasher  5804 ", "hasher 5801/5804 ");
    assert!(with_pid.contains("5801/5803"), "the headers changed form");
    let (out, err) = import_text(&with_pid);
    // Named after the first of its threads sampled.
    assert!(out.contains("imported 325 samples of hasher as "), "{out}");
    assert!(
        err.contains("process 5801 is stored as \"hasher\""),
        "{err}"
    );
}
