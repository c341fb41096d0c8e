//! The kernel side, from user space: loads `profile.bpf.c` (its libbpf-rs skeleton is built by
//! `build.rs`), sets its options, opens a CPU-clock perf event on every online CPU and attaches
//! the on-CPU program to each, attaches the off-CPU programs (to `sched_switch` and
//! `rseq_update`) when asked, and hands every ring buffer record to a callback (read out of the
//! kernel by a thread of its own, [`drain`], so naming a window never overflows it). It also
//! reads the program's counters and keeps the CPUs sampled in step with the CPUs online.

pub mod counts;
pub mod drain;
pub mod events;
pub mod perf;

use std::mem::MaybeUninit;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::time::Duration;

use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags, OpenObject, RingBuffer, RingBufferBuilder};

use crate::error::AgentError;
use crate::options::{Options, Unwind};
pub use crate::report::KernelStats;

#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    unused,
    non_camel_case_types
)]
pub(crate) mod skel {
    include!(concat!(env!("OUT_DIR"), "/profile.skel.rs"));
}

use skel::{ProfileSkel, ProfileSkelBuilder};

/// How many counters the program keeps (`STAT_COUNT`).
const STATS: usize = 7;

/// The counters from their slots (in `enum stat` order).
fn from_slots(s: &[u64; STATS]) -> KernelStats {
    KernelStats {
        samples: s[0],
        lost_events: s[1],
        lost_counts: s[2],
        lost_stacks: s[3],
        no_user_stack: s[4],
        blocks: s[5],
        late_waits: s[6],
    }
}

/// The off-CPU programs attached: `sched_switch`, and `rseq_update` where the kernel has it
/// (without it every wait is finished at the task's next switch; see `profile.bpf.c`).
fn attach_switch(skel: &ProfileSkel<'static>) -> Result<Vec<Link>, AgentError> {
    let mut links = vec![skel
        .progs
        .on_switch
        .attach()
        .map_err(|e| AgentError::bpf("attached to sched_switch", e))?];
    if skel.progs.on_resume.autoload() {
        links.push(
            skel.progs
                .on_resume
                .attach()
                .map_err(|e| AgentError::bpf("attached to rseq_update", e))?,
        );
    }
    Ok(links)
}

/// Whether the running kernel has the `rseq_update` tracepoint.
fn has_rseq_tracepoint() -> bool {
    libbpf_rs::btf::Btf::from_vmlinux().is_ok_and(|btf| {
        btf.type_by_name::<libbpf_rs::btf::types::Typedef<'_>>("btf_trace_rseq_update")
            .is_some()
    })
}

struct Cpu {
    id: u32,
    _link: Link,
}

/// What each ring buffer record is handed to.
type OnRecord = Box<dyn FnMut(&[u8])>;

/// The loaded, attached program. Field order is drop order: the ring buffer (in its reader)
/// and links go before the maps and programs they use.
pub struct Probe {
    drain: drain::Drain,
    on_record: OnRecord,
    cpus: Vec<Cpu>,
    _switch: Vec<Link>,
    skel: ProfileSkel<'static>,
    frequency: u64,
}

/// Ring buffer size: room for about a second of stack copies from every CPU at 99 Hz.
fn ring_bytes(unwind: Unwind, cpus: usize, stack_bytes: u32) -> u32 {
    let wanted = match unwind {
        Unwind::Dwarf => cpus.max(1) * 128 * (stack_bytes as usize + events::EVENT_BYTES),
        Unwind::Fp => 4 << 20,
    };
    wanted.clamp(8 << 20, 256 << 20).next_power_of_two() as u32
}

/// The program's ring buffer, read by a [`drain::Drain`] into a queue of at most `cap` bytes.
fn ring_buffer(skel: &ProfileSkel<'static>, cap: usize) -> Result<drain::Drain, AgentError> {
    let (mut push, queued) = drain::Drain::queue(cap);
    let mut builder = RingBufferBuilder::new();
    builder
        .add(&skel.maps.events, move |data: &[u8]| {
            push(data);
            0
        })
        .map_err(|e| AgentError::bpf("connected to its ring buffer", e))?;
    let ring: RingBuffer<'static> = builder
        .build()
        .map_err(|e| AgentError::bpf("connected to its ring buffer", e))?;
    drain::Drain::start(ring, queued)
        .map_err(|e| AgentError::bpf("connected to its ring buffer", e))
}

