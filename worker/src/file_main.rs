//! The file reader's entry point (`file_worker`): reads the pprof, JFR and `perf script` files
//! a user opens and writes pprof for *Export*, posting the result back (see the library for
//! the messages). The page starts it only the first time a file is opened or exported, so
//! these readers (most of the workers' code) are never fetched by a page that only queries.
//!
//! Where no worker can start, the page loads this same module on its own thread and calls
//! [`decode_message`] instead.

#[cfg(target_arch = "wasm32")]
mod entry {
    use embers_decode_worker::import::answer_file;
    use embers_decode_worker::serve::{listen, worker_scope};
    use wasm_bindgen::prelude::*;

    /// Runs on load. In a worker, starts listening; on the page (the fallback), does nothing.
    pub fn start() {
        if let Some(scope) = worker_scope() {
            listen(&scope, |msg| async move { answer_file(&msg).await });
        }
    }

    /// The page's fallback: answers a request message on the calling thread (a promise of
    /// the reply, or of the reason the message could not be read).
    #[wasm_bindgen]
    pub async fn decode_message(msg: JsValue) -> JsValue {
        match answer_file(&msg).await {
            Ok((reply, _)) => reply,
            Err(e) => JsValue::from_str(&e.to_string()),
        }
    }
}

fn main() {
    #[cfg(target_arch = "wasm32")]
    entry::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("file_worker runs in a browser as a Web Worker (built by Trunk from index.html)");
}
