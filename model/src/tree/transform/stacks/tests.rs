//! Unit tests of the stack transforms (`super`), each on a fixed tree: the folded stacks (every
//! line is a stack's self value), the totals, the self values and the function ids and kinds.

use super::*;
use crate::export::folded::to_folded;
use crate::tree::transform::{func_set, hide_functions};
use crate::wire::folded::parse_folded;

fn p(text: &str) -> Profile {
    parse_folded(text, "app").unwrap()
}

fn named(profile: &Profile, name: &str) -> FuncSet {
    func_set(profile, |n| n == name)
}

/// The node at `path` (which must exist).
fn at(profile: &Profile, path: &[&str]) -> NodeId {
    let n = profile.find_path(path);
    assert_eq!(profile.name_path(n), path, "{path:?} exists");
    n
}

/// A tree with recursion (direct and through `b`), a library run and an idle wait.
const TREE: &str = "main;a;x 2\nmain;b;x;b;y 3\nmain;b;b;z 1\nmain;b 4\nmain 1\n";

#[test]
fn dropping_a_function_removes_its_samples_and_shrinks_totals() {
    let prof = p(TREE);
    let dropped = drop_stacks_through(&prof, &named(&prof, "x"));
    assert_eq!(
        to_folded(&dropped),
        "app;main 1\napp;main;b 4\napp;main;b;b;z 1\n"
    );
    assert_eq!(dropped.root_total(), 6);
    assert_eq!(dropped.total(at(&dropped, &["main", "b"])), 5);
    assert_eq!(dropped.self_value(at(&dropped, &["main"])), 1);
    assert_eq!(dropped.function_id("x"), None, "no frame of x is left");
    assert_eq!(
        dropped.function_id("a"),
        None,
        "a held only stacks through x"
    );
}

#[test]
fn keeping_and_dropping_the_stacks_through_a_function_partition_the_samples() {
    let prof = p(TREE);
    for name in ["main", "a", "b", "x", "y", "z"] {
        let set = named(&prof, name);
        let kept = keep_stacks_through(&prof, &set).root_total();
        let dropped = drop_stacks_through(&prof, &set).root_total();
        assert_eq!(kept + dropped, prof.root_total(), "{name}");
    }
}

#[test]
fn merging_a_function_moves_its_children_and_self_time_up() {
    let prof = p(TREE);
    let merged = hide_functions(&prof, &named(&prof, "b"));
    assert_eq!(
        to_folded(&merged),
        "app;main 5\napp;main;a;x 2\napp;main;x;y 3\napp;main;z 1\n"
    );
    assert_eq!(
        merged.root_total(),
        prof.root_total(),
        "merging keeps totals"
    );
    assert_eq!(merged.self_value(at(&merged, &["main"])), 5);
    assert_eq!(merged.total(at(&merged, &["main", "x"])), 3);
}

#[test]
fn collapsing_recursion_joins_inner_calls_to_the_outermost() {
    let prof = p(TREE);
    let one = collapse_recursion(&prof, Some(&named(&prof, "b")));
    // main;b;x;b;y → main;b;y (the x between the calls goes on that path); main;b;b;z → main;b;z.
    assert_eq!(
        to_folded(&one),
        "app;main 1\napp;main;a;x 2\napp;main;b 4\napp;main;b;y 3\napp;main;b;z 1\n"
    );
    assert_eq!(one.root_total(), prof.root_total());
    let b = at(&one, &["main", "b"]);
    assert_eq!((one.total(b), one.self_value(b)), (8, 4));
    // Only b's recursion: a recursion of another function stays.
    let other = p("main;f;g;f 2\nmain;b;b 1\n");
    assert_eq!(
        to_folded(&collapse_recursion(&other, Some(&named(&other, "b")))),
        "app;main;b 1\napp;main;f;g;f 2\n"
    );
    // Every function at once.
    assert_eq!(
        to_folded(&collapse_recursion(&other, None)),
        "app;main;b 1\napp;main;f 2\n"
    );
}

