//! The page: query form, toolbar, flame graph; and the query runner that connects them.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use embers_model::decode_response;
use embers_model::request::ProfileRequest;
use embers_model::NodeId;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::AbortController;

use crate::api::{post_profile_tracing, ApiError, QUERY_TIMEOUT_MS};
use crate::components::flame_graph::FlameGraph;
use crate::components::query_form::{FormState, QueryForm};
use crate::components::toolbar::{StatusLine, Toolbar};
use crate::state::{LoadState, Loaded, Metric};
use crate::time::now_ms;

/// Runs queries: one at a time, cancellable, the newest winning.
#[derive(Clone, Copy)]
pub struct QueryRunner {
    /// Where the query stands.
    pub load: RwSignal<LoadState>,
    zoom: RwSignal<NodeId>,
    inflight: StoredValue<Option<AbortController>, LocalStorage>,
    generation: StoredValue<u64>,
}

impl QueryRunner {
    fn new(load: RwSignal<LoadState>, zoom: RwSignal<NodeId>) -> QueryRunner {
        QueryRunner {
            load,
            zoom,
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
            self.load.set(LoadState::Failed(
                "This browser cannot run cancellable requests.".into(),
            ));
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
        self.load.set(LoadState::Loading {
            started_ms: now_ms(),
        });
        spawn_local(async move {
            let result = post_profile_tracing(&base_url, &request, &signal).await;
            if let Some(timer) = timer {
                timer.clear();
            }
            // A newer query or a cancel has taken over: drop this answer.
            if self.generation.get_value() != generation {
                return;
            }
            self.inflight.set_value(None);
            let state = match result {
                Ok(raw) => decode_to_state(raw.status, &raw.body, request),
                Err(_) if timed_out.get() => LoadState::Failed(ApiError::TimedOut.to_string()),
                Err(e) => LoadState::Failed(e.to_string()),
            };
            self.zoom.set(0);
            self.load.set(state);
        });
    }

    /// Cancels the running query, if any.
    pub fn cancel(self) {
        if self.abort_inflight() {
            self.generation.update_value(|g| *g += 1);
            self.load.set(LoadState::Cancelled);
        }
    }

    fn abort_inflight(self) -> bool {
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

/// Decodes a body into the state to show (a profile, possibly empty, or an error).
pub fn decode_to_state(status: u16, body: &str, request: ProfileRequest) -> LoadState {
    let started = now_ms();
    match decode_response(status, body) {
        Ok(decoded) => LoadState::Loaded(Arc::new(Loaded::new(
            decoded.profile,
            request,
            decoded.shape,
            now_ms() - started,
        ))),
        Err(e) => LoadState::Failed(e.to_string()),
    }
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let load = RwSignal::new(LoadState::Idle);
    let zoom = RwSignal::new(0 as NodeId);
    let metric = RwSignal::new(Metric::Total);
    let runner = QueryRunner::new(load, zoom);
    let form = FormState::from_page();

    if form.run_on_load {
        if let Ok(req) = form.to_request() {
            runner.run(form.base_url.get_untracked(), req);
        }
    }

    view! {
        <div class="app">
            <header class="topbar">
                <div class="brand" aria-label="Embers">
                    <span class="brand-mark" aria-hidden="true"></span>
                    "Embers"
                </div>
                <QueryForm form=form runner=runner />
            </header>
            <Viewer load=load zoom=zoom metric=metric />
        </div>
    }
}

/// Everything below the form: toolbar, error, graph and status line, driven by `load`.
/// Embedders and tests can mount it with a profile they decoded themselves.
#[component]
pub fn Viewer(
    load: RwSignal<LoadState>,
    zoom: RwSignal<NodeId>,
    metric: RwSignal<Metric>,
) -> impl IntoView {
    let keys = window_event_listener(ev::keydown, move |e| {
        if e.key() == "Escape" {
            zoom.set(0);
        }
    });
    on_cleanup(move || keys.remove());

    view! {
        <Toolbar load=load zoom=zoom metric=metric />
        <ErrorBanner load=load />
        <main class="graph-area">
            {move || match load.get() {
                LoadState::Loaded(l) if !l.profile.is_empty() => {
                    view! { <FlameGraph loaded=l zoom=zoom metric=metric /> }.into_any()
                }
                state => view! { <EmptyState state=state /> }.into_any(),
            }}
        </main>
        <footer class="footer">
            <StatusLine load=load />
        </footer>
    }
}

/// The error message of a failed query, with the page left usable.
#[component]
fn ErrorBanner(load: RwSignal<LoadState>) -> impl IntoView {
    move || match load.get() {
        LoadState::Failed(message) => view! {
            <div class="error" role="alert" data-testid="error">
                <strong>"Query failed. "</strong>
                <span>{message}</span>
            </div>
        }
        .into_any(),
        _ => ().into_any(),
    }
}

/// What the graph area shows when there is no graph.
#[component]
fn EmptyState(state: LoadState) -> impl IntoView {
    let text = match state {
        LoadState::Idle => {
            "Choose a process (or the whole host) and a time range, then press Enter."
        }
        LoadState::Loading { .. } => "Querying…",
        LoadState::Loaded(_) => {
            "No samples in this range. Widen the time range or loosen the tag filter."
        }
        LoadState::Failed(_) => "No profile to show.",
        LoadState::Cancelled => "Cancelled. Press Enter to run the query again.",
    };
    view! { <div class="empty-state" data-testid="empty-state">{text}</div> }
}
