//! The page: the query form above the viewer. The composition root: it creates the state, the
//! session objects that write into it, and hands both to the components.

use leptos::prelude::*;

use crate::components::form::query_form::QueryForm;
use crate::components::theme::theme_state;
use crate::components::viewer::Viewer;
use crate::session::form::FormState;
use crate::session::runner::QueryRunner;
use crate::session::url::{page_params, sync_view_to_url};
use crate::session::{embed, url};
use crate::state::view_spec::ViewSpec;
use crate::state::view_state::ViewState;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    // Owned by the app root, so every component shares one theme for the page's life.
    theme_state();
    let page = page_params();
    let spec = ViewSpec::from_params(page.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let embedded = url::is_embedded(&page);
    let view = ViewState::new(spec);
    let runner = QueryRunner::new(view);
    let form = FormState::from_page();
    embed::listen(runner, form.base_url);
    sync_view_to_url(view, form.base_url, embedded);
    if form.run_on_load {
        if let Ok(req) = form.to_request() {
            runner.run(form.base_url.get_untracked(), req);
        }
    }
    view! {
        <div class="app" class:embedded=embedded>
            {(!embedded).then(|| view! {
                <header class="topbar">
                    <div class="brand" aria-label="Embers">
                        <span class="brand-mark" aria-hidden="true"></span>
                        "Embers"
                    </div>
                    <QueryForm form=form runner=runner />
                </header>
            })}
            <Viewer view=view />
        </div>
    }
}
