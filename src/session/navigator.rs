//! Moving through the workflow: the services overview (home) → one profile → a narrower range,
//! a tag, a process. Every move goes through the form (so the fields always show what is shown)
//! and lands in the page URL, where it becomes a history entry (Back returns).

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::ServicesRequest;
use embers_model::contract::request::{FieldError, ProfileRequest};
use leptos::prelude::*;

use crate::session::form::FormState;
use crate::session::runner::QueryRunner;
use crate::state::loaded::LoadState;

/// Which view the page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Every service in a range, busiest first.
    Home,
    /// The flame graph of one process (or the whole host), with its timeline.
    Profile,
}

/// The home view's question: every service in a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HomeQuery {
    /// Where the service is (empty: this page's origin).
    pub base_url: String,
    /// The range, event type and filter.
    pub services: ServicesRequest,
    /// Whether the range is relative to now (then links do not pin it).
    pub relative: bool,
}

/// The navigation state and its moves; `Copy`, so components take it by value.
#[derive(Clone, Copy)]
pub struct Navigator {
    /// The form every move goes through.
    pub form: FormState,
    /// Runs profile queries.
    pub runner: QueryRunner,
    /// The question the home view answers (set when it opens).
    pub home: RwSignal<Option<HomeQuery>>,
    /// The profile request last run (the timeline strip charts it), with its base URL.
    pub current: RwSignal<Option<(String, ProfileRequest)>>,
}

impl Navigator {
    /// A navigator over `form` and `runner`, on the home view.
    pub fn new(form: FormState, runner: QueryRunner) -> Navigator {
        Navigator {
            form,
            runner,
            home: RwSignal::new(None),
            current: RwSignal::new(None),
        }
    }

    /// Submits the form: a process (or the whole host) opens its profile, none the home view.
    pub fn submit(&self) -> Result<(), Vec<FieldError>> {
        let request = self.form.to_request()?;
        self.form.errors.set(Vec::new());
        self.go(request);
        Ok(())
    }

    /// Shows `request`: its profile, or the home view when it names no process.
    pub fn go(&self, request: ProfileRequest) {
        let base = self.form.base_url.get_untracked();
        match request.app_service {
            Some(_) => self.open_profile(base, request),
            None => self.open_home(base, &request),
        }
    }

    /// The view shown: the home view until a profile is asked for (a query, a link, an
    /// import), the profile view from then on.
    pub fn route(&self) -> Route {
        match self.runner.view.load.get() {
            LoadState::Idle => Route::Home,
            _ => Route::Profile,
        }
    }

    /// Runs a profile query (from the form, a link, or an embedding page).
    pub fn open_profile(&self, base_url: String, request: ProfileRequest) {
        self.current.set(Some((base_url.clone(), request.clone())));
        self.runner.run(base_url, request);
    }

    fn open_home(&self, base_url: String, r: &ProfileRequest) {
        self.runner.cancel();
        self.runner.view.replace_result(LoadState::Idle);
        self.current.set(None);
        self.home.set(Some(HomeQuery {
            base_url,
            services: ServicesRequest {
                time_start: r.time_start,
                time_end: r.time_end,
                profile_language_type: Some(r.profile_language_type.clone()),
                profile_event_type: Some(r.profile_event_type.clone()),
                tag_filter: r.tag_filter.clone(),
            },
            relative: self.form.is_relative(),
        }));
    }

    /// Opens one process (or `Total`) for the range and filter in the form.
    pub fn open_process(&self, app_service: &str) {
        self.form.set_process(app_service);
        self.submit_or_show_errors();
    }

    /// Re-runs what is shown over another range.
    pub fn open_range(&self, time_start: i64, time_end: i64) {
        self.form.set_range(time_start, time_end);
        self.submit_or_show_errors();
    }

    /// Narrows what is shown to samples whose tag `name` is `value`.
    pub fn add_condition(&self, name: &str, value: &str) {
        self.form.add_condition(name, value);
        self.submit_or_show_errors();
    }

    /// Back to every service, keeping the range and filter.
    pub fn open_all_services(&self) {
        self.form.set_process("");
        self.submit_or_show_errors();
    }

    fn submit_or_show_errors(&self) {
        if let Err(errors) = self.submit() {
            self.form.errors.set(errors);
        }
    }

    /// Whether the profile shown is the per-host graph.
    pub fn is_whole_host(&self) -> bool {
        self.current.with(|c| {
            c.as_ref()
                .is_some_and(|(_, r)| r.app_service.as_deref() == Some(TOTAL_APP_SERVICE))
        })
    }
}
