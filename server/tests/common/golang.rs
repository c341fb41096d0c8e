//! A real Go program profiled with `runtime/pprof` (`tests/data/go/hot`), and `go tool pprof`
//! to read profiles with. Debian's `golang-go` (installed by `scripts/setup.sh --test`); without
//! it these tests fail, unless `EMBERS_SKIP_GO=1`, when they use the profiles the program wrote
//! on the machine that committed them (`model/tests/data/pprof/go-*.pb.gz`) and the `go tool
//! pprof -top` output kept beside them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `go` runs here; panics when it does not and skipping was not asked for.
pub fn go_available() -> bool {
    let found = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("EMBERS_SKIP_GO").is_none() {
        panic!("`go` is not installed: run scripts/setup.sh --test (or set EMBERS_SKIP_GO=1)");
    }
    found
}

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/go/hot")
}

fn committed(name: &str) -> PathBuf {
    embers_model::testkit::data_dir().join("pprof").join(name)
}

/// A fresh CPU profile of the program (gzipped, as `runtime/pprof` writes it) in `dir`, or the
/// committed one when `go` is missing.
pub fn cpu_profile(dir: &Path) -> PathBuf {
    if !go_available() {
        return committed("go-cpu.pb.gz");
    }
    let bin = dir.join("hot");
    let cache = std::env::temp_dir().join("embers-go-cache");
    let build = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(source_dir())
        .env("GOCACHE", &cache)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("go build");
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let file = dir.join("cpu.pb.gz");
    let run = Command::new(&bin)
        .arg("-cpu")
        .arg(&file)
        .args(["-seconds", "1.5"])
        .output()
        .expect("run the Go program");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    file
}

/// `go tool pprof -<mode> -nodecount=100000 file` (mode `top` or `traces`), or the committed
/// `-top` output of the committed profile.
pub fn pprof_tool(mode: &str, file: &Path) -> String {
    if !go_available() {
        return std::fs::read_to_string(committed("go-cpu.top.txt")).expect("committed top");
    }
    let out = Command::new("go")
        .args(["tool", "pprof", &format!("-{mode}"), "-nodecount=100000"])
        .arg(file)
        .env("GOCACHE", std::env::temp_dir().join("embers-go-cache"))
        .output()
        .expect("go tool pprof");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

/// `(flat%, cum%)` of `function` in `go tool pprof -top` output.
pub fn top_percent(top: &str, function: &str) -> Option<(f64, f64)> {
    top.lines().find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 6 || cols[5..].join(" ") != function {
            return None;
        }
        let pct = |s: &str| s.trim_end_matches('%').parse::<f64>().ok();
        Some((pct(cols[1])?, pct(cols[4])?))
    })
}
