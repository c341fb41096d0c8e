//! The module table: modules by id (a slot, reused after eviction), found again by device and
//! inode or by build id. It is bounded by count ([`MAX_MODULES`]) and by the memory its modules
//! hold ([`MAX_MODULE_BYTES`]); at each window's end the modules no known process maps and no
//! frame used for [`IDLE_WINDOWS`] windows are evicted, and the least recently used of the rest
//! too while the table is over three quarters of either bound.

use std::collections::{HashMap, HashSet};

use super::{debug, open, read, unreadable, vdso, Module, SymbolSource, Unreadable};
use crate::files::Root;
use crate::frame::ModuleId;
use crate::maps::MapLine;

/// Most modules held at once (each holds up to two descriptors: its file until named, then the
/// symbol copy). A busy host maps a few hundred distinct files; past this a new file's frames
/// are named by path until an eviction makes room.
pub const MAX_MODULES: usize = 4096;
/// Most bytes held by modules (unwind sections and symbol copies: private memory, where mapped
/// files were shared page cache). The biggest binaries met hold tens of MiB each
/// (librustc_driver: 7 MiB of unwind sections, 25 MiB of symbols); a host busy building Rust,
/// with a new binary every few seconds, held ~260 MiB of them when idle ones stayed 5 minutes.
pub const MAX_MODULE_BYTES: u64 = 256 << 20;
/// Windows a module no known process maps is kept unused (a minute at the default 10 s): long
/// enough for a program run again soon, short enough that a host starting new binaries all the
/// time (builds, tests) does not keep each one's sections.
pub const IDLE_WINDOWS: u64 = 6;
/// Most bytes of DWARF copied (and so parsed by blazesym) per window: a host starting many
/// binaries built with debug information must not stall a window's naming for long. Modules
/// met past it are named without lines in that window, and get their DWARF in a later one
/// ([`Modules::upgrade`]): which frames have lines and inlined functions must not depend on
/// the order modules were met in.
pub const MAX_DWARF_PER_WINDOW: u64 = 32 << 20;

/// The DWARF budget of a window ([`MAX_DWARF_PER_WINDOW`] unless a test sets another).
#[derive(Clone, Copy, Debug)]
struct DwarfBudget(u64);

impl Default for DwarfBudget {
    fn default() -> Self {
        DwarfBudget(MAX_DWARF_PER_WINDOW)
    }
}

/// Every module held.
#[derive(Default)]
pub struct Modules {
    slots: Vec<Option<Module>>,
    free: Vec<ModuleId>,
    by_file: HashMap<((u32, u32), u64), ModuleId>,
    by_build_id: HashMap<Vec<u8>, ModuleId>,
    vdso: Option<Option<ModuleId>>,
    live: usize,
    bytes: u64,
    window: u64,
    /// DWARF bytes copied this window.
    dwarf_copied: u64,
    dwarf_budget: DwarfBudget,
    /// Problems since the last [`Modules::take_problems`].
    problems: Unreadable,
}

impl Modules {
    /// No modules yet.
    pub fn new() -> Modules {
        Modules::default()
    }

    /// No modules yet, copying at most `bytes` of DWARF a window (tests; see
    /// [`MAX_DWARF_PER_WINDOW`]).
    pub fn with_dwarf_budget(bytes: u64) -> Modules {
        Modules {
            dwarf_budget: DwarfBudget(bytes),
            ..Modules::default()
        }
    }

    /// The module `id`.
    pub fn get(&self, id: ModuleId) -> Option<&Module> {
        self.slots.get(id as usize)?.as_ref()
    }

    /// The module `id`, to cache names in.
    pub fn get_mut(&mut self, id: ModuleId) -> Option<&mut Module> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    /// Modules held.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Bytes held by modules.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Where blazesym reads module `id`'s symbols (its sealed copy, made on first call).
    pub fn symbol_source(&mut self, id: ModuleId) -> Option<SymbolSource> {
        let window = self.window;
        let room = self.bytes < MAX_MODULE_BYTES;
        let module = self.slots.get_mut(id as usize)?.as_mut()?;
        module.last_used = window;
        if !room && module.copy.is_none() {
            return None;
        }
        let dwarf = self.dwarf_copied < self.dwarf_budget.0;
        let (source, added, dwarf_bytes) = module.symbol_source(dwarf);
        self.bytes += added;
        self.dwarf_copied += dwarf_bytes;
        source
    }

