//! Memory profiles from the collector, end to end (issue 38's test): a C program built without
//! frame pointers (`agent/tests/workloads/mem.c`), where `keep` allocates 75% of the bytes and
//! holds 40 MiB live while `churn` allocates 25% and frees at once, runs under the collector as
//! `serve --profile-host --profile-host-memory --profile-host-memory-comm` runs it (the comm
//! filter picks the new process up; its windows go straight into the store), and the service's
//! `mem-alloc` must show those shares (±10 points) under whole `main → run → keep|churn`
//! stacks, and `mem-inuse`, read over the whole run, ≥ 90% on `keep` with a total near 40 MiB:
//! one instant (each process's latest window), not a sum over the windows in the range. The
//! same program with jemalloc preloaded (Debian's `libjemalloc2`) is traced through jemalloc's
//! own `malloc`/`free`; [`kinds`] traces calloc, realloc and anonymous mmap.

#[path = "memory/kinds.rs"]
mod kinds;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use embers_agent::options::comm_filter;
use embers_agent::{AgentError, MemoryOptions, Options, Sink, WindowReport};
use embers_model::contract::ingest::BatchInput;
use embers_server::host_profile::{HostStatus, StoreSink};
use embers_server::store::Store;

use super::{allowed, graph, graph_of, now, workloads, SERIAL};
use crate::common::{TempDb, TestServer};

/// Bytes `keep` holds live.
const KEPT: f64 = 40.0 * 1024.0 * 1024.0;
/// Seconds the workload allocates (1 GiB/s).
const SECONDS: f64 = 3.5;

/// The store's sink, telling the test how many processes have uprobes attached.
struct Watched {
    inner: StoreSink,
    attached: Arc<AtomicUsize>,
}

impl Sink for Watched {
    fn accept(&mut self, time: i64, batches: Vec<BatchInput>) {
        self.inner.accept(time, batches);
    }
    fn window(&mut self, report: &WindowReport) {
        let attached = report.memory.map_or(0, |m| m.attached);
        self.attached.store(attached, Ordering::Relaxed);
        self.inner.window(report);
    }
    fn failed(&mut self, error: &AgentError) {
        self.inner.failed(error);
    }
}

/// Wait until `ready` holds, failing after `limit`.
fn wait_for(what: &str, limit: Duration, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One run of `program args` (with `env`) under the collector, `--memory-comm ^embers-mem$`
/// sampling every `sample_bytes` on average, windows of a second into a fresh store in `db`:
/// the service over that store and the run's range. The program waits for a line on stdin, sent once
/// a window's report says its uprobes are attached.
async fn profile_run(
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    sample_bytes: u64,
    dir: &Path,
    db: &TempDb,
) -> (TestServer, (i64, i64)) {
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let attached = Arc::new(AtomicUsize::new(0));
    let sink = Watched {
        inner: StoreSink {
            store: store.clone(),
            limits: Default::default(),
            status: Arc::new(HostStatus::default()),
        },
        attached: attached.clone(),
    };
    let options = Options {
        interval: Duration::from_secs(1),
        process_regex: regex::Regex::new("^embers-mem$").ok(),
        memory: MemoryOptions {
            enabled: true,
            comm: comm_filter("^embers-mem$").ok(),
            sample_bytes,
            ..MemoryOptions::default()
        },
        ..Options::default()
    };
    let start = now() - 1;
    let running = embers_agent::spawn(options, Box::new(sink)).expect("the collector starts");
    let seen = attached.clone();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(&program)
            .args(&args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start embers-mem");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("ready");
        assert_eq!(line.trim(), "ready");
        // The comm filter finds it within 200 ms; a window's report says so.
        wait_for("the uprobes on embers-mem", Duration::from_secs(10), || {
            seen.load(Ordering::Relaxed) >= 1
        });
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"go\n").expect("go");
        let status = child.wait().expect("wait");
        assert!(status.success(), "embers-mem failed: {status:?}");
        running.stop().expect("the collector stops cleanly");
    })
    .await
    .expect("join");
    let range = (start, now() + 1);
    let server = TestServer::start_over(store, dir.join("no-viewer"), |_| {}).await;
    (server, range)
}

