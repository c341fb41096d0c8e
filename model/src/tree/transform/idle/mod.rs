//! Idle-wait presets: the frames that mean a thread is waiting for work (off-CPU) or spinning
//! while it has none (on-CPU), in one table. A preset drops every sample whose stack passes
//! through one of its frames ([`super::drop_stacks_through`]), so what is left is the time the
//! program spent working or waiting for something that matters (disk, locks held by others,
//! the network in the middle of a request).
//!
//! An entry names a frame whose callees are only the wait itself: dropping the stacks through
//! `mio::poll::Poll::poll` drops an idle event loop, whereas libuv's `uv__io_poll` also runs the
//! callbacks (JavaScript) and is not listed. Futex waits are recognised by their user-space
//! caller (glibc's condition-variable and semaphore wait, Go's note sleeps, HotSpot's parker),
//! never by the kernel's `futex_wait`, which a contended mutex (`__lll_lock_wait`) reaches too:
//! lock contention is not idle and stays. The entries were checked against real off-CPU stacks
//! of C, Go and Java programs recorded with `perf` (`model/tests/data/real/`).

use super::{drop_stacks_through, func_set};
use crate::tree::profile::Profile;
use crate::tree::symbol::function_path;
use Matching::{Exact, Prefix};

/// Which preset an entry belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleClass {
    /// Off-CPU: a thread blocked waiting for work, a timer or a signal.
    Wait,
    /// On-CPU: a CPU or thread spinning or idling without work.
    Spin,
}

/// How an entry's pattern is compared with a frame's bare name (see [`bare_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matching {
    /// The bare name is the pattern.
    Exact,
    /// The bare name starts with the pattern (`LockSupport.park` covers `parkNanos`).
    Prefix,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct IdleFrame {
    /// The preset.
    pub class: IdleClass,
    /// The frame's name without its kind prefix.
    pub pattern: &'static str,
    /// How it is compared.
    pub matching: Matching,
}

/// An off-CPU entry; `_why` (where the frame comes from, why it is idle) documents the row and
/// is not kept in the bundle.
const fn wait(pattern: &'static str, matching: Matching, _why: &'static str) -> IdleFrame {
    IdleFrame {
        class: IdleClass::Wait,
        pattern,
        matching,
    }
}

/// An on-CPU entry, documented like [`wait`]'s.
const fn spin(pattern: &'static str, matching: Matching, _why: &'static str) -> IdleFrame {
    IdleFrame {
        class: IdleClass::Spin,
        pattern,
        matching,
    }
}

