//! The page: the query form above either the services overview (home) or one profile with its
//! timeline. The composition root: it creates the state and the session objects that write into
//! it, and hands both to the components.

use leptos::prelude::*;

use crate::components::export_menu::DropZone;
use crate::components::form::query_form::QueryForm;
use crate::components::graph::warm_up::warm_up_when_idle;
use crate::components::home::HomeView;
use crate::components::theme::theme_state;
use crate::components::time_panel::TimePanel;
use crate::components::timeline::TimelineStrip;
use crate::components::viewer::Viewer;
use crate::session::compare::BaselineSpec;
use crate::session::fine::TimeState;
use crate::session::form::FormState;
use crate::session::functions::HomeTab;
use crate::session::history::snapshot_param;
use crate::session::navigator::{Navigator, Route};
use crate::session::runner::QueryRunner;
use crate::session::url::{
    base_url_param, is_embedded, page_params, request_from_params, spec_from_params,
};
use crate::session::{embed, history};
use crate::state::view_state::ViewState;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    // Owned by the app root, so every component shares one theme for the page's life.
    theme_state();
    let params = page_params();
    let embedded = is_embedded(&params);
    let view = ViewState::new(spec_from_params(&params));
    let form = FormState::new(base_url_param(&params));
    if let Some(request) = request_from_params(&params) {
        form.fill(&request);
    }
    let nav = Navigator::new(form, QueryRunner::new(view));
    nav.home_tab.set(HomeTab::from_params(
        params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    provide_context(nav);
    embed::listen(nav);
    history::sync(nav, view, embedded);
    warm_up_when_idle(view);
    // The page opens on what its URL names: a snapshot, a profile (compared with a baseline),
    // or (without a process) every service.
    nav.baseline.set(BaselineSpec::from_params(
        params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    nav.time.set(TimeState::from_params(
        params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    ));
    match (snapshot_param(&params), form.to_request()) {
        (Some(id), _) => nav.open_snapshot(id),
        (None, Ok(request)) => nav.go(request),
        (None, Err(errors)) => form.errors.set(errors),
    }
    // A memo: the route follows the load state, which changes on every answer and progress
    // step; only a change of route may rebuild the view below (it holds the whole graph).
    let route = Memo::new(move |_| nav.route());
    view! {
        <div class="app" class:embedded=embedded>
            {(!embedded).then(|| view! {
                <header class="topbar">
                    <div class="brand" aria-label="Embers">
                        <span class="brand-mark" aria-hidden="true"></span>
                        "Embers"
                    </div>
                    <QueryForm nav=nav />
                </header>
            })}
            {move || match route.get() {
                // An embedding page drives the viewer itself: no services overview there.
                Route::Home if !embedded => view! { <HomeView nav=nav /> }.into_any(),
                Route::Home => view! { <Viewer view=view /> }.into_any(),
                Route::Profile => view! {
                    <TimelineStrip nav=nav />
                    <TimePanel nav=nav />
                    <Viewer view=view />
                }.into_any(),
            }}
            <DropZone view=view />
        </div>
    }
}
