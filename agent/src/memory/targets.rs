//! Which processes are traced, and where their allocator is: `--memory-pid` and
//! `--memory-comm` choose processes (each gets uprobes of its own, so other processes never
//! trap); with neither, every process is traced through one attachment per allocator library
//! file (found in the processes' mappings, rescanned as new ones appear). The allocator is
//! glibc's `libc.so.6`, or jemalloc's or tcmalloc's shared library where a process maps one
//! (they export `malloc`, `free`, ... under those names).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use regex::Regex;

/// A library a process maps, as a file: its device and inode (the same file in every process
/// and container) and a path to it through that process's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// `dev:inode` as `/proc/PID/maps` writes them.
    pub id: String,
    /// `/proc/PID/root/<path>`.
    pub path: PathBuf,
}

/// Whether a mapped file's name is an allocator the probes know.
pub fn is_allocator(file_name: &str) -> bool {
    file_name == "libc.so.6"
        || file_name.starts_with("libjemalloc.so")
        || file_name.starts_with("libtcmalloc")
}

/// The allocator libraries in one `/proc/PID/maps` text, each once.
pub fn allocators(pid: u32, maps: &str) -> Vec<Library> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_), Some(_), Some(_), Some(dev), Some(inode), Some(path)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        if !path.starts_with('/') || !is_allocator(name) {
            continue;
        }
        let id = format!("{dev}:{inode}");
        if seen.insert(id.clone()) {
            out.push(Library {
                id,
                path: PathBuf::from(format!("/proc/{pid}/root{path}")),
            });
        }
    }
    out
}

/// Every process id in `/proc`.
pub fn all_pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// A process's name (`/proc/PID/comm`).
pub fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end_matches('\n').to_owned())
}

/// Whether a process still exists.
pub fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The processes chosen by `--memory-pid` and `--memory-comm`, or `None` for every process.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Process ids asked for.
    pub pids: Vec<u32>,
    /// Process names matching.
    pub comm: Option<Regex>,
}

impl Filter {
    /// Whether every process is traced.
    pub fn is_all(&self) -> bool {
        self.pids.is_empty() && self.comm.is_none()
    }

    /// Of `pids`, those chosen (other than `me`): asked for by id, or named to match.
    pub fn chosen(&self, pids: &[u32], me: u32) -> Vec<u32> {
        pids.iter()
            .copied()
            .filter(|&p| p != me)
            .filter(|p| {
                self.pids.contains(p)
                    || self
                        .comm
                        .as_ref()
                        .is_some_and(|r| comm(*p).is_some_and(|c| r.is_match(&c)))
            })
            .collect()
    }
}

/// What is attached: per process (filtered) or per library file (every process).
pub struct Attached<L> {
    /// Process → its links.
    pub processes: HashMap<u32, Vec<L>>,
    /// Library id → its links (every process).
    pub libraries: HashMap<String, Vec<L>>,
}

impl<L> Default for Attached<L> {
    fn default() -> Self {
        Attached {
            processes: HashMap::new(),
            libraries: HashMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0a0000000-55d0a0001000 r-xp 00001000 08:01 1234 /usr/bin/worker
7f10a0000000-7f10a0028000 r--p 00000000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6
7f10a0028000-7f10a01bd000 r-xp 00028000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6
7f10b0000000-7f10b0100000 r-xp 00000000 08:01 888 /usr/lib/libjemalloc.so.2
7f10c0000000-7f10c0100000 r-xp 00000000 08:01 999 /usr/lib/libcrypto.so.3
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
";

    #[test]
    fn finds_each_allocator_once_through_the_process_root() {
        let libs = allocators(42, MAPS);
        assert_eq!(
            libs,
            vec![
                Library {
                    id: "08:01:777".into(),
                    path: "/proc/42/root/usr/lib/x86_64-linux-gnu/libc.so.6".into()
                },
                Library {
                    id: "08:01:888".into(),
                    path: "/proc/42/root/usr/lib/libjemalloc.so.2".into()
                },
            ]
        );
        assert!(is_allocator("libtcmalloc_minimal.so.4"));
        assert!(!is_allocator("libcrypto.so.3") && !is_allocator("libc.so"));
    }

    #[test]
    fn chooses_by_id_and_name_never_itself() {
        let me = std::process::id();
        let by_id = Filter {
            pids: vec![me, 1],
            comm: None,
        };
        assert_eq!(by_id.chosen(&[me, 1, 2], me), vec![1]);
        let mine = comm(me).expect("own comm");
        let by_name = Filter {
            pids: vec![],
            comm: Regex::new(&format!("^{}$", regex::escape(&mine))).ok(),
        };
        assert!(by_name.chosen(&[me], me).is_empty(), "never itself");
        assert!(!by_name.is_all() && Filter::default().is_all());
    }
}
