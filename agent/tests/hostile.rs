//! The collector against processes that point it at files meant to hurt it: the real
//! `embers-agent` (root, eBPF, 1 s windows) while `jit.c` runs JIT code and puts a FIFO, a
//! symlink to a planted secret, another user's file or a 64 MiB map at
//! `/tmp/perf-PID.map`, or runs from a library copy that is then truncated. A hostile process
//! may make its own frames wrong; it must never stop the collector, kill it, leak another file
//! into frame names or grow it without bound. And the other way round: a map that only the
//! process's own mount namespace holds is still found, through its root.
//!
//! Needs root (or CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE), BTF and cc; elsewhere the tests skip
//! saying why, except with `CI=true`.

#[path = "hostile/support.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use support::{jit, jit_lines, scratch, start_jit, Agent, SERIAL};

const SECRET: &str = "EMBERS_PLANTED_SECRET";

/// The control: a plain map names the JIT code, so the tests below see names when allowed.
#[test]
fn a_plain_perf_map_names_jit_code() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    let agent = Agent::start();
    let mut work = start_jit(Command::new(jit()).args(["plain", "3", "plain"]));
    let _ = work.wait();
    let folded = agent.stop();
    let lines = jit_lines(&folded);
    assert!(
        lines.iter().any(|l| l.contains(";embers_jit_loop_plain ")),
        "{folded}"
    );
}

#[test]
fn a_fifo_perf_map_does_not_stop_the_windows() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    let mut agent = Agent::start();
    let mut work = start_jit(Command::new(jit()).args(["fifo", "6", "fifo"]));
    std::thread::sleep(Duration::from_secs(1));
    let before = agent.windows();
    // Blocked on the FIFO, no window would end after the first with JIT frames.
    agent.wait_windows(before + 4, Duration::from_secs(10));
    agent.assert_alive();
    let _ = work.wait();
    let folded = agent.stop();
    let lines = jit_lines(&folded);
    assert!(!lines.is_empty(), "the JIT process was sampled:\n{folded}");
    assert!(
        lines.iter().all(|l| !l.contains("embers_jit_loop")),
        "{folded}"
    );
}

#[test]
fn a_perf_map_symlinked_to_another_file_never_leaks_it() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    // A planted file in perf-map form covering every address: followed, it would name every
    // JIT frame after itself.
    let secret = scratch().join("secret.map");
    std::fs::write(&secret, format!("0 ffffffffffffffff {SECRET}\n")).expect("plant");
    let agent = Agent::start();
    let mut works = [
        start_jit(Command::new(jit()).args(["link", "3", "link"]).arg(&secret)),
        start_jit(Command::new(jit()).args(["link", "3", "host", "/etc/hostname"])),
    ];
    // A relative symlink climbing out of /tmp: refused the same.
    let mut relative = start_jit(Command::new(jit()).args(["none", "3", "rel"]));
    let map = format!("/tmp/perf-{}.map", relative.id());
    let climbing = std::path::Path::new("../..").join(secret.strip_prefix("/").expect("abs"));
    std::os::unix::fs::symlink(climbing, &map).expect("symlink");
    works.iter_mut().chain([&mut relative]).for_each(|w| {
        let _ = w.wait();
    });
    let _ = std::fs::remove_file(&map);
    let folded = agent.stop();
    assert!(!jit_lines(&folded).is_empty(), "sampled:\n{folded}");
    assert!(!folded.contains(SECRET), "the secret leaked:\n{folded}");
}

/// A map owned by someone else (a hard link to their file, which protected_hardlinks=0 or a
/// shared filesystem would allow) is not read for a process of another user.
#[test]
fn a_perf_map_owned_by_another_user_is_refused() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    let agent = Agent::start();
    // The workload runs as nobody; the map at its path is root's.
    let mut work = start_jit(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(jit())
            .args(["none", "3", "owner"]),
    );
    let map = format!("/tmp/perf-{}.map", work.id());
    std::fs::write(&map, format!("0 ffffffffffffffff {SECRET}\n")).expect("root's map");
    let _ = work.wait();
    let _ = std::fs::remove_file(&map);
    let folded = agent.stop();
    assert!(!jit_lines(&folded).is_empty(), "sampled:\n{folded}");
    assert!(
        !folded.contains(SECRET),
        "another user's file was read:\n{folded}"
    );
}

