//! The collector's loop: poll the ring buffer for a window's length (records are unwound as
//! they arrive), then end the window — drain fp-mode counts, name every frame, fold the stacks
//! into per-process and `Total` batches timed at the window's end, hand them to the sink and log
//! a stats line saying what was sampled and what was lost.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use embers_model::contract::detail::SourceLine;
use serde_json::Value;

use crate::bpf::{KernelStats, Probe};
use crate::error::AgentError;
use crate::frame::Frame;
use crate::intake::{Intake, Names, StackKey};
use crate::memory::Memory;
use crate::options::{Options, Unwind};
use crate::report::MemoryReport;
use crate::report::WindowReport;
use crate::sink::Sink;
use crate::symbols::Symbols;
use crate::window::{Event, Fold, Named};
use crate::{host, preflight};

/// How often the ring buffer is drained (sooner when it is half full); also how soon a stop
/// request is noticed.
const POLL: Duration = Duration::from_millis(100);

/// A running collector (not `Send`: it lives on the thread that started it).
pub struct Collector {
    probe: Probe,
    memory: Option<Memory>,
    intake: Rc<RefCell<Intake>>,
    symbols: Symbols,
    options: Options,
    tags: BTreeMap<String, Value>,
    kernel_before: KernelStats,
    windows: u64,
}

impl Collector {
    /// Check permissions and BTF, load the program and start sampling.
    pub fn start(options: Options) -> Result<Collector, AgentError> {
        let options = options.check().map_err(AgentError::Config)?;
        for warning in preflight::check()? {
            tracing::warn!("{warning}");
        }
        raise_fd_limit();
        let tags = host::tags(host::hostname(), host::primary_ip(), &options.tags);
        let intake = Rc::new(RefCell::new(Intake::new()));
        let feed = intake.clone();
        let probe = Probe::start(&options, move |data| feed.borrow_mut().record(data))?;
        tracing::info!(
            cpus = probe.cpus(),
            frequency = options.frequency,
            interval = ?options.interval,
            off_cpu = options.off_cpu,
            unwind = ?options.unwind,
            "sampling every CPU"
        );
        let memory = if options.memory.enabled {
            Some(Memory::start(&options.memory, intake.clone())?)
        } else {
            None
        };
        Ok(Collector {
            probe,
            memory,
            intake,
            symbols: Symbols::new(),
            options,
            tags,
            kernel_before: KernelStats::default(),
            windows: 0,
        })
    }

    /// Collect windows into `sink` until `stop` is set; the window in progress is sent then.
    /// A stop asked for while a window was being ended (naming it can take seconds: a host's
    /// first window names every module) is followed by one more window, which takes what
    /// arrived meanwhile: without it those records were never read.
    pub fn run(&mut self, sink: &mut dyn Sink, stop: &AtomicBool) -> Result<(), AgentError> {
        loop {
            let end = Instant::now() + self.options.interval;
            loop {
                let now = Instant::now();
                if now >= end || stop.load(Ordering::Relaxed) {
                    break;
                }
                self.probe.poll(POLL.min(end - now))?;
                if let Some(memory) = &mut self.memory {
                    memory.poll()?;
                }
            }
            let last = stop.load(Ordering::Relaxed);
            self.end_window(sink);
            if last {
                break;
            }
        }
        sink.close(Duration::from_secs(5));
        Ok(())
    }

    /// End the window now: name, fold and hand its batches to `sink`.
    pub fn end_window(&mut self, sink: &mut dyn Sink) -> WindowReport {
        let time = unix_now();
        // Records wait in the ring buffer until a drain: take the window's last ones now.
        if let Err(e) = self.probe.poll(Duration::ZERO) {
            tracing::warn!("{e}");
        }
        let (stacks, names, counters) = {
            let mut intake = self.intake.borrow_mut();
            if self.options.unwind == Unwind::Fp {
                for drained in self.probe.drain_counts() {
                    intake.counted(&drained);
                }
            }
            intake.take()
        };
        let times = self.intake.borrow_mut().take_times();
        let clock = crate::seconds::Clock::now();
        let frames: HashSet<&Frame> = stacks
            .keys()
            .flat_map(|k| k.user.iter().chain(&k.kernel))
            .collect();
        self.symbols
            .resolve(frames, &mut self.intake.borrow_mut().modules);
        let mut fold = Fold::new();
        {
            let intake = self.intake.borrow();
            for (key, value) in &stacks {
                let (named, lines) = self.named(key, *value, &names, &intake.modules);
                let stamps: Vec<_> = times
                    .get(key)
                    .into_iter()
                    .flatten()
                    .map(|s| clock.to_unix_ms(*s))
                    .collect();
                fold.add_timed(&named, &lines, &stamps);
            }
        }
        let memory = self.memory_window(&mut fold);
        {
            // Only now, with the window named: modules no known process maps may go.
            let mut intake = self.intake.borrow_mut();
            let mapped = intake.processes.module_ids();
            let evicted = intake.modules.end_window(&mapped);
            self.symbols.forget(&evicted);
        }
        let batches = fold.batches(
            time,
            &self.tags,
            self.options.us_per_sample(),
            self.options.max_batch_bytes,
        );
        let kernel_now = self.probe.stats();
        let report = WindowReport {
            time,
            batches: batches.len(),
            stacks: stacks.len(),
            kernel: kernel_now.since(&self.kernel_before),
            intake: counters,
            memory,
        };
        self.kernel_before = kernel_now;
        if !batches.is_empty() {
            sink.accept(time, batches);
        }
        self.windows += 1;
        sink.window(&report);
        self.log(&report, sink);
        self.probe.follow_cpus();
        report
    }

