//! The records `memory.bpf.c` writes into its ring buffer (`struct mem_event`, a sampled
//! allocation's followed by the copied top of its user stack), read by offset so a short or odd
//! record is an error, never a panic. The offsets are checked against the layout clang gave the
//! C structs (the skeleton's generated types) in the tests.

use thiserror::Error;

use crate::bpf::events::{comm, u16_at, u32_at, u64_at, Regs};

/// Bytes of `struct mem_event`.
pub const MEM_EVENT_BYTES: usize = 96;
/// Most bytes of user stack a record can carry.
pub const MAX_STACK_BYTES: usize = 65536;

const KIND_ALLOC: u16 = 1;
const KIND_FREE: u16 = 2;

/// The allocator function called (`enum allocator`): the leaf frame of its stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Allocator {
    /// `malloc`.
    Malloc,
    /// `calloc`.
    Calloc,
    /// `realloc`.
    Realloc,
    /// glibc's `mmap` of anonymous memory.
    Mmap,
}

impl Allocator {
    /// Its frame, named as the agent names a library function: the "object type" leaf DeepFlow
    /// gives memory profiles (C allocations carry no type; the function says how it was made).
    pub fn frame(self) -> &'static str {
        match self {
            Allocator::Malloc => "[l] malloc",
            Allocator::Calloc => "[l] calloc",
            Allocator::Realloc => "[l] realloc",
            Allocator::Mmap => "[l] mmap",
        }
    }
}

/// A sampled allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alloc<'a> {
    /// Which function allocated.
    pub allocator: Allocator,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The address returned.
    pub addr: u64,
    /// Bytes asked for.
    pub size: u64,
    /// The caller's registers as the allocator returned (ip in the caller).
    pub regs: Regs,
    /// The thread's name.
    pub thread: String,
    /// The process's name.
    pub process: String,
    /// User address of `stack[0]`.
    pub stack_start: u64,
    /// The copied top of the user stack.
    pub stack: &'a [u8],
}

/// One record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemEvent<'a> {
    /// A sampled allocation.
    Alloc(Alloc<'a>),
    /// A tracked allocation was freed.
    Free {
        /// Process id.
        pid: u32,
        /// Its address.
        addr: u64,
    },
}

/// A record that does not have the layout the program writes.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MemEventError {
    /// Shorter than an event.
    #[error("a memory record of {0} bytes is shorter than an event ({MEM_EVENT_BYTES} bytes)")]
    Short(usize),
    /// An unknown kind or allocator.
    #[error("a memory record has unknown kind {0} or allocator {1}")]
    Kind(u16, u16),
}

