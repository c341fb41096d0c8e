//! Kernel threads in a real run: which processes of this machine are kernel threads (the
//! `PF_KTHREAD` flag in `/proc/<pid>/stat`), found in `Total` as `[p] <name>`, to check that none
//! of them got a per-process graph (they are left out unless `--include-kernel-threads`, or
//! `serve --profile-host-kernel-threads`, with which they get graphs). Kernel threads are made
//! to work while the tests sample ([`KernelWork`]): on an idle machine they run a few
//! milliseconds a second, and a run could sample none of them.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use embers_server::host_profile::{self, HostProfileArgs};
use embers_server::store::Store;
use serde_json::json;

use super::{allowed, graph_of, SERIAL};
use crate::common::{TempDb, TestServer};

const PF_KTHREAD: u64 = 0x0020_0000;

/// The names of this machine's kernel threads now, as `/proc` shows them (a workqueue worker's
/// with its queue after `-` or `+`: `kworker/u8:0-events_unbound`).
pub fn now() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            let (head, rest) = stat.rsplit_once(')')?;
            let (_, comm) = head.split_once('(')?;
            // After the name: state, ppid, pgrp, session, tty_nr, tpgid, flags.
            let flags: u64 = rest.split_whitespace().nth(6)?.parse().ok()?;
            (flags & PF_KTHREAD != 0).then(|| comm.to_owned())
        })
        .collect()
}

/// CPU time only kernel threads spend: bytes written into a pseudo-terminal reach its reader
/// through the tty's work queue (`flush_to_ldisc` runs on a `kworker`), ~15% of a CPU while
/// this pumps. Without it a quiet machine's kernel threads ran too little for a 2.5 s run at
/// 997 Hz to sample one every time. Stopped when dropped.
pub struct KernelWork {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl KernelWork {
    /// Start pumping bytes through a new pseudo-terminal in raw mode.
    pub fn start() -> KernelWork {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes the two descriptors it opens; no name, settings or size.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: a termios filled by tcgetattr on the slave we just opened, made raw (no echo
        // to read back, no line editing) and set on it.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(slave, &mut t), 0, "tcgetattr");
            libc::cfmakeraw(&mut t);
            assert_eq!(libc::tcsetattr(slave, libc::TCSANOW, &t), 0, "tcsetattr");
        }
        // SAFETY: both descriptors were just opened and are owned by these files alone.
        let (mut master, mut slave) =
            unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let stop = Arc::new(AtomicBool::new(false));
        let writing = stop.clone();
        let writer = std::thread::spawn(move || {
            let chunk = [b'x'; 4096];
            while !writing.load(Ordering::Relaxed) && master.write_all(&chunk).is_ok() {}
            // Dropping the master ends the reader's reads.
        });
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while slave.read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        KernelWork {
            stop,
            threads: vec![writer, reader],
        }
    }
}

impl Drop for KernelWork {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Whether `name` (a task's 15-byte comm, as the collector sampled it) is one of `kernel`.
pub fn is_one(name: &str, kernel: &[String]) -> bool {
    !name.is_empty()
        && kernel.iter().any(|k| {
            k == name
                || k.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(['-', '+']))
        })
}

/// The processes of a canonical `Total` graph (`Total;[p] <name>[;[t] <thread>] value`).
pub fn in_total(total: &str) -> BTreeSet<String> {
    total
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.0.strip_prefix("Total;[p] "))
        .map(|rest| rest.split(";[t] ").next().unwrap_or(rest).to_owned())
        .collect()
}

/// Kernel threads are only in `Total`: no stored service is one of this machine's kernel
/// threads. With `must_see`, `Total` must show one (the run made them work: [`KernelWork`]), so
/// the check cannot pass for want of kernel threads.
pub async fn check_no_services(server: &TestServer, range: (i64, i64), must_see: bool) {
    let kernel = now();
    let total = graph_of(server, "Total", "on-cpu", range).await;
    let seen: Vec<String> = in_total(&total)
        .into_iter()
        .filter(|p| is_one(p, &kernel))
        .collect();
    assert!(
        !must_see || !seen.is_empty(),
        "no kernel thread in Total (kernel threads now: {kernel:?}):\n{total}"
    );
    let body = json!({"time_start": range.0, "time_end": range.1});
    let services = crate::common::ok(server, "/v1/profile/services", body).await;
    let rows = services["result"]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(rows.len() > 1, "services of the run: {services}");
    let stored: Vec<&str> = rows.iter().filter_map(|r| r[0].as_str()).collect();
    let kernel_services: Vec<&&str> = stored
        .iter()
        .filter(|s| is_one(s, &kernel) || seen.iter().any(|k| k == *s))
        .collect();
    assert!(
        kernel_services.is_empty(),
        "kernel threads got per-process graphs: {kernel_services:?} (in Total: {seen:?})"
    );
}

/// `serve --profile-host --profile-host-kernel-threads`: a kernel thread gets a graph of its
/// own (at 99 Hz, within seconds of [`KernelWork`]).
#[tokio::test(flavor = "multi_thread")]
async fn serve_can_give_kernel_threads_graphs() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("store"));
    let args = HostProfileArgs {
        profile_host: true,
        profile_host_interval: Duration::from_secs(1),
        profile_host_off_cpu: false,
        profile_host_kernel_threads: true,
        profile_host_memory: false,
        profile_host_memory_comm: None,
    };
    let start = super::now() - 1;
    let profiler = host_profile::start(&args, store.clone(), Default::default())
        .expect("starts")
        .expect("asked for");
    let server = TestServer::start_over(store, db.dir.path().join("no-viewer"), |_| {}).await;
    let work = KernelWork::start();
    let deadline = Instant::now() + Duration::from_secs(20);
    let found = loop {
        let body = json!({"time_start": start, "time_end": super::now() + 1});
        let services = crate::common::ok(&server, "/v1/profile/services", body).await;
        let kernel = now();
        let rows = services["result"]["values"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let found: Vec<String> = rows
            .iter()
            .filter_map(|r| r[0].as_str())
            .filter(|s| is_one(s, &kernel))
            .map(str::to_owned)
            .collect();
        if !found.is_empty() || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    drop(work);
    drop(profiler);
    assert!(
        !found.is_empty(),
        "no kernel thread got a graph within 20 s"
    );
    server.stop().await;
}

#[test]
fn reads_proc_and_matches_workqueue_names() {
    let kernel = now();
    if std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd") {
        assert!(kernel.iter().any(|k| k == "kthreadd"), "{kernel:?}");
    }
    let kernel = vec![
        "kworker/u8:0-events_unbound".to_owned(),
        "rcu_preempt".into(),
    ];
    assert!(is_one("kworker/u8:0", &kernel) && is_one("rcu_preempt", &kernel));
    assert!(!is_one("kworker/u8", &kernel) && !is_one("", &kernel) && !is_one("bash", &kernel));
    let total = "Total;[p] rcu_preempt 1003\nTotal;[p] web;[t] worker 5\nTotal;[p] a b 7\n";
    let names: Vec<String> = in_total(total).into_iter().collect();
    assert_eq!(names, ["a b", "rcu_preempt", "web"]);
}
