//! Tests of the idle-wait table (`super`): every entry against a frame name as profilers write
//! it (most from the real off-CPU stacks in `model/tests/data/real/`), frames that must not
//! count as idle, and each preset on those real profiles.

use super::*;
use crate::export::folded::to_folded;
use crate::wire::folded::parse_folded;

/// Per entry (by preset and pattern): frame names that must match it. Every entry has one.
const EXAMPLES: &[(IdleClass, &str, &[&str])] = &[
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
const NOT_IDLE: &[&str] = &[
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

#[test]
fn every_entry_matches_its_examples_and_has_some() {
    for entry in IDLE_FRAMES {
        let examples = EXAMPLES
            .iter()
            .find(|(c, p, _)| *c == entry.class && *p == entry.pattern)
            .map(|(_, _, e)| *e)
            .unwrap_or_default();
        assert!(
            !examples.is_empty(),
            "{:?} {} has no example",
            entry.class,
            entry.pattern
        );
        for name in examples {
            let found = idle_entry(name, entry.class).map(|e| e.pattern);
            assert_eq!(found, Some(entry.pattern), "{name}");
        }
    }
    assert_eq!(
        EXAMPLES.len(),
        IDLE_FRAMES.len(),
        "no example without its entry"
    );
}

#[test]
fn working_frames_and_lock_waits_are_not_idle() {
    for name in NOT_IDLE {
        for class in [IdleClass::Wait, IdleClass::Spin] {
            assert!(
                idle_entry(name, class).is_none(),
                "{name} counted as {class:?}"
            );
        }
    }
}

fn real(file: &str) -> Profile {
    let path = format!("{}/tests/data/real/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the real profile is in the repository");
    parse_folded(&text, "app").expect("folded stacks parse")
}

/// The threads (second frames) a profile's stacks go through.
fn threads(profile: &Profile) -> Vec<String> {
    let mut out: Vec<String> = profile
        .children(0)
        .flat_map(|p| profile.children(p))
        .map(|t| profile.name(t).to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_wait_preset_on_real_c_waits_keeps_locks_and_io() {
    let prof = real("offcpu-c.folded");
    let kept = drop_idle(&prof, IdleClass::Wait);
    let text = to_folded(&kept);
    for waiting in [
        "[t] epoll",
        "[t] poll",
        "[t] select",
        "[t] sleep",
        "[t] semwait",
        "[t] pool",
    ] {
        assert!(
            !text.lines().any(|l| l.contains(&format!("{waiting};"))
                && l.contains("[k] do_syscall_64")
                && !l.contains("exit_to_user_mode_loop")),
            "{waiting}'s waits are gone"
        );
    }
    // The mutex waits (__lll_lock_wait → futex_wait) and the disk syncs stay, whole.
    let lock_waits = |p: &Profile| {
        p.function_id("[l] __GI___lll_lock_wait").map(|f| {
            p.nodes()
                .filter(|&n| p.func(n) == f)
                .map(|n| p.total(n))
                .sum::<u64>()
        })
    };
    assert_eq!(lock_waits(&kept), lock_waits(&prof));
    assert!(lock_waits(&kept).unwrap_or(0) > 1000);
    assert!(text.contains("[l] fdatasync;"), "I/O waits stay");
    assert!(kept.root_total() < prof.root_total());
    assert!(threads(&kept).contains(&"[t] lock-a".to_string()));
}

#[test]
fn the_wait_preset_on_real_go_and_java_leaves_the_work() {
    let go = real("offcpu-go.folded");
    let kept = drop_idle(&go, IdleClass::Wait);
    assert!(kept.function_id("runtime.park_m").is_none());
    assert!(kept.function_id("runtime.stopm").is_none());
    assert!(
        kept.function_id("main.work").is_some(),
        "preemptions of the busy goroutine stay"
    );
    assert!(kept.root_total() * 3 < go.root_total());

    let java = real("offcpu-java.folded");
    let kept = drop_idle(&java, IdleClass::Wait);
    assert!(kept
        .function_id("[l] __futex_abstimed_wait_common")
        .is_none());
    assert!(
        kept.function_id("void Idle.lambda$main$4()").is_some(),
        "the busy thread stays"
    );
    assert!(
        kept.function_id("[l] __GI___lll_lock_wait").is_some(),
        "JVM lock waits stay"
    );
    assert!(kept.root_total() < java.root_total());

    let rust = real("offcpu-rust.folded");
    let kept = drop_idle(&rust, IdleClass::Wait);
    let park = "tokio::runtime::scheduler::multi_thread::worker::Context::park_internal";
    assert!(rust.function_id(park).is_some() && kept.function_id(park).is_none());
    assert!(
        kept.function_id("tokio::runtime::scheduler::multi_thread::worker::Context::run_task")
            .is_some(),
        "waking other workers while running a task stays"
    );
}

#[test]
fn the_spin_preset_drops_idle_loops_only() {
    let prof = parse_folded(
        "[k] secondary_startup_64;[k] cpu_startup_entry;[k] do_idle;[k] cpuidle_enter_state;[k] intel_idle 90\nmain;work 10\n",
        "Total",
    )
    .expect("parses");
    assert_eq!(
        to_folded(&drop_idle(&prof, IdleClass::Spin)),
        "Total;main;work 10\n"
    );
    assert_eq!(drop_idle(&prof, IdleClass::Wait).root_total(), 100);
}

/// The preset is the per-stack rule "drop a sample if a frame of its stack is idle", applied
/// to the tree: the same as filtering the real folded lines one by one.
#[test]
fn the_presets_equal_filtering_each_stack() {
    for file in [
        "offcpu-c.folded",
        "offcpu-go.folded",
        "offcpu-java.folded",
        "offcpu-rust.folded",
    ] {
        let path = format!("{}/tests/data/real/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("the real profile is in the repository");
        for class in [IdleClass::Wait, IdleClass::Spin] {
            let kept: String = text
                .lines()
                .filter(|line| {
                    let stack = line.rsplit_once(' ').map_or(*line, |(s, _)| s);
                    !stack.split(';').any(|f| idle_entry(f, class).is_some())
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let want = parse_folded(&kept, "app").expect("parses");
            let got = drop_idle(&parse_folded(&text, "app").expect("parses"), class);
            assert_eq!(to_folded(&got), to_folded(&want), "{file} {class:?}");
        }
    }
}
