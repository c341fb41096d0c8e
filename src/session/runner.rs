//! The query runner: one request at a time, cancellable, the newest winning; and decoding of
//! what came back into the state the page shows.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use embers_model::contract::request::ProfileRequest;
use embers_model::wire::decode_response_table;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use crate::net::decode_worker::{self, DecodeFailure};
use crate::net::http::{
    endpoint, post_json, ApiError, Body, PROFILE_TRACING_PATH, QUERY_TIMEOUT_MS,
};
use crate::session::time::now_ms;
use crate::state::loaded::{Failure, LoadState, Loaded};
use crate::state::view_state::ViewState;

/// Runs queries: one at a time, cancellable, the newest winning.
#[derive(Clone, Copy)]
pub struct QueryRunner {
    /// The view the answers go to.
    pub view: ViewState,
    inflight: StoredValue<Option<AbortController>, LocalStorage>,
    generation: StoredValue<u64>,
}

impl QueryRunner {
    /// A runner whose answers replace what `view` shows.
    pub fn new(view: ViewState) -> QueryRunner {
        QueryRunner {
            view,
            inflight: StoredValue::new_local(None),
            generation: StoredValue::new(0),
        }
    }

    /// Starts `request` against `base_url`, cancelling any query still running.
    pub fn run(self, base_url: String, request: ProfileRequest) {
        self.abort_inflight();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        let Ok(controller) = AbortController::new() else {
            self.view.replace_result(LoadState::Failed(Failure::query(
                "This browser cannot run cancellable requests.",
            )));
            return;
        };
        let signal = controller.signal();
        let timed_out = Rc::new(Cell::new(false));
        let timer = {
            let (timed_out, controller) = (timed_out.clone(), controller.clone());
            set_timeout_with_handle(
                move || {
                    timed_out.set(true);
                    controller.abort();
                },
                Duration::from_millis(u64::from(QUERY_TIMEOUT_MS)),
            )
            .ok()
        };
        self.inflight.set_value(Some(controller));
        let started_ms = now_ms();
        self.view.set_progress(LoadState::Loading {
            started_ms,
            phase: None,
        });
        let mut last_progress_ms = started_ms;
        let progress = move |received: usize, expected: Option<usize>| {
            let now = now_ms();
            if received < DECODE_NOTICE_MIN_BYTES
                || now - last_progress_ms < PROGRESS_INTERVAL_MS
                || self.generation.get_value() != generation
            {
                return;
            }
            last_progress_ms = now;
            self.view.set_progress(LoadState::Loading {
                started_ms,
                phase: Some(receiving_phase(received, expected)),
            });
        };
        spawn_local(async move {
            let url = endpoint(&base_url, PROFILE_TRACING_PATH);
            let result = post_json(&url, &request, &signal, progress).await;
            if let Some(timer) = timer {
                timer.clear();
            }
            // A newer query or a cancel has taken over: drop this answer.
            if self.generation.get_value() != generation {
                return;
            }
            // The query stays in flight (cancellable) until its answer is decoded.
            let state = match result {
                Ok(raw) => {
                    if raw.body.len >= DECODE_NOTICE_MIN_BYTES {
                        let phase = format!("Decoding {}", format_bytes_len(raw.body.len));
                        self.view.set_progress(LoadState::Loading {
                            started_ms,
                            phase: Some(phase),
                        });
                    }
                    let state = self.decode(raw.status, raw.body, request).await;
                    // A newer query or a cancel took over while this one decoded.
                    if self.generation.get_value() != generation {
                        return;
                    }
                    state
                }
                Err(_) if timed_out.get() => {
                    LoadState::Failed(Failure::query(ApiError::TimedOut.to_string()))
                }
                Err(e) => LoadState::Failed(Failure::query(e.to_string())),
            };
            self.inflight.set_value(None);
            self.view.replace_result(state);
        });
    }

    /// Decodes a body in the decode worker (or on the page when no worker can run).
    async fn decode(self, status: u16, body: Body, request: ProfileRequest) -> LoadState {
        let started = now_ms();
        match decode_worker::decode(status, &body).await {
            Ok(d) => LoadState::Loaded(Arc::new(Loaded::new(
                d.profile,
                request,
                d.shape,
                now_ms() - started,
            ))),
            // Without a decoder an HTTP failure still says what happened.
            Err(DecodeFailure::Unavailable(why)) if !(200..300).contains(&status) => {
                LoadState::Failed(Failure::query(format!(
                    "The service answered HTTP {status}; its body could not be read: {why}"
                )))
            }
            Err(e) => LoadState::Failed(Failure::query(e.to_string())),
        }
    }

    /// Cancels the running query, if any.
    pub fn cancel(self) {
        if self.abort_inflight() {
            self.generation.update_value(|g| *g += 1);
            self.view.replace_result(LoadState::Cancelled);
        }
    }

    fn abort_inflight(self) -> bool {
        decode_worker::cancel();
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
            LoadState::Loaded(Arc::new(Loaded::new(
                decoded.profile,
                request,
                decoded.shape,
                now_ms() - started,
            )))
        }
        Err(e) => LoadState::Failed(Failure::query(e.to_string())),
    }
}
