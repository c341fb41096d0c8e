//! Headless-Chromium tests of the real components: mounting, drawing a decoded fixture,
//! zoom and reset, the Self/Total toggle, errors and empty results (search, transforms, the
//! table, sandwich, keyboard and deep stacks are in `analysis.rs`). Every wait is on a condition
//! (`support::until`).
//! Run: `CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown -p embers`.
#![cfg(target_arch = "wasm32")]

mod support;

use embers::session::runner::decode_to_state;
use embers::state::view_spec::Transform;
use leptos::prelude::*;
use support::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const ERROR_500: &str = include_str!("../model/tests/data/fixtures/error-500-fail/response.json");

#[wasm_bindgen_test]
async fn the_app_mounts_with_its_form_and_the_home_view() {
    let root = mount_app();
    until("the form mounts", || {
        by_testid(&root, "query-form").is_some()
    })
    .await;
    for id in [
        "query-form",
        "app-service",
        "language-type",
        "event-type",
        "tag-filter",
        "time-start",
        "time-end",
        "submit",
        "cancel",
        "home",
        "service-filter",
        "import-file",
    ] {
        assert!(by_testid(&root, id).is_some(), "missing data-testid={id}");
    }
}

#[wasm_bindgen_test]
async fn a_decoded_fixture_paints_the_canvas_and_reports_status() {
    let (m, canvas) = mounted_fixture().await;
    assert!(
        canvas.width() >= 1000,
        "canvas follows its container: {}",
        canvas.width()
    );
    let (painted, _) = painted_pixels(&canvas);
    let total = (canvas.width() * canvas.height()) as usize;
    assert!(
        painted > total / 20,
        "only {painted} of {total} pixels painted"
    );
    let status = text_of(&m.root, "status");
    assert!(status.contains("99 nodes"), "{status}");
    assert!(status.contains("1.66 s"), "{status}");
}

#[wasm_bindgen_test]
async fn click_zooms_breadcrumbs_follow_and_escape_resets() {
    let (m, canvas) = mounted_fixture().await;
    // Row 3 (y = 3.5 rows), right half: `main` under the redis-server thread.
    click_canvas(&canvas, 700.0, 18.0 * 3.5);
    until("the click zooms", || m.view.zoom.get_untracked() != 0).await;
    let crumbs = by_testid(&m.root, "breadcrumbs").unwrap();
    until("the breadcrumbs follow", || {
        crumbs.query_selector_all("button").unwrap().length() == 4
    })
    .await;
    assert_eq!(
        crumbs.query_selector_all("button").unwrap().length(),
        4,
        "root › thread › libc › main"
    );
    let reset = by_testid(&m.root, "reset-zoom").unwrap();
    assert!(!reset
        .unchecked_ref::<web_sys::HtmlButtonElement>()
        .disabled());
    press(&web_sys::window().unwrap(), "Escape");
    until("Esc resets the zoom", || m.view.zoom.get_untracked() == 0).await;
    until("one crumb left", || {
        crumbs.query_selector_all("button").unwrap().length() == 1
    })
    .await;
}

#[wasm_bindgen_test]
async fn the_metric_toggle_changes_labels_and_shading() {
    let (m, canvas) = mounted_fixture().await;
    let (_, before) = painted_pixels(&canvas);
    let toggle = by_testid(&m.root, "metric-toggle").unwrap();
    assert_eq!(
        toggle.get_attribute("data-metric").as_deref(),
        Some("total")
    );
    toggle.click();
    let changed = || {
        let (_, after) = painted_pixels(&canvas);
        before
            .chunks_exact(4)
            .zip(after.chunks_exact(4))
            .filter(|(a, b)| a != b)
            .count()
    };
    until("self mode repaints bars", || {
        changed() > before.len() / 4 / 10
    })
    .await;
    assert_eq!(toggle.get_attribute("data-metric").as_deref(), Some("self"));
}

#[wasm_bindgen_test]
async fn server_errors_are_shown_and_empty_results_are_not_errors() {
    let m = mount_viewer(decode_to_state(500, ERROR_500, request()));
    until("the error shows", || by_testid(&m.root, "error").is_some()).await;
    let error = text_of(&m.root, "error");
    assert!(error.contains("HTTP 500 FAIL"), "{error}");
    assert!(error.contains("Timeout exceeded"), "{error}");
    assert!(by_testid(&m.root, "flame-canvas").is_none());

    m.view.replace_result(decode_to_state(
        200,
        "<html>502 Bad Gateway</html>",
        request(),
    ));
    until("the new error shows", || {
        text_of(&m.root, "error").contains("not JSON")
    })
    .await;

    let empty = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null,"debug":null}"#;
    m.view
        .replace_result(decode_to_state(200, empty, request()));
    until("the error goes", || by_testid(&m.root, "error").is_none()).await;
    let status = text_of(&m.root, "status");
    assert!(status.contains("No samples"), "{status}");
}

