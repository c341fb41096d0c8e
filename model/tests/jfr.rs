//! JFR on a real recording (`tests/data/jfr`, OpenJDK 17 recording a workload of ours): every
//! event type's stacks and sums must be exactly what the JDK's own reader (`jfr print --json`)
//! found in the same file, and the workload's known shares must show. Damaged recordings are
//! refused with a message saying what is wrong, never a panic or a hang.

use std::io::Read;

use embers_model::budget::Budget;
use embers_model::wire::jfr::{self, JfrError};
use embers_model::wire::pprof::stacks::{stacks, StackBounds};

fn recording() -> Vec<u8> {
    let path = embers_model::testkit::data_dir().join("jfr/workload.jfr.gz");
    let gz = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

const BOUNDS: StackBounds = StackBounds {
    max_frames: 1024,
    max_frame_bytes: 4096,
};

/// `event_type<TAB>stack<TAB>value` lines, sorted, as `expected.py` writes them.
fn lines(recording: &jfr::Recording) -> Vec<String> {
    let mut out = Vec::new();
    for p in &recording.profiles {
        for (stack, value) in stacks(&p.table, &BOUNDS, &Budget::unlimited()).expect("stacks") {
            out.push(format!("{}\t{stack}\t{value}", p.event_type));
        }
    }
    out.sort();
    out
}

#[test]
fn every_event_type_matches_the_jdks_own_reader() {
    let got = lines(&jfr::read(&recording(), "workload").expect("read"));
    let path = embers_model::testkit::data_dir().join("jfr/workload.expected.tsv");
    let want: Vec<String> = std::fs::read_to_string(path)
        .expect("expected")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(got.len(), want.len(), "got:\n{}", got.join("\n"));
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // Every kind of event the file holds was read.
    for event in [
        "cpu",
        "alloc_space",
        "alloc_outside_tlab_bytes",
        "lock_duration",
    ] {
        assert!(
            got.iter().any(|l| l.starts_with(&format!("{event}\t"))),
            "{event}"
        );
    }
}

#[test]
fn the_workloads_known_shares_show() {
    let r = jfr::read(&recording(), "workload").expect("read");
    let cpu = r
        .profiles
        .iter()
        .find(|p| p.event_type == "cpu")
        .expect("cpu");
    let stacks = stacks(&cpu.table, &BOUNDS, &Budget::unlimited()).expect("stacks");
    let main = |f: &str| -> u64 {
        stacks
            .iter()
            .filter(|(s, _)| s.starts_with("[t] main;Workload.main;") && s.contains(f))
            .map(|(_, v)| v)
            .sum()
    };
    let (hot, warm) = (main("Workload.hot"), main("Workload.warm"));
    let share = hot as f64 / (hot + warm) as f64;
    // hot spins twice as long as warm per round: two thirds, give or take sampling.
    assert!((0.55..0.8).contains(&share), "hot {hot}, warm {warm}");
    assert!(r.start_nanos.is_some_and(|t| t > 1_700_000_000_000_000_000));
}

#[test]
fn read_by_the_second_the_same_samples_keep_their_course() {
    let bytes = recording();
    let whole = jfr::read(&bytes, "workload").expect("read");
    let by_second = jfr::read_in_buckets(&bytes, "workload", 1).expect("read");
    let start = whole.start_nanos.expect("start") / 1_000_000_000;
    // The 4-second run: CPU samples in at least four different seconds, all within it.
    let cpu_seconds: Vec<i64> = by_second
        .profiles
        .iter()
        .filter(|p| p.event_type == "cpu")
        .filter_map(|p| p.time)
        .collect();
    assert!(cpu_seconds.len() >= 4, "{cpu_seconds:?}");
    assert!(
        cpu_seconds.iter().all(|t| (start..start + 8).contains(t)),
        "{cpu_seconds:?} from {start}"
    );
    // Summed over the seconds, every event type's stacks are the whole recording's.
    let mut summed: std::collections::BTreeMap<String, u64> = Default::default();
    for p in &by_second.profiles {
        for (stack, v) in stacks(&p.table, &BOUNDS, &Budget::unlimited()).expect("stacks") {
            *summed
                .entry(format!("{}\t{stack}", p.event_type))
                .or_default() += v;
        }
    }
    let summed: Vec<String> = summed
        .into_iter()
        .map(|(k, v)| format!("{k}\t{v}"))
        .collect();
    assert_eq!(summed, lines(&whole));
    assert!(whole.profiles.iter().all(|p| p.time.is_none()));
}

#[test]
fn damaged_recordings_are_refused_saying_why() {
    let good = recording();
    let err = |bytes: &[u8]| jfr::read(bytes, "x").expect_err("refused").to_string();
    assert_eq!(jfr::read(b"PK\x03\x04", "x").unwrap_err(), JfrError::NotJfr);
    // Cut short: the chunk claims more than is there.
    assert!(err(&good[..good.len() / 2]).contains("an unfinished recording"));
    // A version Embers does not read.
    let mut v1 = good.clone();
    v1[4..6].copy_from_slice(&1u16.to_be_bytes());
    assert!(err(&v1).contains("JFR version 1."));
    // Every single-byte corruption of the first 4 KiB of events is an error or a reading.
    for at in (68..4096).step_by(37) {
        let mut bad = good.clone();
        bad[at] ^= 0xa5;
        let _ = jfr::read(&bad, "x");
    }
}

#[test]
fn a_zero_sized_event_is_an_error_not_a_loop() {
    let mut bad = recording();
    // The first event after the 68-byte header: its size varint becomes 0.
    bad[68] = 0;
    let e = jfr::read(&bad, "x").expect_err("refused").to_string();
    assert!(e.contains("has size 0"), "{e}");
}

/// Any recordings, against the JDK's reader: for each `NAME.jfr` in `EMBERS_JFR_DIR` with the
/// `NAME.tsv` that `tests/data/jfr/expected.py NAME.jfr` wrote beside it (needs a JDK, hence
/// by hand: `EMBERS_JFR_DIR=/tmp/recordings cargo test -p embers-model --test jfr -- --ignored`).
/// Run so on async-profiler's recordings (wall, alloc, multi-chunk) and JDK 11's.
#[test]
#[ignore = "needs recordings and the JDK's jfr tool: see the doc comment"]
fn recordings_in_a_folder_match_the_jdks_reader() {
    let dir = std::env::var("EMBERS_JFR_DIR").expect("EMBERS_JFR_DIR");
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).expect("dir") {
        let path = entry.expect("entry").path();
        let tsv = path.with_extension("tsv");
        if path.extension().is_none_or(|e| e != "jfr") || !tsv.exists() {
            continue;
        }
        let bytes = std::fs::read(&path).expect("read");
        let got = lines(&jfr::read(&bytes, "x").expect("jfr"));
        let want: Vec<String> = std::fs::read_to_string(&tsv)
            .expect("tsv")
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(got, want, "{}", path.display());
        println!("{}: {} stacks agree", path.display(), got.len());
        compared += 1;
    }
    assert!(compared > 0, "no NAME.jfr with NAME.tsv in {dir}");
}

