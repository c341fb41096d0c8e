//! The page's side of the decode worker (`worker/`): starts it, hands it response bodies,
//! turns its answers back into profiles. Decoding a million-node response takes a few hundred
//! milliseconds; in the worker the page keeps scrolling, typing and cancelling meanwhile.
//!
//! Where no worker can run (a browser or portal policy that forbids it, the script missing,
//! or it failing to start in time) the same decoder module is loaded into the page and run
//! there: slower to show, same result. The page's own bundle carries no decoder at all.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use embers_decode_worker::{DecodeReply, DecodeRequest, READY};
use embers_model::contract::shape::ResultShape;
use embers_model::Profile;
use js_sys::{Function, Promise, Reflect};
use leptos::prelude::set_timeout;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{HtmlScriptElement, MessageEvent, Worker};

use crate::net::http::{js_error, Body};

/// The loader Trunk writes for the `decode_worker` binary (`data-loader-shim` in index.html),
/// next to the page.
const WORKER_SCRIPT: &str = "./decode_worker_loader.js";
/// The decoder module itself (wasm-bindgen `no-modules`: it defines a global `wasm_bindgen`).
const DECODER_SCRIPT: &str = "./decode_worker.js";
const DECODER_WASM: &str = "./decode_worker_bg.wasm";

/// A worker that has not said it is ready by then is given up on (decoding falls back to the
/// page).
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// Bodies at least this big leave the worker's memory at their peak: replace it afterwards.
const RECYCLE_AFTER_BYTES: usize = 32 << 20;

/// Why no profile came back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeFailure {
    /// The decoder read the body and says what is wrong (an error envelope, bad JSON, ...).
    #[error("{0}")]
    Rejected(String),
    /// No decoder could run, or it stopped: the body was not read.
    #[error("{0}")]
    Unavailable(String),
}

/// A decoded profile.
pub struct DecodedProfile {
    /// The call tree.
    pub profile: Profile,
    /// The shape the server used (`None` for an empty result).
    pub shape: Option<ResultShape>,
    /// The server's remark on a successful answer (e.g. that it cut the tree).
    pub notice: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Starting,
    Ready,
    Broken,
}

/// One running worker and what waits on it.
struct Client {
    worker: Worker,
    status: Cell<Status>,
    /// Resolvers of [`Client::ready`] promises, settled with `true` or `false`.
    waiting: RefCell<Vec<Function>>,
    /// Resolvers of requests in flight, by id.
    pending: RefCell<HashMap<u32, Function>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

thread_local! {
    static CLIENT: RefCell<Option<Rc<Client>>> = const { RefCell::new(None) };
}

/// Starts the worker in the background (call once at startup). Does nothing where workers
/// cannot be created.
pub fn start() {
    let Some(client) = Client::spawn() else {
        return;
    };
    CLIENT.with(|c| *c.borrow_mut() = Some(client.clone()));
    let weak = Rc::downgrade(&client);
    set_timeout(
        move || {
            if let Some(c) = weak
                .upgrade()
                .filter(|c| c.status.get() == Status::Starting)
            {
                c.fail("it did not start in time");
            }
        },
        START_TIMEOUT,
    );
}

/// Stops a worker that is busy decoding (its answer is no longer wanted) and starts a fresh
/// one, so the next body does not queue behind it.
pub fn cancel() {
    let busy = CLIENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|c| !c.pending.borrow().is_empty())
    });
    if busy {
        restart();
    }
}

fn restart() {
    if let Some(old) = CLIENT.with(|c| c.borrow_mut().take()) {
        old.worker.terminate();
        old.fail("it was stopped");
    }
    start();
}

/// Decodes `body` in the worker, or on the page when no worker can run. The body's buffers
/// move to the worker (they are empty here afterwards).
pub async fn decode(status: u16, body: &Body) -> Result<DecodedProfile, DecodeFailure> {
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1));
        id
    });
    let request = DecodeRequest {
        id,
        status,
        chunks: body.chunks.clone(),
    };
    let client = CLIENT.with(|c| c.borrow().clone());
    let reply = match client {
        Some(client) if client.ready().await => {
            let reply = client.send(&request).await;
            if body.len >= RECYCLE_AFTER_BYTES {
                restart();
            }
            reply?
        }
        _ => decode_on_page(&request).await?,
    };
    read_reply(&reply)
}

