//! The files processes run code from ("modules"), each read once however many processes map it:
//! one entry per build id (or per device and inode when a file has none). Each module keeps a
//! descriptor of its file open and is symbolized through `/proc/self/fd/N`, so its frames still
//! get names after the process exited, after the file was deleted, and when it lives in another
//! container's filesystem.

pub mod elf;
pub mod vdso;

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::rc::Rc;

use crate::frame::ModuleId;
use crate::maps::MapLine;
use elf::Elf;

/// Most modules kept (each holds a descriptor); past it frames are named by path only.
pub const MAX_MODULES: usize = 8192;
/// Most cached symbol lookups per module before its cache starts over.
const MAX_CACHED_SYMBOLS: usize = 1 << 16;

/// One file.
pub struct Module {
    /// The path as the process that first mapped it saw it (what `[<path>]` frames show).
    pub path: String,
    /// Where to open it again: `/proc/self/fd/N` of the descriptor held here.
    pub open_path: Option<PathBuf>,
    /// The file was deleted after it was mapped.
    pub deleted: bool,
    /// Its ELF contents; `None` when it could not be read.
    pub elf: Option<Elf>,
    /// Names by file offset (`None`: the file has no symbol there).
    symbols: HashMap<u64, Option<Rc<str>>>,
    _file: Option<File>,
}

impl Module {
    /// The cached name at `offset`: `None` when not looked up yet.
    pub fn symbol(&self, offset: u64) -> Option<&Option<Rc<str>>> {
        self.symbols.get(&offset)
    }

    /// Remember the name at `offset`.
    pub fn remember(&mut self, offset: u64, name: Option<Rc<str>>) {
        if self.symbols.len() >= MAX_CACHED_SYMBOLS {
            self.symbols.clear();
        }
        self.symbols.insert(offset, name);
    }
}

/// Why a module could not be read, for the window's report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unreadable {
    /// Paths that could not be opened or parsed, with the reason (first few).
    pub files: Vec<(String, String)>,
    /// Deleted files whose mapped copy was used.
    pub deleted: Vec<String>,
}

/// Every module seen.
#[derive(Default)]
pub struct Modules {
    list: Vec<Module>,
    by_file: HashMap<((u32, u32), u64), ModuleId>,
    by_build_id: HashMap<Vec<u8>, ModuleId>,
    vdso: Option<Option<ModuleId>>,
    /// Problems since the last [`Modules::take_problems`].
    problems: Unreadable,
}

impl Modules {
    /// No modules yet.
    pub fn new() -> Modules {
        Modules::default()
    }

    /// The module `id`.
    pub fn get(&self, id: ModuleId) -> Option<&Module> {
        self.list.get(id as usize)
    }

    /// The module `id`, to cache names in.
    pub fn get_mut(&mut self, id: ModuleId) -> Option<&mut Module> {
        self.list.get_mut(id as usize)
    }

    /// Every module id.
    pub fn ids(&self) -> impl Iterator<Item = ModuleId> {
        0..self.list.len() as ModuleId
    }

    /// The module of a file mapping of process `pid`, read on first sight.
    pub fn file(
        &mut self,
        pid: u32,
        line: &MapLine,
        path: &str,
        deleted: bool,
    ) -> Option<ModuleId> {
        let key = (line.dev, line.inode);
        if let Some(&id) = self.by_file.get(&key) {
            return Some(id);
        }
        if self.list.len() >= MAX_MODULES {
            return None;
        }
        let module = match open(pid, line, path, deleted) {
            Ok(file) => self.read(file, path, deleted),
            Err(e) => unreadable(path, deleted, e.to_string()),
        };
        if module.elf.is_none() && self.problems.files.len() < 8 {
            self.problems
                .files
                .push((path.to_owned(), "cannot be read".to_owned()));
        }
        // A memfd is always "deleted": it never had a name to lose.
        if deleted && !path.starts_with("/memfd:") && self.problems.deleted.len() < 8 {
            self.problems.deleted.push(path.to_owned());
        }
        let build_id = module.elf.as_ref().and_then(|e| e.build_id.clone());
        if let Some(&id) = build_id.as_ref().and_then(|b| self.by_build_id.get(b)) {
            self.by_file.insert(key, id);
            return Some(id);
        }
        let id = self.list.len() as ModuleId;
        self.list.push(module);
        self.by_file.insert(key, id);
        if let Some(b) = build_id {
            self.by_build_id.insert(b, id);
        }
        Some(id)
    }

    fn read(&mut self, file: File, path: &str, deleted: bool) -> Module {
        match Elf::read(&file) {
            Ok(elf) => Module {
                path: path.to_owned(),
                open_path: Some(PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))),
                deleted,
                elf: Some(elf),
                symbols: HashMap::new(),
                _file: Some(file),
            },
            Err(e) => unreadable(path, deleted, e),
        }
    }

    /// The vDSO's module (the same image in every process of this kernel), written out once.
    pub fn vdso(&mut self) -> Option<ModuleId> {
        if let Some(known) = self.vdso {
            return known;
        }
        let id = match vdso::extract() {
            Ok(file) => {
                let id = self.list.len() as ModuleId;
                let module = self.read(file, "[vdso]", false);
                self.list.push(module);
                Some(id)
            }
            Err(e) => {
                tracing::warn!("the vDSO cannot be read ({e}); its frames end stacks early");
                None
            }
        };
        self.vdso = Some(id);
        id
    }

    /// The problems met since the last call.
    pub fn take_problems(&mut self) -> Unreadable {
        std::mem::take(&mut self.problems)
    }
}

fn unreadable(path: &str, deleted: bool, reason: String) -> Module {
    tracing::debug!(path, reason, "module not readable");
    Module {
        path: path.to_owned(),
        open_path: None,
        deleted,
        elf: None,
        symbols: HashMap::new(),
        _file: None,
    }
}

/// Open the file a mapping holds: through the process's own view of the filesystem (its
/// container's root), or, deleted, through the mapping itself.
fn open(pid: u32, line: &MapLine, path: &str, deleted: bool) -> std::io::Result<File> {
    let mapped = || {
        File::open(format!(
            "/proc/{pid}/map_files/{:x}-{:x}",
            line.start, line.end
        ))
    };
    if deleted {
        return mapped();
    }
    let file = File::open(format!("/proc/{pid}/root{path}")).or_else(|_| File::open(path))?;
    // A different file at the same path (replaced since it was mapped): use the mapped one.
    if file.metadata().map(|m| m.ino()).ok() != Some(line.inode) {
        return mapped();
    }
    Ok(file)
}
