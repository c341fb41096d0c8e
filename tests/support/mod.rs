//! Helpers for the browser tests: a sized host element with the real stylesheet, mounting the
//! viewer, reading pixels, dispatching events, and waiting on conditions (never fixed sleeps).

#![allow(dead_code)]

use embers::components::viewer::Viewer;
use embers::session::runner::decode_to_state;
use embers::state::loaded::LoadState;
use embers::state::view_spec::ViewSpec;
use embers::state::view_state::ViewState;
use embers_model::contract::request::ProfileRequest;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement};

const STYLE: &str = include_str!("../../style/main.css");

/// How long [`until`] waits before failing the test.
const WAIT_LIMIT_MS: f64 = 5_000.0;

pub fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// Resolves on the next animation frame (after the browser had a chance to run effects and
/// paint).
pub async fn next_frame() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .request_animation_frame(&resolve)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

/// Waits, frame by frame, until `condition` holds; fails the test with `what` after 5 s.
pub async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = js_sys::Date::now();
    loop {
        if condition() {
            return;
        }
        assert!(
            js_sys::Date::now() - start < WAIT_LIMIT_MS,
            "timed out waiting for: {what}"
        );
        next_frame().await;
    }
}

/// A fresh, sized host element for one test, with the app's stylesheet on the page.
pub fn host() -> HtmlElement {
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

pub fn by_testid(root: &HtmlElement, id: &str) -> Option<HtmlElement> {
    root.query_selector(&format!("[data-testid='{id}']"))
        .unwrap()
        .map(JsCast::unchecked_into)
}

pub fn text_of(root: &HtmlElement, id: &str) -> String {
    by_testid(root, id)
        .and_then(|e| e.text_content())
        .unwrap_or_default()
}

pub fn canvas(root: &HtmlElement, id: &str) -> Option<HtmlCanvasElement> {
    by_testid(root, id).map(JsCast::unchecked_into)
}

pub struct Mounted {
    pub root: HtmlElement,
    pub view: ViewState,
}

/// Mounts the viewer (no form) showing `state`.
pub fn mount_viewer(state: LoadState) -> Mounted {
    let root = host();
    let slot = std::rc::Rc::new(std::cell::Cell::new(None));
    let out = slot.clone();
    let handle = leptos::mount::mount_to(root.clone(), move || {
        // The view state's memos need the mount's reactive owner.
        let view = ViewState::new(ViewSpec::default());
        view.replace_result(state);
        out.set(Some(view));
        view! { <Viewer view=view /> }
    });
    handle.forget();
    let view = slot.take().expect("mounted");
    Mounted { root, view }
}

/// Mounts the whole page.
pub fn mount_app() -> HtmlElement {
    let root = host();
    leptos::mount::mount_to(root.clone(), embers::App).forget();
    root
}

pub fn request() -> ProfileRequest {
    ProfileRequest {
        app_service: Some("redis-server".into()),
        ..ProfileRequest::default()
    }
}

/// Pixels of the canvas that are not the background colour, and all pixels.
pub fn painted_pixels(canvas: &HtmlCanvasElement) -> (usize, Vec<u8>) {
    let ctx: web_sys::CanvasRenderingContext2d =
        canvas.get_context("2d").unwrap().unwrap().unchecked_into();
    let (w, h) = (f64::from(canvas.width()), f64::from(canvas.height()));
    if w == 0.0 || h == 0.0 {
        return (0, Vec::new());
    }
    let data = ctx.get_image_data(0.0, 0.0, w, h).unwrap().data().0;
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

/// Whether the canvas has more than `fraction` of its pixels painted.
pub fn is_painted(canvas: &HtmlCanvasElement, fraction: f64) -> bool {
    let (painted, data) = painted_pixels(canvas);
    !data.is_empty() && painted as f64 > (data.len() / 4) as f64 * fraction
}

pub fn click_canvas(canvas: &HtmlCanvasElement, x: f64, y: f64) {
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

pub fn press(target: &web_sys::EventTarget, key: &str) {
    let init = web_sys::KeyboardEventInit::new();
    init.set_key(key);
    init.set_bubbles(true);
    let ev = web_sys::KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    target.dispatch_event(&ev).unwrap();
}

/// The on-CPU fixture, shape B.
pub const ONCPU_B: &str =
    include_str!("../../model/tests/data/fixtures/process-oncpu-b/response.json");

/// Mounts the viewer with the on-CPU fixture and waits until its graph is painted.
pub async fn mounted_fixture() -> (Mounted, HtmlCanvasElement) {
    let m = mount_viewer(decode_to_state(200, ONCPU_B, request()));
    until("the graph is painted", || {
        canvas(&m.root, "flame-canvas").is_some_and(|c| is_painted(&c, 0.05))
    })
    .await;
    let c = canvas(&m.root, "flame-canvas").unwrap();
    (m, c)
}
