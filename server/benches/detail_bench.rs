//! What sample detail costs the SQLite store at ingest: the same collector-shaped load stored
//! plain, with event times (`sample_times`), with source lines (`frames_at`, `line_stacks`,
//! `lines_10m`) and with both — ingest rate (samples/s, timed around `Store::insert` only) and
//! file bytes per sample. The load is what our collector sends: every process's threads sampled
//! at 99 Hz, folded per wall-clock second (one batch per process per second, the events' ms and
//! threads in `details`), plus the per-host `Total` batch, ten seconds per request.
//!
//! Run: `cargo bench -p embers-server --bench detail_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_PROCESSES` (default 8), `EMBERS_BENCH_THREADS` (default 4),
//! `EMBERS_BENCH_SECONDS` (default 300), `EMBERS_BENCH_RUNS` (default 3; the variants run
//! interleaved, the best run of each by CPU time counts), `EMBERS_BENCH_ONLY` (a variant name part).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use embers_model::contract::detail::{SampleDetail, SourceLine, TimedEvent};
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};

mod common;

use common::env_usize as env;

const T0: i64 = 1_700_000_040;
const HZ: u64 = 99;
/// µs per on-CPU sample at 99 Hz.
const WEIGHT: u64 = 10_101;
/// Distinct stacks each thread runs.
const STACKS: usize = 40;
/// Seconds per insert (one request of the collector).
const WINDOW: i64 = 10;

/// Which detail the samples carry.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    times: bool,
    lines: bool,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        name: "plain",
        times: false,
        lines: false,
    },
    Variant {
        name: "event times",
        times: true,
        lines: false,
    },
    Variant {
        name: "lines",
        times: false,
        lines: true,
    },
    Variant {
        name: "times + lines",
        times: true,
        lines: true,
    },
];

struct Load {
    processes: usize,
    threads: usize,
    seconds: i64,
}

/// Stack `k` of a thread of `process`: 8–30 frames under `[t] <thread>`, with a line per frame.
fn stack(process: usize, thread: usize, k: usize) -> (String, Vec<Option<SourceLine>>) {
    let depth = 8 + (k * 7 + process) % 23;
    let mut frames = vec![format!("[t] worker-{thread}")];
    let mut lines = vec![None];
    for d in 0..depth {
        // Shared trunk, then branches per stack: as real call trees fan out near the leaves.
        let f = if d < depth / 2 { d } else { d * 100 + k };
        frames.push(format!("app{process}::module_{}::function_{f}", f % 9));
        lines.push(Some(SourceLine {
            file: format!("src/module_{}.rs", f % 9),
            line: 10 + (f * 13 + k % 3) as u32 % 500,
        }));
    }
    (frames.join(";"), lines)
}

/// One process's batch of one second (`app_service` is the process), and its samples per
/// thread for the `Total` batch.
fn process_second(v: Variant, load: &Load, process: usize, time: i64) -> (Batch, Vec<u64>) {
    let mut rows: BTreeMap<(usize, usize), Vec<TimedEvent>> = BTreeMap::new();
    let mut per_thread = vec![0u64; load.threads];
    for (thread, count) in per_thread.iter_mut().enumerate() {
        for i in 0..HZ {
            // A cheap hash picks the stack, skewed to the first few as hot code is.
            let h = (time as u64 ^ (process * 131 + thread * 17) as u64)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(i * 7919)
                % (STACKS * STACKS) as u64;
            let k = (h as f64).sqrt() as usize;
            rows.entry((thread, k)).or_default().push(TimedEvent {
                offset_ms: (i * 1000 / HZ) as u16,
                tid: 1000 * process as u32 + thread as u32,
                weight: WEIGHT,
            });
            *count += 1;
        }
    }
    let samples = rows
        .into_iter()
        .map(|((thread, k), events)| {
            let (text, lines) = stack(process, thread, k);
            let detail = (v.times || v.lines).then(|| {
                Box::new(SampleDetail {
                    lines: if v.lines { lines } else { vec![] },
                    events: if v.times { events.clone() } else { vec![] },
                })
            });
            Sample {
                time,
                stack: text,
                value: WEIGHT * events.len() as u64,
                detail,
            }
        })
        .collect();
    let mut b = batch(format!("proc-{process}"));
    b.samples = samples;
    (b, per_thread)
}

fn batch(app_service: String) -> Batch {
    Batch {
        meta: BatchMeta {
            app_service,
            language: "eBPF".into(),
            event_type: "on-cpu".into(),
            unit: "microseconds".into(),
            tags: Tags::new().with("host", "node-1").unwrap_or_default(),
        },
        samples: Vec::new(),
    }
}

