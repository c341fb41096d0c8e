//! Headless-Chromium tests of the real components: mounting, drawing a decoded fixture,
//! zoom and reset, the Self/Total toggle, and error display.
//! Run: `CHROMEDRIVER=/usr/bin/chromedriver cargo test --target wasm32-unknown-unknown -p embers`.
#![cfg(target_arch = "wasm32")]

use embers::app::{decode_to_state, Viewer};
use embers::state::LoadState;
use embers::view::ViewSpec;
use embers::view_state::ViewState;
use embers_model::contract::request::ProfileRequest;
use embers_model::NodeId;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{HtmlCanvasElement, HtmlElement};

wasm_bindgen_test_configure!(run_in_browser);

const ONCPU_B: &str = include_str!("../model/tests/data/fixtures/process-oncpu-b/response.json");
const ERROR_500: &str = include_str!("../model/tests/data/fixtures/error-500-fail/response.json");

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

const STYLE: &str = include_str!("../style/main.css");

/// A fresh, sized host element for one test, with the app's stylesheet on the page.
fn host() -> HtmlElement {
    let doc = document();
    if doc.query_selector("style[data-embers]").unwrap().is_none() {
        let style = doc.create_element("style").unwrap();
        style.set_attribute("data-embers", "").unwrap();
        style.set_text_content(Some(STYLE));
        doc.head().unwrap().append_child(&style).unwrap();
    }
    let el: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    el.set_attribute(
        "style",
        "width:1000px;height:600px;display:flex;flex-direction:column",
    )
    .unwrap();
    document().body().unwrap().append_child(&el).unwrap();
    el
}

fn by_testid(root: &HtmlElement, id: &str) -> Option<HtmlElement> {
    root.query_selector(&format!("[data-testid='{id}']"))
        .unwrap()
        .map(JsCast::unchecked_into)
}

struct Mounted {
    root: HtmlElement,
    load: RwSignal<LoadState>,
    zoom: RwSignal<NodeId>,
    view: ViewState,
}

fn mount_viewer(state: LoadState) -> Mounted {
    let root = host();
    let load = RwSignal::new(state);
    let slot = std::rc::Rc::new(std::cell::Cell::new(None));
    let out = slot.clone();
    let handle = leptos::mount::mount_to(root.clone(), move || {
        // The view state's effects need the mount's reactive owner.
        let view = ViewState::new(load, ViewSpec::default());
        out.set(Some(view));
        view! { <Viewer view=view /> }
    });
    handle.forget();
    let view = slot.take().expect("mounted");
    Mounted {
        root,
        load,
        zoom: view.zoom,
        view,
    }
}

fn request() -> ProfileRequest {
    ProfileRequest {
        app_service: Some("redis-server".into()),
        ..ProfileRequest::default()
    }
}

/// Pixels of the canvas that are not the background colour.
fn painted_pixels(canvas: &HtmlCanvasElement) -> (usize, Vec<u8>) {
    let ctx: web_sys::CanvasRenderingContext2d =
        canvas.get_context("2d").unwrap().unwrap().unchecked_into();
    let data = ctx
        .get_image_data(
            0.0,
            0.0,
            f64::from(canvas.width()),
            f64::from(canvas.height()),
        )
        .unwrap()
        .data()
        .0;
    let bg = [
        data[data.len() - 4],
        data[data.len() - 3],
        data[data.len() - 2],
    ];
    let painted = data
        .chunks_exact(4)
        .filter(|p| [p[0], p[1], p[2]] != bg)
        .count();
    (painted, data)
}

fn click_canvas(canvas: &HtmlCanvasElement, x: f64, y: f64) {
    let rect = canvas.get_bounding_client_rect();
    let init = web_sys::MouseEventInit::new();
    init.set_bubbles(true);
    init.set_client_x((rect.left() + x) as i32);
    init.set_client_y((rect.top() + y) as i32);
    for kind in ["mousemove", "click"] {
        let ev = web_sys::MouseEvent::new_with_mouse_event_init_dict(kind, &init).unwrap();
        canvas.dispatch_event(&ev).unwrap();
    }
}

#[wasm_bindgen_test]
async fn the_app_mounts_with_its_form() {
    let root = host();
    leptos::mount::mount_to(root.clone(), embers::App).forget();
    sleep(20).await;
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
        "status",
    ] {
        assert!(by_testid(&root, id).is_some(), "missing data-testid={id}");
    }
}

#[wasm_bindgen_test]
async fn a_decoded_fixture_paints_the_canvas_and_reports_status() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(100).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas")
        .expect("canvas")
        .unchecked_into();
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
    let status = by_testid(&m.root, "status")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(status.contains("99 nodes"), "{status}");
    assert!(status.contains("1.66 s"), "{status}");
}

