//! The real collector (`embers-agent --print`, 1 s windows) as a child process, and the
//! workload `jit.c` built once: what the hostile-process tests drive.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One collector at a time: each samples every CPU.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// Whether this machine lets the collector run (root or CAP_BPF + CAP_PERFMON, BTF); with
/// CI=true it must.
pub fn allowed() -> bool {
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

/// A directory of this test run's own (those of earlier runs, whose process is gone, are
/// removed: a static's directory outlives the run that made it).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix("embers-hostile-"));
            if pid.is_some_and(|p| !Path::new("/proc").join(p).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = tmp.join(format!("embers-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    })
}

/// `jit.c`, built once (named `embers-jit`, the name the collector is told to follow).
pub fn jit() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/jit.c");
        let bin = scratch().join("embers-jit");
        let status = Command::new("cc")
            .args(["-O2", "-o"])
            .arg(&bin)
            .arg(&src)
            .arg("-ldl")
            .status()
            .expect("cc runs");
        assert!(status.success(), "jit.c builds");
        bin
    })
}

/// Start the workload and wait for it to say its perf map is in place.
pub fn start_jit(cmd: &mut Command) -> Child {
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("workload starts");
    let mut line = String::new();
    let out = child.stdout.take().expect("stdout");
    BufReader::new(out)
        .read_line(&mut line)
        .expect("ready line");
    assert!(line.starts_with("ready"), "workload said {line:?}");
    child
}

/// A collector's memory, KiB.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    /// Peak resident (VmHWM).
    pub hwm: u64,
    /// Anonymous resident now (RssAnon).
    pub anon: u64,
    /// Shared memory resident now (RssShmem: memfds).
    pub shmem: u64,
}

/// A running `embers-agent --print`.
pub struct Agent {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

fn collect(from: impl std::io::Read + Send + 'static, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if let Ok(mut text) = into.lock() {
                text.push_str(&line);
                text.push('\n');
            }
        }
    })
}

impl Agent {
    /// Start the collector, following processes named `embers-jit`; returns once it samples.
    pub fn start() -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_embers-agent"))
            .args(["--print", "--interval", "1s", "--frequency", "199"])
            .args(["--process-regex", "^embers-jit$"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("embers-agent starts");
        let out = Arc::new(Mutex::new(String::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().expect("stdout"), out.clone()),
            collect(child.stderr.take().expect("stderr"), err.clone()),
        ];
        let agent = Agent {
            child,
            out,
            err,
            readers,
        };
        agent.wait_windows(1, Duration::from_secs(30));
        agent
    }

    /// Windows ended so far (their stats lines).
    pub fn windows(&self) -> usize {
        self.err
            .lock()
            .map_or(0, |t| t.matches(" samples, ").count())
    }

    /// Wait until `n` windows ended; panics after `limit`.
    pub fn wait_windows(&self, n: usize, limit: Duration) {
        let start = Instant::now();
        while self.windows() < n {
            assert!(
                start.elapsed() < limit,
                "only {} windows in {limit:?}; log:\n{}",
                self.windows(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether it still runs (panics with its log if it died).
    pub fn assert_alive(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("the collector died ({status}); log:\n{}", self.log());
        }
    }

    /// Its memory now (KiB): peak resident, anonymous, shared (its sealed symbol copies).
    pub fn memory(&self) -> Memory {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("collector status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        Memory {
            hwm: field("VmHWM:"),
            anon: field("RssAnon:"),
            shmem: field("RssShmem:"),
        }
    }

    /// What it printed: folded stacks.
    pub fn folded(&self) -> String {
        self.out.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// What it logged.
    pub fn log(&self) -> String {
        self.err.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Stop it (SIGINT: it sends the window in progress) and return its folded output.
    pub fn stop(mut self) -> String {
        // SAFETY: a signal to our own child, by its pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let status = self.child.wait().expect("wait");
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        assert!(
            status.success(),
            "the collector exits cleanly: {status}\n{}",
            self.log()
        );
        self.folded()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A copy of `lib` at `to` with its build id changed: a file of its own to the collector (which
/// otherwise takes it for the original it has already read).
pub fn unique_copy(lib: &Path, to: &Path) {
    use object::{Object, ObjectSection};
    let mut bytes = std::fs::read(lib).expect("library");
    let (off, len) = object::File::parse(&*bytes)
        .expect("ELF")
        .section_by_name(".note.gnu.build-id")
        .and_then(|s| s.file_range())
        .expect("a build id");
    let last = usize::try_from(off + len - 1).expect("offset");
    bytes[last] ^= 0xff;
    std::fs::write(to, bytes).expect("copy");
}

/// The folded lines of `folded` whose leaf frame (last before the count) is JIT code of
/// `embers-jit`.
pub fn jit_lines(folded: &str) -> Vec<&str> {
    folded
        .lines()
        .filter(|l| l.starts_with("[t] embers-jit;"))
        .collect()
}
