//! Naming frames: blazesym looks user addresses up in their files' symbol tables (by file
//! offset, demangling Rust and C++; read from each module's sealed copy, never from a file
//! another user can truncate) and kernel addresses in kallsyms, perf maps name JIT code
//! ([`jit`]); every answer is cached (per module by offset, kernel by address) and shaped into
//! DeepFlow's name forms by [`crate::names`]. A window's frames are looked up together, one
//! batch per file. Where a module's copy holds DWARF (its own, or its separate debug file's),
//! the lookup also gives each frame its source line and the functions inlined at it
//! ([`lines`]): [`Symbols::expand`] makes those their own frames, as `addr2line -i` does, so a
//! function's lines are the lines it owns.

pub mod jit;
pub mod lines;
pub mod perf_map;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;

use blazesym::symbolize::evict::{self, Evict};
use blazesym::symbolize::source::{Elf, Kernel, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};
use blazesym::MaybeDefault;
use embers_model::contract::detail::SourceLine;

use crate::frame::{Frame, ModuleId, Symbolized as Found};
use crate::modules::{Module, Modules, SymbolSource};
use crate::names::{self, Place};
use jit::Jit;
use lines::Files;

/// Most kernel addresses cached before the cache starts over.
const MAX_KERNEL_CACHE: usize = 1 << 17;

/// The symbolizer and its caches.
pub struct Symbols {
    symbolizer: Symbolizer,
    kernel: HashMap<u64, Option<Rc<str>>>,
    jit: Jit,
    warned: HashSet<ModuleId>,
    files: Files,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new()
    }
}

impl Symbols {
    /// Empty caches.
    pub fn new() -> Symbols {
        Symbols {
            symbolizer: Symbolizer::builder()
                // Files are read once: modules are symbolized through descriptors held open,
                // and a reload check would stat /proc/kallsyms, whose time changes, and parse
                // it again every window.
                .enable_auto_reload(false)
                .enable_code_info(true)
                .enable_inlined_fns(true)
                .enable_demangling(true)
                // No directories to search: blazesym would open the files a binary's debug
                // link names, as root. Separate debug files are found and copied by
                // `crate::modules::debug` instead, and links are hidden in the copies.
                .set_debug_dirs(Some(Vec::<std::path::PathBuf>::new()))
                .build(),
            kernel: HashMap::new(),
            jit: Jit::default(),
            warned: HashSet::new(),
            files: Files::default(),
        }
    }

