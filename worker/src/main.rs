//! The decode worker's entry point: decodes each body it is sent and posts the profile back
//! (see the library for the messages). The page runs it so that decoding a big response never
//! blocks scrolling, typing or the Cancel button.
//!
//! Where no worker can start, the page loads this same module on its own thread and calls
//! [`decode_message`] instead.

#[cfg(target_arch = "wasm32")]
mod entry {
    use embers_decode_worker::{answer_async, prefault, warm_up, PREFAULT_BYTES, READY, WARM};
    use wasm_bindgen::prelude::*;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    /// The warm-up: small decodes that make the browser optimize the decoder's hot loops
    /// before the first real answer (see `warm_up`). Each slice is a separate task, so an answer
    /// that arrives meanwhile waits for one slice at most (the first also builds the bodies).
    const WARM_UP_SLICES: usize = 8;
    const WARM_UP_ROWS: usize = 10_000;
    const DECODES_PER_SLICE: usize = 3;
    /// Shape A is read by its own code (one decode of this size per slice).
    const WARM_UP_ROWS_A: usize = 2_000;

    /// Each slice also writes its share of the heap the first decode will use (`prefault`);
    /// the buffers are held until the last slice, then freed together (one free region).
    fn warm_up_in_slices(
        scope: DedicatedWorkerGlobalScope,
        left: usize,
        bodies: Option<(Vec<u8>, Vec<u8>)>,
        mut held: Vec<Vec<u8>>,
    ) {
        if left == 0 {
            drop((bodies, held));
            let _ = scope.post_message(&JsValue::from_str(WARM));
            return;
        }
        let timer_scope = scope.clone();
        let slice = Closure::once_into_js(move || {
            let bodies = bodies
                .unwrap_or_else(|| (warm_up::body(WARM_UP_ROWS), warm_up::body_a(WARM_UP_ROWS_A)));
            for _ in 0..DECODES_PER_SLICE {
                warm_up::decode(&bodies.0);
            }
            warm_up::decode(&bodies.1);
            held.push(prefault(PREFAULT_BYTES / WARM_UP_SLICES));
            warm_up_in_slices(scope, left - 1, Some(bodies), held);
        });
        let _ = timer_scope
            .set_timeout_with_callback_and_timeout_and_arguments_0(slice.unchecked_ref(), 0);
    }

    /// Runs on load. In a worker, starts listening; on the page (the fallback), does nothing.
    pub fn start() {
        let global = js_sys::global();
        let in_worker = js_sys::Reflect::has(&global, &"WorkerGlobalScope".into()).unwrap_or(false)
            && !js_sys::Reflect::has(&global, &"document".into()).unwrap_or(false);
        if !in_worker {
            return;
        }
        let scope: DedicatedWorkerGlobalScope = global.unchecked_into();
        let replies = scope.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let replies = replies.clone();
            // Only the page talks to a dedicated worker; anything unreadable is ignored.
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok((msg, transfer)) = answer_async(&e.data()).await {
                    let _ = replies.post_message_with_transfer(&msg, &transfer);
                }
            });
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let _ = scope.post_message(&JsValue::from_str(READY));
        warm_up_in_slices(scope, WARM_UP_SLICES, None, Vec::new());
    }

    /// The page's fallback: answers a request message on the calling thread (a promise of
    /// the reply).
    #[wasm_bindgen]
    pub async fn decode_message(msg: JsValue) -> JsValue {
        match answer_async(&msg).await {
            Ok((reply, _)) => reply,
            Err(e) => JsValue::from_str(&e),
        }
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    entry::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("decode_worker runs in a browser as a Web Worker (built by Trunk from index.html)");
}
