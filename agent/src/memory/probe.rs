//! The kernel side of memory profiles, from user space: loads `memory.bpf.c` (its libbpf-rs
//! skeleton is built by `build.rs`), sets its options (this process left out, the interval
//! table, the size of `live`), attaches its uprobes to an allocator library for one process or
//! all, hands every ring buffer record to a callback and reads the program's counters.

use std::mem::MaybeUninit;
use std::path::Path;
use std::time::Duration;

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, OpenObject, RingBuffer, RingBufferBuilder, UprobeOpts};

use super::sampling;
use crate::error::AgentError;
use crate::options::MemoryOptions;
use crate::report::MemoryStats;

#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    unused,
    non_camel_case_types
)]
pub(crate) mod skel {
    include!(concat!(env!("OUT_DIR"), "/memory.skel.rs"));
}

use skel::{MemorySkel, MemorySkelBuilder};

/// How many counters the program keeps (`MSTAT_COUNT`).
const STATS: usize = 6;

/// The functions each attachment traps, in every allocator library.
const FUNCTIONS: [&str; 4] = ["malloc", "calloc", "realloc", "free"];
/// Trapped in glibc alone: anonymous memory mapped by the program itself.
const MAPPING: [&str; 2] = ["mmap", "munmap"];

/// The loaded program. Field order is drop order: the ring buffer and links before the maps.
pub struct MemoryProbe {
    ring: RingBuffer<'static>,
    skel: MemorySkel<'static>,
}

/// Extra room in the kernel's `live` table over the cap user space keeps: frees of entries user
/// space dropped (the oldest) still find them there until it deletes them.
const LIVE_SLACK: u32 = 1024;

impl MemoryProbe {
    /// Load and configure (nothing attached yet); records go to `on_record` in [`Self::poll`].
    pub fn load(
        options: &MemoryOptions,
        on_record: impl FnMut(&[u8]) + 'static,
    ) -> Result<MemoryProbe, AgentError> {
        // The skeleton borrows its object for its whole life; one small leak per start.
        let object: &'static mut MaybeUninit<OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = MemorySkelBuilder::default()
            .open(object)
            .map_err(|e| AgentError::bpf("opened (memory)", e))?;
        let table = sampling::intervals(options.sample_bytes);
        let rodata = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| AgentError::bpf("configured (memory)", "no .rodata section"))?;
        rodata.self_tgid = std::process::id();
        rodata.stack_bytes = options.stack_bytes;
        rodata.intervals = table;
        let live = u32::try_from(options.max_live)
            .unwrap_or(u32::MAX - LIVE_SLACK)
            .saturating_add(LIVE_SLACK);
        open.maps
            .live
            .set_max_entries(live)
            .map_err(|e| AgentError::bpf("configured (memory)", e))?;
        let skel = open
            .load()
            .map_err(|e| AgentError::bpf("loaded (memory)", e))?;
        let mut builder = RingBufferBuilder::new();
        let mut on_record = on_record;
        builder
            .add(&skel.maps.mem_events, move |data: &[u8]| {
                on_record(data);
                0
            })
            .map_err(|e| AgentError::bpf("connected to its ring buffer (memory)", e))?;
        let ring = builder
            .build()
            .map_err(|e| AgentError::bpf("connected to its ring buffer (memory)", e))?;
        Ok(MemoryProbe { ring, skel })
    }

    /// Attach the uprobes to the allocator in `library` for process `pid` (-1: every process):
    /// its allocation functions, and in glibc also `mmap`/`munmap`.
    pub fn attach(&self, library: &Path, pid: i32) -> Result<Vec<Link>, String> {
        let progs = &self.skel.progs;
        let glibc = library.file_name().is_some_and(|n| n == "libc.so.6");
        let mapping = MAPPING.iter().filter(|_| glibc);
        let mut links = Vec::new();
        for &function in FUNCTIONS.iter().chain(mapping) {
            let (entry, ret) = match function {
                "malloc" => (&progs.malloc_enter, Some(&progs.alloc_return)),
                "calloc" => (&progs.calloc_enter, Some(&progs.alloc_return)),
                "realloc" => (&progs.realloc_enter, Some(&progs.alloc_return)),
                "mmap" => (&progs.mmap_enter, Some(&progs.alloc_return)),
                "munmap" => (&progs.munmap_enter, None),
                _ => (&progs.free_enter, None),
            };
            // The return first: every call whose entry is seen then has its return seen too
            // (the program takes a call without one for still running).
            let probes = ret.map(|r| (r, true)).into_iter().chain([(entry, false)]);
            for (prog, retprobe) in probes {
                let opts = UprobeOpts {
                    retprobe,
                    func_name: Some(function.to_owned()),
                    ..UprobeOpts::default()
                };
                let link = prog
                    .attach_uprobe_with_opts(pid, library, 0, opts)
                    .map_err(|e| {
                        format!("cannot attach to {function} in {}: {e}", library.display())
                    })?;
                links.push(link);
            }
        }
        Ok(links)
    }

    /// Hand every record waiting (after up to `timeout`) to the callback.
    pub fn poll(&self, timeout: Duration) -> Result<(), AgentError> {
        let read = |e: libbpf_rs::Error| match e.kind() {
            libbpf_rs::ErrorKind::Interrupted => Ok(()),
            _ => Err(AgentError::bpf("read (memory ring buffer)", e)),
        };
        self.ring.poll(timeout).or_else(read)?;
        self.ring.consume().or_else(read)
    }

    /// Stop tracking an allocation user space dropped or whose process is gone.
    pub fn forget(&self, pid: u32, addr: u64) {
        let mut key = [0u8; 16];
        key[..4].copy_from_slice(&pid.to_ne_bytes());
        key[8..].copy_from_slice(&addr.to_ne_bytes());
        let _ = self.skel.maps.live.delete(&key);
    }

    /// The program's counters so far.
    pub fn stats(&self) -> MemoryStats {
        let mut s = [0u64; STATS];
        for (i, slot) in s.iter_mut().enumerate() {
            let key = (i as u32).to_ne_bytes();
            if let Ok(Some(per_cpu)) = self.skel.maps.mem_stats.lookup_percpu(&key, MapFlags::ANY) {
                *slot = per_cpu
                    .iter()
                    .filter_map(|v| v.get(..8).and_then(|b| b.try_into().ok()))
                    .map(u64::from_ne_bytes)
                    .sum();
            }
        }
        MemoryStats {
            calls: s[0],
            sampled: s[1],
            frees: s[2],
            lost_events: s[3],
            live_full: s[4],
            no_stack: s[5],
        }
    }
}
