//! Source lines from the collector's symbolizer, checked against `addr2line -i -f` on a real
//! program (`workloads/lines.c`, built with `-O2 -g -fomit-frame-pointer`): every address of its
//! hot function, looked up as the collector looks up a running process's frames (its maps, its
//! module read inside its root, blazesym on the sealed copy), expands to the same functions at
//! the same lines, inlined ones as their own frames, outermost first. The same program stripped,
//! with its DWARF in a separate debug file under `/usr/lib/debug/.build-id/`, gives the same
//! answer. A program met after a window's DWARF budget ran out gets its lines in the next
//! window. Needs cc, objcopy and addr2line (binutils); the separate file needs root.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use embers_agent::frame::{Frame, ModuleId};
use embers_agent::maps::{parse_executable, Mapped};
use embers_agent::modules::elf::Elf;
use embers_agent::modules::Modules;
use embers_agent::symbols::Symbols;

/// A function name and `file:line`, as addr2line prints them.
type Place = (String, Option<String>);

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("embers-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/lines.c")
}

fn build(dir: &Path) -> PathBuf {
    build_from(dir, &source())
}

fn build_from(dir: &Path, src: &Path) -> PathBuf {
    let bin = dir.join("embers-lines");
    run(Command::new("cc")
        .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(src));
    bin
}

/// `bin` started, waiting on its stdin once `ready`.
fn start(bin: &Path) -> Child {
    let mut child = Command::new(bin)
        .args(["0", "wait"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start");
    let mut line = String::new();
    let out = child.stdout.as_mut().expect("stdout");
    BufReader::new(out).read_line(&mut line).expect("read");
    assert_eq!(line.trim(), "ready");
    child
}

/// `hot_loop`'s linked addresses, from the symbol table.
fn hot_loop(bin: &Path) -> std::ops::Range<u64> {
    let nm = run(Command::new("nm").arg("-S").arg(bin));
    let line = nm
        .lines()
        .find(|l| l.ends_with(" hot_loop"))
        .expect("hot_loop in nm");
    let mut parts = line.split_whitespace();
    let hex = |s: Option<&str>| u64::from_str_radix(s.expect("field"), 16).expect("hex");
    let start = hex(parts.next());
    start..start + hex(parts.next())
}

/// What `addr2line -i -f` says of `addr`, outermost first.
fn addr2line(bin: &Path, addr: u64) -> Vec<Place> {
    let out = run(Command::new("addr2line")
        .args(["-i", "-f", "-e"])
        .arg(bin)
        .arg(format!("{addr:#x}")));
    let lines: Vec<&str> = out.lines().collect();
    let mut places: Vec<Place> = lines
        .chunks(2)
        .map(|pair| {
            let at = pair[1].split(" (discriminator").next().unwrap_or("");
            let known = !at.starts_with("??") && !at.ends_with(":0") && !at.ends_with(":?");
            (pair[0].to_owned(), known.then(|| at.to_owned()))
        })
        .collect();
    places.reverse();
    places
}

/// What the collector's symbolizer says of each linked address of `bin`'s code, as the
/// running `child` maps it.
fn collector(child: &Child, bin: &Path, addrs: &[u64]) -> Vec<Vec<Place>> {
    let mut modules = Modules::new();
    let frames = frames_of(child, bin, addrs, &mut modules);
    let mut symbols = Symbols::new();
    symbols.resolve(&frames, &mut modules);
    named(&symbols, &modules, &frames)
}

/// The frames of linked addresses `addrs` of `bin`, as the running `child` maps it (its module
/// read into `modules`).
fn frames_of(child: &Child, bin: &Path, addrs: &[u64], modules: &mut Modules) -> Vec<Frame> {
    let pid = child.id();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let name = bin.to_str().expect("utf-8 path");
    let id = parse_executable(&maps)
        .iter()
        .find_map(|l| match &l.what {
            Mapped::File { path, deleted } if path == name => modules.file(pid, l, path, *deleted),
            _ => None,
        })
        .expect("the program's own mapping");
    let elf = Elf::read(&File::open(bin).expect("open")).expect("elf");
    addrs
        .iter()
        .map(|&a| {
            let s = elf
                .segments
                .iter()
                .find(|s| s.vaddr <= a && a < s.vaddr + s.file_size)
                .expect("segment");
            Frame::File {
                module: id,
                offset: a - s.vaddr + s.offset,
                exe: true,
            }
        })
        .collect()
}

/// `frames` expanded as the collector expands them (inlined functions as frames of their own).
fn named(symbols: &Symbols, modules: &Modules, frames: &[Frame]) -> Vec<Vec<Place>> {
    frames
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            symbols.expand(f, modules, &mut out);
            out.into_iter()
                .map(|(name, line)| (name, line.map(|l| format!("{}:{}", l.file, l.line))))
                .collect()
        })
        .collect()
}

