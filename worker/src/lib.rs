//! The page's two workers and the messages they exchange with it, in one place for both sides.
//!
//! A worker per job: the answer decoder (`decode_worker`, [`answer`]) starts with the page and
//! reads ProfileTracing answers; the file reader (`file_worker`, [`import`]) carries the
//! readers of other profilers' formats and the pprof writer, and loads only when a user opens
//! or exports a file. Each binary links only its own job's code (the other's is never called
//! there, so the linker drops it). [`message`] holds the requests and replies, [`job`] what a
//! request asks for, [`serve`] the listening loop both share.

pub mod answer;
pub mod error;
pub mod import;
pub mod job;
pub mod message;
pub mod serve;
pub mod warm_up;

pub use answer::answer;
pub use error::{JobError, MessageError};
pub use job::{Job, WorkerKind};
pub use message::{DecodeReply, DecodeRequest};

/// What the worker posts once it listens (messages sent before that would be lost).
pub const READY: &str = "embers-decode-worker:ready";
/// What the worker posts once its warm-up is done: from then on a body decodes at full speed
/// without waiting for a warm-up slice.
pub const WARM: &str = "embers-decode-worker:warm";

/// Heap the worker writes to while it warms up, then frees (see [`prefault`]): about what a
/// 100k-node shape-B answer (2.5 MB) needs at its peak, and the first 48 MB of a bigger one's.
pub const PREFAULT_BYTES: usize = 48 << 20;

/// A buffer of `bytes` with every page of it written. Freed, its memory stays in the
/// allocator (wasm memory never shrinks), so the decode that follows allocates pages that are
/// already backed. Writing a fresh wasm page the first time costs ~0.75–1 ms per MB on this
/// machine (measured in the worker: 20 MB took 20 ms, 220 MB 160 ms); a 100k-node decode
/// spent a third of its time on that (tables 21 → 9 ms once its memory had been written).
pub fn prefault(bytes: usize) -> Vec<u8> {
    let mut buffer = vec![1u8; bytes];
    // Keep the writes: a buffer freed unread would let the compiler drop them.
    std::hint::black_box(&mut buffer);
    buffer
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefault_writes_every_byte_of_its_buffer() {
        let buffer = super::prefault(3 << 20);
        assert_eq!(buffer.len(), 3 << 20);
        assert!(buffer.iter().all(|&b| b == 1));
    }
}