/// `mem.c`'s test mode under the collector (with `env`), checked: keep/churn shares, in use.
async fn keep_and_churn(env: Vec<(String, String)>) {
    let dir = tempfile::tempdir().expect("dir");
    let program = workloads::c_mem(dir.path());
    // 256 KiB, not the default 512: the 40 blocks kept live are then sampled almost surely,
    // so the in-use total is within a few percent of 40 MiB every time.
    let args = vec![SECONDS.to_string()];
    let db = TempDb::new();
    let (server, range) = profile_run(program, args, env, 256 << 10, dir.path(), &db).await;
    check_alloc(&server, range).await;
    check_in_use(&server, range).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_c_program_without_frame_pointers_shows_where_its_bytes_go() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    keep_and_churn(Vec::new()).await;
}

/// Debian's jemalloc (`libjemalloc2`, which `scripts/setup.sh` installs for the collector's
/// tests), if this machine has it: CI must.
fn jemalloc() -> Option<PathBuf> {
    let found = [
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but libjemalloc.so.2 is missing (scripts/setup.sh installs libjemalloc2)"
        );
        eprintln!("skipped: libjemalloc.so.2 is not installed (apt-get install libjemalloc2)");
    }
    found
}

/// With jemalloc preloaded the program's malloc and free are jemalloc's (glibc's are never
/// called): the same shares and the same 40 MiB in use, through the probes on jemalloc's
/// exported functions (its own mmap of extents, inside its malloc, is not counted again).
#[tokio::test(flavor = "multi_thread")]
async fn the_same_program_on_jemalloc_is_traced_through_jemalloc() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let Some(library) = jemalloc() else {
        return;
    };
    let preload = ("LD_PRELOAD".to_owned(), library.display().to_string());
    keep_and_churn(vec![preload]).await;
}

/// `mem-alloc`: keep 75%, churn 25%, each under main → run, the allocator the leaf.
async fn check_alloc(server: &TestServer, range: (i64, i64)) {
    let folded = graph_of(server, "embers-mem", "mem-alloc", range).await;
    let lines = graph::lines(&folded);
    let all: Vec<&graph::Line<'_>> = lines.iter().collect();
    for (function, want) in [("keep", 0.75), ("churn", 0.25)] {
        let got = graph::share(&all, function);
        assert!(
            (got - want).abs() <= 0.10,
            "{function} has {got:.3} of mem-alloc, want {want}±0.10\n{folded}"
        );
        eprintln!("mem-alloc share of {function}: {got:.3} (want {want})");
    }
    let whole: u64 = all
        .iter()
        .filter(|l| {
            ["keep", "churn"]
                .iter()
                .any(|f| graph::holds_in_order(&l.frames, &["main", "run", f, "[l] malloc"]))
        })
        .map(|l| l.value)
        .sum();
    let intact = whole as f64 / graph::total(&all).max(1) as f64;
    assert!(
        intact >= 0.9,
        "main → run → keep|churn → [l] malloc in {intact:.2} of the bytes\n{folded}"
    );
    // 1 GiB/s for SECONDS: the estimate of all bytes allocated is near what was.
    let allocated = graph::total(&all) as f64 / (SECONDS * 1024.0 * 1024.0 * 1024.0);
    assert!(
        (0.8..=1.1).contains(&allocated),
        "mem-alloc sums to {allocated:.2} of the bytes allocated\n{folded}"
    );
}

/// `mem-inuse` over the whole run: the latest window's live bytes, ≥ 90% on keep, ~40 MiB.
async fn check_in_use(server: &TestServer, range: (i64, i64)) {
    let folded = graph_of(server, "embers-mem", "mem-inuse", range).await;
    let lines = graph::lines(&folded);
    let all: Vec<&graph::Line<'_>> = lines.iter().collect();
    let keep = graph::share(&all, "keep");
    let total = graph::total(&all) as f64;
    eprintln!(
        "mem-inuse: {:.1} MiB, {keep:.3} of it on keep",
        total / 1048576.0
    );
    assert!(keep >= 0.9, "keep holds {keep:.3} of mem-inuse\n{folded}");
    assert!(
        (total / KEPT - 1.0).abs() <= 0.15,
        "mem-inuse is {:.1} MiB, want 40 MiB ±15% (one instant, not a sum of windows)\n{folded}",
        total / 1048576.0
    );
}
