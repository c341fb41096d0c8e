//! Test helpers shared by the model's and the service's tests (feature `testkit`): the
//! ProfileTracing fixtures in `model/tests/data/fixtures/<case>/` and snapshot files with a
//! bless switch (`BLESS=1` rewrites them; review the diff before committing).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The model's test data folder.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// One fixture: a recorded response and what it must decode to.
pub struct Fixture {
    /// The folder name, e.g. `process-oncpu-b`.
    pub name: String,
    /// The folder.
    pub dir: PathBuf,
    /// `case.json`: `http_status`, `shape`, `expect` (`ok` or `error`).
    pub case: Value,
    /// `expected.json`: node count, root total, per-function figures, or the error.
    pub expected: Value,
}

impl Fixture {
    /// The recorded response body.
    pub fn response(&self) -> String {
        read(&self.dir.join("response.json"))
    }

    /// The expected tree as sorted folded stacks, root first (empty for errors and empty results).
    pub fn expected_folded(&self) -> String {
        read(&self.dir.join("expected.folded"))
    }

    /// The HTTP status the response came with.
    pub fn http_status(&self) -> u16 {
        self.case["http_status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or(200)
    }

    /// Whether the response is an error answer.
    pub fn expects_error(&self) -> bool {
        self.case["expect"] == "error"
    }

    /// The result shape letter the case uses (`A` or `B`).
    pub fn shape(&self) -> &str {
        self.case["shape"].as_str().unwrap_or("B")
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every fixture, sorted by name.
pub fn fixtures() -> Vec<Fixture> {
    let dir = data_dir().join("fixtures");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 10,
        "expected the fixture set, found {}",
        dirs.len()
    );
    dirs.into_iter().map(|dir| load(&dir)).collect()
}

/// One fixture by folder name.
pub fn fixture(name: &str) -> Fixture {
    load(&data_dir().join("fixtures").join(name))
}

fn load(dir: &Path) -> Fixture {
    Fixture {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        dir: dir.to_path_buf(),
        case: read_json(&dir.join("case.json")),
        expected: read_json(&dir.join("expected.json")),
    }
}

/// Compares `got` with the snapshot at `path`, or writes it when `BLESS` is set.
pub fn check_snapshot(path: &Path, got: &str) {
    if std::env::var_os("BLESS").is_some() {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        fs::write(path, got).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let want = fs::read_to_string(path)
        .unwrap_or_else(|_| panic!("{}: no snapshot; run with BLESS=1", path.display()));
    assert_eq!(
        got,
        want,
        "{}: snapshot changed; rerun with BLESS=1 if intended",
        path.display()
    );
}

/// Folded stacks of `samples` draws from the distribution `weights` (stack, relative weight),
/// with a seeded generator: two seeds give two noisy profiles of the same program, as two runs
/// of one benchmark do. Stacks are listed in `weights`' order, each with its count.
pub fn sampled_folded(weights: &[(&str, u32)], samples: u32, seed: u64) -> String {
    let sum: u64 = weights.iter().map(|(_, w)| u64::from(*w)).sum();
    let mut counts = vec![0u32; weights.len()];
    // xorshift64*: deterministic and good enough to stand in for sampling noise.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..samples {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let draw = state.wrapping_mul(0x2545_F491_4F6C_DD1D) % sum.max(1);
        let mut acc = 0;
        if let Some(i) = weights.iter().position(|(_, w)| {
            acc += u64::from(*w);
            draw < acc
        }) {
            counts[i] += 1;
        }
    }
    weights
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|((stack, _), n)| format!("{stack} {n}\n"))
        .collect()
}
