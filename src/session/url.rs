//! The page URL: query fields given as parameters run on load, and the view is written back.

use embers_model::contract::request::{
    request_from_url_pairs, request_to_url_pairs, ProfileRequest,
};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use crate::state::view_spec::ViewSpec;
use crate::state::view_state::ViewState;

/// The page's query parameters as decoded pairs.
pub fn page_params() -> Vec<(String, String)> {
    let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) else {
        return Vec::new();
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in js_sys::try_iter(&params)
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .flatten()
    {
        let pair = js_sys::Array::from(&entry);
        if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.push((k, v));
        }
    }
    out
}

/// Whether the page URL asks for the embedded layout (`embed=1`: no query form).
pub fn is_embedded(params: &[(String, String)]) -> bool {
    params.iter().any(|(k, v)| k == "embed" && v != "0")
}

/// The request named in the page URL, if any (plus the `base_url` parameter, if given).
pub fn request_from_page() -> (Option<ProfileRequest>, Option<String>) {
    let params = page_params();
    let base = params
        .iter()
        .find(|(k, _)| k == "base_url")
        .map(|(_, v)| v.clone());
    (
        request_from_url_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        base,
    )
}

/// Keeps the page URL equal to the query and view, so a link reproduces what the sender saw.
/// A zoom change adds a history entry (Back/Forward step through zooms); any other change
/// replaces the current one. Back/Forward restore the view from the URL.
pub fn sync_view_to_url(view: ViewState, base_url: RwSignal<String>, embed: bool) {
    let last_zoom = StoredValue::new(None::<Vec<String>>);
    Effect::new(move |_| {
        let spec = view.spec();
        let Some(request) = view.shown.with(|s| s.as_ref().map(|l| l.request.clone())) else {
            return;
        };
        let search = encode_params(&page_pairs(
            &request,
            &spec,
            &base_url.get_untracked(),
            embed,
        ));
        let Some(window) = web_sys::window() else {
            return;
        };
        let location = window.location();
        if location.search().ok().as_deref() == Some(search.as_str()) {
            last_zoom.set_value(Some(spec.zoom_path));
            return;
        }
        let Ok(history) = window.history() else {
            return;
        };
        let url = format!("{}{search}", location.pathname().unwrap_or_default());
        let zoom_moved = last_zoom.get_value().is_some_and(|z| z != spec.zoom_path);
        let _ = if zoom_moved {
            history.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
        last_zoom.set_value(Some(spec.zoom_path));
    });
    let handle = window_event_listener(ev::popstate, move |_| {
        let params = page_params();
        view.restore(ViewSpec::from_params(
            params.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ));
    });
    on_cleanup(move || handle.remove());
}

/// The URL parameters of a page showing `request` with `spec`.
pub fn page_pairs(
    request: &ProfileRequest,
    spec: &ViewSpec,
    base_url: &str,
    embed: bool,
) -> Vec<(&'static str, String)> {
    let mut pairs = Vec::new();
    // Imported files have no query to re-run.
    if request.time_start > 0 {
        pairs.extend(request_to_url_pairs(request));
        if !base_url.trim().is_empty() {
            pairs.push(("base_url", base_url.trim().to_string()));
        }
    }
    if embed {
        pairs.push(("embed", "1".into()));
    }
    pairs.extend(spec.to_params());
    pairs
}

fn encode_params(pairs: &[(&'static str, String)]) -> String {
    let Ok(params) = web_sys::UrlSearchParams::new() else {
        return String::new();
    };
    for (k, v) in pairs {
        params.append(k, v);
    }
    let s = String::from(params.to_string());
    if s.is_empty() {
        s
    } else {
        format!("?{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::view_spec::SearchSpec;

    #[test]
    fn page_pairs_carry_query_and_view_but_not_imports() {
        let request = ProfileRequest {
            app_service: Some("redis".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 10,
            time_end: 20,
            ..ProfileRequest::default()
        };
        let spec = ViewSpec {
            search: SearchSpec {
                text: "fib".into(),
                ..SearchSpec::default()
            },
            ..ViewSpec::default()
        };
        let pairs = page_pairs(&request, &spec, " http://q:20416 ", true);
        let keys: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "app_service",
                "profile_language_type",
                "profile_event_type",
                "time_start",
                "time_end",
                "base_url",
                "embed",
                "search"
            ]
        );
        assert_eq!(pairs[5].1, "http://q:20416");
        let imported = ProfileRequest {
            time_start: 0,
            ..request
        };
        let keys: Vec<_> = page_pairs(&imported, &spec, "", false)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["search"]);
    }
}