#[test]
fn a_library_truncated_while_profiled_does_not_kill_the_collector() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    let copy = scratch().join("libm-copy.so.6");
    support::unique_copy(
        std::path::Path::new("/usr/lib/x86_64-linux-gnu/libm.so.6"),
        &copy,
    );
    let mut agent = Agent::start();
    let mut work = start_jit(
        Command::new(jit())
            .args(["math", "8", "math"])
            .env("LD_PRELOAD", &copy),
    );
    // Windows with frames in the copy: its unwind sections read, its symbols named.
    std::thread::sleep(Duration::from_millis(2500));
    let named = agent.folded();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&copy)
        .and_then(|f| f.set_len(0))
        .expect("truncate");
    // The workload itself dies of SIGBUS at its next cos(): its own problem.
    let truncated = agent.windows();
    agent.wait_windows(truncated + 4, Duration::from_secs(10));
    agent.assert_alive();
    let _ = work.kill();
    let _ = work.wait();
    let _ = agent.stop();
    assert!(
        named.contains("libm-copy.so.6") || named.contains("cos"),
        "the copy was profiled before the truncation:\n{named}"
    );
}

/// Ten processes with 64 MiB maps each (640 MiB of names the collector could hold): its peak
/// memory stays far under that, and every process still gets its name (found at each map's
/// end, within the per-window read budget).
#[test]
fn ten_processes_with_64_mib_perf_maps_stay_within_the_memory_bound() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    let agent = Agent::start();
    let before = agent.memory();
    let mut works: Vec<_> = (0..10)
        .map(|i| {
            let tag = format!("big{i}");
            let bytes = (64u64 << 20) - 4096;
            start_jit(Command::new(jit()).args(["big", "12", &tag, &bytes.to_string()]))
        })
        .collect();
    let mut anon_peak = before.anon;
    while works.iter_mut().any(|w| matches!(w.try_wait(), Ok(None))) {
        anon_peak = anon_peak.max(agent.memory().anon);
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = agent.memory();
    let folded = agent.stop();
    eprintln!(
        "collector memory, KiB: VmHWM {} before the maps, {} after; anonymous {} before, peak {}; \
         symbol copies (shmem) {} before, {} after",
        before.hwm, after.hwm, before.anon, anon_peak, before.shmem, after.shmem
    );
    // Its own memory grows by the bounded scan (64 KiB buffers, the names of the sampled
    // addresses) and the windows' stacks: nothing near one map, let alone ten. (VmHWM also
    // counts the symbol copies of whatever else runs on the machine meanwhile.)
    assert!(
        anon_peak < before.anon + 32 * 1024,
        "anonymous memory grew from {} KiB to {anon_peak} KiB",
        before.anon
    );
    assert!(
        after.hwm < before.hwm + 160 * 1024,
        "VmHWM grew from {} KiB to {} KiB",
        before.hwm,
        after.hwm
    );
    let named = (0..10)
        .filter(|i| folded.contains(&format!(";embers_jit_loop_big{i} ")))
        .count();
    assert_eq!(named, 10, "every map's last line named its code:\n{folded}");
}

/// A process in a mount namespace of its own, with a private `/tmp`: its map is read through
/// its own root, where the host's `/tmp` has none.
#[test]
fn a_perf_map_in_a_private_tmp_is_read_through_the_process_root() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !support::allowed() {
        return;
    }
    // Outside /tmp, which the namespace covers with its own.
    let bin = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("embers-jit");
    std::fs::copy(jit(), &bin).expect("copy");
    let agent = Agent::start();
    let script = format!(
        "mount -t tmpfs none /tmp && exec {} plain 3 private",
        bin.display()
    );
    let mut work = start_jit(
        Command::new("unshare")
            .args(["--mount", "--propagation", "private"])
            .args(["sh", "-c", &script]),
    );
    assert!(
        !std::path::Path::new(&format!("/tmp/perf-{}.map", work.id())).exists(),
        "the map is in the namespace's /tmp only"
    );
    let _ = work.wait();
    let folded = agent.stop();
    assert!(
        jit_lines(&folded)
            .iter()
            .any(|l| l.contains(";embers_jit_loop_private ")),
        "{folded}"
    );
}
