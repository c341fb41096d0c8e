//! A workload with known shares, for the collector's tests (server/tests/host_profile.rs), built by the
//! test with plain `rustc -O` (Rust omits frame pointers by default, as does its std).
//!
//! For SECONDS of wall time the main thread spends its CPU time, in rounds of 5-15 ms, 50% in
//! `hot_a`, 30% in `hot_b` and 20% in `in_syscalls` (reading /dev/zero), called from
//! main -> run; a thread named "rsleeper" sleeps NAPS naps of 100 ms (under `sleeper` -> `nap`)
//! and the program prints how long it slept: `slept_us=N`.
//!
//!     rhot SECONDS NAPS

use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::time::{Duration, Instant};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
}

const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn cpu_now() -> f64 {
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: a valid pointer to a timespec-shaped struct.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.sec as f64 + t.nsec as f64 * 1e-9
}

#[inline(never)]
fn hot_a(seconds: f64) {
    let end = cpu_now() + seconds;
    let mut x = 0u64;
    while cpu_now() < end {
        for i in 0..20_000u64 {
            x = black_box(x.wrapping_add(i.wrapping_mul(i)));
        }
    }
    black_box(x);
}

#[inline(never)]
fn hot_b(seconds: f64) {
    let end = cpu_now() + seconds;
    let mut x = 1u64;
    while cpu_now() < end {
        for i in 0..20_000u64 {
            x = black_box(x ^ i.wrapping_add(x >> 3));
        }
    }
    black_box(x);
}

#[inline(never)]
fn in_syscalls(seconds: f64, zero: &mut File, buf: &mut [u8]) {
    let end = cpu_now() + seconds;
    while cpu_now() < end {
        if zero.read(buf).is_err() {
            std::process::exit(2);
        }
    }
}

#[inline(never)]
fn run(seconds: f64, zero: &mut File) {
    let mut buf = vec![0u8; 1 << 16];
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let mut seed = 12345u32;
    while Instant::now() < end {
        // Rounds of 5 to 15 ms, so they do not beat against a ~10 ms sampling period.
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let round = 0.005 + 0.010 * f64::from((seed >> 16) & 0x7fff) / 32768.0;
        hot_a(0.5 * round);
        hot_b(0.3 * round);
        in_syscalls(0.2 * round, zero, &mut buf);
    }
}

/// One nap of 100 ms: the function the test finds at the end of the sleeper's off-CPU stacks.
#[inline(never)]
fn nap() -> Duration {
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    start.elapsed()
}

/// A loop, not a tail call into an iterator's `sum`: its frame stays on the stack.
#[inline(never)]
fn sleeper(naps: u32) -> Duration {
    let mut slept = Duration::ZERO;
    for _ in 0..naps {
        slept += nap();
    }
    slept
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3.0);
    let naps: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let mut zero = File::open("/dev/zero").unwrap_or_else(|_| std::process::exit(2));
    let sleeper = std::thread::Builder::new()
        .name("rsleeper".into())
        .spawn(move || sleeper(naps))
        .unwrap_or_else(|_| std::process::exit(2));
    run(seconds, &mut zero);
    let slept = sleeper.join().unwrap_or_default();
    println!("slept_us={}", slept.as_micros());
}
