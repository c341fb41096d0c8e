//! Warming the flame graph's code up while the page waits for its first answer.
//!
//! The browser compiles a wasm function only when it is first called, and runs it in its
//! baseline tier until it proves hot. Without this the first answer of a page load pays for
//! compiling the graph's view, layout, paint and canvas code (~300 functions), and runs all of
//! it in that slow tier: the 10k-node render's arrival task was 20–55 ms against 7–11 ms for
//! the same answer arriving a second time in the same page. Drawing a small profile into an
//! off-screen graph once, when the page is idle, moves that cost out of the user's wait
//! (the decode worker warms its decoder up the same way).

use std::sync::Arc;
use std::time::Duration;

use embers_model::contract::request::ProfileRequest;
use embers_model::tree::build::TreeBuilder;
use embers_model::view::layout::Orientation;
use embers_model::view::paint::Metric;
use embers_model::Profile;
use leptos::mount::mount_to;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::components::graph::flame_graph::FlameGraph;
use crate::components::theme::theme_state;
use crate::session::runner::{warm_up_done, warm_up_started};
use crate::state::loaded::Loaded;
use crate::state::view_state::ViewState;

/// Microtask turns the graph's effects get to mount, size and draw it (three suffice:
/// the canvas node, then its size, then the drawing; a few more for slack).
const DRAW_TICKS: usize = 6;

/// Draws a small profile off-screen once the page is idle, unless an answer is shown by then
/// (its code is warm already). Mounted and removed in the same task, so no frame shows it.
pub fn warm_up_when_idle(view: ViewState) {
    let theme = theme_state();
    let run = move || {
        if view.shown.with_untracked(Option::is_some) {
            return;
        }
        let Some(container) = hidden_container() else {
            return;
        };
        // The warm-up's paint is no load's first paint: the page's timing marks skip it.
        warm_up_started();
        let loaded = Arc::new(Loaded::new(sample(), ProfileRequest::default(), None, 0.0));
        let handle = mount_to(container.clone(), move || {
            provide_context(theme);
            view! {
                <FlameGraph loaded=loaded zoom=Signal::stored(0) on_zoom=Callback::new(|_| ())
                    metric=Signal::stored(Metric::Total)
                    orientation=Signal::stored(Orientation::Icicle)
                    testid="graph-warm-up" label="" />
            }
            // The type the viewer's graph slot has already: no new mount code in the bundle.
            .into_any()
        });
        spawn_local(async move {
            // Effects run on microtasks: all of this stays inside the idle callback's task.
            // (A resolved promise, not Leptos' `tick`: that one brings a channel into the bundle.)
            for _ in 0..DRAW_TICKS {
                let _ = JsFuture::from(js_sys::Promise::resolve(&JsValue::UNDEFINED)).await;
            }
            drop(handle);
            container.remove();
            warm_up_done();
        });
    };
    // Safari has no requestIdleCallback: then right after this task.
    if request_idle_callback_with_handle(run).is_err() {
        set_timeout(run, Duration::ZERO);
    }
}

fn hidden_container() -> Option<web_sys::HtmlElement> {
    let document = web_sys::window()?.document()?;
    let el = document
        .create_element("div")
        .ok()?
        .dyn_into::<web_sys::HtmlElement>()
        .ok()?;
    // Laid out (so it has a size and draws) but off-screen and invisible; a class, since
    // the page's CSP refuses inline style attributes.
    el.set_class_name("warm-up");
    el.set_attribute("aria-hidden", "true").ok()?;
    document.body()?.append_child(&el).ok()?;
    Some(el)
}

/// A profile with what a real one has: kernel, library and application frames, labels that
/// fit, labels cut short, and runs of sub-pixel frames merged into one bar.
fn sample() -> Profile {
    let mut b = TreeBuilder::new("warm-up");
    for i in 0..48u64 {
        let worker = format!("worker-{}", i % 4);
        let handler = format!("app::handlers::module_{}::handle_request_{i}", i % 6);
        let lib = format!("[l] libc.so.6`memcpy_{}", i % 3);
        let value = if i % 3 == 0 { 400 } else { 1 + i % 5 };
        b.add_stack(
            [
                worker.as_str(),
                "main",
                handler.as_str(),
                lib.as_str(),
                "[k] do_syscall_64",
            ],
            value,
        );
    }
    b.finish()
}
