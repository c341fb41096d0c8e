//! `perf script` text → stacks: the output of `perf record -g` (or `--call-graph dwarf`) as every
//! Linux user can print it. Each sample is a header line and its call chain, leaf first (each
//! frame line starts with a tab):
//!
//! ```text
//! python3 4242/4243 [001] 12345.678901:   10101010 cpu-clock:pppH:
//!         ffffffff8103c3f6 native_safe_halt+0x6 ([kernel.kallsyms])
//!             7f0e1c2b3a10 PyEval_EvalFrameDefault+0x123 (/usr/lib/libpython3.11.so.1.0)
//!             55d0e4a1b2c3 main+0x20 (/usr/bin/python3.11)
//! ```
//!
//! Frames are named by [`crate::wire::native`]: kernel frames `[k] fn`, shared-library frames
//! `[l] fn`, the program's own bare, `[unknown]` symbols as their file (`[/usr/lib/libc.so.6]`,
//! DeepFlow's form: perf prints run-time addresses, not file offsets). The thread (perf's
//! `comm`) becomes a `[t] name` frame; the process, the root or `app_service`, is named after
//! its main thread ([`tasks`]: from `-F +pid` samples or `--show-task-events` records). A
//! process whose main thread stays unnamed takes the name of its first sampled thread
//! ([`PerfScript::named_by_thread`]); without process ids at all, each thread name stands for
//! its process ([`PerfScript::without_pids`]).
//!
//! Values: with a clock event (`cpu-clock`, `task-clock`) and its period printed, each sample is
//! the CPU time it stands for, in microseconds (period ns ÷ 1000), as DeepFlow's agent stores
//! `on-cpu`; otherwise each sample counts 1 (`samples`). Only the first event's samples are read.

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::wire::native::{self, origin_of_file, Origin};

/// Why text is not `perf script` output.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PerfError {
    /// A line that should start a sample does not look like a header.
    #[error("line {0}: expected a sample header `comm pid/tid [cpu] time: [period] event:`")]
    Header(usize),
    /// A frame line before any header.
    #[error("line {0}: a stack frame before any sample header")]
    Orphan(usize),
    /// No samples at all.
    #[error("no samples: is this `perf script` output?")]
    Empty,
    /// Too many distinct names or frames for 32-bit indices.
    #[error("the capture is too large")]
    TooLarge,
}

/// One sample: names are indices into [`PerfScript::names`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerfSample {
    /// The process name.
    pub process: u32,
    /// The thread name (already a `[t] name` frame).
    pub thread: u32,
    /// Its frames are `frames[frame_start..frame_end]`, root first.
    pub frame_start: u32,
    /// See `frame_start`.
    pub frame_end: u32,
    /// Microseconds of CPU time (clock events) or 1.
    pub value: u64,
}

/// A parsed `perf script` capture.
#[derive(Clone, Debug, Default)]
pub struct PerfScript {
    /// The event its samples are of (`cpu-clock`, `cycles`, ...).
    pub event: String,
    /// Whether values are microseconds of CPU time (a clock event with its period), else counts.
    pub clock: bool,
    /// Every distinct name (processes, `[t]` threads, frames).
    pub names: Vec<String>,
    /// Frame names of every sample, flattened.
    pub frames: Vec<u32>,
    /// The samples.
    pub samples: Vec<PerfSample>,
    /// Processes named after one of their threads, as (pid, name): neither a sample of their
    /// main thread nor a task record named them.
    pub named_by_thread: Vec<(u64, String)>,
    /// Whether some samples had no process id (plain `perf script` prints only the thread's):
    /// their thread names stand for their processes.
    pub without_pids: bool,
}

/// Parses `perf script` output.
pub fn parse_perf_script(text: &str) -> Result<PerfScript, PerfError> {
    let mut p = Parser::default();
    for (i, line) in text.lines().enumerate() {
        p.line(i + 1, line)?;
    }
    p.finish()
}

/// Whether `text` looks like `perf script` output: its first line that is neither blank nor a
/// `#` comment is a sample header.
pub fn is_perf_script(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .is_some_and(|l| !l.starts_with(char::is_whitespace) && header(l).is_some())
}

