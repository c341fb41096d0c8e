//! Where samples arrive during a window: each ring buffer event (or, in fp mode, each drained
//! count) is unwound and its addresses turned into [`Frame`]s at once, while the process's
//! mappings are still there to read, then summed per distinct (event, thread, stack). Naming
//! waits for the window's end.

use std::collections::HashMap;

use framehop::x86_64::CacheX86_64;

use crate::bpf::counts::Drained;
use crate::bpf::events::{Event, Kind};
use crate::frame::Frame;
use crate::modules::Modules;
use crate::procs::unwind::unwind;
use crate::procs::{Processes, Unknown};
pub use crate::report::Counters;
use crate::seconds::Stamp;
use crate::window;

/// A distinct stack of one thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackKey {
    /// What it measures.
    pub event: window::Event,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// User frames, leaf first.
    pub user: Vec<Frame>,
    /// Kernel frames, leaf first.
    pub kernel: Vec<Frame>,
}

/// The names a thread had when last sampled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// The thread's.
    pub thread: String,
    /// Its process's.
    pub process: String,
    /// Whether it is a kernel thread.
    pub kernel_thread: bool,
}

/// [`Names`] borrowed from a record.
#[derive(Clone, Copy)]
struct NamesRef<'a> {
    thread: &'a str,
    process: &'a str,
    kernel_thread: bool,
}

fn names_of<'a>(thread: &'a str, process: &'a str, kernel_thread: bool) -> NamesRef<'a> {
    NamesRef {
        thread,
        process,
        kernel_thread,
    }
}

/// The window being collected.
#[derive(Default)]
pub struct Intake {
    /// Processes seen.
    pub processes: Processes,
    /// Files seen.
    pub modules: Modules,
    cache: CacheX86_64,
    stacks: HashMap<StackKey, u64>,
    /// The times of the stacks' ring buffer records (`crate::seconds`).
    times: HashMap<StackKey, Vec<Stamp>>,
    /// The time of the record being added.
    stamp: Option<i64>,
    names: HashMap<u32, Names>,
    /// This window's counters.
    pub counters: Counters,
}

/// Kernel frames: the first is where the CPU was, the others return addresses (minus one, to
/// land inside the call).
fn kernel_frames(addrs: &[u64]) -> Vec<Frame> {
    addrs
        .iter()
        .enumerate()
        .map(|(i, &a)| Frame::Kernel(if i == 0 { a } else { a.saturating_sub(1) }))
        .collect()
}

impl Intake {
    /// Nothing collected yet.
    pub fn new() -> Intake {
        Intake::default()
    }

    /// One ring buffer event.
    pub fn event(&mut self, e: &Event<'_>) {
        self.counters.events += 1;
        let event = match e.kind {
            Kind::OnCpu => window::Event::OnCpu,
            Kind::OffCpu => window::Event::OffCpu,
        };
        let user = self.user_stack(e);
        self.add(
            StackKey {
                event,
                pid: e.pid,
                tid: e.tid,
                user,
                kernel: kernel_frames(&e.kernel),
            },
            names_of(&e.thread, &e.process, e.kernel_thread),
            e.value,
        );
    }

    /// An event's user frames, leaf first: unwound from its stack copy, or its frame-pointer
    /// addresses, or only where it was. Memory samples (`crate::memory`) are unwound here too,
    /// exactly as on-CPU ones.
    pub fn user_stack(&mut self, e: &Event<'_>) -> Vec<Frame> {
        if e.regs.ip == 0 {
            Vec::new()
        } else if !e.stack.is_empty() {
            self.unwound(e)
        } else if !e.user.is_empty() {
            self.user_frames(e.pid, &e.user)
        } else {
            // Registers without a stack (it could not be read, or an off-CPU wait whose task
            // ran on before it was): where the thread was, and nothing of how it got there.
            self.counters.unwound += 1;
            self.counters.cut_short += 1;
            self.user_frames(e.pid, &[e.regs.ip])
        }
    }

    /// A count drained from the kernel's maps (fp mode): frame-pointer user addresses.
    pub fn counted(&mut self, d: &Drained) {
        let user = self.user_frames(d.pid, &d.user);
        let key = StackKey {
            event: window::Event::OnCpu,
            pid: d.pid,
            tid: d.tid,
            user,
            kernel: kernel_frames(&d.kernel),
        };
        // A count comes with the names of the thread's last on-CPU sample, which for a thread
        // that mostly sleeps may be older than its off-CPU records of this window: a thread
        // named just after it started (pthread_setname_np) kept its parent's name. The
        // records, read at each wait's end, know better.
        let now = names_of(&d.thread, &d.process, d.kernel_thread);
        if !self.names.contains_key(&key.tid) {
            self.set_names(key.tid, now);
        }
        *self.stacks.entry(key).or_default() += d.count;
    }

    /// One ring buffer record, as bytes.
    pub fn record(&mut self, data: &[u8]) {
        match crate::bpf::events::parse(data) {
            Ok(e) => {
                self.stamp = crate::bpf::events::time_ns(data).and_then(|t| i64::try_from(t).ok());
                self.event(&e);
                self.stamp = None;
            }
            Err(_) => self.counters.bad_records += 1,
        }
    }

    fn add(&mut self, key: StackKey, now: NamesRef<'_>, value: u64) {
        self.set_names(key.tid, now);
        if let Some(time) = self.stamp {
            let stamp = Stamp {
                time,
                tid: key.tid,
                value,
            };
            self.times.entry(key.clone()).or_default().push(stamp);
        }
        *self.stacks.entry(key).or_default() += value;
    }

