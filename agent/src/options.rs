//! What the collector is asked to do, checked: the library's view of the command line (the
//! binary's `cli` and the service's `--profile-host` both build one).

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

/// How user stacks are walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unwind {
    /// Copy the top of the stack in the kernel and unwind it here from `.eh_frame` (whole
    /// stacks also without frame pointers; every sample crosses to user space).
    Dwarf,
    /// Frame pointers only, counted in the kernel (cheapest; stacks of binaries built without
    /// frame pointers end after a frame or two).
    Fp,
}

/// Default of `--stack-bytes`.
pub const DEFAULT_STACK_BYTES: u32 = 32 << 10;
/// Largest `--stack-bytes` (what the BPF program can carry).
pub const MAX_STACK_BYTES: u32 = 64 << 10;

/// Shortest window.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// Default of `--memory-sample-bytes`: one sample per 512 KiB allocated, on average.
pub const DEFAULT_SAMPLE_BYTES: u64 = 512 << 10;
/// Default of `--memory-max-live`: sampled allocations tracked as live at most.
pub const DEFAULT_MAX_LIVE: usize = 65_536;
/// What memory profiling is asked to do.
#[derive(Clone, Debug)]
pub struct MemoryOptions {
    /// Profile memory at all.
    pub enabled: bool,
    /// Mean bytes allocated between two samples.
    pub sample_bytes: u64,
    /// Most sampled allocations tracked as live (the oldest are dropped).
    pub max_live: usize,
    /// Only these processes (with `comm`: these and those)…
    pub pids: Vec<u32>,
    /// …and those whose name matches. Neither: every process.
    pub comm: Option<Regex>,
    /// Most bytes of user stack copied per sample.
    pub stack_bytes: u32,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            enabled: false,
            sample_bytes: DEFAULT_SAMPLE_BYTES,
            max_live: DEFAULT_MAX_LIVE,
            pids: Vec::new(),
            comm: None,
            stack_bytes: DEFAULT_STACK_BYTES,
        }
    }
}

impl MemoryOptions {
    /// The options, or what is wrong with them.
    pub fn check(&self) -> Result<(), String> {
        if !(1024..=1 << 30).contains(&self.sample_bytes) {
            return Err(format!(
                "--memory-sample-bytes {} is out of range: 1KiB to 1GiB",
                self.sample_bytes
            ));
        }
        if !(1..=10_000_000).contains(&self.max_live) {
            return Err(format!(
                "--memory-max-live {} is out of range: 1 to 10000000",
                self.max_live
            ));
        }
        Ok(())
    }
}

/// The `--memory-comm` filter from its text, or what is wrong with it.
pub fn comm_filter(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern)
        .map_err(|e| format!("--memory-comm {pattern}: not a regular expression: {e}"))
}

/// The collector's settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Samples per second per CPU.
    pub frequency: u32,
    /// Length of a window.
    pub interval: Duration,
    /// Also record off-CPU time.
    pub off_cpu: bool,
    /// Shortest wait recorded off-CPU.
    pub min_block: Duration,
    /// Processes that get a per-process graph (all when `None`).
    pub process_regex: Option<Regex>,
    /// Also sample the idle task (pid 0).
    pub include_idle: bool,
    /// Kernel threads get per-process graphs too (by default they are only in `Total`).
    pub include_kernel_threads: bool,
    /// Tags of every batch (the machine's are added unless given here).
    pub tags: BTreeMap<String, Value>,
    /// How user stacks are walked.
    pub unwind: Unwind,
    /// Most bytes of user stack copied per sample (dwarf mode): deeper stacks are cut short.
    pub stack_bytes: u32,
    /// Most bytes of folded text in one batch.
    pub max_batch_bytes: usize,
    /// Memory profiles (`--memory`; off by default).
    pub memory: MemoryOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            frequency: 99,
            interval: Duration::from_secs(10),
            off_cpu: false,
            min_block: Duration::from_millis(1),
            process_regex: None,
            include_idle: false,
            include_kernel_threads: false,
            tags: BTreeMap::new(),
            unwind: Unwind::Dwarf,
            stack_bytes: DEFAULT_STACK_BYTES,
            max_batch_bytes: 1 << 20,
            memory: MemoryOptions::default(),
        }
    }
}

impl Options {
    /// The options, or what is wrong with them.
    pub fn check(self) -> Result<Options, String> {
        if !(1..=10_000).contains(&self.frequency) {
            return Err(format!(
                "--frequency {} is out of range: 1 to 10000 samples per second",
                self.frequency
            ));
        }
        if self.interval < MIN_INTERVAL {
            return Err(format!(
                "--interval {:?} is too short: at least 1s",
                self.interval
            ));
        }
        if !(1024..=MAX_STACK_BYTES).contains(&self.stack_bytes) {
            return Err(format!(
                "--stack-bytes {} is out of range: 1KiB to 64KiB",
                self.stack_bytes
            ));
        }
        if self.max_batch_bytes < 4096 {
            return Err("batches must allow at least 4096 bytes".to_owned());
        }
        if self.memory.enabled {
            self.memory.check()?;
        }
        Ok(self)
    }

    /// Microseconds one on-CPU sample stands for (1e6 / frequency, as DeepFlow counts).
    pub fn us_per_sample(&self) -> u64 {
        (1_000_000 + u64::from(self.frequency) / 2) / u64::from(self.frequency.max(1))
    }

    /// Whether `process` gets a per-process graph: kernel threads (kworker/0:1, ksoftirqd/0,
    /// ...) only with `include_kernel_threads` — each is a process of its own, and a graph each
    /// would bury the services in dozens of them; `Total` shows their time as `[p] <name>`.
    pub fn wants(&self, process: &str, kernel_thread: bool) -> bool {
        (self.include_kernel_threads || !kernel_thread)
            && self
                .process_regex
                .as_ref()
                .is_none_or(|r| r.is_match(process))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_and_derived_values() {
        let o = Options::default().check().expect("defaults are fine");
        assert_eq!(o.us_per_sample(), 10101);
        assert!(o.wants("anything", false));
        assert!(
            !o.wants("kworker/0:1", true),
            "kernel threads only in Total"
        );
        let with = Options {
            include_kernel_threads: true,
            ..Options::default()
        };
        assert!(with.wants("kworker/0:1", true));
        let o = Options {
            frequency: 0,
            ..Options::default()
        };
        assert!(o.check().expect_err("zero").contains("--frequency 0"));
        let o = Options {
            interval: Duration::from_millis(500),
            ..Options::default()
        };
        assert!(o.check().expect_err("short").contains("at least 1s"));
        let o = Options {
            process_regex: Regex::new("^nginx").ok(),
            frequency: 1000,
            ..Options::default()
        };
        assert!(o.wants("nginx: worker", false) && !o.wants("redis", false));
        let kernel_nginx = Options {
            include_kernel_threads: true,
            ..o.clone()
        };
        assert!(kernel_nginx.wants("nginx", true) && !kernel_nginx.wants("kworker/1:0", true));
        assert_eq!(o.us_per_sample(), 1000);
    }
}
