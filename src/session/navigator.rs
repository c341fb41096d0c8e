//! Moving through the workflow: the services overview (home) → one profile → a narrower range,
//! a tag, a process. Every move goes through the form (so the fields always show what is shown)
//! and lands in the page URL, where it becomes a history entry (Back returns).

use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::request::{FieldError, ProfileRequest};
use leptos::prelude::*;

use crate::net::decode_worker;
use crate::session::compare::BaselineSpec;
use crate::session::explore::services_question;
use crate::session::explore::HomeQuery;
use crate::session::files::Imported;
use crate::session::fine::{covering, fine_request, TimeState};
use crate::session::form::FormState;
use crate::session::functions::HomeTab;
use crate::session::runner::{Fetch, QueryRunner, Target};
use crate::state::loaded::LoadState;
use crate::state::view_state::ViewState;

/// Which view the page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Every service in a range, busiest first.
    Home,
    /// The flame graph of one process (or the whole host), with its timeline.
    Profile,
}

/// The navigation state and its moves; `Copy`, so components take it by value.
#[derive(Clone, Copy)]
pub struct Navigator {
    /// The form every move goes through.
    pub form: FormState,
    /// Runs profile queries.
    pub runner: QueryRunner,
    /// Runs the baseline's queries when comparing.
    pub baseline_runner: QueryRunner,
    /// What the profile is compared against, when comparing.
    pub baseline: RwSignal<Option<BaselineSpec>>,
    /// The question the home view answers (set when it opens).
    pub home: RwSignal<Option<HomeQuery>>,
    /// The home view's tab (services, functions, what grew) and its choices.
    pub home_tab: RwSignal<HomeTab>,
    /// The profile request last run (the timeline strip charts it), with its base URL.
    pub current: RwSignal<Option<(String, ProfileRequest)>>,
    /// Set once the service turned out to lack the explore endpoints (a bare DeepFlow querier):
    /// with the profile whose timeline strip said so, or `None` when the home view did. The
    /// page says it once and stops asking.
    pub explore_missing: RwSignal<Option<Option<ProfileRequest>>>,
    /// Time inside the range: the window the graph is narrowed to, the time view above it.
    pub time: RwSignal<TimeState>,
}

impl Navigator {
    /// A navigator over `form` and `runner`, on the home view.
    pub fn new(form: FormState, runner: QueryRunner) -> Navigator {
        let baseline = RwSignal::new(None::<BaselineSpec>);
        // A wall-clock baseline adds up with the main query instead of being compared.
        let wall = runner.view.wall;
        Effect::new(move |_| {
            let on = baseline.with(|b| b.as_ref().is_some_and(|b| b.wall));
            if wall.get_untracked() != on {
                wall.set(on);
            }
        });
        Navigator {
            form,
            runner,
            baseline_runner: QueryRunner::for_side(runner.view, Target::Baseline),
            baseline,
            home: RwSignal::new(None),
            home_tab: RwSignal::new(HomeTab::default()),
            current: RwSignal::new(None),
            explore_missing: RwSignal::new(None),
            time: RwSignal::new(TimeState::default()),
        }
    }

    /// Records that the explore endpoints are missing, found by the strip of `on` (or by the
    /// home view: `None`); the first finder is the one that says so.
    pub fn note_explore_missing(&self, on: Option<ProfileRequest>) {
        if self.explore_missing.with_untracked(Option::is_none) {
            self.explore_missing.set(Some(on));
        }
    }

    /// Submits the form: a process (or the whole host) opens its profile, none the home view.
    pub fn submit(&self) -> Result<(), Vec<FieldError>> {
        let request = self.form.to_request()?;
        self.form.errors.set(Vec::new());
        // A new question asks for its whole range (a window was a part of the old one).
        if self
            .time
            .with_untracked(|t| t.window.is_some() || t.chart.is_some())
        {
            self.time.update(|t| (t.window, t.chart) = (None, None));
        }
        self.go(request);
        Ok(())
    }

