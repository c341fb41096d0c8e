//! Frame names as profilers write them, per idle-table entry (most from the real off-CPU
//! stacks in `model/tests/data/real/`), and frames that must not count as idle.

use super::IdleClass;

/// Per entry (by preset and pattern): frame names that must match it. Every entry has one.
pub(super) const EXAMPLES: &[(IdleClass, &str, &[&str])] = &[
    (IdleClass::Wait, "do_epoll_wait", &["[k] do_epoll_wait"]),
    (IdleClass::Wait, "ep_poll", &["[k] ep_poll"]),
    (IdleClass::Wait, "do_sys_poll", &["[k] do_sys_poll"]),
    (IdleClass::Wait, "do_select", &["[k] do_select"]),
    (IdleClass::Wait, "core_sys_select", &["[k] core_sys_select"]),
    (
        IdleClass::Wait,
        "do_nanosleep",
        &["[k] do_nanosleep", "do_nanosleep_[k]"],
    ),
    (
        IdleClass::Wait,
        "hrtimer_nanosleep",
        &["[k] hrtimer_nanosleep"],
    ),
    (IdleClass::Wait, "sigsuspend", &["[k] sigsuspend"]),
    (IdleClass::Wait, "do_sigtimedwait", &["[k] do_sigtimedwait"]),
    (IdleClass::Wait, "io_cqring_wait", &["[k] io_cqring_wait"]),
    (
        IdleClass::Wait,
        "__futex_abstimed_wait_common",
        &[
            "[l] __futex_abstimed_wait_common",
            "[l] __futex_abstimed_wait_common64",
        ],
    ),
    (
        IdleClass::Wait,
        "__futex_abstimed_wait_cancelable",
        &["[l] __futex_abstimed_wait_cancelable64"],
    ),
    (
        IdleClass::Wait,
        "pthread_cond_wait",
        &[
            "[l] pthread_cond_wait@@GLIBC_2.3.2",
            "[l] pthread_cond_wait",
        ],
    ),
    (
        IdleClass::Wait,
        "pthread_cond_timedwait",
        &["[l] pthread_cond_timedwait@@GLIBC_2.3.2"],
    ),
    (
        IdleClass::Wait,
        "pthread_cond_clockwait",
        &["[l] pthread_cond_clockwait"],
    ),
    (
        IdleClass::Wait,
        "sem_wait",
        &["[l] sem_wait@@GLIBC_2.34", "[l] sem_wait"],
    ),
    (IdleClass::Wait, "sem_timedwait", &["[l] sem_timedwait"]),
    (IdleClass::Wait, "sem_clockwait", &["[l] sem_clockwait"]),
    (IdleClass::Wait, "epoll_wait", &["[l] epoll_wait"]),
    (
        IdleClass::Wait,
        "epoll_pwait",
        &["[l] epoll_pwait", "[l] epoll_pwait2"],
    ),
    (IdleClass::Wait, "poll", &["[l] poll"]),
    (
        IdleClass::Wait,
        "__poll",
        &["[l] __poll", "[l] __GI___poll"],
    ),
    (IdleClass::Wait, "ppoll", &["[l] ppoll"]),
    (IdleClass::Wait, "select", &["[l] select"]),
    (IdleClass::Wait, "__select", &["[l] __select"]),
    (IdleClass::Wait, "pselect", &["[l] pselect"]),
    (IdleClass::Wait, "nanosleep", &["[l] nanosleep"]),
    (
        IdleClass::Wait,
        "clock_nanosleep",
        &["[l] clock_nanosleep@GLIBC_2.2.5"],
    ),
    (IdleClass::Wait, "usleep", &["[l] usleep"]),
    (IdleClass::Wait, "runtime.gopark", &["runtime.gopark"]),
    (IdleClass::Wait, "runtime.park_m", &["runtime.park_m"]),
    (IdleClass::Wait, "runtime.stopm", &["runtime.stopm"]),
    (IdleClass::Wait, "runtime.notesleep", &["runtime.notesleep"]),
    (
        IdleClass::Wait,
        "runtime.notetsleep",
        &["runtime.notetsleep", "runtime.notetsleep_internal"],
    ),
    (
        IdleClass::Wait,
        "runtime.epollwait",
        &["runtime.epollwait.abi0"],
    ),
    (IdleClass::Wait, "runtime.usleep", &["runtime.usleep.abi0"]),
    (
        IdleClass::Wait,
        "runtime.findRunnable",
        &["runtime.findRunnable"],
    ),
    (
        IdleClass::Wait,
        "runtime.findrunnable",
        &["runtime.findrunnable"],
    ),
    (
        IdleClass::Wait,
        "jdk.internal.misc.Unsafe.park",
        &[
            "void jdk.internal.misc.Unsafe.park(boolean, long)",
            "jdk.internal.misc.Unsafe.park",
        ],
    ),
    (
        IdleClass::Wait,
        "sun.misc.Unsafe.park",
        &["sun.misc.Unsafe.park"],
    ),
    (
        IdleClass::Wait,
        "java.util.concurrent.locks.LockSupport.park",
        &["void java.util.concurrent.locks.LockSupport.parkNanos(java.lang.Object, long)"],
    ),
    (
        IdleClass::Wait,
        "java.lang.Object.wait",
        &["void java.lang.Object.wait(long)", "java.lang.Object.wait0"],
    ),
    (
        IdleClass::Wait,
        "java.lang.Thread.sleep",
        &["void java.lang.Thread.sleep(long)"],
    ),
    (
        IdleClass::Wait,
        "sun.nio.ch.EPoll.wait",
        &["int sun.nio.ch.EPoll.wait(int, long, int, int)"],
    ),
    (IdleClass::Wait, "Unsafe_Park", &["[l] Unsafe_Park"]),
    (IdleClass::Wait, "Parker::park", &["[l] Parker::park"]),
    (IdleClass::Wait, "JVM_Sleep", &["[l] JVM_Sleep"]),
    (
        IdleClass::Wait,
        "ObjectMonitor::wait",
        &["[l] ObjectMonitor::wait"],
    ),
    (
        IdleClass::Wait,
        "Monitor::wait",
        &[
            "[l] Monitor::wait_without_safepoint_check",
            "[l] Monitor::wait",
        ],
    ),
    (
        IdleClass::Wait,
        "os::PlatformEvent::park",
        &["[l] os::PlatformEvent::park"],
    ),
    (
        IdleClass::Wait,
        "os::PlatformMonitor::wait",
        &["[l] os::PlatformMonitor::wait"],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::scheduler::multi_thread::worker::Context::park",
        &[
            "tokio::runtime::scheduler::multi_thread::worker::Context::park_internal",
            "tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout",
            "tokio::runtime::scheduler::multi_thread::worker::Context::park",
        ],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::scheduler::multi_thread::park::Parker::park",
        &["tokio::runtime::scheduler::multi_thread::park::Parker::park_timeout"],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::scheduler::current_thread::Context::park",
        &["tokio::runtime::scheduler::current_thread::Context::park_yield"],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::park::Inner::park",
        &["tokio::runtime::park::Inner::park"],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::scheduler::multi_thread::park::Inner::park",
        &[
            "tokio::runtime::scheduler::multi_thread::park::Inner::park_driver",
            "tokio::runtime::scheduler::multi_thread::park::Inner::park_condvar",
        ],
    ),
    (
        IdleClass::Wait,
        "tokio::runtime::park::CachedParkThread::park",
        &["tokio::runtime::park::CachedParkThread::park"],
    ),
    (
        IdleClass::Wait,
        "mio::poll::Poll::poll",
        &["mio::poll::Poll::poll"],
    ),
    (
        IdleClass::Wait,
        "std::thread::park",
        &["std::thread::park", "std::thread::park_timeout"],
    ),
    (IdleClass::Spin, "do_idle", &["[k] do_idle"]),
    (
        IdleClass::Spin,
        "cpuidle_enter_state",
        &["[k] cpuidle_enter_state"],
    ),
    (
        IdleClass::Spin,
        "default_idle_call",
        &["[k] default_idle_call"],
    ),
    (
        IdleClass::Spin,
        "native_safe_halt",
        &["[k] native_safe_halt"],
    ),
    (
        IdleClass::Spin,
        "intel_idle",
        &["[k] intel_idle", "[k] intel_idle_irq"],
    ),
    (IdleClass::Spin, "poll_idle", &["[k] poll_idle"]),
    (IdleClass::Spin, "acpi_idle_enter", &["[k] acpi_idle_enter"]),
    (IdleClass::Spin, "sched_yield", &["[l] sched_yield"]),
    (IdleClass::Spin, "__sched_yield", &["[l] __sched_yield"]),
    (
        IdleClass::Spin,
        "runtime.findRunnable",
        &["runtime.findRunnable"],
    ),
    (
        IdleClass::Spin,
        "runtime.findrunnable",
        &["runtime.findrunnable"],
    ),
    (
        IdleClass::Spin,
        "runtime.osyield",
        &["runtime.osyield.abi0"],
    ),
    (IdleClass::Spin, "SpinPause", &["[l] SpinPause"]),
    (
        IdleClass::Spin,
        "java.lang.Thread.onSpinWait",
        &["void java.lang.Thread.onSpinWait()"],
    ),
    (
        IdleClass::Spin,
        "std::thread::yield_now",
        &["std::thread::yield_now"],
    ),
    (
        IdleClass::Spin,
        "crossbeam_utils::backoff::Backoff::snooze",
        &["crossbeam_utils::backoff::Backoff::snooze"],
    ),
];

/// Frames that are not idle, from the same real stacks: a contended mutex, waking others, I/O.
pub(super) const NOT_IDLE: &[&str] = &[
    "[k] futex_wait",
    "[k] schedule",
    "[k] io_schedule",
    "[k] exit_to_user_mode_loop",
    "[l] __GI___lll_lock_wait",
    "[l] __lll_lock_wait",
    "[l] pthread_cond_signal@@GLIBC_2.3.2",
    "[l] pthread_cond_broadcast@@GLIBC_2.3.2",
    "[l] sem_post@GLIBC_2.2.5",
    "[l] fdatasync",
    "runtime.futex.abi0",
    "runtime.notewakeup",
    "uv__io_poll",
    "mio::poll::Poll::registry",
    "main.work",
    "void Idle.lambda$main$4()",
];