    /// Thread `tid`'s names are `now`.
    fn set_names(&mut self, tid: u32, now: NamesRef<'_>) {
        let names = self.names.entry(tid).or_default();
        if names.thread != now.thread
            || names.process != now.process
            || names.kernel_thread != now.kernel_thread
        {
            *names = Names {
                thread: now.thread.to_owned(),
                process: now.process.to_owned(),
                kernel_thread: now.kernel_thread,
            };
        }
    }

    /// The window's record times per stack (monotonic ns), taken with [`Intake::take`].
    pub fn take_times(&mut self) -> HashMap<StackKey, Vec<Stamp>> {
        std::mem::take(&mut self.times)
    }

    /// DWARF mode: walk the stack copy with the process's unwinder.
    fn unwound(&mut self, e: &Event<'_>) -> Vec<Frame> {
        let pid = e.pid;
        let walk = match self.processes.covering(pid, e.regs.ip, &mut self.modules) {
            Ok(p) => unwind(&p.unwinder, &mut self.cache, e.regs, e.stack_start, e.stack),
            Err(why) => return self.unreadable(why, e.regs.ip),
        };
        self.counters.unwound += 1;
        self.counters.cut_short += u64::from(walk.cut_short);
        if walk.cut_short {
            tracing::trace!(pid, process = %e.process, frames = walk.addrs.len(), "stack cut short");
        }
        let (addrs, cut_short) = (walk.addrs, walk.cut_short);
        let mut frames: Vec<Frame> = addrs
            .into_iter()
            .map(|a| self.processes.frame(pid, a, &mut self.modules))
            .collect();
        // A walk that failed often read one return address from garbage (a frame-pointer guess
        // through code without unwind information) before it stopped: an address in no
        // mapping at the root of a cut stack is dropped, not shown as a frame.
        if cut_short {
            while frames.len() > 1 && matches!(frames.last(), Some(Frame::Unknown(_))) {
                frames.pop();
            }
        }
        frames
    }

    /// Frame-pointer addresses: the first where the thread was, the rest return addresses.
    fn user_frames(&mut self, pid: u32, addrs: &[u64]) -> Vec<Frame> {
        let Some(&first) = addrs.first() else {
            return Vec::new();
        };
        if let Err(why) = self.processes.get(pid, &mut self.modules) {
            return self.unreadable(why, first);
        }
        addrs
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let a = if i == 0 { a } else { a.saturating_sub(1) };
                self.processes.frame(pid, a, &mut self.modules)
            })
            .collect()
    }

    /// A process whose mappings cannot be read keeps only where it was.
    fn unreadable(&mut self, why: Unknown, ip: u64) -> Vec<Frame> {
        match why {
            Unknown::Exited => self.counters.exited += 1,
            Unknown::Denied => self.counters.denied += 1,
        }
        vec![Frame::Unknown(ip)]
    }

    /// The window's stacks, the threads' names and counters; the intake starts a new window
    /// (forgetting processes that had no samples in this one).
    pub fn take(&mut self) -> (HashMap<StackKey, u64>, HashMap<u32, Names>, Counters) {
        let stacks = std::mem::take(&mut self.stacks);
        let names = std::mem::take(&mut self.names);
        let counters = std::mem::take(&mut self.counters);
        self.processes.end_window();
        // framehop's cache is keyed by a 16-bit module generation that wraps after many
        // processes; a fresh cache each window keeps stale rules out.
        self.cache = CacheX86_64::new();
        (stacks, names, counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::events::Regs;

    fn kernel_sample(tid: u32, kernel_thread: bool) -> Event<'static> {
        Event {
            kind: Kind::OnCpu,
            pid: tid,
            tid,
            kernel_thread,
            value: 1,
            regs: Regs::default(),
            thread: "kworker/0:1".into(),
            process: "kworker/0:1".into(),
            kernel: vec![0xffff_ffff_8100_0010],
            user: Vec::new(),
            stack_start: 0,
            stack: &[],
        }
    }

    #[test]
    fn a_count_does_not_rename_a_thread_its_records_named() {
        let mut intake = Intake::new();
        let mut wait = kernel_sample(7, false);
        wait.kind = Kind::OffCpu;
        wait.thread = "sleeper".into();
        wait.process = "prog".into();
        intake.event(&wait);
        let count = |tid, thread: &str| Drained {
            pid: 7,
            tid,
            kernel_thread: false,
            thread: thread.into(),
            process: "prog".into(),
            kernel: vec![0xffff_ffff_8100_0010],
            user: Vec::new(),
            count: 3,
        };
        intake.counted(&count(7, "prog"));
        intake.counted(&count(8, "worker"));
        let (stacks, names, _) = intake.take();
        assert_eq!(names[&7].thread, "sleeper");
        assert_eq!(names[&8].thread, "worker");
        assert_eq!(stacks.values().sum::<u64>(), 7);
    }

    #[test]
    fn the_kernel_thread_bit_reaches_the_names() {
        let mut intake = Intake::new();
        intake.event(&kernel_sample(7, true));
        intake.event(&kernel_sample(8, false));
        let (stacks, names, counters) = intake.take();
        assert_eq!(counters.events, 2);
        assert_eq!(stacks.len(), 2);
        assert!(names[&7].kernel_thread && !names[&8].kernel_thread);
        assert!(stacks
            .keys()
            .all(|k| k.user.is_empty() && k.kernel.len() == 1));
    }
}