#[wasm_bindgen_test]
async fn click_zooms_breadcrumbs_follow_and_escape_resets() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(100).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas").unwrap().unchecked_into();
    // Row 3 (y = 3.5 rows), right half: `main` under the redis-server thread.
    click_canvas(&canvas, 700.0, 18.0 * 3.5);
    sleep(50).await;
    assert_ne!(m.zoom.get_untracked(), 0, "click zoomed");
    let crumbs = by_testid(&m.root, "breadcrumbs").unwrap();
    assert_eq!(
        crumbs.query_selector_all("button").unwrap().length(),
        4,
        "root › thread › libc › main"
    );
    let reset = by_testid(&m.root, "reset-zoom").unwrap();
    assert!(!reset
        .unchecked_ref::<web_sys::HtmlButtonElement>()
        .disabled());
    let esc = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &{
        let i = web_sys::KeyboardEventInit::new();
        i.set_key("Escape");
        i
    })
    .unwrap();
    web_sys::window().unwrap().dispatch_event(&esc).unwrap();
    sleep(50).await;
    assert_eq!(m.zoom.get_untracked(), 0, "Esc reset the zoom");
    assert_eq!(crumbs.query_selector_all("button").unwrap().length(), 1);
}

#[wasm_bindgen_test]
async fn the_metric_toggle_changes_labels_and_shading() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(100).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas").unwrap().unchecked_into();
    let (_, before) = painted_pixels(&canvas);
    let toggle = by_testid(&m.root, "metric-toggle").unwrap();
    assert_eq!(
        toggle.get_attribute("data-metric").as_deref(),
        Some("total")
    );
    toggle.click();
    sleep(50).await;
    assert_eq!(toggle.get_attribute("data-metric").as_deref(), Some("self"));
    let (_, after) = painted_pixels(&canvas);
    let changed = before
        .chunks_exact(4)
        .zip(after.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        changed > before.len() / 4 / 10,
        "self mode repaints bars ({changed} px changed)"
    );
}

#[wasm_bindgen_test]
async fn server_errors_are_shown_and_empty_results_are_not_errors() {
    let m = mount_viewer(decode_to_state(500, ERROR_500, request()));
    sleep(30).await;
    let error = by_testid(&m.root, "error")
        .expect("error shown")
        .text_content()
        .unwrap();
    assert!(error.contains("HTTP 500 FAIL"), "{error}");
    assert!(error.contains("Timeout exceeded"), "{error}");
    assert!(by_testid(&m.root, "flame-canvas").is_none());

    m.load.set(decode_to_state(
        200,
        "<html>502 Bad Gateway</html>",
        request(),
    ));
    sleep(30).await;
    let error = by_testid(&m.root, "error").unwrap().text_content().unwrap();
    assert!(error.contains("not JSON"), "{error}");

    let empty = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null,"debug":null}"#;
    m.load.set(decode_to_state(200, empty, request()));
    sleep(30).await;
    assert!(by_testid(&m.root, "error").is_none());
    let status = by_testid(&m.root, "status")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(status.contains("No samples"), "{status}");
}

#[wasm_bindgen_test]
async fn a_submitted_query_that_fails_shows_an_error_and_keeps_the_form() {
    let root = host();
    leptos::mount::mount_to(root.clone(), embers::App).forget();
    sleep(20).await;
    let app: web_sys::HtmlInputElement = by_testid(&root, "app-service").unwrap().unchecked_into();
    app.set_value("redis-server");
    app.dispatch_event(&web_sys::Event::new("input").unwrap())
        .unwrap();
    let form: web_sys::HtmlFormElement = by_testid(&root, "query-form").unwrap().unchecked_into();
    form.request_submit().unwrap();
    for _ in 0..100 {
        sleep(50).await;
        if by_testid(&root, "error").is_some() {
            break;
        }
    }
    // The test server answers the relative URL with 404 and no envelope.
    let error = by_testid(&root, "error")
        .expect("error shown")
        .text_content()
        .unwrap();
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
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(50).await;
    m.zoom.set(3);
    sleep(20).await;
    let empty = r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":null}"#;
    m.load.set(decode_to_state(200, empty, request()));
    sleep(50).await;
    assert!(by_testid(&m.root, "flame-canvas").is_none());
    let status = by_testid(&m.root, "status")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(status.contains("No samples"), "{status}");
    // And back to a graph.
    m.load.set(decode_to_state(200, ONCPU_B, request()));
    sleep(80).await;
    assert!(by_testid(&m.root, "flame-canvas").is_some());
    assert_eq!(
        m.view.shown.get_untracked().map(|l| l.profile.node_count()),
        Some(99)
    );
}

#[wasm_bindgen_test]
async fn search_dims_non_matches_and_reports_the_share() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(100).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas").unwrap().unchecked_into();
    let (_, before) = painted_pixels(&canvas);
    m.view.search.update(|s| s.text = "ep_poll, tcp_".into());
    sleep(60).await;
    let found = m.view.found.get_untracked().expect("search ran");
    assert!(found.nodes.len() >= 3, "{} matches", found.nodes.len());
    let summary = by_testid(&m.root, "search-summary")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(
        summary.contains("matches") && summary.contains('%'),
        "{summary}"
    );
    let (_, after) = painted_pixels(&canvas);
    assert_ne!(before, after, "non-matching frames are dimmed");
    // An invalid regex is reported, not thrown.
    m.view.search.update(|s| {
        s.text = "([".into();
        s.regex = true;
    });
    sleep(40).await;
    let summary = by_testid(&m.root, "search-summary")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(summary.starts_with("Invalid regex"), "{summary}");
}

