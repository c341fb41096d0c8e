//! One decode worker: started, handed bodies, answering by request id; failing requests in
//! flight (and waiting callers) when it breaks.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use embers_decode_worker::{DecodeRequest, READY, WARM};
use js_sys::{Function, Promise, Reflect};
use leptos::prelude::set_timeout;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use crate::net::http::js_error;
use crate::net::marks;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Starting,
    Ready,
    Broken,
}

/// One running worker and what waits on it.
pub(super) struct Client {
    pub(super) worker: Worker,
    pub(super) status: Cell<Status>,
    /// Resolvers of [`Client::ready`] promises, settled with `true` or `false`.
    waiting: RefCell<Vec<Function>>,
    /// Resolvers of requests in flight, by id.
    pending: RefCell<HashMap<u32, Function>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

/// The global the boot script leaves its worker in: `{worker, ready, error}`.
const BOOT_WORKER: &str = "__embersDecodeWorker";

fn stopped_message(e: &JsValue) -> String {
    let why = e.as_string().unwrap_or_else(|| "it stopped".into());
    format!("Decoding failed: the decode worker stopped ({why}).")
}

impl Client {
    /// Starts a worker from `script`; `on_crash` runs (soon after) when a worker that was
    /// ready dies.
    pub(super) fn spawn(script: &str, on_crash: fn()) -> Option<Rc<Client>> {
        let worker = Worker::new(script).ok()?;
        Some(Client::attach(worker, Status::Starting, on_crash))
    }

    /// Takes over the worker the boot script started before the page's wasm loaded (see
    /// `scripts/boot-worker.js`), if there is one that did not fail; `None` otherwise.
    pub(super) fn adopt_boot_worker(on_crash: fn()) -> Option<Rc<Client>> {
        let global = js_sys::global();
        let started = Reflect::get(&global, &BOOT_WORKER.into())
            .ok()
            .filter(|v| v.is_object())?;
        // Taken once: a restarted worker is a fresh one.
        let _ = Reflect::delete_property(
            global.unchecked_ref::<js_sys::Object>(),
            &BOOT_WORKER.into(),
        );
        let field = |name: &str| Reflect::get(&started, &name.into()).ok();
        let worker: Worker = field("worker")?.dyn_into().ok()?;
        if field("error").is_some_and(|e| e.is_truthy()) {
            worker.terminate();
            return None;
        }
        let ready = field("ready").is_some_and(|r| r.is_truthy());
        if field("warm").is_some_and(|w| w.is_truthy()) {
            marks::mark(marks::WORKER_WARM);
        }
        let status = if ready {
            Status::Ready
        } else {
            Status::Starting
        };
        Some(Client::attach(worker, status, on_crash))
    }

    /// Listens to `worker` (replacing the boot script's handlers, if any).
    fn attach(worker: Worker, status: Status, on_crash: fn()) -> Rc<Client> {
        Rc::new_cyclic(|weak: &std::rc::Weak<Client>| {
            let on_message = {
                let weak = weak.clone();
                Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                    if let Some(c) = weak.upgrade() {
                        c.on_message(e.data());
                    }
                })
            };
            let on_error = {
                let weak = weak.clone();
                Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
                    // The page must not see the worker's failure as its own.
                    e.prevent_default();
                    if let Some(c) = weak.upgrade() {
                        let why = Reflect::get(&e, &"message".into())
                            .ok()
                            .and_then(|m| m.as_string())
                            .filter(|m| !m.is_empty())
                            .unwrap_or_else(|| "its script failed".into());
                        let crashed = c.status.get() == Status::Ready;
                        c.fail(&why);
                        if crashed {
                            // It ran, then died (out of memory on a huge answer, say): the
                            // next answer gets a fresh worker rather than the page.
                            set_timeout(on_crash, Duration::ZERO);
                        }
                    }
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            Client {
                worker,
                status: Cell::new(status),
                waiting: RefCell::new(Vec::new()),
                pending: RefCell::new(HashMap::new()),
                _on_message: on_message,
                _on_error: on_error,
            }
        })
    }

    /// Whether request `id` is being decoded here.
    pub(super) fn is_decoding(&self, id: u32) -> bool {
        self.pending.borrow().contains_key(&id)
    }

    /// Whether a body is being decoded here or waits for the worker to start.
    pub(super) fn has_work(&self) -> bool {
        !self.pending.borrow().is_empty() || !self.waiting.borrow().is_empty()
    }

    /// Sends `request` and waits for the reply message.
    /// The reply message, or why there is none.
    pub(super) async fn send(&self, request: &DecodeRequest) -> Result<JsValue, String> {
        let answer = Promise::new(&mut |resolve, _reject| {
            self.pending.borrow_mut().insert(request.id, resolve);
        });
        let (msg, transfer) = request.to_js();
        if let Err(e) = self.worker.post_message_with_transfer(&msg, &transfer) {
            self.pending.borrow_mut().remove(&request.id);
            return Err(format!(
                "Could not hand the answer to the decoder: {}",
                js_error(&e)
            ));
        }
        match JsFuture::from(answer).await {
            // `Client::fail` answers requests in flight with the reason, not a message.
            Ok(why) if why.is_string() => Err(stopped_message(&why)),
            Ok(msg) => Ok(msg),
            Err(e) => Err(stopped_message(&e)),
        }
    }

    /// Whether the worker is (or becomes) ready to take bodies.
    pub(super) async fn ready(&self) -> bool {
        match self.status.get() {
            Status::Ready => true,
            Status::Broken => false,
            Status::Starting => {
                let settled = Promise::new(&mut |resolve, _reject| {
                    self.waiting.borrow_mut().push(resolve);
                });
                JsFuture::from(settled)
                    .await
                    .ok()
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false)
            }
        }
    }

    fn on_message(&self, data: JsValue) {
        match data.as_string().as_deref() {
            Some(READY) => {
                self.status.set(Status::Ready);
                marks::mark(marks::WORKER_READY);
                self.settle_waiting(true);
                return;
            }
            Some(WARM) => {
                marks::mark(marks::WORKER_WARM);
                return;
            }
            _ => {}
        }
        let id = Reflect::get(&data, &"id".into())
            .ok()
            .and_then(|v| v.as_f64())
            .map(|v| v as u32);
        if let Some(resolve) = id.and_then(|id| self.pending.borrow_mut().remove(&id)) {
            let _ = resolve.call1(&JsValue::NULL, &data);
        }
    }

    /// Marks the worker unusable: waiting callers fall back to the page, requests in flight
    /// fail with `why`.
    pub(super) fn fail(&self, why: &str) {
        self.status.set(Status::Broken);
        self.settle_waiting(false);
        let pending: Vec<Function> = self.pending.borrow_mut().drain().map(|(_, f)| f).collect();
        for resolve in pending {
            // Resolving with a non-message makes `decode` report the stop.
            let _ = resolve.call1(&JsValue::NULL, &JsValue::from_str(why));
        }
    }

    fn settle_waiting(&self, ready: bool) {
        let waiting: Vec<Function> = self.waiting.borrow_mut().drain(..).collect();
        for resolve in waiting {
            let _ = resolve.call1(&JsValue::NULL, &JsValue::from_bool(ready));
        }
    }
}
