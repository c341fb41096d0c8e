//! A counting global allocator, so every target can check "bounded memory for bounded input".
//!
//! libFuzzer's `-malloc_limit_mb` needs a sanitizer's malloc hooks, and no sanitizer builds on
//! stable Rust; `-rss_limit_mb` only samples the process once a second. So the allocator itself
//! keeps the live byte count and its peak, and [`bounded`] checks the peak of one call against a
//! budget proportional to the input. A single request above the budget aborts at once (before
//! the system is asked for gigabytes): that is what `Vec::with_capacity(number_from_input)`
//! looks like, and libFuzzer saves the input as a crash.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Bytes the parsers may hold at once per input byte. Generous on purpose: the check is after
/// allocations driven by numbers *in* the input, which exceed any linear bound by orders of
/// magnitude. (Measured peaks: 25-45x for folded text of short frames, the worst case seen.)
pub const BYTES_PER_INPUT_BYTE: usize = 128;
/// Fixed allowance per input: hash tables, error strings, serde's scratch.
pub const BASE_BYTES: usize = 16 << 20;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Largest single request allowed right now (`usize::MAX` outside [`bounded`]).
static SINGLE_LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The allocator: [`System`], counting.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            note_alloc(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

fn note_alloc(size: usize) {
    if size > SINGLE_LIMIT.load(Relaxed) {
        // No formatting here: it could allocate, and we are inside the allocator.
        let _ = std::io::stderr()
            .write_all(b"embers-fuzz: one allocation exceeds the memory budget of this input\n");
        std::process::abort();
    }
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

/// The memory budget of an input of `len` bytes.
pub fn budget(len: usize) -> usize {
    len.saturating_mul(BYTES_PER_INPUT_BYTE)
        .saturating_add(BASE_BYTES)
}

/// Runs `f` (which parses an input of `len` bytes) and panics if it held more than
/// [`budget`]`(len)` bytes at any moment. Not reentrant; the fuzzers run one input at a time.
pub fn bounded<R>(len: usize, f: impl FnOnce() -> R) -> R {
    let limit = budget(len);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    SINGLE_LIMIT.store(limit, Relaxed);
    let out = f();
    SINGLE_LIMIT.store(usize::MAX, Relaxed);
    let used = PEAK.load(Relaxed).saturating_sub(base);
    crate::check::show(
        "memory",
        format!("held {used} bytes at most for {len} input bytes").as_bytes(),
    );
    assert!(
        used <= limit,
        "held {used} bytes at once for {len} input bytes (budget {limit})"
    );
    out
}