impl Probe {
    /// Load, configure and attach; every ring buffer record goes to `on_record` (during
    /// [`Probe::poll`]).
    pub fn start(
        options: &Options,
        on_record: impl FnMut(&[u8]) + 'static,
    ) -> Result<Probe, AgentError> {
        let online = perf::online_cpus().map_err(AgentError::NoCpu)?;
        let ring_size = ring_bytes(options.unwind, online.len(), options.stack_bytes);
        // The skeleton borrows its object for its whole life; one small leak per start.
        let object: &'static mut MaybeUninit<OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let mut open = ProfileSkelBuilder::default()
            .open(object)
            .map_err(|e| AgentError::bpf("opened", e))?;
        let rodata = open
            .maps
            .rodata_data
            .as_deref_mut()
            .ok_or_else(|| AgentError::bpf("configured", "no .rodata section"))?;
        rodata.copy_stacks = options.unwind == Unwind::Dwarf;
        rodata.include_idle = options.include_idle;
        rodata.min_block_ns = u64::try_from(options.min_block.as_nanos()).unwrap_or(u64::MAX);
        rodata.stack_bytes = options.stack_bytes;
        let possible = perf::possible_cpus().map_err(AgentError::NoCpu)?;
        open.maps
            .sample_scratch
            .set_max_entries(possible)
            .map_err(|e| AgentError::bpf("configured", e))?;
        open.maps
            .events
            .set_max_entries(ring_size)
            .map_err(|e| AgentError::bpf("configured", e))?;
        open.progs.on_switch.set_autoload(options.off_cpu);
        let rseq = options.off_cpu && has_rseq_tracepoint();
        if options.off_cpu && !rseq {
            tracing::info!(
                "this kernel has no rseq_update tracepoint: off-CPU user stacks are read at \
                 each task's next switch, or are its leaf frame alone"
            );
        }
        open.progs.on_resume.set_autoload(rseq);
        open.maps
            .switch_scratch
            .set_max_entries(if options.off_cpu { possible } else { 1 })
            .map_err(|e| AgentError::bpf("configured", e))?;
        let skel = open.load().map_err(|e| AgentError::bpf("loaded", e))?;
        let _switch = if options.off_cpu {
            attach_switch(&skel)?
        } else {
            Vec::new()
        };
        // Four times the kernel's buffer: seconds of naming a window without losing a record,
        // in memory only while that lasts.
        let drain = ring_buffer(&skel, 4 * ring_size as usize)?;
        let mut probe = Probe {
            drain,
            on_record: Box::new(on_record),
            cpus: Vec::new(),
            _switch,
            skel,
            frequency: u64::from(options.frequency),
        };
        let mut errors = Vec::new();
        for cpu in online {
            if let Err(e) = probe.attach_cpu(cpu) {
                errors.push(e);
            }
        }
        if probe.cpus.is_empty() {
            return Err(AgentError::NoCpu(errors.join("; ")));
        }
        for e in errors {
            tracing::warn!("{e}");
        }
        Ok(probe)
    }

    fn attach_cpu(&mut self, cpu: u32) -> Result<(), String> {
        let event = perf::open_cpu_clock(cpu, self.frequency)
            .map_err(|e| format!("cannot open a CPU-clock perf event on CPU {cpu}: {e}"))?;
        // The link owns the event from here: libbpf closes it when the link goes.
        let fd = event.into_raw_fd();
        match self.skel.progs.on_cpu.attach_perf_event(fd) {
            Ok(link) => {
                self.cpus.push(Cpu {
                    id: cpu,
                    _link: link,
                });
                Ok(())
            }
            Err(e) => {
                // SAFETY: not attached, so still ours alone.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                Err(format!("cannot attach to the perf event of CPU {cpu}: {e}"))
            }
        }
    }

    /// Wait up to `timeout` for records, then hand every record read out of the ring buffer
    /// to the callback; with a zero `timeout`, also those still in the kernel's buffer.
    pub fn poll(&mut self, timeout: Duration) -> Result<(), AgentError> {
        let records = self
            .drain
            .take(timeout)
            .map_err(|e| AgentError::bpf("read (ring buffer)", e))?;
        for record in &records {
            (self.on_record)(record);
        }
        Ok(())
    }

    /// Follow CPUs going offline (their samples stop; said once) and coming online (sampled
    /// from now on, on a fresh event).
    pub fn follow_cpus(&mut self) {
        let Ok(online) = perf::online_cpus() else {
            return;
        };
        let sampled: Vec<u32> = self.cpus.iter().map(|c| c.id).collect();
        let (gone, new) = perf::changes(&sampled, &online);
        for cpu in gone {
            tracing::warn!("CPU {cpu} went offline: no samples from it until it is back");
            self.cpus.retain(|c| c.id != cpu);
        }
        for cpu in new {
            match self.attach_cpu(cpu) {
                Ok(()) => tracing::info!("CPU {cpu} came online: sampling it"),
                Err(e) => tracing::warn!("CPU {cpu} came online but {e}"),
            }
        }
    }

    /// The program's counters so far.
    pub fn stats(&self) -> KernelStats {
        let mut slots = [0u64; STATS];
        for (i, slot) in slots.iter_mut().enumerate() {
            let key = (i as u32).to_ne_bytes();
            if let Ok(Some(per_cpu)) = self.skel.maps.stats.lookup_percpu(&key, MapFlags::ANY) {
                *slot = per_cpu
                    .iter()
                    .filter_map(|v| v.get(..8).and_then(|b| b.try_into().ok()))
                    .map(u64::from_ne_bytes)
                    .sum();
            }
        }
        let mut stats = from_slots(&slots);
        // Records the reader had no room for are lost as if the kernel's buffer was full.
        stats.lost_events += self.drain.dropped();
        stats
    }

    /// CPUs sampled.
    pub fn cpus(&self) -> usize {
        self.cpus.len()
    }

    /// fp mode: the counts of the window that ends.
    pub fn drain_counts(&mut self) -> Vec<counts::Drained> {
        counts::drain(&mut self.skel)
    }
}
