//! Memory profiles (`--memory`, off by default): where a program's C allocations come from
//! (`mem-alloc`, bytes allocated per stack in each window) and what they hold (`mem-inuse`,
//! bytes still live per stack at each window's end — an instant, as DeepFlow reads it), from
//! uprobes on the allocator (`memory.bpf.c`), sampled by bytes ([`sampling`]) and unwound
//! exactly as on-CPU stacks are (the stack copy walked from `.eh_frame` by the same
//! [`crate::intake::Intake`]), so programs built without frame pointers have whole stacks.
//!
//! `probe` loads and attaches the program, `targets` chooses processes and finds their
//! allocator, `events` reads its records, `table` keeps the samples and what is still live.
//! [`Memory`] ties them to the collector's loop.

pub mod events;
pub mod probe;
pub mod sampling;
pub mod table;
pub mod targets;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use embers_model::contract::detail::SourceLine;

use crate::bpf::events::{Event, Kind, Regs};
use crate::error::AgentError;
use crate::intake::Intake;
use crate::modules::Modules;
use crate::options::MemoryOptions;
use crate::report::{MemoryReport, MemoryStats};
use crate::symbols::Symbols;
use crate::window::{self, Named};
use events::{Alloc, MemEvent};
use probe::MemoryProbe;
use table::{Fresh, Site, Table};
use targets::{Attached, Filter};

/// How often new processes are looked for (a process is traced from then on).
const RESCAN: Duration = Duration::from_millis(200);

/// Memory profiling, running.
pub struct Memory {
    table: Rc<RefCell<Table>>,
    filter: Filter,
    attached: Attached<libbpf_rs::Link>,
    scanned: Option<Instant>,
    stats_before: MemoryStats,
    probe: MemoryProbe,
}

/// A memory sample's stack named, with each frame's source line.
pub type Lined = (Named, Vec<Option<SourceLine>>);

/// Where a fresh sample was taken, named as on-CPU stacks are ([`Symbols::expand`]: functions
/// inlined into a frame are frames of their own, with lines), the allocator's frame the leaf.
fn site(f: &table::Fresh, symbols: &Symbols, modules: &Modules) -> Site {
    let mut named = Vec::with_capacity(f.frames.len() + 1);
    for frame in f.frames.iter().rev() {
        symbols.expand(frame, modules, &mut named);
    }
    named.push((f.allocator.frame().to_owned(), None));
    let (frames, lines) = named.into_iter().unzip();
    Site {
        pid: f.pid,
        tid: f.tid,
        process: f.process.clone(),
        thread: f.thread.clone(),
        frames,
        lines,
    }
}

/// A sampled allocation as the intake's unwinder takes it. The registers are those the
/// allocator returned with: `ip` is the return address, so the walk starts from `ip - 1`, inside
/// the call (the caller's state there is the same, and its name is the caller's).
fn as_event<'a>(a: &Alloc<'a>) -> Event<'a> {
    Event {
        kind: Kind::OnCpu,
        pid: a.pid,
        tid: a.tid,
        kernel_thread: false,
        value: 0,
        regs: Regs {
            ip: a.regs.ip.saturating_sub(1),
            ..a.regs
        },
        thread: String::new(),
        process: String::new(),
        kernel: Vec::new(),
        user: Vec::new(),
        stack_start: a.stack_start,
        stack: a.stack,
    }
}

impl Memory {
    /// Load the program and attach to the processes chosen now; records are unwound by `intake`.
    pub fn start(
        options: &MemoryOptions,
        intake: Rc<RefCell<Intake>>,
    ) -> Result<Memory, AgentError> {
        options.check().map_err(AgentError::Config)?;
        let table = Rc::new(RefCell::new(Table::new(options.max_live)));
        let feed = table.clone();
        let mean = sampling::mean(&sampling::intervals(options.sample_bytes));
        let on_record = move |data: &[u8]| {
            let mut table = feed.borrow_mut();
            match events::parse(data) {
                Ok(MemEvent::Alloc(a)) => {
                    let frames = intake.borrow_mut().user_stack(&as_event(&a));
                    let weight = sampling::weight(a.size, mean);
                    let sample = Fresh {
                        pid: a.pid,
                        tid: a.tid,
                        process: a.process,
                        thread: a.thread,
                        frames,
                        allocator: a.allocator,
                        weight,
                        addr: a.addr,
                        live: true,
                    };
                    table.alloc(a.addr, sample);
                }
                Ok(MemEvent::Free { pid, addr }) => table.free(pid, addr),
                Err(_) => table.counters.bad_records += 1,
            }
        };
        let probe = MemoryProbe::load(options, on_record)?;
        let mut memory = Memory {
            table,
            filter: Filter {
                pids: options.pids.clone(),
                comm: options.comm.clone(),
            },
            attached: Attached::default(),
            scanned: None,
            stats_before: MemoryStats::default(),
            probe,
        };
        memory.scan();
        Ok(memory)
    }

