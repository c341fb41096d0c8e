//! Headless-Chromium tests of reading a mounted profile: search, transforms as chips, the
//! function table and sandwich, keyboard navigation, and a 5,000-level stack. Every wait is on
//! a condition (`support::until`).
//! Run: `CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown -p embers`.

#![cfg(target_arch = "wasm32")]

mod support;

use embers::state::loaded::{LoadState, Loaded};
use embers::state::view_spec::Transform;
use leptos::prelude::*;
use support::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::HtmlElement;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn search_dims_non_matches_and_reports_the_share() {
    let (m, canvas) = mounted_fixture().await;
    let (_, before) = painted_pixels(&canvas);
    m.view.search.update(|s| s.text = "ep_poll, tcp_".into());
    let found = m
        .view
        .found
        .with_untracked(|f| f.matches().cloned())
        .expect("search ran");
    assert!(found.count >= 3, "{} matches", found.count);
    until("the summary shows the share", || {
        let summary = text_of(&m.root, "search-summary");
        summary.contains("matches") && summary.contains('%')
    })
    .await;
    until("non-matching frames are dimmed", || {
        painted_pixels(&canvas).1 != before
    })
    .await;
    // An invalid regex is reported, not thrown.
    m.view.search.update(|s| {
        s.text = "([".into();
        s.regex = true;
    });
    until("the invalid regex is reported", || {
        text_of(&m.root, "search-summary").starts_with("Invalid regex")
    })
    .await;
}

#[wasm_bindgen_test]
async fn transforms_show_as_chips_and_are_reversible() {
    let (m, _) = mounted_fixture().await;
    m.view
        .transforms
        .set(vec![Transform::FoldThreads, Transform::KernelDepth(0)]);
    let shown = m.view.shown.get_untracked().unwrap();
    assert!(
        shown.profile.node_count() < 99,
        "{}",
        shown.profile.node_count()
    );
    assert!((0..shown.profile.node_count() as u32).all(|n| !shown
        .profile
        .name(n)
        .starts_with("[k]")
        && !shown.profile.name(n).starts_with("[t]")));
    assert_eq!(
        shown.profile.root_total(),
        1_656_564,
        "folding keeps the total"
    );
    until("two chips show", || {
        by_testid(&m.root, "chips").is_some_and(|c| {
            c.query_selector_all("[data-testid='chip']")
                .unwrap()
                .length()
                == 2
        })
    })
    .await;
    let remove: HtmlElement = by_testid(&m.root, "chips")
        .unwrap()
        .query_selector("[data-testid='chip'] button")
        .unwrap()
        .unwrap()
        .unchecked_into();
    remove.click();
    assert_eq!(
        m.view.transforms.get_untracked(),
        vec![Transform::KernelDepth(0)]
    );
    m.view.transforms.set(Vec::new());
    assert_eq!(
        m.view.shown.get_untracked().unwrap().profile.node_count(),
        99
    );
}

#[wasm_bindgen_test]
async fn the_table_selects_functions_and_opens_their_sandwich() {
    let (m, _) = mounted_fixture().await;
    if by_testid(&m.root, "function-table").is_none() {
        by_testid(&m.root, "table-toggle").unwrap().click();
    }
    until("the table fills", || {
        by_testid(&m.root, "function-table").is_some_and(|t| {
            t.query_selector_all("[data-testid='table-row']")
                .unwrap()
                .length()
                > 20
        })
    })
    .await;
    let rows = by_testid(&m.root, "function-table")
        .unwrap()
        .query_selector_all("[data-testid='table-row']")
        .unwrap();
    let first: HtmlElement = rows.get(0).unwrap().unchecked_into();
    assert!(
        first.text_content().unwrap().contains("ep_poll"),
        "highest self first: {:?}",
        first.text_content()
    );
    first.click();
    assert_eq!(
        m.view.selected.get_untracked().as_deref(),
        Some("[k] ep_poll")
    );
    until("the sandwich button is enabled", || {
        by_testid(&m.root, "sandwich-toggle")
            .is_some_and(|b| !b.unchecked_ref::<web_sys::HtmlButtonElement>().disabled())
    })
    .await;
    by_testid(&m.root, "sandwich-toggle").unwrap().click();
    for id in ["sandwich-callers", "sandwich-callees"] {
        until(id, || {
            canvas(&m.root, id).is_some_and(|c| painted_pixels(&c).0 > 1000)
        })
        .await;
    }
}

#[wasm_bindgen_test]
async fn arrow_keys_move_focus_enter_zooms_and_the_focus_is_announced() {
    let (m, canvas) = mounted_fixture().await;
    press(&canvas, "ArrowDown");
    press(&canvas, "ArrowDown");
    let focused = m.view.focused.get_untracked().expect("focus moved");
    let shown = m.view.shown.get_untracked().unwrap();
    assert_eq!(shown.profile.depth(focused), 2);
    assert_eq!(
        shown.profile.name(focused),
        "[l] __libc_start_main",
        "down follows the widest child"
    );
    until("the focus is announced", || {
        text_of(&m.root, "announcer").starts_with("[l] __libc_start_main")
    })
    .await;
    press(&canvas, "ArrowLeft");
    assert_ne!(
        m.view.focused.get_untracked(),
        Some(focused),
        "left moves along the row"
    );
    press(&canvas, "Enter");
    assert_eq!(
        Some(m.view.zoom.get_untracked()),
        m.view.focused.get_untracked()
    );
}

#[wasm_bindgen_test]
async fn a_5000_level_stack_renders_and_scrolls_with_a_viewport_sized_canvas() {
    let frames: Vec<String> = (0..5000).map(|i| format!("f{i}")).collect();
    let folded = format!("{} 7\nshort 3\n", frames.join(";"));
    let profile = embers_model::wire::folded::parse_folded(&folded, "deep").unwrap();
    assert_eq!(profile.max_depth(), 5000);
    let loaded = Loaded::new(profile, request(), None, 0.0);
    let m = mount_viewer(LoadState::Loaded(std::sync::Arc::new(loaded)));
    until("the graph is painted", || {
        canvas(&m.root, "flame-canvas").is_some_and(|c| is_painted(&c, 0.001))
    })
    .await;
    let canvas = canvas(&m.root, "flame-canvas").unwrap();
    let dpr = web_sys::window().unwrap().device_pixel_ratio();
    assert!(
        f64::from(canvas.height()) <= 600.0 * dpr + 1.0,
        "canvas stays viewport-sized: {}",
        canvas.height()
    );
    let scroller: HtmlElement = m
        .root
        .query_selector(".graph-scroller")
        .unwrap()
        .unwrap()
        .unchecked_into();
    assert!(
        scroller.scroll_height() >= 5001 * 18,
        "content is as tall as the stack"
    );
    let (_, before) = painted_pixels(&canvas);
    scroller.set_scroll_top(scroller.scroll_height());
    scroller
        .dispatch_event(&web_sys::Event::new("scroll").unwrap())
        .unwrap();
    until("the deepest rows are drawn after scrolling", || {
        let (painted, now) = painted_pixels(&canvas);
        now != before && painted > 1000
    })
    .await;
}