/// Every idle frame Embers knows, by preset.
pub const IDLE_FRAMES: &[IdleFrame] = &[
    // Linux: the kernel side of blocking waits (present whenever kernel frames are). Not the
    // kernel's futex_wait: mutexes wait there too; the user-space caller says which it is.
    wait("do_epoll_wait", Exact, "kernel: epoll_wait/epoll_pwait"),
    wait(
        "ep_poll",
        Exact,
        "kernel: epoll_wait sleeping (before 6.x it shows)",
    ),
    wait("do_sys_poll", Exact, "kernel: poll/ppoll"),
    wait("do_select", Exact, "kernel: select/pselect"),
    wait("core_sys_select", Exact, "kernel: select/pselect"),
    wait("do_nanosleep", Exact, "kernel: nanosleep/clock_nanosleep"),
    wait(
        "hrtimer_nanosleep",
        Exact,
        "kernel: nanosleep/clock_nanosleep",
    ),
    wait(
        "sigsuspend",
        Exact,
        "kernel: waiting for a signal (a master process)",
    ),
    wait("do_sigtimedwait", Exact, "kernel: sigtimedwait"),
    wait(
        "io_cqring_wait",
        Exact,
        "kernel: io_uring waiting for completions",
    ),
    // glibc: futex waits of condition variables and semaphores (not of mutexes:
    // __lll_lock_wait stays), and the waits of the calls above where kernel frames are hidden.
    wait(
        "__futex_abstimed_wait_common",
        Prefix,
        "glibc ≥ 2.34: condition variable or semaphore",
    ),
    wait(
        "__futex_abstimed_wait_cancelable",
        Prefix,
        "glibc 2.31–2.33: the same",
    ),
    wait(
        "pthread_cond_wait",
        Prefix,
        "glibc: condition variable (thread pools)",
    ),
    wait(
        "pthread_cond_timedwait",
        Prefix,
        "glibc: condition variable with timeout",
    ),
    wait(
        "pthread_cond_clockwait",
        Prefix,
        "glibc: condition variable with a clock",
    ),
    wait("sem_wait", Prefix, "glibc: semaphore (GC worker gangs)"),
    wait("sem_timedwait", Prefix, "glibc: semaphore with timeout"),
    wait("sem_clockwait", Prefix, "glibc: semaphore with a clock"),
    wait("epoll_wait", Exact, "glibc: epoll_wait"),
    wait("epoll_pwait", Prefix, "glibc: epoll_pwait/epoll_pwait2"),
    wait("poll", Exact, "glibc: poll"),
    wait("__poll", Exact, "glibc: poll (internal name)"),
    wait("ppoll", Exact, "glibc: ppoll"),
    wait("select", Exact, "glibc: select"),
    wait("__select", Exact, "glibc: select (internal name)"),
    wait("pselect", Prefix, "glibc: pselect"),
    wait("nanosleep", Exact, "glibc: nanosleep"),
    wait(
        "clock_nanosleep",
        Prefix,
        "glibc: clock_nanosleep (sleep, usleep)",
    ),
    wait("usleep", Exact, "glibc: usleep"),
    // Go: a goroutine parked (the M goes on to find other work) and idle Ms.
    wait(
        "runtime.gopark",
        Exact,
        "Go: a goroutine parked (channel, select, sync)",
    ),
    wait(
        "runtime.park_m",
        Exact,
        "Go: the scheduler parking a goroutine",
    ),
    wait("runtime.stopm", Exact, "Go: an M with no goroutine to run"),
    wait("runtime.notesleep", Exact, "Go: an M sleeping on a note"),
    wait(
        "runtime.notetsleep",
        Prefix,
        "Go: sysmon and timed note sleeps",
    ),
    wait("runtime.epollwait", Exact, "Go: the network poller waiting"),
    wait("runtime.usleep", Exact, "Go: sysmon and backoff sleeps"),
    wait(
        "runtime.findRunnable",
        Exact,
        "Go: the scheduler looking for work, then sleeping",
    ),
    wait("runtime.findrunnable", Exact, "Go < 1.21: the same"),
    // Java: parked and waiting threads, and the JVM's own idle threads.
    wait(
        "jdk.internal.misc.Unsafe.park",
        Exact,
        "Java: a parked thread (executors, locks)",
    ),
    wait("sun.misc.Unsafe.park", Exact, "Java 8: a parked thread"),
    wait(
        "java.util.concurrent.locks.LockSupport.park",
        Prefix,
        "Java: park/parkNanos/parkUntil",
    ),
    wait("java.lang.Object.wait", Prefix, "Java: Object.wait/wait0"),
    wait(
        "java.lang.Thread.sleep",
        Prefix,
        "Java: Thread.sleep/sleep0/sleepNanos0",
    ),
    wait(
        "sun.nio.ch.EPoll.wait",
        Exact,
        "Java NIO: a selector waiting",
    ),
    wait(
        "Unsafe_Park",
        Exact,
        "HotSpot: the native side of Unsafe.park",
    ),
    wait("Parker::park", Exact, "HotSpot: a thread's parker"),
    wait(
        "JVM_Sleep",
        Exact,
        "HotSpot: the native side of Thread.sleep",
    ),
    wait(
        "ObjectMonitor::wait",
        Exact,
        "HotSpot: the native side of Object.wait",
    ),
    wait(
        "Monitor::wait",
        Prefix,
        "HotSpot: VM threads waiting on a monitor",
    ),
    wait(
        "os::PlatformEvent::park",
        Prefix,
        "HotSpot: a thread's park event",
    ),
    wait(
        "os::PlatformMonitor::wait",
        Exact,
        "HotSpot: platform monitor wait",
    ),
    // Rust: tokio and mio event loops, std parking.
    wait(
        "tokio::runtime::scheduler::multi_thread::worker::Context::park",
        Prefix,
        "tokio: an idle worker",
    ),
    wait(
        "tokio::runtime::scheduler::multi_thread::park::Parker::park",
        Prefix,
        "tokio: the worker's parker",
    ),
    wait(
        "tokio::runtime::scheduler::current_thread::Context::park",
        Prefix,
        "tokio: current-thread scheduler idle",
    ),
    wait(
        "tokio::runtime::park::Inner::park",
        Prefix,
        "tokio: the thread of block_on waiting",
    ),
    wait(
        "tokio::runtime::scheduler::multi_thread::park::Inner::park",
        Prefix,
        "tokio: a worker parked on its driver or condvar",
    ),
    wait(
        "tokio::runtime::park::CachedParkThread::park",
        Prefix,
        "tokio: block_on waiting",
    ),
    wait("mio::poll::Poll::poll", Exact, "mio: an event loop waiting"),
    wait(
        "std::thread::park",
        Prefix,
        "Rust std: park/park_timeout (channels, pools)",
    ),
    // On-CPU: idle loops and spinning without work.
    spin("do_idle", Exact, "kernel: the CPU's idle loop (swapper)"),
    spin(
        "cpuidle_enter_state",
        Exact,
        "kernel: entering a CPU idle state",
    ),
    spin("default_idle_call", Exact, "kernel: default idle"),
    spin(
        "native_safe_halt",
        Exact,
        "kernel: halted until an interrupt",
    ),
    spin("intel_idle", Prefix, "kernel: Intel idle driver"),
    spin("poll_idle", Exact, "kernel: polling idle state"),
    spin("acpi_idle_enter", Prefix, "kernel: ACPI idle"),
    spin("sched_yield", Exact, "glibc: yielding in a spin loop"),
    spin("__sched_yield", Exact, "glibc: yielding in a spin loop"),
    spin(
        "runtime.findRunnable",
        Exact,
        "Go: the scheduler looking for work (spinning Ms)",
    ),
    spin(
        "runtime.findrunnable",
        Exact,
        "Go < 1.21: the scheduler looking for work",
    ),
    spin("runtime.osyield", Exact, "Go: yielding while spinning"),
    spin("SpinPause", Exact, "HotSpot: spin-wait pause"),
    spin("java.lang.Thread.onSpinWait", Exact, "Java: spin-wait hint"),
    spin(
        "std::thread::yield_now",
        Exact,
        "Rust std: yielding in a spin loop",
    ),
    spin(
        "crossbeam_utils::backoff::Backoff::snooze",
        Exact,
        "crossbeam: backing off while idle",
    ),
];

