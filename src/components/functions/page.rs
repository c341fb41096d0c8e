//! The page's side of the Functions and What grew lists: their host (see `crate::on_demand`).
//! It sends the lists the home view's question, the chart's language, the tab (from the URL)
//! and the palette, and carries out what they ask: a new tab into the navigator (and so the
//! URL), a row or chip's service opened through it.

use embers_model::view::color::Palette;
use leptos::prelude::*;

use super::interface::{FunctionsEvent, FunctionsInput, FUNCTIONS_VIEW};
use crate::components::theme::theme_state;
use crate::on_demand::host::OnDemand;
use crate::session::explore::HomeQuery;
use crate::session::functions::baseline_of;
use crate::session::navigator::Navigator;

/// The Functions or What grew list of `query` in `language`, loaded on demand.
#[component]
pub fn FunctionsView(nav: Navigator, query: HomeQuery, language: String) -> impl IntoView {
    let theme = theme_state();
    let sent = query.clone();
    let input = Signal::derive(move || {
        let input = FunctionsInput {
            query: sent.clone(),
            language: language.clone(),
            tab: nav.home_tab.get(),
            colorblind: theme.palette.get() == Palette::ColorBlind,
        };
        // Plain data of strings and numbers: it always serializes.
        serde_json::to_string(&input).unwrap_or_default()
    });
    let on_event =
        Callback::new(
            move |json: String| match serde_json::from_str::<FunctionsEvent>(&json) {
                Ok(event) => act(nav, &query, event),
                Err(e) => web_sys::console::error_1(&format!("Functions view event: {e}").into()),
            },
        );
    view! { <OnDemand module=FUNCTIONS_VIEW input=input on_event=on_event /> }
}

/// Carries out what the lists ask.
fn act(nav: Navigator, query: &HomeQuery, event: FunctionsEvent) {
    match event {
        FunctionsEvent::Tab { tab } => {
            if nav.home_tab.with_untracked(|t| *t != tab) {
                nav.home_tab.set(tab);
            }
        }
        FunctionsEvent::OpenService {
            app_service,
            language,
        } => nav.open_service(&app_service, &language),
        FunctionsEvent::OpenFunction {
            app_service,
            language,
            function,
        } => nav.open_function(&app_service, &language, &function),
        FunctionsEvent::OpenGrown {
            app_service,
            language,
            function,
            against,
        } => nav.open_grown(
            &app_service,
            &language,
            &function,
            baseline_of(query, against),
        ),
    }
}
