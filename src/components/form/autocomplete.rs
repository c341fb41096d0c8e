//! Suggestions for the form's text fields, as `<datalist>`s the browser shows under them:
//! process names from the same list the home view shows (the services in the form's range,
//! event type and tag filter; one request for both while the form names what home shows), tag
//! names present in range (then every name the service accepts), the values of a tag, and the
//! event types with data in range (the event list's).

use embers_model::contract::explore::{TagValuesRequest, TagsRequest};
use embers_model::contract::fields::offered_names;
use leptos::prelude::*;

use crate::session::explore;
use crate::session::navigator::Navigator;
use crate::state::fetched::fetched;

/// Suggestions asked for at a time.
const SUGGESTIONS: i64 = 50;

/// The form's range when it is one the service accepts (suggestions wait for a valid one).
fn valid_range(nav: Navigator) -> Option<(i64, i64)> {
    let (start, end) = nav.form.peek_range();
    (start > 0 && start <= end).then_some((start, end))
}

/// Asks again when the range or event type in the form changes.
fn track_range(nav: Navigator) {
    let f = nav.form;
    f.event_type.track();
    f.preset.track();
    f.time_start.track();
    f.time_end.track();
}

/// The values of `tag` starting with `prefix`, over the form's range.
async fn values(nav: Navigator, tag: String, prefix: String) -> Vec<String> {
    let Some((time_start, time_end)) = valid_range(nav).filter(|_| !tag.trim().is_empty()) else {
        return Vec::new();
    };
    let request = TagValuesRequest {
        tag,
        time_start,
        time_end,
        app_service: None,
        prefix: Some(prefix).filter(|p| !p.is_empty()),
        limit: Some(SUGGESTIONS),
    };
    let base = nav.form.base_url.get_untracked();
    explore::tag_values(&base, &request).await
}

fn options(values: Vec<String>) -> impl IntoView {
    values
        .into_iter()
        .map(|v| view! { <option value=v></option> })
        .collect_view()
}

/// `#process-options`: the services the home view lists for the form's question, starting with
/// what is typed (matched here: typing asks the service nothing).
#[component]
pub fn ProcessOptions(nav: Navigator) -> impl IntoView {
    let found = fetched(move || {
        let question = explore::suggestions_question(nav.form, nav.home.get());
        async move {
            let Some((base, question)) = question else {
                return Vec::new();
            };
            explore::services(&base, &question, true)
                .await
                .map(|t| explore::service_names(&t.values))
                .unwrap_or_default()
        }
    });
    let shown = move || {
        let typed = nav.form.app_service.get();
        found.with(|f| {
            let names = f.as_deref().unwrap_or_default();
            explore::starting_with(names, &typed, SUGGESTIONS as usize)
        })
    };
    view! { <datalist id="process-options">{move || options(shown())}</datalist> }
}

/// The event types with data in the form's range, asked again when the range or the service
/// changes (not the event type: the list is what to choose it from).
pub fn present_event_types(nav: Navigator) -> ReadSignal<Option<Vec<String>>, LocalStorage> {
    fetched(move || {
        let f = nav.form;
        f.preset.track();
        f.time_start.track();
        f.time_end.track();
        f.base_url.track();
        async move {
            let Some((start, end)) = valid_range(nav) else {
                return Vec::new();
            };
            let base = nav.form.base_url.get_untracked();
            explore::event_types(&base, start, end).await
        }
    })
}

/// `#tag-names`: tags present in the range first, then every name the service accepts.
#[component]
pub fn TagNameOptions(nav: Navigator) -> impl IntoView {
    let present = fetched(move || {
        track_range(nav);
        async move {
            let Some((time_start, time_end)) = valid_range(nav) else {
                return Vec::new();
            };
            let request = TagsRequest {
                time_start,
                time_end,
                app_service: None,
                profile_language_type: None,
                profile_event_type: None,
            };
            let base = nav.form.base_url.get_untracked();
            explore::tag_names(&base, &request)
                .await
                .unwrap_or_default()
        }
    });
    let names = move || {
        let mut names = present.get().unwrap_or_default();
        for n in offered_names() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names
    };
    view! { <datalist id="tag-names">{move || options(names())}</datalist> }
}

/// The values of one builder row's tag, matching what is typed.
#[component]
pub fn TagValueOptions(
    nav: Navigator,
    id: String,
    #[prop(into)] tag: Signal<String>,
    #[prop(into)] prefix: Signal<String>,
) -> impl IntoView {
    let found = fetched(move || {
        track_range(nav);
        values(nav, tag.get(), prefix.get())
    });
    view! { <datalist id=id>{move || found.get().map(options)}</datalist> }
}