    /// With `--memory`: the window's `mem-alloc` and `mem-inuse` into `fold`, named as the
    /// on-CPU frames were (before modules are evicted).
    fn memory_window(&mut self, fold: &mut Fold) -> Option<MemoryReport> {
        let memory = self.memory.as_mut()?;
        // The window's last records, unwound while the intake is free.
        if let Err(e) = memory.poll() {
            tracing::warn!("{e}");
        }
        let options = &self.options;
        let (named, report) = memory.end_window(
            &mut self.symbols,
            &mut self.intake.borrow_mut().modules,
            |process| options.wants(process, false),
        );
        for (n, lines) in &named {
            fold.add_with_lines(n, lines);
        }
        Some(report)
    }

    /// The sample's frames named (a user frame with functions inlined into it is several),
    /// with the source line of each.
    fn named(
        &self,
        key: &StackKey,
        value: u64,
        names: &HashMap<u32, Names>,
        modules: &crate::modules::Modules,
    ) -> (Named, Vec<Option<SourceLine>>) {
        let n = names.get(&key.tid).cloned().unwrap_or_default();
        let mut kernel: Vec<String> = key
            .kernel
            .iter()
            .map(|f| self.symbols.name(f, modules))
            .collect();
        // Off-CPU kernel stacks end in the scheduler; drop any BPF or tracing frames above it.
        if key.event == Event::OffCpu {
            let machinery = kernel.iter().take_while(|n| is_tracing_frame(n)).count();
            kernel.drain(..machinery);
        }
        let mut user = Vec::with_capacity(key.user.len());
        for f in key.user.iter().rev() {
            self.symbols.expand(f, modules, &mut user);
        }
        let kernel = kernel.into_iter().rev().map(|k| (k, None));
        let (frames, lines) = user.into_iter().chain(kernel).unzip();
        let named = Named {
            event: key.event,
            pid: key.pid,
            tid: key.tid,
            wanted: self.options.wants(&n.process, n.kernel_thread),
            process: n.process,
            thread: n.thread,
            frames,
            value,
        };
        (named, lines)
    }

    fn log(&self, r: &WindowReport, sink: &dyn Sink) {
        let k = &r.kernel;
        let i = &r.intake;
        tracing::info!(
            "window {}: {} samples, {} off-CPU waits, {} stacks, {} batches; lost: {} events (ring buffer full), {} counts (map full), {} stacks (stack map full); {} of {} user stacks cut short; {} samples of exited processes, {} of processes we may not read; {}",
            r.time, k.samples, k.blocks, r.stacks, r.batches, k.lost_events, k.lost_counts,
            k.lost_stacks, i.cut_short, i.unwound, i.exited, i.denied, sink.report()
        );
        if k.lost_events + k.lost_counts > 0 {
            tracing::warn!(
                "{} samples were dropped in the kernel this window (ring buffer or counts map \
                 full): lower --frequency or --stack-bytes",
                k.lost_events + k.lost_counts
            );
        }
        if k.lost_stacks > 0 {
            tracing::warn!(
                "{} stacks were lost in the kernel (stack map full or colliding): their \
                 samples are kept without them",
                k.lost_stacks
            );
        }
        if let Some(m) = &r.memory {
            log_memory(m);
        }
        if i.exited > 0 {
            tracing::info!(
                "{} samples came from processes that exited before their memory maps were read: their user frames are [unknown]",
                i.exited
            );
        }
        let problems = self.intake.borrow_mut().modules.take_problems();
        for (path, why) in problems.files {
            tracing::warn!("symbol file {path} {why}: its frames are [{path}]");
        }
        for path in problems.deleted {
            tracing::warn!(
                "symbol file {path} was deleted while mapped: read through the process's mapping"
            );
        }
    }
}

/// The stats line of memory profiling, and a warning when it lost or dropped anything.
fn log_memory(m: &MemoryReport) {
    let (k, t) = (&m.kernel, &m.table);
    tracing::info!(
        "memory: {} allocations, {} sampled, {} frees of sampled ones; {} tracked live, {} dropped (--memory-max-live), {} of exited processes; lost: {} events (ring buffer full), {} not tracked (kernel table full), {} without a stack; {} attached",
        k.calls, k.sampled, k.frees, m.tracked, t.dropped, t.exited, k.lost_events, k.live_full,
        k.no_stack, m.attached
    );
    if t.dropped + k.lost_events + k.live_full > 0 {
        tracing::warn!(
            "memory: {} live allocations dropped for newer ones and {} samples lost this window: \
             in-use bytes are undercounted (raise --memory-max-live or --memory-sample-bytes)",
            t.dropped,
            k.lost_events + k.live_full
        );
    }
}

/// BPF and tracepoint frames that may start an off-CPU stack: they say nothing of the wait.
fn is_tracing_frame(name: &str) -> bool {
    let Some(f) = name.strip_prefix("[k] ") else {
        return false;
    };
    [
        "bpf_",
        "__bpf_",
        "__traceiter_",
        "trace_call_bpf",
        "perf_trace_",
    ]
    .iter()
    .any(|p| f.starts_with(p))
}

/// Raise the soft limit on open descriptors to the hard one: each module held keeps up to two
/// open (its file until named, then its symbol copy, which blazesym opens once more), and 1,024
/// (the usual soft limit) would leave frames unnamed on a host with a few hundred binaries.
fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid rlimit out-parameter.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracing_frames() {
        assert!(is_tracing_frame("[k] bpf_trace_run4"));
        assert!(is_tracing_frame("[k] __traceiter_sched_switch"));
        assert!(!is_tracing_frame("[k] __schedule"));
        assert!(!is_tracing_frame("bpf_user_function"));
    }
}
