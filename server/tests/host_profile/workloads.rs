//! The programs the collector is tested on (sources in `agent/tests/workloads/`), built for the
//! test: the C program with frame pointers and with `-O2 -fomit-frame-pointer`, the Rust one with
//! plain `rustc -O`. Each names its process after its file (`embers-fp`, `embers-nofp`,
//! `embers-rs`) and prints how long its sleeper thread slept.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// One built program.
pub struct Program {
    /// The process name (the file's name).
    pub name: &'static str,
    /// Its sleeper thread's name.
    pub sleeper: &'static str,
    /// The hot functions' names as symbolized, in order a, b, syscalls.
    pub hot: [&'static str; 3],
    /// Its `main → run` chain's names.
    pub chain: [&'static str; 2],
    /// The sleeper's chain down to the function that sleeps: its start routine, then `nap`.
    pub sleep_chain: [&'static str; 2],
    path: PathBuf,
}

fn source(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../agent/tests/workloads")
        .join(file)
}

fn built(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run the compiler for {what}: {e}"));
    assert!(
        out.status.success(),
        "building {what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn c_program(dir: &Path, name: &'static str, frame_pointers: bool) -> Program {
    let path = dir.join(name);
    let mut cmd = Command::new("cc");
    cmd.args(["-O2", "-g", "-pthread"])
        .arg(if frame_pointers {
            "-fno-omit-frame-pointer"
        } else {
            "-fomit-frame-pointer"
        })
        .arg("-o")
        .arg(&path)
        .arg(source("hot.c"));
    built(cmd, name);
    Program {
        name,
        sleeper: "sleeper",
        hot: ["hot_a", "hot_b", "in_syscalls"],
        chain: ["main", "run"],
        sleep_chain: ["sleeper", "nap"],
        path,
    }
}

/// The C program with frame pointers.
pub fn c_fp(dir: &Path) -> Program {
    c_program(dir, "embers-fp", true)
}

/// The C program without frame pointers.
pub fn c_nofp(dir: &Path) -> Program {
    c_program(dir, "embers-nofp", false)
}

/// The Rust program.
pub fn rust(dir: &Path) -> Program {
    let path = dir.join("embers-rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let mut cmd = Command::new(rustc);
    cmd.args(["-O", "--edition", "2021", "--crate-name", "rhot", "-o"])
        .arg(&path)
        .arg(source("hot.rs"));
    built(cmd, "embers-rs");
    Program {
        name: "embers-rs",
        sleeper: "rsleeper",
        hot: ["rhot::hot_a", "rhot::hot_b", "rhot::in_syscalls"],
        chain: ["rhot::main", "rhot::run"],
        sleep_chain: ["rhot::sleeper", "rhot::nap"],
        path,
    }
}

impl Program {
    /// Start it: `seconds` of work, `naps` naps of 100 ms.
    pub fn start(&self, seconds: f64, naps: u32) -> Child {
        Command::new(&self.path)
            .arg(seconds.to_string())
            .arg(naps.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.name))
    }
}

/// Wait for a program; the microseconds its sleeper slept.
pub fn finish(child: Child, name: &str) -> u64 {
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{name} failed: {:?}", out.status);
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("slept_us="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} printed no slept_us: {text}"))
}

/// The memory workload (`mem.c`), built without frame pointers: its path. Its process is
/// `embers-mem`; it allocates once it reads a line (see the source).
pub fn c_mem(dir: &Path) -> PathBuf {
    let path = dir.join("embers-mem");
    let mut cmd = Command::new("cc");
    cmd.args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&path)
        .arg(source("mem.c"));
    built(cmd, "embers-mem");
    path
}