/// The batches of one request: `WINDOW` seconds from `start`, every process and `Total`.
fn request(v: Variant, load: &Load, start: i64) -> (Vec<Batch>, u64) {
    let mut out = Vec::new();
    let mut samples = 0;
    for time in start..start + WINDOW {
        let mut total = batch("Total".into());
        for process in 0..load.processes {
            let (b, per_thread) = process_second(v, load, process, time);
            for (thread, n) in per_thread.iter().enumerate() {
                samples += n;
                // The host graph has no lines (its frames are processes and threads).
                let events: Vec<TimedEvent> = (0..*n)
                    .map(|i| TimedEvent {
                        offset_ms: (i * 1000 / HZ) as u16,
                        tid: 1000 * process as u32 + thread as u32,
                        weight: WEIGHT,
                    })
                    .collect();
                total.samples.push(Sample {
                    time,
                    stack: format!("[p] proc-{process};[t] worker-{thread}"),
                    value: WEIGHT * n,
                    detail: v.times.then(|| {
                        Box::new(SampleDetail {
                            lines: vec![],
                            events,
                        })
                    }),
                });
            }
            out.push(b);
        }
        out.push(total);
    }
    (out, samples)
}

/// Bytes of the store's files (database and write-ahead log).
fn file_bytes(path: &Path) -> u64 {
    let wal = path.with_extension("db-wal");
    [path, wal.as_path()]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// CPU time of the calling thread (the store's writer runs on it): less disturbed by other
/// work on a shared machine than the wall clock.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// What one variant's run measured.
#[derive(Clone, Copy)]
struct Measured {
    samples: u64,
    /// Wall time inside `insert`.
    wall: Duration,
    /// The thread's CPU time inside `insert`.
    cpu: Duration,
    bytes: u64,
}

/// One variant stored into a fresh store.
fn run(v: Variant, load: &Load) -> Result<Measured, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("detail.db");
    let store = Store::open(&path).map_err(|e| e.to_string())?;
    let (mut samples, mut wall, mut cpu) = (0, Duration::ZERO, Duration::ZERO);
    let mut start = T0;
    while start < T0 + load.seconds {
        let (batches, n) = request(v, load, start);
        let (t, c) = (Instant::now(), thread_cpu());
        store.insert(&batches).map_err(|e| e.to_string())?;
        cpu += thread_cpu().saturating_sub(c);
        wall += t.elapsed();
        samples += n;
        start += WINDOW;
    }
    drop(store);
    Ok(Measured {
        samples,
        wall,
        cpu,
        bytes: file_bytes(&path),
    })
}

fn rate(samples: u64, d: Duration) -> f64 {
    samples as f64 / d.as_secs_f64().max(1e-9)
}

fn main() {
    let load = Load {
        processes: env("EMBERS_BENCH_PROCESSES", 8).max(1),
        threads: env("EMBERS_BENCH_THREADS", 4).max(1),
        seconds: i64::try_from(env("EMBERS_BENCH_SECONDS", 300))
            .unwrap_or(300)
            .max(WINDOW),
    };
    let runs = env("EMBERS_BENCH_RUNS", 3).max(1);
    // `EMBERS_BENCH_ONLY=times` runs the variants whose name contains it (for `perf record`).
    let only = std::env::var("EMBERS_BENCH_ONLY").unwrap_or_default();
    let variants: Vec<Variant> = VARIANTS
        .into_iter()
        .filter(|v| v.name.contains(only.as_str()))
        .collect();
    println!(
        "embers detail bench: {} processes x {} threads at {HZ} Hz for {} s, {WINDOW} s per \
         insert; variants interleaved, best of {runs} by CPU time",
        load.processes, load.threads, load.seconds
    );
    let mut best: Vec<Option<Measured>> = vec![None; variants.len()];
    for _ in 0..runs {
        for (v, slot) in variants.iter().zip(best.iter_mut()) {
            match run(*v, &load) {
                Ok(m) if slot.is_none_or(|b| m.cpu < b.cpu) => *slot = Some(m),
                Ok(_) => {}
                Err(e) => return eprintln!("{}: {e}", v.name),
            }
        }
    }
    // Only a run that includes the plain variant (always first) compares against it.
    let plain = variants
        .first()
        .filter(|v| !v.times && !v.lines)
        .and(best.first().copied().flatten())
        .map(|m| rate(m.samples, m.cpu));
    for (v, m) in variants.iter().zip(best) {
        let Some(m) = m else { continue };
        let cpu_rate = rate(m.samples, m.cpu);
        let vs = match plain {
            Some(p) if v.times || v.lines => {
                format!("({:+.1}% vs plain)", (cpu_rate / p - 1.0) * 100.0)
            }
            _ => String::new(),
        };
        println!(
            "  {:<14} {cpu_rate:>9.0} samples/s of CPU {vs:<18} (wall {:>9.0}/s) {:>7.2} bytes/sample",
            v.name,
            rate(m.samples, m.wall),
            m.bytes as f64 / m.samples as f64
        );
    }
}
