//! The page URL's parameters: reading them, and the parameters of what the page shows (a
//! profile with its view, or the home view), so a link reproduces it. [`super::history`] keeps
//! the address bar in step.

use embers_model::contract::request::{
    request_from_url_pairs, request_to_url_pairs, ProfileRequest,
};

use crate::session::explore::HomeQuery;
use crate::state::view_spec::ViewSpec;

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

/// The request named by `params`, if any (without `app_service` it asks for the home view).
pub fn request_from_params(params: &[(String, String)]) -> Option<ProfileRequest> {
    request_from_url_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The view named by `params`.
pub fn spec_from_params(params: &[(String, String)]) -> ViewSpec {
    ViewSpec::from_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// The `base_url` parameter, if given.
pub fn base_url_param(params: &[(String, String)]) -> Option<String> {
    params
        .iter()
        .find(|(k, _)| k == "base_url")
        .map(|(_, v)| v.clone())
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

/// The URL parameters of the home view: the event type, language and filter, and the range
/// unless it is relative to now (so a reload shows the latest data).
pub fn home_pairs(home: &HomeQuery, embed: bool) -> Vec<(&'static str, String)> {
    let s = &home.services;
    let mut pairs = Vec::new();
    if let Some(language) = &s.profile_language_type {
        pairs.push(("profile_language_type", language.clone()));
    }
    if let Some(event) = &s.profile_event_type {
        pairs.push(("profile_event_type", event.clone()));
    }
    if !s.tag_filter.is_empty() {
        pairs.push(("tag_filter", s.tag_filter.clone()));
    }
    if !home.relative {
        pairs.push(("time_start", s.time_start.to_string()));
        pairs.push(("time_end", s.time_end.to_string()));
    }
    if !home.base_url.trim().is_empty() {
        pairs.push(("base_url", home.base_url.trim().to_string()));
    }
    if embed {
        pairs.push(("embed", "1".into()));
    }
    pairs
}

/// `?a=1&b=2` (or nothing) for `pairs`, percent-encoded.
pub fn encode_params(pairs: &[(&'static str, String)]) -> String {
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

    #[test]
    fn home_links_pin_a_range_only_when_it_is_absolute() {
        use embers_model::contract::explore::ServicesRequest;
        let mut home = HomeQuery {
            base_url: String::new(),
            services: ServicesRequest {
                time_start: 10,
                time_end: 20,
                profile_language_type: Some("eBPF".into()),
                profile_event_type: Some("off-cpu".into()),
                tag_filter: "pod='a'".into(),
            },
            relative: true,
        };
        let keys = |h: &HomeQuery| -> Vec<&str> {
            home_pairs(h, false).into_iter().map(|(k, _)| k).collect()
        };
        assert_eq!(
            keys(&home),
            ["profile_language_type", "profile_event_type", "tag_filter"]
        );
        home.relative = false;
        assert_eq!(
            keys(&home),
            [
                "profile_language_type",
                "profile_event_type",
                "tag_filter",
                "time_start",
                "time_end"
            ]
        );
        let pairs: Vec<(&str, &str)> = [("profile_event_type", "off-cpu")].to_vec();
        let req = request_from_url_pairs(pairs).expect("an event type names a request");
        assert_eq!(req.app_service, None, "no process: the home view");
    }
}