    /// Shows `request`: its profile, or the home view when it names no process — unless it
    /// names a trace or span, whose profile the service finds the processes of.
    pub fn go(&self, request: ProfileRequest) {
        let base = self.form.base_url.get_untracked();
        if request.app_service.is_some() || request.names_a_trace() {
            self.open_profile(base, request);
        } else {
            self.open_home(base, &request);
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

    /// Runs a profile query (from the form, a link, or an embedding page), and its baseline's
    /// when comparing.
    pub fn open_profile(&self, base_url: String, request: ProfileRequest) {
        self.current.set(Some((base_url.clone(), request.clone())));
        match self.time.with_untracked(|t| t.window) {
            Some(w) => self.runner.start(
                base_url.clone(),
                Fetch::Window(fine_request(&request, Some(w))),
            ),
            None => self.runner.run(base_url.clone(), request.clone()),
        }
        self.run_baseline(base_url, &request);
    }

    /// Shows a saved snapshot (and its baseline when comparing against a query's).
    pub fn open_snapshot(&self, id: String) {
        let base = self.form.base_url.get_untracked();
        self.current.set(None);
        self.runner.start(base, Fetch::Snapshot(id));
    }

    fn run_baseline(&self, base_url: String, request: &ProfileRequest) {
        let Some(spec) = self.baseline.get_untracked() else {
            self.stop_baseline();
            return;
        };
        let fetch = match (&spec.snapshot, spec.request(request)) {
            (Some(id), _) => Fetch::Snapshot(id.clone()),
            (None, Some(r)) => match spec.window {
                Some(w) => Fetch::Window(fine_request(&covering(&r, w), Some(w))),
                None => Fetch::Query(r),
            },
            (None, None) => return,
        };
        self.baseline_runner.start(base_url, fetch);
    }

    /// Compares what is shown with `spec` (asking for the baseline now).
    pub fn compare_with(&self, spec: BaselineSpec) {
        self.baseline.set(Some(spec));
        if let Some((base, request)) = self.current.get_untracked() {
            self.run_baseline(base, &request);
        }
    }

    /// Compares what is shown with a profile already at hand (an opened file).
    pub fn compare_with_loaded(&self, state: LoadState) {
        self.baseline_runner.drop_inflight();
        self.baseline.set(None);
        self.runner.view.replace_baseline(Some(state));
    }

    /// Shows two profiles already at hand as a comparison (a two-column file).
    pub fn show_pair(&self, baseline: LoadState, comparison: LoadState) {
        self.runner.cancel();
        self.current.set(None);
        self.compare_with_loaded(baseline);
        self.runner.view.replace_result(comparison);
    }

    /// Shows what a file held: one profile (no longer comparing), or a comparison.
    pub fn show_imported(&self, imported: Imported) {
        match imported {
            Imported::One(state) => {
                self.stop_comparing();
                self.current.set(None);
                self.runner.view.replace_result(state);
            }
            Imported::Pair {
                baseline,
                comparison,
            } => self.show_pair(baseline, comparison),
        }
    }

    /// Back to one profile.
    pub fn stop_comparing(&self) {
        self.baseline.set(None);
        self.stop_baseline();
    }

    fn stop_baseline(&self) {
        self.baseline_runner.drop_inflight();
        self.runner.view.replace_baseline(None);
        decode_worker::stop_second();
    }

    /// Cancels both sides' queries.
    pub fn cancel(&self) {
        self.runner.cancel();
        self.baseline_runner.cancel();
    }

    fn open_home(&self, base_url: String, r: &ProfileRequest) {
        self.runner.cancel();
        self.stop_comparing();
        // A function chosen in a profile is not chosen in the next one opened from home.
        self.runner.view.selected.set(None);
        self.runner.view.sandwich_open.set(false);
        self.runner.view.replace_result(LoadState::Idle);
        self.current.set(None);
        self.home.set(Some(HomeQuery {
            base_url,
            services: services_question(r),
            relative: self.form.is_relative(),
        }));
    }

    /// Opens one process (or `Total`) for the range and filter in the form.
    pub fn open_process(&self, app_service: &str) {
        self.form.set_process(app_service);
        self.submit_or_show_errors();
    }

    /// Opens one process in `language` (a home row, a chart of one language's processes).
    pub fn open_service(&self, app_service: &str, language: &str) {
        self.form.language.set(language.to_owned());
        self.open_process(app_service);
    }

    /// Opens `function` in one process's flame graph (in `language`), selected.
    pub fn open_function(&self, app_service: &str, language: &str, function: &str) {
        self.select_after_home(function);
        self.open_service(app_service, language);
    }

    /// Opens the comparison of one process with `baseline` (what grew), `function` selected.
    pub fn open_grown(
        &self,
        app_service: &str,
        language: &str,
        function: &str,
        baseline: BaselineSpec,
    ) {
        self.select_after_home(function);
        self.baseline.set(Some(baseline));
        self.open_service(app_service, language);
    }

    /// Selects `function` for the profile about to open (not in the sandwich view).
    fn select_after_home(&self, function: &str) {
        self.runner.view.sandwich_open.set(false);
        self.runner.view.selected.set(Some(function.to_owned()));
    }

    /// Re-runs what is shown over another range.
    pub fn open_range(&self, time_start: i64, time_end: i64) {
        self.form.set_range(time_start, time_end);
        self.submit_or_show_errors();
    }

    /// Narrows the graph to the samples of `window` (Unix ms `[start, end)`) inside the range.
    pub fn open_window(&self, window: (i64, i64)) {
        let Some((base, request)) = self.current.get_untracked() else {
            return;
        };
        self.time.update(|t| t.window = Some(window));
        self.open_profile(base, covering(&request, window));
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

/// Shows what a file held, through the navigator when there is one (the page) or straight
/// into the view (a viewer mounted on its own).
pub fn show_imported(view: ViewState, nav: Option<Navigator>, imported: Imported) {
    match (nav, imported) {
        (Some(nav), imported) => nav.show_imported(imported),
        (None, Imported::One(state)) => view.replace_result(state),
        (
            None,
            Imported::Pair {
                baseline,
                comparison,
            },
        ) => {
            view.replace_baseline(Some(baseline));
            view.replace_result(comparison);
        }
    }
}
