//! What naming a frame with its source lines costs the collector: a real process
//! (`tests/workloads/lines.c`, built with `-O2 -g`, waiting) is read as the collector reads
//! any, and addresses spread over the code of each module it maps (its executable, libc with its
//! separate debug file when the system has one, the loader) are looked up as a window's frames
//! are: together, once per module. Prints, per module, whether lines came from DWARF, then
//! - cold: the first window that meets the module (its symbol and DWARF copy made, blazesym's
//!   parse, then the lookups), in µs per address and in total;
//! - new: more addresses of a module already parsed, µs per address;
//! - warm: addresses the cache holds, named again with lines (`Symbols::expand`), µs each —
//!   what every later window pays per distinct frame.
//!
//!   cargo bench -p embers-agent --bench symbolize

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use embers_agent::frame::Frame;
use embers_agent::maps::{parse_executable, Mapped};
use embers_agent::modules::Modules;
use embers_agent::symbols::Symbols;

/// Addresses looked up per module and pass (a busy window names a few thousand frames).
const PER_MODULE: u64 = 2000;

fn main() {
    let dir = std::env::temp_dir().join(format!("embers-symbolize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/lines.c");
    let bin = dir.join("embers-lines");
    let built = Command::new("cc")
        .args(["-O2", "-g", "-fomit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("cc");
    assert!(built.success());
    let mut child = Command::new(&bin)
        .args(["0", "wait"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start");
    let mut ready = String::new();
    BufReader::new(child.stdout.as_mut().expect("stdout"))
        .read_line(&mut ready)
        .expect("ready");
    let pid = child.id();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let mut modules = Modules::new();
    let mut symbols = Symbols::new();
    println!(
        "{:<28} {:>6} {:>11} {:>11} {:>10} {:>10}",
        "module", "lines", "cold µs/addr", "cold total", "new µs/addr", "warm µs"
    );
    for line in parse_executable(&maps) {
        let Mapped::File { path, deleted } = &line.what else {
            continue;
        };
        let Some(id) = modules.file(pid, &line, path, *deleted) else {
            continue;
        };
        let span = line.end - line.start;
        let step = (span / (2 * PER_MODULE)).max(1);
        let frame = |i: u64| Frame::File {
            module: id,
            offset: line.offset + i * step,
            exe: path == bin.to_str().unwrap_or(""),
        };
        let n = (span / step).min(2 * PER_MODULE);
        let first: Vec<Frame> = (0..n).step_by(2).map(frame).collect();
        let second: Vec<Frame> = (1..n).step_by(2).map(frame).collect();
        let t = Instant::now();
        symbols.resolve(&first, &mut modules);
        let cold = t.elapsed();
        let t = Instant::now();
        symbols.resolve(&second, &mut modules);
        let new = t.elapsed();
        let mut out = Vec::new();
        let t = Instant::now();
        for f in &first {
            out.clear();
            symbols.expand(f, &modules, &mut out);
        }
        let warm = t.elapsed();
        let with_lines = first.iter().any(|f| {
            out.clear();
            symbols.expand(f, &modules, &mut out);
            out.iter().any(|(_, l)| l.is_some())
        });
        let name = Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?");
        let per = |d: std::time::Duration, k: usize| d.as_secs_f64() * 1e6 / k.max(1) as f64;
        println!(
            "{:<28} {:>6} {:>11.2} {:>8.1} ms {:>10.2} {:>10.3}",
            name,
            if with_lines { "yes" } else { "no" },
            per(cold, first.len()),
            cold.as_secs_f64() * 1e3,
            per(new, second.len()),
            per(warm, first.len()),
        );
    }
    drop(child.stdin.take());
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
