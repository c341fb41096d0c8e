//! The per-CPU clocks the on-CPU program hangs off: one `perf_event_open` software CPU-clock
//! event per online CPU, sampling at a frequency, and the list of online CPUs (which can change
//! while the collector runs: a CPU going offline stops its samples, one coming online gets a
//! new event).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use perf_event_open_sys::bindings::{
    perf_event_attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FLAG_FD_CLOEXEC, PERF_TYPE_SOFTWARE,
};

/// Where the kernel lists the online CPUs.
pub const ONLINE: &str = "/sys/devices/system/cpu/online";
/// Where it lists every CPU that can ever come online.
pub const POSSIBLE: &str = "/sys/devices/system/cpu/possible";

/// Parse a kernel CPU list such as `0-3,5,7-8`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let bad = || format!("bad CPU list entry '{part}' in '{}'", text.trim());
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (
                a.parse::<u32>().map_err(|_| bad())?,
                b.parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let n = part.parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if last < first || last - first > 65_536 {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The CPUs online now.
pub fn online_cpus() -> Result<Vec<u32>, String> {
    let text = std::fs::read_to_string(ONLINE).map_err(|e| format!("cannot read {ONLINE}: {e}"))?;
    parse_cpu_list(&text)
}

/// How many CPU numbers there can be (the highest possible CPU + 1).
pub fn possible_cpus() -> Result<u32, String> {
    let text =
        std::fs::read_to_string(POSSIBLE).map_err(|e| format!("cannot read {POSSIBLE}: {e}"))?;
    let cpus = parse_cpu_list(&text)?;
    Ok(cpus.last().map_or(1, |c| c + 1))
}

/// What changed between the CPUs sampled and the CPUs online: (went offline, came online).
pub fn changes(sampled: &[u32], online: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let gone = sampled
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect();
    let new = online
        .iter()
        .copied()
        .filter(|c| !sampled.contains(c))
        .collect();
    (gone, new)
}

/// A CPU-clock event sampling every task on `cpu` `frequency` times a second.
pub fn open_cpu_clock(cpu: u32, frequency: u64) -> io::Result<OwnedFd> {
    let mut attr = perf_event_attr {
        type_: PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<perf_event_attr>() as u32,
        config: u64::from(PERF_COUNT_SW_CPU_CLOCK),
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_freq = frequency;
    attr.set_freq(1);
    let cpu = i32::try_from(cpu).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `attr` is a valid, fully initialised perf_event_attr of the size it states; the
    // syscall only reads it.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(&mut attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC.into())
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a non-negative return is a new file descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,5,7-8\n"), Ok(vec![0, 1, 2, 3, 5, 7, 8]));
        assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
        assert_eq!(parse_cpu_list(""), Ok(vec![]));
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0-99999999").is_err());
    }

    #[test]
    fn cpus_that_went_and_came() {
        assert_eq!(changes(&[0, 1, 2], &[0, 2, 3]), (vec![1], vec![3]));
        assert_eq!(changes(&[0, 1], &[0, 1]), (vec![], vec![]));
    }
}
