//! `/tmp/perf-<pid>.map`: the names a JIT runtime writes for the code it generates (Node with
//! `--perf-basic-prof`, Java with a perf-map agent), one `START SIZE NAME` line per function,
//! addresses in hex. The file is the runtime's, so it is read with bounds: at most
//! [`MAX_BYTES`], lines that do not parse skipped.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest perf map read.
pub const MAX_BYTES: u64 = 64 << 20;

/// Where process `pid`'s map is: in its own `/tmp` (its container's, named by the pid it has
/// in its own namespace) while it runs, else this machine's `/tmp/perf-<pid>.map`.
pub fn paths(pid: u32) -> Vec<PathBuf> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let inner = status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .and_then(|ids| ids.split_whitespace().last())
        .unwrap_or("");
    let mut paths = Vec::new();
    if !inner.is_empty() {
        paths.push(PathBuf::from(format!(
            "/proc/{pid}/root/tmp/perf-{inner}.map"
        )));
    }
    paths.push(PathBuf::from(format!("/tmp/perf-{pid}.map")));
    paths
}

/// A parsed map, sorted by start address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfMap {
    entries: Vec<(u64, u64, String)>,
}

fn hex(text: &str) -> Option<u64> {
    let text = text.strip_prefix("0x").unwrap_or(text);
    u64::from_str_radix(text, 16).ok()
}

impl PerfMap {
    /// Parse a map's text.
    pub fn parse(text: &str) -> PerfMap {
        let mut entries: Vec<(u64, u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                let start = hex(parts.next()?)?;
                let size = hex(parts.next()?)?;
                let name = parts.next()?.trim();
                (!name.is_empty() && size > 0).then(|| (start, size, name.to_owned()))
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        PerfMap { entries }
    }

    /// Read the map at `path` (at most [`MAX_BYTES`]); `None` when there is none.
    pub fn read(path: &Path) -> Option<PerfMap> {
        let file = std::fs::File::open(path).ok()?;
        let mut text = String::new();
        file.take(MAX_BYTES).read_to_string(&mut text).ok()?;
        Some(PerfMap::parse(&text))
    }

    /// The function holding `addr`; the latest written wins where a runtime reused memory.
    pub fn find(&self, addr: u64) -> Option<&str> {
        let i = self.entries.partition_point(|e| e.0 <= addr);
        self.entries[..i]
            .iter()
            .rev()
            .take(8)
            .find(|(start, size, _)| addr < start.saturating_add(*size))
            .map(|(_, _, name)| name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_jit_functions_and_skips_junk() {
        let map = PerfMap::parse(
            "7f0000001000 40 LazyCompile:*fib /app/a.js:3\n\
             0x7f0000002000 0x10 Builtin:ArgumentsAdaptorTrampoline\n\
             garbage\n7f0000003000 zz bad size\n7f0000004000 0 empty\n",
        );
        assert_eq!(
            map.find(0x7f0000001000),
            Some("LazyCompile:*fib /app/a.js:3")
        );
        assert_eq!(
            map.find(0x7f000000103f),
            Some("LazyCompile:*fib /app/a.js:3")
        );
        assert_eq!(map.find(0x7f0000001040), None);
        assert_eq!(
            map.find(0x7f0000002008),
            Some("Builtin:ArgumentsAdaptorTrampoline")
        );
        assert_eq!(map.find(0x7f0000004000), None);
        assert_eq!(map.find(1), None);
        assert!(PerfMap::read(Path::new("/nonexistent/perf-1.map")).is_none());
        let own = paths(std::process::id());
        assert_eq!(own.len(), 2, "{own:?}");
        assert!(own[0].starts_with("/proc/"));
    }
}
