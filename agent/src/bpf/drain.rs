//! The ring buffer read on a thread of its own (`embers-drain`): every [`PERIOD`] it copies the
//! records waiting in the kernel's buffer into a queue in memory, which the collector's thread
//! empties into its intake ([`Drain::take`]).
//!
//! Why a thread: the collector's thread also names each window, and that can take seconds (a
//! host's first window names every module it met; a big binary's symbols and DWARF are parsed
//! once; on a busy 2-core machine that thread gets a fraction of a CPU). The kernel's buffer
//! holds about a second of stack copies, so read only between windows it overflowed meanwhile
//! and the kernel dropped samples, and off-CPU waits with them (each worth up to seconds: a
//! test's sleeper showed ~60% of its sleep). Copying records out takes microseconds, so this
//! thread keeps up whatever the naming does. The queue is bounded ([`Drain::start`]'s `cap`);
//! a record past it is dropped and counted with the kernel's losses.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use libbpf_rs::RingBuffer;

use super::events;

/// How often the kernel's buffer is read. The program wakes no reader (see `wakeup()` in
/// `profile.bpf.c`), so this is the records' latency; the buffer holds far longer.
pub const PERIOD: Duration = Duration::from_millis(50);

/// Records copied out, waiting for the collector's thread.
#[derive(Default)]
struct Queue {
    records: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The first error reading the buffer, for the collector to report.
    error: Option<String>,
}

/// What the drain thread and the collector's thread share.
struct Records {
    queue: Mutex<Queue>,
    ready: Condvar,
    cap: usize,
    dropped: AtomicU64,
}

impl Records {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One record from the kernel's buffer, copied unless the queue is full: at `cap` for an
    /// on-CPU sample, at twice that for an off-CPU wait. A lost sample is a millisecond of a
    /// graph whose shares hold; a lost wait is all of its time, up to seconds.
    fn push(&self, data: &[u8]) {
        let mut q = self.lock();
        let cap = if events::is_off_cpu(data) {
            2 * self.cap
        } else {
            self.cap
        };
        if q.bytes + data.len() > cap {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        q.bytes += data.len();
        q.records.push_back(data.to_vec());
    }
}

/// The kernel's buffer and what reads it.
struct Reader {
    ring: Mutex<RingBuffer<'static>>,
    records: Arc<Records>,
}

impl Reader {
    /// Copy every record waiting in the kernel's buffer into the queue, and wake the
    /// collector's thread once if there are any (not per record: woken right after each
    /// sample, it would be sampled more than it runs).
    fn read(&self) {
        let ring = self.ring.lock().unwrap_or_else(|p| p.into_inner());
        let result = ring.consume();
        drop(ring);
        let mut q = self.records.lock();
        if let Err(e) = result {
            q.error.get_or_insert_with(|| e.to_string());
        }
        if !q.records.is_empty() || q.error.is_some() {
            self.records.ready.notify_all();
        }
    }
}

/// The drain thread, stopped and joined when dropped.
pub struct Drain {
    reader: Arc<Reader>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drain {
    /// The callback a ring buffer built for [`Drain::start`] hands its records to, and the
    /// queue it fills (at most `cap` bytes).
    pub fn queue(cap: usize) -> (impl FnMut(&[u8]) + Send + 'static, Queued) {
        let records = Arc::new(Records {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            cap,
            dropped: AtomicU64::new(0),
        });
        let to = records.clone();
        (move |data: &[u8]| to.push(data), Queued(records))
    }

    /// Read `ring` (built with [`Drain::queue`]'s callback) into `queued` every [`PERIOD`].
    pub fn start(ring: RingBuffer<'static>, queued: Queued) -> Result<Drain, String> {
        let reader = Arc::new(Reader {
            ring: Mutex::new(ring),
            records: queued.0,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (reader.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("embers-drain".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    r.read();
                    std::thread::park_timeout(PERIOD);
                }
            })
            .map_err(|e| format!("cannot start the ring buffer's reader thread: {e}"))?;
        Ok(Drain {
            reader,
            stop,
            thread: Some(thread),
        })
    }

    /// The records copied out so far, waiting up to `timeout` for one; with a zero `timeout`,
    /// the kernel's buffer is read first (a window's last records).
    pub fn take(&self, timeout: Duration) -> Result<Vec<Vec<u8>>, String> {
        if timeout.is_zero() {
            self.reader.read();
        }
        let records = &self.reader.records;
        let deadline = Instant::now() + timeout;
        let mut q = records.lock();
        while q.records.is_empty() && q.error.is_none() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            q = records
                .ready
                .wait_timeout(q, deadline - now)
                .map(|(q, _)| q)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        if let Some(e) = q.error.take() {
            return Err(e);
        }
        q.bytes = 0;
        Ok(std::mem::take(&mut q.records).into())
    }

    /// Records dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.reader.records.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// The queue a [`Drain`] fills, between building its ring buffer and starting it.
pub struct Queued(Arc<Records>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_past_the_cap_are_dropped_and_counted_waits_last() {
        let (mut push, queued) = Drain::queue(10);
        let on_cpu = [1, 0, 0, 0, 0];
        let off_cpu = [2, 0, 0, 0, 0];
        push(&on_cpu);
        push(&on_cpu);
        push(&on_cpu);
        push(&off_cpu);
        push(&off_cpu);
        let records = &queued.0;
        assert_eq!(records.dropped.load(Ordering::Relaxed), 1);
        let q = records.lock();
        assert_eq!(q.bytes, 20);
        let kinds: Vec<u8> = q.records.iter().map(|r| r[0]).collect();
        assert_eq!(kinds, [1, 1, 2, 2], "waits have room past the samples' cap");
    }
}