#[test]
fn collapsing_recursion_of_a_function_that_does_not_recurse_changes_nothing() {
    let prof = p(TREE);
    let same = collapse_recursion(&prof, Some(&named(&prof, "a")));
    assert_eq!(to_folded(&same), to_folded(&prof));
    assert_eq!(same.node_count(), prof.node_count());
}

#[test]
fn focusing_on_a_function_makes_it_the_root_of_every_call() {
    let prof = p(TREE);
    let focused = focus_function(&prof, &named(&prof, "x"), "x");
    assert_eq!(to_folded(&focused), "x 2\nx;b;y 3\n");
    assert_eq!(focused.name(0), "x");
    assert_eq!(
        focused.root_total(),
        keep_stacks_through(&prof, &named(&prof, "x")).root_total(),
        "the focus holds what the stacks through x hold"
    );
}

#[test]
fn libraries_are_recognised_from_deepflow_names() {
    let lib = |name| library_of(name, crate::contract::kind::FrameKind::from_name(name));
    assert_eq!(lib("[l] std::vector<int>::push_back"), Some("std"));
    assert_eq!(
        lib("[l] boost::asio::detail::scheduler::run"),
        Some("boost")
    );
    assert_eq!(lib("[l] pthread_cond_wait"), Some(UNSCOPED_LIBRARY));
    assert_eq!(
        lib("[l] JavaThread::thread_main_inner"),
        Some(UNSCOPED_LIBRARY)
    );
    assert_eq!(
        lib("std::vector<int>::push_back"),
        None,
        "not a library frame"
    );
    assert_eq!(lib("[k] futex_wait"), None);
}

#[test]
fn collapsing_a_library_keeps_the_frame_where_the_program_entered_it() {
    let prof = p(concat!(
        "main;[l] std::thread::run;[l] std::invoke;work 5\n",
        "main;[l] std::thread::run;[l] boost::asio::run;[l] boost::asio::poll 2\n",
        "main;[l] pthread_cond_wait;[l] __pthread_cond_wait_common;[l] futex_wait 3\n",
        "main;[l] std::sort;cmp;[l] std::swap 1\n",
    ));
    let std = collapse_library(&prof, Libraries::Named("std"));
    assert_eq!(
        to_folded(&std),
        concat!(
            "app;main;[l] pthread_cond_wait;[l] __pthread_cond_wait_common;[l] futex_wait 3\n",
            "app;main;[l] std::sort;cmp;[l] std::swap 1\n",
            "app;main;[l] std::thread::run;[l] boost::asio::run;[l] boost::asio::poll 2\n",
            "app;main;[l] std::thread::run;work 5\n",
        )
    );
    assert_eq!(std.root_total(), prof.root_total());
    let all = collapse_library(&prof, Libraries::All);
    assert_eq!(
        to_folded(&all),
        concat!(
            "app;main;[l] pthread_cond_wait 3\n",
            "app;main;[l] std::sort;cmp;[l] std::swap 1\n",
            "app;main;[l] std::thread::run;[l] boost::asio::run 2\n",
            "app;main;[l] std::thread::run;work 5\n",
        )
    );
    let entry = all.function_id("[l] pthread_cond_wait").unwrap();
    assert_eq!(all.function_kind(entry), FrameKind::Library, "kinds stay");
    let c = collapse_library(&prof, Libraries::Named(UNSCOPED_LIBRARY));
    assert_eq!(c.total(at(&c, &["main", "[l] pthread_cond_wait"])), 3);
    assert_eq!(c.function_id("[l] futex_wait"), None);
}

#[test]
fn every_stack_transform_keeps_an_empty_profile_empty() {
    let empty = Profile::default();
    let none: FuncSet = Vec::new();
    assert!(drop_stacks_through(&empty, &none).is_empty());
    assert!(keep_stacks_through(&empty, &none).is_empty());
    assert!(collapse_recursion(&empty, None).is_empty());
    assert!(collapse_library(&empty, Libraries::All).is_empty());
    assert!(focus_function(&empty, &none, "f").is_empty());
}
