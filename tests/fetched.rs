//! `fetched` (what the page asks the service for, as a signal) in headless Chromium: it asks
//! again when a signal it reads changes, keeps the last answer while the next is on its way, and
//! drops an answer that arrives after a newer request. The test answers each request itself (a
//! promise it resolves), so the order of answers is chosen, not timed.
#![cfg(target_arch = "wasm32")]

mod support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use embers::state::fetched::fetched;
use leptos::prelude::*;
use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The resolve functions of the requests made so far, and how many answers were computed.
#[derive(Default)]
struct Service {
    pending: RefCell<Vec<js_sys::Function>>,
    answered: Cell<usize>,
}

impl Service {
    fn answer(&self, request: usize) {
        self.pending.borrow()[request]
            .call0(&JsValue::NULL)
            .expect("resolving a promise does not throw");
    }
}

#[wasm_bindgen_test]
async fn answers_follow_the_newest_request_and_late_ones_are_dropped() {
    let service = Rc::new(Service::default());
    let slot = Rc::new(Cell::new(None));
    let (svc, out) = (Rc::clone(&service), Rc::clone(&slot));
    leptos::mount::mount_to(host(), move || {
        let asked = RwSignal::new(1u32);
        let answer = fetched(move || {
            let n = asked.get();
            let mut resolve = None;
            let promise = js_sys::Promise::new(&mut |r, _| resolve = Some(r));
            svc.pending
                .borrow_mut()
                .push(resolve.expect("a promise's executor runs at once"));
            let svc = Rc::clone(&svc);
            async move {
                let _ = JsFuture::from(promise).await;
                svc.answered.set(svc.answered.get() + 1);
                n * 10
            }
        });
        out.set(Some((asked, answer)));
        view! { <p>{move || answer.get()}</p> }
    })
    .forget();
    let (asked, answer) = slot.take().expect("mounted");

    until("the first request is made", || {
        service.pending.borrow().len() == 1
    })
    .await;
    assert_eq!(
        answer.get_untracked(),
        None,
        "no answer before the first arrives"
    );
    asked.set(2);
    until("a change asks again", || {
        service.pending.borrow().len() == 2
    })
    .await;
    service.answer(1);
    until("the newer answer is shown", || {
        answer.get_untracked() == Some(20)
    })
    .await;
    service.answer(0);
    until("the older answer arrived", || service.answered.get() == 2).await;
    assert_eq!(
        answer.get_untracked(),
        Some(20),
        "a late answer to an older request is dropped"
    );

    asked.set(3);
    until("the next request is made", || {
        service.pending.borrow().len() == 3
    })
    .await;
    assert_eq!(
        answer.get_untracked(),
        Some(20),
        "the last answer stays while the next is asked"
    );
    service.answer(2);
    until("the next answer is shown", || {
        answer.get_untracked() == Some(30)
    })
    .await;
}
