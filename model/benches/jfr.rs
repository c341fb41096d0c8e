//! Reading JFR: the real recording of `tests/data/jfr` (OpenJDK 17, 181 KB, one chunk) and the
//! same recording as 50 chunks of one file (9 MB, what a long `jcmd JFR.dump` looks like to the
//! reader), with throughput and, once, the peak memory while reading.
//!
//! Run: `cargo bench -p embers-model --bench jfr`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use embers_model::wire::jfr;

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn recording() -> Vec<u8> {
    let path = embers_model::testkit::data_dir().join("jfr/workload.jfr.gz");
    let gz = std::fs::read(&path).expect("recording");
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// Peak bytes held while reading `bytes`, over what was held before.
fn peak_while_reading(bytes: &[u8]) -> usize {
    let before = CURRENT.load(Relaxed);
    PEAK.store(before, Relaxed);
    let r = jfr::read(bytes, "app").expect("read");
    let peak = PEAK.load(Relaxed) - before;
    drop(r);
    peak
}

fn bench(c: &mut Criterion) {
    let one = recording();
    let fifty: Vec<u8> = one.iter().copied().cycle().take(one.len() * 50).collect();
    for (name, bytes) in [("1 chunk", &one), ("50 chunks", &fifty)] {
        let peak = peak_while_reading(bytes);
        println!(
            "jfr {name}: {:.1} MB in, peak {:.1} MB while reading ({:.1}x)",
            bytes.len() as f64 / 1e6,
            peak as f64 / 1e6,
            peak as f64 / bytes.len() as f64
        );
    }
    let mut g = c.benchmark_group("jfr");
    g.sample_size(10);
    for (name, bytes) in [("read 1 chunk", &one), ("read 50 chunks", &fifty)] {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| jfr::read(bytes, "app").map(|r| r.profiles.len()))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
