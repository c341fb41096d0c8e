//! Tests of the idle-wait table (`super`): every entry against a frame name as profilers write
//! it (most from the real off-CPU stacks in `model/tests/data/real/`), frames that must not
//! count as idle, and each preset on those real profiles.

use super::*;
use crate::export::folded::to_folded;
use crate::wire::folded::parse_folded;

mod examples;
use examples::{EXAMPLES, NOT_IDLE};

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
