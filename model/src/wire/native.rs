//! How frames from other profilers' formats (pprof, `perf script`, OTLP) are named, so every
//! importer writes the same names DeepFlow's agent does: kernel functions `[k] fn`, functions
//! of a shared library `[l] fn`, application functions bare, a frame whose symbol is unknown
//! `[<file>] +0x<offset>` (the file it is in and the offset in that file; DeepFlow's agent
//! writes `[<file>]`), and one without even a file `[unknown] 0x<address>`.
//!
//! Names are untrusted text: [`clean`] makes any of them safe to store (`;` separates frames in
//! a stored stack, so it becomes `:` as DeepFlow does; control characters become spaces).

use std::borrow::Cow;

/// Where a frame's code lives, as far as its name prefix is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The kernel.
    Kernel,
    /// A shared library (`libc.so.6`).
    Library,
    /// The program itself (or a runtime that names its own functions: Go, Java, Python).
    App,
}

/// Whether a mapped file is the kernel (`[kernel.kallsyms]`, perf's `[kernel.kallsyms]_text`,
/// the vDSO is not).
pub fn is_kernel_file(file: &str) -> bool {
    file.starts_with("[kernel") || file.starts_with("[vmlinux") || file == "vmlinux"
}

/// Whether a mapped file is a shared library: its file name has a `.so` component
/// (`libc.so.6`, `ld-linux-x86-64.so.2`, `libfoo.so`).
pub fn is_library_file(file: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.split('.').skip(1).any(|part| part == "so")
}

/// The origin of code in `file` (an empty file name is the program's own).
pub fn origin_of_file(file: &str) -> Origin {
    if is_kernel_file(file) {
        Origin::Kernel
    } else if is_library_file(file) {
        Origin::Library
    } else {
        Origin::App
    }
}

/// The stored name of function `name` running in code of `origin`.
pub fn function_frame(name: &str, origin: Origin) -> String {
    let name = clean(name);
    match origin {
        Origin::Kernel => format!("[k] {name}"),
        Origin::Library => format!("[l] {name}"),
        Origin::App => name.into_owned(),
    }
}

/// The name of a frame without a symbol at `offset` in `file` (`[libfoo.so] +0x1a2b`), or
/// `[unknown] 0x<address>` when the file is not known either.
pub fn unsymbolized_frame(file: &str, offset: u64, address: u64) -> String {
    if file.is_empty() {
        format!("[unknown] {address:#x}")
    } else {
        format!("[{}] +{offset:#x}", clean(file))
    }
}

/// A name made safe to store: `;` → `:`, control characters → space, empty → `[unknown]`.
pub fn clean(name: &str) -> Cow<'_, str> {
    if name.is_empty() {
        return Cow::Borrowed("[unknown]");
    }
    if !name.bytes().any(|b| b == b';' || b.is_ascii_control()) && !name.contains('\u{85}') {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.chars()
            .map(|c| match c {
                ';' => ':',
                c if c.is_control() => ' ',
                c => c,
            })
            .collect(),
    )
}

/// A thread's frame (`[t] name`).
pub fn thread_frame(name: &str) -> String {
    format!("[t] {}", clean(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_say_where_code_lives() {
        assert_eq!(origin_of_file("[kernel.kallsyms]"), Origin::Kernel);
        assert_eq!(
            origin_of_file("/usr/lib/x86_64-linux-gnu/libc.so.6"),
            Origin::Library
        );
        assert_eq!(origin_of_file("ld-linux-x86-64.so.2"), Origin::Library);
        assert_eq!(origin_of_file("/usr/bin/python3.11"), Origin::App);
        assert_eq!(origin_of_file("/opt/app/so.bin"), Origin::App);
        assert_eq!(origin_of_file(""), Origin::App);
    }

    #[test]
    fn names_follow_deepflow() {
        assert_eq!(function_frame("schedule", Origin::Kernel), "[k] schedule");
        assert_eq!(function_frame("memcpy", Origin::Library), "[l] memcpy");
        assert_eq!(function_frame("main.work", Origin::App), "main.work");
        assert_eq!(
            unsymbolized_frame("/lib/libfoo.so", 0x1a2b, 0x7f00_1a2b),
            "[/lib/libfoo.so] +0x1a2b"
        );
        assert_eq!(unsymbolized_frame("", 0, 0xdead), "[unknown] 0xdead");
        assert_eq!(thread_frame("worker;1"), "[t] worker:1");
    }

    #[test]
    fn untrusted_names_are_made_storable() {
        assert_eq!(clean("a;b\nc\td"), "a:b c d");
        assert!(matches!(clean("plain"), Cow::Borrowed("plain")));
        assert_eq!(clean(""), "[unknown]");
        assert_eq!(clean("x\u{85}y"), "x y");
    }
}
