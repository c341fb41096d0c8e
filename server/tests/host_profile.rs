//! The collector on real programs, end to end: `embers-agent`'s library samples this machine
//! with eBPF while three programs of ours run (C with and without frame pointers, Rust), sends
//! its 1-second windows to a real service (over HTTP, or straight into the store as
//! `serve --profile-host` does), and the service's ProfileTracing answers, in both shapes, must
//! show each program as it ran: its process root and threads, its hot functions in their known
//! shares, whole `main → run → hot` chains, kernel frames under its system calls, `[p] <program>`
//! in `Total`, and its sleeping thread's off-CPU time under whole `sleeper → nap → [k]` stacks.
//!
//! Needs root (or CAP_BPF + CAP_PERFMON), BTF, cc and rustc. Elsewhere the tests skip saying
//! why, except with `CI=true`, where a missing permission fails them. Built with
//! `--features profile-host` (scripts/test.sh runs them).

use crate::common;
#[path = "host_profile/graph.rs"]
mod graph;
#[path = "host_profile/halves.rs"]
mod halves;
#[path = "host_profile/health.rs"]
mod health;
#[path = "host_profile/hostile.rs"]
mod hostile;
#[path = "host_profile/kernel_threads.rs"]
mod kernel_threads;
#[path = "host_profile/lines.rs"]
mod lines;
#[path = "host_profile/memory.rs"]
mod memory;
#[path = "host_profile/stop.rs"]
mod stop;
#[path = "host_profile/workloads.rs"]
mod workloads;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{folded_of, TempDb, TestServer};
use embers_agent::sink::http::{HttpOptions, HttpSink};
use embers_agent::{Options, Unwind};
use embers_server::host_profile::{self, HostProfileArgs};
use embers_server::store::Store;
use serde_json::{json, Value};
use tokio::sync::Mutex;
use workloads::Program;

/// One collector at a time: they all sample every CPU.
static SERIAL: Mutex<()> = Mutex::const_new(());

/// Expected shares of the main thread's time: hot_a, hot_b, in_syscalls.
const SHARES: [f64; 3] = [0.5, 0.3, 0.2];
/// Seconds each program works; naps of 100 ms its sleeper takes.
const SECONDS: f64 = 2.5;
const NAPS: u32 = 15;

/// Whether this machine lets the collector run; with CI=true it must. Also captures the
/// collector's log (each window's stats line, the HTTP sink's `N refused`, what was lost) with
/// the test's output, so a failing test shows what the collector saw.
fn allowed() -> bool {
    capture_logs();
    match embers_agent::preflight::check() {
        Ok(_) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but the collector cannot run here: {e}")
        }
        Err(e) => {
            eprintln!("skipped: the collector cannot run on this machine: {e}");
            false
        }
    }
}

/// The collector's and the in-process profiler's log at info, everything else's warnings, into
/// the test harness's captured output (printed for failing tests, or with `--nocapture`).
fn capture_logs() {
    let filter = tracing_subscriber::EnvFilter::new(
        "warn,embers_agent=info,embers_server::host_profile=info",
    );
    // A second call (every test calls it) finds the subscriber set: nothing to do.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// 997 Hz, not the default 99: a 2.5 s run on a shared 2-core machine then gives each main
/// thread hundreds of samples, enough for shares within ±10 points every time.
fn options(unwind: Unwind) -> Options {
    Options {
        frequency: 997,
        interval: Duration::from_secs(1),
        off_cpu: true,
        process_regex: regex::Regex::new("^embers-(fp|nofp|rs)$").ok(),
        unwind,
        ..Options::default()
    }
}

/// What a run left to check.
struct Run {
    /// Microseconds each program's sleeper slept.
    slept: Vec<u64>,
    /// The time range to query.
    range: (i64, i64),
    /// CPU time the collector's thread used (the kernel's exact count), ns.
    collector_ns: u64,
}

/// Wait for workload `child` to exit successfully, then stop `profiler` (which stores the
/// window in progress).
async fn run_to_end(child: std::process::Child, profiler: host_profile::HostProfiler) {
    tokio::task::spawn_blocking(move || {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "the workload failed: {:?}",
            out.status
        );
        drop(profiler);
    })
    .await
    .expect("join");
}