/// Read one record.
pub fn parse(b: &[u8]) -> Result<MemEvent<'_>, MemEventError> {
    if b.len() < MEM_EVENT_BYTES {
        return Err(MemEventError::Short(b.len()));
    }
    let (kind, allocator) = (u16_at(b, 0), u16_at(b, 2));
    let pid = u32_at(b, 4);
    let addr = u64_at(b, 16);
    match kind {
        KIND_FREE => return Ok(MemEvent::Free { pid, addr }),
        KIND_ALLOC => {}
        _ => return Err(MemEventError::Kind(kind, allocator)),
    }
    let allocator = match allocator {
        0 => Allocator::Malloc,
        1 => Allocator::Calloc,
        2 => Allocator::Realloc,
        3 => Allocator::Mmap,
        _ => return Err(MemEventError::Kind(kind, allocator)),
    };
    let stack_len = (u32_at(b, 12) as usize).min(MAX_STACK_BYTES);
    let stack = b
        .get(MEM_EVENT_BYTES..MEM_EVENT_BYTES + stack_len)
        .unwrap_or(&[]);
    Ok(MemEvent::Alloc(Alloc {
        allocator,
        pid,
        tid: u32_at(b, 8),
        addr,
        size: u64_at(b, 24),
        regs: Regs {
            ip: u64_at(b, 32),
            sp: u64_at(b, 40),
            bp: u64_at(b, 48),
        },
        stack_start: u64_at(b, 56),
        thread: comm(b, 64),
        process: comm(b, 80),
        stack,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::probe::skel::types;
    use std::mem::{offset_of, size_of};

    #[test]
    fn offsets_match_the_c_layout() {
        assert_eq!(size_of::<types::mem_event>(), MEM_EVENT_BYTES);
        assert_eq!(
            size_of::<types::mem_sample>(),
            MEM_EVENT_BYTES + MAX_STACK_BYTES
        );
        assert_eq!(offset_of!(types::mem_event, allocator), 2);
        assert_eq!(offset_of!(types::mem_event, pid), 4);
        assert_eq!(offset_of!(types::mem_event, tid), 8);
        assert_eq!(offset_of!(types::mem_event, stack_len), 12);
        assert_eq!(offset_of!(types::mem_event, addr), 16);
        assert_eq!(offset_of!(types::mem_event, size), 24);
        assert_eq!(offset_of!(types::mem_event, ip), 32);
        assert_eq!(offset_of!(types::mem_event, sp), 40);
        assert_eq!(offset_of!(types::mem_event, bp), 48);
        assert_eq!(offset_of!(types::mem_event, stack_start), 56);
        assert_eq!(offset_of!(types::mem_event, thread), 64);
        assert_eq!(offset_of!(types::mem_event, process), 80);
        assert_eq!(offset_of!(types::live_key, addr), 8);
    }

    fn record(kind: u16, allocator: u16, stack: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; MEM_EVENT_BYTES];
        b[0..2].copy_from_slice(&kind.to_le_bytes());
        b[2..4].copy_from_slice(&allocator.to_le_bytes());
        b[4..8].copy_from_slice(&42u32.to_le_bytes());
        b[8..12].copy_from_slice(&43u32.to_le_bytes());
        b[12..16].copy_from_slice(&(stack.len() as u32).to_le_bytes());
        b[16..24].copy_from_slice(&0x5000u64.to_le_bytes());
        b[24..32].copy_from_slice(&65536u64.to_le_bytes());
        b[32..40].copy_from_slice(&0x1000u64.to_le_bytes());
        b[56..64].copy_from_slice(&0x7ff0_0000u64.to_le_bytes());
        b[64..70].copy_from_slice(b"worker");
        b[80..96].copy_from_slice(b"a-process-name-x");
        b.extend_from_slice(stack);
        b
    }

    #[test]
    fn reads_records_and_bounds_what_their_header_claims() {
        let b = record(KIND_ALLOC, 1, &[1, 2, 3]);
        let MemEvent::Alloc(a) = parse(&b).expect("parses") else {
            panic!("an allocation")
        };
        assert_eq!((a.pid, a.tid, a.addr, a.size), (42, 43, 0x5000, 65536));
        assert_eq!(a.allocator, Allocator::Calloc);
        assert_eq!(a.regs.ip, 0x1000);
        assert_eq!(a.stack_start, 0x7ff0_0000);
        assert_eq!(
            (a.thread.as_str(), a.process.as_str()),
            ("worker", "a-process-name-x")
        );
        assert_eq!(a.stack, &[1, 2, 3]);
        assert_eq!(
            parse(&record(KIND_FREE, 0, &[])),
            Ok(MemEvent::Free {
                pid: 42,
                addr: 0x5000
            })
        );
        let mapped = record(KIND_ALLOC, 3, &[]);
        let Ok(MemEvent::Alloc(m)) = parse(&mapped) else {
            panic!("an allocation")
        };
        assert_eq!(m.allocator.frame(), "[l] mmap");
        assert_eq!(parse(&b[..50]), Err(MemEventError::Short(50)));
        assert_eq!(parse(&record(7, 0, &[])), Err(MemEventError::Kind(7, 0)));
        assert_eq!(
            parse(&record(KIND_ALLOC, 9, &[])),
            Err(MemEventError::Kind(1, 9))
        );
        let mut lying = record(KIND_ALLOC, 0, &[]);
        lying[12..16].copy_from_slice(&1_000_000u32.to_le_bytes());
        let Ok(MemEvent::Alloc(a)) = parse(&lying) else {
            panic!("an allocation")
        };
        assert!(a.stack.is_empty());
    }
}
