//! The records the BPF program writes into its ring buffer (`struct event`, optionally followed
//! by the copied user stack: `struct sample` in `profile.bpf.c`), read by offset so a short or
//! odd record is an error, never a panic. The offsets are checked against the layout clang gave
//! the C structs (the skeleton's generated types) in the tests.

use thiserror::Error;

/// Kernel frames a record holds at most.
pub const KERNEL_DEPTH: usize = 64;
/// Frame-pointer user frames a record holds at most.
pub const USER_DEPTH: usize = 64;
/// Bytes of `struct event`.
pub const EVENT_BYTES: usize = TIME_AT + 8;
/// Offset of `time_ns`, the event's last member (after the kernel and user addresses).
const TIME_AT: usize = 96 + 8 * (KERNEL_DEPTH + USER_DEPTH);
/// Most bytes of user stack a `struct sample` can carry.
pub const MAX_STACK_BYTES: usize = 65536;

const KIND_ON_CPU: u16 = 1;
const KIND_OFF_CPU: u16 = 2;
/// `TASK_KERNEL_THREAD` of `enum task_flag`.
pub const TASK_KERNEL_THREAD: u32 = 1;

/// What the record measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One on-CPU sample.
    OnCpu,
    /// One wait of `value` nanoseconds.
    OffCpu,
}

/// The user registers saved when the kernel was entered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    /// Instruction pointer.
    pub ip: u64,
    /// Stack pointer.
    pub sp: u64,
    /// Frame pointer.
    pub bp: u64,
}

/// One record, borrowing the ring buffer's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// What it measured.
    pub kind: Kind,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Whether the task is a kernel thread (`PF_KTHREAD`, as the kernel saw it).
    pub kernel_thread: bool,
    /// On-CPU: samples (1); off-CPU: nanoseconds waited.
    pub value: u64,
    /// User registers (all 0 for a kernel thread).
    pub regs: Regs,
    /// The thread's name.
    pub thread: String,
    /// The process's name (its main thread's).
    pub process: String,
    /// Kernel return addresses, leaf first.
    pub kernel: Vec<u64>,
    /// Frame-pointer user return addresses, leaf first (off-CPU and fp mode).
    pub user: Vec<u64>,
    /// User address of `stack[0]`.
    pub stack_start: u64,
    /// The copied top of the user stack (on-CPU, dwarf mode).
    pub stack: &'a [u8],
}

