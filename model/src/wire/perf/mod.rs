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
//! `perf script -F +srcline` prints each frame's `file:line` under it: kept per frame
//! ([`PerfScript::lines_of`]); frames it could not name (`??:0`, the kernel's) have none. Each
//! sample keeps its time on perf's clock and its thread ([`PerfSample::time_ns`]).
//!
//! Values: with a clock event (`cpu-clock`, `task-clock`) and its period printed, each sample is
//! the CPU time it stands for, in microseconds (period ns ÷ 1000), as DeepFlow's agent stores
//! `on-cpu`; otherwise each sample counts 1 (`samples`). Only the first event's samples are read.

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::contract::detail::SourceLine;
use crate::wire::native::{self, origin_of_file, Origin};
use header::{header, srcline, Header};

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
    /// When it was taken, in nanoseconds on perf's clock ([`PerfScript::realtime`]).
    pub time_ns: u64,
    /// The thread it was taken on.
    pub tid: u64,
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
    /// Per entry of `frames`, its source line (`perf script -F +srcline`): 0 for none, `k` for
    /// `sources[k - 1]`.
    pub frame_lines: Vec<u32>,
    /// The distinct source lines `frame_lines` index.
    pub sources: Vec<SourceLine>,
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
    /// Frames of the current sample, leaf first, each with its line (as in `frame_lines`),
    /// and whether it is of the first event.
    current: Vec<(u32, u32)>,
    /// The index in `sources` (plus 1) of each source line seen.
    source_ids: FxHashMap<(String, u32), u32>,
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
            if !self.keep {
                return Ok(());
            }
            if let Some(known) = srcline(line).filter(|_| !self.current.is_empty()) {
                return self.source_line(known);
            }
            let id = self.intern(&frame(line))?;
            self.current.push((id, 0));
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
            time_ns: h.time_ns,
            tid: h.tid,
        });
        if let Some(f) = h.inline_frame {
            let id = self.intern(&frame(f))?;
            self.current.push((id, 0));
        }
        Ok(())
    }

    /// The `srcline` under the current sample's last frame (perf prints one per frame).
    fn source_line(&mut self, known: Option<(&str, u32)>) -> Result<(), PerfError> {
        let Some((file, line)) = known else {
            return Ok(());
        };
        let file = native::clean(file);
        let id = match self.source_ids.get(&(file.to_string(), line)) {
            Some(&id) => id,
            None => {
                self.out.sources.push(SourceLine {
                    file: file.to_string(),
                    line,
                });
                let id = u32::try_from(self.out.sources.len()).map_err(|_| PerfError::TooLarge)?;
                self.source_ids.insert((file.into_owned(), line), id);
                id
            }
        };
        if let Some(last) = self.current.last_mut() {
            last.1 = id;
        }
        Ok(())
    }

    fn end_sample(&mut self) -> Result<(), PerfError> {
        if self.in_sample && self.keep {
            for (id, line) in self.current.drain(..).rev() {
                self.out.frames.push(id);
                self.out.frame_lines.push(line);
            }
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

mod header;
mod script;
mod tasks;
#[cfg(test)]
mod tests;
