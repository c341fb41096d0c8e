//! Naming JIT frames from perf maps, with bounds a hostile runtime cannot push: each window the
//! maps of the processes with JIT frames are scanned for just those addresses (at most
//! [`MAX_SCAN_BYTES`] read in all, the least recently scanned maps first, so a budget spent
//! on some reaches the others next window), and the names found are kept while the map is
//! unchanged — at most [`MAX_NAMES_PER_PROCESS`] per process and [`MAX_NAMES`] in all, each
//! at most [`perf_map::MAX_NAME_BYTES`]: 64 MiB per process and 128 MiB in all at worst, a few
//! KiB in practice.

use std::collections::HashMap;
use std::rc::Rc;

use super::perf_map::{self, Opened};
use crate::names::{self, Place};

/// Bytes of perf maps read per window, all processes together: ~0.3 s of one core at worst.
pub const MAX_SCAN_BYTES: u64 = 256 << 20;
/// Addresses named and kept per process.
pub const MAX_NAMES_PER_PROCESS: usize = 1 << 16;
/// Addresses named and kept in all.
pub const MAX_NAMES: usize = 1 << 17;

/// What is known of one process's map.
struct Known {
    identity: (u64, u64, u64, i64, i64),
    names: HashMap<u64, Option<Rc<str>>>,
    scanned_in: u64,
}

/// Perf-map names of the processes with JIT frames in the last window.
#[derive(Default)]
pub struct Jit {
    /// `None`: the process has no map that may be read.
    maps: HashMap<u32, Option<Known>>,
    window: u64,
}

impl Jit {
    /// Name the addresses in `wanted` (per process) for this window; processes not in it are
    /// forgotten.
    pub fn resolve(&mut self, wanted: HashMap<u32, Vec<u64>>) {
        self.window += 1;
        self.maps.retain(|pid, _| wanted.contains_key(pid));
        let mut pids: Vec<(u32, Vec<u64>)> = wanted.into_iter().collect();
        let scanned = |pid: &u32| match self.maps.get(pid) {
            Some(Some(k)) => k.scanned_in,
            _ => 0,
        };
        pids.sort_by_key(|(pid, _)| scanned(pid));
        let mut budget = MAX_SCAN_BYTES;
        for (pid, mut addrs) in pids {
            addrs.sort_unstable();
            addrs.dedup();
            addrs.truncate(MAX_NAMES_PER_PROCESS);
            match perf_map::open(pid) {
                Ok(opened) => budget -= self.read(pid, opened, &addrs, budget),
                Err(e) => {
                    tracing::debug!(pid, "perf map not read: {e}");
                    self.maps.insert(pid, None);
                }
            }
        }
        let total: usize = self.maps.values().flatten().map(|k| k.names.len()).sum();
        if total > MAX_NAMES {
            // Start over rather than pick: this only happens to a host of JIT processes whose
            // maps change all the time, and each is read again next window.
            self.maps.clear();
        }
    }

    /// Scan `opened` for the addresses not known yet; returns the bytes read.
    fn read(&mut self, pid: u32, opened: Opened, addrs: &[u64], budget: u64) -> u64 {
        let window = self.window;
        let entry = self.maps.entry(pid).or_insert(None);
        let known = match entry {
            Some(k) if k.identity == opened.identity => k,
            _ => entry.insert(Known {
                identity: opened.identity,
                names: HashMap::new(),
                scanned_in: 0,
            }),
        };
        let missing: Vec<u64> = addrs
            .iter()
            .copied()
            .filter(|a| !known.names.contains_key(a))
            .collect();
        if missing.is_empty() || budget == 0 {
            return 0;
        }
        let scan = perf_map::scan(&opened.file, &missing, budget);
        if known.names.len() + missing.len() > MAX_NAMES_PER_PROCESS {
            known.names.clear();
        }
        // A scan the budget cut short says nothing of the addresses it did not find.
        let whole = scan.read >= opened.identity.2.min(perf_map::MAX_FILE_BYTES);
        for (addr, name) in missing.into_iter().zip(scan.names) {
            if whole || name.is_some() {
                known.names.insert(addr, name);
            }
        }
        known.scanned_in = window;
        scan.read.min(budget)
    }

    /// The name of JIT address `addr` of process `pid`: its function's, `[/tmp/perf-<pid>.map]`
    /// when the map does not name it, `[unknown] 0x…` without a map.
    pub fn name(&self, pid: u32, addr: u64) -> String {
        match self.maps.get(&pid) {
            Some(Some(known)) => match known.names.get(&addr) {
                Some(Some(name)) => names::user(Some(name), Place::Jit, addr),
                _ => format!("[/tmp/perf-{pid}.map]"),
            },
            _ => names::unknown(addr),
        }
    }
}