    /// Whether module `id`'s copy lacks its DWARF and this window has the budget (and the
    /// table the room) to copy it now with [`Modules::upgrade`].
    pub fn may_upgrade(&self, id: ModuleId) -> bool {
        self.dwarf_copied < self.dwarf_budget.0
            && self.bytes < MAX_MODULE_BYTES
            && self.get(id).is_some_and(Module::deferred)
    }

    /// Copy module `id` again with its DWARF (its names cached so far are forgotten). The old
    /// copy's descriptor closes: blazesym must have forgotten its path first. Whether it was.
    pub fn upgrade(&mut self, id: ModuleId) -> bool {
        if !self.may_upgrade(id) {
            return false;
        }
        let window = self.window;
        let Some(module) = self.get_mut(id) else {
            return false;
        };
        module.last_used = window;
        let Some((grown, dwarf_bytes)) = module.upgrade() else {
            return false;
        };
        self.bytes = self.bytes.saturating_add_signed(grown);
        self.dwarf_copied += dwarf_bytes;
        true
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
            self.touch(id);
            return Some(id);
        }
        if self.live >= MAX_MODULES || self.bytes >= MAX_MODULE_BYTES {
            return None;
        }
        let window = self.window;
        let module = match open(pid, line, path, deleted) {
            Ok(file) => read(file, path, deleted, window),
            Err(e) => Err(e.to_string()),
        };
        let module = module.map(|m| with_separate_debug(m, pid));
        let module = module.unwrap_or_else(|why| {
            if self.problems.files.len() < 8 {
                self.problems.files.push((path.to_owned(), why.clone()));
            }
            unreadable(path, deleted, &why, window)
        });
        // A memfd is always "deleted": it never had a name to lose.
        if deleted && !path.starts_with("/memfd:") && self.problems.deleted.len() < 8 {
            self.problems.deleted.push(path.to_owned());
        }
        let build_id = module.elf.as_ref().and_then(|e| e.build_id.clone());
        if let Some(&id) = build_id.as_ref().and_then(|b| self.by_build_id.get(b)) {
            self.by_file.insert(key, id);
            self.touch(id);
            return Some(id);
        }
        let id = self.insert(module);
        self.by_file.insert(key, id);
        if let Some(b) = build_id {
            self.by_build_id.insert(b, id);
        }
        Some(id)
    }

    fn touch(&mut self, id: ModuleId) {
        let window = self.window;
        if let Some(m) = self.get_mut(id) {
            m.last_used = window;
        }
    }

    fn insert(&mut self, module: Module) -> ModuleId {
        self.live += 1;
        self.bytes += module.bytes();
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(module);
                id
            }
            None => {
                self.slots.push(Some(module));
                (self.slots.len() - 1) as ModuleId
            }
        }
    }

    /// The vDSO's module (the same image in every process of this kernel), copied once and
    /// never evicted.
    pub fn vdso(&mut self) -> Option<ModuleId> {
        if let Some(known) = self.vdso {
            return known;
        }
        let window = self.window;
        let id = match vdso::extract().map(|f| read(f, "[vdso]", false, window)) {
            Ok(Ok(module)) => Some(self.insert(module)),
            Ok(Err(e)) => {
                tracing::warn!("the vDSO cannot be read ({e}); its frames end stacks early");
                None
            }
            Err(e) => {
                tracing::warn!("the vDSO cannot be read ({e}); its frames end stacks early");
                None
            }
        };
        self.vdso = Some(id);
        id
    }

    /// End a window: evict the modules no process in `mapped` holds that were idle for
    /// [`IDLE_WINDOWS`], then the least recently used while over three quarters of a bound.
    /// Returns the evicted modules (for the symbolizer to forget before they are dropped).
    pub fn end_window(&mut self, mapped: &HashSet<ModuleId>) -> Vec<(ModuleId, Module)> {
        let window = self.window;
        self.window += 1;
        self.dwarf_copied = 0;
        let vdso = self.vdso.flatten();
        let mut idle: Vec<(u64, ModuleId)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((m.as_ref()?.last_used, i as ModuleId)))
            .filter(|&(used, id)| used < window && Some(id) != vdso && !mapped.contains(&id))
            .collect();
        idle.sort_unstable();
        let mut evicted = Vec::new();
        for (used, id) in idle {
            let over = self.live > MAX_MODULES / 4 * 3 || self.bytes > MAX_MODULE_BYTES / 4 * 3;
            if window - used < IDLE_WINDOWS && !over {
                break;
            }
            if let Some(m) = self.remove(id) {
                evicted.push((id, m));
            }
        }
        evicted
    }

    fn remove(&mut self, id: ModuleId) -> Option<Module> {
        let module = self.slots.get_mut(id as usize)?.take()?;
        self.live -= 1;
        self.bytes = self.bytes.saturating_sub(module.bytes());
        self.by_file.retain(|_, v| *v != id);
        self.by_build_id.retain(|_, v| *v != id);
        self.free.push(id);
        Some(module)
    }

    /// The problems met since the last call.
    pub fn take_problems(&mut self) -> Unreadable {
        std::mem::take(&mut self.problems)
    }
}

