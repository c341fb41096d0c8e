//! Keeping the address bar equal to what the page shows, and Back/Forward.
//!
//! Moving to another question (home ↔ profile, another range, filter or process) adds a history
//! entry, and so does a zoom (Back steps out of it); other view changes (search, transforms,
//! metric) replace the current entry. Back/Forward read the URL again: the same question only
//! restores the view, another one is asked again.

use std::time::Duration;

use embers_model::contract::event::{DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE};
use embers_model::contract::request::ProfileRequest;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use crate::session::compare::BaselineSpec;
use crate::session::fine::TimeState;
use crate::session::functions::HomeTab;
use crate::session::navigator::{Navigator, Route};
use crate::session::url::{
    encode_params, home_pairs, page_pairs, page_params, request_from_params, spec_from_params,
};
use crate::state::view_state::ViewState;

/// What the URL says, split into the question asked and the view of the answer.
#[derive(Clone, PartialEq)]
struct Written {
    question: String,
    zoom: Vec<String>,
}

/// One address to write: the query string and what it says.
#[derive(Clone)]
struct Address {
    search: String,
    written: Written,
}

/// Starts keeping the URL in step and listening for Back/Forward.
///
/// Typing in the search box writes the address once typing pauses ([`TYPING_PAUSE`]), and a
/// new question's answer or a zoom after the frame that shows it: Chromium's
/// `history.replaceState` takes 0.5–3 ms (more at times), as long as the search itself on a
/// million-node profile and a few percent of a 10k-node answer's render, and an address that
/// changes with every keystroke is of no use to anyone. Every other change writes it at once;
/// an address still waiting is written first when it is a step the new one would skip.
pub fn sync(nav: Navigator, view: ViewState, embed: bool) {
    let last = StoredValue::new(None::<Written>);
    // The question's and the view's parameters but the search text, as last computed:
    // unchanged means typing.
    let rest = StoredValue::new(None::<Pairs>);
    let queued = StoredValue::new(None::<Address>);
    // The address of the search text typed last, written once typing pauses; apart from
    // `queued`, so that no frame's flush writes it early.
    let typed = StoredValue::new(None::<Address>);
    let keystrokes = StoredValue::new(0u64);
    Effect::new(move |_| {
        let Some((question, view_pairs, zoom)) = current_pairs(nav, view, embed) else {
            return;
        };
        let written = Written {
            question: encode_params(&question),
            zoom,
        };
        let pairs = [question, view_pairs].concat();
        let address = Address {
            search: encode_params(&pairs),
            written,
        };
        let others: Vec<_> = pairs.into_iter().filter(|(k, _)| *k != "search").collect();
        let typing = rest.get_value().is_some_and(|r| r == others);
        rest.set_value(Some(others));
        // A new question's address, and a zoom's, wait for the frame that shows them: the
        // write (0.6–9 ms in Chromium) would otherwise sit between the click and its frame.
        let after_frame = last.with_value(|l| {
            l.as_ref().is_none_or(|l| {
                l.question != address.written.question || l.zoom != address.written.zoom
            })
        });
        if typing {
            write_after_pause(last, typed, keystrokes, address);
            return;
        }
        // Whatever is written now carries the search text too.
        typed.set_value(None);
        settle_queued(last, queued, &address.written);
        if after_frame {
            write_after_frame(last, queued, address);
        } else {
            write(last, address);
        }
    });
    let handle = window_event_listener(ev::popstate, move |_| {
        // The address Back/Forward went to wins over one still waiting to be written.
        queued.set_value(None);
        typed.set_value(None);
        restore(nav, view)
    });
    on_cleanup(move || handle.remove());
}

/// Writes `address` once the next frame is out. Hidden pages and off-screen frames get no frames
/// (or few), so a timer writes it too if the frame has not come by then.
fn write_after_frame(
    last: StoredValue<Option<Written>>,
    queued: StoredValue<Option<Address>>,
    address: Address,
) {
    let first_in_line = queued.with_value(Option::is_none);
    queued.set_value(Some(address));
    if first_in_line {
        request_animation_frame(move || {
            set_timeout(move || flush(last, queued), Duration::ZERO);
        });
        set_timeout(move || flush(last, queued), FRAME_WAIT_LIMIT);
    }
}

/// Writes `address` once no keystroke came for [`TYPING_PAUSE`] (each keystroke takes a new
/// ticket; only the last one's timer writes, unless another change wrote the address first).
fn write_after_pause(
    last: StoredValue<Option<Written>>,
    typed: StoredValue<Option<Address>>,
    keystrokes: StoredValue<u64>,
    address: Address,
) {
    typed.set_value(Some(address));
    let ticket = keystrokes.get_value().wrapping_add(1);
    keystrokes.set_value(ticket);
    set_timeout(
        move || {
            if keystrokes.try_get_value() == Some(ticket) {
                flush(last, typed);
            }
        },
        TYPING_PAUSE,
    );
}

/// How long typing in the search box must pause before the address follows it.
pub const TYPING_PAUSE: Duration = Duration::from_millis(400);