#[wasm_bindgen_test]
async fn all_zero_values_say_why_nothing_is_drawn() {
    // What DeepFlow v6.5 can send when it dropped every leaf: frames, all values 0.
    let zero = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":[
        {"profile_location_str":"svc","node_id":"","parent_node_id":"-1","self_value":0,"total_value":0},
        {"profile_location_str":"main","node_id":"a","parent_node_id":"","self_value":0,"total_value":0},
        {"profile_location_str":"work","node_id":"b","parent_node_id":"a","self_value":0,"total_value":0}]}"#;
    let m = mount_viewer(decode_to_state(200, zero, request()));
    until("the empty state shows", || {
        by_testid(&m.root, "empty-state").is_some()
    })
    .await;
    let text = text_of(&m.root, "empty-state");
    assert!(text.contains("3 frames"), "{text}");
    assert!(text.contains("every value in it is 0"), "{text}");
    assert!(text.contains("DeepFlow v6.5"), "{text}");
    assert!(by_testid(&m.root, "flame-canvas").is_none());
    assert!(by_testid(&m.root, "error").is_none(), "not an error");
}

#[wasm_bindgen_test]
async fn a_success_description_is_shown_beside_the_status() {
    let truncated = ONCPU_B.replacen(
        r#""DESCRIPTION": """#,
        r#""DESCRIPTION": "truncated: 99 of 1200 nodes""#,
        1,
    );
    let m = mount_viewer(decode_to_state(200, &truncated, request()));
    until("the notice shows", || {
        by_testid(&m.root, "server-notice").is_some()
    })
    .await;
    assert_eq!(
        text_of(&m.root, "server-notice"),
        "truncated: 99 of 1200 nodes"
    );
    assert!(by_testid(&m.root, "flame-canvas").is_some());
    // A derived view (a transform) keeps it; a plain answer has none.
    m.view.transforms.set(vec![Transform::KernelDepth(0)]);
    until("the transform applies", || {
        m.view
            .shown
            .get_untracked()
            .is_some_and(|l| l.profile.node_count() < 99)
    })
    .await;
    assert_eq!(
        text_of(&m.root, "server-notice"),
        "truncated: 99 of 1200 nodes"
    );
    m.view
        .replace_result(decode_to_state(200, ONCPU_B, request()));
    until("the notice goes", || {
        by_testid(&m.root, "server-notice").is_none()
    })
    .await;
}

#[wasm_bindgen_test]
async fn a_submitted_query_that_fails_shows_an_error_and_keeps_the_form() {
    let root = mount_app();
    until("the form mounts", || {
        by_testid(&root, "app-service").is_some()
    })
    .await;
    let app: web_sys::HtmlInputElement = by_testid(&root, "app-service").unwrap().unchecked_into();
    app.set_value("redis-server");
    app.dispatch_event(&web_sys::Event::new("input").unwrap())
        .unwrap();
    let form: web_sys::HtmlFormElement = by_testid(&root, "query-form").unwrap().unchecked_into();
    form.request_submit().unwrap();
    until("the error shows", || by_testid(&root, "error").is_some()).await;
    // The test server answers the relative URL with 404 and no envelope.
    let error = text_of(&root, "error");
    assert!(
        error.contains("HTTP 404") || error.contains("Could not reach"),
        "{error}"
    );
    assert!(
        by_testid(&root, "submit").is_some(),
        "the form stays usable"
    );
}

#[wasm_bindgen_test]
async fn an_empty_result_after_a_graph_clears_it_without_panicking() {
    let (m, _) = mounted_fixture().await;
    m.view.zoom_to(3);
    until("zoomed", || m.view.zoom.get_untracked() == 3).await;
    let empty = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null}"#;
    m.view
        .replace_result(decode_to_state(200, empty, request()));
    until("the graph goes", || {
        by_testid(&m.root, "flame-canvas").is_none()
    })
    .await;
    let status = text_of(&m.root, "status");
    assert!(status.contains("No samples"), "{status}");
    // And back to a graph.
    m.view
        .replace_result(decode_to_state(200, ONCPU_B, request()));
    until("the graph returns", || {
        by_testid(&m.root, "flame-canvas").is_some()
    })
    .await;
    assert_eq!(
        m.view.shown.get_untracked().map(|l| l.profile.node_count()),
        Some(99)
    );
}
