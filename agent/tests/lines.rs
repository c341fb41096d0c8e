//! Source lines from the collector's symbolizer, checked against `addr2line -i -f` on a real
//! program (`workloads/lines.c`, built with `-O2 -g -fomit-frame-pointer`): every address of its
//! hot function, looked up as the collector looks up a running process's frames (its maps, its
//! module read inside its root, blazesym on the sealed copy), expands to the same functions at
//! the same lines, inlined ones as their own frames, outermost first. The same program stripped,
//! with its DWARF in a separate debug file under `/usr/lib/debug/.build-id/`, gives the same
//! answer. Needs cc, objcopy and addr2line (binutils); the separate file needs root.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use embers_agent::frame::Frame;
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

fn build(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/lines.c");
    let bin = dir.join("embers-lines");
    run(Command::new("cc")
        .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src));
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
    let pid = child.id();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let mut modules = Modules::new();
    let name = bin.to_str().expect("utf-8 path");
    let id = parse_executable(&maps)
        .iter()
        .find_map(|l| match &l.what {
            Mapped::File { path, deleted } if path == name => modules.file(pid, l, path, *deleted),
            _ => None,
        })
        .expect("the program's own mapping");
    let elf = Elf::read(&File::open(bin).expect("open")).expect("elf");
    let frames: Vec<Frame> = addrs
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
        .collect();
    let mut symbols = Symbols::new();
    symbols.resolve(&frames, &mut modules);
    frames
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            symbols.expand(f, &modules, &mut out);
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