/// `module` with its separate debug file, when it has no DWARF of its own: looked for now,
/// inside the mapping process's root, while the process is there to say where that is.
fn with_separate_debug(mut module: Module, pid: u32) -> Module {
    let Some(elf) = module.elf.as_ref().filter(|e| e.dwarf.is_none()) else {
        return module;
    };
    let Some(build_id) = elf.build_id.as_deref() else {
        return module;
    };
    if let Ok(root) = Root::of_process(pid) {
        module.separate = debug::separate(&root, build_id);
    }
    module
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::{parse_executable, Mapped};

    /// This test process's own files, read as the collector reads any process's.
    fn own_modules(modules: &mut Modules) -> Vec<ModuleId> {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
        parse_executable(&maps)
            .iter()
            .filter_map(|line| match &line.what {
                Mapped::File { path, deleted } => {
                    modules.file(std::process::id(), line, path, *deleted)
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn modules_no_process_maps_are_evicted_once_idle_and_their_ids_reused() {
        let mut modules = Modules::new();
        let ids = own_modules(&mut modules);
        assert!(!ids.is_empty() && !modules.is_empty() && modules.bytes() > 0);
        let vdso = modules.vdso().expect("vdso");
        let source = modules.symbol_source(ids[0]).expect("a symbol copy");
        assert!(source.path.starts_with("/proc/self/fd/"));
        // Mapped by a known process: kept however long.
        let mapped: HashSet<ModuleId> = ids.iter().copied().collect();
        for _ in 0..=IDLE_WINDOWS {
            assert!(modules.end_window(&mapped).is_empty());
        }
        // Mapped by none: kept for IDLE_WINDOWS windows, then evicted (the vDSO never).
        let none = HashSet::new();
        let mut evicted = Vec::new();
        for _ in 0..=IDLE_WINDOWS {
            evicted.extend(modules.end_window(&none));
        }
        assert_eq!(modules.len(), 1, "only the vDSO is left");
        assert!(modules.get(vdso).is_some());
        assert!(evicted.iter().all(|(id, _)| *id != vdso));
        assert!(evicted.iter().any(|(_, m)| m.symbol_copy_path().is_some()));
        assert_eq!(modules.bytes(), modules.get(vdso).map_or(0, Module::bytes));
        // Read again on next sight, into the freed ids.
        let again = own_modules(&mut modules);
        assert!(again.iter().all(|id| ids.contains(id)), "{again:?} {ids:?}");
    }
}
