//! The query runner: one request at a time per side (the comparison, or a comparison's
//! baseline), cancellable, the newest winning; decoding what came back into the state the page
//! shows. It also fetches saved snapshots, and keeps the last answer's bytes so the page can
//! save it as one.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use embers_model::contract::snapshot::{is_valid_id, ID_LEN, SNAPSHOTS_PATH};
use embers_model::contract::{fine::FineRequest, request::ProfileRequest};
use embers_model::wire::decode_response_table;
use js_sys::Uint8Array;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::{AbortController, AbortSignal};

use crate::net::decode_worker::{self, DecodeFailure};
use crate::net::http::{
    endpoint, get_body, post_json, ApiError, Body, RawResponse, PROFILE_TRACING_PATH,
    QUERY_TIMEOUT_MS,
};
use crate::net::marks;
use crate::session::time::now_ms;
use crate::session::{fine, snapshot_meta::snapshot_meta};
use crate::state::loaded::{Failure, LoadState, Loaded};
use crate::state::view_state::ViewState;

/// Which side of the page a runner's answers go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The main query (what a comparison compares).
    Comparison,
    /// What the main query is compared against.
    Baseline,
}

/// What to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// A ProfileTracing query.
    Query(ProfileRequest),
    /// A ProfileTracing query narrowed to milliseconds (a heatmap's selection).
    Window(FineRequest),
    /// A saved snapshot by id.
    Snapshot(String),
}

/// The last answer as received, for "Save snapshot" (only decoded bodies up to
/// [`KEEP_ANSWER_MAX_BYTES`]).
#[derive(Clone)]
pub struct Answer {
    /// What it answers.
    pub request: ProfileRequest,
    /// The body's chunks, as the decoder handed them back.
    pub chunks: Vec<Uint8Array>,
}

/// The largest answer kept for a snapshot (the service's default snapshot limit).
pub const KEEP_ANSWER_MAX_BYTES: usize = 64 << 20;

/// Runs queries for one side: one at a time, cancellable, the newest winning.
#[derive(Clone, Copy)]
pub struct QueryRunner {
    /// The view the answers go to.
    pub view: ViewState,
    target: Target,
    inflight: StoredValue<Option<AbortController>, LocalStorage>,
    generation: StoredValue<u64>,
    /// The decode of this side's answer in progress (cancelling stops only that one).
    decoding: StoredValue<Option<u32>>,
    /// The last query's answer, for saving as a snapshot.
    pub last_answer: StoredValue<Option<Answer>, LocalStorage>,
}

impl QueryRunner {
    /// A runner whose answers replace the main result of `view`.
    pub fn new(view: ViewState) -> QueryRunner {
        QueryRunner::for_side(view, Target::Comparison)
    }

    /// A runner whose answers go to `target`.
    pub fn for_side(view: ViewState, target: Target) -> QueryRunner {
        QueryRunner {
            view,
            target,
            inflight: StoredValue::new_local(None),
            generation: StoredValue::new(0),
            decoding: StoredValue::new(None),
            last_answer: StoredValue::new_local(None),
        }
    }

    /// Starts `request` against `base_url`, cancelling any query still running.
    pub fn run(self, base_url: String, request: ProfileRequest) {
        self.start(base_url, Fetch::Query(request));
    }

    /// Starts fetching `fetch` from `base_url`, cancelling anything still running.
    pub fn start(self, base_url: String, fetch: Fetch) {
        self.abort_inflight();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        // A permalink's id goes into the URL path: one the service cannot have given (a typo,
        // `../x`) is refused here rather than sent somewhere else.
        if let Fetch::Snapshot(id) = &fetch {
            if !is_valid_id(id) {
                self.deliver(LoadState::Failed(Failure::query(format!(
                    "{id:?} is not a snapshot id (ids are {ID_LEN} characters A-Z and 2-7)."
                ))));
                return;
            }
        }
        let Ok(controller) = AbortController::new() else {
            self.deliver(LoadState::Failed(Failure::query(
                "This browser cannot run cancellable requests.",
            )));
            return;
        };
        let signal = controller.signal();
        let timed_out = Rc::new(Cell::new(false));
        let timer = arm_timeout(&controller, timed_out.clone());
        self.inflight.set_value(Some(controller));
        let started_ms = now_ms();
        self.progress(LoadState::Loading {
            started_ms,
            phase: None,
        });
        if self.target == Target::Baseline {
            decode_worker::start_second();
        }
        spawn_local(async move {
            let result = self
                .fetch(&base_url, &fetch, &signal, generation, started_ms)
                .await;
            if let Some(timer) = timer {
                timer.clear();
            }
            // A newer query or a cancel has taken over: drop this answer.
            if self.generation.get_value() != generation {
                return;
            }
            let state = match result {
                Ok(raw) => self.decode_answer(raw, fetch, started_ms).await,
                Err(_) if timed_out.get() => {
                    LoadState::Failed(Failure::query(ApiError::TimedOut.to_string()))
                }
                Err(e) => LoadState::Failed(Failure::query(e.to_string())),
            };
            // A newer query or a cancel took over while this one decoded.
            if self.generation.get_value() != generation {
                return;
            }
            self.inflight.set_value(None);
            self.deliver(state);
        });
    }

