//! `/tmp/perf-<pid>.map`: the names a JIT runtime writes for the code it generates (Node with
//! `--perf-basic-prof`, Java with a perf-map agent), one `START SIZE NAME` line per function,
//! addresses in hex. The file is the runtime's, which may be hostile, so it is opened inside the
//! process's own root with no symlink anywhere in the path, must be a regular file owned by the
//! process's user, of at most [`MAX_FILE_BYTES`], and is read as a stream: only the
//! names of the addresses sampled are kept, never the whole map, and lines longer than
//! [`MAX_LINE_BYTES`] or that do not parse are skipped.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::rc::Rc;

use crate::files::{Links, OpenError, Root};

/// Largest perf map read (a long-running Node process writes tens of MiB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Longest line read; a longer one is skipped (V8's names with their source paths are far
/// shorter).
pub const MAX_LINE_BYTES: usize = 4096;
/// Longest name kept: what [`crate::names`] cuts every frame name to anyway.
pub const MAX_NAME_BYTES: usize = 1024;

/// Why a process's perf map is not read.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// It could not be opened, or is not a regular file under the cap.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Someone other than the process's user owns it: a hard link to their file.
    #[error("owned by uid {0}, not by the process's user")]
    Owner(u32),
}

/// An open perf map and what identifies its contents (changed: read it again).
pub struct Opened {
    /// The map.
    pub file: File,
    /// Device, inode, length and modification time.
    pub identity: (u64, u64, u64, i64, i64),
}

/// Open process `pid`'s map: `/tmp/perf-<its own pid>.map` in its own root while it runs,
/// else this machine's `/tmp/perf-<pid>.map`; symlinks refused either way.
pub fn open(pid: u32) -> Result<Opened, MapError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
    let inner = field("NSpid:").and_then(|ids| ids.split_whitespace().last());
    let uids: Vec<u32> = field("Uid:")
        .map(|ids| {
            ids.split_whitespace()
                .filter_map(|u| u.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let (root, path) = match (inner, Root::of_process(pid)) {
        (Some(inner), Ok(root)) => (root, format!("/tmp/perf-{inner}.map")),
        _ => (
            Root::at(Path::new("/")).map_err(OpenError::from)?,
            format!("/tmp/perf-{pid}.map"),
        ),
    };
    let (file, meta) = root.open(Path::new(&path), Links::Refused, MAX_FILE_BYTES)?;
    // The process's own file only (root's only for a root process): a hard link to someone
    // else's file is refused. An exited process's uids are unknown, and its map is then the
    // host's, whose hard links protected_hardlinks already limits to the linker's own files.
    if !uids.is_empty() && !uids.contains(&meta.uid()) {
        return Err(MapError::Owner(meta.uid()));
    }
    let identity = (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
    );
    Ok(Opened { file, identity })
}

/// What a scan found: a name per address asked for, and the bytes read.
pub struct Scan {
    /// Names, in the order of the addresses.
    pub names: Vec<Option<Rc<str>>>,
    /// Bytes read.
    pub read: u64,
}

/// The names of `addrs` (sorted, distinct) in `map`, reading at most `budget` bytes; where
/// lines overlap the last one wins (a runtime reusing memory writes the new function later).
pub fn scan(map: impl Read, addrs: &[u64], budget: u64) -> Scan {
    let mut reader = BufReader::with_capacity(1 << 16, map.take(budget.min(MAX_FILE_BYTES)));
    let mut names = vec![None; addrs.len()];
    let mut line = Vec::with_capacity(MAX_LINE_BYTES + 1);
    let mut read = 0u64;
    loop {
        line.clear();
        let n = match (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        read += n as u64;
        if line.last() != Some(&b'\n') && n > MAX_LINE_BYTES {
            // Too long to be a real entry: skip to the next line.
            read += reader.skip_until(b'\n').unwrap_or(0) as u64;
            continue;
        }
        if let Some((start, end, name)) = parse(&line) {
            let first = addrs.partition_point(|&a| a < start);
            let covered = addrs[first..].partition_point(|&a| a < end);
            if covered > 0 {
                let name: Rc<str> = Rc::from(cut(name));
                for slot in &mut names[first..first + covered] {
                    *slot = Some(name.clone());
                }
            }
        }
    }
    Scan { names, read }
}

fn hex(text: &[u8]) -> Option<u64> {
    let text = text.strip_prefix(b"0x").unwrap_or(text);
    u64::from_str_radix(std::str::from_utf8(text).ok()?, 16).ok()
}

/// One `START SIZE NAME` line: the address range and the name.
fn parse(line: &[u8]) -> Option<(u64, u64, &[u8])> {
    let mut parts = line.splitn(3, |&b| b == b' ');
    let start = hex(parts.next()?)?;
    let size = hex(parts.next()?)?;
    let name = parts.next()?.trim_ascii();
    (!name.is_empty() && size > 0).then(|| (start, start.saturating_add(size), name))
}

/// `name` as text, at most [`MAX_NAME_BYTES`] (cut at a character boundary).
fn cut(name: &[u8]) -> String {
    let text = String::from_utf8_lossy(name);
    let mut end = text.len().min(MAX_NAME_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, addrs: &[u64]) -> Vec<Option<String>> {
        let found = scan(text.as_bytes(), addrs, u64::MAX);
        found
            .names
            .into_iter()
            .map(|n| n.map(|s| s.to_string()))
            .collect()
    }

    #[test]
    fn finds_jit_functions_and_skips_junk() {
        let map = "7f0000001000 40 LazyCompile:*fib /app/a.js:3\n\
             0x7f0000002000 0x10 Builtin:ArgumentsAdaptorTrampoline\n\
             garbage\n7f0000003000 zz bad size\n7f0000004000 0 empty\n";
        let found = names(
            map,
            &[
                1,
                0x7f0000001000,
                0x7f000000103f,
                0x7f0000001040,
                0x7f0000002008,
                0x7f0000004000,
            ],
        );
        let fib = Some("LazyCompile:*fib /app/a.js:3".to_owned());
        let builtin = Some("Builtin:ArgumentsAdaptorTrampoline".to_owned());
        assert_eq!(found, [None, fib.clone(), fib, None, builtin, None]);
    }

    #[test]
    fn the_last_line_wins_and_long_lines_are_skipped() {
        let long = format!("1000 100 {}\n", "x".repeat(MAX_LINE_BYTES));
        let map = format!(
            "1000 100 old\n{long}1000 10 new\n2000 10 {}\n",
            "é".repeat(600)
        );
        let found = names(&map, &[0x1008, 0x1080, 0x2000]);
        assert_eq!(found[0].as_deref(), Some("new"));
        assert_eq!(
            found[1].as_deref(),
            Some("old"),
            "the long line never counted"
        );
        let cut = found[2].as_deref().expect("named");
        assert!(
            cut.len() <= MAX_NAME_BYTES && cut.starts_with('é'),
            "{}",
            cut.len()
        );
    }

    #[test]
    fn reading_stops_at_the_budget() {
        let map = "1000 10 a\n".repeat(1000);
        let found = scan(map.as_bytes(), &[0x1000], 100);
        assert!(found.read <= 100, "{}", found.read);
        assert_eq!(found.names[0].as_deref(), Some("a"));
    }

    #[test]
    fn no_map_for_a_process_without_one() {
        assert!(open(std::process::id()).is_err());
    }
}
