//! Frame names as DeepFlow writes them (the interface document's "Function name forms"):
//! `[t] thread`, `[p] process`, `[k] kernel_fn`, `[l] library_fn`, bare names for the
//! executable's own functions, `[<path>]` when the address is in a known file without a symbol,
//! `[unknown] 0x…` otherwise.
//!
//! Every name comes from outside (symbol tables, thread names a program sets, perf maps a runtime
//! writes), so each is cleaned the way the folded format needs: `;` separates frames and becomes
//! `:` (as DeepFlow does), a line break would end the line and becomes a space, and a name is cut
//! to [`MAX_NAME_BYTES`] so one frame never trips the service's per-frame limit.

/// Longest frame name sent, in bytes (the service's default limit is 4096).
pub const MAX_NAME_BYTES: usize = 1024;

/// `name` made safe for a folded line: `;` → `:`, control characters → space, at most
/// [`MAX_NAME_BYTES`] (cut at a character boundary).
pub fn clean(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_NAME_BYTES));
    for c in name.chars() {
        let c = match c {
            ';' => ':',
            c if c.is_control() => ' ',
            c => c,
        };
        if out.len() + c.len_utf8() > MAX_NAME_BYTES {
            break;
        }
        out.push(c);
    }
    out
}

/// The `[unknown] 0x…` form, 16 hex digits as the agent writes it.
pub fn unknown(addr: u64) -> String {
    format!("[unknown] 0x{addr:016x}")
}

/// A kernel frame: `[k] name`, or `[k] [unknown] 0x…` when kallsyms does not know the address
/// (it stays a kernel frame, so the kernel-depth rule still counts it).
pub fn kernel(symbol: Option<&str>, addr: u64) -> String {
    match symbol {
        Some(s) if !s.is_empty() => format!("[k] {}", clean(s)),
        _ => format!("[k] {}", unknown(addr)),
    }
}

/// Where a user-space address was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place<'a> {
    /// In the process's own executable.
    Executable(&'a str),
    /// In another file (a shared library, the vDSO).
    Library(&'a str),
    /// In memory a runtime generated code into (named by its perf map, if any).
    Jit,
    /// Nowhere known.
    Unknown,
}

/// A user frame: bare for the executable's functions and JIT code, `[l] ` for libraries;
/// `[<path>]` when the file has no symbol for it; `[unknown] 0x…` when no file is known.
pub fn user(symbol: Option<&str>, place: Place<'_>, addr: u64) -> String {
    match (symbol.filter(|s| !s.is_empty()), place) {
        (Some(s), Place::Library(_)) => format!("[l] {}", clean(s)),
        (Some(s), _) => clean(s),
        (None, Place::Executable(path) | Place::Library(path)) => format!("[{}]", clean(path)),
        (None, Place::Jit | Place::Unknown) => unknown(addr),
    }
}

/// `[t] <thread name>`; a thread without a name is named by its id.
pub fn thread(name: &str, tid: u32) -> String {
    format!("[t] {}", or_id(name, tid))
}

/// `[p] <process name>` (per-host graphs).
pub fn process(name: &str, pid: u32) -> String {
    format!("[p] {}", or_id(name, pid))
}

/// The app_service of a process: its cleaned name, or `pid-N` when it has none.
pub fn app_service(name: &str, pid: u32) -> String {
    or_id(name, pid)
}

fn or_id(name: &str, id: u32) -> String {
    let name = clean(name);
    if name.trim().is_empty() {
        format!("pid-{id}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_follow_deepflow() {
        assert_eq!(kernel(Some("do_syscall_64"), 1), "[k] do_syscall_64");
        assert_eq!(
            kernel(None, 0xffff_ffff_8100_0000),
            "[k] [unknown] 0xffffffff81000000"
        );
        let exe = Place::Executable("/usr/bin/redis-server");
        let lib = Place::Library("/usr/lib/x86_64-linux-gnu/libc.so.6");
        assert_eq!(user(Some("main"), exe, 1), "main");
        assert_eq!(user(Some("read"), lib, 1), "[l] read");
        assert_eq!(user(None, exe, 1), "[/usr/bin/redis-server]");
        assert_eq!(user(None, lib, 1), "[/usr/lib/x86_64-linux-gnu/libc.so.6]");
        assert_eq!(
            user(Some("LazyCompile:*fib a.js:3"), Place::Jit, 1),
            "LazyCompile:*fib a.js:3"
        );
        assert_eq!(
            user(None, Place::Jit, 0x55d3a1c04e10),
            "[unknown] 0x000055d3a1c04e10"
        );
        assert_eq!(
            user(Some(""), Place::Unknown, 0x10),
            "[unknown] 0x0000000000000010"
        );
        assert_eq!(thread("worker", 7), "[t] worker");
        assert_eq!(process("nginx", 7), "[p] nginx");
    }

    #[test]
    fn untrusted_text_cannot_break_a_folded_line() {
        assert_eq!(clean("a;b\nc\td"), "a:b c d");
        assert_eq!(thread("x;y 12\n", 3), "[t] x:y 12 ");
        assert_eq!(thread("", 42), "[t] pid-42");
        assert_eq!(app_service(" \n", 9), "pid-9");
        let long = "é".repeat(MAX_NAME_BYTES);
        let cut = clean(&long);
        assert!(cut.len() <= MAX_NAME_BYTES && cut.len() >= MAX_NAME_BYTES - 1);
        assert!(cut.chars().all(|c| c == 'é'));
    }
}
