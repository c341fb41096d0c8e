//! The files processes run code from ("modules"), each read once however many processes map it:
//! one entry per build id (or per device and inode when a file has none). A module's file is
//! opened inside the mapping process's root ([`crate::files`]), its unwind sections copied into
//! memory, and, the first time one of its frames is named, its symbol tables copied into a sealed
//! memfd that blazesym reads (`/proc/self/fd/N`), so frames still get names after the process
//! exited or the file was deleted or truncated. The copy holds the file's DWARF too when it has
//! line tables, or, when it has none, that of its separate debug file ([`debug`]). Modules no
//! live process maps are evicted ([`cache`]), so the table does not fill for good.

pub mod cache;
pub mod debug;
pub mod elf;
pub mod vdso;

use std::collections::HashMap;
use std::fs::File;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::files::{memfd, open_regular, Links, OpenError, Root};
use crate::frame::Symbolized;
use crate::maps::MapLine;
pub use cache::Modules;
use elf::Elf;

/// Largest file opened as a module: a bigger one is no binary (only its headers and unwind
/// sections are read anyway, so this only bounds what a header may claim).
pub const MAX_ELF_BYTES: u64 = 4 << 30;
/// Most cached symbol lookups per module before its cache starts over.
const MAX_CACHED_SYMBOLS: usize = 1 << 16;

/// One file.
pub struct Module {
    /// The path as the process that first mapped it saw it (what `[<path>]` frames show).
    pub path: String,
    /// The file was deleted after it was mapped.
    pub deleted: bool,
    /// Its ELF contents; `None` when it could not be read.
    pub elf: Option<Elf>,
    /// Names and lines by file offset (`None`: the file has no symbol there).
    symbols: HashMap<u64, Option<Rc<Symbolized>>>,
    /// The file, until its symbol tables are copied.
    file: Option<File>,
    /// Its separate debug file, until copied (only when the file has no DWARF of its own).
    separate: Option<debug::Separate>,
    /// The sealed copy of its symbol tables (`None` until first needed; `Err` if it failed).
    copy: Option<Result<Copy, ()>>,
    /// Its copy was made without the DWARF it has, for want of the window's budget: `file`
    /// (and `separate`) are kept to copy it with its DWARF in a later window.
    deferred: bool,
    /// The last window it was mapped in or named in.
    last_used: u64,
}

impl Module {
    /// The cached names and lines at `offset`: `None` when not looked up yet.
    pub fn symbol(&self, offset: u64) -> Option<&Option<Rc<Symbolized>>> {
        self.symbols.get(&offset)
    }

    /// Remember what is at `offset`.
    pub fn remember(&mut self, offset: u64, name: Option<Rc<Symbolized>>) {
        if self.symbols.len() >= MAX_CACHED_SYMBOLS {
            self.symbols.clear();
        }
        self.symbols.insert(offset, name);
    }

    /// Where blazesym reads its symbols: the sealed copy, made now if not yet, with DWARF
    /// when `dwarf` allows (returns the bytes it holds, for the memory bound, when it was just
    /// made, and of those the DWARF's).
    fn symbol_source(&mut self, dwarf: bool) -> (Option<SymbolSource>, u64, u64) {
        let (mut added, mut dwarf_bytes) = (0, 0);
        if self.copy.is_none() {
            let made = self.copy_symbols(dwarf);
            added = made.as_ref().map_or(0, |c| c.bytes);
            dwarf_bytes = made.as_ref().map_or(0, |c| c.dwarf_bytes);
            self.copy = Some(made);
            self.keep_file_if_deferred(dwarf);
        }
        let source = match &self.copy {
            Some(Ok(c)) => Some(SymbolSource {
                path: fd_path(&c.file),
                dwarf: c.dwarf,
                separate: c.separate,
            }),
            _ => None,
        };
        (source, added, dwarf_bytes)
    }

    /// After a copy: the originals' descriptors go (the copy is all naming needs), unless the
    /// copy lacks DWARF the file has only because `dwarf` was not allowed this window.
    fn keep_file_if_deferred(&mut self, dwarf: bool) {
        let has_dwarf =
            self.separate.is_some() || self.elf.as_ref().is_some_and(|e| e.dwarf.is_some());
        let copied = matches!(&self.copy, Some(Ok(_)));
        self.deferred = !dwarf && has_dwarf && copied && self.file.is_some();
        if !self.deferred {
            self.file = None;
            self.separate = None;
        }
    }

    /// Whether its copy lacks the DWARF it has (see [`Module::upgrade`]).
    pub fn deferred(&self) -> bool {
        self.deferred
    }

    /// A deferred module's copy made again, with its DWARF; the names cached from the old copy
    /// are forgotten (they lack lines and inlined functions). Returns the bytes the new copy
    /// holds more than the old, and its DWARF's; `None` if it could not be made (the old copy
    /// stays, and the file goes: it is not tried again).
    fn upgrade(&mut self) -> Option<(i64, u64)> {
        if !self.deferred {
            return None;
        }
        let made = self.copy_symbols(true);
        self.keep_file_if_deferred(true);
        let made = made.ok()?;
        let old = match &self.copy {
            Some(Ok(c)) => c.bytes,
            _ => 0,
        };
        let grown = made.bytes as i64 - old as i64;
        let dwarf_bytes = made.dwarf_bytes;
        self.copy = Some(Ok(made));
        self.symbols.clear();
        Some((grown, dwarf_bytes))
    }

    /// The symbol copy's path, if it was made (without making it).
    pub fn symbol_copy_path(&self) -> Option<PathBuf> {
        match &self.copy {
            Some(Ok(c)) => Some(fd_path(&c.file)),
            _ => None,
        }
    }

