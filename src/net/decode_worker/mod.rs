//! The page's side of the workers (`worker/`): starts the answer decoder with the page, hands
//! it response bodies, turns its answers back into profiles; a second one decodes a second big
//! body side by side with the first (a comparison's two answers). Decoding a million-node
//! response takes a few hundred milliseconds; in the worker the page keeps scrolling, typing
//! and cancelling meanwhile. Files go to the file reader, loaded only when one is opened or
//! exported ([`files`]).
//!
//! Where no worker can run the same modules are loaded into the page and run there
//! ([`page`]). The page's own bundle carries no decoder at all.

mod client;
mod files;
mod page;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use client::{Client, Status};
use embers_decode_worker::{DecodeReply, DecodeRequest, Job};
use embers_model::contract::shape::ResultShape;
use embers_model::tree::lines::LineTable;
use embers_model::Profile;
use leptos::prelude::set_timeout;
use wasm_bindgen::JsValue;

pub use files::{decode_file, export_pprof, file_reader_ready};

use crate::net::http::Body;
use crate::net::marks;

/// The answer decoder's loader (written by `scripts/externalize-boot.mjs`), next to the page.
const WORKER_SCRIPT: &str = "./decode_worker_loader.js";

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
    /// The server's remark on a successful answer (e.g. that it cut the tree), or how a file
    /// was read.
    pub notice: Option<String>,
    /// A file's event type (what its values are).
    pub event_type: Option<String>,
    /// The body that was decoded, handed back by the decoder (its buffers moved to the worker
    /// and back, never copied).
    pub body: Vec<js_sys::Uint8Array>,
    /// An opened file's source lines per function, summed in the worker.
    pub lines: Option<LineTable>,
}

/// A body at least this big is worth starting a second worker for when the first is busy (a
/// comparison's two answers then decode side by side); a smaller one decodes in less time
/// than a worker takes to start (~100–250 ms).
const SECOND_WORKER_MIN_BYTES: usize = 1 << 20;

thread_local! {
    /// The first worker starts with the page; the second only when it is worth it (above).
    static WORKERS: RefCell<[Option<Rc<Client>>; 2]> = const { RefCell::new([None, None]) };
}

/// Takes over the worker the boot script started, or starts one in the background (call once
/// at startup). Does nothing where workers cannot be created.
pub fn start() {
    match Client::adopt_boot_worker(replace_crashed) {
        Some(client) => {
            if client.status.get() == Status::Ready {
                marks::mark(marks::WORKER_READY);
            }
            install(0, client);
        }
        None => {
            start_slot(0);
        }
    }
}

/// Starts the second worker while a comparison's queries run, unless it runs already: both
/// answers arrive together, and a worker started only when the second one is here adds its
/// start-up and an unwarmed first decode to the comparison (~50–100 ms at 1M nodes).
pub fn start_second() {
    if worker(1).is_none_or(|c| c.status.get() == Status::Broken) {
        start_slot(1);
    }
}

/// Ends the second worker when the page stops comparing, unless it is decoding: it holds its
/// warm-up heap (~50 MB) for as long as it runs. Comparing again starts it again.
pub fn stop_second() {
    if worker(1).is_some_and(|c| !c.has_work()) {
        restart(1);
    }
}

fn start_slot(slot: usize) -> Option<Rc<Client>> {
    let client = Client::spawn(WORKER_SCRIPT, replace_crashed)?;
    install(slot, client.clone());
    Some(client)
}

/// Puts `client` in `slot`, giving it [`START_TIMEOUT`] to say it is ready.
fn install(slot: usize, client: Rc<Client>) {
    WORKERS.with(|w| w.borrow_mut()[slot] = Some(client.clone()));
    watch_start(&client);
}

/// Gives `client` [`START_TIMEOUT`] to say it is ready, then gives up on it.
fn watch_start(client: &Rc<Client>) {
    let weak = Rc::downgrade(client);
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

fn worker(slot: usize) -> Option<Rc<Client>> {
    WORKERS.with(|w| w.borrow()[slot].clone())
}

/// A fresh id for [`decode`], to [`cancel`] that decode by.
pub fn next_id() -> u32 {
    NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1));
        id
    })
}

