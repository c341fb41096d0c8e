//! The listening loop both workers run: each message the page sends is handed to the worker's
//! job function and its reply posted back (buffers transferred). Says [`crate::READY`] once it
//! listens (messages sent before that would be lost).

use std::future::Future;

use js_sys::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::error::MessageError;
use crate::READY;

/// This thread's worker scope, or `None` on the page (the fallback loads the same module there
/// and must not start listening).
pub fn worker_scope() -> Option<DedicatedWorkerGlobalScope> {
    let global = js_sys::global();
    let in_worker = js_sys::Reflect::has(&global, &"WorkerGlobalScope".into()).unwrap_or(false)
        && !js_sys::Reflect::has(&global, &"document".into()).unwrap_or(false);
    in_worker.then(|| global.unchecked_into())
}

/// Answers every message on `scope` with `job(message)`, then says it is ready. A message
/// that is not a request is ignored: only the page talks to a dedicated worker.
pub fn listen<F, Fut>(scope: &DedicatedWorkerGlobalScope, job: F)
where
    F: Fn(JsValue) -> Fut + 'static,
    Fut: Future<Output = Result<(JsValue, Array), MessageError>> + 'static,
{
    let replies = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let replies = replies.clone();
        let reply = job(e.data());
        wasm_bindgen_futures::spawn_local(async move {
            if let Ok((msg, transfer)) = reply.await {
                let _ = replies.post_message_with_transfer(&msg, &transfer);
            }
        });
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(READY));
}