    /// Copy the symbol tables with the DWARF (if `dwarf`): the file's own, else its separate
    /// debug file's (its symbols too: a stripped file's are only the dynamic ones), else tables
    /// alone.
    fn copy_symbols(&mut self, dwarf: bool) -> Result<Copy, ()> {
        let (Some(file), Some(elf)) = (&self.file, &self.elf) else {
            return Err(());
        };
        if !dwarf {
            // Tables alone (the separate debug file is kept for a later copy with it).
        } else if let Some(d) = &elf.dwarf {
            let ranges: Vec<_> = elf.symbol_ranges.iter().chain(&d.ranges).cloned().collect();
            if let Ok(c) = sealed_copy(file, elf.file_len, &ranges, &d.hidden_names) {
                return Ok(c.with(d.bytes(), false));
            }
        } else if let Some(s) = self.separate.take() {
            let ranges: Vec<_> = s.symbols.iter().chain(&s.dwarf.ranges).cloned().collect();
            match sealed_copy(&s.file, s.len, &ranges, &s.dwarf.hidden_names) {
                Ok(c) => return Ok(c.with(s.dwarf.bytes(), true)),
                Err(e) => tracing::debug!(path = self.path, "debug file not copied: {e}"),
            }
        }
        sealed_copy(file, elf.file_len, &elf.symbol_ranges, &[])
            .map(|c| c.with(0, false))
            .map_err(|e| tracing::debug!(path = self.path, "symbol tables not copied: {e}"))
    }

    /// Bytes held in memory: unwind sections and the symbol copy.
    fn bytes(&self) -> u64 {
        let unwind = self.elf.as_ref().map_or(0, Elf::unwind_bytes);
        let symbols = match &self.copy {
            Some(Ok(c)) => c.bytes,
            _ => 0,
        };
        unwind + symbols
    }
}

/// A module's sealed copy of what naming reads.
struct Copy {
    file: File,
    bytes: u64,
    /// It holds DWARF (lines, inlined functions).
    dwarf: bool,
    /// Bytes of DWARF it holds.
    dwarf_bytes: u64,
    /// It is of the separate debug file: looked up by linked address, not file offset.
    separate: bool,
}

impl Copy {
    fn with(self, dwarf_bytes: u64, separate: bool) -> Copy {
        Copy {
            dwarf: dwarf_bytes > 0,
            dwarf_bytes,
            separate,
            ..self
        }
    }
}

/// What blazesym reads a module's names from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolSource {
    /// The sealed copy (`/proc/self/fd/N`).
    pub path: PathBuf,
    /// It holds DWARF: ask for lines and inlined functions.
    pub dwarf: bool,
    /// It is a separate debug file: look up linked addresses ([`Elf::virt_of`]).
    pub separate: bool,
}

fn fd_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// A sealed copy of `ranges` of `from` (`len` bytes long), with the four bytes at each of
/// `zeroed` cleared (the hidden debug links' names).
fn sealed_copy(
    from: &File,
    len: u64,
    ranges: &[Range<u64>],
    zeroed: &[u64],
) -> std::io::Result<Copy> {
    let bytes = ranges.iter().map(|r| r.end - r.start).sum();
    let file = memfd::sealed("embers-symbols", len, |to| {
        for r in ranges {
            memfd::copy_range(from, to, r.start, r.end - r.start)?;
        }
        zeroed
            .iter()
            .try_for_each(|&at| to.write_all_at(&[0; 4], at))
    })?;
    Ok(Copy {
        file,
        bytes,
        dwarf: false,
        dwarf_bytes: 0,
        separate: false,
    })
}

/// Why a module could not be read, for the window's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unreadable {
    /// Paths that could not be opened or parsed, with the reason (first few).
    pub files: Vec<(String, String)>,
    /// Deleted files whose mapped copy was used.
    pub deleted: Vec<String>,
}

/// Read a module from `file` (already opened and checked).
fn read(file: File, path: &str, deleted: bool, window: u64) -> Result<Module, String> {
    let elf = Elf::read(&file).map_err(|e| e.to_string())?;
    Ok(Module {
        path: path.to_owned(),
        deleted,
        elf: Some(elf),
        symbols: HashMap::new(),
        file: Some(file),
        separate: None,
        copy: None,
        deferred: false,
        last_used: window,
    })
}

fn unreadable(path: &str, deleted: bool, reason: &str, window: u64) -> Module {
    tracing::debug!(path, reason, "module not readable");
    Module {
        path: path.to_owned(),
        deleted,
        elf: None,
        symbols: HashMap::new(),
        file: None,
        separate: None,
        copy: Some(Err(())),
        deferred: false,
        last_used: window,
    }
}

/// Open the file a mapping holds: by its path inside the process's own root (its container's
/// filesystem, symlinks resolved there), or, deleted, replaced since, or unreachable by path,
/// through the mapping itself (`/proc/<pid>/map_files`).
fn open(pid: u32, line: &MapLine, path: &str, deleted: bool) -> Result<File, OpenError> {
    let mapped = || {
        let link = format!("/proc/{pid}/map_files/{:x}-{:x}", line.start, line.end);
        open_regular(Path::new(&link), MAX_ELF_BYTES).map(|(file, _)| file)
    };
    if deleted {
        return mapped();
    }
    let by_path = Root::of_process(pid)
        .map_err(OpenError::from)
        .and_then(|root| root.open(Path::new(path), Links::InRoot, MAX_ELF_BYTES));
    match by_path {
        // The same file the process mapped, not one put at its path since.
        Ok((file, meta)) if meta.ino() == line.inode => Ok(file),
        _ => mapped(),
    }
}