    async fn fetch(
        self,
        base: &str,
        fetch: &Fetch,
        signal: &AbortSignal,
        generation: u64,
        started_ms: f64,
    ) -> Result<RawResponse, ApiError> {
        let mut last_ms = started_ms;
        let progress = move |received: usize, expected: Option<usize>| {
            let now = now_ms();
            if received < DECODE_NOTICE_MIN_BYTES
                || now - last_ms < PROGRESS_INTERVAL_MS
                || self.generation.get_value() != generation
            {
                return;
            }
            last_ms = now;
            self.progress(LoadState::Loading {
                started_ms,
                phase: Some(receiving_phase(received, expected)),
            });
        };
        match fetch {
            Fetch::Query(request) => {
                let url = endpoint(base, PROFILE_TRACING_PATH);
                post_json(&url, request, signal, progress).await
            }
            Fetch::Window(b) => post_json(&fine::tracing_url(base), b, signal, progress).await,
            Fetch::Snapshot(id) => {
                let url = endpoint(base, &format!("{SNAPSHOTS_PATH}/{id}"));
                get_body(&url, signal, progress).await
            }
        }
    }

    /// Decodes an answer (keeping a copy of a query's for snapshots) into the state to show.
    async fn decode_answer(self, raw: RawResponse, fetch: Fetch, started_ms: f64) -> LoadState {
        if raw.body.len >= DECODE_NOTICE_MIN_BYTES {
            let phase = format!("Decoding {}", format_bytes_len(raw.body.len));
            self.progress(LoadState::Loading {
                started_ms,
                phase: Some(phase),
            });
        }
        let (request, snapshot) = match fetch {
            Fetch::Query(request) => (request, None),
            Fetch::Window(body) => (body.request, None),
            Fetch::Snapshot(id) => {
                let (request, name) = snapshot_meta(&raw.body)
                    .map(|m| (m.request, Some(m.name)))
                    .unwrap_or_default();
                (request, Some((id, name)))
            }
        };
        // Only a query's answer can be saved as a snapshot (a snapshot is saved already).
        let keep = snapshot.is_none()
            && self.target == Target::Comparison
            && raw.status == 200
            && raw.body.len <= KEEP_ANSWER_MAX_BYTES;
        let mut state = self.decode(raw.status, raw.body, request, keep).await;
        if let (LoadState::Loaded(l), Some((id, name))) = (&mut state, snapshot) {
            if let Some(l) = Arc::get_mut(l) {
                l.snapshot = Some(id);
                l.snapshot_name = name;
            }
        }
        state
    }

    /// Decodes a body in the decode worker (or on the page when no worker can run); with
    /// `keep`, the decoded body becomes the answer "Save snapshot" saves.
    async fn decode(
        self,
        status: u16,
        body: Body,
        request: ProfileRequest,
        keep: bool,
    ) -> LoadState {
        let started = now_ms();
        let id = decode_worker::next_id();
        self.decoding.set_value(Some(id));
        let decoded = decode_worker::decode(status, &body, id).await;
        self.decoding.update_value(|d| {
            if *d == Some(id) {
                *d = None;
            }
        });
        let kept = match &decoded {
            Ok(d) if keep => Some(Answer {
                request: request.clone(),
                chunks: d.body.clone(),
            }),
            _ => None,
        };
        self.last_answer.set_value(kept);
        match decoded {
            Ok(d) => {
                let mut loaded = Loaded::new(d.profile, request, d.shape, now_ms() - started);
                loaded.server_notice = d.notice;
                LoadState::Loaded(Arc::new(loaded))
            }
            // Without a decoder an HTTP failure still says what happened.
            Err(DecodeFailure::Unavailable(why)) if !(200..300).contains(&status) => {
                LoadState::Failed(Failure::query(format!(
                    "The service answered HTTP {status}; its body could not be read: {why}"
                )))
            }
            Err(e) => LoadState::Failed(Failure::query(e.to_string())),
        }
    }

