//! The fallback where no worker can run (a browser or portal policy that forbids it, the
//! script missing, or it failing to start in time): the worker's own module is loaded into
//! the page and its `decode_message` run there. Slower to show, same result.
//!
//! Each worker's script is wasm-bindgen's `no-modules` output, which declares one global
//! binding (`let <name>` at its top level, not a property of `window`); the two workers' are
//! named apart (the answer decoder's `wasm_bindgen`, the file reader's `embers_file_reader`,
//! renamed by `scripts/externalize-boot.mjs`) so both can be loaded into one page.

use std::cell::RefCell;

use embers_decode_worker::{DecodeRequest, WorkerKind};
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::HtmlScriptElement;

use super::DecodeFailure;
use crate::net::http::js_error;

thread_local! {
    /// Each worker module's `decode_message`, once loaded into the page.
    static LOADED: RefCell<[Option<Function>; 2]> = const { RefCell::new([None, None]) };
}

/// The script and wasm of `kind`'s module, next to the page.
fn files(kind: WorkerKind) -> (&'static str, &'static str) {
    match kind {
        WorkerKind::Answers => ("./decode_worker.js", "./decode_worker_bg.wasm"),
        WorkerKind::Files => ("./file_worker.js", "./file_worker_bg.wasm"),
    }
}

fn slot(kind: WorkerKind) -> usize {
    match kind {
        WorkerKind::Answers => 0,
        WorkerKind::Files => 1,
    }
}

/// Runs `request` on the page's thread with its worker's module (loading it the first time).
pub(super) async fn decode_on_page(request: &DecodeRequest) -> Result<JsValue, DecodeFailure> {
    let kind = request.job.worker();
    let decode = match LOADED.with(|d| d.borrow()[slot(kind)].clone()) {
        Some(f) => f,
        None => {
            let f = load(kind).await.map_err(|e| {
                DecodeFailure::Unavailable(format!(
                    "Could not load the {} ({}).",
                    kind.name(),
                    js_error(&e)
                ))
            })?;
            LOADED.with(|d| d.borrow_mut()[slot(kind)] = Some(f.clone()));
            f
        }
    };
    let (msg, _) = request.to_js();
    let failed =
        |e: JsValue| DecodeFailure::Unavailable(format!("Decoding failed: {}", js_error(&e)));
    let reply: Promise = decode
        .call1(&JsValue::NULL, &msg)
        .map_err(failed)?
        .unchecked_into();
    JsFuture::from(reply).await.map_err(failed)
}

async fn load(kind: WorkerKind) -> Result<Function, JsValue> {
    let (script_url, wasm_url) = files(kind);
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let script: HtmlScriptElement = document.create_element("script")?.unchecked_into();
    let loaded = Promise::new(&mut |resolve, reject| {
        script.set_onload(Some(&resolve));
        script.set_onerror(Some(&reject));
    });
    script.set_src(script_url);
    document
        .head()
        .ok_or("no document head")?
        .append_child(&script)?;
    JsFuture::from(loaded)
        .await
        .map_err(|_| JsValue::from_str("its script did not load"))?;
    let init: Function = match kind {
        WorkerKind::Answers => answer_decoder_global(),
        WorkerKind::Files => file_reader_global(),
    }
    .dyn_into()?;
    let options = js_sys::Object::new();
    Reflect::set(&options, &"module_or_path".into(), &wasm_url.into())?;
    let ready: Promise = init.call1(&JsValue::NULL, &options)?.dyn_into()?;
    JsFuture::from(ready).await?;
    Reflect::get(&init, &"decode_message".into())?.dyn_into()
}

// The globals are `let` bindings, not properties of `window`, so they are looked up by name.
#[wasm_bindgen(
    inline_js = "export function answer_decoder_global() { return typeof wasm_bindgen === 'undefined' ? undefined : wasm_bindgen; }
export function file_reader_global() { return typeof embers_file_reader === 'undefined' ? undefined : embers_file_reader; }"
)]
extern "C" {
    /// The answer decoder script's `wasm_bindgen` (after the script loaded), else `undefined`.
    fn answer_decoder_global() -> JsValue;
    /// The file reader script's `embers_file_reader`, else `undefined`.
    fn file_reader_global() -> JsValue;
}
