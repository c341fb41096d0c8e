//! A frame between unwinding and naming: where an address is, in terms that outlive the process
//! (a file and an offset in it), so naming can wait for the end of the window and a frame seen
//! in many samples is named once. A user frame named is a [`Symbolized`]: one function, or
//! several where the compiler inlined calls.

use std::rc::Rc;

/// Index of a module (a file code runs from) in [`crate::modules::Modules`].
pub type ModuleId = u32;

/// One frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Frame {
    /// A kernel address.
    Kernel(u64),
    /// An offset in a file; `exe` when the file is the process's executable.
    File {
        /// The file.
        module: ModuleId,
        /// Offset in it.
        offset: u64,
        /// Whether it is the process's own executable (bare names) or a library (`[l]`).
        exe: bool,
    },
    /// Anonymous executable memory (JIT code) of process `pid`.
    Jit {
        /// The process, whose `/tmp/perf-<pid>.map` may name it.
        pid: u32,
        /// The address.
        addr: u64,
    },
    /// An address in no known mapping.
    Unknown(u64),
}

/// What a user address is, as its module's symbols and DWARF say: the function holding it, then
/// the functions inlined into it there, outermost first (as `addr2line -i` lists them, reversed),
/// each at its own source line when the module has line tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbolized {
    /// Outermost first; never empty.
    pub functions: Box<[Function]>,
}

/// One function of a [`Symbolized`] address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its name (demangled).
    pub name: Rc<str>,
    /// The source line it was executing: for an outer function the line of the inlined call.
    pub line: Option<(Rc<str>, u32)>,
}