    fn deliver(self, state: LoadState) {
        match self.target {
            Target::Comparison => self.view.replace_result(state),
            Target::Baseline => self.view.replace_baseline(Some(state)),
        }
    }

    fn progress(self, state: LoadState) {
        match self.target {
            Target::Comparison => self.view.set_progress(state),
            Target::Baseline => self.view.set_baseline_progress(state),
        }
    }

    /// Cancels the running query, if any.
    pub fn cancel(self) {
        if self.abort_inflight() {
            self.generation.update_value(|g| *g += 1);
            self.deliver(LoadState::Cancelled);
        }
    }

    /// Forgets any query in flight without saying so (a baseline that is no longer wanted).
    pub fn drop_inflight(self) {
        if self.abort_inflight() {
            self.generation.update_value(|g| *g += 1);
        }
    }

    fn abort_inflight(self) -> bool {
        if let Some(id) = self.decoding.get_value() {
            self.decoding.set_value(None);
            decode_worker::cancel(id);
        }
        let mut aborted = false;
        self.inflight.update_value(|slot| {
            if let Some(c) = slot.take() {
                c.abort();
                aborted = true;
            }
        });
        aborted
    }
}

thread_local! {
    /// Set while a graph that shows no load is drawn (the warm-up): its paint is not marked.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Records that a load's first graph was painted (the last of its timing marks).
pub fn graph_painted() {
    if !QUIET.with(Cell::get) {
        marks::mark(marks::GRAPH_PAINTED);
    }
}

/// A graph that shows no load (the warm-up) is about to be drawn: [`graph_painted`] records
/// nothing until [`warm_up_done`].
pub fn warm_up_started() {
    QUIET.with(|q| q.set(true));
}

/// The warm-up graph is gone: paints are marked again, and the warm-up's end is marked (the e2e
/// suite and the benchmark see that it ran, and when).
pub fn warm_up_done() {
    QUIET.with(|q| q.set(false));
    marks::mark(marks::GRAPH_WARM);
}

/// Aborts the request after [`QUERY_TIMEOUT_MS`], noting that it timed out.
fn arm_timeout(controller: &AbortController, timed_out: Rc<Cell<bool>>) -> Option<TimeoutHandle> {
    let controller = controller.clone();
    set_timeout_with_handle(
        move || {
            timed_out.set(true);
            controller.abort();
        },
        Duration::from_millis(u64::from(QUERY_TIMEOUT_MS)),
    )
    .ok()
}

/// Bodies at least this big report "Receiving…" progress and a "Decoding…" status (smaller
/// ones arrive and decode too fast for either to be read).
const DECODE_NOTICE_MIN_BYTES: usize = 1 << 20;

/// How often the "Receiving…" status may change while a big body arrives.
const PROGRESS_INTERVAL_MS: f64 = 100.0;

/// `Receiving 12.3 of 26.1 MB`, or without the total when the server did not send one.
fn receiving_phase(received: usize, expected: Option<usize>) -> String {
    match expected.filter(|&e| e >= received) {
        // Only bodies past a megabyte report progress, so both read in MB.
        Some(e) => format!(
            "Receiving {:.1} of {}",
            received as f64 / 1e6,
            format_bytes_len(e)
        ),
        None => format!("Receiving {}", format_bytes_len(received)),
    }
}

/// `26.1 MB`-style size of a body.
fn format_bytes_len(n: usize) -> String {
    if n < 1_000_000 {
        format!("{:.0} kB", n as f64 / 1e3)
    } else {
        format!("{:.1} MB", n as f64 / 1e6)
    }
}

/// Decodes a body into the state to show (a profile, possibly empty, or an error) on the
/// calling thread: for tests and tools. The page decodes through [`decode_worker`].
pub fn decode_to_state(status: u16, body: &str, request: ProfileRequest) -> LoadState {
    let started = now_ms();
    match decode_response_table(status, body.as_bytes()) {
        Ok(table) => {
            let decoded = table.build();
            let mut loaded =
                Loaded::new(decoded.profile, request, decoded.shape, now_ms() - started);
            loaded.server_notice = decoded.notice;
            LoadState::Loaded(Arc::new(loaded))
        }
        Err(e) => LoadState::Failed(Failure::query(e.to_string())),
    }
}