#[wasm_bindgen_test]
async fn transforms_show_as_chips_and_are_reversible() {
    use embers::view::Transform;
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(60).await;
    m.view
        .transforms
        .set(vec![Transform::FoldThreads, Transform::KernelDepth(0)]);
    sleep(60).await;
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
    let chips = by_testid(&m.root, "chips").expect("chips");
    assert_eq!(
        chips
            .query_selector_all("[data-testid='chip']")
            .unwrap()
            .length(),
        2
    );
    let remove: HtmlElement = chips
        .query_selector("[data-testid='chip'] button")
        .unwrap()
        .unwrap()
        .unchecked_into();
    remove.click();
    sleep(60).await;
    assert_eq!(
        m.view.transforms.get_untracked(),
        vec![Transform::KernelDepth(0)]
    );
    m.view.transforms.set(Vec::new());
    sleep(60).await;
    assert_eq!(
        m.view.shown.get_untracked().unwrap().profile.node_count(),
        99
    );
}

#[wasm_bindgen_test]
async fn the_table_selects_functions_and_opens_their_sandwich() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(60).await;
    if by_testid(&m.root, "function-table").is_none() {
        by_testid(&m.root, "table-toggle").unwrap().click();
        sleep(40).await;
    }
    let table = by_testid(&m.root, "function-table").expect("table");
    let rows = table
        .query_selector_all("[data-testid='table-row']")
        .unwrap();
    assert!(rows.length() > 20, "{} rows", rows.length());
    let first: HtmlElement = rows.get(0).unwrap().unchecked_into();
    assert!(
        first.text_content().unwrap().contains("ep_poll"),
        "highest self first: {:?}",
        first.text_content()
    );
    first.click();
    sleep(40).await;
    assert_eq!(
        m.view.selected.get_untracked().as_deref(),
        Some("[k] ep_poll")
    );
    by_testid(&m.root, "sandwich-toggle").unwrap().click();
    sleep(120).await;
    for id in ["sandwich-callers", "sandwich-callees"] {
        let c: HtmlCanvasElement = by_testid(&m.root, id)
            .unwrap_or_else(|| panic!("{id}"))
            .unchecked_into();
        let (painted, _) = painted_pixels(&c);
        assert!(painted > 1000, "{id} painted {painted} px");
    }
}

#[wasm_bindgen_test]
async fn arrow_keys_move_focus_enter_zooms_and_the_focus_is_announced() {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    sleep(80).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas").unwrap().unchecked_into();
    let key = |k: &str| {
        let init = web_sys::KeyboardEventInit::new();
        init.set_key(k);
        init.set_bubbles(true);
        canvas
            .dispatch_event(
                &web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init)
                    .unwrap(),
            )
            .unwrap();
    };
    key("ArrowDown");
    key("ArrowDown");
    sleep(30).await;
    let focused = m.view.focused.get_untracked().expect("focus moved");
    let shown = m.view.shown.get_untracked().unwrap();
    assert_eq!(shown.profile.depth(focused), 2);
    assert_eq!(
        shown.profile.name(focused),
        "[l] __libc_start_main",
        "down follows the widest child"
    );
    let announced = by_testid(&m.root, "announcer")
        .unwrap()
        .text_content()
        .unwrap();
    assert!(
        announced.starts_with("[l] __libc_start_main"),
        "{announced}"
    );
    key("ArrowLeft");
    sleep(20).await;
    assert_ne!(
        m.view.focused.get_untracked(),
        Some(focused),
        "left moves along the row"
    );
    key("Enter");
    sleep(30).await;
    assert_eq!(Some(m.zoom.get_untracked()), m.view.focused.get_untracked());
}

#[wasm_bindgen_test]
async fn a_5000_level_stack_renders_and_scrolls_with_a_viewport_sized_canvas() {
    use embers::state::Loaded;
    let frames: Vec<String> = (0..5000).map(|i| format!("f{i}")).collect();
    let folded = format!("{} 7\nshort 3\n", frames.join(";"));
    let profile = embers_model::wire::folded::parse_folded(&folded, "deep").unwrap();
    assert_eq!(profile.max_depth(), 5000);
    let loaded = Loaded::new(profile, request(), None, 0.0);
    let m = mount_viewer(LoadState::Loaded(std::sync::Arc::new(loaded)));
    sleep(100).await;
    let canvas: HtmlCanvasElement = by_testid(&m.root, "flame-canvas").unwrap().unchecked_into();
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
    scroller.set_scroll_top(scroller.scroll_height());
    scroller
        .dispatch_event(&web_sys::Event::new("scroll").unwrap())
        .unwrap();
    sleep(80).await;
    let (painted, _) = painted_pixels(&canvas);
    assert!(
        painted > 1000,
        "the deepest rows are drawn after scrolling ({painted} px)"
    );
}