/// A sample's header fields.
struct Header<'a> {
    comm: &'a str,
    pid: Option<u64>,
    tid: u64,
    period: Option<u64>,
    event: &'a str,
    /// A frame on the header line itself (`perf script` without call chains).
    inline_frame: Option<&'a str>,
}

/// The whitespace-separated tokens of `line` with their byte offsets.
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// Reads a header: `comm [pid/]tid [cpu] time: [period] event: [ip sym (dso)]`.
fn header(line: &str) -> Option<Header<'_>> {
    let tokens = tokens(line);
    // The time ends in ':' and is `secs.frac:`; the thread id is before it (or before `[cpu]`).
    let t = tokens.iter().position(|(_, t)| {
        t.strip_suffix(':')
            .is_some_and(|n| n.contains('.') && n.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    })?;
    let mut id_at = t.checked_sub(1)?;
    let cpu = tokens[id_at].1;
    if cpu.starts_with('[') && cpu.ends_with(']') {
        id_at = id_at.checked_sub(1)?;
    }
    if id_at == 0 {
        return None;
    }
    let (id_offset, ids) = tokens[id_at];
    let (pid, tid) = match ids.split_once('/') {
        Some((pid, tid)) => (Some(pid.parse().ok()?), tid.parse().ok()?),
        None => (None, ids.parse().ok()?),
    };
    let mut at = t + 1;
    let period = tokens.get(at)?.1.parse::<u64>().ok();
    if period.is_some() {
        at += 1;
    }
    let (event_offset, event_token) = *tokens.get(at)?;
    let event = event_token.split(':').next().filter(|e| !e.is_empty())?;
    let inline = line[event_offset + event_token.len()..].trim();
    Some(Header {
        comm: line[..id_offset].trim(),
        pid,
        tid,
        period,
        event,
        inline_frame: (!inline.is_empty()).then_some(inline),
    })
}

/// A frame line `addr sym+off (dso)` as its stored name.
fn frame(line: &str) -> String {
    let line = line.trim();
    let (addr, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let (sym, dso) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((sym, dso)) => (sym.trim(), dso),
        None if rest.starts_with('(') && rest.ends_with(')') => ("", &rest[1..rest.len() - 1]),
        None => (rest, ""),
    };
    let sym = strip_offset(sym);
    if sym.is_empty() || sym == "[unknown]" {
        if dso.is_empty() || dso == "[unknown]" {
            let address = u64::from_str_radix(addr, 16).unwrap_or(0);
            return native::unsymbolized_frame("", 0, address);
        }
        return format!("[{}]", native::clean(dso));
    }
    let origin = if dso.is_empty() {
        Origin::App
    } else {
        origin_of_file(dso)
    };
    native::function_frame(sym, origin)
}

/// `fn+0x1a` → `fn`.
fn strip_offset(sym: &str) -> &str {
    match sym.rsplit_once("+0x") {
        Some((name, off)) if !name.is_empty() && off.bytes().all(|b| b.is_ascii_hexdigit()) => name,
        _ => sym,
    }
}

/// Clock events, whose period is nanoseconds of CPU time.
fn is_clock(event: &str) -> bool {
    matches!(event, "cpu-clock" | "task-clock")
}

#[derive(Default)]
struct Parser {
    out: PerfScript,
    ids: FxHashMap<String, u32>,
    /// Per sample: pid (if printed), tid, comm; resolved to process names at the end.
    owners: Vec<(Option<u64>, u64, u32)>,
    /// Processes and their threads, from samples and task records.
    tasks: tasks::Tasks,
    /// Frames of the current sample, leaf first, and whether it is of the first event.
    current: Vec<u32>,
    in_sample: bool,
    keep: bool,
    periods: Vec<Option<u64>>,
}