/// CPU time of this process's thread named `name`, from its schedstat (ns).
fn thread_cpu_ns(name: &str) -> u64 {
    let tasks = std::fs::read_dir("/proc/self/task").expect("tasks");
    tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Run `programs` at once while a collector sends to `sink`.
async fn profile(
    programs: &[&Program],
    options: Options,
    sink: Box<dyn embers_agent::Sink + Send>,
) -> Run {
    let start = now() - 1;
    let running = embers_agent::spawn(options, sink).expect("the collector starts");
    let children: Vec<_> = programs.iter().map(|p| p.start(SECONDS, NAPS)).collect();
    let names: Vec<&'static str> = programs.iter().map(|p| p.name).collect();
    let (slept, collector_ns) = tokio::task::spawn_blocking(move || {
        let slept = children
            .into_iter()
            .zip(names)
            .map(|(c, n)| workloads::finish(c, n))
            .collect();
        let collector_ns = thread_cpu_ns("embers-agent");
        // Stopping sends the window in progress before it returns.
        running.stop().expect("the collector stops cleanly");
        (slept, collector_ns)
    })
    .await
    .expect("join");
    Run {
        slept,
        range: (start, now() + 1),
        collector_ns,
    }
}

/// The collector samples itself like any thread, and must not see itself more than it runs:
/// woken right after each sample, it would be on a CPU just as that CPU's sampling timer fires.
async fn check_self_sampling(server: &TestServer, run: &Run) {
    let total = graph_of(server, "Total", "on-cpu", run.range).await;
    let me = std::fs::read_to_string("/proc/self/comm").expect("comm");
    let thread = format!("Total;[p] {};[t] embers-agent ", me.trim());
    let sampled_us: u64 = total
        .lines()
        .filter(|l| l.starts_with(&thread))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    let used_us = run.collector_ns / 1000;
    // 997 Hz: about a millisecond a sample, so the slack is a few samples.
    assert!(
        sampled_us <= 2 * used_us + 20_000,
        "the collector was sampled for {sampled_us} µs but ran {used_us} µs"
    );
}

/// The collector's HTTP sink, sending to `server`.
fn http_sink(server: &TestServer) -> HttpSink {
    HttpSink::start(HttpOptions {
        to: server.base.clone(),
        token: None,
        buffer_bytes: 64 << 20,
        max_request_bytes: 4 << 20,
        timeout: Duration::from_secs(10),
    })
    .expect("sink")
}

fn query(app: &str, event: &str, shape: &str, start: i64, end: i64) -> Value {
    json!({"app_service": app, "profile_language_type": "eBPF", "profile_event_type": event,
           "tag_filter": "", "time_start": start, "time_end": end, "result_shape": shape})
}

/// The graph of `app` in both shapes, which must agree; canonical folded text.
async fn graph_of(server: &TestServer, app: &str, event: &str, range: (i64, i64)) -> String {
    let mut texts = Vec::new();
    for shape in ["a", "b"] {
        let (status, envelope) = server
            .query(&query(app, event, shape, range.0, range.1))
            .await;
        assert_eq!(status, 200, "{envelope}");
        texts.push(folded_of(&envelope));
    }
    assert_eq!(texts[0], texts[1], "shapes A and B disagree for {app}");
    assert!(!texts[0].is_empty(), "no {event} samples of {app}");
    texts.remove(0)
}

/// Everything the issue asks of one program's graphs. With frame pointers only (`fp`) a leaf
/// that sets up no frame (libc's `read`) hides its caller, so `in_syscalls` is not asked for
/// and the chain is asked of most samples rather than 90%.
async fn check_program(
    server: &TestServer,
    p: &Program,
    slept_us: u64,
    range: (i64, i64),
    fp: bool,
) {
    let chain_min = if fp { 0.7 } else { 0.9 };
    let checked = if fp { 2 } else { 3 };
    let on_cpu = graph_of(server, p.name, "on-cpu", range).await;
    let lines = graph::lines(&on_cpu);
    assert!(
        lines.iter().all(|l| l.frames[0] == p.name),
        "root is the process"
    );
    let main = graph::of_thread(&lines, p.name);
    assert!(graph::total(&main) > 0, "[t] {} missing:\n{on_cpu}", p.name);
    for (hot, want) in p.hot.iter().zip(SHARES).take(checked) {
        let got = graph::share(&main, hot);
        assert!(
            (got - want).abs() <= 0.10,
            "{}: {hot} has {got:.2} of the main thread, want {want}±0.10\n{on_cpu}",
            p.name
        );
    }
    let whole: u64 = main
        .iter()
        .filter(|l| {
            p.hot[..checked]
                .iter()
                .any(|h| graph::holds_in_order(&l.frames, &[p.chain[0], p.chain[1], h]))
        })
        .map(|l| l.value)
        .sum();
    let through: Vec<_> = main
        .iter()
        .copied()
        .filter(|l| p.hot[..checked].iter().any(|h| l.frames.contains(h)) || !fp)
        .collect();
    let intact = whole as f64 / graph::total(&through).max(1) as f64;
    assert!(
        intact >= chain_min,
        "{}: main → run → hot intact in {intact:.2} of samples, want ≥ {chain_min}\n{on_cpu}",
        p.name
    );
    if !fp {
        let kernel = graph::kernel_share_under(&main, p.hot[2]);
        assert!(
            kernel >= 0.5,
            "{}: only {kernel:.2} of {} has [k] frames below\n{on_cpu}",
            p.name,
            p.hot[2]
        );
    }
    let off_cpu = graph_of(server, p.name, "off-cpu", range).await;
    let off = graph::lines(&off_cpu);
    // Its waits in nanosleep, the time it measured: the thread also waits elsewhere (under
    // load its exit waited ~0.5 s in the kernel, in do_exit), which it did not measure.
    let sleeper: Vec<_> = graph::of_thread(&off, p.sleeper)
        .into_iter()
        .filter(|l| {
            l.frames
                .iter()
                .any(|f| f.starts_with("[k] ") && f.contains("nanosleep"))
        })
        .collect();
    let waited = graph::total(&sleeper);
    let ratio = waited as f64 / slept_us as f64;
    assert!(
        (ratio - 1.0).abs() <= 0.15,
        "{}: [t] {} waited {waited} µs off-CPU, slept {slept_us} µs\n{off_cpu}",
        p.name,
        p.sleeper
    );
    if !fp {
        // The stack it waited in, whole: its start routine → nap → libc → the kernel, also
        // through code without frame pointers.
        let whole: u64 = sleeper
            .iter()
            .filter(|l| graph::holds_in_order(&l.frames, &p.sleep_chain))
            .filter(|l| l.frames.last().is_some_and(|f| f.starts_with("[k] ")))
            .map(|l| l.value)
            .sum();
        let intact = whole as f64 / waited.max(1) as f64;
        assert!(
            intact >= 0.9,
            "{}: {} → {} → [k] intact in {intact:.2} of the off-CPU time, want ≥ 0.9\n{off_cpu}",
            p.name,
            p.sleep_chain[0],
            p.sleep_chain[1]
        );
    }
    let total = graph_of(server, "Total", "on-cpu", range).await;
    let process = format!("Total;[p] {}", p.name);
    assert!(
        total.lines().any(|l| l.starts_with(&process)),
        "no {process}:\n{total}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn three_programs_sent_over_http_show_their_known_shapes() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let programs = [
        workloads::c_fp(dir.path()),
        workloads::c_nofp(dir.path()),
        workloads::rust(dir.path()),
    ];
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let sink = http_sink(&server);
    let refs: Vec<&Program> = programs.iter().collect();
    let run = profile(&refs, options(Unwind::Dwarf), Box::new(sink)).await;
    for (p, slept) in programs.iter().zip(&run.slept) {
        check_program(&server, p, *slept, run.range, false).await;
    }
    check_self_sampling(&server, &run).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn profile_host_writes_straight_to_the_store() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let nofp = workloads::c_nofp(dir.path());
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let args = HostProfileArgs {
        profile_host: true,
        profile_host_interval: Duration::from_secs(1),
        profile_host_off_cpu: true,
        profile_host_kernel_threads: false,
        profile_host_memory: false,
        profile_host_memory_comm: None,
    };
    let start = now() - 1;
    let profiler = host_profile::start(&args, store.clone(), Default::default())
        .expect("starts")
        .expect("asked for");
    let status = profiler.status();
    let server = TestServer::start_over(store, dir.path().join("no-viewer"), |s| {
        s.collector = Some(status);
    })
    .await;
    let child = nofp.start(SECONDS, NAPS);
    health::check_after_a_window(&server).await;
    let slept = tokio::task::spawn_blocking(move || {
        let slept = workloads::finish(child, "embers-nofp");
        drop(profiler);
        slept
    })
    .await
    .expect("join");
    let range = (start, now() + 1);
    check_program(&server, &nofp, slept, range, false).await;
    kernel_threads::check_no_services(&server, range, false).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn frame_pointer_mode_counts_in_the_kernel() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let fp = workloads::c_fp(dir.path());
    let db = TempDb::new();
    let server = TestServer::start(&db.path()).await;
    let sink = http_sink(&server);
    // Every process gets its graph, as by default: kernel threads must still not.
    let every = Options {
        process_regex: None,
        ..options(Unwind::Fp)
    };
    let work = kernel_threads::KernelWork::start();
    let run = profile(&[&fp], every, Box::new(sink)).await;
    drop(work);
    check_program(&server, &fp, run.slept[0], run.range, true).await;
    kernel_threads::check_no_services(&server, run.range, true).await;
    server.stop().await;
}
