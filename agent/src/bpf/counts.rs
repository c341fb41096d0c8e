//! fp mode: the kernel counts samples per (pid, tid, kernel stack id, user stack id) in one of
//! two map sets while user space drains the other. At a window's end the program is switched to
//! the other set, and the set it leaves is read — counts, the stacks their ids name, the
//! threads' names — and emptied.

use std::time::Duration;

use libbpf_rs::{MapCore, MapFlags, MapMut};

use super::events::{KERNEL_DEPTH, TASK_KERNEL_THREAD};
use super::skel::ProfileSkel;

/// How long a sample already running when the set is switched may take to finish; BPF
/// programs run to completion in microseconds.
const SETTLE: Duration = Duration::from_millis(5);

/// One drained count: a thread's stacks and how many samples had them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drained {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Whether the task is a kernel thread.
    pub kernel_thread: bool,
    /// The thread's name.
    pub thread: String,
    /// The process's name.
    pub process: String,
    /// Kernel addresses, leaf first.
    pub kernel: Vec<u64>,
    /// Frame-pointer user addresses, leaf first.
    pub user: Vec<u64>,
    /// Samples.
    pub count: u64,
}

/// One count key (`struct count_key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountKey {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel stack id (negative: none).
    pub kernel: i32,
    /// User stack id (negative: none).
    pub user: i32,
    /// Whether the task is a kernel thread (`TASK_KERNEL_THREAD` in its flags).
    pub kernel_thread: bool,
}

fn word(b: &[u8], at: usize) -> Option<[u8; 4]> {
    b.get(at..at + 4)?.try_into().ok()
}

impl CountKey {
    /// Read a key's 20 bytes.
    pub fn parse(b: &[u8]) -> Option<CountKey> {
        Some(CountKey {
            pid: u32::from_ne_bytes(word(b, 0)?),
            tid: u32::from_ne_bytes(word(b, 4)?),
            kernel: i32::from_ne_bytes(word(b, 8)?),
            user: i32::from_ne_bytes(word(b, 12)?),
            kernel_thread: u32::from_ne_bytes(word(b, 16)?) & TASK_KERNEL_THREAD != 0,
        })
    }
}

/// A stack map value: return addresses, leaf first, ending at the first 0.
pub fn parse_stack(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .take(KERNEL_DEPTH)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .take_while(|&a| a != 0)
        .collect()
}

/// `struct names`: two NUL-terminated 16-byte names, (thread, process).
pub fn parse_names(b: &[u8]) -> (String, String) {
    let name = |r: &[u8]| {
        let end = r.iter().position(|&c| c == 0).unwrap_or(r.len());
        String::from_utf8_lossy(&r[..end]).into_owned()
    };
    (
        name(b.get(..16).unwrap_or(&[])),
        name(b.get(16..32).unwrap_or(&[])),
    )
}

fn stack(map: &MapMut<'_>, id: i32) -> Vec<u64> {
    if id < 0 {
        return Vec::new();
    }
    match map.lookup(&id.to_ne_bytes(), MapFlags::ANY) {
        Ok(Some(v)) => parse_stack(&v),
        _ => Vec::new(),
    }
}

fn clear(map: &MapMut<'_>) {
    let keys: Vec<Vec<u8>> = map.keys().collect();
    for k in keys {
        let _ = map.delete(&k);
    }
}

/// Switch the program to the other map set and drain the one it leaves.
pub fn drain(skel: &mut ProfileSkel<'static>) -> Vec<Drained> {
    let mut out = Vec::new();
    let Some(bss) = skel.maps.bss_data.as_deref_mut() else {
        return out;
    };
    let old = bss.window;
    // SAFETY: `window` is a field of the program's mapped .bss; a volatile write makes the
    // switch visible to the program's next run.
    unsafe { std::ptr::write_volatile(&mut bss.window, old.wrapping_add(1)) };
    std::thread::sleep(SETTLE);
    let (counts, stacks) = if old & 1 == 0 {
        (&skel.maps.counts0, &skel.maps.stacks0)
    } else {
        (&skel.maps.counts1, &skel.maps.stacks1)
    };
    let keys: Vec<Vec<u8>> = counts.keys().collect();
    for raw in &keys {
        let (Some(key), Ok(Some(value))) =
            (CountKey::parse(raw), counts.lookup(raw, MapFlags::ANY))
        else {
            continue;
        };
        let n = value
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_ne_bytes);
        let tid = key.tid.to_ne_bytes();
        let (thread, process) = match skel.maps.threads.lookup(&tid, MapFlags::ANY) {
            Ok(Some(v)) => parse_names(&v),
            _ => Default::default(),
        };
        out.push(Drained {
            pid: key.pid,
            tid: key.tid,
            kernel_thread: key.kernel_thread,
            thread,
            process,
            kernel: stack(stacks, key.kernel),
            user: stack(stacks, key.user),
            count: n,
        });
    }
    for raw in &keys {
        let _ = counts.delete(raw);
    }
    clear(stacks);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::skel::types;
    use std::mem::size_of;

    #[test]
    fn parses_keys_stacks_and_names_as_laid_out_in_c() {
        assert_eq!(size_of::<types::count_key>(), 20);
        assert_eq!(size_of::<types::names>(), 32);
        let mut raw = Vec::new();
        for v in [7u32, 8] {
            raw.extend_from_slice(&v.to_ne_bytes());
        }
        raw.extend_from_slice(&(-14i32).to_ne_bytes());
        raw.extend_from_slice(&3i32.to_ne_bytes());
        raw.extend_from_slice(&TASK_KERNEL_THREAD.to_ne_bytes());
        assert_eq!(
            CountKey::parse(&raw),
            Some(CountKey {
                pid: 7,
                tid: 8,
                kernel: -14,
                user: 3,
                kernel_thread: true,
            })
        );
        assert_eq!(CountKey::parse(&raw[..16]), None);
        let mut stack = vec![0u8; 8 * KERNEL_DEPTH];
        stack[..8].copy_from_slice(&5u64.to_ne_bytes());
        stack[8..16].copy_from_slice(&6u64.to_ne_bytes());
        assert_eq!(parse_stack(&stack), vec![5, 6]);
        let mut names = vec![0u8; 32];
        names[..3].copy_from_slice(b"top");
        names[16..20].copy_from_slice(b"prog");
        assert_eq!(parse_names(&names), ("top".into(), "prog".into()));
    }
}