impl Parser {
    fn intern(&mut self, name: &str) -> Result<u32, PerfError> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        let id = u32::try_from(self.out.names.len()).map_err(|_| PerfError::TooLarge)?;
        self.out.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        Ok(id)
    }

    fn line(&mut self, number: usize, line: &str) -> Result<(), PerfError> {
        if line.trim().is_empty() {
            return self.end_sample();
        }
        if line.starts_with('#') {
            return Ok(());
        }
        if line.starts_with(char::is_whitespace) {
            if !self.in_sample {
                return Err(PerfError::Orphan(number));
            }
            if self.keep {
                let id = self.intern(&frame(line))?;
                self.current.push(id);
            }
            return Ok(());
        }
        if line.contains("PERF_RECORD_") {
            self.tasks.record(line);
            return Ok(());
        }
        self.end_sample()?;
        let h = header(line).ok_or(PerfError::Header(number))?;
        self.start_sample(&h)
    }

    fn start_sample(&mut self, h: &Header<'_>) -> Result<(), PerfError> {
        if self.out.event.is_empty() {
            self.out.event = h.event.to_owned();
        }
        self.in_sample = true;
        self.keep = h.event == self.out.event;
        if !self.keep {
            return Ok(());
        }
        let comm = self.intern(&native::clean(h.comm))?;
        let thread = self.intern(&native::thread_frame(h.comm))?;
        if h.pid == Some(h.tid) {
            self.tasks.main_thread_seen(h.tid, &native::clean(h.comm));
        }
        self.owners.push((h.pid, h.tid, comm));
        self.periods.push(h.period);
        let start = u32::try_from(self.out.frames.len()).map_err(|_| PerfError::TooLarge)?;
        self.out.samples.push(PerfSample {
            process: comm,
            thread,
            frame_start: start,
            frame_end: start,
            value: 1,
        });
        if let Some(f) = h.inline_frame {
            let id = self.intern(&frame(f))?;
            self.current.push(id);
        }
        Ok(())
    }

    fn end_sample(&mut self) -> Result<(), PerfError> {
        if self.in_sample && self.keep {
            self.out.frames.extend(self.current.drain(..).rev());
            let end = u32::try_from(self.out.frames.len()).map_err(|_| PerfError::TooLarge)?;
            if let Some(s) = self.out.samples.last_mut() {
                s.frame_end = end;
            }
        }
        self.current.clear();
        self.in_sample = false;
        Ok(())
    }

    fn finish(mut self) -> Result<PerfScript, PerfError> {
        self.end_sample()?;
        if self.out.samples.is_empty() {
            return Err(PerfError::Empty);
        }
        self.out.clock = is_clock(&self.out.event) && self.periods.iter().all(Option::is_some);
        let processes = self.process_names()?;
        for ((sample, process), period) in self
            .out
            .samples
            .iter_mut()
            .zip(processes)
            .zip(&self.periods)
        {
            sample.process = process;
            if self.out.clock {
                sample.value = period.unwrap_or(0).div_ceil(1000).max(1);
            }
        }
        Ok(self.out)
    }

    /// Each sample's process name: its process's main thread's, else (noted in
    /// `named_by_thread`) the first thread of it sampled, else (no pid) its own thread's.
    fn process_names(&mut self) -> Result<Vec<u32>, PerfError> {
        let mut by_pid: FxHashMap<u64, u32> = FxHashMap::default();
        let mut names = Vec::with_capacity(self.owners.len());
        for &(pid, tid, comm) in &std::mem::take(&mut self.owners) {
            let Some(pid) = self.tasks.process_of(pid, tid) else {
                self.out.without_pids = true;
                names.push(comm);
                continue;
            };
            let name = match by_pid.get(&pid) {
                Some(&name) => name,
                None => {
                    let name = match self.tasks.name_of(pid).map(str::to_owned) {
                        Some(main) => self.intern(&native::clean(&main))?,
                        None => {
                            let thread = self.out.names[comm as usize].clone();
                            self.out.named_by_thread.push((pid, thread));
                            comm
                        }
                    };
                    by_pid.insert(pid, name);
                    name
                }
            };
            names.push(name);
        }
        Ok(names)
    }
}

mod script;
mod tasks;
#[cfg(test)]
mod tests;
