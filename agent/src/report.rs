//! What one window held — the BPF program's counters and what happened to the stacks in user
//! space — for the stats line and for a [`crate::Sink`] that reports it on (the service's
//! `/healthz`). Plain data, so a sink needs nothing else of the collector.

/// What one window held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WindowReport {
    /// Unix seconds the window ended at.
    pub time: i64,
    /// Batches handed to the sink.
    pub batches: usize,
    /// Distinct stacks.
    pub stacks: usize,
    /// The kernel's counters for the window.
    pub kernel: KernelStats,
    /// What happened in user space.
    pub intake: Counters,
    /// Memory profiling's counters (with `--memory`).
    pub memory: Option<MemoryReport>,
}

/// The BPF program's counters (`enum stat` in `profile.bpf.c`), summed over CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelStats {
    /// On-CPU samples taken.
    pub samples: u64,
    /// Events dropped: the ring buffer was full.
    pub lost_events: u64,
    /// fp-mode samples dropped: a counts map was full.
    pub lost_counts: u64,
    /// Stacks lost: a stack map was full.
    pub lost_stacks: u64,
    /// Samples whose user stack could not be read at all.
    pub no_user_stack: u64,
    /// Off-CPU waits recorded.
    pub blocks: u64,
    /// Of those, waits whose task ran user code again before its user stack could be read:
    /// only where it waited is known.
    pub late_waits: u64,
}

impl KernelStats {
    /// What happened since `before`.
    pub fn since(&self, before: &KernelStats) -> KernelStats {
        KernelStats {
            samples: self.samples.saturating_sub(before.samples),
            lost_events: self.lost_events.saturating_sub(before.lost_events),
            lost_counts: self.lost_counts.saturating_sub(before.lost_counts),
            lost_stacks: self.lost_stacks.saturating_sub(before.lost_stacks),
            no_user_stack: self.no_user_stack.saturating_sub(before.no_user_stack),
            blocks: self.blocks.saturating_sub(before.blocks),
            late_waits: self.late_waits.saturating_sub(before.late_waits),
        }
    }
}

/// What happened to the window's stacks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Events read from the ring buffer.
    pub events: u64,
    /// User stacks walked (from a stack copy, or only their leaf when there was none).
    pub unwound: u64,
    /// Of those, stacks that ended before a root frame.
    pub cut_short: u64,
    /// Samples of processes that exited before their mappings were read.
    pub exited: u64,
    /// Samples of processes whose mappings may not be read.
    pub denied: u64,
    /// Records that did not parse.
    pub bad_records: u64,
}

/// What memory profiling did in a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The kernel's counters.
    pub kernel: MemoryStats,
    /// The table's.
    pub table: TableCounters,
    /// Sampled allocations tracked as live at the window's end.
    pub tracked: usize,
    /// Processes (or, tracing every process, allocator libraries) with uprobes attached.
    pub attached: usize,
}

/// The program's counters (`enum mem_stat`), summed over CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Allocations seen.
    pub calls: u64,
    /// Of those, sampled.
    pub sampled: u64,
    /// Frees of tracked (sampled, live) allocations.
    pub frees: u64,
    /// Samples or frees dropped: the ring buffer was full.
    pub lost_events: u64,
    /// Samples not tracked as live: the kernel's table was full.
    pub live_full: u64,
    /// Samples whose user stack could not be read at all.
    pub no_stack: u64,
}

impl MemoryStats {
    /// What happened since `before`.
    pub fn since(&self, before: &MemoryStats) -> MemoryStats {
        MemoryStats {
            calls: self.calls.saturating_sub(before.calls),
            sampled: self.sampled.saturating_sub(before.sampled),
            frees: self.frees.saturating_sub(before.frees),
            lost_events: self.lost_events.saturating_sub(before.lost_events),
            live_full: self.live_full.saturating_sub(before.live_full),
            no_stack: self.no_stack.saturating_sub(before.no_stack),
        }
    }
}

/// What the table did in a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableCounters {
    /// Samples added.
    pub samples: u64,
    /// Frees of tracked allocations.
    pub frees: u64,
    /// Tracked allocations dropped for newer ones (the cap).
    pub dropped: u64,
    /// Tracked allocations of processes that exited.
    pub exited: u64,
    /// Records that did not parse.
    pub bad_records: u64,
}