fn same_as_addr2line(reference: &Path, running: &Path) {
    let mut child = start(running);
    let code = hot_loop(reference);
    let addrs: Vec<u64> = code.collect();
    let got = collector(&child, running, &addrs);
    drop(child.stdin.take());
    let _ = child.wait();
    let mut inlined = 0;
    for (addr, got) in addrs.iter().zip(&got) {
        let want = addr2line(reference, *addr);
        assert_eq!(got, &want, "at {addr:#x}");
        inlined += usize::from(got.len() > 1);
    }
    assert!(
        inlined > 0,
        "no address of hot_loop is inside an inlined function"
    );
    let hot = got
        .iter()
        .flatten()
        .filter_map(|(_, l)| l.as_deref())
        .filter(|l| l.ends_with("lines.c:38"))
        .count();
    assert!(hot > 0, "the hot line 38 is nowhere: {got:?}");
}

#[test]
fn every_address_of_a_hot_function_has_addr2line_s_functions_and_lines() {
    let dir = dir();
    let bin = build(&dir);
    same_as_addr2line(&bin, &bin);
}

#[test]
fn a_stripped_program_takes_its_lines_from_its_separate_debug_file() {
    let dir = dir().join("stripped");
    std::fs::create_dir_all(&dir).expect("dir");
    let bin = build(&dir);
    let id = run(Command::new("readelf").args(["-n"]).arg(&bin));
    let id = id
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build id")
        .to_owned();
    let debug_dir = Path::new("/usr/lib/debug/.build-id").join(&id[..2]);
    if std::fs::create_dir_all(&debug_dir).is_err() {
        eprintln!("skipped: {} is not writable here", debug_dir.display());
        return;
    }
    let debug = debug_dir.join(format!("{}.debug", &id[2..]));
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&bin)
        .arg(&debug));
    let stripped = dir.join("embers-lines-stripped");
    run(Command::new("objcopy")
        .arg("--strip-debug")
        .arg(&bin)
        .arg(&stripped));
    let none = run(Command::new("readelf").arg("-S").arg(&stripped));
    assert!(!none.contains(".debug_line"), "stripped");
    let result = std::panic::catch_unwind(|| same_as_addr2line(&bin, &stripped));
    let _ = std::fs::remove_file(&debug);
    let _ = std::fs::remove_dir(&debug_dir);
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// The DWARF budget of a window is spent on the modules met first; one met past it is named
/// without lines in that window, and in the next gets its DWARF (its cached names forgotten,
/// blazesym's parse of its old copy evicted): lines and inlined frames do not depend on the
/// order modules were met in. Before, it stayed without them for as long as it was held.
#[test]
fn a_module_met_past_the_dwarf_budget_gets_its_lines_in_the_next_window() {
    let dir = dir().join("budget");
    let other = dir.join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let first = build(&dir);
    // The same source from another path: another program (another build id).
    let copy = other.join("lines.c");
    std::fs::copy(source(), &copy).expect("copy");
    let second = build_from(&other, &copy);
    let (mut a, mut b) = (start(&first), start(&second));
    let (code_a, code_b): (Vec<u64>, Vec<u64>) =
        (hot_loop(&first).collect(), hot_loop(&second).collect());
    // One byte: the first module's DWARF spends the whole window's budget.
    let mut modules = Modules::with_dwarf_budget(1);
    let frames_a = frames_of(&a, &first, &code_a, &mut modules);
    let frames_b = frames_of(&b, &second, &code_b, &mut modules);
    let mut symbols = Symbols::new();
    symbols.resolve(frames_a.iter().chain(&frames_b), &mut modules);
    let has_lines = |named: &[Vec<Place>]| named.iter().flatten().any(|(_, l)| l.is_some());
    assert!(
        has_lines(&named(&symbols, &modules, &frames_a)),
        "the first module has lines"
    );
    let before = named(&symbols, &modules, &frames_b);
    assert!(
        !has_lines(&before),
        "the second is past the budget this window: {before:?}"
    );
    let mapped: HashSet<ModuleId> = frames_a
        .iter()
        .chain(&frames_b)
        .filter_map(|f| match *f {
            Frame::File { module, .. } => Some(module),
            _ => None,
        })
        .collect();
    assert!(modules.end_window(&mapped).is_empty());
    symbols.resolve(&frames_b, &mut modules);
    let after = named(&symbols, &modules, &frames_b);
    for child in [&mut a, &mut b] {
        drop(child.stdin.take());
        let _ = child.wait();
    }
    for (addr, got) in code_b.iter().zip(&after) {
        assert_eq!(
            got,
            &addr2line(&second, *addr),
            "at {addr:#x}, the next window"
        );
    }
    assert!(
        has_lines(&after) && after.iter().any(|f| f.len() > 1),
        "lines and inlined frames"
    );
}