/// How long an address waits for a frame before it is written anyway.
const FRAME_WAIT_LIMIT: Duration = Duration::from_millis(250);

/// Writes the address still waiting, if any.
fn flush(last: StoredValue<Option<Written>>, queued: StoredValue<Option<Address>>) {
    if let Some(a) = queued.try_update_value(Option::take).flatten() {
        write(last, a);
    }
}

/// Before `next` is written or queued: writes the address still waiting if it is a step `next`
/// would otherwise skip (a new question's entry before a zoom's or another question's), and
/// drops it if `next` says all it said (the same question and zoom, a newer search text):
/// writing it would be a second `replaceState` for nothing.
fn settle_queued(
    last: StoredValue<Option<Written>>,
    queued: StoredValue<Option<Address>>,
    next: &Written,
) {
    let Some(waiting) = queued.try_update_value(Option::take).flatten() else {
        return;
    };
    let step = last.with_value(|l| l.as_ref() != Some(&waiting.written));
    if step && waiting.written != *next {
        write(last, waiting);
    }
}

/// Writes `address` into the address bar: a new entry for a new question or zoom (a step Back
/// can return from), else in place of the current one.
fn write(last: StoredValue<Option<Written>>, address: Address) {
    let Address { search, written } = address;
    let Some(window) = web_sys::window() else {
        return;
    };
    let location = window.location();
    let previous = last.get_value();
    last.set_value(Some(written.clone()));
    if location.search().ok().as_deref() == Some(search.as_str()) {
        return;
    }
    let url = format!("{}{search}", location.pathname().unwrap_or_default());
    let Ok(history) = window.history() else {
        return;
    };
    // The first write is not a step.
    let step = previous.is_some_and(|p| p != written);
    let _ = if step {
        history.push_state_with_url(&JsValue::NULL, "", Some(&url))
    } else {
        history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
    };
}

type Pairs = Vec<(&'static str, String)>;

/// The question's parameters, the view's, and the zoom path; `None` while there is nothing to
/// write (a query still running).
fn current_pairs(
    nav: Navigator,
    view: ViewState,
    embed: bool,
) -> Option<(Pairs, Pairs, Vec<String>)> {
    match nav.route() {
        Route::Home => {
            let home = nav.home.get()?;
            let mut pairs = home_pairs(&home, embed);
            pairs.extend(nav.home_tab.get().to_params());
            Some((pairs, Vec::new(), Vec::new()))
        }
        Route::Profile => {
            let spec = view.spec();
            let (request, snapshot) = view
                .shown
                .with(|s| s.as_ref().map(|l| (l.request.clone(), l.snapshot.clone())))?;
            let base = nav.form.base_url.get_untracked();
            let mut question = match snapshot {
                // A snapshot's permalink names the snapshot, not the query it saved.
                Some(id) => page_pairs(
                    &ProfileRequest::default(),
                    &Default::default(),
                    &base,
                    embed,
                )
                .into_iter()
                .chain([("snapshot", id)])
                .collect(),
                None => page_pairs(&request, &Default::default(), &base, embed),
            };
            if let Some(baseline) = nav.baseline.get() {
                question.extend(baseline.to_params());
            }
            question.extend(nav.time.get().to_params());
            Some((question, spec.to_params(), spec.zoom_path))
        }
    }
}

/// The `snapshot` parameter: a saved snapshot's permalink.
pub fn snapshot_param(params: &[(String, String)]) -> Option<String> {
    params
        .iter()
        .find(|(k, v)| k == "snapshot" && !v.is_empty())
        .map(|(_, v)| v.clone())
}

/// Back/Forward: shows what the URL now says.
fn restore(nav: Navigator, view: ViewState) {
    let params = page_params();
    let tab = HomeTab::from_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if nav.home_tab.with_untracked(|t| *t != tab) {
        nav.home_tab.set(tab);
    }
    let spec = spec_from_params(&params);
    let request = request_from_params(&params).unwrap_or_else(|| ProfileRequest {
        profile_language_type: DEFAULT_LANGUAGE.into(),
        profile_event_type: DEFAULT_EVENT_TYPE.into(),
        ..ProfileRequest::default()
    });
    let baseline = BaselineSpec::from_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let shown = view
        .shown
        .with_untracked(|s| s.as_ref().map(|l| l.request.clone()));
    let same_baseline = nav.baseline.with_untracked(|b| *b == baseline);
    let time = TimeState::from_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let same_window = nav.time.with_untracked(|t| t.window == time.window);
    if nav.time.with_untracked(|t| *t != time) {
        nav.time.set(time);
    }
    let same = shown.as_ref() == Some(&request) && same_baseline && same_window;
    if request.app_service.is_some() && same {
        view.restore(spec);
        return;
    }
    nav.baseline.set(baseline);
    if let Some(id) = snapshot_param(&params) {
        view.restore_for_next(spec);
        nav.open_snapshot(id);
        return;
    }
    nav.form.fill(&request);
    if request.time_start <= 0 {
        nav.form.preset.set("3600".into());
    }
    view.restore_for_next(spec);
    nav.go(match nav.form.to_request() {
        Ok(r) => r,
        Err(_) => request,
    });
}