/// Stops the worker decoding request `id` (its answer is no longer wanted), so the next body
/// does not queue behind it. Another side's decode in the other worker goes on.
pub fn cancel(id: u32) {
    if let Some(slot) = (0..2).find(|&s| worker(s).is_some_and(|c| c.is_decoding(id))) {
        restart(slot);
    }
}

/// Stops the worker in `slot`; the first is started afresh, the second when next needed.
fn restart(slot: usize) {
    if let Some(old) = WORKERS.with(|w| w.borrow_mut()[slot].take()) {
        old.worker.terminate();
        old.fail("it was stopped");
    }
    if slot == 0 {
        start_slot(0);
    }
}

/// Replaces workers that died after they were ready (out of memory on a huge answer, say).
fn replace_crashed() {
    for slot in 0..2 {
        if worker(slot).is_some_and(|c| c.status.get() == Status::Broken) {
            restart(slot);
        }
    }
}

/// The worker for a body of `len` bytes: the first, unless it is busy and the body is big
/// enough for a second one.
fn pick(len: usize) -> Option<Rc<Client>> {
    let first = worker(0);
    if len < SECOND_WORKER_MIN_BYTES || !first.as_ref().is_some_and(|c| c.has_work()) {
        return first;
    }
    match worker(1) {
        Some(second) if second.status.get() != Status::Broken => Some(second),
        _ => start_slot(1).or(first),
    }
}

/// Decodes `body` as request `id` (from [`next_id`]) in a worker, or on the page when no
/// worker can run. The body's buffers move to the worker (they are empty here afterwards).
pub async fn decode(status: u16, body: &Body, id: u32) -> Result<DecodedProfile, DecodeFailure> {
    let request = DecodeRequest {
        id,
        job: Job::Answer { status },
        chunks: body.chunks.clone(),
    };
    marks::mark(marks::DECODE_START);
    let reply = run_on(pick(body.len), &request, body.len, retire).await?;
    marks::mark(marks::DECODE_END);
    let decoded = read_reply(&reply);
    marks::mark(marks::PROFILE_READ);
    decoded
}

/// Runs `request` (its body `len` bytes) in `client`, or on the page when there is no worker
/// or it cannot start; `retire` replaces a worker left holding a big body's memory.
async fn run_on(
    client: Option<Rc<Client>>,
    request: &DecodeRequest,
    len: usize,
    retire: fn(&Rc<Client>),
) -> Result<JsValue, DecodeFailure> {
    match client {
        Some(client) if client.ready().await => {
            let reply = client.send(request).await;
            if len >= RECYCLE_AFTER_BYTES {
                retire(&client);
            }
            reply.map_err(unavailable)
        }
        _ => page::decode_on_page(request).await,
    }
}

/// Replaces `client` (its memory stays at the peak of the big body it decoded).
fn retire(client: &Rc<Client>) {
    let slot = (0..2).find(|&s| worker(s).is_some_and(|w| Rc::ptr_eq(&w, client)));
    if let Some(slot) = slot {
        restart(slot);
    }
}

thread_local! {
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
}

fn read_reply(msg: &JsValue) -> Result<DecodedProfile, DecodeFailure> {
    if let Some(error) = msg.as_string() {
        return Err(unavailable(format!("Decoding failed: {error}")));
    }
    match DecodeReply::from_js(msg).map_err(|e| unavailable(e.to_string()))? {
        DecodeReply::Decoded {
            parts,
            shape,
            notice,
            event_type,
            body,
            lines,
            ..
        } => Ok(DecodedProfile {
            lines: lines
                .map(|l| LineTable::from_parts(*l))
                .transpose()
                .map_err(|e| unavailable(format!("The file reader sent broken lines: {e}")))?,
            profile: Profile::from_parts(*parts).map_err(|e| {
                unavailable(format!("The decode worker sent a broken profile: {e}"))
            })?,
            shape,
            notice,
            event_type,
            body,
        }),
        DecodeReply::Failed { message, .. } => Err(DecodeFailure::Rejected(message)),
    }
}

fn unavailable(message: String) -> DecodeFailure {
    DecodeFailure::Unavailable(message)
}