    /// Drain the ring buffer (records are unwound now, while their processes exist), have the
    /// kernel forget what the table dropped, and look for new processes to trace.
    pub fn poll(&mut self) -> Result<(), AgentError> {
        self.probe.poll(Duration::ZERO)?;
        for (pid, addr) in std::mem::take(&mut self.table.borrow_mut().forget) {
            self.probe.forget(pid, addr);
        }
        if self.scanned.is_none_or(|t| t.elapsed() >= RESCAN) {
            self.scan();
        }
        Ok(())
    }

    /// Attach to processes chosen since the last scan (every allocator library, tracing every
    /// process), and let go of those that exited.
    fn scan(&mut self) {
        self.scanned = Some(Instant::now());
        let pids = targets::all_pids();
        let me = std::process::id();
        if self.filter.is_all() {
            for pid in pids.into_iter().filter(|&p| p != me) {
                let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
                    continue;
                };
                for lib in targets::allocators(pid, &maps) {
                    if self.attached.libraries.contains_key(&lib.id) {
                        continue;
                    }
                    let links = self.attach_logged(&lib.path, -1);
                    self.attached.libraries.insert(lib.id, links);
                }
            }
            return;
        }
        self.attached
            .processes
            .retain(|&pid, _| targets::alive(pid));
        let new: Vec<u32> = pids
            .into_iter()
            .filter(|p| !self.attached.processes.contains_key(p))
            .collect();
        for pid in self.filter.chosen(&new, me) {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            let libs = targets::allocators(pid, &maps);
            if libs.is_empty() {
                tracing::info!(
                    pid,
                    "memory: no allocator library mapped (a static binary?): not traced"
                );
            }
            let links = libs
                .iter()
                .flat_map(|lib| self.attach_logged(&lib.path, pid as i32))
                .collect();
            self.attached.processes.insert(pid, links);
        }
    }

    fn attach_logged(&self, path: &std::path::Path, pid: i32) -> Vec<libbpf_rs::Link> {
        match self.probe.attach(path, pid) {
            Ok(links) => {
                tracing::info!(pid, library = %path.display(), "memory: allocator uprobes attached");
                links
            }
            Err(e) => {
                tracing::warn!("memory: {e}");
                Vec::new()
            }
        }
    }

    /// End the window (after a last [`Self::poll`], which needs the intake, so not while the
    /// caller holds its modules): name the window's samples with `symbols` (the frames and lines
    /// on-CPU stacks get), and return the window's `mem-alloc` and the `mem-inuse` at its end,
    /// for `wants`ed processes, with what happened.
    pub fn end_window(
        &mut self,
        symbols: &mut Symbols,
        modules: &mut Modules,
        wants: impl Fn(&str) -> bool,
    ) -> (Vec<Lined>, MemoryReport) {
        let mut table = self.table.borrow_mut();
        symbols.resolve(table.fresh().iter().flat_map(|f| &f.frames), modules);
        let sites: Vec<Site> = table
            .fresh()
            .iter()
            .map(|f| site(f, symbols, modules))
            .collect();
        let (allocated, in_use) = table.end_window(sites, targets::alive);
        let named = |event, (site, value): (Rc<Site>, u64)| {
            let n = Named {
                event,
                pid: site.pid,
                tid: site.tid,
                wanted: wants(&site.process),
                process: site.process.clone(),
                thread: site.thread.clone(),
                frames: site.frames.clone(),
                value,
            };
            (n, site.lines.clone())
        };
        let mut out: Vec<Lined> = allocated
            .into_iter()
            .map(|s| named(window::Event::MemAlloc, s))
            .collect();
        out.extend(
            in_use
                .into_iter()
                .map(|s| named(window::Event::MemInuse, s)),
        );
        let now = self.probe.stats();
        let report = MemoryReport {
            kernel: now.since(&self.stats_before),
            table: table.take_counters(),
            tracked: table.tracked(),
            attached: self.attached.processes.len() + self.attached.libraries.len(),
        };
        self.stats_before = now;
        for (pid, addr) in std::mem::take(&mut table.forget) {
            self.probe.forget(pid, addr);
        }
        (out, report)
    }
}