/// What the table's patterns are written against: the qualified function without kind
/// prefix, return type and parameters ([`function_path`]), glibc's `__GI_` alias prefix, a
/// symbol version (`@@GLIBC_2.3.2`), a `perf` kind suffix (`_[k]`) and Go's `.abi0` wrapper
/// suffix.
pub fn bare_name(name: &str) -> &str {
    let path = function_path(name);
    let path = path.strip_prefix("__GI_").unwrap_or(path);
    let path = path.split('@').next().unwrap_or(path);
    let path = path.strip_suffix("_[k]").unwrap_or(path);
    path.strip_suffix(".abi0").unwrap_or(path)
}

/// The table entry a frame name matches in `class`, if any.
pub fn idle_entry(name: &str, class: IdleClass) -> Option<&'static IdleFrame> {
    let bare = bare_name(name);
    IDLE_FRAMES.iter().find(|e| {
        e.class == class
            && match e.matching {
                Exact => bare == e.pattern,
                Prefix => bare.starts_with(e.pattern),
            }
    })
}

/// Drops the samples whose stack passes through an idle frame of `class`.
pub fn drop_idle(profile: &Profile, class: IdleClass) -> Profile {
    drop_stacks_through(
        profile,
        &func_set(profile, |n| idle_entry(n, class).is_some()),
    )
}

#[cfg(test)]
mod tests;
