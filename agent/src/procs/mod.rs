//! What the collector knows of each process: its executable mappings (read from
//! `/proc/<pid>/maps` the first time one of its samples arrives, again when an address falls
//! outside them — a library loaded since, new JIT code, an exec — at most every
//! [`REFRESH_EVERY`]) as regions pointing at modules, and a framehop unwinder holding those
//! modules. A process that exited stays known until a window passes without its
//! samples, so its last samples still unwind and get names.

pub mod unwind;

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use framehop::x86_64::UnwinderX86_64;
use framehop::Unwinder;

use crate::frame::{Frame, ModuleId};
use crate::maps::{parse_executable, MapLine, Mapped};
use crate::modules::elf::Bytes;
use crate::modules::Modules;

/// Shortest time between two reads of one process's mappings.
pub const REFRESH_EVERY: Duration = Duration::from_millis(200);

/// What an executable mapping holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holds {
    /// A file (or the vDSO), mapped from `offset`.
    Module {
        id: ModuleId,
        exe: bool,
        offset: u64,
    },
    /// Anonymous memory: JIT code.
    Jit,
    /// A file that could not be read.
    Unreadable,
}

#[derive(Clone, Copy, Debug)]
struct Region {
    start: u64,
    end: u64,
    holds: Holds,
}

/// One process.
pub struct Process {
    regions: Vec<Region>,
    /// Its modules, for unwinding.
    pub unwinder: UnwinderX86_64<Bytes>,
    read_at: Instant,
    seen_in: u64,
}

/// Why a process's mappings could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// It exited before they were read.
    Exited,
    /// No permission (another user's process without CAP_SYS_PTRACE, or a protected one).
    Denied,
}

/// Every process with samples in the last windows.
#[derive(Default)]
pub struct Processes {
    table: HashMap<u32, Process>,
    window: u64,
}

impl Processes {
    /// None known yet.
    pub fn new() -> Processes {
        Processes::default()
    }

    /// Process `pid`, read now if not known.
    pub fn get(&mut self, pid: u32, modules: &mut Modules) -> Result<&Process, Unknown> {
        let window = self.window;
        let p = match self.table.entry(pid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(load(pid, modules, window)?),
        };
        p.seen_in = window;
        Ok(p)
    }

    /// Process `pid`, its mappings read again first if `ip` lies outside them (a library loaded
    /// since, an exec) and they were not read in the last [`REFRESH_EVERY`]: so the unwinder
    /// knows the module the sample is in.
    pub fn covering(
        &mut self,
        pid: u32,
        ip: u64,
        modules: &mut Modules,
    ) -> Result<&Process, Unknown> {
        let stale = self.get(pid, modules)?.frame(pid, ip).is_none()
            && self
                .table
                .get(&pid)
                .is_some_and(|p| p.read_at.elapsed() >= REFRESH_EVERY);
        if stale {
            if let Ok(fresh) = load(pid, modules, self.window) {
                self.table.insert(pid, fresh);
            }
        }
        self.get(pid, modules)
    }

    /// Where `addr` of process `pid` is (`addr` already the address to look up: a return
    /// address minus one). An address outside every known region reads the process's mappings
    /// again, at most every [`REFRESH_EVERY`]; until then it is taken for code generated since
    /// (JIT code, which a perf map may name).
    pub fn frame(&mut self, pid: u32, addr: u64, modules: &mut Modules) -> Frame {
        let window = self.window;
        let Some(p) = self.table.get(&pid) else {
            return Frame::Unknown(addr);
        };
        if let Some(frame) = p.frame(pid, addr) {
            return frame;
        }
        if p.read_at.elapsed() < REFRESH_EVERY {
            return Frame::Jit { pid, addr };
        }
        match load(pid, modules, window) {
            Ok(fresh) => {
                let frame = fresh.frame(pid, addr).unwrap_or(Frame::Unknown(addr));
                self.table.insert(pid, fresh);
                frame
            }
            Err(_) => {
                if let Some(p) = self.table.get_mut(&pid) {
                    p.read_at = Instant::now();
                }
                Frame::Unknown(addr)
            }
        }
    }

    /// End a window: forget processes without samples in it (most have exited; a live one is
    /// read again when it next shows up). Returns how many were forgotten.
    pub fn end_window(&mut self) -> usize {
        let before = self.table.len();
        let window = self.window;
        self.table.retain(|_, p| p.seen_in == window);
        self.window += 1;
        before - self.table.len()
    }

    /// The modules the known processes map (not to be evicted).
    pub fn module_ids(&self) -> std::collections::HashSet<ModuleId> {
        self.table
            .values()
            .flat_map(|p| &p.regions)
            .filter_map(|r| match r.holds {
                Holds::Module { id, .. } => Some(id),
                _ => None,
            })
            .collect()
    }

    /// Processes known.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether none is known.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

impl Process {
    fn frame(&self, pid: u32, addr: u64) -> Option<Frame> {
        let i = self.regions.partition_point(|r| r.start <= addr);
        let r = self.regions[..i].last().filter(|r| addr < r.end)?;
        Some(match r.holds {
            Holds::Module { id, exe, offset } => Frame::File {
                module: id,
                offset: addr - r.start + offset,
                exe,
            },
            Holds::Jit => Frame::Jit { pid, addr },
            Holds::Unreadable => Frame::Unknown(addr),
        })
    }
}

fn load(pid: u32, modules: &mut Modules, window: u64) -> Result<Process, Unknown> {
    let text =
        std::fs::read_to_string(format!("/proc/{pid}/maps")).map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => Unknown::Denied,
            _ => Unknown::Exited,
        })?;
    let exe = std::fs::metadata(format!("/proc/{pid}/exe"))
        .map(|m| m.ino())
        .ok();
    let mut unwinder = UnwinderX86_64::new();
    let mut regions = Vec::new();
    for line in parse_executable(&text) {
        let holds = match &line.what {
            Mapped::File { path, deleted } => match modules.file(pid, &line, path, *deleted) {
                Some(id) => {
                    module_region(&mut unwinder, modules, id, &line, exe == Some(line.inode))
                }
                None => Holds::Unreadable,
            },
            Mapped::Vdso => match modules.vdso() {
                Some(id) => {
                    let at_zero = MapLine {
                        offset: 0,
                        ..line.clone()
                    };
                    module_region(&mut unwinder, modules, id, &at_zero, false)
                }
                None => Holds::Unreadable,
            },
            Mapped::Anon => Holds::Jit,
        };
        regions.push(Region {
            start: line.start,
            end: line.end,
            holds,
        });
    }
    Ok(Process {
        regions,
        unwinder,
        read_at: Instant::now(),
        seen_in: window,
    })
}

/// A module's region, and its unwind information added to the process's unwinder.
fn module_region(
    unwinder: &mut UnwinderX86_64<Bytes>,
    modules: &Modules,
    id: ModuleId,
    line: &MapLine,
    exe: bool,
) -> Holds {
    let Some(module) = modules.get(id) else {
        return Holds::Unreadable;
    };
    let Some(elf) = module.elf.as_ref() else {
        return Holds::Unreadable;
    };
    if elf.has_unwind_info() {
        unwinder.add_module(framehop::Module::new(
            module.path.clone(),
            line.start..line.end,
            elf.bias(line.start, line.offset),
            elf.section_info(),
        ));
    }
    Holds::Module {
        id,
        exe,
        offset: line.offset,
    }
}
