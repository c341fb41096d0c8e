//! The answer decoder's entry point (`decode_worker`, started with the page): decodes each
//! ProfileTracing answer it is sent and posts the profile back (see the library for the
//! messages), after warming up on made-up answers. The page runs it so that decoding a big
//! response never blocks scrolling, typing or the Cancel button. Files go to the other worker
//! (`file_main.rs`), so none of their readers is in this module.
//!
//! Where no worker can start, the page loads this same module on its own thread and calls
//! [`decode_message`] instead.

#[cfg(target_arch = "wasm32")]
mod entry {
    use embers_decode_worker::serve::{listen, worker_scope};
    use embers_decode_worker::{answer, prefault, warm_up, PREFAULT_BYTES, WARM};
    use wasm_bindgen::prelude::*;
    use web_sys::DedicatedWorkerGlobalScope;

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
        let Some(scope) = worker_scope() else {
            return;
        };
        listen(&scope, |msg| async move { answer(&msg) });
        warm_up_in_slices(scope, WARM_UP_SLICES, None, Vec::new());
    }

    /// The page's fallback: answers a request message on the calling thread (a promise of
    /// the reply, or of the reason the message could not be read).
    #[wasm_bindgen]
    pub async fn decode_message(msg: JsValue) -> JsValue {
        match answer(&msg) {
            Ok((reply, _)) => reply,
            Err(e) => JsValue::from_str(&e.to_string()),
        }
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    entry::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("decode_worker runs in a browser as a Web Worker (built by Trunk from index.html)");
}
