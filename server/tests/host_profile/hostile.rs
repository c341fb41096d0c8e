//! `serve --profile-host` when a process truncates a library it loaded: the collector thread
//! runs inside the service, so a SIGBUS there (a mapping of the file losing its pages) would
//! take the whole service down. The library is a copy of libm with a build id of its own (so
//! the collector reads the copy, not the system libm it may already hold), LD_PRELOADed into
//! `jit.c`'s `math` mode, truncated to 0 while its frames are being sampled.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use embers_server::host_profile::{self, HostProfileArgs};
use embers_server::store::Store;

use super::{allowed, SERIAL};
use crate::common::TempDb;

/// The GNU build-id note's header (name size 4, descriptor size 20, type 3, "GNU\0").
const BUILD_ID_NOTE: [u8; 16] = [4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, b'G', b'N', b'U', 0];

/// A copy of `lib` at `to` whose build id differs in its first byte.
fn unique_copy(lib: &Path, to: &Path) {
    let mut bytes = std::fs::read(lib).expect("library");
    let at = bytes
        .windows(BUILD_ID_NOTE.len())
        .position(|w| w == BUILD_ID_NOTE)
        .expect("a build id note");
    bytes[at + BUILD_ID_NOTE.len()] ^= 0xff;
    std::fs::write(to, bytes).expect("copy");
}

#[tokio::test(flavor = "multi_thread")]
async fn profile_host_survives_a_library_truncated_under_it() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let jit = dir.path().join("embers-jit");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/workloads/jit.c");
    let built = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&jit)
        .arg(source)
        .arg("-ldl")
        .status()
        .expect("cc");
    assert!(built.success(), "jit.c builds");
    let copy = dir.path().join("libm-copy.so.6");
    unique_copy(Path::new("/usr/lib/x86_64-linux-gnu/libm.so.6"), &copy);

    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let args = HostProfileArgs {
        profile_host: true,
        profile_host_interval: Duration::from_secs(1),
        profile_host_off_cpu: false,
        profile_host_kernel_threads: false,
        profile_host_memory: false,
        profile_host_memory_comm: None,
    };
    let profiler = host_profile::start(&args, store, Default::default())
        .expect("starts")
        .expect("asked for");
    let status = profiler.status();
    let windows = move || status.snapshot().windows;
    let mut work = Command::new(&jit)
        .args(["math", "8", "math"])
        .env("LD_PRELOAD", &copy)
        .stdout(Stdio::null())
        .spawn()
        .expect("workload");
    // Windows with the copy's frames (unwound through it, named from it), then the truncation.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&copy)
        .and_then(|f| f.set_len(0))
        .expect("truncate");
    let truncated = windows();
    let deadline = Instant::now() + Duration::from_secs(10);
    while windows() < truncated + 4 {
        assert!(
            Instant::now() < deadline,
            "windows stopped after the truncation"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = work.kill();
    let _ = work.wait();
    tokio::task::spawn_blocking(move || drop(profiler))
        .await
        .expect("the collector stops");
}