    /// Look up every frame of a window that is not cached yet; perf maps are read again when
    /// they changed (runtimes append to them).
    pub fn resolve<'a>(
        &mut self,
        frames: impl IntoIterator<Item = &'a Frame>,
        modules: &mut Modules,
    ) {
        let frames: Vec<&Frame> = frames.into_iter().collect();
        self.upgrade(&frames, modules);
        let mut jit: HashMap<u32, Vec<u64>> = HashMap::new();
        let mut by_module: BTreeMap<ModuleId, Vec<u64>> = BTreeMap::new();
        let mut kernel = Vec::new();
        for frame in frames {
            match *frame {
                Frame::Kernel(addr) if !self.kernel.contains_key(&addr) => kernel.push(addr),
                Frame::File { module, offset, .. }
                    if modules
                        .get(module)
                        .is_some_and(|m| m.symbol(offset).is_none()) =>
                {
                    by_module.entry(module).or_default().push(offset);
                }
                Frame::Jit { pid, addr } => jit.entry(pid).or_default().push(addr),
                _ => {}
            }
        }
        self.jit.resolve(jit);
        self.resolve_kernel(kernel);
        for (id, mut offsets) in by_module {
            offsets.sort_unstable();
            offsets.dedup();
            self.resolve_module(id, &offsets, modules);
        }
    }

    /// The modules of `frames` whose copies were made without their DWARF (an earlier
    /// window's budget ran out) are copied again with it, as far as this window's budget goes:
    /// blazesym forgets the old copy first, and their frames are looked up again.
    fn upgrade(&mut self, frames: &[&Frame], modules: &mut Modules) {
        let deferred: BTreeSet<ModuleId> = frames
            .iter()
            .filter_map(|f| match **f {
                Frame::File { module, .. } => Some(module),
                _ => None,
            })
            .filter(|&id| modules.get(id).is_some_and(Module::deferred))
            .collect();
        for id in deferred {
            if !modules.may_upgrade(id) {
                continue;
            }
            if let Some(old) = modules.get(id).and_then(Module::symbol_copy_path) {
                self.evict(old);
            }
            if modules.upgrade(id) {
                self.warned.remove(&id);
            }
        }
    }

    /// blazesym's parse of a symbol copy forgotten, before the copy's descriptor closes (its
    /// `/proc/self/fd/N` path is reused by the next file opened).
    fn evict(&mut self, path: PathBuf) {
        if let Err(e) = self.symbolizer.evict(&Evict::Elf(evict::Elf::new(path))) {
            tracing::debug!("symbolizer cache not evicted: {e}");
        }
    }

    fn resolve_kernel(&mut self, mut addrs: Vec<u64>) {
        if addrs.is_empty() {
            return;
        }
        addrs.sort_unstable();
        addrs.dedup();
        if self.kernel.len() + addrs.len() > MAX_KERNEL_CACHE {
            self.kernel.clear();
        }
        let source = Source::Kernel(Kernel {
            kallsyms: MaybeDefault::Default,
            // kallsyms names every function; a vmlinux with debug info would cost far more
            // memory for the same names.
            vmlinux: MaybeDefault::None,
            debug_syms: false,
            ..Default::default()
        });
        let names = match self.symbolizer.symbolize(&source, Input::AbsAddr(&addrs)) {
            Ok(found) => found.into_iter().map(name_of).collect(),
            Err(e) => {
                tracing::warn!("kernel symbols unavailable ({e}); kernel frames are [k] [unknown]");
                vec![None; addrs.len()]
            }
        };
        self.kernel.extend(addrs.into_iter().zip(names));
    }

    fn resolve_module(&mut self, id: ModuleId, offsets: &[u64], modules: &mut Modules) {
        let source = modules.symbol_source(id);
        let Some(module) = modules.get_mut(id) else {
            return;
        };
        let found = match source {
            Some(source) => self.look_up(id, &source, module, offsets),
            None => Ok(Vec::new()),
        };
        let names: Vec<Option<Rc<Found>>> = match found {
            Ok(found) => found,
            Err(e) => {
                if self.warned.insert(id) {
                    tracing::warn!(
                        "symbols of {} cannot be read ({e}); its frames are [{}]",
                        module.path,
                        module.path
                    );
                }
                Vec::new()
            }
        };
        for (i, &offset) in offsets.iter().enumerate() {
            module.remember(offset, names.get(i).cloned().flatten());
        }
    }

    /// Look `offsets` of `module` up in its copy: with DWARF first (lines, inlined functions),
    /// and, should its DWARF fail to read, by its symbol tables alone.
    fn look_up(
        &mut self,
        id: ModuleId,
        source: &SymbolSource,
        module: &Module,
        offsets: &[u64],
    ) -> Result<Vec<Option<Rc<Found>>>, blazesym::Error> {
        // A separate debug file is laid out apart from the binary: look up linked addresses.
        // An offset outside the file's segments has none, and is not looked up (nor is the
        // last address, past which blazesym's search would overflow).
        let addrs: Vec<Option<u64>> = match (&module.elf, source.separate) {
            (Some(elf), true) => offsets.iter().map(|&o| elf.virt_of(o)).collect(),
            _ => offsets.iter().map(|&o| Some(o)).collect(),
        };
        let asked: Vec<u64> = addrs
            .iter()
            .flatten()
            .copied()
            .filter(|&a| a != u64::MAX)
            .collect();
        let input = if source.separate {
            Input::VirtOffset(&asked[..])
        } else {
            Input::FileOffset(&asked[..])
        };
        let elf = |debug_syms| {
            Source::Elf(Elf {
                debug_syms,
                ..Elf::new(source.path.clone())
            })
        };
        let mut found = None;
        if source.dwarf {
            match self.symbolizer.symbolize(&elf(true), input) {
                Ok(f) => found = Some(symbolized(f, &mut self.files)),
                Err(e) => {
                    if self.warned.insert(id) {
                        tracing::warn!(
                            "debug information of {} cannot be read ({e}); its frames are named without lines",
                            module.path
                        );
                    }
                }
            }
        }
        let found = match found {
            Some(f) => f,
            None => symbolized(
                self.symbolizer.symbolize(&elf(false), input)?,
                &mut self.files,
            ),
        };
        // Back to one answer per offset, `None` where nothing was asked.
        let mut found = found.into_iter();
        Ok(addrs
            .iter()
            .map(|a| match a {
                Some(a) if *a != u64::MAX => found.next().flatten(),
                _ => None,
            })
            .collect())
    }

    /// The frames `frame` stands for, root first, each with its source line when known, onto
    /// `out`: a user frame's function and the functions inlined into it there, outermost
    /// first; any other frame as [`Symbols::name`] names it, without a line.
    pub fn expand(
        &self,
        frame: &Frame,
        modules: &Modules,
        out: &mut Vec<(String, Option<SourceLine>)>,
    ) {
        let Frame::File {
            module,
            offset,
            exe,
        } = *frame
        else {
            out.push((self.name(frame, modules), None));
            return;
        };
        let Some(m) = modules.get(module) else {
            out.push((names::unknown(offset), None));
            return;
        };
        let place = if exe {
            Place::Executable(&m.path)
        } else {
            Place::Library(&m.path)
        };
        match m.symbol(offset).cloned().flatten() {
            Some(found) => out.extend(found.functions.iter().map(|f| {
                let line = f.line.as_ref().map(|(file, line)| SourceLine {
                    file: file.to_string(),
                    line: *line,
                });
                (names::user(Some(&f.name), place, offset), line)
            })),
            None => out.push((names::user(None, place, offset), None)),
        }
    }

    /// The name of `frame` in its final form (`[k] …`, `[l] …`, bare, `[<path>]`, ...): a user
    /// frame's outermost function (without the functions inlined into it; see
    /// [`Symbols::expand`]).
    pub fn name(&self, frame: &Frame, modules: &Modules) -> String {
        match *frame {
            Frame::Kernel(addr) => {
                names::kernel(self.kernel.get(&addr).cloned().flatten().as_deref(), addr)
            }
            Frame::File {
                module,
                offset,
                exe,
            } => match modules.get(module) {
                Some(m) => {
                    let symbol = m.symbol(offset).cloned().flatten();
                    let place = if exe {
                        Place::Executable(&m.path)
                    } else {
                        Place::Library(&m.path)
                    };
                    names::user(symbol.as_deref().and_then(lines::outer_name), place, offset)
                }
                None => names::unknown(offset),
            },
            Frame::Jit { pid, addr } => self.jit.name(pid, addr),
            Frame::Unknown(addr) => names::unknown(addr),
        }
    }

    /// Forget evicted modules: blazesym's parse of each symbol copy goes before the copy's
    /// descriptor closes ([`Symbols::evict`]).
    pub fn forget(&mut self, evicted: &[(ModuleId, Module)]) {
        for (id, module) in evicted {
            self.warned.remove(id);
            if let Some(path) = module.symbol_copy_path() {
                self.evict(path);
            }
        }
    }
}

fn symbolized(found: Vec<Symbolized<'_>>, files: &mut Files) -> Vec<Option<Rc<Found>>> {
    found
        .into_iter()
        .map(|s| lines::symbolized(s, files))
        .collect()
}

fn name_of(s: Symbolized<'_>) -> Option<Rc<str>> {
    match s {
        Symbolized::Sym(sym) => Some(Rc::from(&*sym.name)),
        Symbolized::Unknown(_) => None,
    }
}