/// A record that does not have the layout the program writes.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EventError {
    /// Shorter than its header says.
    #[error("a ring buffer record of {0} bytes is shorter than an event ({EVENT_BYTES} bytes)")]
    Short(usize),
    /// An unknown kind.
    #[error("a ring buffer record has unknown kind {0}")]
    Kind(u16),
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// A NUL-terminated name of at most 16 bytes, lossily as UTF-8.
pub(crate) fn comm(b: &[u8], at: usize) -> String {
    let raw = b.get(at..at + 16).unwrap_or(&[]);
    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

fn addrs(b: &[u8], at: usize, len: u16, max: usize) -> Vec<u64> {
    (0..usize::from(len).min(max))
        .map(|i| u64_at(b, at + 8 * i))
        .take_while(|&a| a != 0)
        .collect()
}

/// When a record's event happened: `bpf_ktime_get_ns()` (CLOCK_MONOTONIC) as the BPF program
/// stamped it (`None` for a record shorter than an event). Read apart from [`parse`] so the
/// [`Event`] others build stays as it is.
pub fn time_ns(b: &[u8]) -> Option<u64> {
    (b.len() >= EVENT_BYTES).then(|| u64_at(b, TIME_AT))
}

/// Whether a record is an off-CPU wait (read before [`parse`], to keep waits first).
pub fn is_off_cpu(b: &[u8]) -> bool {
    b.len() >= 2 && u16_at(b, 0) == KIND_OFF_CPU
}

/// Read one record.
pub fn parse(b: &[u8]) -> Result<Event<'_>, EventError> {
    if b.len() < EVENT_BYTES {
        return Err(EventError::Short(b.len()));
    }
    let kind = match u16_at(b, 0) {
        KIND_ON_CPU => Kind::OnCpu,
        KIND_OFF_CPU => Kind::OffCpu,
        other => return Err(EventError::Kind(other)),
    };
    let stack_len = (u32_at(b, 56) as usize).min(MAX_STACK_BYTES);
    let stack = b.get(EVENT_BYTES..EVENT_BYTES + stack_len).unwrap_or(&[]);
    Ok(Event {
        kind,
        pid: u32_at(b, 4),
        tid: u32_at(b, 8),
        kernel_thread: u32::from(u16_at(b, 2)) & TASK_KERNEL_THREAD != 0,
        value: u64_at(b, 16),
        regs: Regs {
            ip: u64_at(b, 24),
            sp: u64_at(b, 32),
            bp: u64_at(b, 40),
        },
        stack_start: u64_at(b, 48),
        thread: comm(b, 64),
        process: comm(b, 80),
        kernel: addrs(b, 96, u16_at(b, 60), KERNEL_DEPTH),
        user: addrs(b, 96 + 8 * KERNEL_DEPTH, u16_at(b, 62), USER_DEPTH),
        stack,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::skel::types;
    use std::mem::{offset_of, size_of};

    #[test]
    fn offsets_match_the_c_layout() {
        assert_eq!(size_of::<types::event>(), EVENT_BYTES);
        assert_eq!(size_of::<types::sample>(), EVENT_BYTES + MAX_STACK_BYTES);
        assert_eq!(offset_of!(types::event, flags), 2);
        assert_eq!(offset_of!(types::event, pid), 4);
        assert_eq!(offset_of!(types::event, tid), 8);
        assert_eq!(offset_of!(types::event, value), 16);
        assert_eq!(offset_of!(types::event, ip), 24);
        assert_eq!(offset_of!(types::event, sp), 32);
        assert_eq!(offset_of!(types::event, bp), 40);
        assert_eq!(offset_of!(types::event, stack_start), 48);
        assert_eq!(offset_of!(types::event, stack_len), 56);
        assert_eq!(offset_of!(types::event, kernel_len), 60);
        assert_eq!(offset_of!(types::event, user_len), 62);
        assert_eq!(offset_of!(types::event, thread), 64);
        assert_eq!(offset_of!(types::event, process), 80);
        assert_eq!(offset_of!(types::event, kernel), 96);
        assert_eq!(offset_of!(types::event, user), 96 + 8 * KERNEL_DEPTH);
        assert_eq!(offset_of!(types::event, time_ns), TIME_AT);
        assert_eq!(offset_of!(types::sample, stack), EVENT_BYTES);
    }

    fn record(kind: u16, stack: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; EVENT_BYTES];
        b[0..2].copy_from_slice(&kind.to_le_bytes());
        b[4..8].copy_from_slice(&42u32.to_le_bytes());
        b[8..12].copy_from_slice(&43u32.to_le_bytes());
        b[16..24].copy_from_slice(&5_000_000u64.to_le_bytes());
        b[24..32].copy_from_slice(&0x1000u64.to_le_bytes());
        b[48..56].copy_from_slice(&0x7ff0_0000u64.to_le_bytes());
        b[56..60].copy_from_slice(&(stack.len() as u32).to_le_bytes());
        b[60..62].copy_from_slice(&3u16.to_le_bytes());
        b[62..64].copy_from_slice(&900u16.to_le_bytes());
        b[64..70].copy_from_slice(b"worker");
        b[80..96].copy_from_slice(b"a-process-name-x");
        for (i, a) in [0xffff_0001u64, 0xffff_0002, 0xffff_0003]
            .iter()
            .enumerate()
        {
            b[96 + 8 * i..104 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        b[96 + 8 * KERNEL_DEPTH..104 + 8 * KERNEL_DEPTH].copy_from_slice(&7u64.to_le_bytes());
        b[TIME_AT..EVENT_BYTES].copy_from_slice(&123_456_789u64.to_le_bytes());
        b.extend_from_slice(stack);
        b
    }

    #[test]
    fn reads_a_record_and_bounds_what_its_header_claims() {
        let b = record(KIND_OFF_CPU, &[1, 2, 3, 4]);
        let e = parse(&b).expect("parses");
        assert_eq!(time_ns(&b), Some(123_456_789));
        assert_eq!(time_ns(&b[..EVENT_BYTES - 1]), None);
        assert_eq!(e.kind, Kind::OffCpu);
        assert_eq!((e.pid, e.tid, e.value), (42, 43, 5_000_000));
        assert_eq!(e.regs.ip, 0x1000);
        assert_eq!(e.thread, "worker");
        assert_eq!(e.process, "a-process-name-x", "16 bytes without a NUL");
        assert_eq!(e.kernel, vec![0xffff_0001, 0xffff_0002, 0xffff_0003]);
        assert_eq!(
            e.user,
            vec![7],
            "a claimed 900 frames stop at the array and at a 0"
        );
        assert_eq!(e.stack, &[1, 2, 3, 4]);
        assert_eq!(e.stack_start, 0x7ff0_0000);
        assert!(!e.kernel_thread);
        let mut kthread = record(KIND_ON_CPU, &[]);
        kthread[2..4].copy_from_slice(&1u16.to_le_bytes());
        assert!(parse(&kthread).expect("parses").kernel_thread);
        assert_eq!(parse(&b[..100]), Err(EventError::Short(100)));
        assert_eq!(parse(&record(9, &[])), Err(EventError::Kind(9)));
        let mut lying = record(KIND_ON_CPU, &[]);
        lying[56..60].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(parse(&lying).expect("parses").stack.is_empty());
    }
}