thread_local! {
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
    /// The decoder module's `decode_message`, once loaded into the page.
    static PAGE_DECODER: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Runs the decoder module on the page's thread (loading it the first time).
async fn decode_on_page(request: &DecodeRequest) -> Result<JsValue, DecodeFailure> {
    let decode = match PAGE_DECODER.with(|d| d.borrow().clone()) {
        Some(f) => f,
        None => {
            let f = load_page_decoder().await.map_err(|e| {
                unavailable(format!("Could not load the decoder ({}).", js_error(&e)))
            })?;
            PAGE_DECODER.with(|d| *d.borrow_mut() = Some(f.clone()));
            f
        }
    };
    let (msg, _) = request.to_js();
    decode
        .call1(&JsValue::NULL, &msg)
        .map_err(|e| unavailable(format!("Decoding failed: {}", js_error(&e))))
}

async fn load_page_decoder() -> Result<Function, JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let script: HtmlScriptElement = document.create_element("script")?.unchecked_into();
    let loaded = Promise::new(&mut |resolve, reject| {
        script.set_onload(Some(&resolve));
        script.set_onerror(Some(&reject));
    });
    script.set_src(DECODER_SCRIPT);
    document
        .head()
        .ok_or("no document head")?
        .append_child(&script)?;
    JsFuture::from(loaded)
        .await
        .map_err(|_| JsValue::from_str("its script did not load"))?;
    let init: Function = decoder_global().dyn_into()?;
    let options = js_sys::Object::new();
    Reflect::set(&options, &"module_or_path".into(), &DECODER_WASM.into())?;
    let ready: Promise = init.call1(&JsValue::NULL, &options)?.dyn_into()?;
    JsFuture::from(ready).await?;
    Reflect::get(&init, &"decode_message".into())?.dyn_into()
}

// The decoder script declares `let wasm_bindgen` at its top level: a global binding that is
// not a property of `window`, so it is looked up by name.
#[wasm_bindgen(
    inline_js = "export function decoder_global() { return typeof wasm_bindgen === 'undefined' ? undefined : wasm_bindgen; }"
)]
extern "C" {
    /// The decoder script's `wasm_bindgen` (after the script loaded), else `undefined`.
    fn decoder_global() -> JsValue;
}

fn read_reply(msg: &JsValue) -> Result<DecodedProfile, DecodeFailure> {
    if let Some(error) = msg.as_string() {
        return Err(unavailable(format!("Decoding failed: {error}")));
    }
    match DecodeReply::from_js(msg).map_err(unavailable)? {
        DecodeReply::Decoded {
            parts,
            shape,
            notice,
            ..
        } => Ok(DecodedProfile {
            profile: Profile::from_parts(*parts).map_err(|e| {
                unavailable(format!("The decode worker sent a broken profile: {e}"))
            })?,
            shape,
            notice,
        }),
        DecodeReply::Failed { message, .. } => Err(DecodeFailure::Rejected(message)),
    }
}

fn unavailable(message: String) -> DecodeFailure {
    DecodeFailure::Unavailable(message)
}

fn stopped_message(e: &JsValue) -> String {
    let why = e.as_string().unwrap_or_else(|| "it stopped".into());
    format!("Decoding failed: the decode worker stopped ({why}).")
}

impl Client {
    fn spawn() -> Option<Rc<Client>> {
        let worker = Worker::new(WORKER_SCRIPT).ok()?;
        let client = Rc::new_cyclic(|weak: &std::rc::Weak<Client>| {
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
                            set_timeout(restart, Duration::ZERO);
                        }
                    }
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            Client {
                worker,
                status: Cell::new(Status::Starting),
                waiting: RefCell::new(Vec::new()),
                pending: RefCell::new(HashMap::new()),
                _on_message: on_message,
                _on_error: on_error,
            }
        });
        Some(client)
    }

    /// Sends `request` and waits for the reply message.
    async fn send(&self, request: &DecodeRequest) -> Result<JsValue, DecodeFailure> {
        let answer = Promise::new(&mut |resolve, _reject| {
            self.pending.borrow_mut().insert(request.id, resolve);
        });
        let (msg, transfer) = request.to_js();
        if let Err(e) = self.worker.post_message_with_transfer(&msg, &transfer) {
            self.pending.borrow_mut().remove(&request.id);
            return Err(unavailable(format!(
                "Could not hand the answer to the decoder: {}",
                js_error(&e)
            )));
        }
        match JsFuture::from(answer).await {
            // `Client::fail` answers requests in flight with the reason, not a message.
            Ok(why) if why.is_string() => Err(unavailable(stopped_message(&why))),
            Ok(msg) => Ok(msg),
            Err(e) => Err(unavailable(stopped_message(&e))),
        }
    }

    /// Whether the worker is (or becomes) ready to take bodies.
    async fn ready(&self) -> bool {
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
        if data.as_string().as_deref() == Some(READY) {
            self.status.set(Status::Ready);
            self.settle_waiting(true);
            return;
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
    fn fail(&self, why: &str) {
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