/// The line of `Workload.java` holding `marker`, counted from 1.
fn workload_line(marker: &str) -> u32 {
    let path = embers_model::testkit::data_dir().join("jfr/Workload.java");
    let text = std::fs::read_to_string(path).expect("source");
    text.lines()
        .position(|l| l.contains(marker))
        .expect("marker") as u32
        + 1
}

#[test]
fn read_one_by_one_the_events_are_the_trees_with_times_and_lines() {
    let bytes = recording();
    let timed = jfr::read_timed(&bytes, &Budget::unlimited()).expect("read");
    // Summed per event type and stack, the events are the trees the JDK's reader agrees with.
    let mut summed: std::collections::BTreeMap<String, u64> = Default::default();
    for e in &timed.events {
        let stack = timed.stacks[e.stack as usize].frames.join(";");
        *summed
            .entry(format!("{}\t{stack}", e.event_type))
            .or_default() += e.value;
    }
    let summed: Vec<String> = summed
        .into_iter()
        .map(|(k, v)| format!("{k}\t{v}"))
        .collect();
    assert_eq!(summed, lines(&jfr::read(&bytes, "workload").expect("read")));
    // Times within the 4-second run, on real OS threads.
    let start = jfr::read(&bytes, "x")
        .expect("read")
        .start_nanos
        .expect("start");
    let cpu: Vec<_> = timed
        .events
        .iter()
        .filter(|e| e.event_type == "cpu")
        .collect();
    assert_eq!(cpu.len(), 369);
    assert!(cpu
        .iter()
        .all(|e| (start..start + 6_000_000_000).contains(&e.unix_nanos)));
    assert!(cpu.iter().all(|e| e.tid > 0));
    // Each frame's line: spin's samples are on its loop, hot's on its call of spin.
    let spin_loop = workload_line("for (long i = 0; i < n; i++) x =");
    let hot_call = workload_line("static long hot()");
    let mut on = (0, 0, 0);
    for e in &cpu {
        let s = &timed.stacks[e.stack as usize];
        assert_eq!(s.lines.len(), s.frames.len(), "a line per frame: {s:?}");
        for (frame, line) in s.frames.iter().zip(&s.lines) {
            let Some(line) = line else { continue };
            let class = frame.rsplit_once('.').map_or("", |(class, _)| class);
            assert_eq!(line.file, class, "the class stands for the file");
            match frame.as_str() {
                "Workload.spin" => on.0 += usize::from(line.line == spin_loop),
                "Workload.hot" => on.1 += usize::from(line.line == hot_call),
                _ => {}
            }
        }
        on.2 += usize::from(s.frames.iter().any(|f| f == "Workload.spin"));
    }
    assert!(
        on.0 * 10 >= on.2 * 9,
        "{} of {} spin samples on its loop",
        on.0,
        on.2
    );
    assert!(on.1 > 0, "hot's samples at its call");
}
