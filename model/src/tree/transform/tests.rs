//! Unit tests of the transforms (`super`): each on small hand-made profiles.

use super::*;
use crate::export::folded::to_folded;
use crate::tree::build::TreeBuilder;
use crate::wire::folded::parse_folded;

fn p(text: &str) -> Profile {
    parse_folded(text, "app").unwrap()
}

#[test]
fn folding_threads_merges_their_stacks() {
    let prof = p("[t] w1;main;work 3\n[t] w2;main;work 2\n[t] w2;main 1\n");
    assert_eq!(
        to_folded(&fold_threads(&prof)),
        "app;main 1\napp;main;work 5\n"
    );
}

#[test]
fn kernel_depth_caps_and_hides() {
    let prof = p("main;read;[k] sys;[k] vfs;[k] disk 4\nmain 1\n");
    assert_eq!(
        to_folded(&cap_kernel_depth(&prof, 1)),
        "app;main 1\napp;main;read;[k] sys 4\n"
    );
    assert_eq!(
        to_folded(&cap_kernel_depth(&prof, 0)),
        "app;main 1\napp;main;read 4\n"
    );
}

#[test]
fn folding_threads_keeps_the_threads_own_time() {
    let prof = p("[p] redis;[t] io 3\n[p] redis 2\n[t] main 4\n");
    assert_eq!(to_folded(&fold_threads(&prof)), "app 4\napp;[p] redis 5\n");
}

/// The tree transform and the service's per-stack rule are one rule: capping a built tree
/// gives the tree built from the trimmed stacks.
#[test]
fn kernel_cap_matches_the_services_per_stack_rule() {
    let kinds = [
        "main",
        "work",
        "[k] sys",
        "[k] vfs",
        "[c] launch",
        "[l] libc",
    ];
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut stacks = Vec::new();
    for _ in 0..300 {
        let len = 1 + next(7) as usize;
        let frames: Vec<&str> = (0..len).map(|_| kinds[next(6) as usize]).collect();
        stacks.push((frames, 1 + next(9)));
    }
    let text: String = stacks
        .iter()
        .map(|(f, v)| format!("{} {v}\n", f.join(";")))
        .collect();
    let prof = p(&text);
    for keep in [0u32, 1, 2, 5] {
        let trimmed: String = stacks
            .iter()
            .map(|(f, v)| {
                let kept = crate::contract::kernel::trim(f, i64::from(keep));
                if kept.is_empty() {
                    format!("{v}\n")
                } else {
                    format!("{} {v}\n", kept.join(";"))
                }
            })
            .collect();
        let mut reference = TreeBuilder::new("app");
        for line in trimmed.lines() {
            let (stack, v) = line.rsplit_once(' ').unwrap_or(("", line));
            let frames = stack.split(';').filter(|s| !s.is_empty());
            reference.add_stack(frames, v.trim().parse().unwrap());
        }
        assert_eq!(
            to_folded(&cap_kernel_depth(&prof, keep)),
            to_folded(&reference.finish()),
            "keep {keep}"
        );
    }
}

#[test]
fn unresolved_runs_collapse_to_their_first_frame() {
    let prof = p("main;[/lib/a.so];[unknown] 0x1;f 2\nmain;[/lib/a.so];[unknown] 0x2 1\n");
    assert_eq!(
        to_folded(&collapse_unresolved(&prof)),
        "app;main;[/lib/a.so] 1\napp;main;[/lib/a.so];f 2\n"
    );
}

#[test]
fn hidden_frames_merge_what_remains() {
    let prof = p("main;wrapper;a 2\nmain;b 1\nmain;wrapper 1\n");
    let hidden = func_set(&prof, |n| n == "wrapper");
    assert_eq!(
        to_folded(&hide_functions(&prof, &hidden)),
        "app;main 1\napp;main;a 2\napp;main;b 1\n"
    );
}

#[test]
fn keep_stacks_through_a_function_prunes_the_rest() {
    let prof = p("main;a;x 2\nmain;b 5\nmain 1\n");
    let set = func_set(&prof, |n| n == "a");
    let kept = keep_stacks_through(&prof, &set);
    assert_eq!(to_folded(&kept), "app;main;a;x 2\n");
    assert_eq!(kept.node_count(), 4);
    assert_eq!(kept.root_total(), 2);
}

#[test]
fn inverted_tree_puts_leaves_first() {
    let prof = p("main;a;leaf 2\nmain;b;leaf 3\nmain;a 1\n");
    let inv = invert(&prof);
    assert_eq!(
        to_folded(&inv.profile),
        "app;a;main 1\napp;leaf;a;main 2\napp;leaf;b;main 3\n"
    );
    assert_eq!(inv.caller_depth_limit, None);
}

#[test]
fn inverting_within_a_budget_cuts_callers_at_a_common_depth() {
    let prof = p("main;a;b;leaf 2\nmain;leaf2 3\n");
    // Full cost: 4 + 2 = 6 steps; a budget of 4 allows 2 callers per leaf.
    let inv = invert_with_budget(&prof, 4);
    assert_eq!(inv.caller_depth_limit, Some(2));
    assert_eq!(to_folded(&inv.profile), "app;leaf2;main 3\napp;leaf;b 2\n");
    assert_eq!(
        inv.profile.root_total(),
        prof.root_total(),
        "no time is lost"
    );
}

#[test]
fn sandwich_merges_callers_and_callees_without_double_counting() {
    let prof = p("main;a;f;g 2\nmain;b;f;f;h 3\nmain;f 1\n");
    let f = (0..prof.function_count() as u32)
        .find(|&i| prof.function_name(i) == "f")
        .unwrap();
    let s = sandwich(&prof, f);
    assert_eq!(to_folded(&s.callers), "f;a;main 2\nf;b;main 3\nf;main 1\n");
    assert_eq!(s.callers.root_total(), 6);
    assert_eq!(to_folded(&s.callees), "f 1\nf;f;h 3\nf;g 2\n");
    assert_eq!(s.callees.root_total(), 6);
}

#[test]
fn transforms_keep_explicit_kinds() {
    let text = r#"{"OPT_STATUS":"SUCCESS","result":{"functions":["app","[l] malloc"],"function_types":["P","O"],
        "node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":[[0,-1,0,5],[1,0,5,5]]}}}"#;
    let prof = crate::decode_response(200, text).unwrap().profile;
    let folded = fold_threads(&prof);
    assert_eq!(folded.kind(1), FrameKind::Object);
}
