//! The file reader worker (`file_worker`): the readers of other profilers' formats (pprof,
//! JFR, `perf script`) and the pprof writer, kept out of the answer decoder the page starts
//! with. It is fetched and started the first time a user opens or exports such a file, and
//! kept for the next one; until it is ready the caller says so ([`file_reader_ready`]).

use std::cell::RefCell;
use std::rc::Rc;

use embers_decode_worker::{DecodeRequest, Job};
use embers_model::formats::Format;
use js_sys::Uint8Array;

use super::client::{Client, Status};
use super::{next_id, read_reply, run_on, watch_start, DecodeFailure, DecodedProfile};

/// The file reader's loader (written by `scripts/externalize-boot.mjs`), next to the page.
const FILE_WORKER_SCRIPT: &str = "./file_worker_loader.js";

thread_local! {
    /// Started by the first file opened or exported.
    static FILE_WORKER: RefCell<Option<Rc<Client>>> = const { RefCell::new(None) };
}

/// Whether the file reader is loaded and ready: when it is not, the next file waits for it to
/// load (a moment, the first time), and the page says what it waits for.
pub fn file_reader_ready() -> bool {
    FILE_WORKER.with(|w| {
        w.borrow()
            .as_ref()
            .is_some_and(|c| c.status.get() == Status::Ready)
    })
}

/// The file reader, started now unless it runs already (or `None` where no worker can be
/// created: the page reads the file itself).
fn file_worker() -> Option<Rc<Client>> {
    if let Some(c) = FILE_WORKER.with(|w| w.borrow().clone()) {
        if c.status.get() != Status::Broken {
            return Some(c);
        }
    }
    let client = Client::spawn(FILE_WORKER_SCRIPT, forget_crashed)?;
    watch_start(&client);
    FILE_WORKER.with(|w| *w.borrow_mut() = Some(client.clone()));
    Some(client)
}

/// A file reader that died (out of memory on a huge file, say) is started afresh next time.
fn forget_crashed() {
    FILE_WORKER.with(|w| {
        let mut w = w.borrow_mut();
        if w.as_ref().is_some_and(|c| c.status.get() == Status::Broken) {
            *w = None;
        }
    });
}

/// Ends a file reader left holding a big file's memory; the next file starts a fresh one.
fn retire(client: &Rc<Client>) {
    client.worker.terminate();
    client.fail("it was stopped");
    FILE_WORKER.with(|w| {
        let mut w = w.borrow_mut();
        if w.as_ref().is_some_and(|c| Rc::ptr_eq(c, client)) {
            *w = None;
        }
    });
}

async fn run(job: Job, body: Uint8Array) -> Result<DecodedProfile, DecodeFailure> {
    let len = body.length() as usize;
    let request = DecodeRequest {
        id: next_id(),
        job,
        chunks: vec![body],
    };
    let reply = run_on(file_worker(), &request, len, retire).await?;
    read_reply(&reply)
}

/// Reads a file another profiler wrote (pprof, gzipped or not; JFR; `perf script`) in the file
/// reader, its root named `name` unless the file names one.
pub async fn decode_file(
    file: Uint8Array,
    format: Format,
    name: &str,
) -> Result<DecodedProfile, DecodeFailure> {
    let name = name.to_owned();
    run(Job::OpenFile { format, name }, file).await
}

/// pprof of the page's folded export `folded` (whose first line names the event type), rooted
/// at `root`: the file's parts, for a download.
pub async fn export_pprof(
    folded: Uint8Array,
    root: &str,
) -> Result<Vec<Uint8Array>, DecodeFailure> {
    let root = root.to_owned();
    run(Job::ExportPprof { root }, folded).await.map(|d| d.body)
}
